package integration

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/test/specpolicy"
)

// withoutSpecPolicy labels the harness's namespace so that the spec policy (installed by TestMain,
// as the chart installs it) leaves it alone, as a cluster without the policy would, and waits until
// the API server agrees.
func (h *harness) withoutSpecPolicy(probe *vmbenchv1.BenchmarkSuite) {
	h.t.Helper()
	ns := &corev1.Namespace{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
	ns.Labels = map[string]string{specpolicy.WithoutLabel: "true"}
	h.g.Expect(k8s.Update(h.ctx, ns)).To(Succeed())
	h.g.Eventually(func() error { return k8s.Create(h.ctx, probe.DeepCopy(), client.DryRunAll) }, timeout, interval).Should(Succeed())
}

// Protects the move of the spec's cross-field rules from the CRD to the ValidatingAdmissionPolicy
// vmbench-suite-spec (config/admission/suite_spec.yaml): a suite stored with a spec the policy
// refuses (stored before the policy, or where it was not installed) is never refused its status
// writes, its metadata updates (the manager removes its finalizer) or its deletion, and is still
// refused a change of its spec that keeps it invalid.
func TestSpecPolicyLeavesStatusMetadataAndDeletionAlone(t *testing.T) {
	h := newHarness(t)
	bad := h.suite("stored-bad", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	bad.Spec.Baseline = "bare"
	h.withoutSpecPolicy(bad)
	h.g.Expect(k8s.Create(h.ctx, bad)).To(Succeed())

	// The policy now covers the namespace again.
	ns := &corev1.Namespace{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
	ns.Labels = nil
	h.g.Expect(k8s.Update(h.ctx, ns)).To(Succeed())
	other := h.suite("probe", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	other.Spec.Baseline = "bare"
	h.g.Eventually(func() error { return k8s.Create(h.ctx, other.DeepCopy(), client.DryRunAll) }, timeout, interval).
		Should(MatchError(ContainSubstring("spec.baseline must name one of spec.platforms")))

	stored := h.get("stored-bad")
	stored.Finalizers = []string{"vmbench.io/test"}
	stored.Annotations = map[string]string{"note": "metadata only"}
	h.g.Expect(k8s.Update(h.ctx, stored)).To(Succeed(), "a metadata update of a stored suite")
	meta.SetStatusCondition(&stored.Status.Conditions, metav1.Condition{Type: vmbenchv1.ConditionQueued,
		Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonWaitingForRun, Message: "1 in line for a run slot"})
	h.g.Expect(k8s.Status().Update(h.ctx, stored)).To(Succeed(), "a status write of a stored suite")

	changed := h.get("stored-bad")
	changed.Spec.Repetitions = 2
	err := k8s.Update(h.ctx, changed)
	h.g.Expect(err).To(MatchError(ContainSubstring("spec: Invalid value: spec.baseline must name one of spec.platforms")),
		"a change of the spec that keeps it invalid")

	h.g.Expect(k8s.Delete(h.ctx, h.get("stored-bad"))).To(Succeed())
	last := h.get("stored-bad")
	last.Finalizers = nil
	h.g.Expect(k8s.Update(h.ctx, last)).To(Succeed(), "the finalizer's removal from a suite being deleted")
}

// Where the spec policy is not installed, a suite that breaks one of its rules is created, and the
// manager refuses it at its first reconcile with the condition InvalidSpec naming the cause; nothing
// runs.
func TestWithoutTheSpecPolicyTheManagerRefusesTheSuite(t *testing.T) {
	h := newHarness(t)
	s := h.suite("no-policy", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	s.Spec.Baseline = "bare"
	h.withoutSpecPolicy(s)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	failed := h.eventuallySuite("no-policy", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionFailed)).To(BeTrue())
	})
	c := meta.FindStatusCondition(failed.Status.Conditions, vmbenchv1.ConditionFailed)
	h.g.Expect(c.Reason).To(Equal(vmbenchv1.ReasonInvalidSpec))
	h.g.Expect(c.Message).To(ContainSubstring("spec.baseline must name one of spec.platforms"))
	h.g.Expect(failed.Status.StartTime).To(BeNil(), "nothing ran")
}

// A schedule's suite template is checked by the same policy, under its own field.
func TestSpecPolicyChecksTheScheduleTemplate(t *testing.T) {
	h := newHarness(t)
	s := &vmbenchv1.BenchmarkSchedule{}
	s.Name, s.Namespace = "bad-template", h.ns
	s.Spec.Schedule = "@daily"
	s.Spec.SuiteTemplate.Spec = vmbenchv1.BenchmarkSuiteSpec{Baseline: "bare",
		Benchmarks: []vmbenchv1.Benchmark{bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)}}
	err := k8s.Create(h.ctx, s)
	h.g.Expect(err).To(MatchError(ContainSubstring("spec.suiteTemplate.spec: Invalid value: spec.baseline must name one of spec.platforms")))
	s.Spec.SuiteTemplate.Spec.Baseline = "container"
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
}

// The policy's CEL has a runtime cost budget per request that the CRD's static estimates no longer
// bound: the largest spec its rules walk (12 benchmarks, HPL sweeps of 16 sizes, sysbench blocks, the
// Shared target, 12 precision metrics) is admitted, and refused for the HPL sizes with its message
// (whose square roots run over every size) rather than for a cost exceeded.
func TestSpecPolicyAdmitsTheLargestSpecWithinItsBudget(t *testing.T) {
	h := newHarness(t)
	largest := func(n0 int32) *vmbenchv1.BenchmarkSuite {
		var benchmarks []vmbenchv1.Benchmark
		var metrics []string
		for i := range 8 {
			sizes := make([]int32, 16)
			for j := range sizes {
				sizes[j] = n0 + int32(j)
			}
			b := hpl(vmbenchv1.HPCCParams{ProblemSizes: sizes})
			b.Name = fmt.Sprintf("hpl%d", i)
			benchmarks = append(benchmarks, b)
			metrics = append(metrics, b.Name+"/HPL_Tflops")
		}
		for i := range 2 {
			b := memoryBlocks("1K", "4K", "1M", "1G")
			b.Name = fmt.Sprintf("mem%d", i)
			benchmarks = append(benchmarks, b)
			metrics = append(metrics, b.Name)
		}
		for i := range 2 {
			b := bench(fmt.Sprintf("disk%d", i), vmbenchv1.BenchmarkFio)
			b.Fio = &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared, Size: "1g", NumJobs: 4}
			b.Concurrency = vmbenchv1.ConcurrencyAllNodes
			benchmarks = append(benchmarks, b)
			metrics = append(metrics, b.Name)
		}
		s := h.suite("largest", 2, benchmarks...)
		s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("100Gi"))}
		s.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 30, Metrics: metrics}
		return s
	}
	h.g.Expect(k8s.Create(h.ctx, largest(1000), client.DryRunAll)).To(Succeed())
	err := k8s.Create(h.ctx, largest(40000), client.DryRunAll)
	h.g.Expect(err).To(MatchError(ContainSubstring("spec.benchmarks: Invalid value: benchmark hpl0: hpcc.problemSizes entry 40000 needs 11.9 GiB of matrix")))
	h.g.Expect(err.Error()).NotTo(ContainSubstring("cost"))
}

