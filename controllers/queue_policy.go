package controllers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Two suites that run at once share nodes and corrupt each other's figures. So the cluster runs at
// most MaxActiveRuns suites at a time (--max-active-runs, 1 unless suites are placed on disjoint node
// pools), and the others wait in creation order.
//
// The queue is derived from the suites' status alone, never kept in memory, so that it survives a
// restart of the manager. A suite holds a slot from the moment it is admitted, which is written to
// status.startTime before any of its children is created, until it is Complete or Failed or being
// deleted: children whose own status write was lost still sit behind an admission that is in status.
//
// Races: every reconcile first decides from the cache, which may lag. A "wait" from a lagging cache
// only delays the suite until the watch below brings it back. An "admit" is decided again against
// the API server (an uncached list, which etcd serves linearizably) while admissionMu is held, and the
// admission's status write happens before the mutex is released, with optimistic concurrency. Only
// the leader reconciles, so every admission of the cluster passes through that one mutex: two
// workers can never both take the last slot, even when each one's cache misses the other's suite.

// queueSuite is what the queue needs to know of one suite.
type queueSuite struct {
	Key     types.NamespacedName
	Created metav1.Time
	// Run is the holder's current run, for the waiting suites' message.
	Run string
}

func (s queueSuite) String() string {
	if s.Run == "" {
		return s.Key.String()
	}
	return fmt.Sprintf("%s (run %s)", s.Key, s.Run)
}

// suiteEnded says whether a suite is Complete or Failed.
func suiteEnded(s *vmbenchv1.BenchmarkSuite) bool {
	return s.Status.Phase == vmbenchv1.SuiteComplete || s.Status.Phase == vmbenchv1.SuiteFailed
}

// holdsSlot says whether a suite takes one of the cluster's run slots: admitted, not ended, not being
// deleted.
func holdsSlot(s *vmbenchv1.BenchmarkSuite) bool {
	return s.DeletionTimestamp.IsZero() && s.Status.StartTime != nil && !suiteEnded(s)
}

// waitsForSlot says whether a suite is in line: not admitted yet, not ended (a suite whose spec is
// invalid is Failed and waits for nothing), not being deleted.
func waitsForSlot(s *vmbenchv1.BenchmarkSuite) bool {
	return s.DeletionTimestamp.IsZero() && s.Status.StartTime == nil && !suiteEnded(s)
}

// admission is the queue's verdict on one waiting suite.
type admission struct {
	Admit bool
	// Position is the suite's place among those that must wait, from 1; 0 when admitted.
	Position int
	// Slots is the number of run slots; Running the suites that hold them; Ahead the suites in line
	// before this one.
	Slots   int
	Running []queueSuite
	Ahead   []queueSuite
}

// decideAdmission decides whether the waiting suite self may take a slot now. Suites wait in order
// of creation (creationTimestamp, then namespace and name, as timestamps have whole seconds); the
// first ones take the slots that the suites holding one leave free. self counts as waiting, whether
// the list has it (in any state) or not (a cache that has not seen it yet). slots <= 0: no limit.
func decideAdmission(suites []vmbenchv1.BenchmarkSuite, self *vmbenchv1.BenchmarkSuite, slots int) admission {
	if slots <= 0 {
		return admission{Admit: true}
	}
	a := admission{Slots: slots}
	me := client.ObjectKeyFromObject(self)
	waiting := []queueSuite{{Key: me, Created: self.CreationTimestamp}}
	for i := range suites {
		s := &suites[i]
		q := queueSuite{Key: client.ObjectKeyFromObject(s), Created: s.CreationTimestamp}
		switch {
		case q.Key == me:
		case holdsSlot(s):
			if run := activeRun(&s.Status); run != nil {
				q.Run = run.Name
			}
			a.Running = append(a.Running, q)
		case waitsForSlot(s):
			waiting = append(waiting, q)
		}
	}
	sort.Slice(a.Running, func(i, j int) bool { return queuedBefore(a.Running[i], a.Running[j]) })
	sort.Slice(waiting, func(i, j int) bool { return queuedBefore(waiting[i], waiting[j]) })
	free := max(slots-len(a.Running), 0)
	i := slices.IndexFunc(waiting, func(q queueSuite) bool { return q.Key == me })
	a.Ahead = waiting[:i]
	if i < free {
		a.Admit = true
		return a
	}
	a.Position = i - free + 1
	return a
}

