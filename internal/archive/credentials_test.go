package archive_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmbench/vmbench/internal/archive"
)

// signedBy is what a fake S3 server saw of each request's credentials: the access key ID of its
// signature and its session token.
type signedBy struct{ keyID, token string }

// fakeS3 answers every request 200 and records who signed it.
type fakeS3 struct {
	*httptest.Server
	mu   sync.Mutex
	seen []signedBy
}

var credentialOf = regexp.MustCompile(`Credential=([^/]+)/`)

func newFakeS3(t *testing.T) *fakeS3 {
	f := &fakeS3{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		m := credentialOf.FindStringSubmatch(r.Header.Get("Authorization"))
		if m == nil {
			t.Errorf("%s %s is not signed with SigV4: Authorization %q", r.Method, r.URL, r.Header.Get("Authorization"))
			w.WriteHeader(http.StatusForbidden)
			return
		}
		f.mu.Lock()
		f.seen = append(f.seen, signedBy{keyID: m[1], token: r.Header.Get("X-Amz-Security-Token")})
		f.mu.Unlock()
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeS3) last(t *testing.T) signedBy {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		t.Fatal("the server saw no request")
	}
	return f.seen[len(f.seen)-1]
}

func put(t *testing.T, endpoint string, cred *archive.CredentialSource) {
	t.Helper()
	c, err := archive.New(archive.Config{Endpoint: endpoint, Bucket: "results", Credentials: cred})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(t.Context(), "vmbench/a/suite.json", []byte(`{"kind":"BenchmarkSuite"}`)); err != nil {
		t.Fatal(err)
	}
}

// Temporary credentials are refused by S3 unless their session token goes with every request, in
// X-Amz-Security-Token (T7: the hand-written signer was never tested with one).
func TestSessionTokenIsSent(t *testing.T) {
	s3 := newFakeS3(t)
	put(t, s3.URL, archive.Static(archive.Credentials{AccessKeyID: "ASIATEMPORARY", SecretAccessKey: "secret", SessionToken: "the-session-token"}))
	if got := s3.last(t); got != (signedBy{"ASIATEMPORARY", "the-session-token"}) {
		t.Errorf("the request was signed by %+v, want key ASIATEMPORARY with its session token", got)
	}
	put(t, s3.URL, archive.Static(archive.Credentials{AccessKeyID: "AKIALONGLIVED", SecretAccessKey: "secret"}))
	if got := s3.last(t); got != (signedBy{"AKIALONGLIVED", ""}) {
		t.Errorf("long-lived keys sent %+v, want no session token", got)
	}
}

