package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/platform"
)

// A MigrationPolicy is cluster-scoped and reaches every namespace's VMs, so the children policy lets
// a stolen manager token create only the shape the manager makes: the run's own name, selecting the
// run's VMIs (vmbench.io/suite and vmbench.io/run, nothing more) in one namespace. Each probe is
// refused with the policy's message; the manager's own policy is created and deleted with the
// chart's RBAC; an administrator's policy (not labelled vmbench.io/suite) cannot be deleted.
func TestManagerChildrenPolicyKeepsMigrationPoliciesToTheRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	newNamespace := func(prefix string) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
		g.Expect(k8s.Create(ctx, ns)).To(Succeed())
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
		return ns.Name
	}
	release := newNamespace("vmbench-system-")
	tenant := newNamespace("team-a-")
	rbac, policy, sa := renderManagerAccess(t, "mpolicy", release)
	createAll(t, g, rbac)
	createAll(t, g, policy)
	writer, err := client.New(serviceAccountConfig(release, sa), client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())

	run := builtRun(tenant, vmbenchv1.Platform{Name: "postcopy", Type: vmbenchv1.PlatformVM,
		VM: &vmbenchv1.VMSettings{MigrationPolicy: &vmbenchv1.VMMigrationPolicy{AllowPostCopy: ptr.To(true)}}})
	own := platform.MigrationPolicy(run)
	g.Expect(own).NotTo(BeNil())
	variant := func(mutate func(*migrationsv1alpha1.MigrationPolicy)) *migrationsv1alpha1.MigrationPolicy {
		p := own.DeepCopy()
		mutate(p)
		return p
	}
	dryRun := func(p *migrationsv1alpha1.MigrationPolicy) error {
		return writer.Create(ctx, p.DeepCopy(), client.DryRunAll)
	}
	refused := "the vmbench manager creates only the MigrationPolicy vmbench-<namespace>-<run>-<hash> of a run"

	// A new policy takes a moment to be enforced: wait for one of its refusals.
	g.Eventually(func() error {
		return dryRun(variant(func(p *migrationsv1alpha1.MigrationPolicy) { p.Spec.Selectors = &migrationsv1alpha1.Selectors{} }))
	}, timeout, interval).Should(MatchError(ContainSubstring(refused)))

	g.Expect(dryRun(own)).To(Succeed(), "the manager's own MigrationPolicy %s", own.Name)
	other := newNamespace("team-b-")
	for name, mutate := range map[string]func(*migrationsv1alpha1.MigrationPolicy){
		"every VM of the cluster": func(p *migrationsv1alpha1.MigrationPolicy) { p.Spec.Selectors = &migrationsv1alpha1.Selectors{} },
		"every namespace": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.NamespaceSelector = nil
		},
		"every VM of the namespace": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.VirtualMachineInstanceSelector = nil
		},
		"a tenant's VMs": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.VirtualMachineInstanceSelector = migrationsv1alpha1.LabelSelector{"app": "database"}
		},
		"another run's VMs": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.VirtualMachineInstanceSelector[vmbenchv1.LabelRun] = "demo-other-1"
		},
		"another suite's VMs": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.VirtualMachineInstanceSelector[vmbenchv1.LabelSuite] = "other"
		},
		"a third VMI label": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.VirtualMachineInstanceSelector["app"] = "database"
		},
		"namespaces by another label": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.NamespaceSelector = migrationsv1alpha1.LabelSelector{"team": "a"}
		},
		"a second namespace label": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.NamespaceSelector["team"] = "a"
		},
		"another namespace under the run's name": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Spec.Selectors.NamespaceSelector[corev1.LabelMetadataName] = other
		},
		"another name": func(p *migrationsv1alpha1.MigrationPolicy) { p.Name = "aaa-wins-ties" },
		"the name without its hash": func(p *migrationsv1alpha1.MigrationPolicy) {
			p.Name = platform.MigrationPolicyPrefix + tenant + "-" + run.Name
		},
		"a longer hash": func(p *migrationsv1alpha1.MigrationPolicy) { p.Name += "00" },
	} {
		g.Expect(dryRun(variant(mutate))).To(MatchError(ContainSubstring(refused)), name)
	}
	g.Expect(dryRun(variant(func(p *migrationsv1alpha1.MigrationPolicy) { delete(p.Labels, vmbenchv1.LabelSuite) }))).To(
		MatchError(ContainSubstring("the vmbench manager writes only objects labelled vmbench.io/suite")), "a policy without the suite's label")

	// For real, with the chart's RBAC: the manager creates and deletes its own policy.
	g.Expect(writer.Create(ctx, own.DeepCopy())).To(Succeed())
	g.Expect(writer.Delete(ctx, own.DeepCopy())).To(Succeed())
	// An administrator's policy is not the manager's to delete.
	admins := &migrationsv1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{GenerateName: "slow-network-"},
		Spec: migrationsv1alpha1.MigrationPolicySpec{Selectors: &migrationsv1alpha1.Selectors{}, AllowAutoConverge: ptr.To(true)}}
	g.Expect(k8s.Create(ctx, admins)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), admins) })
	g.Expect(writer.Delete(ctx, admins)).To(MatchError(ContainSubstring("the vmbench manager changes and deletes only objects labelled vmbench.io/suite")))
}
