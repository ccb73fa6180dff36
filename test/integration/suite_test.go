package integration

import (
	"encoding/json"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

var nodes = []string{"master", "node01", "node02"}

// runMessages is a whole run as a runner reports it: sysbench-cpu on every node, iperf3 between the
// pairs and HPCC across the cluster, from real tool outputs scaled by factor.
func runMessages(t *testing.T, run string, factor float64, virtualization string, start time.Time) []runplan.Message {
	sysbench := fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")
	iperf := fixtureMetrics(t, results.Iperf3, "iperf3-tcp-5s.json")
	series := fixtureSeries(t, "iperf3-tcp-5s.json")
	hpcc := fixtureMetrics(t, results.HPCC, "hpcc-np2.txt")
	ready := map[string]time.Time{}
	for i, n := range nodes {
		ready[n] = start.Add(time.Duration(30+i) * time.Second)
	}
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run, Time: start.Add(40 * time.Second), NodesReady: ready, Virtualization: virtualization}}
	for _, n := range nodes {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "cpu", Node: n, Metrics: scaled(sysbench, factor), Seconds: 10,
			RawTail: "CPU speed:\n    events per second:  1345.67\n"})
	}
	for _, pair := range []string{"master-node01", "master-node02", "node01-master", "node02-master", "node01-node02"} {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "net", Node: pair, Metrics: scaled(iperf, factor), Seconds: 10,
			Table: &series})
	}
	msgs = append(msgs,
		runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "hpcc", Node: "master", Metrics: scaled(hpcc, factor), Seconds: 200},
		runplan.Message{Kind: runplan.KindDone, Run: run, BenchmarkSeconds: 280})
	return msgs
}

func demoBenchmarks() []vmbenchv1.Benchmark {
	return []vmbenchv1.Benchmark{
		bench("cpu", vmbenchv1.BenchmarkSysbenchCPU),
		bench("net", vmbenchv1.BenchmarkIperf3),
		{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptrInt32(3000), NB: 96}},
	}
}

func ptrInt32(v int32) *int32 { return &v }

// finishContainerRun plays the MPI Operator: the launcher's log holds the runner's frames, then the
// MPIJob succeeds.
func (h *harness) finishContainerRun(suite, run string, factor float64) {
	h.t.Helper()
	job := h.mpiJob(run)
	h.containerLauncherPod(suite, run, runnerLog(h.t, h.token(suite, run), runMessages(h.t, run, factor, "kvm", job.CreationTimestamp.Time)...))
	h.setMPIJobCondition(run, mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
}

// finishVMRun plays KubeVirt: the nodes run, the master's console carries the frames, then the master
// powers off.
func (h *harness) finishVMRun(suite, run string, factor float64, virtualization string) {
	h.t.Helper()
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-master"}, master)
	}, timeout, interval).Should(Succeed())
	h.launcherPod(suite, run, map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log",
		metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")), runnerLog(h.t, h.token(suite, run), runMessages(h.t, run, factor, virtualization, master.CreationTimestamp.Time)...))
	for _, n := range nodes[1:] {
		h.setVMIPhase(run+"-"+n, kubevirtv1.Running)
	}
	h.setVMIPhase(run+"-master", kubevirtv1.Succeeded)
}

