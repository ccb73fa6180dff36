package schedule

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/detect"
	"github.com/vmbench/vmbench/internal/history"
)

func TestConfirmationRunsDefaultAndBounds(t *testing.T) {
	for _, tc := range []struct {
		conf *vmbenchv1.ScheduleConfirmation
		want int
	}{
		{nil, 2},
		{&vmbenchv1.ScheduleConfirmation{}, 2},
		{&vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](0)}, 0},
		{&vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](4)}, 4},
		{&vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](50)}, vmbenchv1.MaxConfirmationRuns},
		{&vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](-1)}, 0},
	} {
		if got := confirmationRuns(vmbenchv1.BenchmarkScheduleSpec{Confirmation: tc.conf}); got != tc.want {
			t.Errorf("confirmationRuns(%+v) = %d, want %d", tc.conf, got, tc.want)
		}
	}
}

func TestSuiteTimeReadsTheNameBack(t *testing.T) {
	at := time.Date(2026, 11, 27, 12, 34, 0, 0, time.UTC)
	got, ok := suiteTime(scheduledSuiteName("nightly-vm", at))
	if !ok || !got.Equal(at) {
		t.Errorf("suiteTime = %v, %v; want %v", got, ok, at)
	}
	if _, ok := suiteTime("nightly-abc"); ok {
		t.Error("a name without minutes was read")
	}
}

// settleConfirmation waits for every suite of the round, then confirms the findings the analysis
// still finds and clears the others.
func TestSettleConfirmation(t *testing.T) {
	recs := synthHistory(synth{runs: 18, at: 8, vmStep: 0.95, ctrStep: 1, seed: 1})
	pending := func() *vmbenchv1.BenchmarkSchedule {
		s := testSchedule()
		s.Status.Findings = []vmbenchv1.Finding{
			{ID: "f1", Benchmark: "sysbench-cpu", Metric: "events", Platform: "vm", Arm: vmbenchv1.ArmVM, After: "nightly-08", Direction: "down",
				Regression: true, Ratio: 0.95, State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationPending},
			{ID: "other", Benchmark: "sysbench-cpu", Metric: "events", Platform: "container", Arm: vmbenchv1.ArmContainer, After: "nightly-03",
				Direction: "up", Ratio: 1.05, State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationPending},
		}
		s.Status.Confirmation = &vmbenchv1.ConfirmationRound{Findings: []string{"f1"}, Suites: []string{"nightly-16", "nightly-17"}, Started: 2, Remaining: 2}
		return s
	}
	// The same change, its split moved by one run with the new records.
	again := []vmbenchv1.Finding{{ID: "f1-moved", Benchmark: "sysbench-cpu", Metric: "events", Platform: "vm", Arm: vmbenchv1.ArmVM,
		After: "nightly-09", Direction: "down"}}

	s := pending()
	if evs := settleConfirmation(s, again, recs[:17], nil); len(evs) != 0 || s.Status.Confirmation == nil || s.Status.Confirmation.Remaining != 1 ||
		s.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationPending {
		t.Fatalf("with one suite of the round unrecorded: round %+v, finding %s, events %v; want the round on with 1 remaining",
			s.Status.Confirmation, s.Status.Findings[0].Confirmation, evs)
	}

	s = pending()
	evs := settleConfirmation(s, again, recs, nil)
	if s.Status.Confirmation != nil || s.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationConfirmed ||
		len(evs) != 1 || evs[0].reason != vmbenchv1.ReasonChangeConfirmed || evs[0].kind != "Warning" {
		t.Fatalf("round %+v, finding %s, events %+v; want the round ended, the finding Confirmed and one Warning", s.Status.Confirmation,
			s.Status.Findings[0].Confirmation, evs)
	}
	if s.Status.Findings[1].Confirmation != vmbenchv1.ConfirmationPending {
		t.Errorf("a finding outside the round was settled: %s", s.Status.Findings[1].Confirmation)
	}

	s = pending()
	evs = settleConfirmation(s, nil, recs, nil)
	if s.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationNotConfirmed || len(evs) != 1 || evs[0].reason != vmbenchv1.ReasonChangeNotConfirmed {
		t.Fatalf("finding %s, events %+v; want NotConfirmed when the change is no longer found", s.Status.Findings[0].Confirmation, evs)
	}
	setRegressed(s)
	if c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionRegressed); c.Status != metav1.ConditionFalse {
		t.Errorf("Regressed %s for a regression that its confirmation runs cleared", c.Status)
	}
}

