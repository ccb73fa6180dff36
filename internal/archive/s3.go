// Package archive keeps a copy of every finished suite's full results (the suite with its status,
// and its result tables) in S3-compatible object storage, where they outlive the suite, its
// schedule and the cluster. Requests are made and signed by minio-go, with credentials that are
// refreshed as they change or expire (credentials.go); the package adds the archive's layout and
// errors that say what to change. controllers/archive/archive_controller.go decides when to write.
package archive

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/minio/minio-go/v7"
)

// Store is where archived objects go: S3 in the manager, a map in tests.
type Store interface {
	// Put writes body under key, replacing what was there.
	Put(ctx context.Context, key string, body []byte) error
	// Exists says whether an object of key exists.
	Exists(ctx context.Context, key string) (bool, error)
	// Get reads the object of key; an object that does not exist is an error for which IsNotFound
	// is true.
	Get(ctx context.Context, key string) ([]byte, error)
	// List returns the keys that begin with prefix, in the store's order (S3: byte order).
	List(ctx context.Context, prefix string) ([]string, error)
	// Location names where key is, for messages and events.
	Location(key string) string
}

// DefaultRegion is the region requests are signed for when none is given; most S3-compatible
// servers accept any region, and AWS's us-east-1 buckets want this one.
const DefaultRegion = "us-east-1"

// MaxObjectSize is the largest object Get reads: a suite's status is under 1.5 MiB and a tables
// ConfigMap under 1 MiB, so anything much larger is not the archive's.
const MaxObjectSize = 64 << 20

// maxRetries is how many times minio-go sends a request that failed in a way worth retrying
// (a 5xx, a reset connection) before it gives up; the archive controller's own backoff does the rest.
const maxRetries = 3

// Config says where the archive is and how to reach it.
type Config struct {
	// Endpoint is the server's URL, http:// or https://, e.g. https://s3.eu-west-1.amazonaws.com or
	// http://minio.storage:9000. Buckets are addressed path-style, below it.
	Endpoint string
	Bucket   string
	// Region is what requests are signed for; empty: DefaultRegion.
	Region string
	// Credentials sign the requests (Static, FromFiles, FromEnvironment).
	Credentials *CredentialSource
	// CAFile, when set, is a PEM file of CA certificates trusted for the endpoint, beside the
	// system's.
	CAFile string
	// Timeout bounds each request; 0: one minute.
	Timeout time.Duration
}

// S3 is a Store in a bucket of an S3-compatible server.
type S3 struct {
	endpoint  *url.URL
	bucket    string
	region    string
	cred      *CredentialSource
	client    *minio.Client
	transport *swappable
	timeout   time.Duration
	// pageSize is replaced in tests.
	pageSize int
}

// bucketName is what S3 accepts as a bucket name for path-style requests.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// New checks cfg and returns the client; it sends no request.
func New(cfg Config) (*S3, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil ||
		strings.Trim(u.Path, "/") != "" {
		return nil, fmt.Errorf("archive endpoint %q is not an http:// or https:// URL of a server (such as https://s3.example.com or http://minio.storage:9000, "+
			"without a path, bucket, query or credentials)", cfg.Endpoint)
	}
	u.Path, u.RawPath = "", ""
	if !bucketName.MatchString(cfg.Bucket) {
		return nil, fmt.Errorf("archive bucket %q is not an S3 bucket name: 3 to 63 lower-case letters, digits, '.' and '-', "+
			"beginning and ending with a letter or digit", cfg.Bucket)
	}
	if cfg.Credentials == nil {
		return nil, fmt.Errorf("the archive at %s has no credentials: %s", cfg.Endpoint, credentialsHelp)
	}
	region := cfg.Region
	if region == "" {
		region = DefaultRegion
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the archive's CA file: %w: mount the CA certificate there (the chart's archive.s3.caSecret) or drop the CA file", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the archive's CA file %s holds no PEM certificate: give the CA certificate that signed the endpoint's, PEM-encoded", cfg.CAFile)
		}
		base.TLSClientConfig.RootCAs = pool
	}
	transport := &swappable{next: base}
	client, err := minio.New(u.Host, &minio.Options{
		Creds: cfg.Credentials.creds, Secure: u.Scheme == "https", Transport: transport, Region: region,
		// Path-style: the bucket below the endpoint, so that any server name works with its certificate.
		BucketLookup: minio.BucketLookupPath, MaxRetries: maxRetries,
	})
	if err != nil {
		return nil, fmt.Errorf("archive endpoint %q: %w", cfg.Endpoint, err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &S3{endpoint: u, bucket: cfg.Bucket, region: region, cred: cfg.Credentials, client: client, transport: transport,
		timeout: timeout, pageSize: 1000}, nil
}

// swappable is the client's transport, which tests may wrap after the client was made.
type swappable struct {
	mu   sync.RWMutex
	next http.RoundTripper
}

func (s *swappable) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.RLock()
	next := s.next
	s.mu.RUnlock()
	return next.RoundTrip(req)
}

