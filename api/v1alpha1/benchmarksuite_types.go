package v1alpha1

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlatformType is the kind of environment a platform runs the benchmarks in.
// +kubebuilder:validation:Enum=Container;VM;Host
type PlatformType string

const (
	// PlatformContainer runs the benchmarks in pods: a Kubeflow MPIJob with a launcher and workers.
	PlatformContainer PlatformType = "Container"
	// PlatformVM runs the benchmarks in KubeVirt VirtualMachineInstances.
	PlatformVM PlatformType = "VM"
	// PlatformHost runs the benchmarks in pods on the host network: the bare baseline.
	PlatformHost PlatformType = "Host"
)

// Platform is one execution path whose results are compared with the others.
// +kubebuilder:validation:XValidation:rule="!has(self.runtimeClassName) || self.type == 'Container'",message="runtimeClassName is only allowed on platforms of type Container; remove it or set type: Container"
// +kubebuilder:validation:XValidation:rule="!has(self.vm) || self.type == 'VM'",message="vm settings are only allowed on platforms of type VM: remove vm or set type: VM"
type Platform struct {
	// Name identifies the platform in status, metrics and child names, for example "vm" or "kata".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9]*$')",message="a platform name is lowercase letters and digits, starting with a letter, without '-': run names are <suite>-<platform>-<repetition>, and with a '-' two suites of a namespace could name a run alike (x-vm with container, x with vm-container)"
	Name string `json:"name"`

	// Type selects how the platform runs: Container, VM or Host.
	// +required
	Type PlatformType `json:"type"`

	// RuntimeClassName runs the platform's pods with this RuntimeClass, for example kata or gvisor.
	// Only for type Container.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="runtimeClassName must name a RuntimeClass: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`

	// VM says how the VMs of a platform of type VM are built: network binding, disk bus and cache,
	// dedicated CPUs, huge pages, IO threads. Left out, or any field of it left out, the VMs are built
	// as by default, so that two VM platforms of one suite, one with settings and one without, show
	// what the settings change against the same baseline. Only for type VM.
	// +optional
	VM *VMSettings `json:"vm,omitempty"`
}

// ClusterShape is the size of the small cluster that every platform builds for a run: one master and
// Nodes-1 workers, each with the same CPU and memory.
// Requests above limits are refused by the controller (InvalidSpec): a CEL rule over two
// int-or-string quantities exceeds the API server's cost budget.
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
}

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
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
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

