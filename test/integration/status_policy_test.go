package integration

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/vmbench/vmbench/controllers/scheme"
)

// renderPolicy renders the chart's admission policy in template (the first document) with helm.
func renderPolicy(t *testing.T, template string) *admissionv1.ValidatingAdmissionPolicy {
	t.Helper()
	out := helmTemplate(t, "vmbench", "vmbench-system", "--show-only", template)
	doc, _, _ := strings.Cut(string(out), "\n---\n")
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	if err := yaml.UnmarshalStrict([]byte(doc), policy); err != nil || policy.Kind != "ValidatingAdmissionPolicy" {
		t.Fatalf("%s does not start with the policy (%v):\n%s", template, err, out)
	}
	return policy
}

// The chart's status policy, as the API server enforces it: the manager's service account writes a
// suite's status, anyone else (here the cluster's admin, whom RBAC allows everything) is refused
// with a message that says who may and what to do instead. The test's own binding limits the policy
// to the test's namespace, so that the other tests' managers (which run as the admin) are not
// refused.
func TestOnlyTheManagerWritesSuiteStatus(t *testing.T) {
	h := newHarness(t)
	h.enforceInNamespace(renderPolicy(t, "templates/status-policy.yaml"))

	// The manager's service account may write suites' status in this namespace.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "status-writer", Namespace: h.ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"vmbench.io"}, Resources: []string{"benchmarksuites", "benchmarksuites/status"},
			Verbs: []string{"get", "update", "patch"}}}}
	h.g.Expect(k8s.Create(h.ctx, role)).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "status-writer", Namespace: h.ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "vmbench-manager", Namespace: "vmbench-system"}}})).To(Succeed())
	impersonated := rest.CopyConfig(cfg)
	impersonated.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:vmbench-system:vmbench-manager"}
	manager, err := client.New(impersonated, client.Options{Scheme: scheme.New()})
	h.g.Expect(err).NotTo(HaveOccurred())

	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("guarded"))).To(Succeed())
	write := func(c client.Client, position int32) error {
		s := h.get("guarded")
		s.Status.QueuePosition = position
		return c.Status().Update(h.ctx, s)
	}
	// A new policy takes a moment to be enforced.
	h.g.Eventually(func() error { return write(k8s, 7) }, timeout, interval).Should(MatchError(ContainSubstring(
		"the status of a suite is written by the vmbench manager (system:serviceaccount:vmbench-system:vmbench-manager) only")))
	h.g.Expect(write(k8s, 7)).To(MatchError(ContainSubstring("annotate it vmbench.io/queue=end or vmbench.io/queue=requeue")))
	// The manager's RoleBinding, too, takes a moment to reach the authorizer: the refusal above was
	// the admin's, which says nothing of it. The policy refuses the manager for good if it is wrong.
	h.g.Eventually(func() error { return write(manager, 3) }, timeout, interval).Should(Succeed())
	h.g.Expect(h.get("guarded").Status.QueuePosition).To(Equal(int32(3)))
	// The suite itself (spec, annotations) is not the policy's business.
	h.g.Eventually(func() error {
		s := h.get("guarded")
		s.Annotations = map[string]string{"vmbench.io/queue": "end"}
		return k8s.Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
}
