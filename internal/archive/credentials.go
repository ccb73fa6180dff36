package archive

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The archive's credentials, the ways people who run it log in to their object storage:
//   - static keys in files, re-read when they change: a Secret mounted as a volume, which the
//     kubelet updates in place when the Secret is rotated (the chart's archive.s3.credentialsSecret);
//   - static keys in the environment, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN;
//   - IRSA (IAM roles for service accounts): AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN, exchanged
//     with STS AssumeRoleWithWebIdentity for temporary keys;
//   - EKS Pod Identity: AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE.
// Temporary keys are refreshed by minio-go once 80% of their lifetime has passed. The instance
// metadata service (IMDS) is never asked: on a shared node its role is the node's, not vmbench's.

// Environment variables of the credentials, the names every S3 client reads.
const (
	EnvAccessKeyID          = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey      = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken         = "AWS_SESSION_TOKEN"
	EnvWebIdentityTokenFile = "AWS_WEB_IDENTITY_TOKEN_FILE"
	EnvRoleARN              = "AWS_ROLE_ARN"
	EnvContainerFullURI     = "AWS_CONTAINER_CREDENTIALS_FULL_URI"
	// EnvSTSEndpoint is the STS endpoint for web identity tokens, as AWS's SDKs read it; empty:
	// STS of AWS_REGION, or sts.amazonaws.com.
	EnvSTSEndpoint = "AWS_ENDPOINT_URL_STS"
)

// credentialsHelp says every way to give the archive credentials.
const credentialsHelp = "mount a Secret with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) and give its " +
	"directory with --archive-s3-credentials-dir (the chart's archive.s3.credentialsSecret does both), set those variables in the " +
	"manager's environment, or give the manager's service account an IAM role (IRSA: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN; " +
	"EKS Pod Identity: AWS_CONTAINER_CREDENTIALS_FULL_URI)"

// Credentials are static keys.
type Credentials struct {
	AccessKeyID, SecretAccessKey string
	// SessionToken is set for temporary credentials only.
	SessionToken string
}

// CredentialSource is where the archive's requests get their keys from, and how messages name it.
type CredentialSource struct {
	creds *credentials.Credentials
	// source names where the keys come from, for advice and the log.
	source string
	// keyID is the access key ID last got, for the log.
	keyID *atomic.Pointer[string]
}

// String names the source, e.g. "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in /etc/vmbench/archive-credentials".
func (c *CredentialSource) String() string { return c.source }

// AccessKeyID is the access key ID last got, "" before any, for the log; it never goes into
// events, which the suite's namespace reads.
func (c *CredentialSource) AccessKeyID() string {
	if id := c.keyID.Load(); id != nil {
		return *id
	}
	return ""
}

// CredentialsError is credentials that could not be got: a file that cannot be read, STS or the
// Pod Identity agent refusing or not answering.
type CredentialsError struct {
	Source string
	Err    error
}

func (e *CredentialsError) Error() string {
	return fmt.Sprintf("the archive's credentials (%s) could not be got: %s", e.Source, oneLine(e.Err))
}

func (e *CredentialsError) Unwrap() error { return e.Err }

// named wraps a provider so that its failures say which source failed.
type named struct {
	credentials.Provider
	source string
	keyID  *atomic.Pointer[string]
}

func (n named) RetrieveWithCredContext(cc *credentials.CredContext) (credentials.Value, error) {
	v, err := n.Provider.RetrieveWithCredContext(cc)
	if err != nil {
		return v, &CredentialsError{Source: n.source, Err: err}
	}
	n.keyID.Store(&v.AccessKeyID)
	return v, nil
}

func (n named) Retrieve() (credentials.Value, error) { return n.RetrieveWithCredContext(nil) }

func source(p credentials.Provider, name string) *CredentialSource {
	keyID := &atomic.Pointer[string]{}
	return &CredentialSource{creds: credentials.New(named{Provider: p, source: name, keyID: keyID}), source: name, keyID: keyID}
}

// Static is c, which never change; for tests and tools.
func Static(c Credentials) *CredentialSource {
	return source(&credentials.Static{Value: credentials.Value{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey,
		SessionToken: c.SessionToken, SignerType: credentials.SignatureV4}}, "the static keys given")
}

// FromFiles reads the keys from the files AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and, if it
// exists, AWS_SESSION_TOKEN in dir (a Secret mounted as a volume) before the first request, and
// again before any request once one of them has changed. A missing key file is an error naming it.
func FromFiles(dir string) (*CredentialSource, error) {
	f := &fileKeys{dir: dir}
	if _, err := f.read(); err != nil {
		return nil, fmt.Errorf("the archive's credentials: %w", err)
	}
	return source(f, fmt.Sprintf("%s and %s in %s (the chart's archive.s3.credentialsSecret)", EnvAccessKeyID, EnvSecretAccessKey, dir)), nil
}