func TestSuiteRunsBothPlatformsAndComparesThem(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	suite := h.suite("demo", 1, demoBenchmarks()...)
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

	// The container run comes first: one MPIJob, launcher + 2 workers, 2 CPU / 2 GiB each, Guaranteed.
	job := h.mpiJob("demo-container-1")
	suite = h.get("demo")
	h.g.Expect(hasOwner(job, suite)).To(BeTrue(), "the MPIJob is controlled by the suite")
	h.g.Expect(*job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher].Replicas).To(Equal(int32(1)))
	h.g.Expect(*job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker].Replicas).To(Equal(int32(2)))
	h.g.Expect(*job.Spec.RunLauncherAsWorker).To(BeTrue())
	for role, spec := range job.Spec.MPIReplicaSpecs {
		res := spec.Template.Spec.Containers[0].Resources
		for _, rl := range []corev1.ResourceList{res.Limits, res.Requests} {
			h.g.Expect(rl.Cpu().Cmp(resource.MustParse("2"))).To(Equal(0), "cpu of %s", role)
			h.g.Expect(rl.Memory().Cmp(resource.MustParse("2Gi"))).To(Equal(0), "memory of %s", role)
		}
		h.g.Expect(spec.Template.Labels).To(HaveKeyWithValue(vmbenchv1.LabelRun, "demo-container-1"))
	}
	// The launcher's token comes from the run's own Secret, derived for this run alone.
	h.g.Expect(job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher].Template.Spec.Containers[0].Env).To(ContainElement(
		HaveField("ValueFrom.SecretKeyRef.LocalObjectReference.Name", h.runSecretName("demo-container-1", "demo-container-1-auth"))))
	// The run's Secrets are owned by a ConfigMap of the run, which the suite controls.
	secretsOwner := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-container-1-secrets"}, secretsOwner)).To(Succeed())
	h.g.Expect(hasOwner(secretsOwner, h.get("demo"))).To(BeTrue())
	containerAuth := &corev1.Secret{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: h.runSecretName("demo-container-1", "demo-container-1-auth")}, containerAuth)).To(Succeed())
	h.g.Expect(ownedBySecretsOwner(containerAuth, "demo-container-1", secretsOwner.UID)).To(BeTrue(), "owner %v", containerAuth.OwnerReferences)
	h.g.Expect(job.Annotations).To(HaveKeyWithValue(vmbenchv1.AnnotationKeys, vmbenchv1.KeysPerRun))
	h.token("demo", "demo-container-1")
	planMap := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-container-1-plan"}, planMap)).To(Succeed())
	h.g.Expect(hasOwner(planMap, suite)).To(BeTrue())
	var plan runplan.Plan
	h.g.Expect(json.Unmarshal([]byte(planMap.Data["plan.json"]), &plan)).To(Succeed())
	h.g.Expect(plan.Nodes).To(HaveLen(3))
	h.g.Expect(plan.Nodes[0].Address).To(Equal("demo-container-1-launcher.demo-container-1." + h.ns + ".svc"))
	h.g.Expect(plan.CPU).To(Equal(int32(2)))
	h.g.Expect(plan.MemoryBytes).To(Equal(int64(2 << 30)))
	h.g.Expect(plan.Benchmarks[0].SysbenchCPU.MaxPrime).To(Equal(int32(20000)), "defaults are applied for the runner")
	h.eventuallySuite("demo", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteRunning))
		g.Expect(s.Status.Progress).To(Equal("0/2"))
		g.Expect(runPhase(s, "demo-container-1")).To(Equal(vmbenchv1.RunRunning))
		g.Expect(runPhase(s, "demo-vm-1")).To(Equal(vmbenchv1.RunPending))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionProgressing)).To(BeTrue())
	})

	h.finishContainerRun("demo", "demo-container-1", 1)

	// The VM run starts only after the container run's results are in status and its MPIJob is gone.
	h.eventuallySuite("demo", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "demo-container-1")).To(Equal(vmbenchv1.RunSucceeded))
		g.Expect(runPhase(s, "demo-vm-1")).To(Equal(vmbenchv1.RunRunning))
	})
	h.g.Expect(apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-container-1"}, &mpiv2.MPIJob{}))).To(BeTrue())
	// The ConfigMap that owns the run's Secrets goes with the run's cleanup; the garbage collector
	// (which envtest does not run) then deletes the Secrets.
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKeyFromObject(secretsOwner), &corev1.ConfigMap{}))
	}, timeout, interval).Should(BeTrue(), "the owner of the run's Secrets goes with the run's cleanup")
	vmAuth := &corev1.Secret{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: h.runSecretName("demo-vm-1", "demo-vm-1-auth")}, vmAuth)).To(Succeed())
	vmOwner := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-vm-1-secrets"}, vmOwner)).To(Succeed())
	h.g.Expect(ownedBySecretsOwner(vmAuth, "demo-vm-1", vmOwner.UID)).To(BeTrue())
	h.g.Expect(hasOwner(vmOwner, suite)).To(BeTrue())
	h.g.Expect(vmAuth.Labels).To(HaveKeyWithValue(vmbenchv1.LabelRun, "demo-vm-1"))
	h.g.Expect(vmAuth.Data).To(HaveKey(platform.AuthSSHPrivateKey), "a VM run's Secret holds its SSH keys")
	// Raw outputs outlive the run's cleanup, outside status, owned by the suite.
	raw := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-container-1-raw"}, raw)).To(Succeed())
	h.g.Expect(hasOwner(raw, suite)).To(BeTrue())
	h.g.Expect(raw.Data).To(HaveKeyWithValue("cpu.node01.txt", ContainSubstring("events per second")))
	// So do the whole result tables: iperf3's time series, one key per pair, as CSV.
	series := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-container-1-tables"}, series)).To(Succeed())
	h.g.Expect(hasOwner(series, suite)).To(BeTrue())
	h.g.Expect(series.Labels).To(Equal(map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelPlatform: "container", vmbenchv1.LabelTablesOf: "demo-container-1"}))
	h.g.Expect(series.Data).To(HaveLen(5))
	h.g.Expect(series.Data).To(HaveKeyWithValue("net.node01-node02.csv", string(fixtureSeries(t, "iperf3-tcp-5s.json").CSV())))
	vmis := &kubevirtv1.VirtualMachineInstanceList{}
	h.g.Expect(k8s.List(h.ctx, vmis, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(vmis.Items).To(HaveLen(3))
	for _, vmi := range vmis.Items {
		h.g.Expect(hasOwner(&vmi, suite)).To(BeTrue())
		h.g.Expect(vmi.Spec.Domain.CPU.Cores).To(Equal(uint32(2)), vmi.Name)
		h.g.Expect(vmi.Spec.Domain.Memory.Guest.Cmp(resource.MustParse("2Gi"))).To(Equal(0), vmi.Name)
		h.g.Expect(vmi.Spec.Subdomain).To(Equal("demo-vm-1"))
		h.g.Expect(vmi.Spec.Domain.Devices.Interfaces[0].Binding.Name).To(Equal("passt"))
		h.g.Expect(vmi.Spec.Domain.Devices.Interfaces[0].Ports).To(ContainElement(HaveField("Port", int32(runplan.DefaultSSHPort))))
	}
	h.g.Expect(vmis.Items).To(ContainElement(HaveField("Spec.Hostname", "node02")))
	svc := &corev1.Service{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "demo-vm-1"}, svc)).To(Succeed())
	h.g.Expect(svc.Spec.ClusterIP).To(Equal(corev1.ClusterIPNone))

	h.finishVMRun("demo", "demo-vm-1", 0.5, "qemu")

	done := h.eventuallySuite("demo", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(), "%+v", s.Status.Conditions)
	})
	st := done.Status
	h.g.Expect(st.Phase).To(Equal(vmbenchv1.SuiteComplete))
	h.g.Expect(st.Progress).To(Equal("2/2"))
	h.g.Expect(meta.IsStatusConditionTrue(st.Conditions, vmbenchv1.ConditionFailed)).To(BeFalse())
	h.g.Expect(st.CompletionTime).NotTo(BeNil())
	h.g.Expect(st.Results).To(HaveLen(6), "3 benchmarks on 2 platforms")
	for _, r := range st.Results {
		h.g.Expect(r.Metrics).NotTo(BeEmpty(), "%s on %s", r.Benchmark, r.Platform)
		h.g.Expect(r.Emulated).To(Equal(r.Platform == "vm"))
		if r.Benchmark == "net" {
			h.g.Expect(r.Tables).To(Equal(int32(5)), "one time series per pair")
			h.g.Expect(r.TablesLost).To(BeZero())
		}
		if r.Benchmark == "cpu" {
			eps := findMetric(r.Metrics, "events_per_second")
			h.g.Expect(eps).NotTo(BeNil())
			h.g.Expect(eps.N).To(Equal(int32(3)), "one sample per node")
			h.g.Expect(eps.Samples).To(HaveLen(3))
			h.g.Expect(eps.Direction).To(Equal(vmbenchv1.HigherIsBetter))
		}
	}
	ratio := findRatio(st.Ratios, "cpu", "events_per_second")
	h.g.Expect(ratio).NotTo(BeNil())
	h.g.Expect(ratio.Ratio).To(BeNumerically("~", 0.5, 0.001))
	h.g.Expect(ratio.OverheadPercent).To(BeNumerically("~", 50, 0.1))
	h.g.Expect(ratio.Emulated).To(BeTrue())
	h.g.Expect(st.Headline).NotTo(BeNil())
	h.g.Expect(st.Headline.Benchmark).To(Equal("cpu"))
	h.g.Expect(st.Headline.Summary).To(Equal("vm/container 0.50 (emulated)"))
	h.g.Expect(st.Warnings).To(ContainElement(ContainSubstring("software emulation")))
	for _, r := range st.Runs {
		h.g.Expect(r.BootSeconds).To(HaveLen(3), r.Name)
		h.g.Expect(r.OrchestrationSeconds).NotTo(BeNil(), r.Name)
		// The runner's started message is 40 s after the children's creation, which is at or after
		// the run's StartTime, both truncated to the second: runnerReady is over 38 s.
		h.g.Expect(r.StartupSeconds).NotTo(BeNil(), r.Name)
		h.g.Expect(r.StartupSeconds.RunnerReady).To(HaveValue(BeNumerically(">", 38)), r.Name)
		if r.Platform == "vm" {
			h.g.Expect(r.Accelerator).To(Equal(vmbenchv1.AcceleratorEmulation))
			// node01 and node02 went Running (setVMIPhase writes the transition as KubeVirt does).
			h.g.Expect(r.StartupSeconds.VMIRunning).NotTo(BeNil(), r.Name)
			// The harness's launcher pod asks for nothing, less than the guest: no overhead.
			h.g.Expect(r.LauncherOverhead).To(BeNil(), r.Name)
		}
	}
	h.g.Eventually(func() int {
		list := &kubevirtv1.VirtualMachineInstanceList{}
		_ = k8s.List(h.ctx, list, client.InNamespace(h.ns))
		return len(list.Items)
	}, timeout, interval).Should(BeZero(), "VMs never linger after their run")

	// Metrics: one value series per metric per platform, one ratio series per ratio.
	values := 0
	for _, r := range st.Results {
		values += len(r.Metrics)
	}
	h.g.Eventually(func() int { return seriesOf(t, "vmbench_result_value", h.ns, "demo") }, timeout, interval).Should(Equal(values))
	h.g.Expect(seriesOf(t, "vmbench_result_ratio", h.ns, "demo")).To(Equal(ratioCount(st.Ratios)))
	h.g.Expect(seriesOf(t, "vmbench_suite_phase", h.ns, "demo")).To(Equal(4))

	// Whatever is left is controlled by the suite, so the garbage collector removes it with the suite;
	// and the suite's series go with it.
	// The runs' Secrets are owned by their runs' ConfigMaps, which their cleanup deleted: the garbage
	// collector removes them.
	secrets := &corev1.SecretList{}
	h.g.Expect(k8s.List(h.ctx, secrets, client.InNamespace(h.ns), client.HasLabels{vmbenchv1.LabelSuite})).To(Succeed())
	h.g.Expect(secrets.Items).NotTo(BeEmpty())
	for _, secret := range secrets.Items {
		ref := metav1.GetControllerOf(&secret)
		h.g.Expect(ref).NotTo(BeNil(), secret.Name)
		h.g.Expect(ref.Kind).To(Equal("ConfigMap"), secret.Name)
		h.g.Expect(apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: ref.Name}, &corev1.ConfigMap{}))).To(BeTrue(),
			"the owner of Secret %s is gone", secret.Name)
	}
	for _, list := range []client.ObjectList{&corev1.ConfigMapList{}, &corev1.ServiceList{}} {
		h.g.Expect(k8s.List(h.ctx, list, client.InNamespace(h.ns), client.HasLabels{vmbenchv1.LabelSuite})).To(Succeed())
		h.g.Expect(meta.EachListItem(list, func(o runtime.Object) error {
			h.g.Expect(hasOwner(o.(client.Object), suite)).To(BeTrue(), o.(client.Object).GetName())
			return nil
		})).To(Succeed())
	}
	h.g.Expect(k8s.Delete(h.ctx, done)).To(Succeed())
	h.g.Eventually(func() int { return seriesOf(t, "vmbench_result_value", h.ns, "demo") }, timeout, interval).Should(BeZero())
	h.g.Expect(seriesOf(t, "vmbench_suite_phase", h.ns, "demo")).To(BeZero())
}

