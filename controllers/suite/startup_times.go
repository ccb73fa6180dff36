package suite

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
)

// Time to workload (startup phases) and what a VM costs beyond its guest. Both are read from the
// run's pods and VMIs each time the controller follows the run, and merged into what an earlier
// look saw: a phase keeps its latest moment (the slowest member), the overhead its largest value,
// so that members or pods deleted before the run is collected (the MPI Operator removes running
// workers when the launcher ends) do not take their figures with them.

// lookAtStartup reads the run's pods from the cache and merges what they and the run's VMIs show
// into the run's status.
func (r *SuiteReconciler) lookAtStartup(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	platformType vmbenchv1.PlatformType, children []client.Object) ([]corev1.Pod, error) {
	obs := startupObservation{Since: active.StartTime.Time}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: active.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of run %s: %w", active.Name, err)
	}
	obs.Pods = pods.Items
	for _, obj := range children {
		if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok {
			obs.VMIs = append(obs.VMIs, vmi)
		}
	}
	observeStartup(active, platformType, obs)
	return pods.Items, nil
}

// startupObservation is what one look at a run's members shows.
type startupObservation struct {
	// Since is the run's StartTime, from which every phase counts.
	Since time.Time
	// Pods are the run's pods: for container runs the launcher and workers, for VM runs the
	// virt-launcher pods.
	Pods []corev1.Pod
	// VMIs are the run's VMIs; nil for container runs.
	VMIs []*kubevirtv1.VirtualMachineInstance
}

// observeStartup merges what obs shows into run's StartupSeconds and LauncherOverhead.
func observeStartup(run *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType, obs startupObservation) {
	seen := vmbenchv1.RunStartup{}
	if platformType == vmbenchv1.PlatformVM {
		seen.VMIScheduled = summary.LatestSeconds(obs.Since, vmiPhaseTimes(obs.VMIs, kubevirtv1.Scheduled))
		seen.VMIRunning = summary.LatestSeconds(obs.Since, vmiPhaseTimes(obs.VMIs, kubevirtv1.Running))
		for _, vmi := range obs.VMIs {
			if pod := launcherPodOf(vmi, obs.Pods); pod != nil {
				if o := launcherOverhead(vmi, pod); o != nil {
					run.LauncherOverhead = largerOverhead(run.LauncherOverhead, o)
				}
			}
		}
	} else {
		seen.PodsScheduled = summary.LatestSeconds(obs.Since, podConditionTimes(obs.Pods, corev1.PodScheduled))
		seen.SandboxesReady = summary.LatestSeconds(obs.Since, podConditionTimes(obs.Pods, corev1.PodReadyToStartContainers))
		seen.ContainersStarted = summary.LatestSeconds(obs.Since, containerStartTimes(obs.Pods))
	}
	run.StartupSeconds = summary.MergeStartup(run.StartupSeconds, seen)
}

// vmiPhaseTimes is, for every VMI that went through phase, when it entered it. A VMI that did not
// reach the phase yet gives nothing, and a later look sees it.
func vmiPhaseTimes(vmis []*kubevirtv1.VirtualMachineInstance, phase kubevirtv1.VirtualMachineInstancePhase) []time.Time {
	var out []time.Time
	for _, vmi := range vmis {
		for _, p := range vmi.Status.PhaseTransitionTimestamps {
			if p.Phase == phase {
				out = append(out, p.PhaseTransitionTimestamp.Time)
				break
			}
		}
	}
	return out
}

// podConditionTimes is, for every pod whose condition is True, when it became so.
func podConditionTimes(pods []corev1.Pod, condition corev1.PodConditionType) []time.Time {
	var out []time.Time
	for i := range pods {
		for _, c := range pods[i].Status.Conditions {
			if c.Type == condition && c.Status == corev1.ConditionTrue {
				out = append(out, c.LastTransitionTime.Time)
			}
		}
	}
	return out
}

// containerStartTimes is when each (non-init) container of the pods started, running or since
// ended.
func containerStartTimes(pods []corev1.Pod) []time.Time {
	var out []time.Time
	for i := range pods {
		for _, c := range pods[i].Status.ContainerStatuses {
			switch {
			case c.State.Running != nil:
				out = append(out, c.State.Running.StartedAt.Time)
			case c.State.Terminated != nil:
				out = append(out, c.State.Terminated.StartedAt.Time)
			}
		}
	}
	return out
}

