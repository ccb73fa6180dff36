package controllers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var queueEpoch = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

// queued builds a suite of namespace ns created at second sec after queueEpoch; opts set its status.
func queued(ns, name string, sec int, opts ...func(*vmbenchv1.BenchmarkSuite)) vmbenchv1.BenchmarkSuite {
	s := vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(queueEpoch.Add(time.Duration(sec) * time.Second)),
	}}
	for _, o := range opts {
		o(&s)
	}
	return s
}

// admitted gives a suite a start time and a phase, with its first run in the given phase.
func admitted(phase vmbenchv1.SuitePhase, run vmbenchv1.RunPhase) func(*vmbenchv1.BenchmarkSuite) {
	return func(s *vmbenchv1.BenchmarkSuite) {
		s.Status.StartTime = &metav1.Time{Time: queueEpoch}
		s.Status.Phase = phase
		s.Status.Runs = []vmbenchv1.RunStatus{{Name: s.Name + "-container-1", Phase: run}}
	}
}

func withPhase(phase vmbenchv1.SuitePhase) func(*vmbenchv1.BenchmarkSuite) {
	return func(s *vmbenchv1.BenchmarkSuite) { s.Status.Phase = phase }
}

func deleting(s *vmbenchv1.BenchmarkSuite) {
	s.DeletionTimestamp = &metav1.Time{Time: queueEpoch}
	s.Finalizers = []string{"example.com/keep"}
}

func key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}

// selfIn is the suite of the list with that key, or a suite that the list does not have yet, the
// youngest.
func selfIn(suites []vmbenchv1.BenchmarkSuite, k types.NamespacedName) *vmbenchv1.BenchmarkSuite {
	for i := range suites {
		if suites[i].Namespace == k.Namespace && suites[i].Name == k.Name {
			return &suites[i]
		}
	}
	s := queued(k.Namespace, k.Name, 1000)
	return &s
}

func keysOf(qs []queueSuite) []string {
	out := []string{}
	for _, q := range qs {
		out = append(out, q.String())
	}
	return out
}