// confirmReconciler is a schedule with a finished suite whose record, on top of a history with a
// 5% step of the VM arm, makes a finding.
func confirmReconciler(t *testing.T, policy vmbenchv1.ConcurrencyPolicy, runs *int32) (*ScheduleReconciler, client.Client, *vmbenchv1.BenchmarkSchedule, *events.FakeRecorder) {
	t.Helper()
	return confirmReconcilerWith(t, policy, runs, synthHistory(synth{runs: 16, at: 8, vmStep: 0.95, ctrStep: 1, kernel: "6.8.0", seed: 1}))
}

// confirmReconcilerWith is confirmReconciler on the history recs.
func confirmReconcilerWith(t *testing.T, policy vmbenchv1.ConcurrencyPolicy, runs *int32, recs []history.Record) (*ScheduleReconciler, client.Client,
	*vmbenchv1.BenchmarkSchedule, *events.FakeRecorder) {
	t.Helper()
	scheme := scheme.New()
	sched := testSchedule()
	sched.UID = "sched-uid"
	sched.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	sched.Spec.Schedule = "0 3 * * *"
	sched.Spec.ConcurrencyPolicy = policy
	// The cron start of the day happened: nothing is due.
	sched.Status.LastScheduleTime = &metav1.Time{Time: time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)}
	if runs != nil {
		sched.Spec.Confirmation = &vmbenchv1.ScheduleConfirmation{Runs: runs}
	}
	sched.Spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer},
		{Name: "vm", Type: vmbenchv1.PlatformVM}}
	suite := scheduleFinishedSuite(20, vmbenchv1.SuiteComplete, false)
	suite.Namespace, suite.UID, suite.Status.ParametersHash = sched.Namespace, "suite-uid", "h1"
	suite.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
		Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sched, suite).WithStatusSubresource(sched, &vmbenchv1.BenchmarkSuite{}).
		WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
	store := &memHistory{records: recs}
	rec := events.NewFakeRecorder(50)
	// 10:07 on the 20th: after the cron start of 03:00, before the next.
	r := &ScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec, History: store,
		Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC))}
	return r, c, sched, rec
}

func reconcileSchedule(t *testing.T, r *ScheduleReconciler, c client.Client, sched *vmbenchv1.BenchmarkSchedule) *vmbenchv1.BenchmarkSchedule {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}); err != nil {
		t.Fatal(err)
	}
	got := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(sched), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// confirmationSuites are the suites carrying the confirms annotation, by name.
func confirmationSuites(t *testing.T, c client.Client) []string {
	t.Helper()
	var list vmbenchv1.BenchmarkSuiteList
	if err := c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		if s.Annotations[annotationConfirms] != "" {
			out = append(out, s.Name)
		}
	}
	slices.Sort(out)
	return out
}

func finishFake(t *testing.T, c client.Client, name string) {
	t.Helper()
	s := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "bench", Name: name}, s); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: vmbenchv1.ConditionComplete, Status: metav1.ConditionTrue, Reason: "x"})
	s.Status.ParametersHash = "h1"
	if err := c.Status().Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// Under Forbid a new finding queues the default 2 confirmation runs, which start one after the
