package v1alpha1

import "k8s.io/apimachinery/pkg/api/resource"

// VMNetworkBinding is how a VM's interface joins its virt-launcher pod's network.
// +kubebuilder:validation:Enum=Bridge;Passt;Masquerade
type VMNetworkBinding string

const (
	// VMBindingBridge bridges the guest onto the pod's interface: the guest has the pod's address.
	VMBindingBridge VMNetworkBinding = "Bridge"
	// VMBindingPasst is KubeVirt's passt binding plugin: a user-space process translates between the
	// guest and the pod's sockets, and the guest has the pod's address.
	VMBindingPasst VMNetworkBinding = "Passt"
	// VMBindingMasquerade NATs the guest behind the pod's address; the guest sees 10.0.2.2.
	VMBindingMasquerade VMNetworkBinding = "Masquerade"
)

// VMDiskBus is the bus the VM's root disk is attached to.
// +kubebuilder:validation:Enum=virtio;sata;scsi
type VMDiskBus string

const (
	VMDiskBusVirtio VMDiskBus = "virtio"
	VMDiskBusSATA   VMDiskBus = "sata"
	VMDiskBusSCSI   VMDiskBus = "scsi"
)

// VMDiskCache is QEMU's cache mode of the VM's root disk.
// +kubebuilder:validation:Enum=none;writethrough;writeback
type VMDiskCache string

const (
	VMDiskCacheNone         VMDiskCache = "none"
	VMDiskCacheWritethrough VMDiskCache = "writethrough"
	VMDiskCacheWriteback    VMDiskCache = "writeback"
)

// VMHugepages is the size of the huge pages that back a VM's memory.
// +kubebuilder:validation:Enum="2Mi";"1Gi"
type VMHugepages string

const (
	VMHugepages2Mi VMHugepages = "2Mi"
	VMHugepages1Gi VMHugepages = "1Gi"
)

// Bytes is the page size in bytes.
func (h VMHugepages) Bytes() int64 {
	switch h {
	case VMHugepages2Mi:
		return 2 << 20
	case VMHugepages1Gi:
		return 1 << 30
	}
	return 0
}

// VMIOThreads is KubeVirt's IO thread policy: which threads serve the VM's virtio disks.
// +kubebuilder:validation:Enum=shared;auto
type VMIOThreads string

const (
	// VMIOThreadsShared serves every disk from one IO thread outside the vCPUs.
	VMIOThreadsShared VMIOThreads = "shared"
	// VMIOThreadsAuto spreads the disks over a pool of IO threads.
	VMIOThreadsAuto VMIOThreads = "auto"
)