// Insecure says whether requests go in plain HTTP, where anyone on the path can read and change
// them.
func (s *S3) Insecure() bool { return s.endpoint.Scheme == "http" }

// Location is s3://<bucket>/<key> at the endpoint.
func (s *S3) Location(key string) string {
	return fmt.Sprintf("s3://%s/%s at %s", s.bucket, key, s.endpoint.Redacted())
}

// Put is PutObject, with the body's MD5 for the server to check.
func (s *S3) Put(ctx context.Context, key string, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: contentType(key), SendContentMd5: true})
	return s.fail("PutObject", key, err)
}

// CreateBucket is CreateBucket, for tests and tools: the archive writes into a bucket that exists.
func (s *S3) CreateBucket(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	return s.fail("CreateBucket", "", s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: s.region}))
}

// Exists is HeadObject: 404 is false, any other failure an error.
func (s *S3) Exists(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	_, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err := s.fail("HeadObject", key, err); err != nil {
		if IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// Get is GetObject, at most MaxObjectSize bytes.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	body, _, _, err := minio.Core{Client: s.client}.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.fail("GetObject", key, err)
	}
	defer func() { _ = body.Close() }()
	data, err := io.ReadAll(io.LimitReader(body, MaxObjectSize+1))
	if err != nil {
		return nil, s.fail("GetObject", key, fmt.Errorf("reading the body: %w", err))
	}
	if len(data) > MaxObjectSize {
		e := s.fail("GetObject", key, fmt.Errorf("the object is larger than %d MiB, more than any archived object", MaxObjectSize>>20))
		var ae *Error
		if errors.As(e, &ae) {
			ae.Status = http.StatusOK
		}
		return nil, e
	}
	return data, nil
}

// List is ListObjectsV2, page after page.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, MaxKeys: s.pageSize}) {
		if obj.Err != nil {
			return nil, s.fail("ListObjectsV2", prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys, nil
}

// fail is err, from minio-go, as an *Error that says what to change; nil stays nil.
func (s *S3) fail(op, key string, err error) error {
	if err == nil {
		return nil
	}
	e := &Error{Op: op, Endpoint: s.endpoint.Redacted(), Bucket: s.bucket, Key: key, Region: s.region,
		Credentials: s.cred.source, AccessKeyID: s.cred.AccessKeyID()}
	var resp minio.ErrorResponse
	switch {
	case errors.As(err, &resp) && resp.StatusCode != 0:
		e.Status, e.Code = resp.StatusCode, resp.Code
		e.Message = strings.Join(strings.Fields(resp.Message), " ")
		if op == "HeadObject" || (e.Code != "" && e.Code[0] >= '0' && e.Code[0] <= '9') {
			// An answer without an S3 error body (a HEAD answer never has one): minio-go made the
			// code up from the status, which says nothing more.
			e.Code, e.Message = "", ""
		}
	default:
		e.Err = err
	}
	return e
}

// contentType is the Content-Type an object is stored with.
func contentType(key string) string {
	if strings.HasSuffix(key, ".json") {
		return "application/json"
	}
	return "application/octet-stream"
}