// other; the finding holds no Regressed until they confirm it.
func TestReconcileConfirmsANewFindingOneRunAtATimeUnderForbid(t *testing.T) {
	r, c, sched, rec := confirmReconciler(t, vmbenchv1.ConcurrencyForbid, nil)
	got := reconcileSchedule(t, r, c, sched)
	want := []string{scheduledSuiteName("nightly", time.Date(2026, 11, 20, 10, 7, 0, 0, time.UTC)),
		scheduledSuiteName("nightly", time.Date(2026, 11, 20, 10, 8, 0, 0, time.UTC))}
	round := got.Status.Confirmation
	if len(got.Status.Findings) != 1 || got.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationPending || round == nil ||
		!slices.Equal(round.Suites, want) || round.Started != 1 || round.Remaining != 2 || !slices.Equal(round.Findings, []string{got.Status.Findings[0].ID}) {
		t.Fatalf("findings %+v, round %+v; want one Pending finding and a round of %v with the first started", got.Status.Findings, round, want)
	}
	if c1 := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionRegressed); c1 == nil || c1.Status != metav1.ConditionFalse ||
		!strings.Contains(c1.Message, "1 regression(s) wait for their confirmation runs") {
		t.Errorf("Regressed %+v while the finding waits for its confirmation runs, want False saying it waits", c1)
	}
	if s := confirmationSuites(t, c); !slices.Equal(s, want[:1]) {
		t.Fatalf("confirmation suites %v, want only %s under Forbid", s, want[0])
	}
	// Again, while the first runs: nothing more.
	got = reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); !slices.Equal(s, want[:1]) || got.Status.Confirmation.Started != 1 {
		t.Fatalf("confirmation suites %v (started %d) after a second reconcile, want only %s", s, got.Status.Confirmation.Started, want[0])
	}
	queued := 0
	for len(rec.Events) > 0 {
		e := <-rec.Events
		if strings.Contains(e, vmbenchv1.ReasonConfirmationWaits) {
			t.Errorf("event %q: waiting under Forbid is no refusal", e)
		}
		if strings.Contains(e, vmbenchv1.ReasonConfirmationQueued) {
			queued++
			if !strings.Contains(e, want[0]) || !strings.Contains(e, want[1]) {
				t.Errorf("event %q does not name the suites", e)
			}
		}
	}
	if queued != 1 {
		t.Errorf("%d ConfirmationQueued events, want 1", queued)
	}

	// The first ends: it is recorded and the second starts.
	finishFake(t, c, want[0])
	got = reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); !slices.Equal(s, want) || got.Status.Confirmation == nil || got.Status.Confirmation.Remaining != 1 {
		t.Fatalf("confirmation suites %v, round %+v; want both, 1 remaining", s, got.Status.Confirmation)
	}
	// The second ends: the change is still there, the finding is confirmed and alerts.
	finishFake(t, c, want[1])
	got = reconcileSchedule(t, r, c, got)
	if got.Status.Confirmation != nil || got.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationConfirmed {
		t.Fatalf("round %+v, finding %s; want the round ended and the finding Confirmed", got.Status.Confirmation, got.Status.Findings[0].Confirmation)
	}
	if c1 := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionRegressed); c1 == nil || c1.Status != metav1.ConditionTrue {
		t.Errorf("Regressed %+v once confirmed, want True", c1)
	}
	reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); len(s) != 2 {
		t.Errorf("confirmation suites %v after the round, want the 2", s)
	}
}

// Under Allow the runs start at once; with runs 0 none is queued and the finding alerts at once.
func TestReconcileConfirmationUnderAllowAndOff(t *testing.T) {
	r, c, sched, _ := confirmReconciler(t, vmbenchv1.ConcurrencyAllow, ptr.To[int32](3))
	got := reconcileSchedule(t, r, c, sched)
	if s := confirmationSuites(t, c); len(s) != 3 || got.Status.Confirmation.Started != 3 {
		t.Fatalf("confirmation suites %v, round %+v; want 3 started at once under Allow", s, got.Status.Confirmation)
	}
	reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); len(s) != 3 {
		t.Fatalf("confirmation suites %v after a second reconcile, want still 3", s)
	}

	r, c, sched, _ = confirmReconciler(t, vmbenchv1.ConcurrencyAllow, ptr.To[int32](0))
	got = reconcileSchedule(t, r, c, sched)
	if s := confirmationSuites(t, c); len(s) != 0 || got.Status.Confirmation != nil || got.Status.Findings[0].Confirmation != "" {
		t.Fatalf("suites %v, round %+v, finding %+v; want no confirmation with runs 0", s, got.Status.Confirmation, got.Status.Findings[0])
	}
}

// A round planned again after its status write was lost takes back the suite made for it.
func TestQueueConfirmationTakesBackItsSuites(t *testing.T) {
	sched := testSchedule()
	now := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	made := scheduleFinishedSuite(30, vmbenchv1.SuiteComplete, true)
	made.Annotations[annotationConfirms] = "f1"
	cron := &vmbenchv1.BenchmarkSuite{}
	cron.Name = scheduledSuiteName("nightly", now.Truncate(time.Minute))
	added := []vmbenchv1.Finding{{ID: "f1"}}
	sched.Status.Findings = added
	evs := queueConfirmation(sched, added, nil, scheduleObservation{Active: []*vmbenchv1.BenchmarkSuite{cron}, Finished: []*vmbenchv1.BenchmarkSuite{made}},
		[]history.Record{{Suite: scheduledSuiteName("nightly", now.Add(time.Minute).Truncate(time.Minute))}}, now)
	want := []string{made.Name, scheduledSuiteName("nightly", now.Add(2*time.Minute).Truncate(time.Minute))}
	if r := sched.Status.Confirmation; r == nil || !slices.Equal(r.Suites, want) || len(evs) != 1 {
		t.Fatalf("round %+v, events %v; want %v (the suite taken back, then the first free minute)", r, evs, want)
	}
	if sched.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationPending || added[0].Confirmation != vmbenchv1.ConfirmationPending {
		t.Error("the finding is not Pending")
	}
}