// BenchmarkSuiteSpec says which benchmarks to run, on which platforms, how often and where.
// +kubebuilder:validation:XValidation:rule="self.platforms.exists(p, p.name == self.baseline)",message="spec.baseline must name one of spec.platforms"
// +kubebuilder:validation:XValidation:rule="self.cluster.nodes >= 2 || self.benchmarks.all(b, b.type != 'iperf3' && b.type != 'ping' && b.type != 'netperf' && b.type != 'netcat')",message="iperf3, ping, netperf and netcat measure between nodes: set spec.cluster.nodes to 2 or more, or remove those benchmarks"
// +kubebuilder:validation:XValidation:rule="self.cluster.nodes >= 3 || self.benchmarks.all(b, (!has(b.iperf3) || !b.iperf3.pairs.exists(p, p == 'node-node')) && (!has(b.ping) || !b.ping.pairs.exists(p, p == 'node-node')) && (!has(b.netperf) || !b.netperf.pairs.exists(p, p == 'node-node')) && (!has(b.netcat) || !b.netcat.pairs.exists(p, p == 'node-node')))",message="the node-node pair needs two workers: set spec.cluster.nodes to 3 or more, or list only master-node and node-master in pairs"
// +kubebuilder:validation:XValidation:rule="has(self.sharedStorage) || self.platforms.all(p, p.type == 'VM') || self.benchmarks.all(b, (!has(b.iozone) || !b.iozone.targets.exists(t, t == 'Shared')) && (!has(b.fio) || b.fio.target != 'Shared'))",message="a benchmark uses the Shared storage target, which pods of Container and Host platforms mount as a ReadWriteMany volume: set spec.sharedStorage.storageClassName to a ReadWriteMany storage class, or use the Local or RootFS target (VM platforms need no storage class: their master VM exports its disk over NFS)"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || self.repetitions >= 2",message="spec.precision needs spec.repetitions of 2 or more, the minimum number of repetitions: one repetition has no confidence interval"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || self.precision.maxRepetitions >= self.repetitions",message="spec.precision.maxRepetitions must be at least spec.repetitions, the minimum: raise maxRepetitions or lower repetitions"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || self.precision.metrics.all(m, self.benchmarks.exists(b, m == b.name || m.startsWith(b.name + '/')))",message="every spec.precision.metrics entry must be a benchmark's name, or a benchmark's name, '/' and one of its metrics (for example hpl/HPL_Tflops): name a benchmark of spec.benchmarks"
// +kubebuilder:validation:XValidation:rule="self.benchmarks.all(b, !has(b.hpcc) || !has(b.hpcc.p) || !has(b.hpcc.q) || b.hpcc.p * b.hpcc.q == (has(b.hpcc.ranksPerNode) ? b.hpcc.ranksPerNode : self.cluster.cpu) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes))",message="hpcc p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers): change hpcc.p and hpcc.q, or leave both out for the squarest grid"
// +kubebuilder:validation:XValidation:rule="self.benchmarks.all(b, !has(b.hpcc) || !has(b.hpcc.grids) || b.hpcc.grids.all(g, g.p * g.q == (has(b.hpcc.ranksPerNode) ? b.hpcc.ranksPerNode : self.cluster.cpu) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes)))",message="every hpcc.grids entry's p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers): HPCC runs its built-in defaults instead of the file when a grid needs more ranks, and leaves ranks idle when it needs fewer; change the grids"
// +kubebuilder:validation:XValidation:rule="self.cluster.nodes >= 2 || self.benchmarks.all(b, !has(b.hpcc) || !has(b.hpcc.nodes) || b.hpcc.nodes != 'Workers')",message="hpcc.nodes Workers runs HPCC on every node but the master, and a cluster of 1 node has no other: set spec.cluster.nodes to 2 or more, or set hpcc.nodes to All"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.platforms.all(p, !has(p.vm) || !has(p.vm.isolateEmulatorThread) || !p.vm.isolateEmulatorThread || (has(p.vm.dedicatedCPUs) && p.vm.dedicatedCPUs) || (has(self.cluster.dedicatedCPUs) && self.cluster.dedicatedCPUs))",message="vm.isolateEmulatorThread needs dedicated CPUs, as KubeVirt puts the emulator thread on a host CPU of its own next to the pinned vCPUs: set vm.dedicatedCPUs (or cluster.dedicatedCPUs) to true, or remove isolateEmulatorThread"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.platforms.all(p, !has(p.vm) || !has(p.vm.dedicatedCPUs) || !p.vm.dedicatedCPUs || (!has(self.cluster.cpuRequest) && !has(self.cluster.memoryRequest)))",message="vm.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or remove vm.dedicatedCPUs"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.platforms.all(p, !has(p.vm) || !has(p.vm.hugepages) || !has(self.cluster.memory) || !isQuantity(string(self.cluster.memory)) || (quantity(string(self.cluster.memory)).isInteger() && quantity(string(self.cluster.memory)).asInteger() % (p.vm.hugepages == '1Gi' ? 1073741824 : 2097152) == 0))",message="vm.hugepages backs the whole guest memory with pages of that size, so cluster.memory must be a multiple of it: set cluster.memory to a multiple of the page size, for example 2Gi"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.cluster.nodes < 2 || self.benchmarks.all(b, b.type != 'hpcc') || self.platforms.all(p, !has(p.vm) || !has(p.vm.networkBinding) || p.vm.networkBinding != 'Masquerade')",message="vm.networkBinding Masquerade hides every VM behind 10.0.2.2, so HPCC's MPI ranks cannot reach each other across VMs: use Bridge or Passt, or remove the hpcc benchmarks"
type BenchmarkSuiteSpec struct {
	// Platforms lists the execution paths to compare. The default is a container platform and a VM
	// platform, the comparison the seeds made by hand.
	// +optional
	// +kubebuilder:default={{name: container, type: Container}, {name: vm, type: VM}}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=name
	Platforms []Platform `json:"platforms,omitempty"`

	// Baseline names the platform that the other platforms' results are divided by.
	// +optional
	// +kubebuilder:default=container
	// +kubebuilder:validation:MaxLength=12
	Baseline string `json:"baseline,omitempty"`

	// Cluster is the shape of the cluster built for each run, the same on every platform.
	// +optional
	// +kubebuilder:default={}
	Cluster ClusterShape `json:"cluster,omitempty"`

	// Benchmarks run in this order in every run.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=12
	// +listType=map
	// +listMapKey=name
	Benchmarks []Benchmark `json:"benchmarks"`

	// Repetitions is how many times every benchmark runs on every platform. Runs alternate between
	// platforms, so that drift in the host affects all platforms alike. With spec.precision it is the
	// minimum, and at least 2.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	Repetitions int32 `json:"repetitions,omitempty"`

	// Precision, when set, makes spec.repetitions the minimum: once every planned run succeeded, the
	// suite plans one more repetition of every platform (interleaved as before) while any named
	// metric's 95% confidence interval is wider than the target on any platform, up to
	// precision.maxRepetitions. The PrecisionReached condition says how it ended.
	// +optional
	Precision *PrecisionSpec `json:"precision,omitempty"`

	// Placement applies to every platform's pods and VMs.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// SharedStorage is required when a benchmark uses the Shared storage target and a platform of
	// type Container or Host runs it; VM platforms share their master VM's disk over NFS instead.
	// +optional
	SharedStorage *SharedStorage `json:"sharedStorage,omitempty"`

	// Timeout bounds the whole suite. When it passes, the running run is stopped and the suite fails.
	// +optional
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1m') && duration(self) <= duration('720h'))",message="set spec.timeout between 1m and 720h (30 days)"
	Timeout *Duration `json:"timeout,omitempty"`

	// Report sets how `vmbench report` judges this suite's results.
	// +optional
	Report *ReportSpec `json:"report,omitempty"`
}

