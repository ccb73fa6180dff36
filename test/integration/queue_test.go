package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func queued(s *vmbenchv1.BenchmarkSuite) *metav1.Condition {
	c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionQueued)
	if c == nil {
		return &metav1.Condition{}
	}
	return c
}

// quickSuite is a container-only suite with one benchmark: one run.
func (h *harness) quickSuite(name string) *vmbenchv1.BenchmarkSuite {
	return containerOnly(h.suite(name, 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))
}

// expectWaiting waits until a suite is in line at position, and checks that its run has no child.
func (h *harness) expectWaiting(name string, position int32, running string) {
	h.t.Helper()
	s := h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.QueuePosition).To(Equal(position), "%s: %s", name, queued(s).Message)
		g.Expect(queued(s).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun))
		g.Expect(queued(s).Message).To(ContainSubstring("running now (1 of 1 slots): " + h.ns + "/" + running))
	})
	h.g.Expect(s.Status.StartTime).To(BeNil(), "%s is not admitted: its clock does not run", name)
	h.g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuitePending))
	h.g.Expect(progressing(s).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun))
	err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name + "-container-1"}, &mpiv2.MPIJob{})
	h.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s waits, so its run has no MPIJob: %v", name, err)
}

// Two suites created at once run one after the other, in creation order: the second waits in line
// with its position, its clock stopped, and its run starts only after the first one's ended.
func TestSuitesCreatedAtOnceRunOneAfterTheOther(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("first"))).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("second"))).To(Succeed())
	admittedAt := h.clock.Now()

	h.mpiJob("first-container-1")
	h.expectWaiting("second", 1, "first (run first-container-1)")
	first := h.get("first")
	h.g.Expect(queued(first).Reason).To(Equal(vmbenchv1.ReasonAdmitted))
	h.g.Expect(first.Status.QueuePosition).To(BeZero())

	// The first run ends a minute later; only then does the second suite take the slot.
	h.clock.Step(time.Minute)
	h.finishContainerRun("first", "first-container-1", 1)
	h.mpiJob("second-container-1")
	h.clock.Step(time.Minute)
	h.finishContainerRun("second", "second-container-1", 1)

	first = h.eventuallySuite("first", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	second := h.eventuallySuite("second", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(second.Status.QueuePosition).To(BeZero())
	h.g.Expect(queued(second).Reason).To(Equal(vmbenchv1.ReasonAdmitted))
	// Runs never overlap: the second one started after the first one's results were collected.
	firstRun, secondRun := first.Status.Runs[0], second.Status.Runs[0]
	h.g.Expect(firstRun.CompletionTime.Time).To(BeTemporally("==", admittedAt.Add(time.Minute)))
	h.g.Expect(secondRun.StartTime.Time).NotTo(BeTemporally("<", firstRun.CompletionTime.Time),
		"the second run started at %s, before the first one ended at %s", secondRun.StartTime, firstRun.CompletionTime)
	// spec.timeout counts from the admission, not from the time in line.
	h.g.Expect(first.Status.StartTime.Time).To(BeTemporally("==", admittedAt))
	h.g.Expect(second.Status.StartTime.Time).To(BeTemporally("==", admittedAt.Add(time.Minute)))
}

// Deleting the running suite admits the next one at once; the others move up. The line is derived
// from the suites, so a restarted manager keeps it.
func TestDeletedSuiteFreesItsSlotAndTheLineSurvivesARestart(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	for _, name := range []string{"a", "b", "c"} {
		h.g.Expect(k8s.Create(h.ctx, h.quickSuite(name))).To(Succeed())
		// A creationTimestamp has whole seconds: creation order shows beyond the names' order.
		time.Sleep(1100 * time.Millisecond)
	}
	h.mpiJob("a-container-1")
	h.expectWaiting("b", 1, "a (run a-container-1)")
	h.expectWaiting("c", 2, "a (run a-container-1)")
	h.g.Expect(queued(h.get("c")).Message).To(ContainSubstring("ahead in line: " + h.ns + "/b"))

	h.stopManager()
	h.startManager(allKinds())
	h.g.Consistently(func(g Gomega) {
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "b-container-1"}, &mpiv2.MPIJob{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "b started while a holds the slot: %v", err)
	}, 2*time.Second, interval).Should(Succeed())
	h.expectWaiting("b", 1, "a (run a-container-1)")

	// envtest runs no garbage collector: a's children stay, but a no longer holds the slot.
	h.g.Expect(k8s.Delete(h.ctx, h.get("a"))).To(Succeed())
	h.mpiJob("b-container-1")
	h.expectWaiting("c", 1, "b (run b-container-1)")
	h.finishContainerRun("b", "b-container-1", 1)
	h.mpiJob("c-container-1")
	h.eventuallySuite("c", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.QueuePosition).To(BeZero())
		g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonAdmitted))
	})
}

// Many suites created at once by concurrent workers: one holds the slot, whatever the interleaving.
func TestOneSlotIsNeverTakenTwice(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	names := []string{"s1", "s2", "s3", "s4", "s5", "s6"}
	for _, name := range names {
		h.g.Expect(k8s.Create(h.ctx, h.quickSuite(name))).To(Succeed())
	}
	admitted := func(g Gomega) []string {
		list := &vmbenchv1.BenchmarkSuiteList{}
		g.Expect(k8s.List(h.ctx, list, client.InNamespace(h.ns))).To(Succeed())
		var out []string
		for _, s := range list.Items {
			if s.Status.StartTime != nil {
				out = append(out, s.Name)
			}
		}
		return out
	}
	h.g.Eventually(admitted, timeout, interval).Should(HaveLen(1))
	h.g.Consistently(admitted, 2*time.Second, interval).Should(HaveLen(1))
	h.g.Eventually(func(g Gomega) {
		list := &vmbenchv1.BenchmarkSuiteList{}
		g.Expect(k8s.List(h.ctx, list, client.InNamespace(h.ns))).To(Succeed())
		positions := []int32{}
		for _, s := range list.Items {
			if s.Status.StartTime == nil {
				positions = append(positions, s.Status.QueuePosition)
			}
		}
		g.Expect(positions).To(ConsistOf(int32(1), int32(2), int32(3), int32(4), int32(5)))
	}, timeout, interval).Should(Succeed())
	jobs := &mpiv2.MPIJobList{}
	h.g.Expect(k8s.List(h.ctx, jobs, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(jobs.Items).To(HaveLen(1))
}
