package archive_test

import (
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmbench/vmbench/internal/archive"
)

var testCred = archive.Credentials{AccessKeyID: "key-1", SecretAccessKey: "secret-1"}

// Each S3 error code the archive can meet gets advice on what to change; the server here answers
// every request with one error, as an S3 server does.
func TestErrorsSayWhatToChange(t *testing.T) {
	for _, tc := range []struct {
		status     int
		code, want string
	}{
		{403, "AccessDenied", `the access key (the manager's log names it) may not do this: grant it s3:PutObject, s3:GetObject and s3:ListBucket on bucket "results", or give other credentials in the static keys given`},
		{403, "RequestTimeTooSkewed", "synchronise the nodes' clocks"},
		{400, "AuthorizationHeaderMalformed", `the bucket is not served for region "eu-west-3" at this endpoint: set --archive-s3-region`},
		{400, "ExpiredToken", "renew AWS_SESSION_TOKEN"},
		{503, "SlowDown", "tries again with backoff"},
		{500, "", "HTTP 500 Internal Server Error; the server is failing: the archive tries again with backoff"},
		// minio-go takes a 403 without an S3 error body for AccessDenied.
		{403, "", "HTTP 403 AccessDenied: Access Denied.; the access key (the manager's log names it) may not do this"},
		{404, "NoSuchBucket", `bucket "results" does not exist at`},
	} {
		t.Run(fmt.Sprintf("%d %s", tc.status, tc.code), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				if tc.code != "" {
					fmt.Fprintf(w, "<?xml version=\"1.0\"?>\n<Error><Code>%s</Code><Message>it went wrong</Message></Error>", tc.code)
				}
			}))
			defer srv.Close()
			c, err := archive.New(archive.Config{Endpoint: srv.URL, Bucket: "results", Region: "eu-west-3", Credentials: archive.Static(testCred)})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Put(t.Context(), "a/b.json", []byte("{}"))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range []string{"S3 PutObject of s3://results/a/b.json at " + srv.URL + " failed: HTTP " + fmt.Sprint(tc.status), tc.want} {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			if tc.code != "" && !strings.Contains(msg, tc.code+": it went wrong") {
				t.Errorf("%q does not carry the server's code and message", msg)
			}
			if strings.Contains(msg, testCred.AccessKeyID) {
				t.Errorf("%q names the access key ID, which goes into events the suite's namespace reads", msg)
			}
			var e *archive.Error
			if !errors.As(err, &e) || e.AccessKeyID != testCred.AccessKeyID {
				t.Errorf("the error does not keep the access key ID for the log: %#v", err)
			}
		})
	}
}

// An https endpoint whose CA the system does not trust is refused, saying to give the CA file;
// with the CA file it is trusted.
func TestCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer srv.Close()
	c, err := archive.New(archive.Config{Endpoint: srv.URL, Bucket: "results", Credentials: archive.Static(testCred)})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Put(t.Context(), "k", nil)
	if err == nil || !strings.Contains(err.Error(), "not signed by a CA the manager trusts: give the CA certificate with --archive-s3-ca-file") {
		t.Errorf("an unknown CA: %v", err)
	}

	caFile := filepath.Join(t.TempDir(), "ca.crt")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, ca, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = archive.New(archive.Config{Endpoint: srv.URL, Bucket: "results", Credentials: archive.Static(testCred), CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Put(t.Context(), "k", nil); err != nil {
		t.Errorf("with the CA file: %v", err)
	}

	if err := os.WriteFile(caFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.New(archive.Config{Endpoint: srv.URL, Bucket: "results", Credentials: archive.Static(testCred), CAFile: caFile}); err == nil ||
		!strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Errorf("a CA file without a certificate: %v", err)
	}
}

func TestConfigIsChecked(t *testing.T) {
	for _, tc := range []struct {
		cfg  archive.Config
		want string
	}{
		{archive.Config{Endpoint: "s3.example.com", Bucket: "results", Credentials: archive.Static(testCred)}, "is not an http:// or https:// URL"},
		{archive.Config{Endpoint: "https://key:secret@s3.example.com", Bucket: "results", Credentials: archive.Static(testCred)}, "without a path, bucket, query or credentials"},
		{archive.Config{Endpoint: "https://s3.example.com", Bucket: "Results", Credentials: archive.Static(testCred)}, "is not an S3 bucket name"},
		{archive.Config{Endpoint: "https://s3.example.com/s3", Bucket: "results", Credentials: archive.Static(testCred)}, "without a path, bucket, query or credentials"},
		{archive.Config{Endpoint: "https://s3.example.com", Bucket: "results"}, "has no credentials: mount a Secret with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
	} {
		if _, err := archive.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, name := range []string{archive.EnvWebIdentityTokenFile, archive.EnvRoleARN, archive.EnvContainerFullURI} {
		t.Setenv(name, "")
	}
	t.Setenv(archive.EnvAccessKeyID, "k")
	t.Setenv(archive.EnvSecretAccessKey, "")
	if _, err := archive.FromEnvironment(""); err == nil || !strings.Contains(err.Error(), "set AWS_SECRET_ACCESS_KEY in the manager's environment too") {
		t.Errorf("no secret in the environment: %v", err)
	}
	t.Setenv(archive.EnvAccessKeyID, "")
	if _, err := archive.FromEnvironment(""); err == nil || !strings.Contains(err.Error(), "the archive has no S3 credentials: mount a Secret") {
		t.Errorf("no credentials at all: %v", err)
	}
	t.Setenv(archive.EnvWebIdentityTokenFile, "/var/run/secrets/eks.amazonaws.com/serviceaccount/token")
	if _, err := archive.FromEnvironment(""); err == nil || !strings.Contains(err.Error(), "AWS_WEB_IDENTITY_TOKEN_FILE is set without AWS_ROLE_ARN") {
		t.Errorf("a web identity token without a role: %v", err)
	}
	if _, err := archive.FromEnvironment(t.TempDir()); err == nil || !strings.Contains(err.Error(), "the Secret needs the key AWS_ACCESS_KEY_ID") {
		t.Errorf("an empty credentials directory: %v", err)
	}
}
