package v1alpha1

// Labels that vmbench puts on every child object, so that people and dashboards can find a suite's
// pods, MPIJobs and VMIs with a selector.
const (
	// LabelSuite holds the name of the BenchmarkSuite that owns the object.
	LabelSuite = "vmbench.io/suite"
	// LabelRun holds the name of the run (one platform, one repetition) the object belongs to.
	LabelRun = "vmbench.io/run"
	// LabelPlatform holds the platform name of the run.
	LabelPlatform = "vmbench.io/platform"
	// LabelRole is "master" or "node" on the members of a run's cluster.
	LabelRole = "vmbench.io/role"
	// LabelNode is a VM's node name in its run: master, node01, ...
	LabelNode = "vmbench.io/node"
	// LabelTablesOf names the run whose full result tables (iozone auto-mode tables, iperf3 time
	// series) a ConfigMap holds, as CSV; such a ConfigMap carries LabelSuite and LabelPlatform too,
	// and goes with the suite, not with the run.
	LabelTablesOf = "vmbench.io/tables-of"
	// LabelSuiteNamespace holds the namespace of the suite on a cluster-scoped object vmbench made
	// for it (a run's KubeVirt MigrationPolicy), which has no namespace of its own.
	LabelSuiteNamespace = "vmbench.io/suite-namespace"
)

// Annotations the archive of finished suites (--archive-s3-*) puts on a suite it has written.
const (
	// AnnotationArchived holds the suite's UID once the archive holds the suite whole: suite.json
	// and every result table. A schedule deletes a suite beyond its history limits only then.
	AnnotationArchived = "vmbench.io/archived"
	// AnnotationArchiveIncomplete is "<uid>: <what is missing>" once suite.json is written but some
	// of the suite's result tables were deleted before they could be archived; suite.json carries
	// it too. Such an archive is not whole, and a schedule keeps the suite until someone deletes it.
	AnnotationArchiveIncomplete = "vmbench.io/archive-incomplete"
)

// Role values of LabelRole.
const (
	RoleMaster = "master"
	RoleNode   = "node"
	// RoleProbe is the migration benchmark's probe worker pod in a Container run (the container
	// arm): not a member of the run's cluster, evicted and replaced while the run goes on.
	RoleProbe = "probe"
)

// Condition types of a BenchmarkSuite. Every reconcile sets all five.
const (
	// ConditionQueued is True while the suite waits for a run slot (the manager runs at most
	// --max-active-runs suites at once, namespaces taking turns); the message gives its place in line
	// and names the suites of its own namespace running or waiting ahead. False once the suite was
	// admitted.
	ConditionQueued = "Queued"
	// ConditionProgressing is True while runs are pending or running.
	ConditionProgressing = "Progressing"
	// ConditionComplete is True once every run finished and every benchmark produced results.
	ConditionComplete = "Complete"
	// ConditionFailed is True once the suite has ended and something in it failed; the message names
	// the cause. Complete and Failed are never both True.
	ConditionFailed = "Failed"
	// ConditionRunsFailed is True as soon as any run has failed, while the suite goes on; the message
	// names the first failed run and its cause.
	ConditionRunsFailed = "RunsFailed"
	// ConditionPrecisionReached is set only on a suite with spec.precision: Unknown while runs go on,
	// True once every named metric on every platform is within the target, False once the suite
	// ended at precision.maxRepetitions (or with failures) with some metric still above it; the
	// message names those metrics, their half-widths and what to do.
	ConditionPrecisionReached = "PrecisionReached"
)

// Condition reasons.
const (
	ReasonPending            = "Pending"
	ReasonRunning            = "Running"
	ReasonCompleted          = "Completed"
	ReasonInvalidSpec        = "InvalidSpec"
	ReasonBenchmarkFailed    = "BenchmarkFailed"
	ReasonRunFailed          = "RunFailed"
	ReasonSuiteTimeout       = "SuiteTimeout"
	ReasonPlatformMissing    = "PlatformUnavailable"
	ReasonEmulationForbidden = "EmulationForbidden"
	// ReasonNamespaceRefusesVMs fails a VM run whose namespace's Pod Security level refuses
	// KubeVirt's virt-launcher pods.
	ReasonNamespaceRefusesVMs = "NamespaceRefusesVMs"
	// ReasonVMSettingUnsupported fails a VM run whose platform's vm settings ask for what the
	// cluster's KubeVirt does not offer, such as a network binding it does not register.
	ReasonVMSettingUnsupported = "VMSettingUnsupported"
	// ReasonMigrationPolicyUnavailable fails a VM run whose platform sets vm.migrationPolicy when
	// the cluster serves no KubeVirt MigrationPolicy API, or refuses the run's policy.
	ReasonMigrationPolicyUnavailable = "MigrationPolicyUnavailable"
	ReasonNotDone                    = "NotDone"
	ReasonNoFailure                  = "NoFailure"
	ReasonFinished                   = "Finished"
	ReasonResultsCorrupted           = "ResultsCorrupted"
	// ReasonWaitingForRun (Queued=True, and Progressing while queued): other suites hold every run slot.
	ReasonWaitingForRun = "WaitingForRun"
	// ReasonAdmitted (Queued=False): the suite took a run slot.
	ReasonAdmitted = "Admitted"
	// ReasonMeasuring (PrecisionReached=Unknown): runs are still pending or running.
	ReasonMeasuring = "Measuring"
	// ReasonTargetReached (PrecisionReached=True): every named metric is within the target.
	ReasonTargetReached = "TargetReached"
	// ReasonMaxRepetitionsReached (PrecisionReached=False): the suite ran precision.maxRepetitions
	// and some named metric is still above the target.
	ReasonMaxRepetitionsReached = "MaxRepetitionsReached"
	// ReasonPrecisionNotMeasured (PrecisionReached=False): runs failed or a named metric has no
	// results, so the target could not be judged.
	ReasonPrecisionNotMeasured = "NotMeasured"
)

// MaxSuiteNameLength keeps every child name (for example "<suite>-<platform>-r10-node07") and every
// hostname derived from it within the 63 characters of a DNS label.
const MaxSuiteNameLength = 30

// MaxPlatformNameLength is the longest platform name; see MaxSuiteNameLength.
const MaxPlatformNameLength = 12

// AnnotationKeys on a run's children says how its runner signs its results; KeysPerRun is the key
// derived for the run alone. Children without it were made by an earlier vmbench, which signed with
// the suite's key.
const (
	AnnotationKeys = "vmbench.io/keys"
	KeysPerRun     = "run"
)

// LabelPrivilegedPlatforms, set to "true" on a namespace by a cluster admin, lets suites there use
// platforms of type Host and the RuntimeClasses the admin allowed. The chart's
// ValidatingAdmissionPolicy refuses them elsewhere.
const LabelPrivilegedPlatforms = "vmbench.io/privileged-platforms"

// FieldManager is the one server-side apply field manager of vmbench.
const FieldManager = "vmbench"