func TestDecideAdmission(t *testing.T) {
	running := admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning)
	tests := []struct {
		name         string
		suites       []vmbenchv1.BenchmarkSuite
		self         types.NamespacedName
		slots        int
		wantAdmit    bool
		wantPosition int
		wantRunning  []string
		wantAhead    []string
	}{
		{
			name:   "alone on an idle cluster",
			suites: []vmbenchv1.BenchmarkSuite{queued("a", "x", 0)},
			self:   key("a", "x"), slots: 1, wantAdmit: true, wantRunning: []string{}, wantAhead: []string{},
		},
		{
			name:   "not yet in the list it decides on (a lagging cache): decided as if it were",
			suites: []vmbenchv1.BenchmarkSuite{queued("a", "y", 5, running)},
			self:   key("a", "x"), slots: 1, wantPosition: 1, wantRunning: []string{"a/y (run y-container-1)"}, wantAhead: []string{},
		},
		{
			name:   "behind a running suite of another namespace",
			suites: []vmbenchv1.BenchmarkSuite{queued("b", "old", 0, running), queued("a", "x", 10)},
			self:   key("a", "x"), slots: 1, wantPosition: 1, wantRunning: []string{"b/old (run old-container-1)"}, wantAhead: []string{},
		},
		{
			name: "creation order, then namespace, then name",
			suites: []vmbenchv1.BenchmarkSuite{
				queued("a", "run", 0, running), queued("b", "late", 20), queued("b", "y", 10), queued("b", "x", 10), queued("a", "z", 10),
				queued("b", "w", 10), queued("a", "first", 5),
			},
			self: key("b", "x"), slots: 1, wantPosition: 4,
			wantRunning: []string{"a/run (run run-container-1)"}, wantAhead: []string{"a/first", "a/z", "b/w"},
		},
		{
			name:   "a free slot goes to the oldest waiting suite, not to a younger one",
			suites: []vmbenchv1.BenchmarkSuite{queued("a", "older", 0), queued("a", "x", 1)},
			self:   key("a", "x"), slots: 1, wantPosition: 1, wantRunning: []string{}, wantAhead: []string{"a/older"},
		},
		{
			name:   "two slots: the second oldest is admitted beside the oldest",
			suites: []vmbenchv1.BenchmarkSuite{queued("a", "older", 0), queued("a", "x", 1), queued("a", "young", 2)},
			self:   key("a", "x"), slots: 2, wantAdmit: true, wantRunning: []string{}, wantAhead: []string{"a/older"},
		},
		{
			name:   "two slots, both taken",
			suites: []vmbenchv1.BenchmarkSuite{queued("a", "p", 0, running), queued("a", "q", 1, running), queued("a", "x", 2)},
			self:   key("a", "x"), slots: 2, wantPosition: 1,
			wantRunning: []string{"a/p (run p-container-1)", "a/q (run q-container-1)"}, wantAhead: []string{},
		},
		{
			name: "admitted but not started, or with a status from before the queue, still holds its slot",
			suites: []vmbenchv1.BenchmarkSuite{
				queued("a", "p", 0, admitted(vmbenchv1.SuitePending, vmbenchv1.RunPending)),
				queued("a", "q", 1, admitted("", vmbenchv1.RunRunning)), queued("a", "x", 2),
			},
			self: key("a", "x"), slots: 2, wantPosition: 1,
			wantRunning: []string{"a/p (run p-container-1)", "a/q (run q-container-1)"}, wantAhead: []string{},
		},
		{
			name: "ended, deleted and invalid suites hold no slot and are not in line",
			suites: []vmbenchv1.BenchmarkSuite{
				queued("a", "done", 0, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunSucceeded)),
				queued("a", "failed", 1, admitted(vmbenchv1.SuiteFailed, vmbenchv1.RunFailed)),
				queued("a", "gone", 2, running, deleting),
				queued("a", "invalid", 3, withPhase(vmbenchv1.SuiteFailed)),
				queued("a", "leaving", 4, deleting),
				queued("a", "x", 5),
			},
			self: key("a", "x"), slots: 1, wantAdmit: true, wantRunning: []string{}, wantAhead: []string{},
		},
		{
			name:   "no limit",
			suites: []vmbenchv1.BenchmarkSuite{queued("a", "p", 0, running), queued("a", "x", 1)},
			self:   key("a", "x"), slots: 0, wantAdmit: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideAdmission(tt.suites, selfIn(tt.suites, tt.self), tt.slots)
			if got.Admit != tt.wantAdmit || got.Position != tt.wantPosition {
				t.Errorf("admit %v at position %d, want admit %v at position %d", got.Admit, got.Position, tt.wantAdmit, tt.wantPosition)
			}
			if tt.slots <= 0 {
				return
			}
			if diff := cmp.Diff(tt.wantRunning, keysOf(got.Running)); diff != "" {
				t.Errorf("running (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAhead, keysOf(got.Ahead)); diff != "" {
				t.Errorf("ahead (-want +got):\n%s", diff)
			}
		})
	}
}

// Whatever the order of the list, one suite at most is admitted per free slot: every suite in line
// decides on the same order.
func TestEveryOrderAdmitsTheSameSuite(t *testing.T) {
	suites := []vmbenchv1.BenchmarkSuite{
		queued("b", "a", 3), queued("a", "b", 3), queued("a", "a", 3), queued("c", "old", 1), queued("a", "young", 9),
	}
	for shift := range suites {
		list := append(append([]vmbenchv1.BenchmarkSuite{}, suites[shift:]...), suites[:shift]...)
		var admittedKeys []string
		for _, s := range list {
			if decideAdmission(list, &s, 1).Admit {
				admittedKeys = append(admittedKeys, s.Namespace+"/"+s.Name)
			}
		}
		if diff := cmp.Diff([]string{"c/old"}, admittedKeys); diff != "" {
			t.Errorf("list rotated by %d (-want +got):\n%s", shift, diff)
		}
	}
}

func TestQueueMessageNamesThePlaceTheRunAndTheWayOut(t *testing.T) {
	a := decideAdmission([]vmbenchv1.BenchmarkSuite{
		queued("team", "big", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning)),
		queued("team", "w1", 1), queued("team", "w2", 2), queued("team", "w3", 3), queued("team", "w4", 4), queued("team", "x", 5),
	}, selfIn(nil, key("team", "x")), 1)
	msg := a.message()
	for _, want := range []string{
		"5th in line", "running now (1 of 1 slots): team/big (run big-container-1)",
		"ahead in line: team/w1, team/w2, team/w3, and 1 more", "does not count against spec.timeout",
		"delete the suites running or ahead of it", "--max-active-runs",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	line := []vmbenchv1.BenchmarkSuite{queued("a", "older", 0), queued("a", "x", 1)}
	idle := decideAdmission(line, selfIn(line, key("a", "x")), 1)
	if msg := idle.message(); !strings.Contains(msg, "1st in line") || !strings.Contains(msg, "none (a suite ahead is being admitted)") {
		t.Errorf("message %q", msg)
	}
}

