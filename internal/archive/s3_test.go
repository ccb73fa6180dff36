package archive_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/vmbench/vmbench/internal/archive"
	"github.com/vmbench/vmbench/internal/archive/archivetest"
)

// The client against a real S3-compatible server (SeaweedFS), which checks every signature and the
// payload's SHA-256; one server for every case, as it takes seconds to start.
func TestS3AgainstARealServer(t *testing.T) {
	server := archivetest.Start(t)
	t.Run("put, head, get and list", func(t *testing.T) { putHeadGetList(t, server) })
	t.Run("refusals name the credential", func(t *testing.T) { refusalsNameTheCredential(t, server) })
	t.Run("missing bucket and unreachable endpoint", func(t *testing.T) { missingBucketAndUnreachableEndpoint(t, server) })
}

func putHeadGetList(t *testing.T, server *archivetest.Server) {
	c := server.Client(t, archivetest.Archive, archivetest.Bucket)
	ctx := t.Context()

	objects := map[string][]byte{
		"vmbench/bench/demo/uid-1/tables/demo-container-1-tables.json": []byte(`{"kind":"ConfigMap"}`),
		"vmbench/bench/demo/uid-1/tables/demo-vm-1-tables.json":        bytes.Repeat([]byte("t,bps\n0,1e9\n"), 50_000),
		"vmbench/bench/demo/uid-1/suite.json":                          []byte(`{"kind":"BenchmarkSuite"}`),
		"vmbench/bench/demo/uid-2/suite.json":                          []byte(`{}`),
		"vmbench/bench/other/uid-3/suite.json":                         []byte(`{}`),
		// A key with characters SigV4 encodes: the canonical path must match the server's.
		"vmbench/odd keys/a b+c=d,e;f!g'(h)~é.json": []byte("odd"),
	}
	for key, body := range objects {
		if err := c.Put(ctx, key, body); err != nil {
			t.Fatalf("Put %s: %v", key, err)
		}
	}
	for key, body := range objects {
		got, err := c.Get(ctx, key)
		if err != nil {
			t.Fatalf("Get %s: %v", key, err)
		}
		if !bytes.Equal(got, body) {
			t.Errorf("Get %s: %d bytes, want the %d put", key, len(got), len(body))
		}
		if found, err := c.Exists(ctx, key); err != nil || !found {
			t.Errorf("Exists %s = %v, %v; want true", key, found, err)
		}
	}
	if found, err := c.Exists(ctx, "vmbench/bench/demo/uid-9/suite.json"); err != nil || found {
		t.Errorf("Exists of a missing key = %v, %v; want false, nil", found, err)
	}
	_, err := c.Get(ctx, "vmbench/bench/demo/uid-9/suite.json")
	if !archive.IsNotFound(err) {
		t.Errorf("Get of a missing key: %v, want a not-found error", err)
	}

	// Two keys a page: the listing goes on with continuation tokens.
	archive.SetPageSize(c, 2)
	keys, err := c.List(ctx, "vmbench/bench/")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for k := range objects {
		if strings.HasPrefix(k, "vmbench/bench/") {
			want = append(want, k)
		}
	}
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("List vmbench/bench/ in pages of 2:\n got %q\nwant %q", keys, want)
	}
	if keys, err := c.List(ctx, "vmbench/odd keys/"); err != nil || len(keys) != 1 {
		t.Errorf("List of the odd prefix: %q, %v", keys, err)
	}
}

