package v1alpha1

import "slices"

// BenchmarkType names a tool and what it measures.
// +kubebuilder:validation:Enum=hpcc;sysbench-cpu;sysbench-memory;stress-ng-cpu;stress-ng-vm;iozone;iperf3;ping;fio;netperf;netcat
type BenchmarkType string

const (
	BenchmarkHPCC           BenchmarkType = "hpcc"
	BenchmarkSysbenchCPU    BenchmarkType = "sysbench-cpu"
	BenchmarkSysbenchMemory BenchmarkType = "sysbench-memory"
	BenchmarkStressNGCPU    BenchmarkType = "stress-ng-cpu"
	BenchmarkStressNGVM     BenchmarkType = "stress-ng-vm"
	BenchmarkIozone         BenchmarkType = "iozone"
	BenchmarkIperf3         BenchmarkType = "iperf3"
	BenchmarkPing           BenchmarkType = "ping"
	BenchmarkFio            BenchmarkType = "fio"
	BenchmarkNetperf        BenchmarkType = "netperf"
	BenchmarkNetcat         BenchmarkType = "netcat"
)

// Concurrency says whether a per-node tool runs on one node after the other or on all nodes at once.
// +kubebuilder:validation:Enum=OneNodeAtATime;AllNodes
type Concurrency string

const (
	// ConcurrencyOneNodeAtATime runs the tool on each node alone, so that the nodes of a run, which
	// may share the host's CPUs, do not disturb each other.
	ConcurrencyOneNodeAtATime Concurrency = "OneNodeAtATime"
	// ConcurrencyAllNodes starts the tool on every node at the same moment, to measure the nodes
	// contending for the host, as `mpirun -np <nodes> sysbench ...` does.
	ConcurrencyAllNodes Concurrency = "AllNodes"
)

// RunsPerNode says whether a benchmark of type t runs on each node by itself, which is what
// ConcurrencyAllNodes needs: hpcc spans all nodes at once already, and iperf3 and ping measure
// pairs of nodes.
func (t BenchmarkType) RunsPerNode() bool {
	switch t {
	case BenchmarkSysbenchCPU, BenchmarkSysbenchMemory, BenchmarkStressNGCPU, BenchmarkStressNGVM, BenchmarkIozone, BenchmarkFio:
		return true
	}
	return false
}

