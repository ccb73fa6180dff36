package archive

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Error is a failed S3 request: which, where, what the server said (or why it could not be
// reached) and what to change.
type Error struct {
	// Op is the S3 operation: PutObject, HeadObject, GetObject, ListObjectsV2.
	Op       string
	Endpoint string
	Bucket   string
	// Key is the object's key, or the prefix of a listing.
	Key string
	// Status is the HTTP status, 0 when no answer came.
	Status int
	// Code and Message are the server's S3 error, when its answer had one.
	Code, Message string
	// Region is what the request was signed for, and Credentials where its keys came from, for
	// the advice.
	Region, Credentials string
	// AccessKeyID is the key the request was signed with, for the manager's log only: Error() does
	// not say it, as the message goes into events that the suite's namespace reads.
	AccessKeyID string
	// Err is why no answer came (or why the answer could not be read).
	Err error
}

func (e *Error) Error() string {
	what := fmt.Sprintf("S3 %s of s3://%s/%s at %s", e.Op, e.Bucket, e.Key, e.Endpoint)
	if e.Op == "ListObjectsV2" {
		what = fmt.Sprintf("S3 %s of s3://%s with prefix %q at %s", e.Op, e.Bucket, e.Key, e.Endpoint)
	}
	var cause string
	switch {
	case e.Status == 0 && errors.As(e.Err, new(*CredentialsError)):
		cause = oneLine(e.Err)
	case e.Status == 0:
		cause = "no answer: " + oneLine(e.Err)
	case e.Err != nil:
		cause = fmt.Sprintf("HTTP %d: %s", e.Status, oneLine(e.Err))
	case e.Code != "":
		cause = fmt.Sprintf("HTTP %d %s", e.Status, e.Code)
		if e.Message != "" {
			cause += ": " + e.Message
		}
	default:
		cause = fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if advice := e.Advice(); advice != "" {
		return what + " failed: " + cause + "; " + advice
	}
	return what + " failed: " + cause
}

func (e *Error) Unwrap() error { return e.Err }

// IsNotFound reports whether err is an S3 answer that the object (or, on a HEAD request, which has
// no body to tell them apart, the object or its bucket) does not exist.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound && (e.Code == "NoSuchKey" || e.Code == "")
}

// Advice says what to change, from the server's error code, the status, or the transport's error.
func (e *Error) Advice() string {
	if e.Status == 0 {
		return e.transportAdvice()
	}
	credentials := e.Credentials
	if credentials == "" {
		credentials = "the archive's credentials"
	}
	switch e.Code {
	case "NoSuchBucket":
		return fmt.Sprintf("bucket %q does not exist at %s: create it (aws s3 mb s3://%s --endpoint-url %s, or mc mb), "+
			"or correct the bucket (--archive-s3-bucket, the chart's archive.s3.bucket)", e.Bucket, e.Endpoint, e.Bucket, e.Endpoint)
	case "NoSuchKey":
		return ""
	case "InvalidAccessKeyId":
		return fmt.Sprintf("the server knows no such access key (the manager's log names it): correct %s in %s", EnvAccessKeyID, credentials)
	case "SignatureDoesNotMatch":
		return fmt.Sprintf("the signature does not match: %s is not the secret of the access key (the manager's log names it) in %s",
			EnvSecretAccessKey, credentials)
	case "AccessDenied", "AllAccessDisabled":
		return fmt.Sprintf("the access key (the manager's log names it) may not do this: grant it s3:PutObject, s3:GetObject and s3:ListBucket on bucket %q, "+
			"or give other credentials in %s", e.Bucket, credentials)
	case "ExpiredToken", "InvalidToken", "TokenRefreshRequired":
		return fmt.Sprintf("the session token is expired or not valid: renew %s in %s (a mounted Secret is read again when it changes), "+
			"or use credentials that are refreshed (IRSA, EKS Pod Identity)", EnvSessionToken, credentials)
	case "RequestTimeTooSkewed":
		return "the manager's clock and the server's differ by more than 15 minutes: synchronise the nodes' clocks (NTP)"
	case "AuthorizationHeaderMalformed", "PermanentRedirect", "IncorrectEndpoint":
		return fmt.Sprintf("the bucket is not served for region %q at this endpoint: set --archive-s3-region (the chart's archive.s3.region) "+
			"to the bucket's region, or use the region's endpoint", e.Region)
	case "XAmzContentSHA256Mismatch", "BadDigest":
		return "the body the server received is not the one signed: something between the manager and the server (a proxy?) changes requests"
	case "SlowDown", "ServiceUnavailable", "InternalError":
		return "the server is failing or overloaded: the archive tries again with backoff"
	}
	switch {
	case e.Status == http.StatusForbidden:
		return fmt.Sprintf("the server refused the request: check %s and %s of %s (the manager's log names the access key), "+
			"and that they may read and write bucket %q", EnvAccessKeyID, EnvSecretAccessKey, credentials, e.Bucket)
	case e.Status == http.StatusNotFound && e.Op == "HeadObject":
		return ""
	case e.Status == http.StatusNotFound:
		return fmt.Sprintf("nothing answers S3 requests for bucket %q there: check the endpoint (--archive-s3-endpoint) and the bucket", e.Bucket)
	case e.Status == http.StatusMovedPermanently || e.Status == http.StatusTemporaryRedirect:
		return fmt.Sprintf("the server redirects elsewhere: the bucket may be in another region than %q: set --archive-s3-region or use the region's endpoint", e.Region)
	case e.Status >= 500:
		return "the server is failing: the archive tries again with backoff"
	}
	return ""
}

func (e *Error) transportAdvice() string {
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	var dns *net.DNSError
	var netErr net.Error
	var credErr *CredentialsError
	if errors.As(e.Err, &credErr) {
		return "check that source: the key files exist, or that the web identity token and role (or the Pod Identity agent) answer; " +
			"the archive tries again with backoff"
	}
	endpoint := fmt.Sprintf("check the endpoint %s (--archive-s3-endpoint, the chart's archive.s3.endpoint), that the server runs, "+
		"and that no NetworkPolicy or firewall stops the manager's connections to it", e.Endpoint)
	switch {
	case errors.As(e.Err, &unknownCA) || (errors.As(e.Err, &verify) && !errors.As(e.Err, &hostname)):
		return "the server's certificate is not signed by a CA the manager trusts: give the CA certificate with --archive-s3-ca-file " +
			"(the chart's archive.s3.caSecret)"
	case errors.As(e.Err, &hostname):
		return fmt.Sprintf("the server's certificate does not name the endpoint's host: use a host name the certificate names in the endpoint (%s)", e.Endpoint)
	case e.Err != nil && strings.Contains(e.Err.Error(), "server gave HTTP response to HTTPS client"):
		return "the server speaks plain HTTP: use an http:// endpoint, or give the server a certificate"
	case errors.As(e.Err, &dns):
		return fmt.Sprintf("the endpoint's host %q is not known to the manager's DNS: %s", dns.Name, endpoint)
	case errors.As(e.Err, &netErr) && netErr.Timeout():
		return "the endpoint did not answer in time: " + endpoint
	case e.Err != nil:
		return "the endpoint is unreachable: " + endpoint
	}
	return ""
}

// oneLine is err's message on one line.
func oneLine(err error) string {
	if err == nil {
		return "unknown error"
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}
