package platform

import (
	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
)

// dedicateCPUs asks KubeVirt for exclusive cores when the suite (cluster.dedicatedCPUs) or the VM
// platform (vm.dedicatedCPUs) wants them: dedicatedCpuPlacement pins every vCPU to a host CPU of its
// own, and KubeVirt schedules such a VMI only onto nodes it labelled cpumanager=true (a kubelet with
// the static CPU manager). Its virt-launcher pod must be in Guaranteed QoS, so memory gets a limit
// equal to its request. Pods need nothing more: the API refuses dedicatedCPUs with requests below
// limits, so resources() already gives them Guaranteed QoS with whole CPUs, which the static CPU
// manager pins.
func dedicateCPUs(vmi *kubevirtv1.VirtualMachineInstance, dedicated bool) {
	if !dedicated {
		return
	}
	domain := &vmi.Spec.Domain
	if domain.CPU == nil {
		domain.CPU = &kubevirtv1.CPU{}
	}
	domain.CPU.DedicatedCPUPlacement = true
	if domain.Resources.Limits == nil {
		domain.Resources.Limits = corev1.ResourceList{}
	}
	if memory, ok := domain.Resources.Requests[corev1.ResourceMemory]; ok {
		domain.Resources.Limits[corev1.ResourceMemory] = memory
	}
}