// PrecisionSpec is a precision target that repetitions go on until.
type PrecisionSpec struct {
	// HalfWidthPercent is the target half-width of the 95% confidence interval of a metric's mean,
	// in percent of the mean. The interval is over repetition means, as in the report: the nodes of
	// one run are not independent.
	// +required
	// +kubebuilder:validation:XValidation:rule="self >= 0.5 && self <= 50.0",message="set spec.precision.halfWidthPercent between 0.5 and 50"
	HalfWidthPercent float64 `json:"halfWidthPercent"`

	// MaxRepetitions caps the repetitions of every platform. The suite still completes there, with
	// PrecisionReached False naming the metrics above the target.
	// +required
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=30
	MaxRepetitions int32 `json:"maxRepetitions"`

	// Metrics names what must reach the target: a benchmark's name (every metric it measures) or
	// "<benchmark>/<metric>", with the metric's name as status.results shows it.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=12
	// +kubebuilder:validation:items:MaxLength=89
	// +listType=set
	Metrics []string `json:"metrics"`
}

// ReportSpec sets how the report judges the results.
type ReportSpec struct {
	// TolerancePercent is the band around a ratio of 1, in percent, inside which a metric whose whole
	// 95% interval falls counts as equivalent. `vmbench report --tolerance` overrides it.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:XValidation:rule="self >= 0.0 && self <= 50.0",message="set spec.report.tolerancePercent between 0 and 50"
	TolerancePercent *float64 `json:"tolerancePercent,omitempty"`
}

// SuitePhase is a one-word summary of the conditions, for kubectl get.
// +kubebuilder:validation:Enum=Pending;Running;Complete;Failed
type SuitePhase string

const (
	SuitePending  SuitePhase = "Pending"
	SuiteRunning  SuitePhase = "Running"
	SuiteComplete SuitePhase = "Complete"
	SuiteFailed   SuitePhase = "Failed"
)

// RunPhase is where one run (one platform, one repetition) stands.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type RunPhase string

const (
	RunPending   RunPhase = "Pending"
	RunRunning   RunPhase = "Running"
	RunSucceeded RunPhase = "Succeeded"
	RunFailed    RunPhase = "Failed"
)

// Accelerator says how a VM's CPU was provided.
// +kubebuilder:validation:Enum=KVM;Emulation
type Accelerator string

