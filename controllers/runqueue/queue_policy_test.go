package runqueue

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runqueue/runqueuetest"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// admitted gives a suite a start time and a phase, with its first run in the given phase.
func admitted(phase vmbenchv1.SuitePhase, run vmbenchv1.RunPhase) func(*vmbenchv1.BenchmarkSuite) {
	return func(s *vmbenchv1.BenchmarkSuite) {
		s.Status.StartTime = &metav1.Time{Time: runqueuetest.Epoch}
		s.Status.Phase = phase
		s.Status.Runs = []vmbenchv1.RunStatus{{Name: s.Name + "-container-1", Phase: run}}
	}
}

func withPhase(phase vmbenchv1.SuitePhase) func(*vmbenchv1.BenchmarkSuite) {
	return func(s *vmbenchv1.BenchmarkSuite) { s.Status.Phase = phase }
}

func deleting(s *vmbenchv1.BenchmarkSuite) {
	s.DeletionTimestamp = &metav1.Time{Time: runqueuetest.Epoch}
	s.Finalizers = []string{"example.com/keep"}
}

func keys(qs []queueSuite) []string {
	out := []string{}
	for _, q := range qs {
		out = append(out, q.Key.String())
	}
	return out
}

func waitingAt(ns, name string, sec int) queueSuite {
	return queueSuite{Key: runqueuetest.Key(ns, name), Created: metav1.NewTime(runqueuetest.Epoch.Add(time.Duration(sec) * time.Second))}
}

