package integration

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/internal/history"
)

// onceAYear changes an hourly schedule to start once a year ("0 0 1 1 *": no cron start during a
// test, only the ones the test or a confirmation round makes) under the concurrency policy given.
func onceAYear(policy vmbenchv1.ConcurrencyPolicy) func(*vmbenchv1.BenchmarkScheduleSpec) {
	return func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		spec.Schedule = "0 0 1 1 *"
		spec.ConcurrencyPolicy = policy
	}
}

// stepAt is a level for syntheticRecords: before until run at, after from it on.
func stepAt(at int, before, after float64) func(i int) float64 {
	return func(i int) float64 {
		if i >= at {
			return after
		}
		return before
	}
}

// appendHistory writes records to the schedule's history as the manager does, signed with its key.
func (h *harness) appendHistory(sched *vmbenchv1.BenchmarkSchedule, records []history.Record) {
	h.t.Helper()
	store := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	for _, rec := range records {
		_, err := store.Append(h.ctx, sched, rec)
		h.g.Expect(err).NotTo(HaveOccurred())
	}
}

// historyRecords reads the schedule's history as the manager does: its own signed records only.
func (h *harness) historyRecords(sched *vmbenchv1.BenchmarkSchedule) []history.Record {
	h.t.Helper()
	store := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	recs, err := store.List(h.ctx, sched)
	h.g.Expect(err).NotTo(HaveOccurred())
	return recs
}

// finishLatest makes the schedule's latest suite, scheduled an hour before the test's clock, and
// completes it: its record, the newest, is the one the schedule's analysis starts from. It returns
// the clock's now and the suite's name.
func (h *harness) finishLatest(sched *vmbenchv1.BenchmarkSchedule) (now time.Time, latest string) {
	h.t.Helper()
	now = h.clock.Now()
	latest = h.ownedSuite(sched, now.Add(-time.Hour))
	h.finishSuite(latest, vmbenchv1.SuiteComplete)
	return now, latest
}

// syntheticRecords are runs records of the metric that finishSuite reports (cpu events_per_second,
// container 1000 and vm 900): 2% noise, 5 repetitions, and the VM arm at level(i) in run i.
func syntheticRecords(schedule string, runs int, level func(i int) float64, seed uint64) []history.Record {
	rng := rand.New(rand.NewPCG(seed, 11))
	const n, sd = 5, 0.02
	arm := func(platform string, at float64) history.MetricRecord {
		mean := math.Log(at) + rng.NormFloat64()*sd/math.Sqrt(n)
		v := sd * sd * (0.5 + rng.Float64())
		return history.MetricRecord{Benchmark: "cpu", Platform: platform, Metric: "events_per_second", Direction: vmbenchv1.HigherIsBetter,
			N: n, Samples: n, MeanLog: &mean, VarLog: &v}
	}
	var out []history.Record
	for i := range runs {
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 12 * time.Hour)
		out = append(out, history.Record{Suite: fmt.Sprintf("%s-past-%02d", schedule, i), UID: types.UID(fmt.Sprintf("%s-uid-%d", schedule, i)),
			Scheduled: at, Finished: at.Add(time.Hour), Phase: vmbenchv1.SuiteComplete, Baseline: "container",
			Metrics: []history.MetricRecord{arm("container", 1000), arm("vm", level(i))}})
	}
	return out
}

// ownedSuite creates a suite of the schedule as a start of it would, scheduled at `at`.
func (h *harness) ownedSuite(sched *vmbenchv1.BenchmarkSchedule, at time.Time) string {
	h.t.Helper()
	s := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: suiteAt(sched.Name, at), Namespace: h.ns,
			Labels:      map[string]string{vmbenchv1.LabelSchedule: sched.Name},
			Annotations: map[string]string{vmbenchv1.AnnotationScheduledAt: at.UTC().Format(time.RFC3339)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
				Name: sched.Name, UID: sched.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: *sched.Spec.SuiteTemplate.Spec.DeepCopy(),
	}
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	return s.Name
}

