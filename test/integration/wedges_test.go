package integration

import (
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/runplan"
)

// A run whose side outputs cannot be written, or whose runner reports an absurd value, still ends
// with its results in status and a cause that names the object or the metric; the suite ends and
// the run slot goes to the next suite in line, another team's in another namespace.

// wedgeSuite starts a one-run container suite that holds the only run slot, and a suite of another
// tenant that waits in line behind it.
func (h *harness) wedgeSuite(name string) (next *harness) {
	h.t.Helper()
	next = h.tenant()
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite(name, 1, demoBenchmarks()...)))).To(Succeed())
	h.mpiJob(name + "-container-1")
	h.g.Expect(k8s.Create(h.ctx, next.quickSuite("next"))).To(Succeed())
	next.eventuallySuite("next", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.QueuePosition).To(Equal(int32(1)), "%s", queued(s).Message)
	})
	return next
}

// goesOn checks that the other tenant's suite gets the slot and completes.
func (h *harness) goesOn() {
	h.t.Helper()
	h.finishContainerRun("next", "next-container-1", 1)
	h.eventuallySuite("next", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
}

// expectWarningEvent waits for a Warning event of the suite's namespace with the given reason whose
// note contains every want.
func (h *harness) expectWarningEvent(reason string, want ...string) {
	h.t.Helper()
	h.g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(k8s.List(h.ctx, events, client.InNamespace(h.ns))).To(Succeed())
		var matchers []types.GomegaMatcher
		for _, w := range want {
			matchers = append(matchers, HaveField("Message", ContainSubstring(w)))
		}
		g.Expect(events.Items).To(ContainElement(And(append(matchers, HaveField("Reason", reason), HaveField("Type", corev1.EventTypeWarning))...)))
	}, timeout, interval).Should(Succeed())
}

// expectResultsKept checks that a suite whose side outputs were lost has every figure in status.
func (h *harness) expectResultsKept(s *vmbenchv1.BenchmarkSuite) {
	h.t.Helper()
	h.g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "%v", s.Status.Conditions)
	h.g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunSucceeded))
	h.g.Expect(findMetric(findResult(s, "cpu", "container").Metrics, "events_per_second").N).To(Equal(int32(3)))
	net := findResult(s, "net", "container")
	h.g.Expect(net.Metrics).NotTo(BeEmpty())
	h.g.Expect(net.Tables).To(BeZero())
	h.g.Expect(net.TablesLost).To(Equal(int32(5)), "the five iperf3 time series were in the ConfigMap that was not written")
}

func TestConfigMapQuotaLeavesTheResultsInStatusAndFreesTheSlot(t *testing.T) {
	h := newHarness(t)
	next := h.wedgeSuite("quota")
	// A quota with no room left for ConfigMaps. No quota controller runs here: its status, which
	// admission enforces, is written by hand.
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps", Namespace: h.ns},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/configmaps": resource.MustParse("0")}},
	}
	h.g.Expect(k8s.Create(h.ctx, quota)).To(Succeed())
	quota.Status = corev1.ResourceQuotaStatus{Hard: quota.Spec.Hard, Used: corev1.ResourceList{"count/configmaps": resource.MustParse("0")}}
	h.g.Expect(k8s.Status().Update(h.ctx, quota)).To(Succeed())
	h.finishContainerRun("quota", "quota-container-1", 1)

	s := h.eventuallySuite("quota", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.expectResultsKept(s)
	notKept := s.Status.Runs[0].NotKept
	t.Logf("runs[0].notKept: %s", notKept)
	h.g.Expect(notKept).To(And(
		ContainSubstring("ConfigMap quota-container-1-raw (the run's raw outputs) was not written: the API server refused it: "),
		ContainSubstring("exceeded quota: configmaps"),
		ContainSubstring("the namespace's ResourceQuota has no room for it: raise its count/configmaps"),
		ContainSubstring("ConfigMap quota-container-1-tables (the run's result tables) was not written")))
	h.g.Expect(s.Status.Warnings).To(ContainElement(HavePrefix("run quota-container-1 kept its results in status, but not all its raw outputs or tables: ConfigMap quota-container-1-raw")))
	h.expectWarningEvent(suitecontroller.ReasonOutputsNotKept, "run quota-container-1: ConfigMap quota-container-1-raw", "exceeded quota")
	// The stuck run's pods hold the slot until they are gone, as the garbage collector removes them.
	h.collectGarbage("quota")
	next.goesOn()
}