const (
	// AcceleratorKVM is hardware virtualisation: VM figures measure VM overhead.
	AcceleratorKVM Accelerator = "KVM"
	// AcceleratorEmulation is QEMU software emulation (TCG): VM figures are not representative of VM
	// overhead.
	AcceleratorEmulation Accelerator = "Emulation"
)

// NodeTiming is a duration measured on one node of a run.
type NodeTiming struct {
	// Node is the node's name in the run: master, node01, ...
	// +required
	// +kubebuilder:validation:MaxLength=16
	Node string `json:"node"`

	// Seconds is the duration.
	// +required
	Seconds float64 `json:"seconds"`
}

// RunStatus is one run: one platform's cluster running every benchmark once.
type RunStatus struct {
	// Name is the run's name, which is also the name of its child objects.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// Platform is the platform name.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// Repetition counts from 1.
	// +required
	Repetition int32 `json:"repetition"`

	// Phase of the run.
	// +required
	Phase RunPhase `json:"phase"`

	// StartTime is when the controller first tried to create the run's children; the run's startup
	// limit and deadline count from it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// EndTime is when the controller saw the run end (or its deadline pass) and began to collect its
	// results; a log that cannot be read yet is read again for a while after it.
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// CompletionTime is when the run's results were collected.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Message says why a run failed, or which benchmarks of it failed; while the run starts or is
	// collected, what holds it up.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`

	// Accelerator is set for VM runs: KVM, or Emulation when the VMs ran under software emulation.
	// +optional
	Accelerator Accelerator `json:"accelerator,omitempty"`

	// Network is set for VM runs: the KubeVirt interface binding their VMs used (bridge or passt give
	// each guest its pod's address; masquerade hides every guest behind 10.0.2.2, so MPI across VMs
	// cannot work).
	// +optional
	// +kubebuilder:validation:Enum=bridge;passt;masquerade
	Network string `json:"network,omitempty"`

	// BootSeconds is, per VM, the time from the VMI's creation to the runner's start inside it.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=node
	BootSeconds []NodeTiming `json:"bootSeconds,omitempty"`

	// OrchestrationSeconds is the run's wall time minus the time the benchmarks themselves took:
	// scheduling, image start, boot and result collection.
	// +optional
	OrchestrationSeconds *float64 `json:"orchestrationSeconds,omitempty"`

	// StartupSeconds is the time to workload: when the run's members reached each phase of their
	// start, counted from StartTime, the slowest member for each.
	// +optional
	StartupSeconds *RunStartup `json:"startupSeconds,omitempty"`

	// LauncherOverhead is set for VM runs: what Kubernetes reserved for a VM beyond its guest, the
	// virt-launcher pod's requests minus the VMI's, the largest of the run's VMs.
	// +optional
	LauncherOverhead *ResourceOverhead `json:"launcherOverhead,omitempty"`

	// Noise is, per node, what the rest of the node did while the run's benchmarks ran on it.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=node
	Noise []NodeNoise `json:"noise,omitempty"`

	// CPUs is, per node, the CPUs the run's processes were allowed on, and whether they were pinned.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=node
	CPUs []NodeCPUs `json:"cpus,omitempty"`

	// Compacted is set when the run's per-node lists (noise, cpus, bootSeconds) were dropped and its
	// message cut to 256 characters to keep the status within its size budget, oldest runs first; it
	// keeps what the lists said in short, and status.warnings says that runs were compacted.
	// +optional
	Compacted *RunSummary `json:"compacted,omitempty"`
}

// RunSummary is what a run's per-node lists said, kept when the lists themselves were dropped.
type RunSummary struct {
	// Nodes is the number of nodes the lists covered.
	// +required
	// +kubebuilder:validation:Minimum=0
	Nodes int32 `json:"nodes"`

	// MaxNoisePercent is the noisiest node's maxPercent; absent when no noise was sampled.
	// +optional
	MaxNoisePercent *float64 `json:"maxNoisePercent,omitempty"`

	// MaxBootSeconds is the slowest VM's boot time; absent when none was measured (container runs).
	// +optional
	MaxBootSeconds *float64 `json:"maxBootSeconds,omitempty"`

	// Unpinned names the nodes whose CPUs were not pinned; empty when every node whose CPUs were
	// seen was pinned.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=16
	// +listType=atomic
	Unpinned []string `json:"unpinned,omitempty"`
}

