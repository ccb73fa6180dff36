// Package archive keeps a copy of every finished suite's full results (the suite with its status,
// and its result tables) in S3-compatible object storage, where they outlive the suite, its
// schedule and the cluster. It holds a minimal S3 client of its own (path-style requests signed with
// AWS Signature Version 4: PutObject, HeadObject, GetObject and ListObjectsV2) and the archive's
// layout; controllers/archive_controller.go decides when to write.
package archive

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
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

// Credentials sign the requests.
type Credentials struct {
	AccessKeyID, SecretAccessKey string
	// SessionToken is set for temporary credentials only.
	SessionToken string
}

// Environment variables of the credentials, the names every S3 client reads.
const (
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
)

// CredentialsFromEnv reads the credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and,
// optionally, AWS_SESSION_TOKEN; a missing key ID or secret is an error naming it.
func CredentialsFromEnv() (Credentials, error) {
	c := Credentials{
		AccessKeyID:     os.Getenv(EnvAccessKeyID),
		SecretAccessKey: os.Getenv(EnvSecretAccessKey),
		SessionToken:    os.Getenv(EnvSessionToken),
	}
	var missing []string
	if c.AccessKeyID == "" {
		missing = append(missing, EnvAccessKeyID)
	}
	if c.SecretAccessKey == "" {
		missing = append(missing, EnvSecretAccessKey)
	}
	if len(missing) > 0 {
		return Credentials{}, fmt.Errorf("the archive's S3 credentials are missing: set %s in the manager's environment "+
			"(the chart takes them from the Secret named by archive.s3.credentialsSecret)", strings.Join(missing, " and "))
	}
	return c, nil
}

// Config says where the archive is and how to reach it.
type Config struct {
	// Endpoint is the server's URL, http:// or https://, e.g. https://s3.eu-west-1.amazonaws.com or
	// http://minio.storage:9000. Buckets are addressed path-style, below it.
	Endpoint string
	Bucket   string
	// Region is what requests are signed for; empty: DefaultRegion.
	Region      string
	Credentials Credentials
	// CAFile, when set, is a PEM file of CA certificates trusted for the endpoint, beside the
	// system's.
	CAFile string
	// Timeout bounds each request; 0: one minute.
	Timeout time.Duration
}

// S3 is a Store in a bucket of an S3-compatible server.
type S3 struct {
	endpoint *url.URL
	bucket   string
	region   string
	cred     Credentials
	http     *http.Client
	// now and pageSize are replaced in tests.
	now      func() time.Time
	pageSize int
}