// launcherPodOf is the virt-launcher pod of a VMI: the pod the VMI controls.
func launcherPodOf(vmi *kubevirtv1.VirtualMachineInstance, pods []corev1.Pod) *corev1.Pod {
	for i := range pods {
		if owner := metav1.GetControllerOf(&pods[i]); owner != nil && owner.UID == vmi.UID && owner.Kind == "VirtualMachineInstance" {
			return &pods[i]
		}
	}
	return nil
}

// launcherOverhead is what the scheduler reserved for a VM beyond its guest: the pod's requests
// minus the guest's. A pod that asks less than its guest was not built the way KubeVirt builds
// virt-launcher pods (whose compute container alone asks the guest's requests), and gives nil.
func launcherOverhead(vmi *kubevirtv1.VirtualMachineInstance, pod *corev1.Pod) *vmbenchv1.ResourceOverhead {
	requests := podRequests(&pod.Spec)
	guestCPU, guestMemory := guestRequests(vmi)
	cpu := requests[corev1.ResourceCPU]
	cpu.Sub(guestCPU)
	memory := requests[corev1.ResourceMemory]
	memory.Sub(guestMemory)
	if cpu.Sign() < 0 || memory.Sign() < 0 {
		return nil
	}
	return &vmbenchv1.ResourceOverhead{CPU: cpu, Memory: memory}
}

// podRequests is what the scheduler counts for a pod, per resource: the sum over its containers
// and its restartable (sidecar) init containers, or the largest plain init container with the
// sidecars started before it if that is more, plus the pod's overhead (RuntimeClass).
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, c := range spec.Containers {
		addResources(out, c.Resources.Requests)
	}
	sidecars := corev1.ResourceList{}
	initMax := corev1.ResourceList{}
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			addResources(out, c.Resources.Requests)
			addResources(sidecars, c.Resources.Requests)
			continue
		}
		during := sidecars.DeepCopy()
		addResources(during, c.Resources.Requests)
		for name, q := range during {
			if have, ok := initMax[name]; !ok || q.Cmp(have) > 0 {
				initMax[name] = q
			}
		}
	}
	for name, q := range initMax {
		if have := out[name]; q.Cmp(have) > 0 {
			out[name] = q
		}
	}
	addResources(out, spec.Overhead)
	return out
}

func addResources(into, add corev1.ResourceList) {
	for name, q := range add {
		sum := into[name]
		sum.Add(q)
		into[name] = sum
	}
}

// guestRequests is what a VMI asks for its guest: its requests, or where it leaves them out, what
// KubeVirt gives the guest anyway (one CPU per vCPU; the guest's memory).
func guestRequests(vmi *kubevirtv1.VirtualMachineInstance) (cpu, memory resource.Quantity) {
	d := vmi.Spec.Domain
	cpu, hasCPU := d.Resources.Requests[corev1.ResourceCPU]
	if !hasCPU && d.CPU != nil {
		vcpus := int64(max(d.CPU.Cores, 1)) * int64(max(d.CPU.Sockets, 1)) * int64(max(d.CPU.Threads, 1))
		cpu = *resource.NewQuantity(vcpus, resource.DecimalSI)
	}
	memory, hasMemory := d.Resources.Requests[corev1.ResourceMemory]
	if !hasMemory && d.Memory != nil && d.Memory.Guest != nil {
		memory = d.Memory.Guest.DeepCopy()
	}
	return cpu, memory
}

// largerOverhead keeps, per resource, the larger of two overheads.
func largerOverhead(had, seen *vmbenchv1.ResourceOverhead) *vmbenchv1.ResourceOverhead {
	if had == nil {
		return seen
	}
	out := *had
	if seen.CPU.Cmp(out.CPU) > 0 {
		out.CPU = seen.CPU
	}
	if seen.Memory.Cmp(out.Memory) > 0 {
		out.Memory = seen.Memory
	}
	return &out
}
