package v1alpha1

// BenchmarkType names a tool and what it measures.
// +kubebuilder:validation:Enum=hpcc;sysbench-cpu;sysbench-memory;stress-ng-cpu;stress-ng-vm;iozone;iperf3;ping;fio;netperf;netcat;migration
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
	// BenchmarkMigration live-migrates the master VM under the in-guest probe (MigrationParams).
	BenchmarkMigration BenchmarkType = "migration"
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

	// Migration holds the parameters of type migration (VM platforms only). Unlike the other
	// blocks, no CRD rule ties it to its type: the manager refuses it on another type, so that the
	// API server has one rule less to run on every write of a suite.
	// +optional
	Migration *MigrationParams `json:"migration,omitempty"`
}
