package platform

import (
	"bytes"
	"crypto/rand"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
)

func TestNewAuth(t *testing.T) {
	a, err := NewAuth()
	if err != nil {
		t.Fatalf("NewAuth() error: %v", err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).Match(a.Token) {
		t.Errorf("token = %q, want 64 lower-case hex characters", a.Token)
	}

	signer, err := ssh.ParsePrivateKey(a.SSHPrivateKey)
	if err != nil {
		t.Fatalf("ssh.ParsePrivateKey: %v", err)
	}
	pub, comment, _, rest, err := ssh.ParseAuthorizedKey(a.SSHPublicKey)
	if err != nil {
		t.Fatalf("ssh.ParseAuthorizedKey: %v", err)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("authorized key has trailing data %q", rest)
	}
	if pub.Type() != ssh.KeyAlgoED25519 {
		t.Errorf("key type = %s, want %s", pub.Type(), ssh.KeyAlgoED25519)
	}
	if !bytes.Equal(signer.PublicKey().Marshal(), pub.Marshal()) {
		t.Errorf("the private key's public key %q is not the authorized key %q (comment %q)",
			ssh.MarshalAuthorizedKey(signer.PublicKey()), a.SSHPublicKey, comment)
	}

	// The pair works: what the private key signs, the authorized key verifies.
	data := []byte("vmbench")
	sig, err := signer.Sign(rand.Reader, data)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	if err := pub.Verify(data, sig); err != nil {
		t.Errorf("the authorized key does not verify the private key's signature: %v", err)
	}
}

func TestNewAuthIsFresh(t *testing.T) {
	a, err := NewAuth()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewAuth()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Token, b.Token) || bytes.Equal(a.SSHPrivateKey, b.SSHPrivateKey) || bytes.Equal(a.SSHPublicKey, b.SSHPublicKey) {
		t.Error("two calls of NewAuth() share a token or a key")
	}
}

func TestAuthFromData(t *testing.T) {
	full := map[string][]byte{AuthTokenKey: []byte("tok"), AuthSSHPrivateKey: []byte("priv"), AuthSSHPublicKey: []byte("pub")}
	without := func(key string, empty bool) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range full {
			out[k] = v
		}
		if empty {
			out[key] = []byte{}
		} else {
			delete(out, key)
		}
		return out
	}
	tests := []struct {
		name    string
		data    map[string][]byte
		want    Auth
		wantErr string
	}{
		{name: "complete", data: full, want: Auth{Token: []byte("tok"), SSHPrivateKey: []byte("priv"), SSHPublicKey: []byte("pub")}},
		{name: "no token", data: without(AuthTokenKey, false), wantErr: `the auth Secret has no "token" key`},
		{name: "empty token", data: without(AuthTokenKey, true), wantErr: `the auth Secret has no "token" key`},
		{name: "no private key", data: without(AuthSSHPrivateKey, false), wantErr: `the auth Secret has no "ssh-privatekey" key`},
		{name: "no public key", data: without(AuthSSHPublicKey, false), wantErr: `the auth Secret has no "ssh-publickey" key`},
		{name: "no data", data: nil, wantErr: "the auth Secret has no "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AuthFromData(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("AuthFromData() error = %v, want %q", err, tt.wantErr)
				}
				if diff := cmp.Diff(Auth{}, got); diff != "" {
					t.Errorf("AuthFromData() returned a partial Auth on error:\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("AuthFromData() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AuthFromData() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuthDataRoundTrip(t *testing.T) {
	a, err := NewAuth()
	if err != nil {
		t.Fatal(err)
	}
	got, err := AuthFromData(a.Data())
	if err != nil {
		t.Fatalf("AuthFromData(Data()) error: %v", err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{AuthSSHPrivateKey, AuthSSHPublicKey, AuthTokenKey}, slices.Sorted(maps.Keys(a.Data()))); diff != "" {
		t.Errorf("Data() keys mismatch (-want +got):\n%s", diff)
	}
}