func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th",
		21: "21st", 22: "22nd", 23: "23rd", 101: "101st", 111: "111th", 112: "112th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestSetQueued(t *testing.T) {
	wait := &admission{Position: 2, Slots: 1, Running: []queueSuite{{Key: key("a", "p"), Run: "p-vm-1"}}}
	tests := []struct {
		name         string
		start        *metav1.Time
		wait         *admission
		invalid      error
		wantStatus   metav1.ConditionStatus
		wantReason   string
		wantMessage  string
		wantPosition int32
	}{
		{"waiting", nil, wait, nil, metav1.ConditionTrue, vmbenchv1.ReasonWaitingForRun, "2nd in line", 2},
		{"admitted", &metav1.Time{Time: queueEpoch}, nil, nil, metav1.ConditionFalse, vmbenchv1.ReasonAdmitted, "admitted at 2026-11-24T10:00:00Z", 0},
		{"invalid spec", nil, nil, errors.New("bad"), metav1.ConditionFalse, vmbenchv1.ReasonInvalidSpec, "does not wait", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{StartTime: tt.start, QueuePosition: 7}
			setQueued(st, tt.wait, tt.invalid, 3)
			c := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionQueued)
			if c == nil || c.Status != tt.wantStatus || c.Reason != tt.wantReason || !strings.Contains(c.Message, tt.wantMessage) || c.ObservedGeneration != 3 {
				t.Errorf("condition %+v, want %s %s containing %q", c, tt.wantStatus, tt.wantReason, tt.wantMessage)
			}
			if st.QueuePosition != tt.wantPosition {
				t.Errorf("queue position %d, want %d", st.QueuePosition, tt.wantPosition)
			}
		})
	}
}

// The watch passes exactly the changes that move the suites in line.
func TestQueueChangedPassesWhatMovesTheLine(t *testing.T) {
	waiting := queued("a", "x", 0)
	pending := queued("a", "x", 0, admitted(vmbenchv1.SuitePending, vmbenchv1.RunPending))
	running := queued("a", "x", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning))
	nextRun := running.DeepCopy()
	nextRun.Status.Runs = []vmbenchv1.RunStatus{{Name: "x-container-1", Phase: vmbenchv1.RunSucceeded}, {Name: "x-vm-1", Phase: vmbenchv1.RunPending}}
	samples := running.DeepCopy()
	samples.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "cpu", Platform: "container"}}
	moved := waiting.DeepCopy()
	moved.Status.QueuePosition = 3
	done := queued("a", "x", 0, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunSucceeded))
	gone := running.DeepCopy()
	deleting(gone)
	tests := []struct {
		name     string
		old, new *vmbenchv1.BenchmarkSuite
		want     bool
	}{
		{"admitted", &waiting, &pending, true},
		{"its run started: the same run", &pending, &running, false},
		{"its next run", &running, nextRun, true},
		{"results of the running run", &running, samples, false},
		{"its own place in line", &waiting, moved, false},
		{"ended", &running, &done, true},
		{"being deleted", &running, gone, true},
	}
	p := queueChanged()
	for _, tt := range tests {
		if got := p.Update(event.UpdateEvent{ObjectOld: tt.old, ObjectNew: tt.new}); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if !p.Delete(event.DeleteEvent{Object: &running}) {
		t.Error("a deletion must move the line")
	}
	if p.Create(event.CreateEvent{Object: &waiting}) {
		t.Error("a new suite goes to the back of the line and moves no one")
	}
}

// A cache that lags (here: it has not seen suite "old", which holds the slot) lets a suite through to
// the admission, where the uncached list keeps it waiting.
func TestAdmissionIsDecidedAgainAroundTheCache(t *testing.T) {
	ctx := context.Background()
	old := queued("a", "old", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning))
	self := queued("a", "x", 5)
	cache := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(self.DeepCopy()).Build()
	apiServer := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(old.DeepCopy(), self.DeepCopy()).Build()
	r := &SuiteReconciler{Client: cache, APIReader: apiServer, MaxActiveRuns: 1, Namespaces: []string{"a"}}

	suite := &vmbenchv1.BenchmarkSuite{}
	if err := cache.Get(ctx, key("a", "x"), suite); err != nil {
		t.Fatal(err)
	}
	d, err := r.admit(ctx, suite, queueEpoch)
	d.done()
	if err != nil || d.Admitted || d.Wait == nil || d.Wait.Position != 1 || suite.Status.StartTime != nil {
		t.Fatalf("admit = %+v, %v (start %v), want a wait at position 1 behind a/old", d, err, suite.Status.StartTime)
	}

	// A cache older than the API server's suite: the reconcile comes back rather than decide on it.
	if err := apiServer.Delete(ctx, old.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	newer := suite.DeepCopy()
	newer.Labels = map[string]string{"touched": "yes"}
	if err := apiServer.Update(ctx, newer); err != nil {
		t.Fatal(err)
	}
	d, err = r.admit(ctx, suite, queueEpoch)
	d.done()
	if err != nil || !d.Stale || d.Admitted {
		t.Fatalf("admit = %+v, %v, want stale", d, err)
	}
}