// The namespaces take turns: one team's twenty suites do not starve the others, and a namespace that
// just had a turn goes behind those that have waited longer.
func TestLineOrderTakesTurnsByNamespace(t *testing.T) {
	tests := []struct {
		name     string
		waiting  []queueSuite
		lastTurn map[string]time.Time
		want     []string
	}{
		{
			name: "one namespace: creation order, then name",
			waiting: []queueSuite{waitingAt("a", "late", 20), waitingAt("a", "y", 10), waitingAt("a", "x", 10),
				waitingAt("a", "first", 5)},
			want: []string{"a/first", "a/x", "a/y", "a/late"},
		},
		{
			name: "a team that created many suites first does not go first with all of them",
			waiting: []queueSuite{waitingAt("big", "s1", 0), waitingAt("big", "s2", 1), waitingAt("big", "s3", 2),
				waitingAt("small", "t1", 10), waitingAt("other", "u1", 11), waitingAt("small", "t2", 12)},
			want: []string{"big/s1", "small/t1", "other/u1", "big/s2", "small/t2", "big/s3"},
		},
		{
			name:     "the namespace whose suite was admitted last goes behind the others",
			waiting:  []queueSuite{waitingAt("big", "s2", 1), waitingAt("small", "t1", 10)},
			lastTurn: map[string]time.Time{"big": runqueuetest.Epoch.Add(time.Hour)},
			want:     []string{"small/t1", "big/s2"},
		},
		{
			name:     "the oldest last turn first; a namespace that never had one before both",
			waiting:  []queueSuite{waitingAt("a", "x", 0), waitingAt("b", "y", 0), waitingAt("c", "z", 50)},
			lastTurn: map[string]time.Time{"a": runqueuetest.Epoch.Add(2 * time.Hour), "b": runqueuetest.Epoch.Add(time.Hour)},
			want:     []string{"c/z", "b/y", "a/x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, keys(lineOrder(tt.waiting, tt.lastTurn))); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideAdmission(t *testing.T) {
	holder := func(ns, name string) slotHolder { return slotHolder{Key: runqueuetest.Key(ns, name)} }
	tests := []struct {
		name          string
		waiting       []queueSuite
		holders       []slotHolder
		lastTurn      map[string]time.Time
		self          queueSuite
		limits        Limits
		wantAdmit     bool
		wantPosition  int
		wantNSFull    bool
		wantDraining  int
		wantOwnAhead  []string
		wantOwnHolder []string
	}{
		{
			name: "alone on an idle cluster", self: waitingAt("a", "x", 0), limits: Limits{Slots: 1, PerNamespace: 1},
			wantAdmit: true,
		},
		{
			name: "not yet in the list it decides on (a lagging cache): decided as if it were",
			self: waitingAt("a", "x", 0), holders: []slotHolder{holder("b", "y")}, limits: Limits{Slots: 1},
			wantPosition: 1,
		},
		{
			name:    "a free slot goes to the first in line, not to a younger suite of the same namespace",
			waiting: []queueSuite{waitingAt("a", "older", 0), waitingAt("a", "x", 1)}, self: waitingAt("a", "x", 1),
			limits: Limits{Slots: 1}, wantPosition: 1,
		},
		{
			name:    "two slots: the second in line is admitted beside the first",
			waiting: []queueSuite{waitingAt("a", "older", 0), waitingAt("b", "x", 1), waitingAt("a", "young", 2)},
			self:    waitingAt("b", "x", 1), limits: Limits{Slots: 2}, wantAdmit: true,
		},
		{
			name:    "per-namespace share: a free slot goes past a namespace that holds its share",
			waiting: []queueSuite{waitingAt("a", "second", 0), waitingAt("b", "x", 1)}, holders: []slotHolder{holder("a", "first")},
			self: waitingAt("b", "x", 1), limits: Limits{Slots: 2, PerNamespace: 1}, wantAdmit: true,
		},
		{
			name:    "per-namespace share: the namespace's next suite waits though a slot is free",
			waiting: []queueSuite{waitingAt("a", "x", 0)}, holders: []slotHolder{holder("a", "first")},
			self: waitingAt("a", "x", 0), limits: Limits{Slots: 2, PerNamespace: 1},
			wantPosition: 1, wantNSFull: true, wantOwnHolder: []string{"first"},
		},
		{
			name:    "no global limit, but a namespace share",
			holders: []slotHolder{holder("a", "p"), holder("a", "q")},
			self:    waitingAt("a", "x", 0), limits: Limits{PerNamespace: 2},
			wantPosition: 1, wantNSFull: true, wantOwnHolder: []string{"p", "q"},
		},
		{
			name:    "a suite that ended holds its slot while its pods or VMs are being removed",
			holders: []slotHolder{{Key: runqueuetest.Key("b", "done"), Draining: true}}, self: waitingAt("a", "x", 0),
			limits: Limits{Slots: 1}, wantPosition: 1, wantDraining: 1,
		},
		{
			name:    "round-robin: the namespace that had the last turn waits behind a younger suite of another",
			waiting: []queueSuite{waitingAt("a", "x", 0), waitingAt("b", "y", 100)}, self: waitingAt("a", "x", 0),
			lastTurn: map[string]time.Time{"a": runqueuetest.Epoch}, limits: Limits{Slots: 1}, wantPosition: 1,
		},
		{
			name: "no limit", holders: []slotHolder{holder("a", "p")}, self: waitingAt("a", "x", 0), wantAdmit: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideAdmission(tt.waiting, tt.holders, tt.lastTurn, tt.self, tt.limits)
			if got.Admit != tt.wantAdmit || got.Position != tt.wantPosition || got.NamespaceFull != tt.wantNSFull || got.Draining != tt.wantDraining {
				t.Errorf("got admit %v at position %d (namespace full %v, draining %d), want admit %v at %d (%v, %d)", got.Admit, got.Position,
					got.NamespaceFull, got.Draining, tt.wantAdmit, tt.wantPosition, tt.wantNSFull, tt.wantDraining)
			}
			if got.Admit {
				return
			}
			if diff := cmp.Diff(tt.wantOwnAhead, got.OwnAhead); diff != "" {
				t.Errorf("own ahead (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOwnHolder, got.Own); diff != "" {
				t.Errorf("own holders (-want +got):\n%s", diff)
			}
		})
	}
}

// decideByLine is decideAdmission as it was before it walked the line without building it: the
// whole line sorted by lineOrder, then walked. It is the reference the walk must agree with.
func decideByLine(waiting []queueSuite, holders []slotHolder, lastTurn map[string]time.Time, self queueSuite,
	limits Limits) Admission {
	a := Admission{Limits: limits, Taken: len(holders)}
	held := map[string]int{}
	for _, h := range holders {
		held[h.Key.Namespace]++
		if h.Draining {
			a.Draining++
		}
		if h.Key.Namespace == self.Key.Namespace {
			a.Own = append(a.Own, h.Key.Name)
		}
	}
	slices.Sort(a.Own)
	line := []queueSuite{self}
	for _, q := range waiting {
		if q.Key != self.Key {
			line = append(line, q)
		}
	}
	free := limits.Slots - len(holders)
	for _, q := range lineOrder(line, lastTurn) {
		nsFull := limits.PerNamespace > 0 && held[q.Key.Namespace] >= limits.PerNamespace
		admit := !nsFull && (limits.Slots <= 0 || free > 0)
		if q.Key == self.Key {
			if admit {
				return Admission{Admit: true, Limits: limits}
			}
			a.NamespaceFull = nsFull
			a.Position = a.Ahead + 1
			return a
		}
		if admit {
			free--
			held[q.Key.Namespace]++
			continue
		}
		a.Ahead++
		if q.Key.Namespace == self.Key.Namespace {
			a.OwnAhead = append(a.OwnAhead, q.Key.Name)
		}
	}
	return a
}

// The walk that decides without sorting the line (decideAdmission) gives what sorting the whole line
// gives, for every suite of 2,000 random lines: namespaces of one to many suites, creation times
// that tie, last turns, holders of own and other namespaces, draining ones, and the limits'
// combinations. A walk that took a namespace out of turn, or counted a suite twice, fails here.
func TestDecideAdmissionWalkAgreesWithTheSortedLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 11))
	namespaces := []string{"a", "b", "c", "d", "e"}
	for trial := range 2000 {
		nsCount := 1 + rng.IntN(len(namespaces))
		var waiting []queueSuite
		for i := range rng.IntN(25) {
			ns := namespaces[rng.IntN(nsCount)]
			waiting = append(waiting, waitingAt(ns, fmt.Sprintf("s%02d", i), rng.IntN(8)))
		}
		var holders []slotHolder
		for i := range rng.IntN(4) {
			holders = append(holders, slotHolder{Key: runqueuetest.Key(namespaces[rng.IntN(nsCount)], fmt.Sprintf("h%d", i)), Draining: rng.IntN(3) == 0})
		}
		lastTurn := map[string]time.Time{}
		for _, ns := range namespaces[:nsCount] {
			if rng.IntN(2) == 0 {
				lastTurn[ns] = runqueuetest.Epoch.Add(time.Duration(rng.IntN(3)) * time.Hour)
			}
		}
		limits := Limits{Slots: rng.IntN(5) - 1, PerNamespace: rng.IntN(4) - 1}
		selves := slices.Clone(waiting)
		// A suite the list does not have yet (a lagging cache) decides too.
		selves = append(selves, waitingAt(namespaces[rng.IntN(nsCount)], "unseen", rng.IntN(8)))
		for _, self := range selves {
			want := decideByLine(waiting, holders, lastTurn, self, limits)
			got := decideAdmission(waiting, holders, lastTurn, self, limits)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("trial %d, self %s, limits %+v (-sorted line +walk):\n%s", trial, self.Key, limits, diff)
			}
		}
	}
}