// A started suite of the round that is gone without a record (deleted by a Replace start or by
// hand) counts as ended with no result, so that the round does not wait for it forever; one the
// API server still has does not.
func TestLostConfirmationSuitesEndTheRound(t *testing.T) {
	r, c, sched, _ := confirmReconciler(t, vmbenchv1.ConcurrencyForbid, nil)
	got := reconcileSchedule(t, r, c, sched)
	round := got.Status.Confirmation
	if round == nil || round.Started != 1 {
		t.Fatalf("round %+v, want the first suite started", round)
	}
	store := r.History.(*memHistory)
	lost, err := r.lostConfirmations(context.Background(), got, scheduleObservation{}, store.records)
	if err != nil || len(lost) != 0 {
		t.Fatalf("lost %v, %v while the API server has the suite; want none", lost, err)
	}
	s := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "bench", Name: round.Suites[0]}, s); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	lost, err = r.lostConfirmations(context.Background(), got, scheduleObservation{}, store.records)
	if err != nil || !lost[round.Suites[0]] || len(lost) != 1 {
		t.Fatalf("lost %v, %v; want only the deleted %s", lost, err, round.Suites[0])
	}
	// With the second recorded, the round ends.
	store.records = append(store.records, history.Record{Suite: round.Suites[1], Phase: vmbenchv1.SuiteComplete})
	found, _, err := analyzeHistory(store.records, findingPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	evs := settleConfirmation(got, found, store.records, lost)
	if got.Status.Confirmation != nil || len(evs) != 1 || !strings.Contains(evs[0].note, "failed or were deleted") {
		t.Errorf("round %+v, events %+v; want the round ended, saying a suite was lost", got.Status.Confirmation, evs)
	}
}

// A finding its confirmation runs did not confirm is confirmed when a later analysis finds the
// change again; not before.
func TestConfirmLaterWhenTheChangeComesBack(t *testing.T) {
	recs := synthHistory(synth{runs: 18, at: 8, vmStep: 0.95, ctrStep: 1, seed: 1})
	s := testSchedule()
	s.Status.Findings = []vmbenchv1.Finding{{ID: "f1", Benchmark: "sysbench-cpu", Metric: "events", Platform: "vm", Arm: vmbenchv1.ArmVM,
		After: "nightly-08", Direction: "down", Regression: true, State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationNotConfirmed}}
	if evs := confirmLater(s, nil, recs); len(evs) != 0 || s.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationNotConfirmed {
		t.Fatalf("confirmed without the change found: %s, %v", s.Status.Findings[0].Confirmation, evs)
	}
	again := []vmbenchv1.Finding{{ID: "f1b", Benchmark: "sysbench-cpu", Metric: "events", Platform: "vm", Arm: vmbenchv1.ArmVM,
		After: "nightly-07", Direction: "down"}}
	evs := confirmLater(s, again, recs)
	if s.Status.Findings[0].Confirmation != vmbenchv1.ConfirmationConfirmed || len(evs) != 1 || evs[0].reason != vmbenchv1.ReasonChangeConfirmed {
		t.Fatalf("finding %s, events %v; want Confirmed with one event", s.Status.Findings[0].Confirmation, evs)
	}
}

// Under Replace a confirmation suite replaces an unfinished cron suite, as a cron start would, but
// never a suite of its own round: the second waits for the first.
func TestReconcileConfirmationUnderReplace(t *testing.T) {
	r, c, sched, _ := confirmReconciler(t, vmbenchv1.ConcurrencyReplace, nil)
	cron := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: sched.Namespace,
		Name:        scheduledSuiteName("nightly", time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)),
		Annotations: map[string]string{vmbenchv1.AnnotationScheduledAt: "2026-11-20T03:00:00Z"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
			Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}}}
	if err := c.Create(context.Background(), cron); err != nil {
		t.Fatal(err)
	}
	got := reconcileSchedule(t, r, c, sched)
	round := got.Status.Confirmation
	if round == nil || round.Started != 1 {
		t.Fatalf("round %+v, want the first confirmation started in place of the cron suite", round)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(cron), &vmbenchv1.BenchmarkSuite{}); err == nil {
		t.Error("the unfinished cron suite was not replaced")
	}
	got = reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); !slices.Equal(s, round.Suites[:1]) || got.Status.Confirmation.Started != 1 {
		t.Fatalf("confirmation suites %v (started %d), want only %s: the second waits for it", s, got.Status.Confirmation.Started, round.Suites[0])
	}
}