// Benchmark is one tool with its parameters. Only the parameter block that matches Type may be set;
// when it is left out, every parameter takes its default.
// +kubebuilder:validation:XValidation:rule="!has(self.hpcc) || self.type == 'hpcc'",message="hpcc parameters need type: hpcc"
// +kubebuilder:validation:XValidation:rule="!has(self.sysbenchCPU) || self.type == 'sysbench-cpu'",message="sysbenchCPU parameters need type: sysbench-cpu"
// +kubebuilder:validation:XValidation:rule="!has(self.sysbenchMemory) || self.type == 'sysbench-memory'",message="sysbenchMemory parameters need type: sysbench-memory"
// +kubebuilder:validation:XValidation:rule="!has(self.stressNGCPU) || self.type == 'stress-ng-cpu'",message="stressNGCPU parameters need type: stress-ng-cpu"
// +kubebuilder:validation:XValidation:rule="!has(self.stressNGVM) || self.type == 'stress-ng-vm'",message="stressNGVM parameters need type: stress-ng-vm"
// +kubebuilder:validation:XValidation:rule="!has(self.iozone) || self.type == 'iozone'",message="iozone parameters need type: iozone"
// +kubebuilder:validation:XValidation:rule="!has(self.iperf3) || self.type == 'iperf3'",message="iperf3 parameters need type: iperf3"
// +kubebuilder:validation:XValidation:rule="!has(self.ping) || self.type == 'ping'",message="ping parameters need type: ping"
// +kubebuilder:validation:XValidation:rule="!has(self.fio) || self.type == 'fio'",message="fio parameters need type: fio"
// +kubebuilder:validation:XValidation:rule="!has(self.netperf) || self.type == 'netperf'",message="netperf parameters need type: netperf"
// +kubebuilder:validation:XValidation:rule="!has(self.netcat) || self.type == 'netcat'",message="netcat parameters need type: netcat"
// +kubebuilder:validation:XValidation:fieldPath=".concurrency",rule="!has(self.concurrency) || self.concurrency != 'AllNodes' || !(self.type in ['hpcc', 'iperf3', 'ping', 'netperf', 'netcat'])",message="concurrency AllNodes needs a tool that runs on each node by itself (sysbench-cpu, sysbench-memory, stress-ng-cpu, stress-ng-vm, iozone, fio): hpcc already spans all nodes and iperf3, ping, netperf and netcat measure pairs of nodes; remove concurrency or set it to OneNodeAtATime"
// +kubebuilder:validation:XValidation:fieldPath=".sysbenchCPU.duration",rule="!has(self.sysbenchCPU) || !has(self.sysbenchCPU.duration) || !has(self.timeout) || !self.sysbenchCPU.duration.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || !self.timeout.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self.sysbenchCPU.duration) < duration(self.timeout)",message="sysbenchCPU.duration must be shorter than the benchmark's timeout, which bounds each execution: lower sysbenchCPU.duration or raise timeout"
// +kubebuilder:validation:XValidation:fieldPath=".stressNGCPU.duration",rule="!has(self.stressNGCPU) || !has(self.stressNGCPU.duration) || !has(self.timeout) || !self.stressNGCPU.duration.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || !self.timeout.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self.stressNGCPU.duration) < duration(self.timeout)",message="stressNGCPU.duration must be shorter than the benchmark's timeout, which bounds each execution: lower stressNGCPU.duration or raise timeout"
// +kubebuilder:validation:XValidation:fieldPath=".stressNGVM.duration",rule="!has(self.stressNGVM) || !has(self.stressNGVM.duration) || !has(self.timeout) || !self.stressNGVM.duration.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || !self.timeout.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self.stressNGVM.duration) < duration(self.timeout)",message="stressNGVM.duration must be shorter than the benchmark's timeout, which bounds each execution: lower stressNGVM.duration or raise timeout"
// +kubebuilder:validation:XValidation:fieldPath=".iperf3.duration",rule="!has(self.iperf3) || !has(self.iperf3.duration) || !has(self.timeout) || !self.iperf3.duration.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || !self.timeout.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self.iperf3.duration) < duration(self.timeout)",message="iperf3.duration must be shorter than the benchmark's timeout, which bounds each execution: lower iperf3.duration or raise timeout"
// +kubebuilder:validation:XValidation:fieldPath=".fio.runtime",rule="!has(self.fio) || !has(self.fio.runtime) || !has(self.timeout) || !self.fio.runtime.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || !self.timeout.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self.fio.runtime) < duration(self.timeout)",message="fio.runtime must be shorter than the benchmark's timeout, which bounds each execution: lower fio.runtime or raise timeout"
// +kubebuilder:validation:XValidation:fieldPath=".netperf.duration",rule="!has(self.netperf) || !has(self.netperf.duration) || !has(self.timeout) || !self.netperf.duration.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || !self.timeout.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self.netperf.duration) < duration(self.timeout)",message="netperf.duration must be shorter than the benchmark's timeout, which bounds each execution: lower netperf.duration or raise timeout"
type Benchmark struct {
	// Name identifies the benchmark in status and metrics, for example "hpcc" or "fio-randread".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=24
	// +kubebuilder:validation:Pattern=`^[a-z]([a-z0-9-]*[a-z0-9])?$`
	Name string `json:"name"`

	// Type selects the tool.
	// +required
	Type BenchmarkType `json:"type"`

	// Timeout bounds one execution of this benchmark on one node (or pair of nodes); an execution that
	// runs longer is stopped and counted as a failure.
	// +optional
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('10s') && duration(self) <= duration('24h'))",message="set timeout between 10s and 24h, the longest one execution of this benchmark may take"
	Timeout *Duration `json:"timeout,omitempty"`

	// Concurrency is OneNodeAtATime (the tool runs on each node alone, one node after the other) or
	// AllNodes (the tool starts on every node at the same moment, to show the nodes contending for
	// the host). AllNodes is for the tools that run on each node by itself: sysbench-cpu,
	// sysbench-memory, stress-ng-cpu, stress-ng-vm, iozone and fio. With AllNodes, Timeout bounds
	// each node's execution as before, and the samples are marked as measured on all nodes at once.
	// +optional
	// +kubebuilder:default=OneNodeAtATime
	Concurrency Concurrency `json:"concurrency,omitempty"`

	// HPCC holds the parameters of type hpcc.
	// +optional
	HPCC *HPCCParams `json:"hpcc,omitempty"`

	// SysbenchCPU holds the parameters of type sysbench-cpu.
	// +optional
	SysbenchCPU *SysbenchCPUParams `json:"sysbenchCPU,omitempty"`

	// SysbenchMemory holds the parameters of type sysbench-memory.
	// +optional
	SysbenchMemory *SysbenchMemoryParams `json:"sysbenchMemory,omitempty"`

	// StressNGCPU holds the parameters of type stress-ng-cpu.
	// +optional
	StressNGCPU *StressNGCPUParams `json:"stressNGCPU,omitempty"`

	// StressNGVM holds the parameters of type stress-ng-vm.
	// +optional
	StressNGVM *StressNGVMParams `json:"stressNGVM,omitempty"`

	// Iozone holds the parameters of type iozone.
	// +optional
	Iozone *IozoneParams `json:"iozone,omitempty"`

	// Iperf3 holds the parameters of type iperf3.
	// +optional
	Iperf3 *Iperf3Params `json:"iperf3,omitempty"`

	// Ping holds the parameters of type ping.
	// +optional
	Ping *PingParams `json:"ping,omitempty"`

	// Fio holds the parameters of type fio.
	// +optional
	Fio *FioParams `json:"fio,omitempty"`

	// Netperf holds the parameters of type netperf.
	// +optional
	Netperf *NetperfParams `json:"netperf,omitempty"`

	// Netcat holds the parameters of type netcat.
	// +optional
	Netcat *NetcatParams `json:"netcat,omitempty"`
}