// bucketName is what S3 accepts as a bucket name for path-style requests.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// New checks cfg and returns the client; it sends no request.
func New(cfg Config) (*S3, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("archive endpoint %q is not an http:// or https:// URL of a server (such as https://s3.example.com or http://minio.storage:9000, "+
			"without a bucket, query or credentials)", cfg.Endpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	if !bucketName.MatchString(cfg.Bucket) {
		return nil, fmt.Errorf("archive bucket %q is not an S3 bucket name: 3 to 63 lower-case letters, digits, '.' and '-', "+
			"beginning and ending with a letter or digit", cfg.Bucket)
	}
	if cfg.Credentials.AccessKeyID == "" || cfg.Credentials.SecretAccessKey == "" {
		return nil, fmt.Errorf("the archive at %s has no credentials: set %s and %s", cfg.Endpoint, EnvAccessKeyID, EnvSecretAccessKey)
	}
	region := cfg.Region
	if region == "" {
		region = DefaultRegion
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
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
		transport.TLSClientConfig.RootCAs = pool
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	return &S3{endpoint: u, bucket: cfg.Bucket, region: region, cred: cfg.Credentials,
		http: &http.Client{Transport: transport, Timeout: timeout}, now: time.Now, pageSize: 1000}, nil
}

// Location is s3://<bucket>/<key> at the endpoint.
func (s *S3) Location(key string) string {
	return fmt.Sprintf("s3://%s/%s at %s", s.bucket, key, s.endpoint.Redacted())
}

// Put is PutObject.
func (s *S3) Put(ctx context.Context, key string, body []byte) error {
	resp, err := s.do(ctx, "PutObject", http.MethodPut, key, nil, body)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// CreateBucket is CreateBucket, for tests and tools: the archive writes into a bucket that exists.
func (s *S3) CreateBucket(ctx context.Context) error {
	resp, err := s.do(ctx, "CreateBucket", http.MethodPut, "", nil, nil)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// Exists is HeadObject: 404 is false, any other failure an error.
func (s *S3) Exists(ctx context.Context, key string) (bool, error) {
	resp, err := s.do(ctx, "HeadObject", http.MethodHead, key, nil, nil)
	if IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, resp.Body.Close()
}

// Get is GetObject.
func (s *S3) Get(ctx context.Context, key string) ([]byte, error) {
	resp, err := s.do(ctx, "GetObject", http.MethodGet, key, nil, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxObjectSize+1))
	if err != nil {
		return nil, s.fail("GetObject", key, 0, nil, fmt.Errorf("reading the body: %w", err))
	}
	if len(body) > MaxObjectSize {
		return nil, s.fail("GetObject", key, resp.StatusCode, nil, fmt.Errorf("the object is larger than %d MiB, more than any archived object", MaxObjectSize>>20))
	}
	return body, nil
}

// listResult is what ListObjectsV2 answers, of it the parts List reads.
type listResult struct {
	IsTruncated           bool
	NextContinuationToken string
	Contents              []struct{ Key string }
}

// List is ListObjectsV2, page after page.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	token := ""
	for {
		query := map[string]string{"list-type": "2", "prefix": prefix, "max-keys": strconv.Itoa(s.pageSize)}
		if token != "" {
			query["continuation-token"] = token
		}
		resp, err := s.do(ctx, "ListObjectsV2", http.MethodGet, "", query, nil)
		if err != nil {
			return nil, err
		}
		var page listResult
		err = xml.NewDecoder(io.LimitReader(resp.Body, MaxObjectSize)).Decode(&page)
		_ = resp.Body.Close()
		if err != nil {
			return nil, s.fail("ListObjectsV2", prefix, resp.StatusCode, nil, fmt.Errorf("the answer is no ListBucketResult: %w", err))
		}
		for _, c := range page.Contents {
			keys = append(keys, c.Key)
		}
		if !page.IsTruncated {
			return keys, nil
		}
		if page.NextContinuationToken == "" || page.NextContinuationToken == token {
			return nil, s.fail("ListObjectsV2", prefix, resp.StatusCode, nil,
				errors.New("the server says the listing goes on but gives no new continuation token"))
		}
		token = page.NextContinuationToken
	}
}

// s3Error is the XML body of a failed request.
type s3Error struct {
	Code, Message string
}

// do sends one signed request to the bucket (key "") or an object and returns the response of a
// 2xx status; anything else is an *Error.
func (s *S3) do(ctx context.Context, op, method, key string, query map[string]string, body []byte) (*http.Response, error) {
	u := *s.endpoint
	raw := u.Path + "/" + uriEncode(s.bucket, false)
	if key != "" {
		raw += "/" + uriEncode(key, true)
	}
	unescaped, err := url.PathUnescape(raw)
	if err != nil {
		return nil, s.fail(op, key, 0, nil, err)
	}
	u.Path, u.RawPath, u.RawQuery = unescaped, raw, canonicalQuery(query)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, s.fail(op, key, 0, nil, err)
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if method == http.MethodPut {
		req.Header.Set("Content-Type", contentType(key))
	}
	sign(req, payloadHash(body), s.cred, s.region, s.now())
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, s.fail(op, key, 0, nil, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer func() { _ = resp.Body.Close() }()
	var body3 s3Error
	raw3, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if len(raw3) > 0 {
		_ = xml.Unmarshal(raw3, &body3)
	}
	return nil, s.fail(op, key, resp.StatusCode, &body3, nil)
}

func (s *S3) fail(op, key string, status int, body *s3Error, err error) *Error {
	e := &Error{Op: op, Endpoint: s.endpoint.Redacted(), Bucket: s.bucket, Key: key, Status: status,
		AccessKeyID: s.cred.AccessKeyID, Region: s.region, Err: err}
	if body != nil {
		e.Code, e.Message = body.Code, strings.Join(strings.Fields(body.Message), " ")
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
