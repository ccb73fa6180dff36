package runqueue

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Every admitted suite has one Lease in the manager's own namespace (the namespace of
// --master-key-secret), which only the manager and the cluster's admins can write. Its name comes
// from the suite's UID, so a suite deleted and created again under the same name is another suite;
// its labels say what it is, its annotations (and holderIdentity) which suite it admits, and its
// acquireTime when. The manager reads the Leases around its cache (it caches no Lease) when it
// starts and before every admission, and keeps them in a slotBook in between: it writes them
// itself, so the book changes with its own writes.
// The Role that lets it do so is config/rbac/queue_role.yaml (charts/vmbench/templates/rbac.yaml).

const (
	// LabelQueueSlot marks the Leases of the run queue.
	LabelQueueSlot = "vmbench.io/queue-slot"
	// AnnotationSlotNamespace, AnnotationSlotName and AnnotationSlotUID name the suite a Lease admits.
	AnnotationSlotNamespace = "vmbench.io/suite-namespace"
	AnnotationSlotName      = "vmbench.io/suite-name"
	AnnotationSlotUID       = "vmbench.io/suite-uid"
	// AnnotationSlotRequeued marks a Lease whose suite was requeued: it holds the slot until the
	// suite's pods and VMs are gone, and admits the suite no more.
	AnnotationSlotRequeued = "vmbench.io/requeued"
	// AnnotationSlotDraining is when the manager first saw the Lease's suite ended (or requeued or
	// deleted) with pods or VMs left, in RFC 3339.
	AnnotationSlotDraining = "vmbench.io/draining-since"
)

// slotLeaseName is the name of the Lease that admits the suite with that UID.
func SlotLeaseName(uid types.UID) string {
	return "vmbench-slot-" + string(uid)
}

// slotLease is what the queue reads of one Lease.
type slotLease struct {
	Name     string
	Key      types.NamespacedName
	UID      types.UID
	Admitted time.Time
	Requeued bool
	// DrainingSince is when the manager first saw its pods and VMs outlive the suite's slot.
	DrainingSince time.Time
}

// slotBook is the manager's copy of the queue's Leases, and each namespace's last turn.
type slotBook struct {
	mu       sync.Mutex
	loaded   bool
	leases   map[types.UID]slotLease
	lastTurn map[string]time.Time
}

func (b *slotBook) get(uid types.UID) (slotLease, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.leases[uid]
	return l, ok
}

func (b *slotBook) mustGet(uid types.UID) slotLease {
	l, _ := b.get(uid)
	return l
}

// all lists the Leases, oldest admission first.
func (b *slotBook) all() []slotLease {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]slotLease, 0, len(b.leases))
	for _, l := range b.leases {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Admitted.Before(out[j].Admitted) || out[i].Admitted.Equal(out[j].Admitted) && out[i].Name < out[j].Name
	})
	return out
}

// of lists the Leases of the suite with that key, whatever its UID.
func (b *slotBook) of(key types.NamespacedName) []slotLease {
	var out []slotLease
	for _, l := range b.all() {
		if l.Key == key {
			out = append(out, l)
		}
	}
	return out
}

func (b *slotBook) turns() map[string]time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]time.Time, len(b.lastTurn))
	for ns, t := range b.lastTurn {
		out[ns] = t
	}
	return out
}

func (b *slotBook) put(l slotLease) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.leases[l.UID] = l
	if l.Admitted.After(b.lastTurn[l.Key.Namespace]) {
		b.lastTurn[l.Key.Namespace] = l.Admitted
	}
}

func (b *slotBook) remove(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.leases, uid)
}

// reload reads the Leases from the API server. The namespaces' turns are kept, and raised to the
// admissions the Leases hold.
func (b *slotBook) reload(ctx context.Context, reader client.Reader, namespace string) error {
	list := &coordinationv1.LeaseList{}
	if err := reader.List(ctx, list, client.InNamespace(namespace), client.HasLabels{LabelQueueSlot}); err != nil {
		return fmt.Errorf("listing the run queue's Leases in namespace %s: %w", namespace, err)
	}
	leases := map[types.UID]slotLease{}
	for i := range list.Items {
		if l, ok := parseSlotLease(&list.Items[i]); ok {
			leases[l.UID] = l
		}
	}
	b.mu.Lock()
	b.leases, b.loaded = leases, true
	if b.lastTurn == nil {
		b.lastTurn = map[string]time.Time{}
	}
	b.mu.Unlock()
	for _, l := range leases {
		b.put(l)
	}
	return nil
}

