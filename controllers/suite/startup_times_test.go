package suite

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
)

var startupBase = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

func at(seconds float64) metav1.Time {
	return metav1.Time{Time: startupBase.Add(time.Duration(seconds * float64(time.Second)))}
}

// startedPod is a pod scheduled at scheduled, with its sandbox ready at sandbox, whose one container
// started at started (running, or terminated if done). A negative time leaves the step out.
func startedPod(scheduled, sandbox, started float64, done bool) corev1.Pod {
	pod := corev1.Pod{}
	if scheduled >= 0 {
		pod.Status.Conditions = append(pod.Status.Conditions,
			corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(scheduled)})
	}
	if sandbox >= 0 {
		pod.Status.Conditions = append(pod.Status.Conditions,
			corev1.PodCondition{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at(sandbox)})
	}
	if started >= 0 {
		state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(started)}}
		if done {
			state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: at(started), FinishedAt: at(started + 100)}}
		}
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", State: state}}
	}
	return pod
}

func vmiWithPhases(uid string, phases map[kubevirtv1.VirtualMachineInstancePhase]float64) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	for _, p := range []kubevirtv1.VirtualMachineInstancePhase{kubevirtv1.Pending, kubevirtv1.Scheduling, kubevirtv1.Scheduled, kubevirtv1.Running, kubevirtv1.Succeeded} {
		if s, ok := phases[p]; ok {
			vmi.Status.PhaseTransitionTimestamps = append(vmi.Status.PhaseTransitionTimestamps,
				kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: p, PhaseTransitionTimestamp: at(s)})
		}
	}
	return vmi
}

func seconds(v float64) *float64 { return &v }

func TestObserveStartupContainerRun(t *testing.T) {
	// Run started at 2 s. Launcher: scheduled 3, sandbox 4, started 9 (and since ended); workers:
	// scheduled 2.5 and 5.25, sandboxes 3.5 and 6, started 20.04 and 7. The slowest of each phase
	// counts from 2 s: 5.25-2 = 3.25 -> 3.3 (rounded to a tenth), 6-2 = 4, 20.04-2 = 18.04 -> 18.
	since := startupBase.Add(2 * time.Second)
	pods := []corev1.Pod{startedPod(3, 4, 9, true), startedPod(2.5, 3.5, 20.04, false), startedPod(5.25, 6, 7, false)}
	run := &vmbenchv1.RunStatus{}
	observeStartup(run, vmbenchv1.PlatformContainer, startupObservation{Since: since, Pods: pods})
	want := &vmbenchv1.RunStartup{PodsScheduled: seconds(3.3), SandboxesReady: seconds(4), ContainersStarted: seconds(18)}
	if diff := cmp.Diff(want, run.StartupSeconds); diff != "" {
		t.Errorf("startup (-want +got):\n%s", diff)
	}
	if run.LauncherOverhead != nil {
		t.Errorf("a container run got a launcher overhead: %v", run.LauncherOverhead)
	}

	// A later look that no longer sees the slow worker (deleted when the launcher ended) keeps
	// what the first look saw; one that sees a later phase moves it on.
	observeStartup(run, vmbenchv1.PlatformContainer, startupObservation{Since: since, Pods: []corev1.Pod{startedPod(3, 4, 25, false)}})
	// 25-2 = 23 s for the restarted launcher's container.
	want.ContainersStarted = seconds(23)
	if diff := cmp.Diff(want, run.StartupSeconds); diff != "" {
		t.Errorf("after a second look (-want +got):\n%s", diff)
	}
}

func TestObserveStartupPartialAndStale(t *testing.T) {
	since := startupBase.Add(10 * time.Second)
	run := &vmbenchv1.RunStatus{}
	// Pods pending and unscheduled show no phase at all: nothing is recorded.
	observeStartup(run, vmbenchv1.PlatformContainer, startupObservation{Since: since, Pods: []corev1.Pod{startedPod(-1, -1, -1, false)}})
	if run.StartupSeconds != nil {
		t.Errorf("unscheduled pods gave %+v, want no startup", run.StartupSeconds)
	}
	// A pod scheduled before the run started (5 s < 10 s) is not the run's: nothing either. A
	// cluster without PodReadyToStartContainers leaves sandboxesReady out.
	observeStartup(run, vmbenchv1.PlatformContainer, startupObservation{Since: since, Pods: []corev1.Pod{startedPod(5, -1, -1, false)}})
	if run.StartupSeconds != nil {
		t.Errorf("a pod older than the run gave %+v, want no startup", run.StartupSeconds)
	}
	observeStartup(run, vmbenchv1.PlatformContainer, startupObservation{Since: since, Pods: []corev1.Pod{startedPod(11, -1, 14, false)}})
	want := &vmbenchv1.RunStartup{PodsScheduled: seconds(1), ContainersStarted: seconds(4)}
	if diff := cmp.Diff(want, run.StartupSeconds); diff != "" {
		t.Errorf("startup (-want +got):\n%s", diff)
	}
}

