package integration

import (
	"fmt"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/failure"
)

// What a kubelet or virt-handler reports of a run's members after they started is named in the
// run's message and the suite's RunsFailed condition in the reconcile that sees it, and the suite
// goes on to its next run. No kubelet runs here: the tests make the pods as the MPI Operator and
// KubeVirt would, and write their status as a kubelet would.

// workerPod creates worker index of an MPIJob as the MPI Operator makes it, scheduled, and writes
// its status as the kubelet would.
func (h *harness) workerPod(job *mpiv2.MPIJob, index int, restart corev1.RestartPolicy, status corev1.PodStatus) *corev1.Pod {
	h.t.Helper()
	pod := podOf(job, mpiv2.MPIReplicaTypeWorker, fmt.Sprintf("%s-worker-%d", job.Name, index))
	pod.Labels[mpiv2.JobRoleLabel] = "worker"
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, mpiv2.SchemeGroupVersion.WithKind("MPIJob"))}
	pod.Spec.NodeName = "node-b"
	pod.Spec.RestartPolicy = restart
	h.g.Expect(k8s.Create(h.ctx, pod)).To(Succeed())
	h.writePodStatus(pod, status)
	return pod
}

// writePodStatus replaces a pod's status, as the kubelet does: conditions and every container's
// status are sent whole.
func (h *harness) writePodStatus(pod *corev1.Pod, status corev1.PodStatus) {
	h.t.Helper()
	h.g.Eventually(func() error {
		fresh := &corev1.Pod{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
			return err
		}
		fresh.Status = status
		return k8s.Status().Update(h.ctx, fresh)
	}, timeout, interval).Should(Succeed())
}

// runningStatus is a started pod's status with one container in the state given.
func runningStatus(phase corev1.PodPhase, container string, restarts int32, state, last corev1.ContainerState) corev1.PodStatus {
	now := metav1.Now()
	return corev1.PodStatus{
		Phase: phase, StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: container, Image: "vmbench/runner:test", RestartCount: restarts,
			State: state, LastTerminationState: last}},
	}
}

// crashLooping is a container the kubelet restarts after each exit with code 1.
func crashLooping(restarts int32) corev1.PodStatus {
	return runningStatus(corev1.PodRunning, "worker", restarts,
		corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: "back-off 40s restarting failed container=worker pod=w_ns(uid)"}},
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}})
}

// deleteRunPods plays the garbage collector for one finished run: its pods go once the manager
// deleted their owners, and the run queue's slot is free again.
func (h *harness) deleteRunPods(run string) {
	h.t.Helper()
	h.g.Expect(k8s.DeleteAllOf(h.ctx, &corev1.Pod{}, client.InNamespace(h.ns),
		client.MatchingLabels{vmbenchv1.LabelRun: run}, client.GracePeriodSeconds(0))).To(Succeed())
}

// expectRunFailedNow waits until run failed with a message that begins with want, at the suite's
// clock of now (no deadline passed), and the suite's RunsFailed condition names it; the suite goes on.
func (h *harness) expectRunFailedNow(suite, run, want string) *vmbenchv1.BenchmarkSuite {
	h.t.Helper()
	now := h.clock.Now()
	s := h.eventuallySuite(suite, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, run)).To(Equal(vmbenchv1.RunFailed))
	})
	r := runOf(s, run)
	h.g.Expect(r.Message).To(HavePrefix(want))
	h.g.Expect(r.CompletionTime.Time).To(BeTemporally("==", now), "failed in the reconcile that saw it, not at a deadline")
	rf := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionRunsFailed)
	h.g.Expect(rf).NotTo(BeNil())
	h.g.Expect(rf.Status).To(Equal(metav1.ConditionTrue))
	h.g.Expect(rf.Message).To(ContainSubstring(run + ": " + want))
	return s
}

// expectRunStarting waits until the manager has started run, and written so: the run Running and
// the suite waiting for its members (Starting), as it is before the MPI Operator or KubeVirt report
// anything.
func (h *harness) expectRunStarting(suite, run string) {
	h.t.Helper()
	h.eventuallySuite(suite, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, run)).To(Equal(vmbenchv1.RunRunning))
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonStarting))
	})
}

// expectNextRunStarts frees the slot of the failed run and waits until the next run is Running.
func (h *harness) expectNextRunStarts(suite, failed, next string) {
	h.t.Helper()
	h.deleteRunPods(failed)
	h.eventuallySuite(suite, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, next)).To(Equal(vmbenchv1.RunRunning))
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteRunning))
	})
}

