package schedule

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// boundsReconciler is a schedule of spec change applied to a "*/5 * * * *" schedule created at
// 00:00, with a fake client and a clock that the test moves; its suites never finish.
func boundsReconciler(t *testing.T, change func(*vmbenchv1.BenchmarkScheduleSpec)) (*ScheduleReconciler, client.Client,
	*vmbenchv1.BenchmarkSchedule, *clocktesting.FakePassiveClock, *events.FakeRecorder) {
	t.Helper()
	scheme := scheme.New()
	sched := testSchedule()
	sched.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	sched.Spec.Schedule = "*/5 * * * *"
	sched.Spec.Confirmation = &vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](0)}
	if change != nil {
		change(&sched.Spec)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sched).WithStatusSubresource(sched, &vmbenchv1.BenchmarkSuite{}).
		WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
	clock := clocktesting.NewFakePassiveClock(sched.CreationTimestamp.Time)
	rec := events.NewFakeRecorder(1000)
	r := &ScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec, History: &memHistory{}, Clock: clock}
	return r, c, sched, clock, rec
}

// eventsByReason drains the recorder and counts its events by reason.
func eventsByReason(rec *events.FakeRecorder) map[string]int {
	n := map[string]int{}
	for {
		select {
		case e := <-rec.Events:
			n[strings.Fields(e)[1]]++
		default:
			return n
		}
	}
}

func countSuites(t *testing.T, c client.Client) int {
	t.Helper()
	var list vmbenchv1.BenchmarkSuiteList
	if err := c.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// Protects spec.maxActive (S7): under Allow, 100 due starts with none of the suites ending leave
// maxActive suites, not 100, and the wait is said once, in the condition and one event.
func TestAllowStaysAtMaxActive(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxActive *int32
		want      int
	}{
		{"the default", nil, vmbenchv1.DefaultMaxActive},
		{"one", ptr.To[int32](1), 1},
		{"the maximum", ptr.To[int32](vmbenchv1.MaxMaxActive), vmbenchv1.MaxMaxActive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, c, sched, clock, rec := boundsReconciler(t, func(s *vmbenchv1.BenchmarkScheduleSpec) {
				s.ConcurrencyPolicy, s.MaxActive = vmbenchv1.ConcurrencyAllow, tc.maxActive
			})
			var got *vmbenchv1.BenchmarkSchedule
			for i := 1; i <= 100; i++ {
				clock.SetTime(sched.CreationTimestamp.Add(time.Duration(i)*5*time.Minute + 10*time.Second))
				got = reconcileSchedule(t, r, c, sched)
			}
			if n := countSuites(t, c); n != tc.want {
				t.Errorf("%d suites after 100 due starts, want %d (spec.maxActive)", n, tc.want)
			}
			if len(got.Status.Active) != tc.want {
				t.Errorf("status.active lists %d suites, want %d", len(got.Status.Active), tc.want)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionStartSkipped)
			if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != vmbenchv1.ReasonMaxActive ||
				!strings.Contains(cond.Message, "spec.maxActive") {
				t.Fatalf("StartSkipped %+v, want True, %s, naming spec.maxActive", cond, vmbenchv1.ReasonMaxActive)
			}
			if want := sched.CreationTimestamp.Add(100 * 5 * time.Minute); got.Status.SkippedScheduleTime == nil ||
				!got.Status.SkippedScheduleTime.Time.Equal(want) {
				t.Errorf("status.skippedScheduleTime %v, want the latest due time %v", got.Status.SkippedScheduleTime, want)
			}
			evs := eventsByReason(rec)
			if evs[vmbenchv1.ReasonStarted] != tc.want || evs[vmbenchv1.ReasonMaxActive] != 1 {
				t.Errorf("events %v, want %d %s and 1 %s", evs, tc.want, vmbenchv1.ReasonStarted, vmbenchv1.ReasonMaxActive)
			}
		})
	}
}

