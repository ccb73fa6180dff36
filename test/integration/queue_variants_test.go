package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runqueue"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
)

// The run queue with other limits than the harness's one slot, and a manager restricted to some
// namespaces (--watch-namespaces), in a real manager.

// slotLeases are the queue's Leases in the manager's namespace, by the UID of the suite each admits.
func (h *harness) slotLeases() map[string]coordinationv1.Lease {
	h.t.Helper()
	leases := &coordinationv1.LeaseList{}
	h.g.Expect(k8s.List(h.ctx, leases, client.InNamespace(h.ns), client.HasLabels{runqueue.LabelQueueSlot})).To(Succeed())
	out := map[string]coordinationv1.Lease{}
	for _, l := range leases.Items {
		out[l.Annotations[runqueue.AnnotationSlotUID]] = l
	}
	return out
}

// queueEvents are the Events the manager recorded when a suite of the test's namespace started to
// wait in line.
func (h *harness) queueEvents() []corev1.Event {
	h.t.Helper()
	events := &corev1.EventList{}
	h.g.Expect(k8s.List(h.ctx, events, client.InNamespace(h.ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range events.Items {
		if e.Reason == vmbenchv1.ConditionQueued {
			out = append(out, e)
		}
	}
	return out
}

// With --max-active-runs=0 there is no line: three suites get their MPIJobs at once, run side by
// side, and none is ever Queued.
func TestNoRunLimitAdmitsEverySuiteAtOnce(t *testing.T) {
	h := newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.MaxActiveRuns = 0 }
	h.startManager(allKinds())
	names := []string{"a", "b", "c"}
	for _, name := range names {
		h.g.Expect(k8s.Create(h.ctx, h.quickSuite(name))).To(Succeed())
	}
	h.g.Eventually(func(g Gomega) {
		for _, name := range names {
			s := &vmbenchv1.BenchmarkSuite{}
			g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, s)).To(Succeed())
			g.Expect(runPhase(s, name+"-container-1")).To(Equal(vmbenchv1.RunRunning), name)
			g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonAdmitted), "%s: %s", name, queued(s).Message)
			g.Expect(s.Status.QueuePosition).To(BeZero(), name)
			g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name + "-container-1"}, &mpiv2.MPIJob{})).To(Succeed(), name)
		}
	}, timeout, interval).Should(Succeed(), "every suite runs at once")
	leases := h.slotLeases()
	h.g.Expect(leases).To(HaveLen(3), "each running suite holds a Lease of its own")
	for _, name := range names {
		h.g.Expect(leases).To(HaveKey(string(h.get(name).UID)), name)
	}
	h.g.Expect(h.queueEvents()).To(BeEmpty(), "no suite ever waited in line")
}

// With --max-active-runs=2 the first two suites run side by side and the third waits first in line,
// saying which suites of its namespace hold the two slots; once one of them is gone, it runs beside
// the other.
func TestTwoSlotsAdmitTwoAndQueueTheThird(t *testing.T) {
	h := newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.MaxActiveRuns = 2 }
	h.startManager(allKinds())
	for _, name := range []string{"a", "b", "c"} {
		h.g.Expect(k8s.Create(h.ctx, h.quickSuite(name))).To(Succeed())
	}
	h.mpiJob("a-container-1")
	h.mpiJob("b-container-1")
	c := h.eventuallySuite("c", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.QueuePosition).To(Equal(int32(1)), queued(s).Message)
		g.Expect(queued(s).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun))
	})
	h.g.Expect(queued(c).Message).To(HavePrefix("1st in line for a run slot; 2 of 2 slots of the cluster are taken (by this namespace: a, b)"))
	h.g.Expect(c.Status.StartTime).To(BeNil())
	h.suiteReconciled("c")
	h.g.Expect(queued(h.get("c")).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun), "c was admitted while a and b hold both slots")
	h.g.Consistently(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "c-container-1"}, &mpiv2.MPIJob{}))
	}, 2*time.Second, interval).Should(BeTrue(), "c waits while a and b hold both slots")
	h.g.Expect(h.slotLeases()).To(HaveLen(2))
	for _, name := range []string{"a", "b"} {
		h.g.Expect(queued(h.get(name)).Reason).To(Equal(vmbenchv1.ReasonAdmitted), name)
	}

	h.finishContainerRun("a", "a-container-1", 1)
	h.eventuallySuite("a", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.collectGarbage("a")
	h.mpiJob("c-container-1")
	h.eventuallySuite("c", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.QueuePosition).To(BeZero())
		g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonAdmitted))
	})
	h.g.Expect(runPhase(h.get("b"), "b-container-1")).To(Equal(vmbenchv1.RunRunning), "b still runs beside c")
	h.g.Expect(h.mpiJob("b-container-1").DeletionTimestamp).To(BeNil())
}

// A manager that runs some namespaces (--watch-namespaces) never touches a suite of another: no
// status, no children, no Lease, and no place in its line, although that suite is older than the
// one it runs and the line has one slot.
func TestUnwatchedNamespaceIsNeverTouched(t *testing.T) {
	h := newHarness(t)
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-unwatched-"}}
	h.g.Expect(k8s.Create(h.ctx, other)).To(Succeed())
	early := h.quickSuite("early")
	early.Namespace = other.Name
	h.g.Expect(k8s.Create(h.ctx, early)).To(Succeed())
	// A creationTimestamp has whole seconds: the unwatched suite is older than the watched one.
	time.Sleep(1100 * time.Millisecond)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("watched"))).To(Succeed())

	h.finishContainerRun("watched", "watched-container-1", 1)
	h.eventuallySuite("watched", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})

	untouched := &vmbenchv1.BenchmarkSuite{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(early), untouched)).To(Succeed())
	h.g.Expect(untouched.ResourceVersion).To(Equal(early.ResourceVersion), "the unwatched suite was written")
	h.g.Expect(untouched.Status).To(Equal(vmbenchv1.BenchmarkSuiteStatus{}))
	h.g.Expect(untouched.Finalizers).To(BeEmpty())
	for _, list := range []client.ObjectList{&mpiv2.MPIJobList{}, &corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{},
		&corev1.PersistentVolumeClaimList{}, &networkingv1.NetworkPolicyList{}} {
		h.g.Expect(k8s.List(h.ctx, list, client.InNamespace(other.Name))).To(Succeed())
		h.g.Expect(list).To(HaveField("Items", BeEmpty()), "%T in the unwatched namespace", list)
	}
	events := &corev1.EventList{}
	h.g.Expect(k8s.List(h.ctx, events, client.InNamespace(other.Name))).To(Succeed())
	h.g.Expect(events.Items).To(BeEmpty(), "no event about the unwatched suite")
	h.g.Expect(h.slotLeases()).NotTo(HaveKey(string(early.UID)))
}