// suspectHistory has a 6% step of the VM arm two runs before its end: too few runs after it for a
// change, so the analysis has suspects and no finding.
func suspectHistory(t *testing.T) ([]history.Record, []seriesAnalysis) {
	t.Helper()
	recs := synthHistory(synth{runs: 14, at: 12, vmStep: 0.94, ctrStep: 1, seed: 3})
	found, all, err := analyzeHistory(recs, findingPlatforms)
	suspects := suspectsOf(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 || len(suspects) == 0 {
		t.Fatalf("the history has %d findings and %d suspects, want suspects only", len(found), len(suspects))
	}
	return recs, suspects
}

// suspectRuns is how many runs a round for suspects has: the most one asks for, at most runs.
func suspectRuns(suspects []seriesAnalysis, runs int) int {
	want := 0
	for _, sa := range suspects {
		want = max(want, min(sa.analysis.Suspect.ConfirmationRuns, runs))
	}
	return want
}

func suspectKeys(suspects []seriesAnalysis) []string {
	var out []string
	for _, sa := range suspects {
		out = append(out, suspectKey(sa))
	}
	return out
}

// fakeSuspect is a suspect of platform's arm whose step starts at run `at` of a series of 12 runs.
func fakeSuspect(platform string, at, runs int) seriesAnalysis {
	s := &findingSeries{Benchmark: "sysbench-cpu", Metric: "events", Platform: platform, Arm: vmbenchv1.ArmVM}
	for i := range 12 {
		s.Runs = append(s.Runs, detect.Run{ID: fmt.Sprintf("nightly-%02d", i)})
	}
	return seriesAnalysis{series: s, analysis: detect.Analysis{Suspect: &detect.Suspect{
		Step: detect.Step{Index: at, RunID: s.Runs[at].ID, Direction: detect.Down, Ratio: 0.95, PValue: 0.01}, ConfirmationRuns: runs}}}
}

func drainEvents(rec *events.FakeRecorder, reason string) []string {
	var out []string
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.Contains(e, reason) {
			out = append(out, e)
		}
	}
	return out
}