// Suite "b" is admitted; before its status is written, suite "a" appears, created in the same second,
// which puts it first in line. "a" must not take the slot that "b" holds but has not written yet:
// the admission mutex keeps "a" out until "b"'s status write is done.
func TestAnAdmissionIsWrittenBeforeTheNextIsDecided(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(ptr.To(queued("ns", "b", 5))).Build()
	r := &SuiteReconciler{Client: c, APIReader: c, MaxActiveRuns: 1}
	b := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(ctx, key("ns", "b"), b); err != nil {
		t.Fatal(err)
	}
	db, err := r.admit(ctx, b, queueEpoch)
	if err != nil || !db.Admitted {
		t.Fatalf("admit b = %+v, %v", db, err)
	}
	if err := c.Create(ctx, ptr.To(queued("ns", "a", 5))); err != nil {
		t.Fatal(err)
	}
	a := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(ctx, key("ns", "a"), a); err != nil {
		t.Fatal(err)
	}
	result := make(chan queueDecision, 1)
	go func() {
		da, err := r.admit(ctx, a, queueEpoch)
		da.done()
		if err != nil {
			t.Error(err)
		}
		result <- da
	}()
	// Give the other reconcile every chance to decide before b's write; only the mutex stops it.
	time.Sleep(100 * time.Millisecond)
	if err := c.Update(ctx, b); err != nil {
		t.Fatal(err)
	}
	db.done()
	if da := <-result; da.Admitted || da.Wait == nil || da.Wait.Position != 1 {
		t.Fatalf("admit a = %+v, want a wait behind b, which holds the slot", da)
	}
}

// A freed slot brings back only the suites that can take it; an admission brings back everyone in
// line, whose place changed.
func TestQueueRequests(t *testing.T) {
	ctx := context.Background()
	line := []vmbenchv1.BenchmarkSuite{queued("a", "w2", 2), queued("a", "w1", 1), queued("b", "w3", 3)}
	done := queued("a", "done", 0, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunSucceeded))
	gone := queued("a", "gone", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning), deleting)
	holder := queued("a", "holder", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning))
	invalid := queued("a", "invalid", 0, withPhase(vmbenchv1.SuiteFailed))
	objs := []client.Object{done.DeepCopy(), gone.DeepCopy(), holder.DeepCopy(), invalid.DeepCopy()}
	for i := range line {
		objs = append(objs, line[i].DeepCopy())
	}
	c := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(objs...).Build()
	names := func(reqs []reconcile.Request) []string {
		out := []string{}
		for _, r := range reqs {
			out = append(out, r.String())
		}
		slices.Sort(out)
		return out
	}
	everyone := func(self string) []string {
		return names([]reconcile.Request{{NamespacedName: key("a", self)}, {NamespacedName: key("a", "w1")},
			{NamespacedName: key("a", "w2")}, {NamespacedName: key("b", "w3")}})
	}
	for _, tt := range []struct {
		name  string
		obj   *vmbenchv1.BenchmarkSuite
		slots int
		want  []string
	}{
		{"a holder ended", &done, 1, names([]reconcile.Request{{NamespacedName: key("a", "done")}, {NamespacedName: key("a", "w1")}})},
		{"a holder is being deleted", &gone, 2, names([]reconcile.Request{{NamespacedName: key("a", "gone")},
			{NamespacedName: key("a", "w1")}, {NamespacedName: key("a", "w2")}})},
		{"a suite was admitted or moved to its next run", &holder, 1, everyone("holder")},
		{"a suite left the line", &invalid, 1, everyone("invalid")},
		{"no limit", &done, 0, everyone("done")},
	} {
		r := &SuiteReconciler{Client: c, MaxActiveRuns: tt.slots}
		if diff := cmp.Diff(tt.want, names(r.queueRequests(ctx, tt.obj))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