// RunStartup holds the phases of a run's start, each in seconds from the run's StartTime (when the
// controller first created its children) to the moment the last of its members reached the phase,
// as the controller saw it in their status while the run went on. A phase that was never seen is
// absent. Container runs have the pod phases, VM runs the VMI phases (named as in kube-burner's
// vmiLatency); both have runnerReady.
type RunStartup struct {
	// PodsScheduled is when the last of the run's pods was bound to a node (its PodScheduled
	// condition).
	// +optional
	PodsScheduled *float64 `json:"podsScheduled,omitempty"`

	// SandboxesReady is when the last pod's sandbox and network were up (its
	// PodReadyToStartContainers condition, on clusters that report it). The time from it to
	// ContainersStarted is mostly the image pull.
	// +optional
	SandboxesReady *float64 `json:"sandboxesReady,omitempty"`

	// ContainersStarted is when the last container of the run's pods started (its startedAt).
	// +optional
	ContainersStarted *float64 `json:"containersStarted,omitempty"`

	// VMIScheduled is when the last VMI entered phase Scheduled: its virt-launcher pod was bound
	// and running.
	// +optional
	VMIScheduled *float64 `json:"vmiScheduled,omitempty"`

	// VMIRunning is when the last VMI entered phase Running: its guest was started.
	// +optional
	VMIRunning *float64 `json:"vmiRunning,omitempty"`

	// RunnerReady is when the runner had reached every node and was about to start the first
	// benchmark, by the runner's clock.
	// +optional
	RunnerReady *float64 `json:"runnerReady,omitempty"`
}

// ResourceOverhead is what a VM's pod asks the scheduler for beyond what its guest was given.
type ResourceOverhead struct {
	// CPU is the virt-launcher pod's CPU requests minus the guest's.
	// +required
	CPU resource.Quantity `json:"cpu"`

	// Memory is the virt-launcher pod's memory requests minus the guest's.
	// +required
	Memory resource.Quantity `json:"memory"`
}

// NodeNoise sums up the noise of one node of a run over the executions sampled on it. Percentages
// are of the node's whole CPU time.
type NodeNoise struct {
	// Node is the node's name in the run: master, node01, ...
	// +required
	// +kubebuilder:validation:MaxLength=16
	Node string `json:"node"`

	// OthersPercent is the mean CPU time used by everything outside the benchmark's own container
	// (the host's busy time from /proc/stat less the container's cgroup usage). Pods only: a VM's
	// guest cannot see its host, so VMs show their host's load as steal.
	// +optional
	OthersPercent *float64 `json:"othersPercent,omitempty"`

	// StealPercent is the mean time the node's CPUs waited for the hypervisor.
	// +required
	StealPercent float64 `json:"stealPercent"`

	// MaxPercent is the noisiest execution's noise: others plus steal in pods, steal in VMs.
	// +required
	MaxPercent float64 `json:"maxPercent"`

	// Samples is the number of executions sampled.
	// +required
	Samples int32 `json:"samples"`
}

// NodeCPUs is what one node of a run saw of its CPUs.
type NodeCPUs struct {
	// Node is the node's name in the run: master, node01, ...
	// +required
	// +kubebuilder:validation:MaxLength=16
	Node string `json:"node"`

	// Allowed is the CPU list the runner's processes could run on (Cpus_allowed_list), e.g. "2-3".
	// +required
	// +kubebuilder:validation:MaxLength=64
	Allowed string `json:"allowed"`

	// Online is the number of CPUs the node had online.
	// +required
	Online int32 `json:"online"`

	// Pinned says that the node had exclusive CPUs: in a pod, exactly cluster.cpu CPUs out of more
	// online; in a VM, dedicatedCpuPlacement, which KubeVirt grants only on a static CPU manager node
	// (the guest cannot see its host's CPUs).
	// +required
	Pinned bool `json:"pinned"`
}

// Direction says which way a metric improves.
// +kubebuilder:validation:Enum=HigherIsBetter;LowerIsBetter
type Direction string

