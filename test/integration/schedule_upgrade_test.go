package integration

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/internal/history"
)

// upgradeRecords are runs records of 200 stress-ng metrics on container (the baseline) and vm, 1%
// noise over 5 repetitions, where every metric of the VM arm drops 8% from run `at` on: a KubeVirt
// upgrade moving everything at once.
func upgradeRecords(schedule string, runs, at int) []history.Record {
	rng := rand.New(rand.NewPCG(7, 11))
	const n, sd = 5, 0.01
	arm := func(platform string, metric int, level float64) history.MetricRecord {
		mean := math.Log(level) + rng.NormFloat64()*sd/math.Sqrt(n)
		v := sd * sd * (0.5 + rng.Float64())
		return history.MetricRecord{Benchmark: "stress-ng", Platform: platform, Metric: fmt.Sprintf("m%03d", metric),
			Direction: vmbenchv1.HigherIsBetter, N: n, Samples: n, MeanLog: &mean, VarLog: &v}
	}
	var out []history.Record
	for i := range runs {
		t := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 12 * time.Hour)
		rec := history.Record{Suite: fmt.Sprintf("%s-past-%02d", schedule, i), UID: types.UID(fmt.Sprintf("%s-uid-%d", schedule, i)),
			Scheduled: t, Finished: t.Add(time.Hour), Phase: vmbenchv1.SuiteComplete, Baseline: "container"}
		for m := range 200 {
			vm := 900.0 + float64(m)
			if i >= at {
				vm *= 0.92
			}
			rec.Metrics = append(rec.Metrics, arm("container", m, 1000+float64(m)), arm("vm", m, vm))
		}
		out = append(out, rec)
	}
	return out
}

// One analysis with changes on 200 series at once gives one finding that lists them (16, and the
// count of all), its status is written (S2: 40 findings made it unwritable), its confirmation runs
// queue once, and Regressed turns True once they confirm it.
func TestScheduleAnUpgradeIsOneFinding(t *testing.T) {
	h := newHarness(t)
	sched, _ := h.hourly("upgrade", onceAYear(vmbenchv1.ConcurrencyAllow))
	h.appendHistory(sched, upgradeRecords("upgrade", 24, 12))
	h.finishLatest(sched)
	h.startSchedules()

	got := h.eventuallySchedule("upgrade", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Findings).To(HaveLen(1))
		g.Expect(s.Status.Confirmation).NotTo(BeNil())
		g.Expect(s.Status.Confirmation.Started).To(Equal(int32(2)))
	})
	f := got.Status.Findings[0]
	h.g.Expect(f.SeriesCount).To(BeNumerically(">=", 190), "the finding counts the series that moved")
	h.g.Expect(f.Regressions).To(Equal(f.SeriesCount))
	h.g.Expect(f.Series).To(HaveLen(vmbenchv1.MaxFindingSeries))
	h.g.Expect(f.After).To(Equal("upgrade-past-12"))
	h.g.Expect(f.Arm).To(Equal(vmbenchv1.ArmVM))
	h.g.Expect(f.Confirmation).To(Equal(vmbenchv1.ConfirmationPending))
	h.g.Expect(got.Status.Confirmation.Findings).To(Equal([]string{f.ID}))
	h.g.Expect(got.Status.AnalyzedThrough).NotTo(BeEmpty())
	h.g.Expect(meta.IsStatusConditionFalse(got.Status.Conditions, vmbenchv1.ConditionRegressed)).To(BeTrue())

	for _, name := range got.Status.Confirmation.Suites {
		h.finishSuite(name, vmbenchv1.SuiteComplete)
	}
	done := h.eventuallySchedule("upgrade", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Confirmation).To(BeNil())
		g.Expect(s.Status.Findings).To(HaveLen(1))
		g.Expect(s.Status.Findings[0].Confirmation).To(Equal(vmbenchv1.ConfirmationConfirmed))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionRegressed)).To(BeTrue())
	})
	h.g.Expect(done.Status.Findings[0].ID).To(Equal(f.ID))
	c := meta.FindStatusCondition(done.Status.Conditions, vmbenchv1.ConditionRegressed)
	h.g.Expect(c.Message).To(ContainSubstring(fmt.Sprintf("%d series moved at this suite", f.SeriesCount)))
	h.g.Eventually(func() int { return len(h.scheduleEvents(vmbenchv1.ReasonChangeFound)) }, timeout, interval).Should(Equal(1))
	h.g.Expect(h.scheduleEvents(vmbenchv1.ReasonStatusNotWritten)).To(BeEmpty())
}

