package platform

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// KubeVirtListGVK is the list kind of KubeVirt's own configuration resource (one per cluster).
var KubeVirtListGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirtList"}

// ClusterVMNetwork is the binding that gives every guest an address its peers can reach on a cluster
// whose KubeVirt CRs are kubevirts: passt where the cluster registered KubeVirt's passt binding
// plugin (the install does that where the kernel cannot make the dummy link that bridge needs),
// otherwise bridge.
func ClusterVMNetwork(kubevirts []unstructured.Unstructured) VMNetwork {
	for _, kv := range kubevirts {
		if _, found, _ := unstructured.NestedMap(kv.Object, "spec", "configuration", "network", "binding", string(VMNetworkPasst)); found {
			return VMNetworkPasst
		}
	}
	return VMNetworkBridge
}

// VirtLauncher is what decides the security context of the virt-launcher pods that KubeVirt makes for
// VMs, as the cluster's KubeVirt CR configures it.
type VirtLauncher struct {
	// Root is KubeVirt's Root feature gate: virt-launcher runs as root, with SYS_NICE.
	Root bool
	// Seccomp is the profile that KubeVirt gives virt-launcher pods
	// (spec.configuration.seccompConfiguration.virtualMachineInstanceProfile.customProfile); nil when
	// none is set, KubeVirt's default.
	Seccomp *corev1.SeccompProfile
}

// ClusterVirtLauncher reads the cluster's KubeVirt CRs for what decides virt-launcher's security
// context.
func ClusterVirtLauncher(kubevirts []unstructured.Unstructured) VirtLauncher {
	var out VirtLauncher
	for _, kv := range kubevirts {
		gates, _, _ := unstructured.NestedStringSlice(kv.Object, "spec", "configuration", "developerConfiguration", "featureGates")
		out.Root = out.Root || slices.Contains(gates, "Root")
		profile := []string{"spec", "configuration", "seccompConfiguration", "virtualMachineInstanceProfile", "customProfile"}
		if local, _, _ := unstructured.NestedString(kv.Object, append(profile, "localhostProfile")...); local != "" {
			out.Seccomp = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To(local)}
		} else if on, _, _ := unstructured.NestedBool(kv.Object, append(profile, "runtimeDefaultProfile")...); on {
			out.Seccomp = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}
	}
	return out
}

// virtLauncherUID is the user that KubeVirt runs virt-launcher as, unless its Root feature gate is on.
const virtLauncherUID = 107

// Pod is the part of a virt-launcher pod that Pod Security admission judges, as KubeVirt v1.7.0's
// virt-controller renders it for vmbench's VMIs (pkg/virt-controller/services: template.go,
// rendercontainer.go, serialconsolelog.go; pkg/container-disk): the pod and its compute and
// container-disk-binary containers run as uid 107 unless the Root feature gate is on, the compute
// container adds NET_BIND_SERVICE (and SYS_NICE as root, without dropping the rest), the containerDisk
// and guest-console-log containers always run as 107, the non-root containers drop every capability
// and privilege escalation, a seccomp profile is set only where the KubeVirt CR gives one; emptyDir
// and Secret volumes, no host namespaces, ports or paths.
func (l VirtLauncher) Pod() (metav1.ObjectMeta, corev1.PodSpec) {
	launcherUID := int64(virtLauncherUID)
	if l.Root {
		launcherUID = 0
	}
	dropAll := &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}
	container := func(name string, uid int64, caps *corev1.Capabilities) corev1.Container {
		sc := &corev1.SecurityContext{RunAsUser: ptr.To(uid), RunAsNonRoot: ptr.To(uid != 0), Capabilities: caps}
		if uid != 0 {
			sc.RunAsGroup = ptr.To(uid)
			sc.AllowPrivilegeEscalation = ptr.To(false)
		}
		return corev1.Container{Name: name, Image: "virt-launcher", SecurityContext: sc}
	}
	compute := &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}
	if l.Root {
		compute = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_NICE"}}
	}
	pod := corev1.PodSecurityContext{RunAsUser: ptr.To(launcherUID), FSGroup: ptr.To[int64](virtLauncherUID), SeccompProfile: l.Seccomp}
	if !l.Root {
		pod.RunAsGroup, pod.RunAsNonRoot = ptr.To(launcherUID), ptr.To(true)
	}
	emptyDir := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	disk := "volume" + vmRootDisk
	return metav1.ObjectMeta{Labels: map[string]string{virtLauncherKey: virtLauncherName}}, corev1.PodSpec{
		SecurityContext:              &pod,
		AutomountServiceAccountToken: ptr.To(false),
		InitContainers: []corev1.Container{container("container-disk-binary", launcherUID, dropAll),
			container(disk+"-init", virtLauncherUID, dropAll)},
		Containers: []corev1.Container{container("compute", launcherUID, compute), container(disk, virtLauncherUID, dropAll),
			container(guestConsoleLog, virtLauncherUID, dropAll)},
		Volumes: []corev1.Volume{
			{Name: "private", VolumeSource: emptyDir}, {Name: "public", VolumeSource: emptyDir},
			{Name: "container-disks", VolumeSource: emptyDir}, {Name: "hotplug-disks", VolumeSource: emptyDir},
			{Name: vmCloudInitDisk, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "cloudinit"}}},
		},
	}
}