func queuedBefore(a, b queueSuite) bool {
	if !a.Created.Equal(&b.Created) {
		return a.Created.Before(&b.Created)
	}
	if a.Key.Namespace != b.Key.Namespace {
		return a.Key.Namespace < b.Key.Namespace
	}
	return a.Key.Name < b.Key.Name
}

// message says where a waiting suite stands and what to do if it must go first.
func (a admission) message() string {
	running := "none (a suite ahead is being admitted)"
	if len(a.Running) > 0 {
		running = listSuites(a.Running)
	}
	msg := fmt.Sprintf("%s in line for a run slot; running now (%d of %d slots): %s", ordinal(a.Position), len(a.Running), a.Slots, running)
	if len(a.Ahead) > 0 {
		msg += "; ahead in line: " + listSuites(a.Ahead)
	}
	return msg + ". Time in line does not count against spec.timeout. To run this suite sooner, delete the suites running or ahead of it, " +
		"or raise the manager's --max-active-runs (Helm value maxActiveRuns) if suites are placed on disjoint nodes"
}

// listSuites names the first three suites and counts the rest.
func listSuites(qs []queueSuite) string {
	names := make([]string, 0, 3)
	for i, q := range qs {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(qs)-3))
			break
		}
		names = append(names, q.String())
	}
	return strings.Join(names, ", ")
}

// ordinal writes 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// queueDecision is what the queue decided for one reconcile.
type queueDecision struct {
	// Wait is set while the suite waits for a slot.
	Wait *admission
	// Admitted is set when this reconcile admitted the suite (status.startTime is set): with a limit,
	// nothing else may happen before that status is written.
	Admitted bool
	// Stale is set when the API server holds a newer suite than the cache gave this reconcile.
	Stale bool
	// release lets the next admission go once this reconcile's status write is done.
	release func()
}

func (d queueDecision) done() {
	if d.release != nil {
		d.release()
	}
}

// admit decides whether a suite may start its runs: it was admitted before, or it takes a free slot
// now, or it waits. See the top of this file for how two reconciles never take one slot.
func (r *SuiteReconciler) admit(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, now time.Time) (queueDecision, error) {
	if suite.Status.StartTime != nil {
		return queueDecision{}, nil
	}
	if r.MaxActiveRuns <= 0 {
		suite.Status.StartTime = &metav1.Time{Time: now}
		return queueDecision{Admitted: true}, nil
	}
	key := client.ObjectKeyFromObject(suite)
	cached := &vmbenchv1.BenchmarkSuiteList{}
	// Read only: the cache's own objects are not copied.
	if err := r.List(ctx, cached, client.UnsafeDisableDeepCopy); err != nil {
		return queueDecision{}, fmt.Errorf("listing suites for the run queue: %w", err)
	}
	if a := decideAdmission(cached.Items, suite, r.MaxActiveRuns); !a.Admit {
		return queueDecision{Wait: &a}, nil
	}

	r.admissionMu.Lock()
	fresh, err := r.freshSuites(ctx)
	if err != nil {
		r.admissionMu.Unlock()
		return queueDecision{}, err
	}
	var current *vmbenchv1.BenchmarkSuite
	for i := range fresh {
		if client.ObjectKeyFromObject(&fresh[i]) == key {
			current = &fresh[i]
		}
	}
	if current == nil || current.ResourceVersion != suite.ResourceVersion {
		r.admissionMu.Unlock()
		return queueDecision{Stale: true}, nil
	}
	a := decideAdmission(fresh, current, r.MaxActiveRuns)
	if !a.Admit {
		r.admissionMu.Unlock()
		return queueDecision{Wait: &a}, nil
	}
	suite.Status.StartTime = &metav1.Time{Time: now}
	return queueDecision{Admitted: true, release: r.admissionMu.Unlock}, nil
}