// writeKey replaces a key file the way the kubelet updates a Secret volume: a new file moved into
// place, never the old one rewritten.
func writeKey(t *testing.T, dir, name, value string) {
	t.Helper()
	tmp := filepath.Join(dir, "."+name+".new")
	if err := os.WriteFile(tmp, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// A rotated Secret takes effect without a restart: the key files are read again once they change,
// and not before.
func TestKeyFilesAreReadAgainWhenTheyChange(t *testing.T) {
	s3 := newFakeS3(t)
	dir := t.TempDir()
	writeKey(t, dir, archive.EnvAccessKeyID, "AKIAFIRST")
	writeKey(t, dir, archive.EnvSecretAccessKey, "first-secret")
	cred, err := archive.FromFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cred.String(), "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in "+dir) {
		t.Errorf("the source is named %q", cred.String())
	}
	c, err := archive.New(archive.Config{Endpoint: s3.URL, Bucket: "results", Credentials: cred})
	if err != nil {
		t.Fatal(err)
	}
	putKey := func() signedBy {
		t.Helper()
		if err := c.Put(t.Context(), "k.json", []byte("{}")); err != nil {
			t.Fatal(err)
		}
		return s3.last(t)
	}
	if got := putKey(); got != (signedBy{"AKIAFIRST", ""}) {
		t.Errorf("first keys: signed by %+v", got)
	}
	if cred.AccessKeyID() != "AKIAFIRST" {
		t.Errorf("AccessKeyID() = %q, want AKIAFIRST for the log", cred.AccessKeyID())
	}

	writeKey(t, dir, archive.EnvAccessKeyID, "ASIASECOND")
	writeKey(t, dir, archive.EnvSecretAccessKey, "second-secret")
	writeKey(t, dir, archive.EnvSessionToken, "second-token")
	if got := putKey(); got != (signedBy{"ASIASECOND", "second-token"}) {
		t.Errorf("after the rotation: signed by %+v, want the new key and its session token", got)
	}

	// A key file that vanishes mid-rotation is an error naming it, not a request signed with nothing.
	if err := os.Remove(filepath.Join(dir, archive.EnvSecretAccessKey)); err != nil {
		t.Fatal(err)
	}
	err = c.Put(t.Context(), "k.json", []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "the Secret needs the key AWS_SECRET_ACCESS_KEY") {
		t.Errorf("a missing secret file: %v", err)
	}
	writeKey(t, dir, archive.EnvSecretAccessKey, "third-secret")
	if got := putKey(); got != (signedBy{"ASIASECOND", "second-token"}) {
		t.Errorf("after the secret is back: signed by %+v", got)
	}
}

// IRSA: the web identity token file is exchanged at STS for temporary keys, whose session token
// goes with the requests; when they expire, the token file is read again (the kubelet rotates it)
// and exchanged anew.
func TestWebIdentityTokenIsExchangedAndRefreshed(t *testing.T) {
	var mu sync.Mutex
	var tokens []string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.Form.Get("Action") != "AssumeRoleWithWebIdentity" ||
			r.Form.Get("RoleArn") != "arn:aws:iam::123456789012:role/vmbench-archive" {
			t.Errorf("STS got %v %v", r.Form, err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		tokens = append(tokens, r.Form.Get("WebIdentityToken"))
		n := len(tokens)
		mu.Unlock()
		// Expired as soon as given, so that the next request refreshes them.
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleWithWebIdentityResult>
<Credentials><AccessKeyId>ASIASTS%d</AccessKeyId><SecretAccessKey>secret</SecretAccessKey><SessionToken>sts-session-%d</SessionToken>
<Expiration>%s</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`,
			n, n, time.Now().Add(time.Millisecond).UTC().Format(time.RFC3339Nano))
	}))
	defer sts.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("projected-token-1"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, value := range map[string]string{archive.EnvAccessKeyID: "", archive.EnvSecretAccessKey: "", archive.EnvContainerFullURI: "",
		archive.EnvWebIdentityTokenFile: tokenFile, archive.EnvRoleARN: "arn:aws:iam::123456789012:role/vmbench-archive",
		archive.EnvSTSEndpoint: sts.URL, "AWS_REGION": ""} {
		t.Setenv(name, value)
	}
	cred, err := archive.FromEnvironment("")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cred.String(), "(IRSA)") {
		t.Errorf("the source is named %q", cred.String())
	}
	s3 := newFakeS3(t)
	c, err := archive.New(archive.Config{Endpoint: s3.URL, Bucket: "results", Credentials: cred})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(t.Context(), "k.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got := s3.last(t); got != (signedBy{"ASIASTS1", "sts-session-1"}) {
		t.Errorf("signed by %+v, want STS's first keys with their session token", got)
	}
	if err := os.WriteFile(tokenFile, []byte("projected-token-2"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past the first keys' expiry
	if err := c.Put(t.Context(), "k.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if got := s3.last(t); got != (signedBy{"ASIASTS2", "sts-session-2"}) {
		t.Errorf("after expiry: signed by %+v, want STS's second keys", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(tokens, ",") != "projected-token-1,projected-token-2" {
		t.Errorf("STS got the tokens %q, want the file's each time", tokens)
	}
}