// A burst: 500 suites in one namespace and a suite in each of 20 others, one slot taken. Every
// suite in line decides once, as each does on its first reconcile.
func BenchmarkDecideAdmissionBurst(b *testing.B) {
	var waiting []queueSuite
	for i := range 500 {
		waiting = append(waiting, waitingAt("burst", fmt.Sprintf("s%03d", i), i/10))
	}
	for i := range 20 {
		waiting = append(waiting, waitingAt(fmt.Sprintf("ns%02d", i), "x", i))
	}
	holders := []slotHolder{{Key: runqueuetest.Key("burst", "running")}}
	for _, decide := range []struct {
		name string
		fn   func([]queueSuite, []slotHolder, map[string]time.Time, queueSuite, Limits) Admission
	}{{"walk", decideAdmission}, {"sorted-line", decideByLine}} {
		b.Run(decide.name, func(b *testing.B) {
			for range b.N {
				for _, self := range waiting {
					decide.fn(waiting, holders, nil, self, Limits{Slots: 1})
				}
			}
		})
	}
}

// Whatever the order of the list, one suite at most is admitted per free slot: every suite in line
// decides on the same order.
func TestEveryOrderAdmitsTheSameSuite(t *testing.T) {
	line := []queueSuite{waitingAt("b", "a", 3), waitingAt("a", "b", 3), waitingAt("a", "a", 3), waitingAt("c", "old", 1), waitingAt("a", "young", 9)}
	for shift := range line {
		list := append(append([]queueSuite{}, line[shift:]...), line[:shift]...)
		var admittedKeys []string
		for _, s := range list {
			if decideAdmission(list, nil, nil, s, Limits{Slots: 1, PerNamespace: 1}).Admit {
				admittedKeys = append(admittedKeys, s.Key.String())
			}
		}
		if diff := cmp.Diff([]string{"c/old"}, admittedKeys); diff != "" {
			t.Errorf("list rotated by %d (-want +got):\n%s", shift, diff)
		}
	}
}

