package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// The shape of the cluster every run builds, where its nodes may run, and the volume they share.

// ClusterShape is the size of the small cluster that every platform builds for a run: one master and
// Nodes-1 workers, each with the same CPU and memory.
// +kubebuilder:validation:XValidation:fieldPath=".cpuRequest",rule="!has(self.cpuRequest) || !isQuantity(string(self.cpuRequest)) || quantity(string(self.cpuRequest)).compareTo(quantity('0').add(has(self.cpu) ? self.cpu : 2)) <= 0",messageExpression="'cluster.cpuRequest %s is above cluster.cpu, the CPU limit of each node: set cluster.cpuRequest to %d or less, or remove it'.format([dyn(string(self.cpuRequest)), dyn(has(self.cpu) ? self.cpu : 2)])"
// +kubebuilder:validation:XValidation:fieldPath=".memoryRequest",rule="!has(self.memoryRequest) || !isQuantity(string(self.memoryRequest)) || !isQuantity(has(self.memory) ? string(self.memory) : '2Gi') || quantity(string(self.memoryRequest)).compareTo(quantity(has(self.memory) ? string(self.memory) : '2Gi')) <= 0",messageExpression="'cluster.memoryRequest %s is above cluster.memory, the memory limit of each node: set cluster.memoryRequest to %s or less, or remove it'.format([string(self.memoryRequest), has(self.memory) ? string(self.memory) : '2Gi'])"
// +kubebuilder:validation:XValidation:rule="!has(self.dedicatedCPUs) || !self.dedicatedCPUs || (!has(self.cpuRequest) && !has(self.memoryRequest))",message="cluster.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or set dedicatedCPUs to false"
type ClusterShape struct {
	// Nodes is the number of machines per platform, master included. The seeds used 3.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	Nodes int32 `json:"nodes,omitempty"`

	// CPU is the number of CPUs of each node: the pod's CPU limit, or the VM's vCPUs.
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	CPU int32 `json:"cpu,omitempty"`

	// Memory of each node: the pod's memory limit, or the VM's guest memory.
	// +optional
	// +kubebuilder:default="2Gi"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).compareTo(quantity('256Mi')) >= 0 && quantity(string(self)).compareTo(quantity('256Gi')) <= 0)",message="set cluster.memory between 256Mi and 256Gi"
	Memory *resource.Quantity `json:"memory,omitempty"`

	// CPURequest lowers the CPU request below the limit, for clusters too small to give every node
	// its whole limit (a laptop or a CI runner). Empty means requests equal limits: Guaranteed QoS,
	// which a fair comparison needs. The suite's status warns when it is set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).isGreaterThan(quantity('0'))",message="set cluster.cpuRequest above 0, for example 500m, or remove it"
	CPURequest *resource.Quantity `json:"cpuRequest,omitempty"`

	// MemoryRequest lowers the memory request below the limit; see CPURequest.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).isGreaterThan(quantity('0'))",message="set cluster.memoryRequest above 0, for example 1Gi, or remove it"
	MemoryRequest *resource.Quantity `json:"memoryRequest,omitempty"`

	// DedicatedCPUs asks for exclusive cores: pods in Guaranteed QoS with whole CPUs, which a kubelet
	// with --cpu-manager-policy=static pins, and VMs with dedicatedCpuPlacement, which KubeVirt places
	// only on nodes it labelled cpumanager=true. Each run's status records whether the pinning took
	// effect on every node, and the suite warns where it did not.
	// +optional
	DedicatedCPUs bool `json:"dedicatedCPUs,omitempty"`

	// Disruption decides what a voluntary disruption, a node drain among them, does to a Container
	// or Host run's pods: WaitForRun (the default) gives each such run a PodDisruptionBudget that
	// holds the eviction of its pods until the run ends, at the latest at its deadline, since an
	// eviction mid-run loses the run; Allow lets a drain evict them, and the run fails, named. VM runs
	// are KubeVirt's to protect (spec.platforms[].vm.evictionStrategy). Either way a node of a running
	// run that is cordoned is named in the run's status and a NodeDraining event.
	// +optional
	// +kubebuilder:default=WaitForRun
	Disruption DisruptionPolicy `json:"disruption,omitempty"`
}

// DisruptionPolicy is what a node drain may do to a running Container or Host run.
// +kubebuilder:validation:Enum=WaitForRun;Allow
type DisruptionPolicy string

// The disruption policies.
const (
	DisruptionWaitForRun DisruptionPolicy = "WaitForRun"
	DisruptionAllow      DisruptionPolicy = "Allow"
)

// HoldsDrains reports whether a run's pods are kept from eviction until the run ends; a suite built
// in Go without the field gets the default, as the API server gives it.
func (c ClusterShape) HoldsDrains() bool { return c.Disruption != DisruptionAllow }