func TestObserveStartupVMRun(t *testing.T) {
	since := startupBase
	// master: Scheduled 6, Running 15; node01: Scheduled 8.5, Running 14; node02 has not been
	// scheduled yet. Slowest: Scheduled 8.5, Running 15.
	vmis := []*kubevirtv1.VirtualMachineInstance{
		vmiWithPhases("uid-master", map[kubevirtv1.VirtualMachineInstancePhase]float64{kubevirtv1.Pending: 0.1, kubevirtv1.Scheduling: 0.2, kubevirtv1.Scheduled: 6, kubevirtv1.Running: 15}),
		vmiWithPhases("uid-node01", map[kubevirtv1.VirtualMachineInstancePhase]float64{kubevirtv1.Pending: 0.1, kubevirtv1.Scheduled: 8.5, kubevirtv1.Running: 14}),
		vmiWithPhases("uid-node02", map[kubevirtv1.VirtualMachineInstancePhase]float64{kubevirtv1.Pending: 0.1, kubevirtv1.Scheduling: 0.3}),
	}
	run := &vmbenchv1.RunStatus{StartTime: &metav1.Time{Time: since}}
	// The pods of a VM run are its virt-launcher pods: their own phases are not the VM run's.
	observeStartup(run, vmbenchv1.PlatformVM, startupObservation{Since: since, VMIs: vmis, Pods: []corev1.Pod{startedPod(1, 2, 3, false)}})
	want := &vmbenchv1.RunStartup{VMIScheduled: seconds(8.5), VMIRunning: seconds(15)}
	if diff := cmp.Diff(want, run.StartupSeconds); diff != "" {
		t.Errorf("startup (-want +got):\n%s", diff)
	}
	// node02 comes up later: Scheduled 30, Running 42.
	vmis[2] = vmiWithPhases("uid-node02", map[kubevirtv1.VirtualMachineInstancePhase]float64{kubevirtv1.Scheduled: 30, kubevirtv1.Running: 42})
	observeStartup(run, vmbenchv1.PlatformVM, startupObservation{Since: since, VMIs: vmis})
	// The runner reports 61.25 s after the start: rounded to 61.3 (a tenth).
	summary.ObserveRunnerReady(run, startupBase.Add(61250*time.Millisecond))
	want = &vmbenchv1.RunStartup{VMIScheduled: seconds(30), VMIRunning: seconds(42), RunnerReady: seconds(61.3)}
	if diff := cmp.Diff(want, run.StartupSeconds); diff != "" {
		t.Errorf("startup after node02 and the runner (-want +got):\n%s", diff)
	}
}

// launcherFor is a virt-launcher pod controlled by the VMI with uid, with the given containers.
func launcherFor(uid string, spec corev1.PodSpec) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance", Name: "vmi", UID: types.UID(uid), Controller: ptr.To(true)}}},
		Spec: spec,
	}
}

