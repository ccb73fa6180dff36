package runqueue

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// pools), one namespace at most MaxActiveRunsPerNamespace of them, and the others wait in line.
//
// The truth of the queue is kept where tenants cannot write it: a suite is admitted while a Lease
// of the manager's own namespace names it (queue_lease.go). Its status.startTime is a mirror for
// users, written from the Lease on every reconcile; a tenant who writes it gets nothing. A slot is
// held by a Lease, from the suite's admission until the suite ended (or was deleted or requeued)
// AND the pods and VMs of its runs are gone from the cluster, so that runs of two suites never
// overlap.
//
// The line is fair across namespaces: the namespaces take turns (round-robin), a namespace whose
// suite was admitted last goes behind the namespaces that have waited longer, and within a namespace
// suites go in creation order. The turns are kept in memory and seeded from the Leases at start.
//
// Races: every reconcile first decides from the cache, which may lag. A "wait" from a lagging cache
// only delays the suite until the watch below brings it back. An "admit" is decided again around
// the cache while admissionMu is held: the Leases are read again, and the suites listed as metadata
// only (their names, UIDs, creation times and resource versions; whether each ended comes from the
// cache, see queueSuites), and the Lease is created before the mutex is released. Only the leader
// reconciles, so every admission of the cluster passes through that one mutex: two workers can
// never both take the last slot. With no limit at all there is no slot to share and no line, and
// a suite is admitted without the mutex.

// queueSuite is a suite in line.
type queueSuite struct {
	Key     types.NamespacedName
	Created metav1.Time
}

// slotHolder is a suite that holds a run slot: its Lease exists.
type slotHolder struct {
	Key types.NamespacedName
	// Draining is set when the suite ended, was deleted or requeued, and its pods or VMs are still
	// in the cluster.
	Draining bool
}

// suiteEnded says whether a suite is Complete or Failed.
func SuiteEnded(s *vmbenchv1.BenchmarkSuite) bool {
	return s.Status.Phase == vmbenchv1.SuiteComplete || s.Status.Phase == vmbenchv1.SuiteFailed
}

// looksAdmitted says whether a suite's status says it holds a slot. Status is no truth of the queue
// (the Leases are); this only decides which changes of a suite wake the others in line.
func looksAdmitted(s *vmbenchv1.BenchmarkSuite) bool {
	return s.DeletionTimestamp.IsZero() && s.Status.StartTime != nil && !SuiteEnded(s)
}

// inLine says whether a suite may wait for a slot: not ended (a suite whose spec is invalid is
// Failed and waits for nothing), not being deleted.
func inLine(s *vmbenchv1.BenchmarkSuite) bool {
	return s.DeletionTimestamp.IsZero() && !SuiteEnded(s)
}

// queueLimits are the admin's limits on the queue.
type Limits struct {
	// Slots is how many suites may hold a slot at once; 0 or less: no limit.
	Slots int
	// PerNamespace is how many of them one namespace may hold; 0 or less: no limit.
	PerNamespace int
}

// admission is the queue's verdict on one waiting suite.
type Admission struct {
	Admit bool
	// Position is the suite's place among those that must wait, from 1; 0 when admitted.
	Position int
	Limits   Limits
	// Taken is the number of slots held; Draining how many of them are held by suites that ended
	// and whose pods or VMs are still being removed.
	Taken, Draining int
	// Own lists the suites of the waiting suite's own namespace that hold a slot; OwnAhead those of
	// its namespace ahead of it in line; Ahead counts every suite ahead of it.
	Own, OwnAhead []string
	Ahead         int
	// NamespaceFull is set when the suite's namespace holds all the slots one namespace may hold.
	NamespaceFull bool
}

