package platform

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// guaranteedWholeCPUs says why a pod would not get cores of its own from the kubelet's static CPU
// manager: every container needs requests equal to limits for CPU and memory (Guaranteed QoS) and a
// whole number of CPUs.
func guaranteedWholeCPUs(pod corev1.PodSpec) string {
	for _, c := range append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...) {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			limit, hasLimit := c.Resources.Limits[r]
			request, hasRequest := c.Resources.Requests[r]
			if !hasLimit || (hasRequest && request.Cmp(limit) != 0) {
				return c.Name + ": " + string(r) + " request differs from its limit"
			}
		}
		cpu := c.Resources.Limits[corev1.ResourceCPU]
		if cpu.MilliValue()%1000 != 0 {
			return c.Name + ": " + cpu.String() + " is not a whole number of CPUs"
		}
	}
	return ""
}

func TestDedicatedCPUsGiveGuaranteedPods(t *testing.T) {
	run := testRun(containerPlatform)
	run.Suite.Spec.Cluster = vmbenchv1.ClusterShape{Nodes: 3, CPU: 4, Memory: quantity("4Gi"), DedicatedCPUs: true}
	_, _, job := buildMPIJob(t, run)
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if why := guaranteedWholeCPUs(spec.Template.Spec); why != "" {
			t.Errorf("%s: %s", role, why)
		}
	}
	// The check above can fail: lowered requests are not Guaranteed.
	run.Suite.Spec.Cluster = vmbenchv1.ClusterShape{Nodes: 3, CPU: 4, CPURequest: quantity("2")}
	_, _, job = buildMPIJob(t, run)
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if guaranteedWholeCPUs(spec.Template.Spec) == "" {
			t.Errorf("%s with a lowered cpu request passed for Guaranteed", role)
		}
	}
}

func TestDedicatedCPUsGiveDedicatedCPUPlacement(t *testing.T) {
	run := vmRun()
	run.Suite.Spec.Cluster = vmbenchv1.ClusterShape{Nodes: 3, CPU: 4, Memory: quantity("4Gi"), DedicatedCPUs: true}
	for node, vmi := range buildVMs(t, run).vmis {
		d := vmi.Spec.Domain
		if d.CPU == nil || !d.CPU.DedicatedCPUPlacement || d.CPU.Cores != 4 {
			t.Errorf("%s: cpu %+v, want 4 cores with dedicatedCpuPlacement", node, d.CPU)
		}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			limit, request := d.Resources.Limits[r], d.Resources.Requests[r]
			if limit.IsZero() || request.Cmp(limit) != 0 {
				t.Errorf("%s: %s request %s, limit %s; want them equal, for a Guaranteed virt-launcher pod", node, r, request.String(), limit.String())
			}
		}
	}
	run.Suite.Spec.Cluster.DedicatedCPUs = false
	for node, vmi := range buildVMs(t, run).vmis {
		if vmi.Spec.Domain.CPU.DedicatedCPUPlacement {
			t.Errorf("%s: dedicatedCpuPlacement without cluster.dedicatedCPUs", node)
		}
		if _, ok := vmi.Spec.Domain.Resources.Limits[corev1.ResourceMemory]; ok {
			t.Errorf("%s: a memory limit without cluster.dedicatedCPUs", node)
		}
	}
}
