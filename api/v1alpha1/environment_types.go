package v1alpha1

// RunEnvironment is what a run ran on, as the API server describes it when the run's members are
// running: the versions an upgrade changes, so that a change in the results can be laid beside the
// change under them.
type RunEnvironment struct {
	// ID is a hash of everything below; runs[].environment names it.
	// +required
	// +kubebuilder:validation:MaxLength=12
	ID string `json:"id"`

	// Platform is the type of platform whose runs ran on it: Container or VM.
	// +required
	Platform PlatformType `json:"platform"`

	// KubeVirtVersion is the version that the cluster's KubeVirt CR reports it deployed
	// (status.observedKubeVirtVersion); VM runs only.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	KubeVirtVersion string `json:"kubeVirtVersion,omitempty"`

	// LauncherImage is the image, by digest where the kubelet reports one, of the virt-launcher pods
	// that ran the VMs (it carries QEMU and libvirt); VM runs only.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LauncherImage string `json:"launcherImage,omitempty"`

	// LauncherImageRef is the image of the virt-launcher pods' compute container as their pod spec
	// names it (KubeVirt's choice, often a tag); VM runs only.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LauncherImageRef string `json:"launcherImageRef,omitempty"`

	// MachineType is the QEMU machine type the VMs ran, as KubeVirt reports it in the VMIs'
	// status.machine.type after libvirt expanded an alias (pc-q35-rhel9.6.0, pc-q35-10.1). Where the
	// VMs ask for an alias (q35, KubeVirt's default), its version is the newest machine type of the
	// QEMU build in virt-launcher, so it moves when an upgrade brings a QEMU with a newer one; a type
	// pinned in KubeVirt's configuration stays put. It is not the QEMU or libvirt version, which no
	// object of the API server reports. VM runs only.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	MachineType string `json:"machineType,omitempty"`

	// RunnerImage is the image, by digest where the kubelet reports one, that held the benchmarks: the
	// runner image of a container run's pods, the disk image of a VM run's VMs.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	RunnerImage string `json:"runnerImage,omitempty"`

	// RunnerImageRef is the same image as the run's pods and VMIs were created with: the reference
	// the manager was given (--runner-image for a container or host run's pods, --vm-disk-image for
	// a VM run's containerDisk), usually a tag. A tag moved to a new digest shows in runnerImage
	// under the same runnerImageRef; a new tag of the same digest shows here only.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	RunnerImageRef string `json:"runnerImageRef,omitempty"`

	// Nodes are the Kubernetes nodes the run's members ran on.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	Nodes []NodeEnvironment `json:"nodes,omitempty"`

	// Message says what could not be read and why, for example nodes that the manager may not get
	// in a namespaced install; empty when everything above was read.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Message string `json:"message,omitempty"`
}

// NodeEnvironment is one node's versions as its kubelet reports them (status.nodeInfo), and its CPU.
type NodeEnvironment struct {
	// Name is the Kubernetes node's name.
	// +required
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// KernelVersion is the node's kernel, as uname -r gives it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	KernelVersion string `json:"kernelVersion,omitempty"`

	// OSImage is the node's operating system, as /etc/os-release names it.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	OSImage string `json:"osImage,omitempty"`

	// ContainerRuntimeVersion is the node's container runtime and its version (containerd://2.1.4).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	ContainerRuntimeVersion string `json:"containerRuntimeVersion,omitempty"`

	// KubeletVersion is the node's kubelet version.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	KubeletVersion string `json:"kubeletVersion,omitempty"`

	// Architecture is the node's CPU architecture (amd64, arm64).
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Architecture string `json:"architecture,omitempty"`

	// CPUModel is the host CPU model that KubeVirt's node labeller found on the node
	// (host-model-cpu.node.kubevirt.io/<model>); empty where KubeVirt does not label the node.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CPUModel string `json:"cpuModel,omitempty"`
}
