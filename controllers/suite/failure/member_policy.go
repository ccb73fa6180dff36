package failure

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// What a kubelet or virt-handler reports of a run's members after they started: a container that
// crash-loops, one the kernel killed for its memory, a pod evicted or failed, a node that stopped
// reporting, a VMI that failed. Startup's own reasons (an unschedulable pod, an image that cannot be
// pulled) are failure_policy.go's; this file names what comes after, for the run's message and the
// suite's conditions.

// Reasons of the causes that a run's started members give; a terminal one fails the run.
const (
	ReasonCrashLoop    = "CrashLoopBackOff"
	ReasonOOMKilled    = "OOMKilled"
	ReasonEvicted      = "Evicted"
	ReasonMemberFailed = "MemberFailed"
	ReasonNodeLost     = "NodeLost"
	ReasonVMFailed     = "VMFailed"
)

// maxMemberRestarts bounds the restarts of a member's container: a benchmark cluster whose member
// restarted has lost the state its MPI job and its measurements had, and one that restarted this
// often is crash-looping rather than recovering from a single hiccup.
const maxMemberRestarts = 3

// memberObservation is what the reconcile saw of a started run's members.
type MemberObservation struct {
	Run string
	// Pods are the pods labelled with the run: the MPIJob's launcher and workers, or the VMs'
	// virt-launchers. Only those that memberPods picks count.
	Pods []corev1.Pod
	VMIs []*kubevirtv1.VirtualMachineInstance
	// Owners are the UIDs of the run's children (its MPIJob, its VMIs).
	Owners map[types.UID]bool
	// Since is when the run's MPIJob was made: a pod of a launcher Job of the run's name that is
	// older belongs to an earlier MPIJob of the same name (the Job's UID is not cached).
	Since time.Time
	// Benchmarks are the run's benchmarks, whose memory sizes an OOM kill names.
	Benchmarks []vmbenchv1.Benchmark
}

// memberCause names the first member that failed after it started: a terminal cause (the member
// cannot come back, or restarted maxMemberRestarts times) before any other, pods before VMIs, so
// that a virt-launcher's own reason is named rather than only its VMI's phase. A non-terminal cause
// is a member whose node stopped reporting. It is nil when every member is well or ended normally.
func MemberCause(o MemberObservation) *conditions.Cause {
	failedVMIs := map[types.UID]bool{}
	for _, vmi := range o.VMIs {
		failedVMIs[vmi.UID] = vmi.Status.Phase == kubevirtv1.Failed
	}
	var first *conditions.Cause
	for _, m := range memberPods(o) {
		c := podMemberCause(m.pod, m.role, o.Benchmarks)
		if c != nil && m.vmi != "" && !failedVMIs[m.vmi] && c.Reason != ReasonEvicted && c.Reason != ReasonNodeLost {
			// A VM's containers end in many ways as it powers off; what ended one counts once
			// virt-handler says the VM failed.
			continue
		}
		if c != nil && c.Terminal {
			return c
		}
		if first == nil {
			first = c
		}
	}
	vmis := append([]*kubevirtv1.VirtualMachineInstance(nil), o.VMIs...)
	sort.Slice(vmis, func(i, j int) bool { return vmis[i].Name < vmis[j].Name })
	for _, vmi := range vmis {
		if vmi.Status.Phase == kubevirtv1.Failed {
			return vmiFailedCause(vmi)
		}
	}
	return first
}

// memberPod is a pod of the run and how it takes part in it.
type memberPod struct {
	pod  *corev1.Pod
	role string
	// vmi is the UID of the VMI whose virt-launcher the pod is.
	vmi types.UID
}