// Audit M7: once a suite's first run has started, its placement and shared storage are frozen by the
// spec policy, as its platforms and benchmarks are by the CRD (later runs elsewhere would mix two
// experiments); its timeout and report settings may still change, and before the start all may.
func TestSpecPolicyFreezesPlacementAndSharedStorageOnceStarted(t *testing.T) {
	h := newHarness(t)
	s := h.suite("frozen", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	before := h.get("frozen")
	before.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"pool": "bench"}
	h.g.Expect(k8s.Update(h.ctx, before)).To(Succeed(), "placement before the first run")

	started := h.get("frozen")
	started.Status.StartTime = &metav1.Time{Time: started.CreationTimestamp.Time}
	h.g.Expect(k8s.Status().Update(h.ctx, started)).To(Succeed())
	const frozen = "spec.placement and sharedStorage cannot change once the first run has started"
	for name, change := range map[string]func(*vmbenchv1.BenchmarkSuite){
		"nodeSelector": func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"pool": "other"}
		},
		"placement removed": func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Placement = vmbenchv1.Placement{} },
		"sharedStorage added": func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "rwx", Size: ptr.To(resource.MustParse("1Gi"))}
		},
	} {
		changed := h.get("frozen")
		change(changed)
		h.g.Expect(k8s.Update(h.ctx, changed)).To(MatchError(ContainSubstring(frozen)), name)
	}
	timeout := h.get("frozen")
	timeout.Spec.Timeout = ptr.To(vmbenchv1.Duration("3h"))
	h.g.Expect(k8s.Update(h.ctx, timeout)).To(Succeed(), "the timeout after the start")
	meta.SetStatusCondition(&timeout.Status.Conditions, metav1.Condition{Type: vmbenchv1.ConditionQueued,
		Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonWaitingForRun, Message: "admitted"})
	h.g.Expect(k8s.Status().Update(h.ctx, timeout)).To(Succeed(), "a status write")
}