// The schedule's status at every maximum the manager can reach fits the CRD and the API server's
// size limit: 32 findings of 16 series each with every string at its longest, a round of 32
// findings and 32 suspects, 32 suspects queued, 32 active suites, 8 long conditions, a baseline
// of 16 series, a trigger of 8 changes. What goes beyond is cut by BoundScheduleStatus first.
func TestScheduleStatusAtItsMaxima(t *testing.T) {
	h := newHarness(t)
	s, _ := h.hourly("maxima", nil)
	str := func(n int, c string) string { return strings.Repeat(c, n) }
	at := metav1.NewTime(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC))
	st := &s.Status
	// One more than the CRD allows of everything, and longer strings: bounded before the write.
	for i := range schedulecontroller.MaxFindings + 3 {
		f := vmbenchv1.Finding{ID: fmt.Sprintf("%016x", i), Benchmark: str(200, "b"), Metric: str(200, "m"), Platform: str(100, "p"),
			Arm: vmbenchv1.ArmVM, Before: str(100, "x"), After: str(100, "y"), Time: at, Direction: "down", Regression: true, Ratio: 0.9,
			RatioLow: 0.89, RatioHigh: 0.91, PValue: 1e-9, State: vmbenchv1.FindingUntriaged, Explanation: str(900, "e"),
			Confirmation: vmbenchv1.ConfirmationPending, SeriesCount: 600, Regressions: 600}
		for range 10 {
			f.EnvironmentChanges = append(f.EnvironmentChanges, "kernelVersion: "+str(600, "é"))
		}
		for range vmbenchv1.MaxFindingSeries + 4 {
			f.Series = append(f.Series, vmbenchv1.FindingSeries{Benchmark: str(200, "b"), Metric: str(200, "m"), Platform: str(100, "p"),
				Arm: vmbenchv1.ArmVM, Direction: "down", Regression: true, Ratio: 0.9})
		}
		st.Findings = append(st.Findings, f)
	}
	round := &vmbenchv1.ConfirmationRound{Started: 5, Remaining: 5}
	for i := range 40 {
		round.Findings = append(round.Findings, fmt.Sprintf("%016x", i))
		round.Suspects = append(round.Suspects, str(60, "s"))
		st.SuspectsQueued = append(st.SuspectsQueued, str(60, "q"))
	}
	for range vmbenchv1.MaxConfirmationRuns + 2 {
		round.Suites = append(round.Suites, "maxima-"+str(40, "1"))
	}
	st.Confirmation = round
	for i := range 40 {
		st.Active = append(st.Active, vmbenchv1.ScheduledSuite{Name: fmt.Sprintf("maxima-%08d", i), UID: types.UID(fmt.Sprintf("uid-%d", i))})
	}
	for _, c := range []string{vmbenchv1.ConditionValid, vmbenchv1.ConditionSuspended, vmbenchv1.ConditionStartSkipped,
		vmbenchv1.ConditionHistoryRecorded, vmbenchv1.ConditionChangeSuspected, vmbenchv1.ConditionRegressed, vmbenchv1.ConditionDrifted} {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "Maximum", Message: str(40000, "c")})
	}
	st.LastTrigger = &vmbenchv1.VersionTrigger{Time: at, Suite: "maxima-" + str(40, "2"), Versions: "0123456789abcdef"}
	for range 10 {
		st.LastTrigger.Changes = append(st.LastTrigger.Changes, str(600, "t"))
	}
	st.Baseline = &vmbenchv1.BaselineStatus{Suite: str(100, "b"), Verdict: vmbenchv1.BaselineDrifted, Runs: 200, TolerancePercent: 5}
	for range 20 {
		st.Baseline.Series = append(st.Baseline.Series, vmbenchv1.BaselineSeries{Benchmark: str(200, "b"), Metric: str(200, "m"),
			Platform: str(100, "p"), Arm: vmbenchv1.ArmVM, Verdict: vmbenchv1.BaselineDrifted, Ratio: 0.9, RatioLow: 0.8, RatioHigh: 0.95, PValue: 0.01})
	}
	st.AnalyzedThrough = str(36, "u")
	st.ConfirmationBudget = &vmbenchv1.ConfirmationBudget{PeriodStart: at, Suites: 100}
	st.Records = 200

	schedulecontroller.BoundScheduleStatus(st)
	h.g.Expect(k8s.Status().Update(h.ctx, s)).To(Succeed(), "the bounded status at its maxima is refused")
	got := h.getSchedule("maxima")
	h.g.Expect(got.Status.Findings).To(HaveLen(schedulecontroller.MaxFindings))
	h.g.Expect(got.Status.Findings[0].Series).To(HaveLen(vmbenchv1.MaxFindingSeries))
	h.g.Expect(got.Status.Confirmation.Findings).To(HaveLen(schedulecontroller.MaxFindings))
	h.g.Expect(got.Status.Confirmation.Suspects).To(HaveLen(schedulecontroller.MaxSuspectsQueued))
}