// freshSuites lists the suites of the namespaces the manager runs, around the cache.
func (r *SuiteReconciler) freshSuites(ctx context.Context) ([]vmbenchv1.BenchmarkSuite, error) {
	if len(r.Namespaces) == 0 {
		list := &vmbenchv1.BenchmarkSuiteList{}
		if err := r.APIReader.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing suites for the run queue: %w", err)
		}
		return list.Items, nil
	}
	var out []vmbenchv1.BenchmarkSuite
	for _, ns := range r.Namespaces {
		list := &vmbenchv1.BenchmarkSuiteList{}
		if err := r.APIReader.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing the suites of namespace %s for the run queue: %w", ns, err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

// setQueued sets the Queued condition and the queue position, on every reconcile.
func setQueued(st *vmbenchv1.BenchmarkSuiteStatus, wait *admission, invalidSpec error, generation int64) {
	c := metav1.Condition{Type: vmbenchv1.ConditionQueued, Status: metav1.ConditionFalse, ObservedGeneration: generation}
	st.QueuePosition = 0
	switch {
	case wait != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, vmbenchv1.ReasonWaitingForRun, truncate(wait.message(), 1024)
		st.QueuePosition = int32(wait.Position)
	case st.StartTime != nil:
		c.Reason = vmbenchv1.ReasonAdmitted
		c.Message = fmt.Sprintf("admitted at %s; spec.timeout counts from then", st.StartTime.UTC().Format(time.RFC3339))
	case invalidSpec != nil:
		c.Reason, c.Message = vmbenchv1.ReasonInvalidSpec, "the spec is invalid, so the suite does not wait for a run slot"
	default:
		// Not reached: a valid suite is either waiting or admitted.
		c.Reason, c.Message = vmbenchv1.ReasonPending, "not admitted yet"
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// emitQueueTransitions records an event when a suite starts to wait and when it is admitted, after
// the status write succeeded.
func (r *SuiteReconciler) emitQueueTransitions(orig, suite *vmbenchv1.BenchmarkSuite) {
	if r.Recorder == nil {
		return
	}
	now := meta.FindStatusCondition(suite.Status.Conditions, vmbenchv1.ConditionQueued)
	before := meta.FindStatusCondition(orig.Status.Conditions, vmbenchv1.ConditionQueued)
	if now == nil || (before != nil && before.Reason == now.Reason) {
		return
	}
	switch now.Reason {
	case vmbenchv1.ReasonWaitingForRun:
		r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, vmbenchv1.ConditionQueued, "Queue", "%s", now.Message)
	case vmbenchv1.ReasonAdmitted:
		r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, vmbenchv1.ReasonAdmitted, "Queue", "%s", now.Message)
	}
}

// queueState sums up what of a suite matters to the others' places in line.
func queueState(s *vmbenchv1.BenchmarkSuite) string {
	switch {
	case holdsSlot(s):
		if run := activeRun(&s.Status); run != nil {
			return "running " + run.Name
		}
		return "running"
	case waitsForSlot(s):
		return "waiting"
	}
	return "out"
}

// queueChanged passes the changes of a suite that move the others in line: it is admitted, moves to
// its next run, ends, is deleted or stops waiting. A new suite goes to the back of the line, behind
// everyone already in it.
func queueChanged() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*vmbenchv1.BenchmarkSuite)
			updated, okNew := e.ObjectNew.(*vmbenchv1.BenchmarkSuite)
			return okOld && okNew && queueState(old) != queueState(updated)
		},
	}
}

// queueRequests maps a change of one suite to the suites in line and to the suite itself (the watch
// event of its own admission brings it back to start its run). A suite that ended or is being
// deleted after it was admitted frees a slot: only the first suites in line can take it, and the
// rest move when one of them is admitted. Any other change (an admission, another run, a suite
// that leaves the line) changes every waiting suite's place or message.
func (r *SuiteReconciler) queueRequests(ctx context.Context, obj client.Object) []reconcile.Request {
	reqs := []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
	list := &vmbenchv1.BenchmarkSuiteList{}
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		// The suites in line come back with the next change of any suite; this one is logged.
		log.FromContext(ctx).Error(err, "listing the suites in line")
		return reqs
	}
	var waiting []queueSuite
	for i := range list.Items {
		if s := &list.Items[i]; waitsForSlot(s) && client.ObjectKeyFromObject(s) != reqs[0].NamespacedName {
			waiting = append(waiting, queueSuite{Key: client.ObjectKeyFromObject(s), Created: s.CreationTimestamp})
		}
	}
	if s, ok := obj.(*vmbenchv1.BenchmarkSuite); ok && r.MaxActiveRuns > 0 && s.Status.StartTime != nil && !holdsSlot(s) {
		sort.Slice(waiting, func(i, j int) bool { return queuedBefore(waiting[i], waiting[j]) })
		waiting = waiting[:min(len(waiting), r.MaxActiveRuns)]
	}
	for _, q := range waiting {
		reqs = append(reqs, reconcile.Request{NamespacedName: q.Key})
	}
	return reqs
}
