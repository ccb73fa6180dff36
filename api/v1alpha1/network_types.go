package v1alpha1

// Parameters of the network tools, which measure between pairs of nodes: iperf3, ping, netperf and
// netcat.

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