// lineOrder puts the waiting suites in the order in which they take slots: the namespaces take turns,
// one suite each per round, the namespace whose last admission is oldest (or that never had one)
// first, ties broken by the creation of its oldest waiting suite, then by name; within a namespace
// suites go in order of creation (then name, as timestamps have whole seconds).
func lineOrder(waiting []queueSuite, lastTurn map[string]time.Time) []queueSuite {
	byNS := map[string][]queueSuite{}
	for _, q := range waiting {
		byNS[q.Key.Namespace] = append(byNS[q.Key.Namespace], q)
	}
	namespaces := make([]string, 0, len(byNS))
	for ns, qs := range byNS {
		sort.Slice(qs, func(i, j int) bool { return queuedBefore(qs[i], qs[j]) })
		namespaces = append(namespaces, ns)
	}
	sort.Slice(namespaces, func(i, j int) bool {
		a, b := namespaces[i], namespaces[j]
		if ta, tb := lastTurn[a], lastTurn[b]; !ta.Equal(tb) {
			return ta.Before(tb)
		}
		if oa, ob := byNS[a][0].Created, byNS[b][0].Created; !oa.Equal(&ob) {
			return oa.Before(&ob)
		}
		return a < b
	})
	out := make([]queueSuite, 0, len(waiting))
	for round := 0; len(out) < len(waiting); round++ {
		for _, ns := range namespaces {
			if round < len(byNS[ns]) {
				out = append(out, byNS[ns][round])
			}
		}
	}
	return out
}

// decideAdmission decides whether the waiting suite self may take a slot now. The suites in line
// (lineOrder) take the slots that the holders leave free, skipping a suite whose namespace holds
// its share already. self counts as waiting whether the list has it or not (a cache that has not
// seen it yet).
//
// It walks lineOrder's line up to self without building it: every suite in line decides on each
// change of the line, so a burst of N suites would sort the line N times. In round r of lineOrder,
// each namespace with more than r suites waiting gives its r-th oldest, in the namespaces' order; so
// the walk needs each namespace's count and oldest suite, and self's rank in its own namespace. Only
// the suites of self's namespace ahead of it are named, and only they are sorted.
func decideAdmission(waiting []queueSuite, holders []slotHolder, lastTurn map[string]time.Time, self queueSuite,
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
	// The namespaces in line: how many suites each has waiting, and its oldest.
	type nsLine struct {
		name   string
		count  int
		oldest queueSuite
	}
	lines := []nsLine{{name: self.Key.Namespace, count: 1, oldest: self}}
	at := map[string]int{self.Key.Namespace: 0}
	var mine []queueSuite // self's namespace's suites ahead of it
	for _, q := range waiting {
		if q.Key == self.Key {
			continue
		}
		i, ok := at[q.Key.Namespace]
		if !ok {
			i = len(lines)
			at[q.Key.Namespace] = i
			lines = append(lines, nsLine{name: q.Key.Namespace, oldest: q})
		}
		lines[i].count++
		if queuedBefore(q, lines[i].oldest) {
			lines[i].oldest = q
		}
		if i == 0 && queuedBefore(q, self) {
			mine = append(mine, q)
		}
	}
	slices.SortFunc(lines, func(x, y nsLine) int {
		if tx, ty := lastTurn[x.name], lastTurn[y.name]; !tx.Equal(ty) {
			return tx.Compare(ty)
		}
		if ox, oy := x.oldest.Created, y.oldest.Created; !ox.Equal(&oy) {
			return ox.Compare(oy.Time)
		}
		return strings.Compare(x.name, y.name)
	})
	rank := len(mine)  // self's place in its namespace's line, from 0
	var ownAhead []int // the ranks of self's namespace's suites that wait ahead of it
	free := limits.Slots - len(holders)
	for round := 0; ; round++ {
		// The namespaces with a suite in this round, in order; those with none left drop out.
		n := 0
		for _, l := range lines {
			if round >= l.count {
				continue
			}
			lines[n] = l
			n++
			nsFull := limits.PerNamespace > 0 && held[l.name] >= limits.PerNamespace
			admit := !nsFull && (limits.Slots <= 0 || free > 0)
			own := l.name == self.Key.Namespace
			if own && round == rank {
				if admit {
					return Admission{Admit: true, Limits: limits}
				}
				if len(ownAhead) > 0 {
					slices.SortFunc(mine, func(x, y queueSuite) int {
						if queuedBefore(x, y) {
							return -1
						}
						return 1
					})
					for _, r := range ownAhead {
						a.OwnAhead = append(a.OwnAhead, mine[r].Key.Name)
					}
				}
				a.NamespaceFull = nsFull
				a.Position = a.Ahead + 1
				return a
			}
			if admit {
				free--
				held[l.name]++
				continue
			}
			a.Ahead++
			if own {
				ownAhead = append(ownAhead, round)
			}
		}
		lines = lines[:n]
	}
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

// message says where a waiting suite stands and what to do if it must go first. It names suites of
// the waiting suite's own namespace only: other tenants' namespaces and suites are counted.
func (a Admission) Message() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s in line for a run slot", ordinal(a.Position))
	if a.NamespaceFull {
		fmt.Fprintf(&b, "; this namespace holds %d of the %d slots one namespace may hold (the manager's --max-active-runs-per-namespace, Helm value maxActiveRunsPerNamespace)",
			len(a.Own), a.Limits.PerNamespace)
	}
	if a.Limits.Slots > 0 {
		fmt.Fprintf(&b, "; %d of %d slots of the cluster are taken", a.Taken, a.Limits.Slots)
	} else {
		fmt.Fprintf(&b, "; %d slots are taken", a.Taken)
	}
	if len(a.Own) > 0 {
		fmt.Fprintf(&b, " (by this namespace: %s)", listNames(a.Own))
	}
	if a.Draining > 0 {
		fmt.Fprintf(&b, "; %d of them held by suites that ended and whose pods or VMs are still being removed, so that no run starts beside them", a.Draining)
	}
	if a.Ahead > 0 {
		fmt.Fprintf(&b, "; %d suites ahead in line", a.Ahead)
		if len(a.OwnAhead) > 0 {
			fmt.Fprintf(&b, " (of this namespace: %s)", listNames(a.OwnAhead))
		}
	}
	b.WriteString(". Namespaces take turns; time in line does not count against spec.timeout. To run this suite sooner, " +
		"delete or end this namespace's suites that run or wait ahead of it, or ask the cluster's admin (see the manager's " +
		"--max-active-runs and --max-active-runs-per-namespace, Helm values maxActiveRuns and maxActiveRunsPerNamespace)")
	return b.String()
}