const (
	HigherIsBetter Direction = "HigherIsBetter"
	LowerIsBetter  Direction = "LowerIsBetter"
)

// Sample is one measured value.
type Sample struct {
	// Repetition is the run's repetition number.
	// +required
	Repetition int32 `json:"repetition"`

	// Node is where the value was measured: a node name (master, node01), or a pair for network
	// benchmarks (master-node01).
	// +required
	// +kubebuilder:validation:MaxLength=40
	Node string `json:"node"`

	// Value is the measured value, in the metric's unit.
	// +required
	Value float64 `json:"value"`

	// Noise is the node's noise while the value was measured, in percent of its CPU: CPU used by
	// others plus steal in pods, steal in VMs. Absent where it was not sampled.
	// +optional
	Noise *float64 `json:"noise,omitempty"`
}

// MetricSummary holds every sample of one metric of one benchmark on one platform, and their
// statistics.
type MetricSummary struct {
	// Name is the metric's name, as the parser of the tool reports it.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// Unit of every value, for example "Gflop/s" or "ms".
	// +required
	// +kubebuilder:validation:MaxLength=16
	Unit string `json:"unit"`

	// Direction says whether higher or lower values are better.
	// +required
	Direction Direction `json:"direction"`

	// Samples are the measured values.
	// +optional
	// +kubebuilder:validation:MaxItems=100
	// +listType=atomic
	Samples []Sample `json:"samples,omitempty"`

	// N is the number of samples, serialized as count (a bare "n" is a boolean in YAML 1.1).
	// +required
	N int32 `json:"count"`

	// Mean of the samples.
	// +required
	Mean float64 `json:"mean"`

	// StdDev is the sample standard deviation; 0 for a single sample.
	// +required
	StdDev float64 `json:"stddev"`
}

// BenchmarkResult is everything one benchmark measured on one platform.
type BenchmarkResult struct {
	// Benchmark is the benchmark's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=24
	Benchmark string `json:"benchmark"`

	// Platform is the platform's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// Emulated is true when any of these values came from VMs under software emulation: they do not
	// measure VM overhead.
	// +optional
	Emulated bool `json:"emulated,omitempty"`

	// Concurrent is true when the values were measured on all nodes at once (the benchmark's
	// concurrency AllNodes): each node's value includes the contention of the other nodes.
	// +optional
	Concurrent bool `json:"concurrent,omitempty"`

	// Failures counts the executions of this benchmark that failed.
	// +optional
	Failures int32 `json:"failures,omitempty"`

	// LastError is the cause of the latest failure.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	LastError string `json:"lastError,omitempty"`

	// Metrics are the parsed results, one entry per metric name.
	// +optional
	// +kubebuilder:validation:MaxItems=48
	// +listType=atomic
	Metrics []MetricSummary `json:"metrics,omitempty"`

	// Tables counts the full result tables of this benchmark that were kept, one per execution: an
	// iozone auto-mode table, an iperf3 time series. They are too large for status and live in the
	// ConfigMaps labelled vmbench.io/tables-of=<run>, where vmbench report reads them.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Tables int32 `json:"tables,omitempty"`

	// TablesLost counts the tables that could not be kept, as a run's ConfigMaps were full;
	// status.warnings says so. The figures in Metrics are complete either way.
	// +optional
	// +kubebuilder:validation:Minimum=0
	TablesLost int32 `json:"tablesLost,omitempty"`
}

// RatioValue compares one metric of a platform with the same metric on the baseline platform.
type RatioValue struct {
	// Metric is the metric's name.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Metric string `json:"metric"`

	// Ratio is the platform's mean divided by the baseline's mean.
	// +required
	Ratio float64 `json:"ratio"`

	// OverheadPercent is how much worse the platform is than the baseline, in percent, whichever way
	// the metric improves; negative when the platform is better.
	// +required
	OverheadPercent float64 `json:"overheadPercent"`
}

// PlatformRatios compares one benchmark on one platform with the baseline platform.
type PlatformRatios struct {
	// Benchmark is the benchmark's name.
	// +required
	// +kubebuilder:validation:MaxLength=24
	Benchmark string `json:"benchmark"`

	// Platform is the platform divided by the baseline.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// Emulated is true when the platform's values came from emulated VMs.
	// +optional
	Emulated bool `json:"emulated,omitempty"`

	// Metrics are the ratios, one per metric measured on both platforms.
	// +optional
	// +kubebuilder:validation:MaxItems=48
	// +listType=atomic
	Metrics []RatioValue `json:"metrics,omitempty"`
}

