package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
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

// expectWaiting waits until a suite is in line at position behind holder (a suite of the same
// namespace, which the message names), and checks that its run has no child.
func (h *harness) expectWaiting(name string, position int32, holder string) {
	h.t.Helper()
	s := h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.QueuePosition).To(Equal(position), "%s: %s", name, queued(s).Message)
		g.Expect(queued(s).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun))
		g.Expect(queued(s).Message).To(ContainSubstring("1 of 1 slots of the cluster are taken (by this namespace: " + holder + ")"))
	})
	h.g.Expect(s.Status.StartTime).To(BeNil(), "%s is not admitted: its clock does not run", name)
	h.g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuitePending))
	h.g.Expect(progressing(s).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun))
	err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name + "-container-1"}, &mpiv2.MPIJob{})
	h.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s waits, so its run has no MPIJob: %v", name, err)
}

// collectGarbage plays the garbage collector, which envtest does not run: it deletes the pods of a
// suite's runs, whose MPIJobs and VMIs the manager deleted, and the MPIJobs of a deleted suite.
func (h *harness) collectGarbage(suite string) {
	h.t.Helper()
	h.g.Expect(k8s.DeleteAllOf(h.ctx, &corev1.Pod{}, client.InNamespace(h.ns),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite}, client.GracePeriodSeconds(0))).To(Succeed())
	h.g.Expect(k8s.DeleteAllOf(h.ctx, &mpiv2.MPIJob{}, client.InNamespace(h.ns),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite})).To(Succeed())
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
	h.expectWaiting("second", 1, "first")
	first := h.get("first")
	h.g.Expect(queued(first).Reason).To(Equal(vmbenchv1.ReasonAdmitted))
	h.g.Expect(first.Status.QueuePosition).To(BeZero())

	// The first run ends a minute later; only then does the second suite take the slot.
	h.clock.Step(time.Minute)
	h.finishContainerRun("first", "first-container-1", 1)
	// The first suite ended, but its launcher pod is still there: the second waits for it to go.
	h.eventuallySuite("first", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Consistently(func(g Gomega) {
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "second-container-1"}, &mpiv2.MPIJob{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "second started beside first's pods: %v", err)
	}, 2*time.Second, interval).Should(Succeed())
	h.g.Expect(queued(h.get("second")).Message).To(ContainSubstring("held by suites that ended and whose pods or VMs are still being removed"))
	h.collectGarbage("first")
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

// Deleting the running suite admits the next one once its MPIJob is gone; the others move up.
// Admissions are Leases, read again by a restarted manager, so the line survives it.
func TestDeletedSuiteFreesItsSlotAndTheLineSurvivesARestart(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	for _, name := range []string{"a", "b", "c"} {
		h.g.Expect(k8s.Create(h.ctx, h.quickSuite(name))).To(Succeed())
		// A creationTimestamp has whole seconds: creation order shows beyond the names' order.
		time.Sleep(1100 * time.Millisecond)
	}
	h.mpiJob("a-container-1")
	h.expectWaiting("b", 1, "a")
	h.expectWaiting("c", 2, "a")
	h.g.Expect(queued(h.get("c")).Message).To(ContainSubstring("1 suites ahead in line (of this namespace: b)"))

	h.stopManager()
	h.startManager(allKinds())
	h.g.Consistently(func(g Gomega) {
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "b-container-1"}, &mpiv2.MPIJob{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "b started while a holds the slot: %v", err)
	}, 2*time.Second, interval).Should(Succeed())
	h.expectWaiting("b", 1, "a")

	// envtest runs no garbage collector: a's MPIJob stays, and holds the slot until it is gone.
	h.g.Expect(k8s.Delete(h.ctx, h.get("a"))).To(Succeed())
	h.g.Consistently(func(g Gomega) {
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "b-container-1"}, &mpiv2.MPIJob{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "b started beside a's MPIJob: %v", err)
	}, 2*time.Second, interval).Should(Succeed())
	h.collectGarbage("a")
	h.mpiJob("b-container-1")
	h.expectWaiting("c", 1, "b")
	h.finishContainerRun("b", "b-container-1", 1)
	h.collectGarbage("b")
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

// The queue's truth is the manager's Lease, not the status: a tenant who writes status.startTime on
// a waiting suite does not get it admitted, and the start time is taken out again.
func TestAStartTimeWrittenByATenantAdmitsNothing(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("holder"))).To(Succeed())
	h.mpiJob("holder-container-1")
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("jumper"))).To(Succeed())
	h.expectWaiting("jumper", 1, "holder")

	h.g.Eventually(func() error {
		s := h.get("jumper")
		s.Status.StartTime = &metav1.Time{Time: h.clock.Now()}
		s.Status.Phase = vmbenchv1.SuiteRunning
		return k8s.Status().Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	// That status write is a change of the line's state, which brings the suite back at once.
	h.g.Consistently(func(g Gomega) {
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "jumper-container-1"}, &mpiv2.MPIJob{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "jumper started beside holder: %v", err)
	}, 2*time.Second, interval).Should(Succeed())
	h.expectWaiting("jumper", 1, "holder")

	leases := &coordinationv1.LeaseList{}
	h.g.Expect(k8s.List(h.ctx, leases, client.InNamespace(h.ns))).To(Succeed())
	holders := []string{}
	for _, l := range leases.Items {
		holders = append(holders, *l.Spec.HolderIdentity)
	}
	h.g.Expect(holders).To(ConsistOf(h.ns + "/holder"))
}