// HPCCNodes says which nodes of a run take part in HPCC.
// +kubebuilder:validation:Enum=All;Workers
type HPCCNodes string

const (
	// HPCCAllNodes runs HPCC on every node of the run, the master included, as the seeds' master
	// took part in their MPI runs.
	HPCCAllNodes HPCCNodes = "All"
	// HPCCWorkers runs HPCC on every node but the master (`mpirun -np 2` on the two workers of a
	// three-node study), so that the master's runner and sshd stay out of the measurement.
	HPCCWorkers HPCCNodes = "Workers"
)

// MaxHPLPoints bounds the HPL runs of one HPCC execution, problemSizes x blockSizes x grids: one
// status metric per point, beside HPCC's 31, must fit the 48 metrics a benchmark may keep.
const MaxHPLPoints = 16

// HPLGrid is one HPL process grid: P rows by Q columns of MPI ranks.
type HPLGrid struct {
	// P is the number of process-grid rows.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	P int32 `json:"p"`

	// Q is the number of process-grid columns.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	Q int32 `json:"q"`
}

// HPCCParams are the HPL.dat knobs of the HPC Challenge run across the nodes of a run. HPL may run
// several times in one HPCC execution, once per problem size, block size and grid (a sweep): give
// problemSizes, blockSizes or grids instead of problemSize, nb or p and q. HPCC's own figures
// (HPL_Tflops, STREAM, ...) are measured once per execution either way.
// +kubebuilder:validation:XValidation:rule="has(self.p) == has(self.q)",message="set both hpcc.p and hpcc.q, or neither"
// +kubebuilder:validation:XValidation:rule="!has(self.problemSize) || !has(self.problemSizes)",message="set hpcc.problemSize or hpcc.problemSizes, not both: move the single size into problemSizes"
// +kubebuilder:validation:XValidation:rule="!has(self.nb) || !has(self.blockSizes)",message="set hpcc.nb or hpcc.blockSizes, not both: move the single block size into blockSizes"
// +kubebuilder:validation:XValidation:rule="!has(self.grids) || (!has(self.p) && !has(self.q))",message="set hpcc.p and hpcc.q or hpcc.grids, not both: move the single grid into grids"
// +kubebuilder:validation:XValidation:rule="(has(self.problemSizes) ? size(self.problemSizes) : 1) * (has(self.blockSizes) ? size(self.blockSizes) : 1) * (has(self.grids) ? size(self.grids) : 1) <= 16",message="HPL runs once per problem size, block size and grid, and problemSizes x blockSizes x grids may give at most 16 points, one status metric each: shorten a list, or split the sweep into two hpcc benchmarks"
type HPCCParams struct {
	// N is the HPL problem size, serialized as problemSize: a bare "n" is a boolean in YAML 1.1, which
	// kubectl speaks. When it and ProblemSizes are empty, N is derived from the nodes' memory limit
	// (not from /proc/meminfo, which shows the host's memory in a pod): the largest multiple of the
	// (largest) block size whose matrix fills MemoryPercent of the memory of the nodes taking part.
	// +optional
	// +kubebuilder:validation:Minimum=100
	// +kubebuilder:validation:Maximum=200000
	N *int32 `json:"problemSize,omitempty"`

	// ProblemSizes are the HPL problem sizes of a sweep, run one after the other in the same HPCC
	// execution, each with every block size and grid; the report plots Gflop/s over them. HPCC sizes
	// its other tests after the largest. Instead of problemSize.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=100
	// +kubebuilder:validation:items:Maximum=200000
	// +listType=set
	ProblemSizes []int32 `json:"problemSizes,omitempty"`

	// MemoryPercent is the share of the nodes' memory that the derived N fills.
	// +optional
	// +kubebuilder:default=80
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=90
	MemoryPercent int32 `json:"memoryPercent,omitempty"`

	// NB is the HPL block size. When it and BlockSizes are empty, it is 192.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	NB int32 `json:"nb,omitempty"`

	// BlockSizes are the HPL block sizes of a sweep, each run with every problem size and grid in
	// the same HPCC execution; the report draws one line per block size. Instead of nb.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:Minimum=1
	// +kubebuilder:validation:items:Maximum=1024
	// +listType=set
	BlockSizes []int32 `json:"blockSizes,omitempty"`

	// P is the number of process-grid rows. P*Q must be the number of MPI ranks. When P, Q and
	// Grids are empty, the squarest grid with P <= Q is used.
	// +optional
	// +kubebuilder:validation:Minimum=1
	P *int32 `json:"p,omitempty"`

	// Q is the number of process-grid columns.
	// +optional
	// +kubebuilder:validation:Minimum=1
	Q *int32 `json:"q,omitempty"`

	// Grids are the HPL process grids of a sweep, each run with every problem size and block size
	// in the same HPCC execution. Each grid's P*Q must be the number of MPI ranks: HPCC refuses an
	// input whose grid needs more ranks than the run has and silently runs its built-in defaults
	// instead, and a smaller grid leaves ranks idle. Instead of p and q.
	// +optional
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=p
	// +listMapKey=q
	Grids []HPLGrid `json:"grids,omitempty"`

	// RanksPerNode is the number of MPI ranks on each node. When empty it is the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	RanksPerNode *int32 `json:"ranksPerNode,omitempty"`

	// Nodes is All (HPCC runs on every node of the run, the master included) or Workers (every node
	// but the master, which then only starts mpirun and collects the output). With Workers the
	// ranks, the derived N and the grids count the workers only, and the cluster needs at least 2
	// nodes.
	// +optional
	// +kubebuilder:default=All
	Nodes HPCCNodes `json:"nodes,omitempty"`
}