// Workers that crash-loop before the launcher starts (the MPI Operator waits for ready workers):
// named while they restart, and the run fails once a worker restarted maxMemberRestarts (3) times.
func TestCrashLoopingWorkerFailsTheRunPastTheRestartBound(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("loop", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	job := h.mpiJob("loop-container-1")
	pod := h.workerPod(job, 0, corev1.RestartPolicyAlways, crashLooping(1))

	s := h.eventuallySuite("loop", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonCrashLoop))
	})
	h.g.Expect(runOf(s, "loop-container-1").Message).To(HavePrefix("waiting: CrashLoopBackOff: container worker of pod loop-container-1-worker-0 (worker) " +
		"on node node-b restarted 1 times (the run fails at 3); its last run exited with code 1 (Error)"))

	h.writePodStatus(pod, crashLooping(4))
	h.expectRunFailedNow("loop", "loop-container-1", "CrashLoopBackOff: container worker of pod loop-container-1-worker-0 (worker) on node node-b "+
		"restarted 4 times (the run fails at 3); its last run exited with code 1 (Error); see kubectl logs loop-container-1-worker-0 -c worker --previous")
	h.expectNextRunStarts("loop", "loop-container-1", "loop-container-2")
}

// A worker the kernel killed at its memory limit fails the running run at once, with the limit
// (cluster.memory) and what the benchmarks ask for.
func TestOOMKilledWorkerFailsTheRunAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("oom", 2, bench("vm", vmbenchv1.BenchmarkStressNGVM))))).To(Succeed())
	job := h.mpiJob("oom-container-1")
	// The MPIJob exists before the manager has written that its run started; acting as the MPI
	// Operator before that write is seen lets the test's steps interleave with the manager's own
	// start (a stale cache, a status conflict) instead of following it.
	h.expectRunStarting("oom", "oom-container-1")
	started := runMessages(t, "oom-container-1", 1, "kvm", job.CreationTimestamp.Time)[:1]
	h.containerLauncherPod("oom", "oom-container-1", runnerLog(t, h.token("oom", "oom-container-1"), started...))
	h.setMPIJobCondition("oom-container-1", mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")
	h.eventuallySuite("oom", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(vmbenchv1.ReasonRunning))
	})

	h.workerPod(job, 1, corev1.RestartPolicyNever, runningStatus(corev1.PodFailed, "worker", 0,
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}, corev1.ContainerState{}))
	h.expectRunFailedNow("oom", "oom-container-1", "OOMKilled: container worker of pod oom-container-1-worker-1 (worker) on node node-b "+
		"was killed for its memory (OOMKilled, exit code 137): it had a memory limit of 2Gi (cluster.memory); "+
		"vm (stress-ng-vm) asks for stressNGVM.bytes 50%, split across its 1 workers; raise cluster.memory, or lower what the benchmarks ask for")
	h.expectNextRunStarts("oom", "oom-container-1", "oom-container-2")
}

// A worker the kubelet evicted for node memory pressure fails the run with the kubelet's message,
// not with the launcher's log.
func TestEvictedWorkerFailsTheRunWithTheKubeletsMessage(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("evict", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	job := h.mpiJob("evict-container-1")
	h.expectRunStarting("evict", "evict-container-1")
	started := runMessages(t, "evict-container-1", 1, "kvm", job.CreationTimestamp.Time)[:1]
	launcher := h.containerLauncherPod("evict", "evict-container-1", runnerLog(t, h.token("evict", "evict-container-1"), started...))
	h.setMPIJobCondition("evict-container-1", mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")

	kubelet := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 91952Ki. " +
		"Container worker was using 1887436Ki, request is 2Gi, has larger consumption of memory."
	status := runningStatus(corev1.PodFailed, "worker", 0,
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "ContainerStatusUnknown", ExitCode: 137,
			Message: "The container could not be located when the pod was terminated"}}, corev1.ContainerState{})
	status.Reason, status.Message = "Evicted", kubelet
	h.workerPod(job, 0, corev1.RestartPolicyNever, status)
	h.expectRunFailedNow("evict", "evict-container-1", "Evicted: pod evict-container-1-worker-0 (worker) on node node-b was evicted by the kubelet: "+
		kubelet+"; the run's results are lost and later runs go on; run the suite on nodes with room to spare (spec.placement), "+
		"and keep requests equal to limits (no cluster.cpuRequest or cluster.memoryRequest) so that its pods are evicted last")
	h.g.Expect(h.logs.openedPods()).To(ContainElement(launcher.Name), "the launcher's log is read for what was measured before")
	h.expectNextRunStarts("evict", "evict-container-1", "evict-container-2")
}