// A history where the VM arm stepped down 5% eight runs ago: the next record makes a finding, which
// queues exactly 2 confirmation suites, started one after the other under Forbid; a restart of the
// manager makes no other; the finding alerts only once both are recorded and the change holds.
func TestScheduleConfirmationRunsForANewFinding(t *testing.T) {
	h := newHarness(t)
	sched, _ := h.hourly("conf", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		// Once a year: no cron start during the test; Forbid is the default.
		spec.Schedule = "0 0 1 1 *"
	})
	h.g.Expect(sched.Spec.ConcurrencyPolicy).To(Equal(vmbenchv1.ConcurrencyForbid))
	h.appendHistory(sched, syntheticRecords("conf", 16, stepAt(8, 950, 900), 1))
	now, latest := h.finishLatest(sched)
	stop := h.startSchedules()

	first, second := suiteAt("conf", now.Truncate(time.Minute)), suiteAt("conf", now.Truncate(time.Minute).Add(time.Minute))
	got := h.eventuallySchedule("conf", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Findings).To(HaveLen(1))
		g.Expect(s.Status.Confirmation).NotTo(BeNil())
		g.Expect(s.Status.Confirmation.Started).To(Equal(int32(1)))
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", first)))
	})
	finding := got.Status.Findings[0]
	h.g.Expect(finding.Confirmation).To(Equal(vmbenchv1.ConfirmationPending))
	h.g.Expect(finding.Regression).To(BeTrue())
	h.g.Expect(got.Status.Confirmation.Suites).To(Equal([]string{first, second}))
	h.g.Expect(got.Status.Confirmation.Findings).To(Equal([]string{finding.ID}))
	h.g.Expect(got.Status.Confirmation.Remaining).To(Equal(int32(2)))
	h.g.Expect(meta.IsStatusConditionFalse(got.Status.Conditions, vmbenchv1.ConditionRegressed)).To(BeTrue(),
		"Regressed while the finding waits for its confirmation runs")
	h.g.Expect(h.suitesOf("conf")).To(ConsistOf(latest, first), "under Forbid only the first confirmation suite starts")
	h.g.Eventually(func() int { return len(h.scheduleEvents(vmbenchv1.ReasonConfirmationQueued)) }, timeout, interval).Should(Equal(1))

	// A restart of the manager, and a reconcile more: no other suite. The witness waits for a
	// whole pass of the restarted manager first, so that the checks cannot pass before it looked.
	stop()
	h.startSchedules()
	h.scheduleReconciled("conf")
	h.g.Expect(h.suitesOf("conf")).To(ConsistOf(latest, first), "a suite after the restart")
	h.g.Consistently(func() []string { return h.suitesOf("conf") }, 2*time.Second, interval).Should(ConsistOf(latest, first))

	// The first ends: the second starts.
	h.finishSuite(first, vmbenchv1.SuiteComplete)
	h.eventuallySchedule("conf", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Confirmation).NotTo(BeNil())
		g.Expect(s.Status.Confirmation.Started).To(Equal(int32(2)))
		g.Expect(s.Status.Confirmation.Remaining).To(Equal(int32(1)))
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", second)))
	})
	h.g.Expect(h.suitesOf("conf")).To(ConsistOf(latest, first, second))

	// The second ends: the change holds, the finding is confirmed and Regressed is True.
	h.finishSuite(second, vmbenchv1.SuiteComplete)
	done := h.eventuallySchedule("conf", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Confirmation).To(BeNil())
		g.Expect(s.Status.Findings).NotTo(BeEmpty())
		g.Expect(s.Status.Findings[0].Confirmation).To(Equal(vmbenchv1.ConfirmationConfirmed))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionRegressed)).To(BeTrue())
	})
	h.g.Expect(done.Status.Findings[0].ID).To(Equal(finding.ID))
	h.g.Eventually(func() int { return len(h.scheduleEvents(vmbenchv1.ReasonChangeConfirmed)) }, timeout, interval).Should(Equal(1))
	h.scheduleReconciled("conf")
	h.g.Expect(h.suitesOf("conf")).To(ConsistOf(latest, first, second), "a suite after the round ended")
	h.g.Consistently(func() []string { return h.suitesOf("conf") }, 2*time.Second, interval).Should(ConsistOf(latest, first, second),
		"a suite after the round ended")
}