// Under Forbid a new suspect queues at once a round of the runs it asks for (at most the default
// 2), started one after the other, and its key is remembered: the reconciles after it, also once
// the round has ended, queue nothing more for it.
func TestReconcileQueuesConfirmationForANewSuspect(t *testing.T) {
	recs, suspects := suspectHistory(t)
	want := suspectRuns(suspects, defaultConfirmationRuns)
	if want < 1 {
		t.Fatalf("the suspects ask for %d runs, want at least 1", want)
	}
	keys := suspectKeys(suspects)
	r, c, sched, rec := confirmReconcilerWith(t, vmbenchv1.ConcurrencyForbid, nil, recs)
	got := reconcileSchedule(t, r, c, sched)
	round := got.Status.Confirmation
	if len(got.Status.Findings) != 0 || round == nil || len(round.Suites) != want || len(round.Findings) != 0 || !slices.Equal(round.Suspects, keys) ||
		round.Started != 1 || round.Remaining != int32(want) {
		t.Fatalf("findings %+v, round %+v; want no finding and a round of %d suite(s) for the suspects %v, the first started",
			got.Status.Findings, round, want, keys)
	}
	if !slices.Equal(got.Status.SuspectsQueued, keys) {
		t.Errorf("status.suspectsQueued %v, want %v", got.Status.SuspectsQueued, keys)
	}
	if s := confirmationSuites(t, c); !slices.Equal(s, round.Suites[:1]) {
		t.Fatalf("confirmation suites %v, want only %s under Forbid", s, round.Suites[0])
	}
	made := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: sched.Namespace, Name: round.Suites[0]}, made); err != nil {
		t.Fatal(err)
	}
	if a := made.Annotations[annotationConfirms]; a != strings.Join(keys, ",") {
		t.Errorf("annotation %s %q on the confirmation suite, want the suspects' keys %v", annotationConfirms, a, keys)
	}
	cs := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionChangeSuspected)
	if cs == nil || cs.Status != metav1.ConditionTrue || !strings.Contains(cs.Message, "The confirmation suites "+strings.Join(round.Suites, ", ")+" are queued for it") {
		t.Errorf("ChangeSuspected %+v, want True naming the confirmation suites %v", cs, round.Suites)
	}
	all := drainEvents(rec, "")
	if waits := slices.DeleteFunc(slices.Clone(all), func(e string) bool { return !strings.Contains(e, vmbenchv1.ReasonConfirmationWaits) }); len(waits) != 0 {
		t.Errorf("events %q: waiting under Forbid is no refusal", waits)
	}
	queued := slices.DeleteFunc(all, func(e string) bool { return !strings.Contains(e, vmbenchv1.ReasonConfirmationQueued) })
	if len(queued) != 1 || !strings.Contains(queued[0], "sysbench-cpu events on vm (vm) down by -") || !strings.Contains(queued[0], round.Suites[0]) {
		t.Errorf("ConfirmationQueued events %q, want one naming the vm series, its step and the suites", queued)
	}

	// Again: the same suspects queue nothing.
	got = reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); len(s) != 1 || !slices.Equal(got.Status.Confirmation.Suites, round.Suites) {
		t.Fatalf("confirmation suites %v, round %+v after a second reconcile; want the same round", s, got.Status.Confirmation)
	}
	// The round's suites end (their records add no result): the round ends and the suspects, still
	// there, queue nothing more.
	for i, name := range round.Suites {
		finishFake(t, c, name)
		got = reconcileSchedule(t, r, c, got)
		if i < len(round.Suites)-1 && got.Status.Confirmation == nil {
			t.Fatalf("the round ended after %d of its %d suites", i+1, len(round.Suites))
		}
	}
	got = reconcileSchedule(t, r, c, got)
	if got.Status.Confirmation != nil || len(confirmationSuites(t, c)) != want || !slices.Equal(got.Status.SuspectsQueued, keys) {
		t.Fatalf("round %+v, suites %v, suspectsQueued %v; want the round ended, no other suite, the keys kept",
			got.Status.Confirmation, confirmationSuites(t, c), got.Status.SuspectsQueued)
	}
	cs = meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionChangeSuspected)
	if cs == nil || cs.Status != metav1.ConditionTrue || !strings.Contains(cs.Message, "confirmation runs queued for it are recorded and did not settle it") {
		t.Errorf("ChangeSuspected %+v, want True saying its confirmation runs did not settle it", cs)
	}
	if q := drainEvents(rec, vmbenchv1.ReasonConfirmationQueued); len(q) != 0 {
		t.Errorf("ConfirmationQueued events %q after the first, want none", q)
	}
}

// Under Allow the suspects' runs start at once, as many as they ask for up to spec.confirmation.runs;
// with runs 0 nothing is queued and ChangeSuspected leaves it to the schedule.
func TestReconcileSuspectConfirmationUnderAllowAndOff(t *testing.T) {
	recs, suspects := suspectHistory(t)
	want := suspectRuns(suspects, vmbenchv1.MaxConfirmationRuns)
	r, c, sched, _ := confirmReconcilerWith(t, vmbenchv1.ConcurrencyAllow, ptr.To[int32](vmbenchv1.MaxConfirmationRuns), recs)
	got := reconcileSchedule(t, r, c, sched)
	if s := confirmationSuites(t, c); len(s) != want || got.Status.Confirmation == nil || got.Status.Confirmation.Started != int32(want) {
		t.Fatalf("confirmation suites %v, round %+v; want the %d the suspects ask for, started at once", s, got.Status.Confirmation, want)
	}
	reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); len(s) != want {
		t.Fatalf("confirmation suites %v after a second reconcile, want still %d", s, want)
	}

	r, c, sched, rec := confirmReconcilerWith(t, vmbenchv1.ConcurrencyAllow, ptr.To[int32](0), recs)
	got = reconcileSchedule(t, r, c, sched)
	if s := confirmationSuites(t, c); len(s) != 0 || got.Status.Confirmation != nil || len(got.Status.SuspectsQueued) != 0 {
		t.Fatalf("suites %v, round %+v, suspectsQueued %v; want nothing with runs 0", s, got.Status.Confirmation, got.Status.SuspectsQueued)
	}
	if cs := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionChangeSuspected); cs == nil ||
		!strings.Contains(cs.Message, "more scheduled runs will confirm or clear it") {
		t.Errorf("ChangeSuspected %+v, want it to leave the suspect to the schedule", cs)
	}
	if q := drainEvents(rec, vmbenchv1.ReasonConfirmationQueued); len(q) != 0 {
		t.Errorf("ConfirmationQueued events %q with runs 0", q)
	}
}