// listNames names the first three and counts the rest.
func listNames(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
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
type Decision struct {
	// Wait is set while the suite waits for a slot.
	Wait *Admission
	// Admitted is set when this reconcile admitted the suite (its Lease was created).
	Admitted bool
	// Stale is set when the API server holds a newer suite than the cache gave this reconcile.
	Stale bool
	// Idle is set for a suite without a Lease whose runs all ended: it neither waits nor starts.
	Idle bool
}

// unlimited says whether the admin set no limit at all: every suite is admitted at once, and no
// admission can take a slot another needs.
func (l Limits) unlimited() bool { return l.Slots <= 0 && l.PerNamespace <= 0 }

// admit decides whether a suite may start its runs: its Lease exists, or it takes a free slot now
// (its Lease is created), or it waits. status.startTime is written from the Lease either way.
func (q *Queue) Admit(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, now time.Time) (Decision, error) {
	book, err := q.slotBook(ctx)
	if err != nil {
		return Decision{}, err
	}
	l, held := book.get(suite.UID)
	if held && !l.Requeued {
		suite.Status.StartTime = &metav1.Time{Time: l.Admitted}
		return Decision{}, nil
	}
	if held {
		// Requeued: its Lease goes once the stopped run's pods and VMs are gone.
		if _, err := q.releaseIfGone(ctx, book, l); err != nil {
			return Decision{}, err
		}
	}
	if len(suite.Status.Runs) > 0 && suite.Status.ActiveRun() == nil {
		// Every run ended (the suite's slot is released, or goes with its pods): there is nothing
		// to start, and the start time stays as the record of its admission.
		return Decision{Idle: true}, nil
	}
	// Not admitted, whatever the status says: a start time written by anyone but the Lease goes.
	suite.Status.StartTime = nil
	if q.Limits.unlimited() {
		// No line and no slot to share: nothing to decide, so no admission waits for another. The
		// Lease is the record of the admission all the same (its name comes from the UID, so a
		// retry takes the same one).
		if l, ok := book.get(suite.UID); ok && l.Requeued {
			return Decision{Wait: requeuedWait(q.Limits)}, nil
		}
		return q.admitNow(ctx, book, suite, now)
	}
	cached := &vmbenchv1.BenchmarkSuiteList{}
	// Read only: the cache's own objects are not copied.
	if err := q.Client.List(ctx, cached, client.UnsafeDisableDeepCopy); err != nil {
		return Decision{}, fmt.Errorf("listing suites for the run queue: %w", err)
	}
	if a := q.decide(ctx, book, cached.Items, suite); !a.Admit {
		return Decision{Wait: &a}, nil
	}

	// Decided again around the cache, one admission at a time, until the Lease exists: the next
	// admission reads the Leases again and counts this one.
	q.admissionMu.Lock()
	defer q.admissionMu.Unlock()
	// The line and the Leases are read at once, one round trip instead of two while the mutex is
	// held (docs/performance.md, "Fourth pass"); the line's error comes first, as it did when the
	// Leases were read after it.
	var fresh []vmbenchv1.BenchmarkSuite
	var lineErr error
	lined := make(chan struct{})
	go func() {
		defer close(lined)
		fresh, lineErr = q.queueSuites(ctx, cached.Items)
	}()
	err = book.reload(ctx, q.APIReader, q.Namespace)
	<-lined
	if lineErr != nil {
		err = lineErr
	}
	if err != nil {
		return Decision{}, err
	}
	var current *vmbenchv1.BenchmarkSuite
	for i := range fresh {
		if fresh[i].UID == suite.UID {
			current = &fresh[i]
		}
	}
	if current == nil || current.ResourceVersion != suite.ResourceVersion {
		return Decision{Stale: true}, nil
	}
	a := q.decide(ctx, book, fresh, current)
	if l, ok := book.get(suite.UID); ok && l.Requeued && a.Admit {
		// Its own Lease from before it was requeued still holds a slot for the pods and VMs of
		// its stopped run; their deletion brings it back.
		return Decision{Wait: requeuedWait(q.Limits)}, nil
	} else if ok && !l.Requeued {
		// An admission that the cache had not seen: the reconcile comes back.
		return Decision{Stale: true}, nil
	}
	if !a.Admit {
		return Decision{Wait: &a}, nil
	}
	return q.admitNow(ctx, book, suite, now)
}

// admitNow takes the suite's slot: its Lease is created, and its start time is the Lease's.
func (q *Queue) admitNow(ctx context.Context, book *slotBook, suite *vmbenchv1.BenchmarkSuite, now time.Time) (Decision, error) {
	if q.BeforeSlot != nil {
		q.BeforeSlot(suite)
	}
	if err := q.takeSlot(ctx, book, suite, now); err != nil {
		return Decision{}, err
	}
	suite.Status.StartTime = &metav1.Time{Time: book.mustGet(suite.UID).Admitted}
	return Decision{Admitted: true}, nil
}

// requeuedWait is the wait of a requeued suite whose own Lease still holds a slot for the pods and
// VMs of its stopped run.
func requeuedWait(limits Limits) *Admission {
	return &Admission{Position: 1, Limits: limits, Taken: max(limits.Slots, 1), Draining: 1}
}

// decide gathers the line and the holders from the suites and the Leases, and decides for self.
// A draining holder whose pods and VMs are gone is released on the way.
func (q *Queue) decide(ctx context.Context, book *slotBook, suites []vmbenchv1.BenchmarkSuite,
	self *vmbenchv1.BenchmarkSuite) Admission {
	// The Leases are few and the suites many: the suites are looked up by the Leases' UIDs, and each
	// suite's Lease in one copy of the book.
	leases := book.all()
	byUID := make(map[types.UID]*vmbenchv1.BenchmarkSuite, len(leases))
	leaseOf := make(map[types.UID]slotLease, len(leases))
	for _, l := range leases {
		leaseOf[l.UID] = l
	}
	waiting := make([]queueSuite, 0, len(suites))
	for i := range suites {
		s := &suites[i]
		l, ok := leaseOf[s.UID]
		if ok {
			byUID[s.UID] = s
		}
		if inLine(s) && (!ok || l.Requeued) {
			waiting = append(waiting, queueSuite{Key: client.ObjectKeyFromObject(s), Created: s.CreationTimestamp})
		}
	}
	var holders []slotHolder
	for _, l := range leases {
		s := byUID[l.UID]
		if s == nil {
			// Gone, or a cache that has not seen it yet: the API server says which.
			s = q.suiteOfLease(ctx, l)
		}
		draining := l.Requeued || s == nil || !inLine(s)
		if draining {
			released, err := q.releaseIfGone(ctx, book, l)
			if err != nil {
				log.FromContext(ctx).Error(err, "releasing a run slot", "lease", l.Name)
			}
			if released {
				continue
			}
		}
		holders = append(holders, slotHolder{Key: l.Key, Draining: draining})
	}
	me := queueSuite{Key: client.ObjectKeyFromObject(self), Created: self.CreationTimestamp}
	return decideAdmission(waiting, holders, book.turns(), me, q.Limits)
}

// suiteOfLease reads the suite a Lease admits around the cache; nil when it is gone. On an error it
// is taken as present, so that no slot is released on a guess.
func (q *Queue) suiteOfLease(ctx context.Context, l slotLease) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	err := q.APIReader.Get(ctx, l.Key, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		log.FromContext(ctx).Error(err, "reading the suite of a run slot", "lease", l.Name)
		return &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: l.Key.Namespace, Name: l.Key.Name, UID: l.UID}}
	case s.UID != l.UID:
		return nil
	}
	return s
}