// The message names the place, the suites of the waiting suite's own namespace and the way out; it
// never names another namespace or its suites and runs.
func TestQueueMessageNamesNoOtherTenant(t *testing.T) {
	line := []queueSuite{waitingAt("other", "secret-a", 0), waitingAt("team", "w1", 1), waitingAt("team", "w2", 2),
		waitingAt("team", "w3", 3), waitingAt("team", "w4", 4), waitingAt("other", "secret-b", 5), waitingAt("team", "x", 6)}
	holders := []slotHolder{{Key: runqueuetest.Key("other", "secret-holder")}, {Key: runqueuetest.Key("team", "mine")}, {Key: runqueuetest.Key("gone", "secret-done"), Draining: true}}
	a := decideAdmission(line, holders, nil, waitingAt("team", "x", 6), Limits{Slots: 3, PerNamespace: 2})
	msg := a.Message()
	for _, want := range []string{
		"7th in line", "3 of 3 slots of the cluster are taken (by this namespace: mine)",
		"1 of them held by suites that ended and whose pods or VMs are still being removed",
		"6 suites ahead in line (of this namespace: w1, w2, w3 and 1 more)", "does not count against spec.timeout",
		"--max-active-runs-per-namespace",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	for _, secret := range []string{"other", "secret", "gone"} {
		if strings.Contains(msg, secret) {
			t.Errorf("message %q names another namespace's %q", msg, secret)
		}
	}
	full := decideAdmission(nil, []slotHolder{{Key: runqueuetest.Key("team", "mine")}}, nil, waitingAt("team", "x", 6), Limits{Slots: 3, PerNamespace: 1})
	if msg := full.Message(); !strings.Contains(msg, "this namespace holds 1 of the 1 slots one namespace may hold") {
		t.Errorf("message %q does not say that the namespace holds its share", msg)
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

// queueReconciler is a reconciler on a fake cluster with one slot and one per namespace.
func queueReconciler(objs ...client.Object) (*Queue, client.Client) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	return &Queue{Client: c, APIReader: c, Limits: Limits{Slots: 1, PerNamespace: 1}, Namespace: runqueuetest.Namespace}, c
}

func admitNow(t *testing.T, r *Queue, c client.Client, k types.NamespacedName) (Decision, *vmbenchv1.BenchmarkSuite) {
	t.Helper()
	s := runqueuetest.GetSuite(t, c, k)
	d, err := r.Admit(context.Background(), s, runqueuetest.Epoch.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return d, s
}

func slotLeases(t *testing.T, c client.Client) []string {
	t.Helper()
	list := &coordinationv1.LeaseList{}
	if err := c.List(context.Background(), list, client.InNamespace(runqueuetest.Namespace)); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, l := range list.Items {
		out = append(out, l.Annotations[AnnotationSlotNamespace]+"/"+l.Annotations[AnnotationSlotName])
	}
	return out
}

// The Lease is the truth of admission: a start time written into status by a tenant admits nothing,
// and is taken out again.
func TestAStartTimeInStatusAdmitsNothing(t *testing.T) {
	holder := runqueuetest.Queued("a", "holder", 0)
	forged := runqueuetest.Queued("b", "forged", 5)
	forged.Status.StartTime = &metav1.Time{Time: runqueuetest.Epoch}
	r, c := queueReconciler(&holder, &forged)
	if d, _ := admitNow(t, r, c, runqueuetest.Key("a", "holder")); !d.Admitted {
		t.Fatalf("holder: %+v, want admitted", d)
	}
	d, s := admitNow(t, r, c, runqueuetest.Key("b", "forged"))
	if d.Admitted || d.Wait == nil || d.Wait.Position != 1 || s.Status.StartTime != nil {
		t.Fatalf("forged: %+v (start %v), want a wait at position 1 and no start time", d, s.Status.StartTime)
	}
	if diff := cmp.Diff([]string{"a/holder"}, slotLeases(t, c)); diff != "" {
		t.Errorf("leases (-want +got):\n%s", diff)
	}
}

// A restarted manager reads the Leases again: the admitted suite stays admitted with its admission
// time, and the next one still waits.
func TestAdmissionsSurviveARestart(t *testing.T) {
	first, second := runqueuetest.Queued("a", "first", 0), runqueuetest.Queued("b", "second", 5)
	r, c := queueReconciler(&first, &second)
	if d, _ := admitNow(t, r, c, runqueuetest.Key("a", "first")); !d.Admitted {
		t.Fatalf("first: %+v, want admitted", d)
	}
	restarted := &Queue{Client: c, APIReader: c, Limits: Limits{Slots: 1, PerNamespace: 1}, Namespace: runqueuetest.Namespace}
	d, s := admitNow(t, restarted, c, runqueuetest.Key("a", "first"))
	if d.Admitted || d.Wait != nil || s.Status.StartTime == nil || !s.Status.StartTime.Time.Equal(runqueuetest.Epoch.Add(time.Hour)) {
		t.Fatalf("first after the restart: %+v (start %v), want admitted before, at %s", d, s.Status.StartTime, runqueuetest.Epoch.Add(time.Hour))
	}
	if d, _ := admitNow(t, restarted, c, runqueuetest.Key("b", "second")); d.Wait == nil {
		t.Fatalf("second after the restart: %+v, want a wait", d)
	}
}

// A suite that ended keeps its slot while a pod or a VMI of its runs is still in the cluster, being
// deleted or not; the next suite is admitted only once they are gone.
func TestASlotIsFreeOnlyWhenTheRunsPodsAndVMsAreGone(t *testing.T) {
	vmiKind := kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")
	labels := map[string]string{vmbenchv1.LabelSuite: "done"}
	for _, tt := range []struct {
		name string
		obj  client.Object
	}{
		{"a launcher pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "done-launcher", Labels: labels}}},
		{"a terminating worker pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "done-worker-0", Labels: labels,
			DeletionTimestamp: &metav1.Time{Time: runqueuetest.Epoch}, Finalizers: []string{"example.com/keep"}}}},
		{"a VMI", &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "done-vm-1-node01", Labels: labels}}},
		{"an MPIJob whose pods are not made yet", &mpiv2.MPIJob{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "done-container-1", Labels: labels}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			done, next := runqueuetest.Queued("a", "done", 0), runqueuetest.Queued("b", "next", 5)
			// Created with the fake cluster, as it refuses to create an object being deleted.
			r, c := queueReconciler(&done, &next, tt.obj)
			r.Available = map[schema.GroupVersionKind]bool{vmiKind: true, mpiv2.SchemeGroupVersion.WithKind("MPIJob"): true}
			if d, _ := admitNow(t, r, c, runqueuetest.Key("a", "done")); !d.Admitted {
				t.Fatalf("done: %+v, want admitted", d)
			}
			s := runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "done"))
			s.Status.Phase = vmbenchv1.SuiteComplete
			if err := c.Update(ctx, s); err != nil {
				t.Fatal(err)
			}
			if held, err := r.ReleaseSlots(ctx, runqueuetest.Key("a", "done"), s); err != nil || !held {
				t.Fatalf("releaseSlots = %v, %v, want the slot held", held, err)
			}
			d, _ := admitNow(t, r, c, runqueuetest.Key("b", "next"))
			if d.Wait == nil || d.Wait.Draining != 1 || !strings.Contains(d.Wait.Message(), "still being removed") {
				t.Fatalf("next: %+v, want a wait for the pods and VMs being removed", d)
			}
			if strings.Contains(d.Wait.Message(), "done") {
				t.Errorf("the message %q names the other namespace's suite", d.Wait.Message())
			}
			if tt.obj.GetDeletionTimestamp() != nil {
				tt.obj.SetFinalizers(nil)
				if err := c.Update(ctx, tt.obj); client.IgnoreNotFound(err) != nil {
					t.Fatal(err)
				}
			} else if err := c.Delete(ctx, tt.obj); err != nil {
				t.Fatal(err)
			}
			if held, err := r.ReleaseSlots(ctx, runqueuetest.Key("a", "done"), s); err != nil || held {
				t.Fatalf("releaseSlots = %v, %v, want the slot released", held, err)
			}
			if d, _ := admitNow(t, r, c, runqueuetest.Key("b", "next")); !d.Admitted {
				t.Fatalf("next: %+v, want admitted once the pods and VMs are gone", d)
			}
			if diff := cmp.Diff([]string{"b/next"}, slotLeases(t, c)); diff != "" {
				t.Errorf("leases (-want +got):\n%s", diff)
			}
		})
	}
}

