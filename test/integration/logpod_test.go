package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// A co-tenant who may create pods in the namespace can copy a launcher's labels. Such a pod's log is
// never read: only the pod whose controller is the run's launcher Job (of the run's MPIJob) or the
// run's master VMI is, by UID.

// lookalike creates, after the launcher pod own, a pod with its labels and container and the given controller
// (nil: none), whose creation time is later than own's, and gives it a log.
func (h *harness) lookalike(own *corev1.Pod, owner *metav1.OwnerReference, log []byte) *corev1.Pod {
	h.t.Helper()
	var fake *corev1.Pod
	// Creation times have a resolution of a second: the look-alike is made again until it is newer.
	h.g.Eventually(func(g Gomega) {
		if fake != nil {
			g.Expect(k8s.Delete(h.ctx, fake)).To(Succeed())
		}
		fake = &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "lookalike-", Namespace: h.ns, Labels: own.Labels},
			Spec:       *own.Spec.DeepCopy(),
		}
		if owner != nil {
			fake.OwnerReferences = []metav1.OwnerReference{*owner}
		}
		g.Expect(k8s.Create(h.ctx, fake)).To(Succeed())
		g.Expect(own.CreationTimestamp.Before(&fake.CreationTimestamp)).To(BeTrue())
	}, timeout, 200*time.Millisecond).Should(Succeed())
	h.logs.set(h.ns, fake.Name, own.Spec.Containers[0].Name, log)
	return fake
}

func TestNewerLookAlikeOfTheLauncherIsNotRead(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("twin", 1, demoBenchmarks()...)))).To(Succeed())
	job := h.mpiJob("twin-container-1")
	token := h.token("twin", "twin-container-1")
	own := h.containerLauncherPod("twin", "twin-container-1", runnerLog(t, token, runMessages(t, "twin-container-1", 1, "kvm", job.CreationTimestamp.Time)...))
	// Authentic frames of the same run, as a replay would carry them, with other figures.
	replay := runnerLog(t, token, runMessages(t, "twin-container-1", 100, "kvm", job.CreationTimestamp.Time)...)
	orphan := h.lookalike(own, nil, replay)
	otherJob := h.lookalike(own, &metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "twin-container-1-launcher",
		UID: "not-the-launcher-job", Controller: ptrBool(true)}, replay)
	h.setMPIJobCondition("twin-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "")

	s := h.eventuallySuite("twin", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(h.logs.openedPods()).To(ContainElement(own.Name))
	h.g.Expect(h.logs.openedPods()).NotTo(ContainElements(orphan.Name, otherJob.Name))
	want := fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")[0]
	got := findMetric(findResult(s, "cpu", "container").Metrics, want.Name)
	h.g.Expect(got.Mean).To(BeNumerically("~", want.Value, want.Value*1e-9), "the launcher's figures, not the look-alikes'")
}

func TestOnlyLookAlikesOfTheLauncherFailTheRunWithTheCause(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("fake", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	job := h.mpiJob("fake-container-1")
	h.launcherJob("fake-container-1")
	token := h.token("fake", "fake-container-1")
	// The launcher Job's own pod is gone; one with its labels and a forged controller reference (the
	// Job's name, not its UID) is there.
	pod := h.launcherPod("fake", "fake-container-1", map[string]string{mpiv2.JobRoleLabel: "launcher"}, "launcher",
		&metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: "fake-container-1-launcher", UID: "forged", Controller: ptrBool(true)},
		runnerLog(t, token, runMessages(t, "fake-container-1", 1, "kvm", job.CreationTimestamp.Time)...))
	h.setMPIJobCondition("fake-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "")

	s := h.eventuallySuite("fake", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	launcherJob := h.launcherJob("fake-container-1")
	h.g.Expect(s.Status.Runs[0].Message).To(And(
		ContainSubstring("pod "+pod.Name+" (its controller: Job fake-container-1-launcher (uid forged)) has the run's labels"),
		ContainSubstring("is not controlled by Job fake-container-1-launcher (uid "+string(launcherJob.UID)+") of MPIJob fake-container-1 (uid "+string(job.UID)+")"),
		ContainSubstring("its log is not read")))
	h.g.Expect(h.logs.openedPods()).To(BeEmpty())
	h.g.Expect(s.Status.Results).To(HaveEach(HaveField("Metrics", BeEmpty())), "no sample from the look-alike's log")
}

func TestNewerLookAlikeOfTheVirtLauncherIsNotRead(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	suite := h.suite("vmtwin", 1, demoBenchmarks()...)
	suite.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	suite.Spec.Baseline = "vm"
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "vmtwin-vm-1-master"}, master)
	}, timeout, interval).Should(Succeed())
	token := h.token("vmtwin", "vmtwin-vm-1")
	own := h.launcherPod("vmtwin", "vmtwin-vm-1", map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log",
		metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")),
		runnerLog(t, token, runMessages(t, "vmtwin-vm-1", 1, "kvm", master.CreationTimestamp.Time)...))
	// A pod that names the master VMI as its controller, but not its UID.
	fake := h.lookalike(own, &metav1.OwnerReference{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: master.Name,
		UID: "not-the-vmi", Controller: ptrBool(true)}, runnerLog(t, token, runMessages(t, "vmtwin-vm-1", 100, "kvm", master.CreationTimestamp.Time)...))
	for _, n := range nodes[1:] {
		h.setVMIPhase("vmtwin-vm-1-"+n, kubevirtv1.Running)
	}
	h.setVMIPhase("vmtwin-vm-1-master", kubevirtv1.Succeeded)

	s := h.eventuallySuite("vmtwin", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(h.logs.openedPods()).To(ContainElement(own.Name))
	h.g.Expect(h.logs.openedPods()).NotTo(ContainElement(fake.Name))
	want := fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")[0]
	h.g.Expect(findMetric(findResult(s, "cpu", "vm").Metrics, want.Name).Mean).To(BeNumerically("~", want.Value, want.Value*1e-9))
}