// queueSuites lists the suites of the namespaces the manager runs around the cache, as metadata
// only: names, UIDs, creation and deletion times and resource versions, which is all the line needs
// but whether a suite ended. That comes from the cache (cached), as the status of every suite of
// the cluster, up to 800 KiB each, is too much to read at each admission. A suite the cache has
// not seen yet counts as in line, and an ended suite never runs again, so a cache that lags keeps
// a suite waiting at worst, and the watch brings it back.
func (q *Queue) queueSuites(ctx context.Context, cached []vmbenchv1.BenchmarkSuite) ([]vmbenchv1.BenchmarkSuite, error) {
	var metas []metav1.PartialObjectMetadata
	list := func(opts ...client.ListOption) error {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(vmbenchv1.GroupVersion.WithKind("BenchmarkSuiteList"))
		if err := q.APIReader.List(ctx, l, opts...); err != nil {
			return err
		}
		metas = append(metas, l.Items...)
		return nil
	}
	if len(q.Namespaces) == 0 {
		if err := list(); err != nil {
			return nil, fmt.Errorf("listing suites for the run queue: %w", err)
		}
	}
	for _, ns := range q.Namespaces {
		if err := list(client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing the suites of namespace %s for the run queue: %w", ns, err)
		}
	}
	phase := make(map[types.UID]vmbenchv1.SuitePhase, len(cached))
	for i := range cached {
		phase[cached[i].UID] = cached[i].Status.Phase
	}
	out := make([]vmbenchv1.BenchmarkSuite, len(metas))
	for i, m := range metas {
		out[i].ObjectMeta = m.ObjectMeta
		out[i].Status.Phase = phase[m.UID]
	}
	return out, nil
}

