package integration

import (
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// The chart's schedule status policy (templates/schedule-status-policy.yaml), as the API server
// enforces it: a user whom a role grants benchmarkschedules/status is refused, with a message that
// says who may and what to do instead; the manager's service account, granted the same, is not. The
// test's own binding limits the policy to the test's namespace.
func TestOnlyTheManagerWritesScheduleStatus(t *testing.T) {
	h := newHarness(t)
	h.enforceInNamespace(renderPolicy(t, "templates/schedule-status-policy.yaml"))

	// One role, granting schedules and their status, bound to a tenant and to the manager.
	manager, jane := h.managerAndTenant("schedule-status-writer", rbacv1.PolicyRule{APIGroups: []string{"vmbench.io"},
		Resources: []string{"benchmarkschedules", "benchmarkschedules/status"}, Verbs: []string{"get", "update", "patch"}})

	h.hourly("guarded", nil)
	key := client.ObjectKey{Namespace: h.ns, Name: "guarded"}
	write := func(c client.Client, records int32) error {
		s := &vmbenchv1.BenchmarkSchedule{}
		if err := c.Get(h.ctx, key, s); err != nil {
			return err
		}
		s.Status.Records = records
		return c.Status().Update(h.ctx, s)
	}
	// A new policy takes a moment to be enforced.
	h.g.Eventually(func() error { return write(jane, 7) }, timeout, interval).Should(MatchError(ContainSubstring(
		"the status of a schedule is written by the vmbench manager (system:serviceaccount:vmbench-system:vmbench-manager) only, not by tenant-jane")))
	h.g.Expect(write(jane, 7)).To(MatchError(ContainSubstring("add it to spec.triage")))
	h.g.Expect(write(manager, 3)).To(Succeed())
	got := &vmbenchv1.BenchmarkSchedule{}
	h.g.Expect(k8s.Get(h.ctx, key, got)).To(Succeed())
	h.g.Expect(got.Status.Records).To(Equal(int32(3)))
	// The schedule itself (spec, annotations) is not the policy's business.
	h.g.Expect(jane.Get(h.ctx, key, got)).To(Succeed())
	got.Spec.Suspend = ptr.To(true)
	h.g.Expect(jane.Update(h.ctx, got)).To(Succeed())
}

// managerAndTenant grants rule, in one Role of the test's namespace, both to the manager's service
// account (vmbench-system/vmbench-manager, as the chart's and config/admission's policies name it)
// and to a tenant, tenant-jane, and returns a client that speaks as each: what an admission policy
// then lets one do and refuses the other is the policy's doing, not RBAC's.
func (h *harness) managerAndTenant(role string, rule rbacv1.PolicyRule) (manager, tenant client.Client) {
	h.t.Helper()
	h.g.Expect(k8s.Create(h.ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: h.ns},
		Rules: []rbacv1.PolicyRule{rule}})).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: h.ns},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "vmbench-manager", Namespace: "vmbench-system"},
			{Kind: "User", APIGroup: rbacv1.GroupName, Name: "tenant-jane"}}})).To(Succeed())
	as := func(user string) client.Client {
		impersonated := rest.CopyConfig(cfg)
		impersonated.Impersonate = rest.ImpersonationConfig{UserName: user}
		c, err := client.New(impersonated, client.Options{Scheme: scheme.New()})
		h.g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	return as("system:serviceaccount:vmbench-system:vmbench-manager"), as("tenant-jane")
}