func ptrBool(v bool) *bool { return &v }

// A controller reference is only metadata: a co-tenant can give a pod one that names the launcher
// Job's UID itself. Its log (no frames of the run) does not fail the run: the launcher's own pod,
// the oldest, is read, and the forged one only when the oldest holds no finished report.
func TestForgedControllerReferenceToTheLauncherJobDoesNotFailTheRun(t *testing.T) {
	for _, forgedFirst := range []bool{false, true} {
		name := "newer forgery"
		if forgedFirst {
			name = "older forgery"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.startManager(allKinds())
			h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("forged", 1, demoBenchmarks()...)))).To(Succeed())
			job := h.mpiJob("forged-container-1")
			token := h.token("forged", "forged-container-1")
			launcher := h.launcherJob("forged-container-1")
			good := runnerLog(t, token, runMessages(t, "forged-container-1", 1, "kvm", job.CreationTimestamp.Time)...)
			bad := []byte("no frames here\n")
			var own, forged *corev1.Pod
			if forgedFirst {
				// Made in a race with the Job controller, before the launcher's own pod.
				forged = h.containerLauncherPod("forged", "forged-container-1", bad)
				own = h.lookalike(forged, launcher, good)
			} else {
				own = h.containerLauncherPod("forged", "forged-container-1", good)
				forged = h.lookalike(own, launcher, bad)
			}
			h.setMPIJobCondition("forged-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "")

			s := h.eventuallySuite("forged", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
				g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "%v", s.Status.Runs)
			})
			h.g.Expect(h.logs.openedPods()).To(ContainElement(own.Name))
			if !forgedFirst {
				h.g.Expect(h.logs.openedPods()).NotTo(ContainElement(forged.Name), "the oldest pod held the finished report")
			}
			want := fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")[0]
			h.g.Expect(findMetric(findResult(s, "cpu", "container").Metrics, want.Name).N).To(Equal(int32(3)))
		})
	}
}