// fileKeys is a minio-go credentials provider of key files, expired when a file changed.
type fileKeys struct {
	dir  string
	mu   sync.Mutex
	seen map[string]fileStamp
}

// fileStamp tells a file's versions apart: the kubelet replaces a Secret volume's files by
// swapping a symlink to a new directory, so the file (inode) changes with its contents.
type fileStamp struct {
	info os.FileInfo
	size int64
	mod  time.Time
}

func (f *fileKeys) stamp(name string) (fileStamp, error) {
	info, err := os.Stat(filepath.Join(f.dir, name))
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{info: info, size: info.Size(), mod: info.ModTime()}, nil
}

// read reads the key files and notes their versions.
func (f *fileKeys) read() (credentials.Value, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]fileStamp{}
	value := func(name string, optional bool) (string, error) {
		st, err := f.stamp(name)
		if errors.Is(err, os.ErrNotExist) && optional {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("no key file %s: %w: the Secret needs the key %s", filepath.Join(f.dir, name), err, name)
		}
		b, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil {
			return "", err
		}
		seen[name] = st
		v := string(bytes.TrimSpace(b))
		if v == "" && !optional {
			return "", fmt.Errorf("key file %s is empty: the Secret's key %s needs a value", filepath.Join(f.dir, name), name)
		}
		return v, nil
	}
	var v credentials.Value
	var err error
	if v.AccessKeyID, err = value(EnvAccessKeyID, false); err != nil {
		return v, err
	}
	if v.SecretAccessKey, err = value(EnvSecretAccessKey, false); err != nil {
		return v, err
	}
	if v.SessionToken, err = value(EnvSessionToken, true); err != nil {
		return v, err
	}
	v.SignerType = credentials.SignatureV4
	f.seen = seen
	return v, nil
}

func (f *fileKeys) Retrieve() (credentials.Value, error) { return f.read() }

func (f *fileKeys) RetrieveWithCredContext(*credentials.CredContext) (credentials.Value, error) {
	return f.read()
}

// IsExpired says whether a key file was added, removed or replaced since the last read.
func (f *fileKeys) IsExpired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		return true
	}
	for _, name := range []string{EnvAccessKeyID, EnvSecretAccessKey, EnvSessionToken} {
		st, err := f.stamp(name)
		before, known := f.seen[name]
		switch {
		case err != nil && !known && name == EnvSessionToken:
		case err != nil || !known:
			return true
		case !os.SameFile(st.info, before.info) || st.size != before.size || !st.mod.Equal(before.mod):
			return true
		}
	}
	return false
}

// FromEnvironment picks the credentials the manager's environment gives: the key files of dir
// when dir is set, else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else a web identity token
// (IRSA), else EKS Pod Identity. None is an error that lists every way.
func FromEnvironment(dir string) (*CredentialSource, error) {
	switch {
	case dir != "":
		return FromFiles(dir)
	case os.Getenv(EnvAccessKeyID) != "" || os.Getenv(EnvSecretAccessKey) != "":
		var missing []string
		for _, name := range []string{EnvAccessKeyID, EnvSecretAccessKey} {
			if os.Getenv(name) == "" {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("the archive's S3 credentials are incomplete: set %s in the manager's environment too", missing[0])
		}
		return source(&credentials.EnvAWS{}, fmt.Sprintf("%s and %s in the manager's environment", EnvAccessKeyID, EnvSecretAccessKey)), nil
	case os.Getenv(EnvWebIdentityTokenFile) != "":
		if os.Getenv(EnvRoleARN) == "" {
			return nil, fmt.Errorf("%s is set without %s: annotate the manager's service account with the role to assume "+
				"(eks.amazonaws.com/role-arn), or set %s", EnvWebIdentityTokenFile, EnvRoleARN, EnvRoleARN)
		}
		// The STS endpoint only for this branch: minio-go would take it for the other kinds too.
		return source(&credentials.IAM{Endpoint: os.Getenv(EnvSTSEndpoint)},
			fmt.Sprintf("the web identity token of %s exchanged at STS for role %s (IRSA)", EnvWebIdentityTokenFile, EnvRoleARN)), nil
	case os.Getenv(EnvContainerFullURI) != "":
		return source(&credentials.IAM{}, fmt.Sprintf("the container credentials of %s (EKS Pod Identity)", EnvContainerFullURI)), nil
	}
	return nil, fmt.Errorf("the archive has no S3 credentials: %s", credentialsHelp)
}