// confirmationSuitesOf lists the schedule's suites that carry the confirms annotation, by name.
func (h *harness) confirmationSuitesOf(schedule string) []string {
	h.t.Helper()
	var list vmbenchv1.BenchmarkSuiteList
	h.g.Expect(k8s.List(h.ctx, &list, client.InNamespace(h.ns), client.MatchingLabels{vmbenchv1.LabelSchedule: schedule})).To(Succeed())
	var names []string
	for _, s := range list.Items {
		if s.Annotations["vmbench.io/confirms"] != "" {
			names = append(names, s.Name)
		}
	}
	return names
}

// A history where the VM arm stepped down 5% one run before the latest record: the step is only a
// suspect (two runs after it), which queues at once the 2 confirmation suites it asks for, started
// together under Allow; a restart and a reconcile more make no other. The first one's record turns
// the suspect into a finding, which joins the round under way and is confirmed by its second suite.
func TestScheduleConfirmationRunsForANewSuspect(t *testing.T) {
	h := newHarness(t)
	sched, _ := h.hourly("susp", onceAYear(vmbenchv1.ConcurrencyAllow))
	h.appendHistory(sched, syntheticRecords("susp", 14, stepAt(13, 950, 900), 1))
	now, latest := h.finishLatest(sched)
	stop := h.startSchedules()

	first, second := suiteAt("susp", now.Truncate(time.Minute)), suiteAt("susp", now.Truncate(time.Minute).Add(time.Minute))
	got := h.eventuallySchedule("susp", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Confirmation).NotTo(BeNil())
		g.Expect(s.Status.Confirmation.Started).To(Equal(int32(2)))
	})
	round := got.Status.Confirmation
	h.g.Expect(got.Status.Findings).To(BeEmpty(), "the step is only a suspect")
	h.g.Expect(round.Findings).To(BeEmpty())
	h.g.Expect(round.Suites).To(Equal([]string{first, second}))
	h.g.Expect(round.Suspects).NotTo(BeEmpty())
	h.g.Expect(got.Status.SuspectsQueued).To(Equal(round.Suspects))
	suspected := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionChangeSuspected)
	h.g.Expect(suspected).NotTo(BeNil())
	h.g.Expect(suspected.Status).To(Equal(metav1.ConditionTrue))
	h.g.Expect(suspected.Message).To(ContainSubstring("The confirmation suites %s, %s are queued for it", first, second))
	h.g.Expect(h.confirmationSuitesOf("susp")).To(ConsistOf(first, second))
	h.g.Eventually(func() int { return len(h.scheduleEvents(vmbenchv1.ReasonConfirmationQueued)) }, timeout, interval).Should(Equal(1))
	h.g.Expect(h.scheduleEvents(vmbenchv1.ReasonConfirmationQueued)[0].Message).To(ContainSubstring("suspected change(s) cpu events_per_second on vm"))

	// A restart of the manager, and a reconcile more: no other suite, once the restarted manager
	// has been seen to look.
	stop()
	h.startSchedules()
	h.scheduleReconciled("susp")
	h.g.Expect(h.suitesOf("susp")).To(ConsistOf(latest, first, second), "a suite after the restart")
	h.g.Consistently(func() []string { return h.suitesOf("susp") }, 2*time.Second, interval).Should(ConsistOf(latest, first, second))

	// The first ends: with its record the step is a change; the finding joins the round under way.
	h.finishSuite(first, vmbenchv1.SuiteComplete)
	got = h.eventuallySchedule("susp", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Findings).To(HaveLen(1))
		g.Expect(s.Status.Confirmation).NotTo(BeNil())
		g.Expect(s.Status.Confirmation.Remaining).To(Equal(int32(1)))
	})
	h.g.Expect(got.Status.Findings[0].Confirmation).To(Equal(vmbenchv1.ConfirmationPending))
	h.g.Expect(got.Status.Confirmation.Findings).To(Equal([]string{got.Status.Findings[0].ID}))
	h.g.Expect(got.Status.Confirmation.Suites).To(Equal([]string{first, second}))

	// The second ends: the round ends with the finding confirmed, and nothing more is queued.
	h.finishSuite(second, vmbenchv1.SuiteComplete)
	h.eventuallySchedule("susp", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Confirmation).To(BeNil())
		g.Expect(s.Status.Findings).To(HaveLen(1))
		g.Expect(s.Status.Findings[0].Confirmation).To(Equal(vmbenchv1.ConfirmationConfirmed))
	})
	h.scheduleReconciled("susp")
	h.g.Expect(h.suitesOf("susp")).To(ConsistOf(latest, first, second), "a suite after the round ended")
	h.g.Consistently(func() []string { return h.suitesOf("susp") }, 2*time.Second, interval).Should(ConsistOf(latest, first, second),
		"a suite after the round ended")
}