// parseSlotLease reads a queue Lease; one that names no suite is ignored (and holds no slot).
func parseSlotLease(l *coordinationv1.Lease) (slotLease, bool) {
	a := l.Annotations
	s := slotLease{
		Name: l.Name, Key: types.NamespacedName{Namespace: a[AnnotationSlotNamespace], Name: a[AnnotationSlotName]},
		UID: types.UID(a[AnnotationSlotUID]), Requeued: a[AnnotationSlotRequeued] == "true",
	}
	if s.Key.Namespace == "" || s.Key.Name == "" || s.UID == "" || l.Name != SlotLeaseName(s.UID) {
		return slotLease{}, false
	}
	if t, err := time.Parse(time.RFC3339, a[AnnotationSlotDraining]); err == nil {
		s.DrainingSince = t
	}
	switch {
	case l.Spec.AcquireTime != nil:
		s.Admitted = l.Spec.AcquireTime.Time
	default:
		s.Admitted = l.CreationTimestamp.Time
	}
	return s, true
}

// slotBook loads the Leases once, at the first reconcile after the manager started.
func (q *Queue) slotBook(ctx context.Context) (*slotBook, error) {
	q.bookOnce.Lock()
	defer q.bookOnce.Unlock()
	if q.book == nil {
		q.book = &slotBook{leases: map[types.UID]slotLease{}, lastTurn: map[string]time.Time{}}
	}
	if !q.book.loaded {
		if err := q.book.reload(ctx, q.APIReader, q.Namespace); err != nil {
			return nil, err
		}
	}
	return q.book, nil
}

// takeSlot creates the suite's Lease. A Lease of that name that exists already is the suite's own
// (its name comes from the UID): it is read back.
func (q *Queue) takeSlot(ctx context.Context, book *slotBook, suite *vmbenchv1.BenchmarkSuite, now time.Time) error {
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: SlotLeaseName(suite.UID), Namespace: q.Namespace,
			Labels: map[string]string{LabelQueueSlot: "true", "app.kubernetes.io/managed-by": "vmbench"},
			Annotations: map[string]string{
				AnnotationSlotNamespace: suite.Namespace, AnnotationSlotName: suite.Name, AnnotationSlotUID: string(suite.UID),
			},
		},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(suite.Namespace + "/" + suite.Name),
			AcquireTime:    &metav1.MicroTime{Time: now},
		},
	}
	err := q.Client.Create(ctx, lease)
	if apierrors.IsAlreadyExists(err) {
		err = q.APIReader.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	}
	if err != nil {
		return fmt.Errorf("creating the run queue's Lease %s/%s that admits the suite: %w", q.Namespace, lease.Name, err)
	}
	l, ok := parseSlotLease(lease)
	if !ok {
		return fmt.Errorf("the run queue's Lease %s/%s does not name the suite it admits: delete it", q.Namespace, lease.Name)
	}
	book.put(l)
	return nil
}