// A VM whose virt-launcher the kernel OOM-killed: virt-handler reports its VMI Failed, and the run
// fails at once naming the virt-launcher's kill rather than only the VMI's phase.
func TestOOMKilledVirtLauncherFailsTheVMRunAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, vmOnly(h.suite("vmoom", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	vmis := map[string]*kubevirtv1.VirtualMachineInstance{}
	for _, n := range nodes {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		h.g.Eventually(func() error {
			return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "vmoom-vm-1-" + n}, vmi)
		}, timeout, interval).Should(Succeed())
		vmis[n] = vmi
		h.setVMIPhase(vmi.Name, kubevirtv1.Running)
	}
	master := vmis["master"]
	started := runMessages(t, "vmoom-vm-1", 1, "kvm", master.CreationTimestamp.Time)[:1]
	h.launcherPod("vmoom", "vmoom-vm-1", map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log",
		metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")), runnerLog(t, h.token("vmoom", "vmoom-vm-1"), started...))
	h.eventuallySuite("vmoom", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(vmbenchv1.ReasonRunning))
	})

	// KubeVirt's virt-launcher of node01, its compute container killed at the pod's memory limit.
	node01 := vmis["node01"]
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-vmoom-vm-1-node01-x7k2p", Namespace: h.ns, Labels: map[string]string{
			"kubevirt.io": "virt-launcher", vmbenchv1.LabelSuite: "vmoom", vmbenchv1.LabelRun: "vmoom-vm-1", vmbenchv1.LabelNode: "node01"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(node01, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))}},
		Spec: corev1.PodSpec{NodeName: "node-c", RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "compute", Image: "virt-launcher",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *node01.Spec.Domain.Memory.Guest}}}}},
	}
	h.g.Expect(k8s.Create(h.ctx, pod)).To(Succeed())
	h.writePodStatus(pod, runningStatus(corev1.PodFailed, "compute", 0,
		corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}, corev1.ContainerState{}))
	h.setVMIPhase(node01.Name, kubevirtv1.Failed)

	h.expectRunFailedNow("vmoom", "vmoom-vm-1", "OOMKilled: container compute of pod virt-launcher-vmoom-vm-1-node01-x7k2p (virt-launcher of VMI vmoom-vm-1-node01) "+
		"on node node-c was killed for its memory (OOMKilled, exit code 137): it had a memory limit of 2Gi, which holds the guest's cluster.memory "+
		"and KubeVirt's overhead; raise cluster.memory, or lower what the benchmarks ask for")
	h.expectNextRunStarts("vmoom", "vmoom-vm-1", "vmoom-vm-2")
}

// A worker whose node stops reporting: the node lifecycle controller marks the pod not ready while
// its containers still say they run. The suite names it while the run goes on; the taint manager's
// eviction (DisruptionTarget) then fails the run at once.
func TestWorkerOnALostNodeIsNamedThenItsEvictionFailsTheRun(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("lost", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	job := h.mpiJob("lost-container-1")
	h.expectRunStarting("lost", "lost-container-1")
	started := runMessages(t, "lost-container-1", 1, "kvm", job.CreationTimestamp.Time)[:1]
	h.containerLauncherPod("lost", "lost-container-1", runnerLog(t, h.token("lost", "lost-container-1"), started...))
	h.setMPIJobCondition("lost-container-1", mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")
	running := runningStatus(corev1.PodRunning, "worker", 0,
		corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}, corev1.ContainerState{})
	running.ContainerStatuses[0].Ready = true
	running.Conditions = append(running.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
	pod := h.workerPod(job, 0, corev1.RestartPolicyNever, running)
	h.eventuallySuite("lost", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(vmbenchv1.ReasonRunning))
	})

	// What MarkPodsNotReady writes: Ready False, nothing else.
	running.Conditions[1].Status = corev1.ConditionFalse
	h.writePodStatus(pod, running)
	want := "NodeLost: pod lost-container-1-worker-0 (worker) on node node-b is not ready while its containers still run: its node is NotReady or unreachable; " +
		"the run fails when the pod is evicted from it (after its not-ready toleration, 300s by default), and goes on if the node comes back"
	s := h.eventuallySuite("lost", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonNodeLost))
	})
	h.g.Expect(runOf(s, "lost-container-1").Phase).To(Equal(vmbenchv1.RunRunning))
	h.g.Expect(runOf(s, "lost-container-1").Message).To(Equal(want))

	// The taint manager's eviction, past the pod's toleration.
	running.Conditions = append(running.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint", LastTransitionTime: metav1.Now()})
	h.writePodStatus(pod, running)
	h.expectRunFailedNow("lost", "lost-container-1", "NodeLost: pod lost-container-1-worker-0 (worker) on node node-b is being removed: "+
		"DeletionByTaintManager: Taint manager: deleting due to NoExecute taint; the run's results are lost and later runs go on")
	h.expectNextRunStarts("lost", "lost-container-1", "lost-container-2")
}