// SysbenchCPUParams configure `sysbench cpu` on every node.
type SysbenchCPUParams struct {
	// MaxPrime is the upper limit of the prime search.
	// +optional
	// +kubebuilder:default=20000
	// +kubebuilder:validation:Minimum=1
	MaxPrime int32 `json:"maxPrime,omitempty"`

	// Threads is the number of worker threads; 0 means the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	Threads int32 `json:"threads,omitempty"`

	// Duration of the test.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`
}

// SysbenchMemoryParams configure `sysbench memory` on every node, once per block size.
type SysbenchMemoryParams struct {
	// BlockSizes are the memory block sizes to test, one execution each.
	// +optional
	// +kubebuilder:default={"1K","1M"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Pattern=`^[1-9][0-9]{0,6}[KMG]?$`
	// +listType=set
	BlockSizes []string `json:"blockSizes,omitempty"`

	// TotalSize is the amount of data each execution transfers.
	// +optional
	// +kubebuilder:default="10G"
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[KMGT]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[KMGT]?$') || (self.endsWith('T') ? int(self.substring(0, size(self) - 1)) <= 1 : self.endsWith('G') ? int(self.substring(0, size(self) - 1)) <= 1024 : !self.endsWith('M') || int(self.substring(0, size(self) - 1)) <= 1048576)",message="totalSize must be at most 1T of memory traffic per execution: lower it, for example to 10G"
	TotalSize string `json:"totalSize,omitempty"`

	// Operation is read or write.
	// +optional
	// +kubebuilder:default=write
	// +kubebuilder:validation:Enum=read;write
	Operation string `json:"operation,omitempty"`

	// Threads is the number of worker threads; 0 means the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	Threads int32 `json:"threads,omitempty"`
}