// queueState sums up what of a suite matters to the others' places in line.
func queueState(s *vmbenchv1.BenchmarkSuite) string {
	switch {
	case looksAdmitted(s):
		if run := s.Status.ActiveRun(); run != nil {
			return "running " + run.Name
		}
		return "running"
	case inLine(s):
		return "waiting"
	}
	return "out"
}

// queueChanged passes the changes of a suite that move the others in line: it is admitted, moves to
// its next run, ends, is deleted or stops waiting. A new suite goes to the back of its namespace's
// line, behind everyone of its namespace already in it.
func Changed() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return true },
		UpdateFunc: func(e event.UpdateEvent) bool {
			old, okOld := e.ObjectOld.(*vmbenchv1.BenchmarkSuite)
			updated, okNew := e.ObjectNew.(*vmbenchv1.BenchmarkSuite)
			return okOld && okNew && queueState(old) != queueState(updated)
		},
	}
}

// queueRequests maps a change of one suite (or a released slot) to the suite itself and to every
// suite in line, whose place or message may have changed (with no limit, to the suite itself).
func (q *Queue) QueueRequests(ctx context.Context, obj client.Object) []reconcile.Request {
	self := client.ObjectKeyFromObject(obj)
	reqs := []reconcile.Request{{NamespacedName: self}}
	if q.Limits.unlimited() {
		// Nobody waits for another's slot.
		return reqs
	}
	list := &vmbenchv1.BenchmarkSuiteList{}
	if err := q.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		// The suites in line come back with the next change of any suite; this one is logged.
		log.FromContext(ctx).Error(err, "listing the suites in line")
		return reqs
	}
	for i := range list.Items {
		if s := &list.Items[i]; inLine(s) && !looksAdmitted(s) && client.ObjectKeyFromObject(s) != self {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)})
		}
	}
	return reqs
}