func requests(cpu, memory string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}}
	if cpu != "" {
		r.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		r.Requests[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return r
}

func TestLauncherOverhead(t *testing.T) {
	guest := func(uid string) *kubevirtv1.VirtualMachineInstance {
		vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
		vmi.Spec.Domain.CPU = &kubevirtv1.CPU{Cores: 2, Sockets: 1, Threads: 1}
		vmi.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi")}
		return vmi
	}
	// As KubeVirt builds it: compute asks the guest's 2 CPUs and 2Gi plus 230Mi of overhead,
	// guest-console-log 5m and 35M; a container disk init container (10m, 40M) counts only if it
	// alone asks more than all the containers together, which it does not.
	// CPU: 2 + 0.005 - 2 = 5m. Memory: 2Gi + 230Mi + 35M - 2Gi = 241172480 + 35000000 = 276172480.
	a := launcherFor("a", corev1.PodSpec{
		Containers:     []corev1.Container{{Name: "compute", Resources: requests("2", "2278Mi")}, {Name: "guest-console-log", Resources: requests("5m", "35M")}},
		InitContainers: []corev1.Container{{Name: "container-disk-binary", Resources: requests("10m", "40M")}},
	})
	// A second VM whose pod also has a RuntimeClass overhead of 250m and 100Mi:
	// CPU: 2 + 0.25 - 2 = 250m. Memory: 2Gi + 100Mi + 100Mi - 2Gi = 200Mi = 209715200.
	b := launcherFor("b", corev1.PodSpec{
		Containers: []corev1.Container{{Name: "compute", Resources: requests("2", "2148Mi")}},
		Overhead:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("100Mi")},
	})
	// A pod of nobody's VMI is not counted.
	stray := launcherFor("other", corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Resources: requests("64", "64Gi")}}})
	// A pod that asks less than its guest (no requests at all: 0 - 2 CPUs) is not one KubeVirt
	// built, and gives nothing rather than a negative overhead.
	bare := launcherFor("c", corev1.PodSpec{Containers: []corev1.Container{{Name: "compute"}}})

	run := &vmbenchv1.RunStatus{}
	observeStartup(run, vmbenchv1.PlatformVM, startupObservation{Since: startupBase,
		VMIs: []*kubevirtv1.VirtualMachineInstance{guest("c")}, Pods: []corev1.Pod{bare}})
	if run.LauncherOverhead != nil {
		t.Errorf("a pod without requests gave an overhead of %s CPU, %s memory; want none",
			run.LauncherOverhead.CPU.String(), run.LauncherOverhead.Memory.String())
	}
	observeStartup(run, vmbenchv1.PlatformVM, startupObservation{Since: startupBase,
		VMIs: []*kubevirtv1.VirtualMachineInstance{guest("a"), guest("b"), guest("c")}, Pods: []corev1.Pod{stray, a, b, bare}})
	if run.LauncherOverhead == nil {
		t.Fatal("no launcher overhead recorded")
	}
	// The largest per resource: CPU 250m from b, memory 276172480 from a.
	if got := run.LauncherOverhead.CPU.MilliValue(); got != 250 {
		t.Errorf("cpu overhead %dm, want 250m", got)
	}
	if got := run.LauncherOverhead.Memory.Value(); got != 276172480 {
		t.Errorf("memory overhead %d bytes, want 276172480", got)
	}
}

func TestPodRequestsInitContainers(t *testing.T) {
	// Containers: 100m + 200m = 300m, 100Mi. A plain init container asks 500m and 50Mi; a sidecar
	// (restartable init container) before it 50m and 10Mi, so while the plain one runs: 550m, 60Mi.
	// The sidecar also runs beside the containers: 350m, 110Mi. Per resource the larger: 550m, 110Mi.
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Resources: requests("100m", "100Mi")}, {Resources: requests("200m", "")}},
		InitContainers: []corev1.Container{
			{Resources: requests("50m", "10Mi"), RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
			{Resources: requests("500m", "50Mi")},
		},
	}
	got := podRequests(&spec)
	cpu, memory := got[corev1.ResourceCPU], got[corev1.ResourceMemory]
	if cpu.MilliValue() != 550 || memory.Value() != 110<<20 {
		t.Errorf("requests %s cpu %s memory, want 550m and 110Mi", cpu.String(), memory.String())
	}
}

func TestGuestRequestsWithoutRequests(t *testing.T) {
	// Dedicated CPUs leave the requests out: the guest has its 2 sockets x 2 cores x 1 thread = 4
	// vCPUs and its guest memory of 1Gi.
	vmi := &kubevirtv1.VirtualMachineInstance{}
	memory := resource.MustParse("1Gi")
	vmi.Spec.Domain.CPU = &kubevirtv1.CPU{Cores: 2, Sockets: 2, DedicatedCPUPlacement: true}
	vmi.Spec.Domain.Memory = &kubevirtv1.Memory{Guest: &memory}
	cpu, mem := guestRequests(vmi)
	if cpu.Value() != 4 || mem.Value() != 1<<30 {
		t.Errorf("guest %s cpu %s memory, want 4 and 1Gi", cpu.String(), mem.String())
	}
}
