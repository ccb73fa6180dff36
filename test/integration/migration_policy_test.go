package integration

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
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
	newNamespace := func(prefix string) string { return tempNamespace(t, g, prefix, nil) }
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

// withMigrationPolicies is allKinds with KubeVirt's MigrationPolicy API served, as on a cluster
// whose KubeVirt is v0.49 or later.
func withMigrationPolicies() map[schema.GroupVersionKind]bool {
	kinds := allKinds()
	kinds[platform.MigrationPolicyGVK] = true
	return kinds
}

// migrationPoliciesOf lists the MigrationPolicies labelled with a suite of the test's namespace.
func (h *harness) migrationPoliciesOf(g Gomega) []string {
	list := &migrationsv1alpha1.MigrationPolicyList{}
	g.Expect(k8s.List(h.ctx, list, client.MatchingLabels{vmbenchv1.LabelSuiteNamespace: h.ns})).To(Succeed())
	var names []string
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names
}

// A suite of two VM platforms that differ only by vm.migrationPolicy: the default one's run has no
// MigrationPolicy; the capped one's run has its own, with the platform's settings, selecting that
// run's VMIs in the test's namespace, for as long as the run lasts. After the run, a policy left
// over (a manager stopped before removing it, or one of a suite that is gone) is removed too.
func TestMigrationPolicyLastsAsLongAsItsRun(t *testing.T) {
	h := newHarness(t)
	h.startManager(withMigrationPolicies())
	capped := vmbenchv1.VMMigrationPolicy{BandwidthPerMigration: ptr.To(resource.MustParse("64Mi")), CompletionTimeoutPerGiB: ptr.To[int64](40),
		AllowAutoConverge: ptr.To(true), AllowPostCopy: ptr.To(false)}
	suite := h.suite("mp", 1, demoBenchmarks()...)
	suite.Spec.Platforms = variantPlatforms(vmbenchv1.VMSettings{MigrationPolicy: &capped})
	suite.Spec.Baseline = "vmdefault"
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

	// The default VM's run: its VMIs exist, and no policy.
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "mp-vmdefault-1-master"}, &kubevirtv1.VirtualMachineInstance{})
	}, timeout, interval).Should(Succeed())
	h.g.Expect(h.migrationPoliciesOf(h.g)).To(BeEmpty(), "a VM platform without vm.migrationPolicy makes none")
	h.finishVMRun("mp", "mp-vmdefault-1", 1, "qemu")

	// The capped VM's run: its policy exists while it runs.
	name := platform.MigrationPolicyName(h.ns, "mp-vmtuned-1")
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "mp-vmtuned-1-master"}, &kubevirtv1.VirtualMachineInstance{})
	}, timeout, interval).Should(Succeed())
	policy := &migrationsv1alpha1.MigrationPolicy{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Name: name}, policy)).To(Succeed(), "the run's MigrationPolicy exists once its VMIs do")
	h.g.Expect(policy.Spec.Selectors).To(Equal(&migrationsv1alpha1.Selectors{
		NamespaceSelector:              migrationsv1alpha1.LabelSelector{corev1.LabelMetadataName: h.ns},
		VirtualMachineInstanceSelector: migrationsv1alpha1.LabelSelector{vmbenchv1.LabelSuite: "mp", vmbenchv1.LabelRun: "mp-vmtuned-1"},
	}))
	h.g.Expect(policy.Spec.BandwidthPerMigration.Cmp(resource.MustParse("64Mi"))).To(Equal(0))
	h.g.Expect(*policy.Spec.CompletionTimeoutPerGiB).To(Equal(int64(40)))
	h.g.Expect(*policy.Spec.AllowAutoConverge).To(BeTrue())
	h.g.Expect(*policy.Spec.AllowPostCopy).To(BeFalse())
	h.g.Expect(policy.Spec.AllowWorkloadDisruption).To(BeNil())
	h.g.Expect(policy.Labels).To(Equal(map[string]string{vmbenchv1.LabelSuite: "mp", vmbenchv1.LabelSuiteNamespace: h.ns,
		vmbenchv1.LabelRun: "mp-vmtuned-1", vmbenchv1.LabelPlatform: "vmtuned"}))
	// The run's VMIs carry the labels it selects.
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "mp-vmtuned-1-master"}, master)).To(Succeed())
	for k, v := range policy.Spec.Selectors.VirtualMachineInstanceSelector {
		h.g.Expect(master.Labels).To(HaveKeyWithValue(k, v))
	}
	h.eventuallySuite("mp", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Runs[1].MigrationPolicy).To(Equal(name))
		g.Expect(s.Status.Runs[0].MigrationPolicy).To(BeEmpty())
	})

	h.finishVMRun("mp", "mp-vmtuned-1", 0.9, "qemu")
	h.eventuallySuite("mp", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Eventually(h.migrationPoliciesOf, timeout, interval).Should(BeEmpty(), "the policy is removed once its run ended")

	// Left over: the ended run's policy made again (as a manager that stopped before removing it
	// would have left it), found by the watch.
	left := &migrationsv1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: policy.Name, Labels: policy.Labels}, Spec: policy.Spec}
	h.g.Expect(k8s.Create(h.ctx, left)).To(Succeed())
	h.g.Eventually(h.migrationPoliciesOf, timeout, interval).Should(BeEmpty(), "a policy of an ended run is removed")

	// And one of a suite that is gone, left while no manager ran: the watch's first list finds it.
	h.stopManager()
	gone := platform.MigrationPolicy(platform.Run{Suite: &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: h.ns}},
		Name: "gone-vmtuned-1", Platform: suite.Spec.Platforms[1]})
	h.g.Expect(k8s.Create(h.ctx, gone)).To(Succeed())
	h.startManager(withMigrationPolicies())
	h.g.Eventually(h.migrationPoliciesOf, timeout, interval).Should(BeEmpty(), "a policy of a deleted suite is removed after a restart")
}

// On a cluster whose KubeVirt serves no MigrationPolicy API, a run that asks for a policy fails at
// once, saying why and what to do, and makes no VM; the other VM platform runs.
func TestMigrationPolicyWithoutTheAPIFailsTheRun(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.expectTunedVariantRefused("nompapi", vmbenchv1.VMSettings{MigrationPolicy: &vmbenchv1.VMMigrationPolicy{AllowPostCopy: ptr.To(true)}},
		"MigrationPolicyUnavailable: platform vmtuned sets vm.migrationPolicy, which vmbench applies "+
			"through a KubeVirt MigrationPolicy, but this cluster does not serve the MigrationPolicy API (migrations.kubevirt.io/v1alpha1); "+
			"install or upgrade KubeVirt to one that serves migrations.kubevirt.io/v1alpha1 (v0.49 or later) and restart vmbench, "+
			"or remove migrationPolicy from platform vmtuned")
}