func findMetric(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

// findRatio is the ratio of a benchmark's metric on the one non-baseline platform.
func findRatio(rs []vmbenchv1.PlatformRatios, benchmark, metric string) *ratio {
	for _, pr := range rs {
		for _, r := range pr.Metrics {
			if pr.Benchmark == benchmark && r.Metric == metric {
				return &ratio{RatioValue: r, Emulated: pr.Emulated}
			}
		}
	}
	return nil
}

type ratio struct {
	vmbenchv1.RatioValue
	Emulated bool
}

func ratioCount(rs []vmbenchv1.PlatformRatios) int {
	n := 0
	for _, pr := range rs {
		n += len(pr.Metrics)
	}
	return n
}

func containerOnly(s *vmbenchv1.BenchmarkSuite) *vmbenchv1.BenchmarkSuite {
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}}
	return s
}

func TestFailedMPIJobFailsTheSuiteWithItsCause(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("broken", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.mpiJob("broken-container-1")
	h.setMPIJobCondition("broken-container-1", mpiv2.JobFailed, "MPIJobFailed", "launcher pod broken-container-1-launcher-x failed: ImagePullBackOff")

	s := h.eventuallySuite("broken", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionFailed)).To(BeTrue())
	})
	failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
	h.g.Expect(failed.Reason).To(Equal(vmbenchv1.ReasonRunFailed))
	h.g.Expect(failed.Message).To(ContainSubstring("MPIJob broken-container-1 failed: MPIJobFailed: launcher pod broken-container-1-launcher-x failed: ImagePullBackOff"))
	h.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeFalse())
	h.g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	h.g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunFailed))
}