// The Lease of a deleted suite is released, by the suite's own last reconcile or, should that have
// been missed (a manager that was down), when the next suite looks at the line.
func TestADeletedSuiteReleasesItsSlot(t *testing.T) {
	ctx := context.Background()
	gone, next := runqueuetest.Queued("a", "gone", 0), runqueuetest.Queued("b", "next", 5)
	r, c := queueReconciler(&gone, &next)
	if d, _ := admitNow(t, r, c, runqueuetest.Key("a", "gone")); !d.Admitted {
		t.Fatalf("gone: %+v, want admitted", d)
	}
	if err := c.Delete(ctx, runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "gone"))); err != nil {
		t.Fatal(err)
	}
	if held, err := r.ReleaseSlots(ctx, runqueuetest.Key("a", "gone"), nil); err != nil || held {
		t.Fatalf("releaseSlots = %v, %v, want released", held, err)
	}
	if diff := cmp.Diff([]string{}, slotLeases(t, c)); diff != "" {
		t.Errorf("leases (-want +got):\n%s", diff)
	}

	// Missed: a restarted manager finds the Lease of a suite that no longer exists.
	again, later := runqueuetest.Queued("a", "again", 6), runqueuetest.Queued("b", "later", 9)
	r, c = queueReconciler(&again, &later)
	if d, _ := admitNow(t, r, c, runqueuetest.Key("a", "again")); !d.Admitted {
		t.Fatalf("again: %+v, want admitted", d)
	}
	if err := c.Delete(ctx, runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "again"))); err != nil {
		t.Fatal(err)
	}
	restarted := &Queue{Client: c, APIReader: c, Limits: Limits{Slots: 1, PerNamespace: 1}, Namespace: runqueuetest.Namespace}
	if d, _ := admitNow(t, restarted, c, runqueuetest.Key("b", "later")); !d.Admitted {
		t.Fatalf("later: %+v, want admitted past the Lease of a deleted suite", d.Wait)
	}
}

// A cache that lags (here: it has not seen suite "old", first in line) lets a suite through to the
// admission, where the uncached list keeps it waiting.
func TestAdmissionIsDecidedAgainAroundTheCache(t *testing.T) {
	ctx := context.Background()
	old := runqueuetest.Queued("a", "old", 0)
	self := runqueuetest.Queued("a", "x", 5)
	cache := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(self.DeepCopy()).Build()
	apiServer := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(old.DeepCopy(), self.DeepCopy()).Build()
	r := &Queue{Client: cache, APIReader: apiServer, Limits: Limits{Slots: 1}, Namespaces: []string{"a"}, Namespace: runqueuetest.Namespace}

	suite := runqueuetest.GetSuite(t, cache, runqueuetest.Key("a", "x"))
	d, err := r.Admit(ctx, suite, runqueuetest.Epoch)
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
	d, err = r.Admit(ctx, suite, runqueuetest.Epoch)
	if err != nil || !d.Stale || d.Admitted {
		t.Fatalf("admit = %+v, %v, want stale", d, err)
	}
}

