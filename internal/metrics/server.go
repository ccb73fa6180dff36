package metrics

import (
	"crypto/tls"
	"fmt"
	"path/filepath"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The files of a serving certificate in CertDir: those of a kubernetes.io/tls Secret, as
// cert-manager writes them.
const (
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// ServerOptions serve the metrics on addr. Secure serves them over HTTPS to clients whose bearer
// token the API server authenticates (TokenReview) and allows to get the non-resource URL /metrics
// (SubjectAccessReview): the results of every tenant's suites are in them. The certificate is
// certDir's tls.crt and tls.key, reloaded when they change, or a self-signed one (which no scraper
// can verify) when certDir is empty. Without secure they go over plain HTTP to anyone who reaches
// the port.
func ServerOptions(addr string, secure bool, certDir string) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: addr}
	if secure {
		opts.SecureServing = true
		opts.FilterProvider = withAuthenticationAndAuthorization
		if certDir != "" {
			opts.CertDir, opts.CertName, opts.KeyName = certDir, CertFile, KeyFile
		}
	}
	return opts
}

// CheckCertDir fails unless certDir holds a certificate and its key that go together. Without this
// check, controller-runtime would fall back to a self-signed certificate when the files are
// missing, and the scraper that verifies the certificate would fail with no word in the
// manager's log.
func CheckCertDir(certDir string) error {
	if certDir == "" {
		return nil
	}
	crt, key := filepath.Join(certDir, CertFile), filepath.Join(certDir, KeyFile)
	if _, err := tls.LoadX509KeyPair(crt, key); err != nil {
		return fmt.Errorf("--metrics-cert-dir=%s: cannot load the serving certificate %s and key %s: %w; "+
			"mount a kubernetes.io/tls Secret there (the chart's metrics.tls.secretName) or leave the flag empty for a self-signed certificate",
			certDir, CertFile, KeyFile, err)
	}
	return nil
}