func TestBenchmarkErrorsAndCorruptFramesAreReportedWhileTheSuiteGoesOn(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("partial", 2,
		bench("cpu", vmbenchv1.BenchmarkSysbenchCPU), bench("net", vmbenchv1.BenchmarkIperf3))))).To(Succeed())

	// Run 1: sysbench works, iperf3 cannot connect.
	h.mpiJob("partial-container-1")
	sysbench := fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: "partial-container-1"}}
	for _, n := range nodes {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: "partial-container-1", Benchmark: "cpu", Node: n, Metrics: sysbench})
	}
	msgs = append(msgs,
		runplan.Message{Kind: runplan.KindResult, Run: "partial-container-1", Benchmark: "net", Node: "master-node01",
			Error: "iperf3 reported an error: unable to connect to server: Connection refused"},
		runplan.Message{Kind: runplan.KindDone, Run: "partial-container-1"})
	h.containerLauncherPod("partial", "partial-container-1", runnerLog(t, h.token("partial", "partial-container-1"), msgs...))
	h.setMPIJobCondition("partial-container-1", mpiv2.JobSucceeded, "MPIJobSucceeded", "")

	// Run 2 goes on; its frames are signed with a key that is not the suite's.
	h.mpiJob("partial-container-2")
	forged := runnerLog(t, []byte("not-the-suite-token"), runplan.Message{Kind: runplan.KindDone, Run: "partial-container-2"})
	h.containerLauncherPod("partial", "partial-container-2", forged)
	h.setMPIJobCondition("partial-container-2", mpiv2.JobSucceeded, "MPIJobSucceeded", "")

	s := h.eventuallySuite("partial", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionFailed)).To(BeTrue())
	})
	failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
	h.g.Expect(failed.Message).To(ContainSubstring("partial-container-2: corrupt result frames: frame partial-container-2-0: checksum mismatch"))
	h.g.Expect(failed.Message).To(ContainSubstring(
		"partial-container-1: benchmarks failed: net (master-node01: iperf3 reported an error: unable to connect to server: Connection refused)"))
	h.g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunSucceeded))
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix("benchmarks failed: net (master-node01: iperf3"))
	h.g.Expect(s.Status.Runs[1].Phase).To(Equal(vmbenchv1.RunFailed))
	// What worked is kept: sysbench's samples from run 1, and the failed benchmark counted, not measured.
	cpu := findResult(s, "cpu", "container")
	h.g.Expect(cpu.Benchmark).To(Equal("cpu"), "run 1's cpu results are gone from status")
	events := findMetric(cpu.Metrics, "events_per_second")
	h.g.Expect(events).NotTo(BeNil())
	h.g.Expect(events.N).To(Equal(int32(3)))
	net := findResult(s, "net", "container")
	h.g.Expect(net.Benchmark).To(Equal("net"), "the failed benchmark has no entry")
	// Run 1's iperf3 error, and run 2, whose frames were refused, reported nothing.
	h.g.Expect(net.Failures).To(Equal(int32(2)))
	h.g.Expect(net.Metrics).To(BeEmpty())
}