// The CRD defaults confirmation.runs to 2, refuses more than 5 and a baseline tolerance of 0, and
// takes the status the manager writes.
func TestScheduleConfirmationAndBaselineFitTheCRD(t *testing.T) {
	h := newHarness(t)
	s, _ := h.hourly("confcrd", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		spec.Confirmation = &vmbenchv1.ScheduleConfirmation{}
		spec.Baseline = &vmbenchv1.ScheduleBaseline{Suite: "confcrd-29412345"}
	})
	h.g.Expect(s.Spec.Confirmation.Runs).To(HaveValue(Equal(int32(2))))
	bad := s.DeepCopy()
	bad.Spec.Confirmation.Runs = ptr.To[int32](6)
	h.g.Expect(apierrors.IsInvalid(k8s.Update(h.ctx, bad))).To(BeTrue(), "confirmation.runs 6 was accepted")
	bad = s.DeepCopy()
	bad.Spec.Baseline.TolerancePercent = ptr.To(0.0)
	err := k8s.Update(h.ctx, bad)
	h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "baseline.tolerancePercent 0 was accepted: %v", err)
	h.g.Expect(err.Error()).To(ContainSubstring("above 0 and at most 50"))

	orig := s.DeepCopy()
	s.Status.Confirmation = &vmbenchv1.ConfirmationRound{Findings: []string{"3f9c2a1b7d4e5f60"}, Suites: []string{"confcrd-29412346", "confcrd-29412347"},
		Started: 1, Remaining: 2}
	s.Status.Baseline = &vmbenchv1.BaselineStatus{Suite: "confcrd-29412345", Verdict: vmbenchv1.BaselineDrifted, Runs: 5, TolerancePercent: 5,
		Series: []vmbenchv1.BaselineSeries{{Benchmark: "cpu", Metric: "events_per_second", Platform: "vm", Arm: vmbenchv1.ArmVM,
			Verdict: vmbenchv1.BaselineDrifted, Ratio: 0.9, RatioLow: 0.88, RatioHigh: 0.92, PValue: 0.01}}}
	s.Status.Findings = []vmbenchv1.Finding{{ID: "3f9c2a1b7d4e5f60", Benchmark: "cpu", Metric: "events_per_second", Platform: "vm", Arm: vmbenchv1.ArmVM,
		Before: "a", After: "b", Time: metav1.NewTime(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)), Direction: "down", Regression: true,
		Ratio: 0.95, State: vmbenchv1.FindingUntriaged,
		Confirmation: vmbenchv1.ConfirmationPending}}
	h.g.Expect(k8s.Status().Patch(h.ctx, s, client.MergeFrom(orig))).To(Succeed())
	got := &vmbenchv1.BenchmarkSchedule{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
	h.g.Expect(got.Status.Confirmation).To(Equal(s.Status.Confirmation))
	h.g.Expect(got.Status.Baseline).To(Equal(s.Status.Baseline))
	h.g.Expect(got.Status.Findings[0].Confirmation).To(Equal(vmbenchv1.ConfirmationPending))

	// A round for suspects only: no findings, the suspects' keys (a series hash, '@', a suite name
	// of 30 characters at most) in the round and in status.suspectsQueued.
	orig = got.DeepCopy()
	key := "a2a740e9e66e@" + strings.Repeat("s", 21) + "-29412345"
	got.Status.Confirmation = &vmbenchv1.ConfirmationRound{Suspects: []string{key}, Suites: []string{"confcrd-29412348"}, Remaining: 1}
	got.Status.SuspectsQueued = []string{key}
	h.g.Expect(k8s.Status().Patch(h.ctx, got, client.MergeFrom(orig))).To(Succeed())
	again := &vmbenchv1.BenchmarkSchedule{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(s), again)).To(Succeed())
	h.g.Expect(again.Status.Confirmation).To(Equal(got.Status.Confirmation))
	h.g.Expect(again.Status.SuspectsQueued).To(Equal([]string{key}))
}
