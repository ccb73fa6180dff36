package integration

import (
	"fmt"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// preciseSuite is a container-only suite of one sysbench-cpu benchmark with a ±5% target, at least
// 2 and at most 3 repetitions.
func (h *harness) preciseSuite(name string, metrics ...string) *vmbenchv1.BenchmarkSuite {
	s := containerOnly(h.suite(name, 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))
	s.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 3, Metrics: metrics}
	return s
}

// finishCPURun plays the MPI Operator for a run of the cpu benchmark alone: every node measures the
// fixture's values times factor.
func (h *harness) finishCPURun(suite, run string, factor float64) {
	h.t.Helper()
	job := h.mpiJob(run)
	sysbench := fixtureMetrics(h.t, results.SysbenchCPU, "sysbench-cpu.txt")
	ready := map[string]time.Time{}
	for i, n := range nodes {
		ready[n] = job.CreationTimestamp.Add(time.Duration(30+i) * time.Second)
	}
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run, NodesReady: ready, Virtualization: "kvm"}}
	for _, n := range nodes {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "cpu", Node: n, Metrics: scaled(sysbench, factor), Seconds: 10})
	}
	msgs = append(msgs, runplan.Message{Kind: runplan.KindDone, Run: run, BenchmarkSeconds: 30})
	h.containerLauncherPod(suite, run, runnerLog(h.t, h.token(suite, run), msgs...))
	h.setMPIJobCondition(run, mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
}

func precisionReached(s *vmbenchv1.BenchmarkSuite) *metav1.Condition {
	c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionPrecisionReached)
	if c == nil {
		return &metav1.Condition{}
	}
	return c
}

// Two repetitions 0.2% apart are precise enough: repetition means 1 and 1.002 of the fixture's
// value, standard error 0.001, t(0.975, 1 df) 12.706: ±1.27% of the mean, within ±5%. The suite
// ends at spec.repetitions.
func TestPrecisionReachedStopsAtTheMinimum(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.preciseSuite("precise", "cpu/events_per_second"))).To(Succeed())

	h.finishCPURun("precise", "precise-container-1", 1)
	running := h.eventuallySuite("precise", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "precise-container-1")).To(Equal(vmbenchv1.RunSucceeded))
	})
	h.g.Expect(precisionReached(running).Status).To(Equal(metav1.ConditionUnknown), precisionReached(running).Message)
	h.g.Expect(precisionReached(running).Reason).To(Equal(vmbenchv1.ReasonMeasuring))

	// The spec, precision included, is frozen once a run started.
	h.g.Eventually(func(g Gomega) {
		fresh := &vmbenchv1.BenchmarkSuite{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "precise"}, fresh)).To(Succeed())
		fresh.Spec.Precision.HalfWidthPercent = 50
		err := k8s.Update(h.ctx, fresh)
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("repetitions and precision cannot change once the first run has started"))
	}, timeout, interval).Should(Succeed())

	h.finishCPURun("precise", "precise-container-2", 1.002)
	done := h.eventuallySuite("precise", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(done.Status.Runs).To(HaveLen(2), "no third repetition")
	c := precisionReached(done)
	h.g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
	h.g.Expect(c.Reason).To(Equal(vmbenchv1.ReasonTargetReached))
	h.g.Expect(c.Message).To(ContainSubstring("within ±5% after 2 repetitions"))
	h.g.Expect(done.Status.Precision.Repetitions).To(Equal(int32(2)))
	h.g.Expect(done.Status.Precision.Platforms).To(HaveLen(1))
	p := done.Status.Precision.Platforms[0]
	h.g.Expect(p.Reached).To(BeTrue())
	h.g.Expect(p.Repetitions).To(Equal(int32(2)))
	h.g.Expect(p.Metric).To(Equal("cpu/events_per_second"))
	h.g.Expect(*p.HalfWidthPercent).To(BeNumerically("~", 12.706*0.001/1.001*100, 0.01))
}

// Repetitions that stay far apart grow the suite to precision.maxRepetitions, one interleaved
// repetition at a time, and it completes there with PrecisionReached False. Repetition means 1,
// 1.2, 0.8 of the fixture's values: mean 1, sd 0.2, standard error 0.1155, t(0.975, 2 df) 4.303:
// ±49.7%.
func TestPrecisionStopsAtTheCapAndSaysSo(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.preciseSuite("spread", "cpu"))).To(Succeed())

	for rep, factor := range []float64{1, 1.2} {
		h.finishCPURun("spread", fmt.Sprintf("spread-container-%d", rep+1), factor)
	}
	grown := h.eventuallySuite("spread", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Runs).To(HaveLen(3))
	})
	h.g.Expect(grown.Status.Phase).NotTo(Equal(vmbenchv1.SuiteComplete), "the suite grew instead of ending")
	h.g.Expect(grown.Status.Runs[2].Name).To(Equal("spread-container-3"))
	h.g.Expect(grown.Status.Precision.Repetitions).To(Equal(int32(3)))
	h.g.Expect(grown.Status.Precision.Platforms[0].Reached).To(BeFalse())

	h.finishCPURun("spread", "spread-container-3", 0.8)
	done := h.eventuallySuite("spread", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(done.Status.Runs).To(HaveLen(3), "no repetition past the cap")
	h.g.Expect(meta.IsStatusConditionTrue(done.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(), "the results are valid")
	c := precisionReached(done)
	h.g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
	h.g.Expect(c.Reason).To(Equal(vmbenchv1.ReasonMaxRepetitionsReached))
	h.g.Expect(c.Message).To(ContainSubstring("after 3 repetitions (spec.precision.maxRepetitions) these metrics are above the ±5% target: container cpu/events_per_second ±49.7%"))
	h.g.Expect(c.Message).To(ContainSubstring("raise maxRepetitions or loosen halfWidthPercent in a new suite, or set cluster.dedicatedCPUs"))
	p := done.Status.Precision.Platforms[0]
	h.g.Expect(p.Reached).To(BeFalse())
	h.g.Expect(p.Repetitions).To(Equal(int32(3)))
	h.g.Expect(*p.HalfWidthPercent).To(BeNumerically("~", 49.7, 0.1))
}
