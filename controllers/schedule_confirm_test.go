package controllers

import (
	"context"
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
	scheme := NewScheme()
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
	store := &memHistory{records: synthHistory(synth{runs: 16, at: 8, vmStep: 0.95, ctrStep: 1, kernel: "6.8.0", seed: 1})}
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
