//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestShippedMetricsSetUpAnswersAScraperToken runs the metrics endpoint as the chart ships it, which
// no other case does: hack/install.sh sets metrics.secure=false, for the kind Prometheus and for the
// API server's service proxy, which passes on no token. With metrics.secure=true (the default) the
// manager serves HTTPS with a self-signed certificate and has each bearer token reviewed, by its own
// service account under the chart's RBAC (TokenReview, then SubjectAccessReview for the non-resource
// URL /metrics). The case turns the manager's --metrics-secure on (the one line of the Deployment
// that metrics.secure changes), scrapes the new pod from a node with curl, and turns it off again:
// a token bound to a ClusterRole that may get /metrics reads vmbench's series (200); a token without
// that right is refused (403) and no token at all too (401). A missing RBAC verb or a broken TLS
// set-up of the shipped default fails here.
func TestShippedMetricsSetUpAnswersAScraperToken(t *testing.T) {
	e := newEnv(t)
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-scrape"},
		Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-scrape"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: e.ns}},
	}
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "scraper", Namespace: e.ns}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "stranger", Namespace: e.ns}},
		role, binding,
	} {
		e.g.Expect(k8s.Create(e.ctx, obj)).To(Succeed())
	}
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), role)
	})
	token := func(sa string) string {
		tr, err := clientset.CoreV1().ServiceAccounts(e.ns).CreateToken(e.ctx, sa,
			&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
		e.g.Expect(err).NotTo(HaveOccurred())
		return tr.Status.Token
	}
	scraper, stranger := token("scraper"), token("stranger")

	node := controlPlaneNode(e)
	t.Cleanup(func() { setMetricsSecure(e, false) })
	ip := setMetricsSecure(e, true)
	url := fmt.Sprintf("https://%s:8080/metrics", ip)

	// The new pod may still be opening its port: the allowed token is retried until it answers.
	var code, body string
	e.g.Eventually(func() string {
		code, body = curlFromNode(e, node, url, scraper)
		return code
	}, 2*time.Minute, 3*time.Second).Should(Equal("200"), func() string { return fmt.Sprintf("the scraper's token against %s: %s", url, body) })
	e.g.Expect(body).To(ContainSubstring("vmbench_"), "the secure endpoint answered, but without vmbench's series")

	code, body = curlFromNode(e, node, url, stranger)
	e.g.Expect(code).To(Equal("403"), "a token that may not get /metrics: %s", body)
	e.g.Expect(body).To(ContainSubstring("may not get the non-resource URL /metrics"))

	code, body = curlFromNode(e, node, url, "")
	e.g.Expect(code).To(Equal("401"), "no token: %s", body)
}

// managerPods selects the manager's pods (and its Deployment) in vmbench-system.
var managerPods = client.MatchingLabels{"app.kubernetes.io/name": "vmbench", "app.kubernetes.io/component": "manager"}

// setMetricsSecure sets the manager's --metrics-secure, waits until the only manager pod left runs
// with it and is Ready, and returns that pod's IP.
func setMetricsSecure(e *env, secure bool) string {
	e.t.Helper()
	deployments := &appsv1.DeploymentList{}
	e.g.Expect(k8s.List(e.ctx, deployments, client.InNamespace("vmbench-system"),
		managerPods)).To(Succeed())
	e.g.Expect(deployments.Items).To(HaveLen(1), "the manager's Deployment in vmbench-system")
	d := &deployments.Items[0]
	want := fmt.Sprintf("--metrics-secure=%t", secure)
	changed := false
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		for j, arg := range c.Args {
			if strings.HasPrefix(arg, "--metrics-secure=") && arg != want {
				c.Args[j], changed = want, true
			}
		}
	}
	if changed {
		e.g.Expect(k8s.Update(e.ctx, d)).To(Succeed())
	}
	var ip string
	e.g.Eventually(func() string {
		pods := &corev1.PodList{}
		if err := k8s.List(e.ctx, pods, client.InNamespace("vmbench-system"),
			managerPods); err != nil {
			return err.Error()
		}
		if len(pods.Items) != 1 {
			return fmt.Sprintf("%d manager pods", len(pods.Items))
		}
		p := pods.Items[0]
		if !slices.ContainsFunc(p.Spec.Containers, func(c corev1.Container) bool { return slices.Contains(c.Args, want) }) {
			return "the manager pod runs without " + want
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				ip = p.Status.PodIP
				return ""
			}
		}
		return "manager pod " + p.Name + " not Ready"
	}, 3*time.Minute, 2*time.Second).Should(BeEmpty(), "the manager with %s", want)
	return ip
}

// controlPlaneNode is the name of the kind cluster's control-plane node, which is also its container's.
func controlPlaneNode(e *env) string {
	nodes := &corev1.NodeList{}
	e.g.Expect(k8s.List(e.ctx, nodes, client.HasLabels{"node-role.kubernetes.io/control-plane"})).To(Succeed())
	e.g.Expect(nodes.Items).NotTo(BeEmpty())
	return nodes.Items[0].Name
}

// curlFromNode gets url with curl on a kind node (its container), with the bearer token unless it is
// empty, without verifying the self-signed certificate, and returns the HTTP status code and the body.
func curlFromNode(e *env, node, url, token string) (code, body string) {
	e.t.Helper()
	args := []string{"exec", node, "curl", "-sk", "--max-time", "10", "-w", "\n%{http_code}"}
	if token != "" {
		args = append(args, "-H", "Authorization: Bearer "+token)
	}
	out, err := exec.CommandContext(e.ctx, "docker", append(args, url)...).Output()
	if err != nil {
		return "", fmt.Sprintf("docker exec %s curl: %v", node, err)
	}
	text := string(out)
	i := strings.LastIndex(text, "\n")
	if i < 0 {
		return "", text
	}
	return strings.TrimSpace(text[i+1:]), text[:i]
}