// Placement decides where every platform's pods and VMs may run. It is applied to all platforms
// alike, so that the comparison is fair.
type Placement struct {
	// NodeSelector must match a node's labels for the node to host a master or worker.
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.indexOf('/') <= 253 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="every nodeSelector key must be a label name such as vmbench.io/pool: an optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	NodeSelector map[string]LabelValue `json:"nodeSelector,omitempty"`

	// Tolerations let masters and workers run on tainted nodes.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:XValidation:fieldPath=".key",rule="has(self.key) && size(self.key) > 0",message="a toleration without a key tolerates every taint, the control plane's included: set key to the key of the taint to tolerate"
	// +kubebuilder:validation:items:XValidation:fieldPath=".operator",rule="!has(self.operator) || self.operator in ['Exists', 'Equal']",message="set operator to Exists or Equal"
	// +kubebuilder:validation:items:XValidation:fieldPath=".effect",rule="!has(self.effect) || self.effect in ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute']",message="set effect to NoSchedule, PreferNoSchedule or NoExecute, or leave it out to tolerate every effect"
	// +kubebuilder:validation:items:XValidation:fieldPath=".value",rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || size(self.value) == 0",message="operator Exists matches any value: remove value, or set operator to Equal"
	// +kubebuilder:validation:items:XValidation:fieldPath=".tolerationSeconds",rule="!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')",message="tolerationSeconds applies only to effect NoExecute: set effect to NoExecute or remove tolerationSeconds"
	// +listType=atomic
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// LabelValue is the value of a node's label, as a nodeSelector matches it. A type of its own, so that
// the CRD bounds its length: the API server refuses a CEL rule over strings of unknown length.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$')",message="a nodeSelector value must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
type LabelValue string

// NodeSelectorLabels is NodeSelector as a pod's or a VMI's nodeSelector.
func (p Placement) NodeSelectorLabels() map[string]string {
	if len(p.NodeSelector) == 0 {
		return nil
	}
	labels := make(map[string]string, len(p.NodeSelector))
	for k, v := range p.NodeSelector {
		labels[k] = string(v)
	}
	return labels
}

// SharedStorage is the volume that every pod of a Container or Host run mounts, for iozone and fio on
// the Shared target: the NFS share of the hand-built clusters. VM runs do not use it: their master
// VM exports a directory of its disk over NFS to the other VMs.
type SharedStorage struct {
	// StorageClassName is the class of the ReadWriteMany PersistentVolumeClaim made for each run.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="storageClassName must name a StorageClass: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	StorageClassName string `json:"storageClassName"`

	// Size of the claim.
	// +optional
	// +kubebuilder:default="4Gi"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || (quantity(string(self)).isGreaterThan(quantity('0')) && quantity(string(self)).compareTo(quantity('1Ti')) <= 0)",message="set sharedStorage.size above 0 and at most 1Ti"
	Size *resource.Quantity `json:"size,omitempty"`
}

// Requests are the CPU and memory requests of each node: the limits unless lowered.
func (c ClusterShape) Requests() (cpu, memory resource.Quantity) {
	cpu = *resource.NewQuantity(int64(c.CPULimit()), resource.DecimalSI)
	memory = c.MemoryLimit()
	if c.CPURequest != nil {
		cpu = *c.CPURequest
	}
	if c.MemoryRequest != nil {
		memory = *c.MemoryRequest
	}
	return cpu, memory
}

// DefaultMemory is the default memory of every node, as in the seeds' VMs.
var DefaultMemory = resource.MustParse("2Gi")

// MemoryLimit is the memory of each node. The API server fills in the default; a suite built in Go
// without it gets the same default here.
func (c ClusterShape) MemoryLimit() resource.Quantity {
	if c.Memory == nil {
		return DefaultMemory.DeepCopy()
	}
	return c.Memory.DeepCopy()
}

// CPULimit is the CPU count of each node, defaulted like MemoryLimit.
func (c ClusterShape) CPULimit() int32 {
	if c.CPU == 0 {
		return 2
	}
	return c.CPU
}

// NodeCount is the number of nodes of each run, defaulted like MemoryLimit.
func (c ClusterShape) NodeCount() int32 {
	if c.Nodes == 0 {
		return 3
	}
	return c.Nodes
}

// Guaranteed reports whether requests equal limits, the QoS class a fair comparison needs.
func (c ClusterShape) Guaranteed() bool {
	cpu, memory := c.Requests()
	return cpu.Cmp(*resource.NewQuantity(int64(c.CPULimit()), resource.DecimalSI)) == 0 && memory.Cmp(c.MemoryLimit()) == 0
}
