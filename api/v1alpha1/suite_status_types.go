package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// The status of a BenchmarkSuite as a whole; runs are in run_types.go, results in result_types.go.

// SuitePhase is a one-word summary of the conditions, for kubectl get.
// +kubebuilder:validation:Enum=Pending;Running;Complete;Failed
type SuitePhase string

const (
	SuitePending  SuitePhase = "Pending"
	SuiteRunning  SuitePhase = "Running"
	SuiteComplete SuitePhase = "Complete"
	SuiteFailed   SuitePhase = "Failed"
)

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

// MaxMigrationSummaryLength is the longest status.migrationSummaries[].summary; a longer line (figures
// of hundreds of digits) is cut to it, ending in "...".
const MaxMigrationSummaryLength = 512

// MigrationSummary is what one migration benchmark's live migrations cost the guest on one VM
// platform, as `vmbench report` prints it on its first screen.
type MigrationSummary struct {
	// Benchmark is the migration benchmark's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=24
	Benchmark string `json:"benchmark"`

	// Platform is the VM platform's name in the spec.
	// +required
	// +kubebuilder:validation:MaxLength=12
	Platform string `json:"platform"`

	// Emulated is true where the platform's VMs ran without KVM (the line says "(emulated)").
	// +optional
	Emulated bool `json:"emulated,omitempty"`

	// DirtyRate is the guest's dirty rate of the line's migrations, as spec's migration.dirtyRates
	// spells it ("64Mi", bytes a second), in a sweep: one line per rate; empty without one.
	// +optional
	// +kubebuilder:validation:MaxLength=24
	DirtyRate string `json:"dirtyRate,omitempty"`

	// Summary is the report's line: the pause, total time, dip and recovery, each the mean over the
	// migrations with its 95% interval, and how many of them completed, for example "vm: migration:
	// pause 712 ms [0, 1633] (background gap 30 ms [17.6, 42.4]), total 15.7 s [11.9, 19.5], dip 25.9%
	// [11.3, 40.4] for 28.6 s [0.73, 56.4] (3 of 3 completed)" (docs/migration.md).
	// +required
	// +kubebuilder:validation:MaxLength=512
	Summary string `json:"summary"`
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

	// MigrationSummaries are the migration benchmarks' answers, one per benchmark and VM platform
	// with results, in the order of results: the lines `vmbench report` prints on its first screen,
	// with the same figures and intervals. At most 12 benchmarks times 4 platforms.
	// +optional
	// +kubebuilder:validation:MaxItems=48
	// +listType=atomic
	MigrationSummaries []MigrationSummary `json:"migrationSummaries,omitempty"`

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

	// ParametersHash is a hash of what the suite measures (its defaulted benchmarks, its platforms and
	// its cluster shape), set when its first run starts. Results are comparable across suites, for
	// example the suites of one schedule, only under one hash.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	ParametersHash string `json:"parametersHash,omitempty"`

	// Environments are what the suite's runs ran on, each kept once however many runs share it:
	// runs[].environment names one. A change between two runs (a node upgraded, KubeVirt updated, a
	// new runner image) shows as a second entry. The oldest entry goes when a fifth is seen, and
	// where the status outgrows its size budget only the newest entry of each platform type is kept.
	// +optional
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=id
	Environments []RunEnvironment `json:"environments,omitempty"`

	// Warnings are facts that make the comparison less fair than it should be, for example
	// requests below limits or emulated VMs.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=atomic
	Warnings []string `json:"warnings,omitempty"`
}