// StressNGCPUParams configure the stress-ng cpu stressor on every node.
type StressNGCPUParams struct {
	// Method is the cpu stressor method.
	// +optional
	// +kubebuilder:default=matrixprod
	// +kubebuilder:validation:Enum=matrixprod;fft;int64;double;sqrt;all
	Method string `json:"method,omitempty"`

	// Workers is the number of stressor instances; 0 means the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	Workers int32 `json:"workers,omitempty"`

	// Duration of the test.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`
}

// StressNGVMParams configure the stress-ng vm stressor on every node.
type StressNGVMParams struct {
	// Bytes is the memory each worker allocates and exercises: a size ("512M") or a share of the
	// available memory ("50%").
	// +optional
	// +kubebuilder:default="50%"
	// +kubebuilder:validation:Pattern=`^([1-9][0-9]{0,6}[KMG]?|[1-9][0-9]?%)$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([1-9][0-9]{0,6}[KMG]?|[1-9][0-9]?%)$') || (self.endsWith('G') ? int(self.substring(0, size(self) - 1)) <= 64 : !self.endsWith('M') || int(self.substring(0, size(self) - 1)) <= 65536)",message="bytes must be at most 64G per worker, or a share of the memory such as 50%: lower it"
	Bytes string `json:"bytes,omitempty"`

	// Workers is the number of stressor instances.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Workers int32 `json:"workers,omitempty"`

	// Duration of the test.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`
}

// StorageTarget is where a storage benchmark writes its files: Local, RootFS or Shared.
// +kubebuilder:validation:Enum=Local;Shared;RootFS
type StorageTarget string

const (
	// StorageLocal is a scratch volume of the node's own: in a pod an emptyDir, mounted into the
	// container from its Kubernetes node's disk, past the container's writable layer; in a VM the
	// directory /var/lib/vmbench on its root disk, which is the disk RootFS measures too.
	StorageLocal StorageTarget = "Local"
	// StorageShared is one file system that every node of a run mounts: in pods a ReadWriteMany
	// PersistentVolumeClaim of spec.sharedStorage; in VMs an NFSv4.2 export of the master VM's root
	// disk, which every VM mounts (the master through its own loopback).
	StorageShared StorageTarget = "Shared"
	// StorageRootFS is the node's own root file system, with no volume mounted: in a pod the
	// container's writable layer (the overlay over its image), in a VM its root disk (the
	// containerDisk's copy-on-write overlay), in the directory /var/tmp/vmbench.
	StorageRootFS StorageTarget = "RootFS"
)

// UsesStorageTarget reports whether an iozone or fio benchmark names target. An empty list or target,
// which the defaults make Local, does not count.
func UsesStorageTarget(benchmarks []Benchmark, target StorageTarget) bool {
	for _, b := range benchmarks {
		if b.Iozone != nil && slices.Contains(b.Iozone.Targets, target) {
			return true
		}
		if b.Fio != nil && b.Fio.Target == target {
			return true
		}
	}
	return false
}

// IozoneTest is an iozone test group.
// +kubebuilder:validation:Enum=write;read;random
type IozoneTest string