// A pod of the last run that is being deleted (a finalizer, a long grace period) still occupies its
// node: the next suite waits until it is gone.
func TestNextSuiteWaitsForTheLastRunsTerminatingPod(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("first"))).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("second"))).To(Succeed())
	h.mpiJob("first-container-1")
	worker := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "first-container-1-worker-0", Namespace: h.ns, Finalizers: []string{"example.com/slow"},
			Labels: map[string]string{vmbenchv1.LabelSuite: "first", vmbenchv1.LabelRun: "first-container-1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "x"}}},
	}
	h.g.Expect(k8s.Create(h.ctx, worker)).To(Succeed())
	h.finishContainerRun("first", "first-container-1", 1)
	h.eventuallySuite("first", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.collectGarbage("first")
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(worker), worker)).To(Succeed())
	h.g.Expect(worker.DeletionTimestamp).NotTo(BeNil())

	h.g.Consistently(func(g Gomega) {
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "second-container-1"}, &mpiv2.MPIJob{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "second started beside first's terminating worker: %v", err)
	}, 2*time.Second, interval).Should(Succeed())
	s := h.get("second")
	h.g.Expect(queued(s).Reason).To(Equal(vmbenchv1.ReasonWaitingForRun))
	h.g.Expect(queued(s).Message).To(ContainSubstring("1 of them held by suites that ended and whose pods or VMs are still being removed"))

	worker.Finalizers = nil
	h.g.Expect(k8s.Update(h.ctx, worker)).To(Succeed())
	h.mpiJob("second-container-1")
}

// The annotation vmbench.io/queue: requeue stops the running run and starts it again from scratch
// once the suite is admitted again; end fails the suite with reason EndedByAdmin and frees its slot
// for the next suite. The manager takes the annotation off once it acted on it.
func TestQueueAnnotationRequeuesAndEnds(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("long"))).To(Succeed())
	before := h.mpiJob("long-container-1")

	annotate := func(value string) {
		h.g.Eventually(func() error {
			s := h.get("long")
			if s.Annotations == nil {
				s.Annotations = map[string]string{}
			}
			s.Annotations["vmbench.io/queue"] = value
			return k8s.Update(h.ctx, s)
		}, timeout, interval).Should(Succeed())
	}
	annotate("requeue")
	h.g.Eventually(func(g Gomega) {
		job := &mpiv2.MPIJob{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "long-container-1"}, job)).To(Succeed())
		g.Expect(job.UID).NotTo(Equal(before.UID), "the run was not started again")
	}, timeout, interval).Should(Succeed())
	h.eventuallySuite("long", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Annotations).NotTo(HaveKey("vmbench.io/queue"))
		g.Expect(runPhase(s, "long-container-1")).To(Equal(vmbenchv1.RunRunning))
	})

	h.g.Expect(k8s.Create(h.ctx, h.quickSuite("next"))).To(Succeed())
	h.expectWaiting("next", 1, "long")
	annotate("end")
	s := h.eventuallySuite("long", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
		g.Expect(s.Annotations).NotTo(HaveKey("vmbench.io/queue"))
	})
	failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
	h.g.Expect(failed.Reason).To(Equal("EndedByAdmin"))
	h.g.Expect(failed.Message).To(ContainSubstring("ended by the annotation vmbench.io/queue=end"))
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "long-container-1"}, &mpiv2.MPIJob{}))
	}, timeout, interval).Should(BeTrue(), "the ended run's MPIJob is not deleted")
	h.mpiJob("next-container-1")
}

// The admin's maximum suite duration caps spec.timeout from the admission on, even a timeout raised
// after the start; the Queued condition says so when the suite is admitted.
func TestMaxSuiteDurationCapsTheTimeoutEvenRaisedLater(t *testing.T) {
	h := newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) {
		r.MaxSuiteDuration = time.Hour
		r.ContainerStartup = 24 * time.Hour
	}
	h.startManager(allKinds())
	suite := h.quickSuite("long")
	suite.Spec.Timeout = vmbenchv1.DurationOf(30 * time.Minute)
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	h.mpiJob("long-container-1")
	h.g.Expect(queued(h.get("long")).Message).To(HavePrefix("admitted at "))

	h.g.Eventually(func() error {
		s := h.get("long")
		s.Spec.Timeout = vmbenchv1.DurationOf(720 * time.Hour)
		return k8s.Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	s := h.eventuallySuite("long", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(queued(s).Message).To(ContainSubstring("spec.timeout 720h0m0s is above the cluster's maximum suite duration 1h0m0s " +
			"(the manager's --max-suite-duration, Helm value maxSuiteDuration), so the maximum applies"))
	})
	h.g.Expect(queued(s).Message).To(ContainSubstring("the suite ends at " + s.Status.StartTime.Add(time.Hour).UTC().Format(time.RFC3339)))

	h.clock.Step(61 * time.Minute)
	h.poke("long-container-1")
	s = h.eventuallySuite("long", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed).Reason).To(Equal(vmbenchv1.ReasonSuiteTimeout))
}