// A suspect while a round runs joins it with no new suite and is remembered; the same suspect, or
// its step one run off, never queues again; a step of the same series far from it is a new suspect.
func TestQueueConfirmationSuspectJoinsTheRoundUnderWay(t *testing.T) {
	sched := testSchedule()
	now := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	first := fakeSuspect("vm", 8, 3)
	evs := queueConfirmation(sched, nil, []seriesAnalysis{first}, scheduleObservation{}, nil, now)
	round := sched.Status.Confirmation
	if round == nil || len(round.Suites) != 2 || !slices.Equal(round.Suspects, []string{suspectKey(first)}) || len(evs) != 1 {
		t.Fatalf("round %+v, events %v; want 2 suites (the 3 asked for, at most the default 2) for %s", round, evs, suspectKey(first))
	}
	suites := slices.Clone(round.Suites)

	for _, again := range []seriesAnalysis{first, fakeSuspect("vm", 9, 3), fakeSuspect("vm", 7, 3)} {
		if evs := queueConfirmation(sched, nil, []seriesAnalysis{again}, scheduleObservation{}, nil, now); len(evs) != 0 ||
			len(sched.Status.SuspectsQueued) != 1 || len(sched.Status.Confirmation.Suspects) != 1 {
			t.Fatalf("the suspect at %s queued again: events %v, status %+v", again.analysis.Suspect.RunID, evs, sched.Status)
		}
	}

	second := fakeSuspect("container", 10, 5)
	evs = queueConfirmation(sched, nil, []seriesAnalysis{second}, scheduleObservation{}, nil, now)
	round = sched.Status.Confirmation
	if !slices.Equal(round.Suites, suites) || !slices.Equal(round.Suspects, []string{suspectKey(first), suspectKey(second)}) ||
		!slices.Equal(sched.Status.SuspectsQueued, round.Suspects) || len(evs) != 1 || !strings.Contains(evs[0].note, "join the confirmation runs under way") ||
		!strings.Contains(evs[0].note, "sysbench-cpu events on container") {
		t.Fatalf("round %+v, suspectsQueued %v, events %+v; want the second suspect joined with no new suite", round, sched.Status.SuspectsQueued, evs)
	}
	far := fakeSuspect("vm", 3, 2)
	if evs := queueConfirmation(sched, nil, []seriesAnalysis{far}, scheduleObservation{}, nil, now); len(evs) != 1 || len(round.Suspects) != 3 {
		t.Fatalf("a step of the vm series 5 runs from the first was not queued: events %v, round %+v", evs, round)
	}
}

// status.suspectsQueued keeps the newest keys only.
func TestSuspectsQueuedIsBounded(t *testing.T) {
	sched := testSchedule()
	now := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	for i := range MaxSuspectsQueued + 3 {
		queueConfirmation(sched, nil, []seriesAnalysis{fakeSuspect(fmt.Sprintf("vm%d", i), 8, 1)}, scheduleObservation{}, nil, now)
	}
	q := sched.Status.SuspectsQueued
	if len(q) != MaxSuspectsQueued || q[len(q)-1] != suspectKey(fakeSuspect(fmt.Sprintf("vm%d", MaxSuspectsQueued+2), 8, 1)) ||
		len(sched.Status.Confirmation.Suspects) != MaxSuspectsQueued {
		t.Errorf("suspectsQueued has %d keys (newest %s), round %d; want the newest %d", len(q), q[len(q)-1],
			len(sched.Status.Confirmation.Suspects), MaxSuspectsQueued)
	}
}

// A suspect's round planned again after its status write was lost takes back the suite made for it.
func TestQueueConfirmationTakesBackASuspectsSuite(t *testing.T) {
	sched := testSchedule()
	now := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	sa := fakeSuspect("vm", 8, 2)
	made := scheduleFinishedSuite(30, vmbenchv1.SuiteComplete, true)
	made.Annotations[annotationConfirms] = suspectKey(sa)
	queueConfirmation(sched, nil, []seriesAnalysis{sa}, scheduleObservation{Finished: []*vmbenchv1.BenchmarkSuite{made}}, nil, now)
	want := []string{made.Name, scheduledSuiteName("nightly", now.Truncate(time.Minute))}
	if r := sched.Status.Confirmation; r == nil || !slices.Equal(r.Suites, want) {
		t.Fatalf("round %+v; want %v (the suite taken back, then the first free minute)", r, want)
	}
}