// VMSettings say how a VM platform's VMs are built, so that one suite can compare a default VM and a
// tuned one with the same baseline. Every field left out keeps the VM as vmbench builds it without
// this block. docs/vm-variants.md says what each setting does in KubeVirt and what the cluster needs.
// +kubebuilder:validation:XValidation:rule="!has(self.dedicatedIOThread) || !self.dedicatedIOThread || !has(self.diskBus) || self.diskBus == 'virtio'",message="vm.dedicatedIOThread needs the virtio disk bus, the only one KubeVirt gives IO threads to: set vm.diskBus to virtio or remove dedicatedIOThread"
// +kubebuilder:validation:XValidation:rule="!has(self.ioThreads) || !has(self.diskBus) || self.diskBus == 'virtio'",message="vm.ioThreads serve virtio disks only, and this VM's root disk is on another bus: set vm.diskBus to virtio or remove ioThreads"
type VMSettings struct {
	// NetworkBinding is how the VMs' interface joins the pod network: Bridge, Passt (KubeVirt's
	// passt binding plugin, which the cluster's KubeVirt CR must register) or Masquerade (NAT; the
	// guests cannot run MPI across VMs). Left out, the manager's --vm-network decides, by default
	// what the cluster's KubeVirt offers.
	// +optional
	NetworkBinding VMNetworkBinding `json:"networkBinding,omitempty"`

	// DiskBus is the bus of the root disk, where the VM's Local storage target is: virtio (the
	// default), sata or scsi (virtio-scsi).
	// +optional
	DiskBus VMDiskBus `json:"diskBus,omitempty"`

	// DiskCache is QEMU's cache mode of the root disk: none (O_DIRECT on the host), writethrough or
	// writeback. Left out, KubeVirt picks none where the disk's file system supports O_DIRECT, else
	// writethrough.
	// +optional
	DiskCache VMDiskCache `json:"diskCache,omitempty"`

	// DedicatedCPUs pins this platform's vCPUs to host CPUs of their own (KubeVirt's
	// dedicatedCpuPlacement), as cluster.dedicatedCPUs does for every platform. It needs requests
	// equal to limits, a kubelet with the static CPU manager and KubeVirt's CPUManager feature gate.
	// +optional
	DedicatedCPUs bool `json:"dedicatedCPUs,omitempty"`

	// IsolateEmulatorThread gives QEMU's emulator thread a host CPU of its own, one more per VM than
	// its vCPUs. It needs dedicated CPUs (this block's or cluster.dedicatedCPUs).
	// +optional
	IsolateEmulatorThread bool `json:"isolateEmulatorThread,omitempty"`

	// Hugepages backs the guest memory with huge pages of this size, 2Mi or 1Gi, which the nodes must
	// have pre-allocated; cluster.memory must be a multiple of it.
	// +optional
	Hugepages VMHugepages `json:"hugepages,omitempty"`

	// IOThreads is KubeVirt's ioThreadsPolicy: shared (one IO thread for the disks) or auto (a pool).
	// Left out, QEMU's main loop serves the disks. Virtio disks only.
	// +optional
	IOThreads VMIOThreads `json:"ioThreads,omitempty"`

	// DedicatedIOThread gives the root disk an IO thread of its own. Virtio disks only.
	// +optional
	DedicatedIOThread bool `json:"dedicatedIOThread,omitempty"`

	// CPUModel is the CPU model the guest sees (KubeVirt's spec.domain.cpu.model): host-passthrough
	// (the node's CPU as it is), host-model (the closest libvirt model with the node's features) or a
	// named libvirt model such as Skylake-Server, which hides the features the model lacks (AVX-512,
	// for example). Left out, KubeVirt picks its cluster default, host-model unless its CR sets
	// another; a named model needs nodes whose CPUs have it.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9][A-Za-z0-9_.-]*$')",message="vm.cpuModel is host-passthrough, host-model or a libvirt CPU model name (letters, digits, '.', '_' and '-', such as Skylake-Server): set one of those or remove cpuModel"
	CPUModel string `json:"cpuModel,omitempty"`

	// NetworkMultiqueue gives the VMs' virtio network interface one queue per vCPU (KubeVirt's
	// spec.domain.devices.networkInterfaceMultiqueue), so that parallel streams are served by
	// several vCPUs. It matters most behind masquerade.
	// +optional
	NetworkMultiqueue bool `json:"networkMultiqueue,omitempty"`

	// EvictionStrategy is what a node drain does to the VMs (KubeVirt's spec.evictionStrategy):
	// LiveMigrate moves them to another node while they run, and holds the drain until they can be
	// moved; LiveMigrateIfPossible moves those KubeVirt says can migrate (their LiveMigratable
	// condition) and stops the others; None stops them, and the run fails; External leaves it to
	// another controller. Left out, the cluster's KubeVirt CR decides
	// (spec.configuration.evictionStrategy; KubeVirt's own default is None). Ask for LiveMigrate only
	// on a cluster that can migrate these VMs (docs/migration.md): elsewhere a drain waits forever.
	// +optional
	EvictionStrategy VMEvictionStrategy `json:"evictionStrategy,omitempty"`

	// MigrationPolicy is how KubeVirt live-migrates this platform's VMs: while each run lasts,
	// vmbench holds a KubeVirt MigrationPolicy (migrations.kubevirt.io) that selects that run's VMIs
	// alone, and removes it when the run ends. Several VM platforms that differ only in this block
	// compare migration settings on the same load. Left out, the cluster's KubeVirt CR
	// (spec.configuration.migrations) and any MigrationPolicy of the cluster's decide.
	// docs/migration.md ("Migration policy variants") says what each field does.
	// +optional
	MigrationPolicy *VMMigrationPolicy `json:"migrationPolicy,omitempty"`
}

