package v1alpha1

import (
	"time"

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

// BenchmarkSuiteSpec says which benchmarks to run, on which platforms, how often and where.
//
// Its cross-field rules (the baseline among the platforms, nodes for the network benchmarks and
// hpcc.nodes Workers, shared storage, precision, HPCC grids, sizes and memory against the cluster, VM
// settings that need each other) are not CRD rules, which kube-apiserver evaluates again on every
// status write: they are the ValidatingAdmissionPolicy vmbench-suite-spec
// (config/admission/suite_spec.yaml, the chart's spec-policy.yaml), checked on a create and on a
// change of the spec, and FirstInvalidValue applies each in Go (condition InvalidSpec where the policy
// is not installed).
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
// +kubebuilder:printcolumn:name="Band",type=string,JSONPath=`.status.headline.band`,description="The headline ratio against KVM's expected band: within, below, above or emulated"
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

// SuiteTimeout bounds the whole suite, defaulted like ClusterShape.MemoryLimit.
func (s BenchmarkSuiteSpec) SuiteTimeout() time.Duration {
	if s.Timeout == nil {
		return 6 * time.Hour
	}
	return s.Timeout.Duration()
}

// ActiveRun is the run the suite is on: the first that is Pending or Running; nil when every run
// ended.
func (st *BenchmarkSuiteStatus) ActiveRun() *RunStatus {
	for i := range st.Runs {
		if p := st.Runs[i].Phase; p == RunPending || p == RunRunning {
			return &st.Runs[i]
		}
	}
	return nil
}