// IozoneParams configure iozone on every node: one file and record size (fileSize, recordSize), or
// with auto every file size from minFileSize to maxFileSize, each with every record size iozone's
// automatic mode takes for it (iozone -a).
// +kubebuilder:validation:XValidation:fieldPath=".fileSize",rule="!has(self.auto) || !self.auto || !has(self.fileSize)",message="fileSize does not apply with auto: true, which runs every file size from minFileSize to maxFileSize (iozone -a -n -g): remove fileSize, or set auto to false"
// +kubebuilder:validation:XValidation:fieldPath=".recordSize",rule="!has(self.auto) || !self.auto || !has(self.recordSize)",message="recordSize does not apply with auto: true, which runs every record size from 4k to 16M that fits each file: remove recordSize, or set auto to false"
// +kubebuilder:validation:XValidation:fieldPath=".maxFileSize",rule="(has(self.auto) && self.auto) || !has(self.maxFileSize)",message="maxFileSize applies to auto: true only (iozone -a -g): set auto to true, or remove maxFileSize and set fileSize for a single file size"
// +kubebuilder:validation:XValidation:fieldPath=".minFileSize",rule="(has(self.auto) && self.auto) || !has(self.minFileSize)",message="minFileSize applies to auto: true only (iozone -a -n): set auto to true, or remove minFileSize and set fileSize for a single file size"
// +kubebuilder:validation:XValidation:fieldPath=".minFileSize",rule="!has(self.minFileSize) || !self.minFileSize.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (has(self.maxFileSize) && !self.maxFileSize.matches('^[1-9][0-9]{0,6}[kmgKMG]?$')) || (self.minFileSize.lowerAscii().endsWith('g') ? int(self.minFileSize.substring(0, size(self.minFileSize) - 1)) * 1048576 : self.minFileSize.lowerAscii().endsWith('m') ? int(self.minFileSize.substring(0, size(self.minFileSize) - 1)) * 1024 : self.minFileSize.lowerAscii().endsWith('k') ? int(self.minFileSize.substring(0, size(self.minFileSize) - 1)) : int(self.minFileSize)) <= (has(self.maxFileSize) ? (self.maxFileSize.lowerAscii().endsWith('g') ? int(self.maxFileSize.substring(0, size(self.maxFileSize) - 1)) * 1048576 : self.maxFileSize.lowerAscii().endsWith('m') ? int(self.maxFileSize.substring(0, size(self.maxFileSize) - 1)) * 1024 : self.maxFileSize.lowerAscii().endsWith('k') ? int(self.maxFileSize.substring(0, size(self.maxFileSize) - 1)) : int(self.maxFileSize)) : 524288)",message="minFileSize must not be above maxFileSize (512M when left out): lower minFileSize or raise maxFileSize"
type IozoneParams struct {
	// FileSize is the size of the test file, 512M when left out. Files that fit into memory measure
	// the page cache. Not with auto.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('m') || int(self.substring(0, size(self) - 1)) <= 16384)",message="fileSize must be at most 16G, written to the node's disk: lower it, for example to 1G"
	FileSize string `json:"fileSize,omitempty"`

	// RecordSize is the size of each read or write, 64k when left out. Not with auto.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('g') && int(self.lowerAscii().replace('k', '')) <= 16384)",message="recordSize must be at most 16M (a number without a unit counts KiB): lower it, for example to 64k"
	RecordSize string `json:"recordSize,omitempty"`

	// Auto runs iozone's automatic mode (iozone -a): every file size from minFileSize to
	// maxFileSize, doubling, each with every record size from 4k to 16M that fits it (files of 32M
	// and more skip the records below 64k, as iozone does), for the chosen tests. Each execution's
	// whole table is kept in the run's tables ConfigMap (label vmbench.io/tables-of); status keeps,
	// per test, the figure at the largest file size and its largest record size. fileSize and
	// recordSize do not apply. Auto mode writes many files one after the other: raise timeout for a
	// large maxFileSize.
	// +optional
	Auto bool `json:"auto,omitempty"`

	// MaxFileSize is the largest file size of auto mode (iozone -g), 512M when left out, as in
	// iozone itself; between 64k and 16G. A number without a unit counts KiB.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || ((self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) >= 64 && (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) <= 16777216)",message="maxFileSize must be between 64k and 16G (a number without a unit counts KiB), written to the node's disk: for example 1G"
	MaxFileSize string `json:"maxFileSize,omitempty"`

	// MinFileSize is the smallest file size of auto mode (iozone -n), 64k when left out, as in
	// iozone itself; between 64k and maxFileSize.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || ((self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) >= 64 && (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) <= 16777216)",message="minFileSize must be between 64k and 16G (a number without a unit counts KiB): for example 64k"
	MinFileSize string `json:"minFileSize,omitempty"`

	// Tests are the iozone test groups: write (-i 0), read (-i 1), random (-i 2).
	// +optional
	// +kubebuilder:default={write,read,random}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Tests []IozoneTest `json:"tests,omitempty"`

	// Targets are the storage locations to test, each in its own execution: Local, RootFS, Shared.
	// With more than one, the metric names start with the target's name in lower case
	// ("rootfs_write").
	// +optional
	// +kubebuilder:default={Local}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Targets []StorageTarget `json:"targets,omitempty"`

	// DirectIO bypasses the page cache (iozone -I), so that a container and a VM are compared on
	// their disks rather than on their caches.
	// +optional
	DirectIO bool `json:"directIO,omitempty"`
}

