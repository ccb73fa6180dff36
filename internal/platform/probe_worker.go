package platform

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// The container arm of the migration benchmark: its probe cannot count its work inside the pod that
// is evicted, since its series would go with the pod. So the probe's CPU loop runs in a worker pod of
// its own, which sends its cumulative count to the runner on the run's master (the MPIJob launcher)
// every 10 ms; the master keeps the probe's windows on its own clock, across the worker's evictions.

// ProbeWorkerContainer is the name of the probe worker pod's one container.
const ProbeWorkerContainer = "probe"

// probeWorkerMemory is the worker's memory: the runner binary and its loop, nothing more.
var probeWorkerMemory = resource.MustParse("64Mi")

// probePeerCPU is a VM run's peer worker's CPU: 100 reports a second and no loop; enough that its
// CPU quota does not delay a report.
var probePeerCPU = resource.MustParse("200m")

// ProbeWorkerName is the name of a run's k-th probe worker pod (from 1): the first, then one per
// eviction, each replacing the one before.
func ProbeWorkerName(run string, k int) string { return run + "-probe-" + strconv.Itoa(k) }

// ProbeWorkerIndex is k where name is ProbeWorkerName(run, k); ok is false for any other name.
func ProbeWorkerIndex(run, name string) (k int, ok bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, run+"-probe-"))
	if err != nil || n < 1 || ProbeWorkerName(run, n) != name {
		return 0, false
	}
	return n, true
}

// ProbeMasterAddress is where a run's probe worker reports to: for a Container run the master's name
// under the MPI Operator's headless Service, for a VM run (the peer of the in-guest probe) the master
// VM's name under the run's headless Service (master.<run>.<namespace>.svc, the VMI's hostname and
// subdomain), which follows the VM to its new virt-launcher pod after a live migration; and the
// runner's probe port.
func ProbeMasterAddress(run Run) string {
	if run.Platform.Type == vmbenchv1.PlatformVM {
		return fmt.Sprintf("%s.%s.%s.svc:%d", vmbenchv1.RoleMaster, run.Name, run.Suite.Namespace, runplan.ProbeReportPort)
	}
	return fmt.Sprintf("%s-%s.%s.%s.svc:%d", run.Name, launcherName, run.Name, run.Suite.Namespace, runplan.ProbeReportPort)
}

// ProbeWorkerPod is the k-th probe worker pod of a Container run (or the one of a VM run, the in-guest
// probe's peer, never evicted), running the runner's probe-worker
// mode for up to duration, reporting to the master. avoidNode, when set, is the node of the pod it
// replaces: a required node affinity keeps the replacement off it, as a drain's cordon would. The pod
// is shaped as the manager's children policy admits: the runner image, the run's labels and role
// probe, no volume, no service account token, no host namespace, every capability dropped, and one
// CPU (the probe's loop is one goroutine) at Guaranteed QoS when the suite's nodes are.
func ProbeWorkerPod(run Run, k int, duration time.Duration, avoidNode string) *corev1.Pod {
	spec := run.Suite.Spec
	cpu := resource.MustParse("1")
	command := []string{"runner", "probe-worker", "--master", ProbeMasterAddress(run), "--duration", duration.String()}
	if run.Platform.Type == vmbenchv1.PlatformVM {
		// The in-guest probe's peer only reports: no load on a node it shares with the VMs.
		cpu = probePeerCPU
		command = append(command, "--load=false")
	}
	res := corev1.ResourceRequirements{
		Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: probeWorkerMemory},
		Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: probeWorkerMemory},
	}
	if cpuRequest, _ := spec.Cluster.Requests(); cpuRequest.Cmp(cpu) < 0 {
		res.Requests[corev1.ResourceCPU] = cpuRequest
	}
	pod := &corev1.Pod{
		TypeMeta:   metav1TypeMeta("v1", "Pod"),
		ObjectMeta: metav1.ObjectMeta{Name: ProbeWorkerName(run.Name, k), Namespace: run.Suite.Namespace, Labels: withRole(runLabels(run), vmbenchv1.RoleProbe)},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:            ProbeWorkerContainer,
				Image:           run.Images.Runner,
				ImagePullPolicy: run.Images.PullPolicy,
				Command:         command,
				Resources:       res,
				SecurityContext: containerSecurity(false),
			}},
			NodeSelector:                  spec.Placement.NodeSelectorLabels(),
			Tolerations:                   spec.Placement.PodTolerations(),
			RuntimeClassName:              run.Platform.RuntimeClassName,
			RestartPolicy:                 corev1.RestartPolicyNever,
			EnableServiceLinks:            ptr.To(false),
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsUser:      ptr.To[int64](mpiUserID),
				RunAsGroup:     ptr.To[int64](mpiUserID),
				RunAsNonRoot:   ptr.To(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
		},
	}
	if avoidNode != "" {
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpNotIn, Values: []string{avoidNode}}},
			}}},
		}}
	}
	return pod
}
