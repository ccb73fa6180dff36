package integration

import (
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Each run records what it ran on once its members run: its nodes' versions as their kubelets report
// them, the runner image by digest, and a hash of what the suite measures. A node upgraded between
// two runs shows as a second environment, the first kept.

// node creates a node as a kubelet registers it, with the versions it reports.
func (h *harness) node(name, kernel string, labels map[string]string) *corev1.Node {
	h.t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	h.g.Expect(k8s.Create(h.ctx, n)).To(Succeed())
	h.t.Cleanup(func() { _ = k8s.Delete(h.ctx, n) })
	h.setKernel(n, kernel)
	return n
}

// setKernel writes a node's nodeInfo as its kubelet does after the node booted another kernel.
func (h *harness) setKernel(n *corev1.Node, kernel string) {
	h.t.Helper()
	h.g.Eventually(func() error {
		fresh := &corev1.Node{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(n), fresh); err != nil {
			return err
		}
		fresh.Status.NodeInfo = corev1.NodeSystemInfo{KernelVersion: kernel, OSImage: "Debian GNU/Linux 13 (trixie)",
			ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.36.3", Architecture: "amd64", OperatingSystem: "linux"}
		return k8s.Status().Update(h.ctx, fresh)
	}, timeout, interval).Should(Succeed())
}

// runPodsOn makes a container run's launcher (on launcherNode, with the run's log) and one worker (on
// workerNode), started, with the image digests a kubelet reports.
func (h *harness) runPodsOn(suite, run, launcherNode, workerNode string, log []byte) {
	h.t.Helper()
	job := h.mpiJob(run)
	launcher := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: run + "-launcher-", Namespace: h.ns, Labels: map[string]string{
			vmbenchv1.LabelSuite: suite, vmbenchv1.LabelRun: run, vmbenchv1.LabelRole: vmbenchv1.RoleMaster, mpiv2.JobRoleLabel: "launcher"},
			OwnerReferences: []metav1.OwnerReference{*h.launcherJob(run)}},
		Spec: corev1.PodSpec{NodeName: launcherNode, Containers: []corev1.Container{{Name: "launcher", Image: "vmbench/runner:test"}}},
	}
	h.g.Expect(k8s.Create(h.ctx, launcher)).To(Succeed())
	h.logs.set(h.ns, launcher.Name, "launcher", log)
	started := func(container string) corev1.PodStatus {
		st := runningStatus(corev1.PodRunning, container, 0,
			corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}, corev1.ContainerState{})
		st.ContainerStatuses[0].ImageID = "registry.example/vmbench/runner@sha256:0123abcd"
		return st
	}
	h.writePodStatus(launcher, started("launcher"))
	worker := podOf(job, mpiv2.MPIReplicaTypeWorker, run+"-worker-0")
	worker.Labels[mpiv2.JobRoleLabel] = "worker"
	worker.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(job, mpiv2.SchemeGroupVersion.WithKind("MPIJob"))}
	worker.Spec.NodeName = workerNode
	h.g.Expect(k8s.Create(h.ctx, worker)).To(Succeed())
	h.writePodStatus(worker, started("worker"))
}

func TestEachRunRecordsItsEnvironmentAndANodeUpgradeShowsAsASecond(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	a, b := h.ns+"-node-a", h.ns+"-node-b"
	h.node(a, "6.12.48+deb13-amd64", map[string]string{"host-model-cpu.node.kubevirt.io/Skylake-Client-IBRS": "true"})
	nodeB := h.node(b, "6.12.48+deb13-amd64", nil)
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("env", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())

	done := func(run string) []byte {
		msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run}}
		for _, n := range nodes {
			msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "cpu", Node: n,
				Metrics: fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")})
		}
		return runnerLog(t, h.token("env", run), append(msgs, runplan.Message{Kind: runplan.KindDone, Run: run})...)
	}
	h.runPodsOn("env", "env-container-1", a, b, done("env-container-1"))
	h.setMPIJobCondition("env-container-1", mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")
	s := h.eventuallySuite("env", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, "env-container-1").Environment).NotTo(BeEmpty())
	})
	h.g.Expect(s.Status.ParametersHash).To(MatchRegexp("^[0-9a-f]{16}$"))
	h.g.Expect(s.Status.Environments).To(HaveLen(1))
	first := s.Status.Environments[0]
	h.g.Expect(first.ID).To(Equal(runOf(s, "env-container-1").Environment))
	h.g.Expect(first.Platform).To(Equal(vmbenchv1.PlatformContainer))
	h.g.Expect(first.RunnerImage).To(Equal("registry.example/vmbench/runner@sha256:0123abcd"))
	// The image as the launcher pod was created with it, beside the digest its kubelet ran.
	h.g.Expect(first.RunnerImageRef).To(Equal("vmbench/runner:test"))
	h.g.Expect(first.Message).To(BeEmpty())
	h.g.Expect(first.Nodes).To(Equal([]vmbenchv1.NodeEnvironment{
		{Name: a, KernelVersion: "6.12.48+deb13-amd64", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: "containerd://2.1.4",
			KubeletVersion: "v1.36.3", Architecture: "amd64", CPUModel: "Skylake-Client-IBRS"},
		{Name: b, KernelVersion: "6.12.48+deb13-amd64", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: "containerd://2.1.4",
			KubeletVersion: "v1.36.3", Architecture: "amd64"},
	}))
	h.setMPIJobCondition("env-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "")
	h.eventuallySuite("env", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "env-container-1")).To(Equal(vmbenchv1.RunSucceeded))
	})
	h.deleteRunPods("env-container-1")

	// Node b boots a new kernel before the second run.
	h.setKernel(nodeB, "6.12.57+deb13-amd64")
	h.runPodsOn("env", "env-container-2", a, b, done("env-container-2"))
	h.setMPIJobCondition("env-container-2", mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")
	s = h.eventuallySuite("env", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, "env-container-2").Environment).NotTo(BeEmpty())
	})
	h.g.Expect(s.Status.Environments).To(HaveLen(2), "the upgraded node makes a second environment")
	h.g.Expect(s.Status.Environments[0]).To(Equal(first), "the first environment is kept as it was")
	second := s.Status.Environments[1]
	h.g.Expect(runOf(s, "env-container-2").Environment).To(Equal(second.ID))
	h.g.Expect(second.ID).NotTo(Equal(first.ID))
	h.g.Expect(second.Nodes[1].KernelVersion).To(Equal("6.12.57+deb13-amd64"))
	h.g.Expect(second.Nodes[0]).To(Equal(first.Nodes[0]))
}
