package platform

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	"k8s.io/apimachinery/pkg/types"
)

var testMaster = MasterKey(bytes.Repeat([]byte{7}, MasterKeySize))

func mustRunAuth(t *testing.T, m MasterKey, suite types.UID, run string, withSSH bool) Auth {
	t.Helper()
	a, err := m.RunAuth(suite, run, withSSH)
	if err != nil {
		t.Fatalf("RunAuth(%s, %s) error: %v", suite, run, err)
	}
	return a
}

func TestRunAuthKeyPairWorks(t *testing.T) {
	a := mustRunAuth(t, testMaster, "uid-1", "demo-vm-1", true)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).Match(a.Token) {
		t.Errorf("token = %q, want 64 lower-case hex characters", a.Token)
	}
	signer, err := ssh.ParsePrivateKey(a.SSHPrivateKey)
	if err != nil {
		t.Fatalf("ssh.ParsePrivateKey: %v\n%s", err, a.SSHPrivateKey)
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
	// x/crypto reads the encoding back to the same key, comment included.
	raw, err := ssh.ParseRawPrivateKey(a.SSHPrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	key, ok := raw.(*ed25519.PrivateKey)
	if !ok {
		t.Fatalf("ParseRawPrivateKey gives %T, want *ed25519.PrivateKey", raw)
	}
	if !bytes.Equal(key.Public().(ed25519.PublicKey), pub.(ssh.CryptoPublicKey).CryptoPublicKey().(ed25519.PublicKey)) {
		t.Error("ParseRawPrivateKey gives another key")
	}
}

// Keys are a function of the master key, the suite's UID and the run's name: the same inputs give
// the same bytes (re-applying a run's Secret changes nothing), and changing any input changes every key.
func TestRunAuthIsDerived(t *testing.T) {
	a := mustRunAuth(t, testMaster, "uid-1", "demo-vm-1", true)
	if diff := cmp.Diff(a, mustRunAuth(t, testMaster, "uid-1", "demo-vm-1", true)); diff != "" {
		t.Errorf("the same inputs give other keys:\n%s", diff)
	}
	other := MasterKey(bytes.Repeat([]byte{8}, MasterKeySize))
	for name, b := range map[string]Auth{
		"another run":        mustRunAuth(t, testMaster, "uid-1", "demo-vm-2", true),
		"another suite UID":  mustRunAuth(t, testMaster, "uid-2", "demo-vm-1", true),
		"another master key": mustRunAuth(t, other, "uid-1", "demo-vm-1", true),
		// Without length prefixes, ("uid-1", "x") and ("uid-1x", "") could meet; here the run
		// name moves one character into the UID.
		"shifted fields": mustRunAuth(t, testMaster, "uid-1d", "emo-vm-1", true),
	} {
		if bytes.Equal(a.Token, b.Token) || bytes.Equal(a.SSHPrivateKey, b.SSHPrivateKey) || bytes.Equal(a.SSHPublicKey, b.SSHPublicKey) {
			t.Errorf("%s shares a token or a key", name)
		}
	}
	tokenOnly := mustRunAuth(t, testMaster, "uid-1", "demo-vm-1", false)
	if !bytes.Equal(tokenOnly.Token, a.Token) || tokenOnly.SSHPrivateKey != nil || tokenOnly.SSHPublicKey != nil {
		t.Errorf("without SSH: %+v, want the same token and no keys", tokenOnly)
	}
}

func TestRunAuthRefusesWeakInput(t *testing.T) {
	for name, tc := range map[string]struct {
		master MasterKey
		suite  types.UID
		run    string
	}{
		"short master key": {MasterKey("0123456789"), "uid", "run"},
		"no master key":    {nil, "uid", "run"},
		"no suite UID":     {testMaster, "", "run"},
		"no run":           {testMaster, "uid", ""},
	} {
		if a, err := tc.master.RunAuth(tc.suite, tc.run, true); err == nil {
			t.Errorf("%s: RunAuth() = %+v, want an error", name, a)
		}
	}
}

func TestAuthData(t *testing.T) {
	vm := mustRunAuth(t, testMaster, "uid", "demo-vm-1", true)
	if diff := cmp.Diff([]string{AuthKnownHosts, AuthSSHHostKey, AuthSSHPrivateKey, AuthSSHPublicKey, AuthTokenKey},
		slices.Sorted(maps.Keys(vm.Data()))); diff != "" {
		t.Errorf("VM run's Data() keys mismatch (-want +got):\n%s", diff)
	}
	container := mustRunAuth(t, testMaster, "uid", "demo-container-1", false)
	if diff := cmp.Diff([]string{AuthKnownHosts, AuthSSHHostKey, AuthTokenKey}, slices.Sorted(maps.Keys(container.Data()))); diff != "" {
		t.Errorf("container run's Data() keys mismatch (-want +got):\n%s", diff)
	}
}

// OpenSSH itself, where installed, reads the private key and finds the authorized key in it: the
// VMs' ssh client is OpenSSH, not x/crypto.
func TestRunAuthKeyReadsInOpenSSH(t *testing.T) {
	keygen := lookTool(t, "ssh-keygen")
	a := mustRunAuth(t, testMaster, "uid-1", "demo-vm-1", true)
	file := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(file, a.SSHPrivateKey, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(keygen, "-y", "-f", file).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen -y: %v\n%s", err, out)
	}
	got, want := strings.Fields(string(out)), strings.Fields(string(a.SSHPublicKey))
	if len(got) < 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ssh-keygen -y gives %q, want %q", out, a.SSHPublicKey)
	}
}
