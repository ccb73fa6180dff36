package integration

import (
	"math"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// A history whose VM arm loses 0.5% a run, with its first record pinned as the baseline: the
// condition Drifted names the VM series, the gauge counts it, no change point is found; re-pinning
// on a recent record clears it and keeps the history, and removing spec.baseline drops the verdict.
func TestScheduleBaselineDrift(t *testing.T) {
	h := newHarness(t)
	sched, _ := h.hourly("drift", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		spec.Schedule = "0 0 1 1 *"
		spec.Baseline = &vmbenchv1.ScheduleBaseline{Suite: "drift-past-00"}
	})
	h.appendHistory(sched, syntheticRecords("drift", 24, func(i int) float64 { return 950 * math.Pow(0.995, float64(i)) }, 2))
	h.startSchedules()
	got := h.eventuallySchedule("drift", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Baseline).NotTo(BeNil())
		g.Expect(s.Status.Baseline.Verdict).To(Equal(vmbenchv1.BaselineDrifted))
	})
	h.g.Expect(got.Status.Baseline.Suite).To(Equal("drift-past-00"))
	h.g.Expect(got.Status.Baseline.Series).NotTo(BeEmpty())
	h.g.Expect(got.Status.Baseline.Series[0].Platform).To(Equal("vm"))
	h.g.Expect(got.Status.Baseline.Series[0].Ratio).To(BeNumerically("<", 0.95))
	c := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionDrifted)
	h.g.Expect(c).NotTo(BeNil())
	h.g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
	h.g.Expect(c.Message).To(And(ContainSubstring("cpu events_per_second on vm"), ContainSubstring("drift-past-00"),
		ContainSubstring("re-pin the baseline by setting spec.baseline.suite")))
	h.g.Expect(got.Status.Findings).To(BeEmpty(), "a change point in a slow drift")
	h.g.Eventually(func(g Gomega) {
		v, ok := scheduleGauge(g, "vmbench_schedule_baseline_drifted", h.ns, "drift", nil)
		g.Expect(ok).To(BeTrue())
		g.Expect(v).To(BeNumerically(">=", 1))
	}, timeout, interval).Should(Succeed())
	h.g.Eventually(func() int { return len(h.scheduleEvents(vmbenchv1.ReasonBaselineDrifted)) }, timeout, interval).Should(Equal(1))

	// Re-pinned on the newest runs but 5: they drifted 2.5% at most from it, not past the tolerance
	// (Within, or Inconclusive at this noise against one baseline run).
	h.g.Eventually(func() error {
		s := &vmbenchv1.BenchmarkSchedule{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(sched), s); err != nil {
			return err
		}
		s.Spec.Baseline.Suite = "drift-past-18"
		return k8s.Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	got = h.eventuallySchedule("drift", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Baseline).NotTo(BeNil())
		g.Expect(s.Status.Baseline.Suite).To(Equal("drift-past-18"))
		g.Expect(meta.IsStatusConditionFalse(s.Status.Conditions, vmbenchv1.ConditionDrifted)).To(BeTrue())
	})
	h.g.Expect(got.Status.Baseline.Verdict).To(BeElementOf(vmbenchv1.BaselineWithin, vmbenchv1.BaselineInconclusive))
	recs := h.historyRecords(sched)
	h.g.Expect(recs).To(HaveLen(24), "re-pinning changed the history")
	h.g.Eventually(func(g Gomega) {
		v, _ := scheduleGauge(g, "vmbench_schedule_baseline_drifted", h.ns, "drift", nil)
		g.Expect(v).To(BeZero())
	}, timeout, interval).Should(Succeed())

	// Without spec.baseline: no verdict, no condition, no gauge.
	h.g.Eventually(func() error {
		s := &vmbenchv1.BenchmarkSchedule{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(sched), s); err != nil {
			return err
		}
		s.Spec.Baseline = nil
		return k8s.Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	h.eventuallySchedule("drift", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Baseline).To(BeNil())
		g.Expect(meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionDrifted)).To(BeNil())
	})
	h.g.Eventually(func(g Gomega) {
		_, ok := scheduleGauge(g, "vmbench_schedule_baseline_drifted", h.ns, "drift", nil)
		g.Expect(ok).To(BeFalse())
	}, timeout, interval).Should(Succeed())
}