// Protects the wait told once (S6): a start waiting under Forbid behind a suite that runs for an
// hour is one event, however many due times pass; the condition's message stays the same while
// status.skippedScheduleTime follows the due time.
func TestAWaitingStartIsToldOnce(t *testing.T) {
	r, c, sched, clock, rec := boundsReconciler(t, nil)
	var messages []string
	for i := 1; i <= 12; i++ {
		clock.SetTime(sched.CreationTimestamp.Add(time.Duration(i)*5*time.Minute + 10*time.Second))
		got := reconcileSchedule(t, r, c, sched)
		if i == 1 {
			continue
		}
		cond := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionStartSkipped)
		if cond.Reason != vmbenchv1.ReasonConcurrencyForbid {
			t.Fatalf("due time %d: StartSkipped %s %q, want %s", i, cond.Status, cond.Message, vmbenchv1.ReasonConcurrencyForbid)
		}
		messages = append(messages, cond.Message)
		if want := sched.CreationTimestamp.Add(time.Duration(i) * 5 * time.Minute); !got.Status.SkippedScheduleTime.Time.Equal(want) {
			t.Errorf("due time %d: status.skippedScheduleTime %v, want %v", i, got.Status.SkippedScheduleTime, want)
		}
	}
	for _, m := range messages[1:] {
		if m != messages[0] {
			t.Errorf("the waiting message changed from %q to %q", messages[0], m)
		}
	}
	if evs := eventsByReason(rec); evs[vmbenchv1.ReasonConcurrencyForbid] != 1 || evs[vmbenchv1.ReasonStarted] != 1 {
		t.Errorf("events %v, want 1 %s and 1 %s", evs, vmbenchv1.ReasonStarted, vmbenchv1.ReasonConcurrencyForbid)
	}
	if n := countSuites(t, c); n != 1 {
		t.Errorf("%d suites, want the one that runs", n)
	}
}

// Protects the minimum interval (S6): an every-minute schedule starts nothing and says what to
// change under the default minimum, and runs under a manager whose --min-schedule-interval is 1m,
// as the kind e2e installs it.
func TestEveryMinuteScheduleUnderTheManagersMinimum(t *testing.T) {
	for _, tc := range []struct {
		name   string
		min    time.Duration
		starts int
	}{
		{"the default minimum", 0, 0},
		{"a minimum of one minute", time.Minute, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, c, sched, clock, _ := boundsReconciler(t, func(s *vmbenchv1.BenchmarkScheduleSpec) {
				s.Schedule, s.ConcurrencyPolicy = "* * * * *", vmbenchv1.ConcurrencyAllow
			})
			r.MinInterval = tc.min
			var got *vmbenchv1.BenchmarkSchedule
			for i := 1; i <= 3; i++ {
				clock.SetTime(sched.CreationTimestamp.Add(time.Duration(i)*time.Minute + time.Second))
				got = reconcileSchedule(t, r, c, sched)
			}
			if n := countSuites(t, c); n != tc.starts {
				t.Errorf("%d suites after 3 minutes, want %d", n, tc.starts)
			}
			valid := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionValid)
			if tc.starts == 0 && (valid.Status != metav1.ConditionFalse || valid.Reason != vmbenchv1.ReasonTooFrequent ||
				!strings.Contains(valid.Message, "*/5 * * * *")) {
				t.Errorf("Valid %s %s %q, want False, %s, with an example that starts every 5 minutes", valid.Status, valid.Reason,
					valid.Message, vmbenchv1.ReasonTooFrequent)
			}
			if tc.starts > 0 && valid.Status != metav1.ConditionTrue {
				t.Errorf("Valid %s %q under a minimum of %s", valid.Status, valid.Message, tc.min)
			}
		})
	}
}

// Protects spec.maxActive for confirmation runs: under Allow, a round of 5 starts 3 (the default
// maxActive) and the next one only when one of them ends, without a Warning each reconcile.
func TestConfirmationRunsWaitForMaxActive(t *testing.T) {
	r, c, sched, rec := confirmReconciler(t, vmbenchv1.ConcurrencyAllow, ptr.To[int32](vmbenchv1.MaxConfirmationRuns))
	got := reconcileSchedule(t, r, c, sched)
	got = reconcileSchedule(t, r, c, got)
	started := confirmationSuites(t, c)
	if len(started) != vmbenchv1.DefaultMaxActive || got.Status.Confirmation == nil || got.Status.Confirmation.Started != vmbenchv1.DefaultMaxActive {
		t.Fatalf("confirmation suites %v, round %+v; want %d of the round's 5 started", started, got.Status.Confirmation, vmbenchv1.DefaultMaxActive)
	}
	if evs := eventsByReason(rec); evs[vmbenchv1.ReasonConfirmationWaits] != 0 {
		t.Errorf("events %v, want no %s while the round waits for spec.maxActive", evs, vmbenchv1.ReasonConfirmationWaits)
	}
	finishFake(t, c, started[0])
	reconcileSchedule(t, r, c, got)
	if s := confirmationSuites(t, c); len(s) != vmbenchv1.DefaultMaxActive+1 {
		t.Errorf("confirmation suites %v after one ended, want %d", s, vmbenchv1.DefaultMaxActive+1)
	}
}