func TestRunPastItsDeadlineIsStoppedAndFailed(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("slow", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.mpiJob("slow-container-1")
	h.eventuallySuite("slow", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "slow-container-1")).To(Equal(vmbenchv1.RunRunning))
	})

	// 10 min startup + 3 nodes x 30 min timeout: the run's deadline is 100 minutes away.
	h.clock.Step(101 * time.Minute)
	job := h.mpiJob("slow-container-1")
	job.Labels["poke"] = "1"
	h.g.Expect(k8s.Update(h.ctx, job)).To(Succeed())

	s := h.eventuallySuite("slow", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "slow-container-1")).To(Equal(vmbenchv1.RunFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(ContainSubstring("run did not finish within its deadline of 1h40m0s"))
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "slow-container-1"}, &mpiv2.MPIJob{}))
	}, timeout, interval).Should(BeTrue(), "the timed-out MPIJob is deleted")
}

func TestRestartOfTheControllerLosesNothingAndRunsNothingTwice(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.suite("restart", 1, demoBenchmarks()...))).To(Succeed())
	h.finishContainerRun("restart", "restart-container-1", 1)
	h.eventuallySuite("restart", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "restart-vm-1")).To(Equal(vmbenchv1.RunRunning))
	})
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "restart-vm-1-master"}, master)).To(Succeed())
	auth := &corev1.Secret{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: h.runSecretName("restart-vm-1", "restart-vm-1-auth")}, auth)).To(Succeed())

	// A new controller process takes over mid-run; it derives the same keys from the master key.
	h.stopManager()
	h.startManager(allKinds())
	h.g.Consistently(func(g Gomega) {
		again := &kubevirtv1.VirtualMachineInstance{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "restart-vm-1-master"}, again)).To(Succeed())
		g.Expect(again.UID).To(Equal(master.UID), "the running VM is adopted, not recreated")
		sameAuth := &corev1.Secret{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(auth), sameAuth)).To(Succeed())
		g.Expect(sameAuth.UID).To(Equal(auth.UID))
		g.Expect(sameAuth.Data).To(Equal(auth.Data), "the run's keys survive the restart")
		g.Expect(apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "restart-container-1"}, &mpiv2.MPIJob{}))).
			To(BeTrue(), "the finished container run is not started again")
	}, 2*time.Second, interval).Should(Succeed())

	h.finishVMRun("restart", "restart-vm-1", 0.8, "kvm")
	s := h.eventuallySuite("restart", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	for _, r := range s.Status.Results {
		if r.Benchmark == "net" {
			h.g.Expect(r.Tables).To(Equal(int32(5)), "one time series per pair, counted once across the restart")
			h.g.Expect(r.TablesLost).To(BeZero())
		}
		if r.Benchmark == "cpu" {
			h.g.Expect(findMetric(r.Metrics, "events_per_second").N).To(Equal(int32(3)), "%s: each sample once", r.Platform)
		}
	}
	h.g.Expect(findRatio(s.Status.Ratios, "cpu", "events_per_second").Ratio).To(BeNumerically("~", 0.8, 0.001))
	h.g.Expect(s.Status.Headline.Summary).To(Equal("vm/container 0.80"), "KVM figures are not marked emulated")
}