// Any change that moves the line brings back the suite itself and every suite in line.
func TestQueueRequests(t *testing.T) {
	ctx := context.Background()
	line := []vmbenchv1.BenchmarkSuite{runqueuetest.Queued("a", "w2", 2), runqueuetest.Queued("a", "w1", 1), runqueuetest.Queued("b", "w3", 3)}
	done := runqueuetest.Queued("a", "done", 0, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunSucceeded))
	holder := runqueuetest.Queued("a", "holder", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning))
	invalid := runqueuetest.Queued("a", "invalid", 0, withPhase(vmbenchv1.SuiteFailed))
	objs := []client.Object{done.DeepCopy(), holder.DeepCopy(), invalid.DeepCopy()}
	for i := range line {
		objs = append(objs, line[i].DeepCopy())
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	r := &Queue{Client: c, Limits: Limits{Slots: 1}}
	got := []string{}
	for _, req := range r.QueueRequests(ctx, &done) {
		got = append(got, req.String())
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a/done", "a/w1", "a/w2", "b/w3"}, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// With no limit nobody waits for another's slot: a change wakes the suite itself only.
	r.Limits.Slots = 0
	if reqs := r.QueueRequests(ctx, &done); len(reqs) != 1 || reqs[0].String() != "a/done" {
		t.Errorf("requests with no limit: %v, want a/done alone", reqs)
	}
}

// The watch passes exactly the changes that move the suites in line.
func TestQueueChangedPassesWhatMovesTheLine(t *testing.T) {
	waiting := runqueuetest.Queued("a", "x", 0)
	pending := runqueuetest.Queued("a", "x", 0, admitted(vmbenchv1.SuitePending, vmbenchv1.RunPending))
	running := runqueuetest.Queued("a", "x", 0, admitted(vmbenchv1.SuiteRunning, vmbenchv1.RunRunning))
	nextRun := running.DeepCopy()
	nextRun.Status.Runs = []vmbenchv1.RunStatus{{Name: "x-container-1", Phase: vmbenchv1.RunSucceeded}, {Name: "x-vm-1", Phase: vmbenchv1.RunPending}}
	samples := running.DeepCopy()
	samples.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "cpu", Platform: "container"}}
	moved := waiting.DeepCopy()
	moved.Status.QueuePosition = 3
	done := runqueuetest.Queued("a", "x", 0, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunSucceeded))
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
	p := Changed()
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

// A suite whose runs all ended needs no slot: without a Lease it keeps the start time of its
// admission as a record, and is not put in line. A suite with a run to start gets no such pass from
// its status: its phase says nothing to the queue.
func TestAnEndedSuiteKeepsItsStartTimeAndWaitsForNothing(t *testing.T) {
	done := runqueuetest.Queued("a", "done", 0, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunSucceeded))
	forged := runqueuetest.Queued("a", "forged", 1, admitted(vmbenchv1.SuiteComplete, vmbenchv1.RunPending))
	holder := runqueuetest.Queued("b", "holder", 0)
	r, c := queueReconciler(&done, &forged, &holder)
	if d, _ := admitNow(t, r, c, runqueuetest.Key("b", "holder")); !d.Admitted {
		t.Fatalf("holder: %+v, want admitted", d)
	}
	d, s := admitNow(t, r, c, runqueuetest.Key("a", "done"))
	if !d.Idle || d.Wait != nil || s.Status.StartTime == nil {
		t.Errorf("done: %+v (start %v), want idle with its start time", d, s.Status.StartTime)
	}
	d, s = admitNow(t, r, c, runqueuetest.Key("a", "forged"))
	if d.Wait == nil || s.Status.StartTime != nil {
		t.Errorf("forged: %+v (start %v), want a wait without a start time", d, s.Status.StartTime)
	}
}