// occupied says whether pods or VMIs of the suite are still in the cluster (from the cache, by
// label): the launcher and the workers of its MPIJobs, its VMIs and their virt-launcher pods, and
// its MPIJobs, which make pods (a run whose MPIJob exists and whose pods do not yet is not over). A
// pod being deleted still occupies its node.
func (q *Queue) occupied(ctx context.Context, key types.NamespacedName) (bool, error) {
	lists := []client.ObjectList{&corev1.PodList{}}
	if q.Available[kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")] {
		lists = append(lists, &kubevirtv1.VirtualMachineInstanceList{})
	}
	if q.Available[mpiv2.SchemeGroupVersion.WithKind("MPIJob")] {
		lists = append(lists, &mpiv2.MPIJobList{})
	}
	for _, list := range lists {
		if err := q.Client.List(ctx, list, client.InNamespace(key.Namespace), client.MatchingLabels{vmbenchv1.LabelSuite: key.Name},
			client.Limit(1), client.UnsafeDisableDeepCopy); err != nil {
			return false, fmt.Errorf("listing the pods and VMs of suite %s: %w", key.Name, err)
		}
		if apimeta.LenList(list) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// drainLimit bounds how long the pods and VMs of a suite that ended may hold its slot: KubeVirt and
// the kubelet remove them within their grace periods, and a pod that a tenant labelled with the
// suite's name, or one stuck on a finalizer, must not hold the cluster's slot for ever.
const drainLimit = 15 * time.Minute

// releaseIfGone deletes a draining Lease once its suite's pods and VMs are gone, or drainLimit
// after the manager first saw it draining (recorded in the Lease, so that a restart keeps it).
func (q *Queue) releaseIfGone(ctx context.Context, book *slotBook, l slotLease) (bool, error) {
	busy, err := q.occupied(ctx, l.Key)
	if err != nil {
		return false, err
	}
	if busy {
		now := q.now()
		if l.DrainingSince.IsZero() {
			return false, q.markDraining(ctx, book, l, now)
		}
		if now.Sub(l.DrainingSince) < drainLimit {
			return false, nil
		}
		log.FromContext(ctx).Info("releasing a run slot whose suite's pods or VMs are still there after the drain limit: "+
			"delete them, or remove their finalizers", "suite", l.Key, "drainingSince", l.DrainingSince, "limit", drainLimit)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l.Name, Namespace: q.Namespace}}
	if err := q.Client.Delete(ctx, lease); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("releasing the run slot of Lease %s/%s: %w", q.Namespace, l.Name, err)
	}
	book.remove(l.UID)
	return true, nil
}

// releaseSlots releases the Leases of a suite that ended, is being deleted or is gone (suite nil),
// once its pods and VMs are gone, and wakes the suites in line. It says whether a Lease is still
// held by pods or VMs that are being removed: their deletion brings the suite back.
func (q *Queue) ReleaseSlots(ctx context.Context, key types.NamespacedName, suite *vmbenchv1.BenchmarkSuite) (bool, error) {
	book, err := q.slotBook(ctx)
	if err != nil {
		return false, err
	}
	held, released := false, false
	for _, l := range book.of(key) {
		if suite != nil && l.UID == suite.UID && inLine(suite) && !l.Requeued {
			continue
		}
		ok, err := q.releaseIfGone(ctx, book, l)
		if err != nil {
			return false, err
		}
		held, released = held || !ok, released || ok
	}
	if released && q.Wake != nil {
		obj := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
		select {
		case q.Wake <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
		}
	}
	return held, nil
}

// markDraining records in the Lease when its suite's pods and VMs were first seen outliving it.
func (q *Queue) markDraining(ctx context.Context, book *slotBook, l slotLease, now time.Time) error {
	if err := q.annotateLease(ctx, l, AnnotationSlotDraining, now.UTC().Format(time.RFC3339)); err != nil {
		return err
	}
	l.DrainingSince = now.UTC().Truncate(time.Second)
	book.put(l)
	return nil
}

// annotateLease sets one annotation of a queue Lease.
func (q *Queue) annotateLease(ctx context.Context, l slotLease, key, value string) error {
	lease := &coordinationv1.Lease{}
	if err := q.APIReader.Get(ctx, client.ObjectKey{Namespace: q.Namespace, Name: l.Name}, lease); err != nil {
		return fmt.Errorf("reading the run queue's Lease %s/%s: %w", q.Namespace, l.Name, err)
	}
	patch := client.MergeFrom(lease.DeepCopy())
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[key] = value
	if err := q.Client.Patch(ctx, lease, patch); err != nil {
		return fmt.Errorf("annotating the run queue's Lease %s/%s with %s: %w", q.Namespace, l.Name, key, err)
	}
	return nil
}

// now is the reconciler's clock, or the wall clock where it has none.
func (q *Queue) now() time.Time {
	if q.Clock == nil {
		return time.Now()
	}
	return q.Clock.Now()
}

// requeue marks the suite's Lease requeued: it holds the slot until the suite's pods and VMs are
// gone, and admits the suite no more. A suite requeued already, or never admitted, is left as it is.
func (q *Queue) Requeue(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) error {
	book, err := q.slotBook(ctx)
	if err != nil {
		return err
	}
	if l, ok := book.get(suite.UID); ok && !l.Requeued {
		if err := q.annotateLease(ctx, l, AnnotationSlotRequeued, "true"); err != nil {
			return fmt.Errorf("requeueing the suite: %w", err)
		}
		l.Requeued = true
		book.put(l)
	}
	return nil
}
