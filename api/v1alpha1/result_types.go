package v1alpha1

// What the benchmarks measured: samples and their statistics per benchmark and platform, and the
// ratios to the baseline.

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

	// Migrated is set when a live migration of one of the run's VMIs (runs[].migrations) overlapped
	// the time the value was measured: the guest paused and its network moved while it ran.
	// +optional
	Migrated bool `json:"migrated,omitempty"`
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

	// TablesLost counts the tables that could not be kept, as a run's ConfigMaps were full or could
	// not be written (runs[].notKept says why); status.warnings says so. The figures in Metrics are complete either way.
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

	// Band is where a VM's headline ratio to a container baseline lies against the band KVM is
	// expected to give for the metric's family with the VM's recorded settings: within, below (a
	// setting is the likely cause: vmbench report names it), above (suspect the container arm) or
	// emulated (no KVM band applies). Empty when the metric has no band or the ratio is not a VM's to
	// a container's. It places the ratio of the means; vmbench report places its 95% interval.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Band string `json:"band,omitempty"`
}