// Headline is the one ratio that kubectl get shows.
type Headline struct {
	// Benchmark is the benchmark the headline comes from: the first one with results on both the
	// baseline and another platform.
	// +required
	// +kubebuilder:validation:MaxLength=24
	Benchmark string `json:"benchmark"`

	// Metric is that benchmark's headline metric.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Metric string `json:"metric"`

	// Summary reads like "vm/container 0.93" and ends in "(emulated)" when the VM figures came from
	// software emulation.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Summary string `json:"summary"`
}

// PrecisionStatus is how many repetitions a suite with spec.precision plans, and the precision each
// platform reached.
type PrecisionStatus struct {
	// Repetitions is the number of repetitions planned now: spec.repetitions at first, one more
	// each time every planned run succeeded with some named metric above the target, up to
	// spec.precision.maxRepetitions.
	// +required
	// +kubebuilder:validation:Minimum=1
	Repetitions int32 `json:"repetitions"`

	// Platforms says, per platform, the precision its finished repetitions reached.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=platform
	Platforms []PlatformPrecision `json:"platforms,omitempty"`
}

// PlatformPrecision is the precision that one platform's finished repetitions reached.
type PlatformPrecision struct {
	// Platform is the platform's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// Repetitions counts the platform's succeeded repetitions.
	// +required
	Repetitions int32 `json:"repetitions"`

	// Metric is the named metric furthest from the target, as "<benchmark>/<metric>".
	// +optional
	// +kubebuilder:validation:MaxLength=89
	Metric string `json:"metric,omitempty"`

	// HalfWidthPercent is that metric's 95% confidence half-width in percent of its mean; absent
	// when it has none (fewer than two repetitions, no results, or a mean of 0 with spread).
	// +optional
	HalfWidthPercent *float64 `json:"halfWidthPercent,omitempty"`

	// Reached is true when every named metric of this platform is within the target.
	// +required
	Reached bool `json:"reached"`
}

// PlatformSharedStorage is what backed the Shared storage target on one platform, as its latest run
// that used it recorded it.
type PlatformSharedStorage struct {
	// Platform is the platform's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// BackedBy is the claim and its storage class in pods, the master VM's NFS server in VMs, and
	// how the nodes had it mounted, with the run's own name written <run>, for example "NFSv4.2
	// export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1), mounted as nfs4
	// master.<run>.bench.svc:/srv/vmbench-shared".
	// +required
	// +kubebuilder:validation:MaxLength=256
	BackedBy string `json:"backedBy"`

	// Run is the run that recorded it.
	// +required
	// +kubebuilder:validation:MaxLength=63
	Run string `json:"run"`
}