// A pod that never goes (a tenant's pod carrying the suite's label, a stuck finalizer) holds the
// slot of a suite that ended for drainLimit at most, counted from when the manager first saw it
// draining, which the Lease records so that a restarted manager keeps the count.
func TestADrainingSlotIsReleasedAfterTheDrainLimit(t *testing.T) {
	ctx := context.Background()
	clock := clocktesting.NewFakePassiveClock(runqueuetest.Epoch)
	done, next := runqueuetest.Queued("a", "done", 0), runqueuetest.Queued("b", "next", 5)
	stuck := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "forever", Labels: map[string]string{vmbenchv1.LabelSuite: "done"}}}
	r, c := queueReconciler(&done, &next, stuck)
	r.Clock = clock
	if d, _ := admitNow(t, r, c, runqueuetest.Key("a", "done")); !d.Admitted {
		t.Fatalf("done: %+v, want admitted", d)
	}
	s := runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "done"))
	s.Status.Phase = vmbenchv1.SuiteComplete
	if err := c.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	if held, err := r.ReleaseSlots(ctx, runqueuetest.Key("a", "done"), s); err != nil || !held {
		t.Fatalf("releaseSlots = %v, %v, want held", held, err)
	}
	clock.SetTime(runqueuetest.Epoch.Add(drainLimit - time.Second))
	restarted := &Queue{Client: c, APIReader: c, Limits: Limits{Slots: 1, PerNamespace: 1}, Namespace: runqueuetest.Namespace, Clock: clock}
	if d, _ := admitNow(t, restarted, c, runqueuetest.Key("b", "next")); d.Wait == nil {
		t.Fatalf("next before the drain limit: %+v, want a wait", d)
	}
	clock.SetTime(runqueuetest.Epoch.Add(drainLimit))
	if d, _ := admitNow(t, restarted, c, runqueuetest.Key("b", "next")); !d.Admitted {
		t.Fatalf("next at the drain limit: %+v, want admitted", d)
	}
}

// Two workers never both take the last slot (the admission mutex, admissionMu; defect T2 and mutant
// Q1 of the test review of 97ef9ca). The suite first in line is decided admitted and held just
// before its Lease is created; meanwhile it is deleted, so that the second suite finds itself alone
// in line with the slot free. The second admission must not decide before the first one's Lease
// exists: then it counts that Lease, releases it as its suite is gone, and takes the slot, so that
// one suite holds it. Decided beside the first, it would take the slot and the first's Lease would
// follow: two suites in the one slot.
func TestAdmissionsTakeTheLastSlotOneAtATime(t *testing.T) {
	ctx := context.Background()
	first, second := runqueuetest.Queued("a", "first", 0), runqueuetest.Queued("b", "second", 5)
	r, c := queueReconciler(&first, &second)
	firstSuite, secondSuite := runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "first")), runqueuetest.GetSuite(t, c, runqueuetest.Key("b", "second"))

	var mu sync.Mutex
	var reached []string // the suites that reached their Lease, and whether the first was let go by then
	let, held := make(chan struct{}), make(chan struct{})
	r.BeforeSlot = func(s *vmbenchv1.BenchmarkSuite) {
		mu.Lock()
		select {
		case <-let:
			reached = append(reached, s.Name+" after the first was let go")
		default:
			reached = append(reached, s.Name+" while the first was held")
		}
		mu.Unlock()
		if s.Name == "first" {
			close(held)
			<-let
		}
	}
	type outcome struct {
		d   Decision
		err error
	}
	firstDone, secondDone := make(chan outcome, 1), make(chan outcome, 1)
	go func() {
		d, err := r.Admit(ctx, firstSuite, runqueuetest.Epoch.Add(time.Hour))
		firstDone <- outcome{d, err}
	}()
	select {
	case <-held:
	case o := <-firstDone:
		t.Fatalf("the first suite's admission ended before its Lease: %+v, %v", o.d, o.err)
	}
	if err := c.Delete(ctx, runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "first"))); err != nil {
		t.Fatal(err)
	}
	go func() {
		d, err := r.Admit(ctx, secondSuite, runqueuetest.Epoch.Add(time.Hour))
		secondDone <- outcome{d, err}
	}()
	// Until the second admission waits for the mutex, or got past it.
	for deadline := time.Now().Add(time.Minute); !waitingForAdmission(); time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(reached)
		mu.Unlock()
		if n > 1 || len(secondDone) > 0 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	if len(reached) != 1 || len(secondDone) > 0 {
		mu.Unlock()
		t.Fatalf("the second admission did not wait for the first to create its Lease: reached %v", reached)
	}
	mu.Unlock()
	close(let)
	one, two := <-firstDone, <-secondDone
	if one.err != nil || two.err != nil {
		t.Fatalf("admit: %v; %v", one.err, two.err)
	}
	if !one.d.Admitted || !two.d.Admitted {
		t.Errorf("first %+v, second %+v: want the first admitted (before it was deleted), then the second", one.d, two.d)
	}
	if diff := cmp.Diff([]string{"first while the first was held", "second after the first was let go"}, reached); diff != "" {
		t.Errorf("suites reaching their Lease (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b/second"}, slotLeases(t, c)); diff != "" {
		t.Errorf("the suites that hold the one slot (-want +got):\n%s", diff)
	}
}

// waitingForAdmission says whether a goroutine waits for admissionMu in admit (its stack says so).
func waitingForAdmission() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[sync.Mutex.Lock") && strings.Contains(g, "controllers.(*Queue).admit(") {
			return true
		}
	}
	return false
}