// LargestFile is the largest file one execution writes: maxFileSize in auto mode, else fileSize,
// with their defaults.
func (p IozoneParams) LargestFile() string {
	if p.Auto {
		return orString(p.MaxFileSize, DefaultIozoneMaxFileSize)
	}
	return orString(p.FileSize, DefaultIozoneFileSize)
}

// NodePair is a direction of network traffic between the nodes of a run.
// +kubebuilder:validation:Enum=master-node;node-master;node-node
type NodePair string

const (
	// PairMasterToNode sends from the master to every other node.
	PairMasterToNode NodePair = "master-node"
	// PairNodeToMaster sends from every other node to the master.
	PairNodeToMaster NodePair = "node-master"
	// PairNodeToNode sends from each worker node to the next one.
	PairNodeToNode NodePair = "node-node"
)

// Iperf3Params configure iperf3 between the nodes of a run. Besides its summary in status, each
// measurement's bandwidth per interval (iperf3 -i: one second, longer beyond 600 intervals) is kept
// in the run's tables ConfigMap (label vmbench.io/tables-of), for vmbench report's plot over time.
type Iperf3Params struct {
	// Pairs are the directions to measure.
	// +optional
	// +kubebuilder:default={master-node,node-master,node-node}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Pairs []NodePair `json:"pairs,omitempty"`

	// Duration of each measurement.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`

	// Parallel is the number of parallel streams.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	Parallel int32 `json:"parallel,omitempty"`

	// Protocol is TCP or UDP.
	// +optional
	// +kubebuilder:default=TCP
	// +kubebuilder:validation:Enum=TCP;UDP
	Protocol string `json:"protocol,omitempty"`

	// Port is the port the client connects to. The runner starts a server on ServerPort, so a Port
	// that differs from ServerPort measures nothing and fails: useful to test failure handling.
	// +optional
	// +kubebuilder:default=5201
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// ServerPort is the port on which the runner starts the iperf3 server of each measurement.
	// +optional
	// +kubebuilder:default=5201
	// +kubebuilder:validation:Minimum=1024
	// +kubebuilder:validation:Maximum=65535
	ServerPort int32 `json:"serverPort,omitempty"`
}

// PingParams configure ping between the nodes of a run.
type PingParams struct {
	// Count is the number of echo requests per pair.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Count int32 `json:"count,omitempty"`

	// Pairs are the directions to measure.
	// +optional
	// +kubebuilder:default={master-node,node-master,node-node}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Pairs []NodePair `json:"pairs,omitempty"`
}

// FioParams are one fio job, run on every node.
type FioParams struct {
	// RW is the I/O pattern.
	// +optional
	// +kubebuilder:default=randread
	// +kubebuilder:validation:Enum=read;write;randread;randwrite;readwrite;randrw
	RW string `json:"rw,omitempty"`

	// BlockSize of each I/O.
	// +optional
	// +kubebuilder:default="4k"
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('g') && (!self.lowerAscii().endsWith('k') || int(self.substring(0, size(self) - 1)) <= 16384))",message="blockSize must be at most 16M: lower it, for example to 4k"
	BlockSize string `json:"blockSize,omitempty"`

	// Size of the file each job works on and, without Runtime, how much each job reads or writes
	// before it ends.
	// +optional
	// +kubebuilder:default="256m"
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('m') || int(self.substring(0, size(self) - 1)) <= 16384)",message="size must be at most 16G, written to the node's disk: lower it, for example to 1G"
	Size string `json:"size,omitempty"`

	// IODepth is the number of I/Os in flight.
	// +optional
	// +kubebuilder:default=16
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	IODepth int32 `json:"ioDepth,omitempty"`

	// IOEngine is fio's ioengine.
	// +optional
	// +kubebuilder:default=libaio
	// +kubebuilder:validation:Enum=libaio;psync;sync;posixaio;io_uring
	IOEngine string `json:"ioEngine,omitempty"`

	// Direct bypasses the page cache (O_DIRECT).
	// +optional
	// +kubebuilder:default=true
	Direct *bool `json:"direct,omitempty"`

	// NumJobs is the number of parallel jobs; their results are summed.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	NumJobs int32 `json:"numJobs,omitempty"`

	// Runtime makes the job time-based: it runs for this long, going over its file again as often as
	// it takes (fio --time_based). When empty, the job is bounded by Size instead: it ends once each
	// of its jobs has read or written Size, however long that takes, up to the benchmark's timeout.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set runtime between 1s and 1h"
	Runtime *Duration `json:"runtime,omitempty"`

	// Target is where the job's file lives: Local, RootFS or Shared.
	// +optional
	// +kubebuilder:default=Local
	Target StorageTarget `json:"target,omitempty"`
}