func TestMissingPlatformAPIFailsOnlyItsRuns(t *testing.T) {
	h := newHarness(t)
	kinds := allKinds()
	kinds[kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")] = false
	h.startManager(kinds)
	h.g.Expect(k8s.Create(h.ctx, h.suite("novirt", 1, demoBenchmarks()...))).To(Succeed())
	h.finishContainerRun("novirt", "novirt-container-1", 1)
	s := h.eventuallySuite("novirt", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunSucceeded))
	h.g.Expect(s.Status.Runs[1].Message).To(ContainSubstring("the VirtualMachineInstance API (kubevirt.io/v1) is not installed"))
	h.g.Expect(s.Status.Results).To(ContainElement(HaveField("Platform", "container")))
}

func TestRunWhoseChildrenAreDeletedFails(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("gone", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.eventuallySuite("gone", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "gone-container-1")).To(Equal(vmbenchv1.RunRunning))
	})
	// Only the MPIJob goes: its plan ConfigMap stays, and the run still fails at once, not at its
	// deadline (the clock does not move in this test).
	h.g.Expect(k8s.Delete(h.ctx, h.mpiJob("gone-container-1"))).To(Succeed())

	s := h.eventuallySuite("gone", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "gone-container-1")).To(Equal(vmbenchv1.RunFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix("ChildDeleted: MPIJob gone-container-1 was deleted while the run was running"))
	h.g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	h.g.Expect(meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionRunsFailed).Message).To(ContainSubstring("MPIJob gone-container-1 was deleted"))
}