// VMMigrationPolicy is the part of KubeVirt's MigrationPolicy spec a VM platform sets; its fields
// keep KubeVirt's names and meaning. A field left out keeps the cluster's setting.
type VMMigrationPolicy struct {
	// BandwidthPerMigration caps the bytes per second one migration sends, such as 64Mi; 0 lifts the
	// cap. At most 100Gi.
	// +optional
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty"`

	// CompletionTimeoutPerGiB is how many seconds a migration may take per GiB of guest memory
	// before KubeVirt aborts it (or, with allowPostCopy, switches it to post-copy): 1 to 3600
	// (KubeVirt's default is 150).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty"`

	// AllowAutoConverge lets QEMU throttle the guest's vCPUs, more and more, until the memory it
	// dirties no longer outruns the migration.
	// +optional
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty"`

	// AllowPostCopy lets a migration that does not converge switch to post-copy: the guest resumes
	// on the target and fetches its remaining pages over the network, so a failure of the network or
	// of the source in that phase loses the VM.
	// +optional
	AllowPostCopy *bool `json:"allowPostCopy,omitempty"`
}

// MaxMigrationBandwidth bounds vm.migrationPolicy.bandwidthPerMigration, in bytes per second.
var MaxMigrationBandwidth = resource.MustParse("100Gi")

// VMEvictionStrategy is KubeVirt's eviction strategy of a VMI.
// +kubebuilder:validation:Enum=LiveMigrate;LiveMigrateIfPossible;None;External
type VMEvictionStrategy string

// DedicatedCPUsOf reports whether the platform's VMs or pods get dedicated CPUs: cluster.dedicatedCPUs
// for every platform, or the VM platform's own vm.dedicatedCPUs.
func (p Platform) DedicatedCPUsOf(shape ClusterShape) bool {
	return shape.DedicatedCPUs || (p.Type == PlatformVM && p.VM != nil && p.VM.DedicatedCPUs)
}

// VMSettingsStatus is how one VM platform's VMs were built, as read back from a VMI of its latest
// run that KubeVirt admitted (with KubeVirt's defaults filled in), not from the spec.
type VMSettingsStatus struct {
	// Platform is the platform's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// Run is the run whose VMI was read.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Run string `json:"run"`

	// NetworkBinding is the binding of the VMI's interface: Bridge, Passt, Masquerade, or the name of
	// another binding plugin.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	NetworkBinding string `json:"networkBinding,omitempty"`

	// DiskBus is the root disk's bus.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	DiskBus string `json:"diskBus,omitempty"`

	// DiskCache is the root disk's cache mode; empty when KubeVirt chose it (none where the disk's
	// file system supports O_DIRECT, else writethrough).
	// +optional
	// +kubebuilder:validation:MaxLength=16
	DiskCache string `json:"diskCache,omitempty"`

	// DedicatedCPUs is the VMI's dedicatedCpuPlacement.
	// +optional
	DedicatedCPUs bool `json:"dedicatedCPUs,omitempty"`

	// IsolateEmulatorThread is the VMI's isolateEmulatorThread.
	// +optional
	IsolateEmulatorThread bool `json:"isolateEmulatorThread,omitempty"`

	// Hugepages is the page size that backs the guest memory; empty for normal pages.
	// +optional
	// +kubebuilder:validation:MaxLength=8
	Hugepages string `json:"hugepages,omitempty"`

	// IOThreads is the VMI's ioThreadsPolicy; empty when it has none.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	IOThreads string `json:"ioThreads,omitempty"`

	// DedicatedIOThread is the root disk's dedicatedIOThread.
	// +optional
	DedicatedIOThread bool `json:"dedicatedIOThread,omitempty"`

	// CPUModel is the VMI's CPU model; empty when the VMI names none and KubeVirt's cluster default
	// applies (host-model unless the KubeVirt CR sets another).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	CPUModel string `json:"cpuModel,omitempty"`

	// NetworkMultiqueue is the VMI's networkInterfaceMultiqueue.
	// +optional
	NetworkMultiqueue bool `json:"networkMultiqueue,omitempty"`

	// EvictionStrategy is the VMI's spec.evictionStrategy: what a node drain does to it (LiveMigrate,
	// LiveMigrateIfPossible, None, External). Absent where the VMI leaves it to the KubeVirt CR's
	// spec.configuration.evictionStrategy.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	EvictionStrategy string `json:"evictionStrategy,omitempty"`

	// QOSClass is the QoS class KubeVirt reported for the VMI's virt-launcher pod.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	QOSClass string `json:"qosClass,omitempty"`
}

// hugepagesMultiple says whether memory can be backed by whole pages of size h.
func hugepagesMultiple(memory resource.Quantity, h VMHugepages) bool {
	size := h.Bytes()
	return size > 0 && memory.Value()%size == 0
}