// The admission decides again around the cache without reading every suite in full: the suites are
// listed as metadata only, as their status can be 800 KiB each (S7 of the audit of 97ef9ca: every
// admission listed every suite of the cluster uncached). A suite that ended, known from the cache,
// is out of the line; one the cache has not seen yet is in it.
func TestAdmissionListsSuitesAsMetadataOnly(t *testing.T) {
	ctx := context.Background()
	ended := runqueuetest.Queued("a", "ended", 0, withPhase(vmbenchv1.SuiteFailed))
	unseen := runqueuetest.Queued("a", "unseen", 1)
	self := runqueuetest.Queued("a", "self", 5)
	cache := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(ended.DeepCopy(), self.DeepCopy()).Build()
	full := 0
	apiServer := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme.New()).
		WithObjects(ended.DeepCopy(), unseen.DeepCopy(), self.DeepCopy()).Build(), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*vmbenchv1.BenchmarkSuiteList); ok {
				full++
			}
			return c.List(ctx, list, opts...)
		},
	})
	r := &Queue{Client: cache, APIReader: apiServer, Limits: Limits{Slots: 1}, Namespaces: []string{"a"}, Namespace: runqueuetest.Namespace}
	suite := runqueuetest.GetSuite(t, cache, runqueuetest.Key("a", "self"))
	d, err := r.Admit(ctx, suite, runqueuetest.Epoch)
	// Admitted, the unseen suite would be skipped; at position 2, the ended one would take the slot.
	if err != nil || d.Wait == nil || d.Wait.Position != 1 {
		t.Fatalf("admit = %+v, %v, want a wait at position 1 behind a/unseen (a/ended is out of the line)", d, err)
	}
	if full != 0 {
		t.Errorf("the admission listed the suites in full %d times, want metadata only", full)
	}
}

// With no limit at all there is no slot to share and no line: a suite is admitted (its Lease
// created) without a list of the suites or the Leases, so that a burst of new suites is not
// admitted one at a time, each admission reading every suite (docs/performance.md: 500 suites).
func TestAdmissionWithoutLimitsListsNothing(t *testing.T) {
	ctx := context.Background()
	first, second := runqueuetest.Queued("a", "first", 0), runqueuetest.Queued("a", "second", 5)
	lists := 0
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(&first, &second).Build(), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists++
			return c.List(ctx, list, opts...)
		},
	})
	r := &Queue{Client: c, APIReader: c, Namespace: runqueuetest.Namespace}
	if _, err := r.slotBook(ctx); err != nil {
		t.Fatal(err)
	}
	lists = 0
	r.admissionMu.Lock() // held by no admission here: one that took it would never return
	defer r.admissionMu.Unlock()
	for _, k := range []types.NamespacedName{runqueuetest.Key("a", "second"), runqueuetest.Key("a", "first")} {
		d, err := r.Admit(ctx, runqueuetest.GetSuite(t, c, k), runqueuetest.Epoch)
		if err != nil || !d.Admitted {
			t.Fatalf("%s: admit = %+v, %v, want admitted", k, d, err)
		}
	}
	if lists != 0 {
		t.Errorf("%d lists for two admissions without limits, want none", lists)
	}
	if diff := cmp.Diff([]string{"a/first", "a/second"}, slotLeases(t, c)); diff != "" {
		t.Errorf("leases (-want +got):\n%s", diff)
	}
}

// An admission under a limit reads the line and the Leases around the cache at once, not one after
// the other: each read here waits until the other has begun, so read one after the other they
// would wait for each other and the admission would not be made (docs/performance.md, "Fourth
// pass": the admission is the second slowest reconcile of a burst).
func TestAdmissionReadsTheLineAndTheLeasesAtOnce(t *testing.T) {
	self := runqueuetest.Queued("a", "first", 0)
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(&self).Build()
	lineBegun, leasesBegun := make(chan struct{}), make(chan struct{})
	var armed atomic.Bool
	waitFor := func(begun chan struct{}, other <-chan struct{}, what string) error {
		close(begun)
		select {
		case <-other:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the %s were read alone", what)
		}
	}
	uncached := interceptor.NewClient(c, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if armed.Load() {
				var err error
				switch list.(type) {
				case *metav1.PartialObjectMetadataList:
					err = waitFor(lineBegun, leasesBegun, "suites of the line")
				case *coordinationv1.LeaseList:
					err = waitFor(leasesBegun, lineBegun, "Leases")
				}
				if err != nil {
					return err
				}
			}
			return c.List(ctx, list, opts...)
		},
	})
	q := &Queue{Client: c, APIReader: uncached, Limits: Limits{Slots: 1, PerNamespace: 1}, Namespace: runqueuetest.Namespace}
	// The Leases are loaded once per process, at the first admission: not what this test is about.
	if _, err := q.slotBook(context.Background()); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	d, err := q.Admit(context.Background(), runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "first")), runqueuetest.Epoch.Add(time.Hour))
	if err != nil || !d.Admitted {
		t.Fatalf("Admit = %+v, %v; want the suite admitted", d, err)
	}
}
