package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const serviceName = "vmbench-metrics.vmbench-system.svc"

// writeCert writes a self-signed certificate for the metrics Service's name into a new directory,
// as a kubernetes.io/tls Secret mounted there would, and returns the directory and the certificate
// as a CA pool.
func writeCert(t *testing.T) (string, *x509.CertPool) {
	t.Helper()
	crt, key, err := certutil.GenerateSelfSignedCertKey(serviceName, nil, []string{serviceName})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, CertFile), crt, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(crt) {
		t.Fatal("the generated certificate does not parse")
	}
	return dir, pool
}

// handshake starts the metrics server of opts (without the token review, which needs a cluster)
// and returns the error of a TLS handshake that verifies the certificate against roots for the
// Service's name.
func handshake(t *testing.T, opts metricsserver.Options, roots *x509.CertPool) error {
	t.Helper()
	opts.BindAddress, opts.FilterProvider = "127.0.0.1:0", nil
	srv, err := metricsserver.NewServer(opts, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	addr := ""
	for deadline := time.Now().Add(10 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		addr = srv.(interface{ GetBindAddr() string }).GetBindAddr()
	}
	if addr == "" {
		t.Fatal("the metrics server did not listen within 10s")
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, &tls.Config{RootCAs: roots, ServerName: serviceName})
	if err == nil {
		_ = conn.Close()
	}
	return err
}

func TestSecureServingWithTheMountedCertificate(t *testing.T) {
	dir, roots := writeCert(t)
	if err := handshake(t, ServerOptions("", true, dir), roots); err != nil {
		t.Errorf("with --metrics-cert-dir, a scraper that verifies %s against its CA fails: %v", serviceName, err)
	}
	// Without it, the self-signed certificate cannot be verified: the reason for the flag.
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	if err := handshake(t, ServerOptions("", true, ""), roots); !errors.As(err, &unknown) && !errors.As(err, &hostname) {
		t.Errorf("without --metrics-cert-dir the handshake gives %v, want a certificate the CA does not sign", err)
	}
}

func TestCheckCertDir(t *testing.T) {
	if err := CheckCertDir(""); err != nil {
		t.Errorf("no cert dir: %v", err)
	}
	dir, _ := writeCert(t)
	if err := CheckCertDir(dir); err != nil {
		t.Errorf("a valid cert dir: %v", err)
	}
	empty := t.TempDir()
	if err := CheckCertDir(empty); err == nil || !strings.Contains(err.Error(), "--metrics-cert-dir="+empty) ||
		!strings.Contains(err.Error(), "metrics.tls.secretName") {
		t.Errorf("an empty cert dir: %v, want an error naming the flag and the chart value", err)
	}
	// A key that is not the certificate's.
	other, _ := writeCert(t)
	key, err := os.ReadFile(filepath.Join(other, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, KeyFile), key, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckCertDir(dir); err == nil {
		t.Error("a certificate with another certificate's key passes")
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	low := DefaultOptions()
	low.MaxSeriesPerSuite = MinMaxSeriesPerSuite - 1
	if err := low.Validate(); err == nil || !strings.Contains(err.Error(), "--metrics-max-series-per-suite") {
		t.Errorf("a cap below the summary: %v", err)
	}
	neg := DefaultOptions()
	neg.DetailRetention = -time.Second
	if err := neg.Validate(); err == nil || !strings.Contains(err.Error(), "--metrics-detail-retention") {
		t.Errorf("a negative retention: %v", err)
	}
}