// NetperfTest is a netperf test: TCP_RR (request/response transactions of one byte each way, with
// latency percentiles) or TCP_STREAM (bulk throughput).
// +kubebuilder:validation:Enum=TCP_RR;TCP_STREAM
type NetperfTest string

const (
	NetperfTCPRR     NetperfTest = "TCP_RR"
	NetperfTCPStream NetperfTest = "TCP_STREAM"
)

// NetperfParams configure netperf between the nodes of a run. netserver listens on the far node of
// each pair, on the control port 12865 and the data port 12866.
type NetperfParams struct {
	// Tests are the netperf tests to run, one execution per test and pair.
	// +optional
	// +kubebuilder:default={TCP_RR,TCP_STREAM}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +listType=set
	Tests []NetperfTest `json:"tests,omitempty"`

	// Duration of each iteration of a test (netperf -l). netperf repeats a test up to
	// confidence.maxIterations times, so one execution takes up to that many durations.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`

	// Confidence is netperf's own iteration to a confidence interval (netperf -I and -i): each test
	// is repeated until the interval of its throughput is narrow enough, or maxIterations is
	// reached. When left out, every field takes its default.
	// +optional
	// +kubebuilder:default={}
	Confidence *NetperfConfidence `json:"confidence,omitempty"`

	// Pairs are the directions to measure.
	// +optional
	// +kubebuilder:default={master-node,node-master,node-node}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Pairs []NodePair `json:"pairs,omitempty"`
}

// NetperfConfidence is the confidence interval netperf iterates to (netperf -I level,width and
// -i maxIterations,minIterations).
// +kubebuilder:validation:XValidation:rule="!has(self.minIterations) || !has(self.maxIterations) || self.minIterations <= self.maxIterations",message="set confidence.minIterations at most confidence.maxIterations"
type NetperfConfidence struct {
	// Level is the confidence level in percent.
	// +optional
	// +kubebuilder:default=95
	// +kubebuilder:validation:Enum=95;99
	Level int32 `json:"level,omitempty"`

	// WidthPercent is the widest interval accepted, in percent of the mean throughput.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=50
	WidthPercent int32 `json:"widthPercent,omitempty"`

	// MinIterations is the number of iterations netperf always runs; netperf runs at least 3.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=30
	MinIterations int32 `json:"minIterations,omitempty"`

	// MaxIterations is the number of iterations after which netperf gives up and reports the
	// interval it reached (the result's confidence_achieved is then 0); netperf runs at most 30.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=3
	// +kubebuilder:validation:Maximum=30
	MaxIterations int32 `json:"maxIterations,omitempty"`
}

// NetcatParams configure a bulk transfer between the nodes of a run: dd sends Size bytes of zeros
// through nc to a receiver on the far node of each pair (port 12867), which discards them.
type NetcatParams struct {
	// Size is the amount of data each transfer sends, a quantity such as 1Gi or 500Mi, rounded up to
	// whole MiB. dd stops its clock when the last block is in the pipe, with up to a few MiB still in
	// flight: 1Gi or more keeps that error under 1%. It is a string rather than a resource.Quantity
	// so that its length, and so the cost of its rule, is bounded.
	// +optional
	// +kubebuilder:default="1Gi"
	// +kubebuilder:validation:MaxLength=16
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?([KMGT]i|[kMGT])?$`
	// +kubebuilder:validation:XValidation:rule="!isQuantity(self) || (quantity(self).compareTo(quantity('1Mi')) >= 0 && quantity(self).compareTo(quantity('16Gi')) <= 0)",message="set netcat.size between 1Mi and 16Gi"
	Size string `json:"size,omitempty"`

	// Pairs are the directions to measure.
	// +optional
	// +kubebuilder:default={master-node,node-master,node-node}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Pairs []NodePair `json:"pairs,omitempty"`
}