// memberPods picks the run's members among the pods with its labels, in name order. Labels, and
// even a controller reference, are metadata that anyone who may create pods in the namespace can
// copy; what a copy cannot take is a name or a place in time. The MPI Operator's workers have fixed
// names (<run>-worker-<i>); the launcher Job's pod and each VMI's virt-launcher are the oldest pods
// of their controller (the rule log_pod.go reads the launcher's log by). A launcher Job's pod older
// than the run's MPIJob is an earlier MPIJob's. A VMI that migrated runs in the pod its status
// names (CurrentLauncherPod), which only KubeVirt writes: that pod is its member then.
func memberPods(o MemberObservation) []memberPod {
	pods := make([]*corev1.Pod, len(o.Pods))
	for i := range o.Pods {
		pods[i] = &o.Pods[i]
	}
	sort.SliceStable(pods, func(i, j int) bool {
		ti, tj := pods[i].CreationTimestamp.Time, pods[j].CreationTimestamp.Time
		return ti.Before(tj) || (ti.Equal(tj) && pods[i].Name < pods[j].Name)
	})
	taken := map[types.UID]bool{}
	current := map[types.UID]string{}
	for _, vmi := range o.VMIs {
		current[vmi.UID] = CurrentLauncherPod(vmi)
	}
	// A migrated VMI's member is the pod KubeVirt says it runs in, when that pod is here.
	for _, pod := range pods {
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "VirtualMachineInstance" && o.Owners[ref.UID] &&
			pod.Name == current[ref.UID] && !taken[ref.UID] {
			taken[ref.UID] = true
		}
	}
	launcherTaken := false
	var out []memberPod
	for _, pod := range pods {
		ref := metav1.GetControllerOf(pod)
		switch {
		case ref == nil:
		case ref.Kind == "MPIJob" && o.Owners[ref.UID]:
			if isWorkerName(pod.Name, o.Run) {
				out = append(out, memberPod{pod: pod, role: "worker"})
			}
		case ref.Kind == "VirtualMachineInstance" && o.Owners[ref.UID] && taken[ref.UID] && pod.Name == current[ref.UID]:
			out = append(out, memberPod{pod: pod, role: "virt-launcher of VMI " + ref.Name, vmi: ref.UID})
		case ref.Kind == "VirtualMachineInstance" && o.Owners[ref.UID]:
			if !taken[ref.UID] {
				taken[ref.UID] = true
				out = append(out, memberPod{pod: pod, role: "virt-launcher of VMI " + ref.Name, vmi: ref.UID})
			}
		case ref.Kind == "Job" && ref.Name == o.Run+"-launcher" && !pod.CreationTimestamp.Time.Before(o.Since):
			if !launcherTaken {
				launcherTaken = true
				out = append(out, memberPod{pod: pod, role: "launcher"})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pod.Name < out[j].pod.Name })
	return out
}

// CurrentLauncherPod is the virt-launcher pod that KubeVirt says the VMI runs in: the target of its
// last migration once that completed, its source while a migration runs or after one failed or was
// aborted, and "" when the VMI never migrated (its only pod, the oldest, is meant). The source of a
// completed migration ends (Completed, or Error through its guest-console-log container on older
// KubeVirt releases): that is the migration, not a failure of the run.
func CurrentLauncherPod(vmi *kubevirtv1.VirtualMachineInstance) string {
	ms := vmi.Status.MigrationState
	switch {
	case ms == nil:
		return ""
	case ms.Completed && !ms.Failed && ms.TargetPod != "":
		return ms.TargetPod
	default:
		return ms.SourcePod
	}
}

// isWorkerName reports whether name is one the MPI Operator gives a worker of run: <run>-worker-<i>.
func isWorkerName(name, run string) bool {
	index, ok := strings.CutPrefix(name, run+"-worker-")
	if !ok || index == "" {
		return false
	}
	for _, c := range index {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// podMemberCause is what a started pod's kubelet, or the control plane on its node's behalf, says
// went wrong with it. A pod that Succeeded, or that is being deleted with no disruption named (the
// MPI Operator removes the workers once the launcher ended), is no failure.
func podMemberCause(pod *corev1.Pod, role string, benchmarks []vmbenchv1.Benchmark) *conditions.Cause {
	who := fmt.Sprintf("pod %s (%s)", pod.Name, role)
	if pod.Spec.NodeName != "" {
		who += " on node " + pod.Spec.NodeName
	}
	if pod.Status.Phase == corev1.PodSucceeded {
		return nil
	}
	if c := podCondition(pod, corev1.DisruptionTarget); c != nil && c.Status == corev1.ConditionTrue {
		reason := ReasonEvicted
		if c.Reason == "DeletionByTaintManager" || c.Reason == "DeletionByPodGC" {
			reason = ReasonNodeLost
		}
		if c.Reason == evictionAPIReason {
			advice := drainAdvice
			if pod.Labels["kubevirt.io"] == "virt-launcher" {
				advice = vmDrainAdvice
			}
			return &conditions.Cause{Reason: ReasonEvicted, Terminal: true, Message: fmt.Sprintf("%s was evicted through the eviction API (%s: %s), "+
				"as a node drain (kubectl drain) evicts: %s", who, c.Reason, conditions.OneLineString(c.Message), advice)}
		}
		return &conditions.Cause{Reason: reason, Terminal: true, Message: fmt.Sprintf("%s is being removed: %s: %s; %s", who, c.Reason, conditions.OneLineString(c.Message), evictionAdvice)}
	}
	if pod.DeletionTimestamp != nil {
		return nil
	}
	if pod.Status.Phase == corev1.PodFailed {
		if pod.Status.Reason == ReasonEvicted {
			return &conditions.Cause{Reason: ReasonEvicted, Terminal: true, Message: fmt.Sprintf("%s was evicted by the kubelet: %s; %s", who, conditions.OneLineString(pod.Status.Message), evictionAdvice)}
		}
		for _, s := range pod.Status.ContainerStatuses {
			if t := s.State.Terminated; t != nil && (t.ExitCode != 0 || t.Reason == ReasonOOMKilled) {
				return terminatedCause(who, s.Name, t, 0, pod, benchmarks)
			}
		}
		return &conditions.Cause{Reason: ReasonMemberFailed, Terminal: true, Message: fmt.Sprintf("%s failed: %s: %s; see kubectl describe pod %s",
			who, pod.Status.Reason, conditions.OneLineString(pod.Status.Message), pod.Name)}
	}
	for _, s := range pod.Status.ContainerStatuses {
		switch {
		case s.State.Waiting != nil && s.State.Waiting.Reason == ReasonCrashLoop:
			last := s.LastTerminationState.Terminated
			if last == nil {
				last = &corev1.ContainerStateTerminated{}
			}
			c := terminatedCause(who, s.Name, last, s.RestartCount, pod, benchmarks)
			if last.Reason != ReasonOOMKilled {
				c.Reason = ReasonCrashLoop
			}
			c.Terminal = s.RestartCount >= maxMemberRestarts
			return c
		case s.State.Terminated != nil && pod.Spec.RestartPolicy == corev1.RestartPolicyNever &&
			(s.State.Terminated.ExitCode != 0 || s.State.Terminated.Reason == ReasonOOMKilled):
			// The kubelet marks the pod Failed next; the container does not come back.
			return terminatedCause(who, s.Name, s.State.Terminated, 0, pod, benchmarks)
		}
	}
	return nodeLostCause(pod, who)
}

// evictionAdvice is what to change when the kubelet or the control plane took a member's node away.
const evictionAdvice = "the run's results are lost and later runs go on; run the suite on nodes with room to spare (spec.placement), " +
	"and keep requests equal to limits (no cluster.cpuRequest or cluster.memoryRequest) so that its pods are evicted last"

// evictionAPIReason is the DisruptionTarget reason the API server gives a pod it evicts on request.
const evictionAPIReason = "EvictionByEvictionAPI"

// drainAdvice is what to change when a drain evicted a member.
const drainAdvice = "the run's results are lost and later runs go on; with spec.cluster.disruption WaitForRun (the default, not Allow) " +
	"a run's PodDisruptionBudget holds such evictions until the run ends"

// vmDrainAdvice is what to change when a drain evicted a VM's virt-launcher pod.
const vmDrainAdvice = "the run's results are lost and later runs go on; with spec.platforms[].vm.evictionStrategy LiveMigrate, " +
	"on a cluster that can migrate, a drain moves the VM instead"

// terminatedCause names a container's end: killed for its memory (with the limit and what the
// run's benchmarks ask for) or exited with a non-zero code, after restarts restarts.
func terminatedCause(who, container string, t *corev1.ContainerStateTerminated, restarts int32, pod *corev1.Pod, benchmarks []vmbenchv1.Benchmark) *conditions.Cause {
	what := fmt.Sprintf("container %s of %s", container, who)
	if restarts > 0 {
		what += fmt.Sprintf(" restarted %d times (the run fails at %d); its last run", restarts, maxMemberRestarts)
	}
	if t.Reason == ReasonOOMKilled {
		return &conditions.Cause{Reason: ReasonOOMKilled, Terminal: true, Message: fmt.Sprintf("%s was killed for its memory (OOMKilled, exit code %d): %s",
			what, t.ExitCode, oomAdvice(pod, container, benchmarks))}
	}
	reason := t.Reason
	if reason == "" {
		reason = "no reason given"
	}
	msg := fmt.Sprintf("%s exited with code %d (%s)", what, t.ExitCode, reason)
	if t.Message != "" {
		msg += ": " + conditions.OneLineString(t.Message)
	}
	previous := ""
	if restarts > 0 {
		previous = " --previous"
	}
	return &conditions.Cause{Reason: ReasonMemberFailed, Terminal: true, Message: fmt.Sprintf("%s; see kubectl logs %s -c %s%s", msg, pod.Name, container, previous)}
}

// oomAdvice compares a killed container's memory limit with what the run's benchmarks ask for.
func oomAdvice(pod *corev1.Pod, container string, benchmarks []vmbenchv1.Benchmark) string {
	limit := "no memory limit: the node ran out of memory"
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && c.Name == container {
			limit = "a memory limit of " + q.String()
		}
	}
	var asks []string
	for _, b := range benchmarks {
		switch {
		case b.HPCC != nil:
			sizes := b.HPCC.ProblemSizes
			if b.HPCC.N != nil {
				sizes = []int32{*b.HPCC.N}
			}
			if len(sizes) == 0 {
				asks = append(asks, fmt.Sprintf("%s (hpcc) fills hpcc.memoryPercent %d%% of it", b.Name, b.HPCC.MemoryPercent))
				continue
			}
			n := float64(slicesMax(sizes))
			asks = append(asks, fmt.Sprintf("%s (hpcc) problemSize %d needs %.1f GiB of matrix (8·N²) across the nodes", b.Name, int64(n), 8*n*n/(1<<30)))
		case b.StressNGVM != nil:
			asks = append(asks, fmt.Sprintf("%s (stress-ng-vm) asks for stressNGVM.bytes %s, split across its %d workers", b.Name, b.StressNGVM.Bytes, b.StressNGVM.Workers))
		case b.SysbenchMemory != nil:
			asks = append(asks, fmt.Sprintf("%s (sysbench-memory) uses sysbenchMemory.blockSizes %s", b.Name, strings.Join(b.SysbenchMemory.BlockSizes, ",")))
		}
	}
	msg := "it had " + limit
	if pod.Labels["kubevirt.io"] == "virt-launcher" {
		msg += ", which holds the guest's cluster.memory and KubeVirt's overhead"
	} else {
		msg += " (cluster.memory)"
	}
	if len(asks) > 0 {
		msg += "; " + strings.Join(asks, "; ")
	}
	return msg + "; raise cluster.memory, or lower what the benchmarks ask for"
}

func slicesMax(v []int32) int32 {
	m := v[0]
	for _, x := range v[1:] {
		m = max(m, x)
	}
	return m
}

// nodeLostCause is a running pod that the node lifecycle controller marked not ready while its
// containers still say they are: the kubelet stopped reporting, its node is NotReady or unreachable.
// The pod may come back with its node; otherwise its eviction (DisruptionTarget) fails the run.
func nodeLostCause(pod *corev1.Pod, who string) *conditions.Cause {
	ready := podCondition(pod, corev1.PodReady)
	if pod.Status.Phase != corev1.PodRunning || ready == nil || ready.Status != corev1.ConditionFalse || len(pod.Status.ContainerStatuses) == 0 {
		return nil
	}
	for _, s := range pod.Status.ContainerStatuses {
		if !s.Ready || s.State.Running == nil {
			return nil
		}
	}
	reason := ""
	if ready.Reason != "" {
		reason = " (" + ready.Reason + ")"
	}
	return &conditions.Cause{Reason: ReasonNodeLost, Message: fmt.Sprintf("%s is not ready%s while its containers still run: its node is NotReady or unreachable; "+
		"the run fails when the pod is evicted from it (after its not-ready toleration, 300s by default), and goes on if the node comes back", who, reason)}
}

// vmiFailedCause is a VMI that virt-handler or virt-controller reported Failed.
func vmiFailedCause(vmi *kubevirtv1.VirtualMachineInstance) *conditions.Cause {
	msg := fmt.Sprintf("VMI %s (VM %s)", vmi.Name, vmi.Labels[vmbenchv1.LabelNode])
	if vmi.Status.NodeName != "" {
		msg += " on node " + vmi.Status.NodeName
	}
	msg += " failed"
	see := "the events of its virt-launcher pod"
	if m := migrationEnd(vmi); m != "" {
		msg += " " + m
		see = "the events of its virt-launcher pods and the logs of virt-handler on both nodes"
	}
	if vmi.Status.Reason != "" {
		msg += ": " + vmi.Status.Reason
	}
	for _, c := range vmi.Status.Conditions {
		if c.Status == corev1.ConditionFalse && c.Message != "" {
			msg += fmt.Sprintf(": %s: %s", c.Reason, conditions.OneLineString(c.Message))
		}
	}
	return &conditions.Cause{Reason: ReasonVMFailed, Terminal: true, Message: fmt.Sprintf("%s; see kubectl describe vmi %s and %s", msg, vmi.Name, see)}
}

// migrationHandOver bounds how long after a migration ended KubeVirt may fail the VMI for it: the
// source's virt-handler waits 60 s for the target to report the guest, and a VMI status write
// may come a little later.
const migrationHandOver = 2 * time.Minute

// migrationEnd says how a failed VMI's last live migration ended, when KubeVirt failed the VMI at
// the end of one: the source's virt-handler fails a VMI whose migration completed but whose guest
// the target's virt-handler never reported running within a minute (KubeVirt's migration-source
// hand-over), and it marks that migration failed too. "" when the VMI was not migrating, or its
// last migration failed more than migrationHandOver before the VMI did (another cause then).
func migrationEnd(vmi *kubevirtv1.VirtualMachineInstance) string {
	ms := vmi.Status.MigrationState
	if ms == nil || !ms.Completed || !ms.Failed {
		return ""
	}
	for _, t := range vmi.Status.PhaseTransitionTimestamps {
		if t.Phase == kubevirtv1.Failed && ms.EndTimestamp != nil && t.PhaseTransitionTimestamp.Sub(ms.EndTimestamp.Time) > migrationHandOver {
			return ""
		}
	}
	out := fmt.Sprintf("at the end of its live migration from node %s to node %s", ms.SourceNode, ms.TargetNode)
	if ms.EndTimestamp != nil {
		out += " (ended " + ms.EndTimestamp.UTC().Format(time.TimeOnly) + ")"
	}
	switch {
	case ms.FailureReason != "":
		out += ", which KubeVirt marked failed: " + conditions.OneLineString(ms.FailureReason)
	case ms.TargetState == nil || !ms.TargetState.DomainDetected || ms.TargetState.DomainReadyTimestamp == nil:
		out += ", which KubeVirt marked failed: the guest was never reported running on the target node"
	default:
		out += ", which KubeVirt marked failed"
	}
	return out
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}