// A round for suspects has the most runs one of them asks for, at most spec.confirmation.runs; a
// round with a finding has spec.confirmation.runs.
func TestQueueConfirmationRunsForSuspects(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		runs    *int32
		asks    []int
		finding bool
		want    int
	}{
		{name: "the most asked", asks: []int{1, 2}, runs: ptr.To[int32](5), want: 2},
		{name: "capped by spec.confirmation.runs", asks: []int{1, 4}, want: 2},
		{name: "the most asked, first", asks: []int{3, 1}, runs: ptr.To[int32](5), want: 3},
		{name: "one asked", asks: []int{1, 1}, want: 1},
		{name: "with a finding", asks: []int{1}, finding: true, runs: ptr.To[int32](4), want: 4},
		{name: "off", asks: []int{3}, runs: ptr.To[int32](0), want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := testSchedule()
			if tc.runs != nil {
				sched.Spec.Confirmation = &vmbenchv1.ScheduleConfirmation{Runs: tc.runs}
			}
			var suspects []seriesAnalysis
			for i, n := range tc.asks {
				suspects = append(suspects, fakeSuspect(fmt.Sprintf("vm%d", i), 8, n))
			}
			var added []vmbenchv1.Finding
			if tc.finding {
				added = []vmbenchv1.Finding{{ID: "f1"}}
				sched.Status.Findings = added
			}
			queueConfirmation(sched, added, suspects, scheduleObservation{}, nil, now)
			got := 0
			if r := sched.Status.Confirmation; r != nil {
				got = len(r.Suites)
				if len(r.Suspects) != len(tc.asks) {
					t.Errorf("round settles %v, want the %d suspects", r.Suspects, len(tc.asks))
				}
			}
			if got != tc.want {
				t.Errorf("%d confirmation suites, want %d", got, tc.want)
			}
		})
	}
}

// A confirmation suite recorded as Failed counts as failed in the verdict's event (mutant C1 of
// the test review): a NotConfirmed verdict after failed runs says that the runs failed.
func TestSettleConfirmationCountsAFailedSuite(t *testing.T) {
	recs := synthHistory(synth{runs: 18, at: 8, vmStep: 0.95, ctrStep: 1, seed: 1})
	recs[17].Phase = vmbenchv1.SuiteFailed
	s := testSchedule()
	s.Status.Findings = []vmbenchv1.Finding{{ID: "f1", Benchmark: "sysbench-cpu", Metric: "events", Platform: "vm", Arm: vmbenchv1.ArmVM,
		After: "nightly-08", Direction: "down", Regression: true, Ratio: 0.95, State: vmbenchv1.FindingUntriaged,
		Confirmation: vmbenchv1.ConfirmationPending}}
	s.Status.Confirmation = &vmbenchv1.ConfirmationRound{Findings: []string{"f1"}, Suites: []string{"nightly-16", "nightly-17"}, Started: 2, Remaining: 2}
	evs := settleConfirmation(s, nil, recs, nil)
	if s.Status.Confirmation != nil || len(evs) != 1 || evs[0].reason != vmbenchv1.ReasonChangeNotConfirmed ||
		!strings.Contains(evs[0].note, "(1 of them failed or were deleted and added no result)") {
		t.Fatalf("round %+v, events %+v; want the round ended and the event saying 1 of the suites failed", s.Status.Confirmation, evs)
	}
}

// The version trigger's suite, just created and neither seen in the cache nor recorded, keeps its
// name: the round takes the next free minute (mutant C2 of the test review), or startConfirmations
// would take the trigger's suite for a confirmation suite made by an earlier pass.
func TestQueueConfirmationSkipsTheTriggerSuitesName(t *testing.T) {
	now := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	sched := testSchedule()
	sched.Spec.Confirmation = &vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](1)}
	first := scheduledSuiteName(sched.Name, now.Truncate(time.Minute))
	sched.Status.LastTrigger = &vmbenchv1.VersionTrigger{Time: metav1.NewTime(now), Suite: first}
	added := []vmbenchv1.Finding{{ID: "f1"}}
	sched.Status.Findings = append([]vmbenchv1.Finding(nil), added...)
	queueConfirmation(sched, added, nil, scheduleObservation{}, nil, now)
	want := scheduledSuiteName(sched.Name, now.Truncate(time.Minute).Add(time.Minute))
	if r := sched.Status.Confirmation; r == nil || !slices.Equal(r.Suites, []string{want}) {
		t.Fatalf("round %+v; want %s, the minute after the trigger's suite %s", r, want, first)
	}
}
