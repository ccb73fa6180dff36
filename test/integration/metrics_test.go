package integration

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/metrics"
)

// freeAddr is a local address with a port nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String()
}

// The secure metrics endpoint (the manager's default) answers only scrapers whose token the API
// server authenticates and allows to get /metrics: the results of every tenant are in it. The
// manager speaks as the chart's service account with the chart's RBAC and policies, as shipped: the
// TokenReviews and SubjectAccessReviews that let a scraper in are its own requests, so a rule the
// chart lacks leaves every scrape failing here (test-quality T8).
func TestSecureMetricsNeedAnAllowedToken(t *testing.T) {
	h := newHarness(t)
	release := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-system-"}}
	h.g.Expect(k8s.Create(h.ctx, release)).To(Succeed())
	rbac, policy, sa := renderManagerAccess(t, "metrics", release.Name)
	createAll(t, h.g, rbac)
	createAll(t, h.g, policy)
	addr := freeAddr(t)
	mgr, err := ctrl.NewManager(serviceAccountConfig(release.Name, sa), ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metrics.ServerOptions(addr, true, ""),
		HealthProbeBindAddress: "0",
	})
	h.g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	clients, err := kubernetes.NewForConfig(cfg)
	h.g.Expect(err).NotTo(HaveOccurred())
	token := func(sa string) string {
		h.g.Expect(k8s.Create(h.ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa, Namespace: h.ns}})).To(Succeed())
		tr, err := clients.CoreV1().ServiceAccounts(h.ns).CreateToken(h.ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		h.g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}
	stranger, scraper := token("stranger"), token("scraper")
	reader := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader-" + h.ns},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: reader.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: h.ns}},
	}
	h.g.Expect(k8s.Create(h.ctx, reader)).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, binding)).To(Succeed())
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), reader)
	})

	// The certificate is self-signed; what matters here is who may read.
	httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	get := func(scheme, token string) (int, string, error) {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s://%s/metrics", scheme, addr), nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	status := func(scheme, token string) func() (int, error) {
		return func() (int, error) {
			code, _, err := get(scheme, token)
			return code, err
		}
	}

	h.g.Eventually(status("https", scraper), timeout, interval).Should(Equal(http.StatusOK), "a token allowed to get /metrics")
	_, body, err := get("https", scraper)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(body).To(ContainSubstring("# HELP"))
	h.g.Expect(status("https", "")()).To(Equal(http.StatusUnauthorized), "no token")
	h.g.Expect(status("https", "not-a-token")()).NotTo(Equal(http.StatusOK), "a token the API server does not know")
	h.g.Expect(status("https", stranger)()).To(Equal(http.StatusForbidden), "a valid token without the right to get /metrics")
	code, err := status("http", scraper)()
	h.g.Expect(err == nil && code == http.StatusOK).To(BeFalse(), "plain HTTP serves nothing (status %d)", code)
}