// A wrong secret, an unknown key ID, a body changed after signing: the server refuses each, and
// the error says which credential to correct.
func refusalsNameTheCredential(t *testing.T, server *archivetest.Server) {
	ctx := t.Context()
	key := "vmbench/refused/demo/uid-1/suite.json"

	wrongSecret := archivetest.Archive
	wrongSecret.SecretAccessKey = "not-the-secret"
	c := server.Client(t, wrongSecret, archivetest.Bucket)
	err := c.Put(ctx, key, []byte("{}"))
	expectS3Error(t, err, "wrong secret", 403, "SignatureDoesNotMatch",
		"AWS_SECRET_ACCESS_KEY is not the secret of the access key (the manager's log names it)", server.Endpoint, archivetest.Bucket, key)
	expectKeyIDOnlyForTheLog(t, err, archivetest.Archive.AccessKeyID)
	// HEAD has no body to carry the code, yet a refusal is no "not there".
	if found, err := c.Exists(ctx, key); err == nil || found {
		t.Errorf("Exists with a wrong secret = %v, %v; want an error", found, err)
	} else if !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Errorf("Exists with a wrong secret: %v; want it to name AWS_SECRET_ACCESS_KEY", err)
	}
	if _, err := c.List(ctx, "vmbench/"); err == nil {
		t.Error("List with a wrong secret succeeded")
	}

	unknown := archive.Credentials{AccessKeyID: "nobody", SecretAccessKey: "x"}
	err = server.Client(t, unknown, archivetest.Bucket).Put(ctx, key, []byte("{}"))
	expectS3Error(t, err, "unknown key ID", 403, "InvalidAccessKeyId", "the server knows no such access key (the manager's log names it): correct AWS_ACCESS_KEY_ID", server.Endpoint)
	expectKeyIDOnlyForTheLog(t, err, "nobody")

	// The signature (over plain HTTP, minio-go signs each chunk of the body) and the Content-MD5
	// cover the payload: a body changed on the way is refused, and not stored (checked below).
	tampered := server.Client(t, archivetest.Archive, archivetest.Bucket)
	archive.WrapTransport(tampered, func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPut {
				body, _ := io.ReadAll(req.Body)
				// The last byte of the object, before the chunk's CRLF and the final empty chunk.
				i := bytes.LastIndex(body, []byte("}"))
				body[i] ^= 1
				req.Body = io.NopCloser(bytes.NewReader(body))
			}
			return next.RoundTrip(req)
		})
	})
	err = tampered.Put(ctx, key, []byte(`{"kind":"BenchmarkSuite"}`))
	// SeaweedFS answers a chunk whose signature fails with 500 InternalError, not a 4xx code.
	var e *archive.Error
	if !errors.As(err, &e) || e.Status == 0 {
		t.Errorf("a body changed after signing: %v, want the server's refusal", err)
	}
	if found, err := server.Client(t, archivetest.Archive, archivetest.Bucket).Exists(ctx, key); err != nil || found {
		t.Errorf("after the refusals the key exists: %v, %v", found, err)
	}
}

// A bucket that does not exist is named, with how to make it; a server that does not answer is
// named, with what to check.
func missingBucketAndUnreachableEndpoint(t *testing.T, server *archivetest.Server) {
	ctx := t.Context()
	key := "vmbench/bench/demo/uid-1/suite.json"
	err := server.Client(t, archivetest.Archive, "no-such-bucket").Put(ctx, key, []byte("{}"))
	expectS3Error(t, err, "missing bucket", 404, "NoSuchBucket",
		"bucket \"no-such-bucket\" does not exist at "+server.Endpoint+": create it", server.Endpoint, "no-such-bucket")
	if _, err := server.Client(t, archivetest.Archive, "no-such-bucket").List(ctx, "vmbench/"); !strings.Contains(fmt.Sprint(err), "NoSuchBucket") {
		t.Errorf("List of a missing bucket: %v, want NoSuchBucket", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + l.Addr().String()
	_ = l.Close()
	c, err := archive.New(archive.Config{Endpoint: endpoint, Bucket: archivetest.Bucket, Credentials: archive.Static(archivetest.Archive)})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Put(ctx, key, []byte("{}"))
	expectS3Error(t, err, "unreachable", 0, "", "the endpoint is unreachable: check the endpoint "+endpoint, endpoint, key)
}

// expectKeyIDOnlyForTheLog checks that err keeps the access key ID for the manager's log and
// that its message, which goes into events the suite's namespace reads, does not say it (S12).
func expectKeyIDOnlyForTheLog(t *testing.T, err error, keyID string) {
	t.Helper()
	var e *archive.Error
	if !errors.As(err, &e) || e.AccessKeyID != keyID {
		t.Errorf("%v: want the access key ID %q kept for the log", err, keyID)
	}
	if strings.Contains(fmt.Sprint(err), keyID) {
		t.Errorf("%q names the access key ID", err)
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// expectS3Error checks that err is an *archive.Error of status and code whose message holds each
// of words.
func expectS3Error(t *testing.T, err error, what string, status int, code string, words ...string) {
	t.Helper()
	var e *archive.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %v, want an *archive.Error", what, err)
		return
	}
	if e.Status != status || e.Code != code {
		t.Errorf("%s: HTTP %d %q, want %d %q: %v", what, e.Status, e.Code, status, code, err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", what, err.Error(), w)
		}
	}
}