func TestConfigMapOfAnotherControllerIsNotTakenOverAndTheSlotIsFreed(t *testing.T) {
	h := newHarness(t)
	next := h.wedgeSuite("taken")
	// The run's raw and tables ConfigMaps, made beforehand by someone else (their names are
	// predictable), with a controller of their own.
	squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "squatter", Namespace: h.ns}}
	h.g.Expect(k8s.Create(h.ctx, squatter)).To(Succeed())
	for _, name := range []string{"taken-container-1-raw", "taken-container-1-tables"} {
		h.g.Expect(k8s.Create(h.ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns, Labels: map[string]string{vmbenchv1.LabelSuite: "taken"},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(squatter, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}},
			Data: map[string]string{"theirs": "yes"},
		})).To(Succeed())
	}
	h.finishContainerRun("taken", "taken-container-1", 1)

	s := h.eventuallySuite("taken", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.expectResultsKept(s)
	notKept := s.Status.Runs[0].NotKept
	t.Logf("runs[0].notKept: %s", notKept)
	h.g.Expect(notKept).To(ContainSubstring("ConfigMap taken-container-1-raw (the run's raw outputs) was not written: a ConfigMap of that name exists " +
		"and is not this suite's (its controller is ConfigMap squatter, uid " + string(squatter.UID) + "); vmbench does not take over objects " +
		"it did not create: delete ConfigMap taken-container-1-raw, which is not this suite's"))
	h.g.Expect(notKept).To(ContainSubstring("ConfigMap taken-container-1-tables (the run's result tables) was not written: a ConfigMap of that name exists"))
	h.expectWarningEvent(suitecontroller.ReasonOutputsNotKept, "run taken-container-1: ConfigMap taken-container-1-raw")
	// Theirs stay theirs.
	for _, name := range []string{"taken-container-1-raw", "taken-container-1-tables"} {
		cm := &corev1.ConfigMap{}
		h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, cm)).To(Succeed())
		h.g.Expect(cm.Data).To(Equal(map[string]string{"theirs": "yes"}))
		h.g.Expect(metav1.GetControllerOf(cm).UID).To(Equal(squatter.UID))
	}
	// The stuck run's pods hold the slot until they are gone, as the garbage collector removes them.
	h.collectGarbage("taken")
	next.goesOn()
}

func TestHugeSampleIsRefusedWithItsMetricAndTheSlotIsFreed(t *testing.T) {
	h := newHarness(t)
	next := h.wedgeSuite("huge")
	job := h.mpiJob("huge-container-1")
	msgs := runMessages(t, "huge-container-1", 1, "kvm", job.CreationTimestamp.Time)
	// 1e160 and 1: finite, and together a standard deviation of +Inf, which a status cannot hold.
	var cpu []*runplan.Message
	for i := range msgs {
		if msgs[i].Benchmark == "cpu" {
			cpu = append(cpu, &msgs[i])
		}
	}
	cpu[0].Metrics = scaled(cpu[0].Metrics, 0)
	cpu[1].Metrics = scaled(cpu[1].Metrics, 0)
	cpu[0].Metrics[0].Value, cpu[1].Metrics[0].Value = 1e160, 1
	for j := 1; j < len(cpu[0].Metrics); j++ {
		cpu[0].Metrics[j].Value, cpu[1].Metrics[j].Value = 1, 1
	}
	metric := cpu[0].Metrics[0].Name
	h.containerLauncherPod("huge", "huge-container-1", runnerLog(t, h.token("huge", "huge-container-1"), msgs...))
	h.setMPIJobCondition("huge-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")

	s := h.eventuallySuite("huge", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
	t.Logf("Failed condition: %s", failed.Message)
	h.g.Expect(failed.Reason).To(Equal(vmbenchv1.ReasonBenchmarkFailed))
	h.g.Expect(failed.Message).To(ContainSubstring(metric + " is 1e+160"))
	h.g.Expect(s.Status.Runs[0].Message).To(ContainSubstring("benchmarks failed: cpu (master: " + metric + " is 1e+160"))
	m := findMetric(findResult(s, "cpu", "container").Metrics, metric)
	h.g.Expect(m.N).To(Equal(int32(2)), "node01's 1 and node02's sample")
	h.g.Expect(findResult(s, "net", "container").Metrics).NotTo(BeEmpty(), "the other benchmarks' results are kept")
	// The stuck run's pods hold the slot until they are gone, as the garbage collector removes them.
	h.collectGarbage("huge")
	next.goesOn()
}

// A status that the API server does not take leaves the suite showing an earlier state: a Warning
// event says why, so that kubectl describe explains it.
func TestRefusedStatusWriteIsNamedInAnEvent(t *testing.T) {
	h := newHarness(t)
	h.refuseInNamespace("deny-status", admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Update},
		Rule: admissionv1.Rule{APIGroups: []string{vmbenchv1.GroupVersion.Group}, APIVersions: []string{"*"},
			Resources: []string{"benchmarksuites/status"}},
	}, "status writes are frozen in this namespace")
	suite := h.quickSuite("frozen")
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	h.g.Eventually(func() error {
		probe := h.get("frozen")
		probe.Status.Progress = "probe"
		return k8s.Status().Update(h.ctx, probe, client.DryRunAll)
	}, timeout, interval).Should(MatchError(ContainSubstring("status writes are frozen")), "the policy is enforced")

	h.startManager(allKinds())
	h.expectWarningEvent(suitecontroller.ReasonStatusNotWritten, "the suite's status could not be written, so it shows an earlier state",
		"status writes are frozen in this namespace", "check the manager's RBAC on benchmarksuites/status and the cluster's admission policies")
}