// BenchmarkSuiteStatus is what the suite has done and measured so far.
type BenchmarkSuiteStatus struct {
	// ObservedGeneration is the generation that the last error-free reconcile saw.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Queued, Progressing, Complete, Failed and RunsFailed, and PrecisionReached
	// with spec.precision.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Phase summarises the conditions.
	// +optional
	Phase SuitePhase `json:"phase,omitempty"`

	// Progress reads "finished/total" runs.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Progress string `json:"progress,omitempty"`

	// StartTime is when the suite was admitted to run: when it took one of the cluster's run slots
	// (the manager's --max-active-runs) after waiting its turn. spec.timeout counts from it; time
	// spent queued does not.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// QueuePosition is the suite's place in the line of suites waiting for a run slot, from 1 (next);
	// empty once the suite was admitted, or when it does not wait. The Queued condition says who runs
	// now and what to do if this suite must go first.
	// +optional
	// +kubebuilder:validation:Minimum=0
	QueuePosition int32 `json:"queuePosition,omitempty"`

	// CompletionTime is when the suite ended, complete or failed.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`

	// Runs lists every run in execution order: at most 4 platforms times 30 repetitions.
	// +optional
	// +kubebuilder:validation:MaxItems=120
	// +listType=map
	// +listMapKey=name
	Runs []RunStatus `json:"runs,omitempty"`

	// Results holds the parsed metrics per benchmark and platform, one entry per pair. They are the one
	// part of status that cannot be derived again, so they are written before the children that
	// produced them are deleted. Only the controller writes them, so the list is atomic: a keyed list
	// would add a managedFields entry per metric and double the object's size.
	// +optional
	// +kubebuilder:validation:MaxItems=48
	// +listType=atomic
	Results []BenchmarkResult `json:"results,omitempty"`

	// Ratios compare every other platform with the baseline, benchmark by benchmark.
	// +optional
	// +kubebuilder:validation:MaxItems=36
	// +listType=atomic
	Ratios []PlatformRatios `json:"ratios,omitempty"`

	// Headline is the ratio shown by kubectl get.
	// +optional
	Headline *Headline `json:"headline,omitempty"`

	// Precision is where a suite with spec.precision stands against its target.
	// +optional
	Precision *PrecisionStatus `json:"precision,omitempty"`

	// VMSettings says, per VM platform, how its VMs were built, as read back from a VMI of its latest
	// run: what a platform such as "vmtuned" meant.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=platform
	VMSettings []VMSettingsStatus `json:"vmSettings,omitempty"`

	// SharedStorage says, per platform whose runs used the Shared storage target, what backed it.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=platform
	SharedStorage []PlatformSharedStorage `json:"sharedStorage,omitempty"`

	// Warnings are facts that make the comparison less fair than it should be, for example
	// requests below limits or emulated VMs.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`
}

// BenchmarkSuite runs the same benchmarks in containers and in virtual machines on one cluster and
// compares the results.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=suite;suites,categories=vmbench
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Queue",type=integer,JSONPath=`.status.queuePosition`,description="Place in the line of suites waiting for a run slot, from 1"
// +kubebuilder:printcolumn:name="Benchmark",type=string,JSONPath=`.status.headline.benchmark`,priority=1
// +kubebuilder:printcolumn:name="Metric",type=string,JSONPath=`.status.headline.metric`
// +kubebuilder:printcolumn:name="Ratio",type=string,JSONPath=`.status.headline.summary`
// +kubebuilder:printcolumn:name="Precision",type=string,JSONPath=`.status.conditions[?(@.type=="PrecisionReached")].reason`,priority=1,description="With spec.precision: Measuring, TargetReached, MaxRepetitionsReached or NotMeasured"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || (self.spec.platforms == oldSelf.spec.platforms && self.spec.benchmarks == oldSelf.spec.benchmarks && self.spec.cluster == oldSelf.spec.cluster && self.spec.repetitions == oldSelf.spec.repetitions && has(self.spec.precision) == has(oldSelf.spec.precision) && (!has(self.spec.precision) || self.spec.precision == oldSelf.spec.precision))",message="spec.platforms, benchmarks, cluster, repetitions and precision cannot change once the first run has started: the results would mix two experiments; create a new BenchmarkSuite instead"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label, because it names the suite's Services and MPIJobs: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 30",message="metadata.name must be at most 30 characters, so that the names of the suite's pods and VMs stay valid DNS labels"
type BenchmarkSuite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to run.
	// +required
	Spec BenchmarkSuiteSpec `json:"spec"`

	// Status is what ran and what it measured.
	// +optional
	Status BenchmarkSuiteStatus `json:"status,omitempty"`
}

// BenchmarkSuiteList is a list of BenchmarkSuites.
// +kubebuilder:object:root=true
type BenchmarkSuiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSuite `json:"items"`
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

// SuiteTimeout bounds the whole suite, defaulted like ClusterShape.MemoryLimit.
func (s BenchmarkSuiteSpec) SuiteTimeout() time.Duration {
	if s.Timeout == nil {
		return 6 * time.Hour
	}
	return s.Timeout.Duration()
}

// Guaranteed reports whether requests equal limits, the QoS class a fair comparison needs.
func (c ClusterShape) Guaranteed() bool {
	cpu, memory := c.Requests()
	return cpu.Cmp(*resource.NewQuantity(int64(c.CPULimit()), resource.DecimalSI)) == 0 && memory.Cmp(c.MemoryLimit()) == 0
}
