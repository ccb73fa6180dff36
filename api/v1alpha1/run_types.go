package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The status of one run: one platform's cluster running every benchmark once.

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

	// KeyID is the ID of the manager's master key that the run's keys were derived from when it
	// started: a fingerprint of the key, never the key. A run collected under another master key fails
	// with both IDs named rather than with an unverifiable log.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	KeyID string `json:"keyID,omitempty"`

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

	// NotKept names the run's ConfigMaps (its raw outputs, its result tables) that could not be
	// written, each with the API server's cause and what to change; the run's results in status are
	// complete either way, and tables not kept count in results[].tablesLost.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	NotKept string `json:"notKept,omitempty"`

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

	// Migrations are the live migrations of the run's VMIs that vmbench saw, as KubeVirt wrote them
	// in each VMI's status.migrationState, in the order they started. Samples measured while one ran
	// are marked (samples[].migrated).
	// +optional
	// +kubebuilder:validation:MaxItems=16
	Migrations []RunMigration `json:"migrations,omitempty"`

	// MigrationPolicy is the KubeVirt MigrationPolicy vmbench made for this run from its platform's
	// vm.migrationPolicy, and removes when the run ends. The policy each migration ran under, as
	// KubeVirt chose it, is migrations[].policy.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	MigrationPolicy string `json:"migrationPolicy,omitempty"`

	// ProbeStartTime is when the migration benchmark's probe started in the master VM, as the runner
	// said (its probe-started message, on the guest's clock): the run's migrations are timed from it.
	// +optional
	ProbeStartTime *metav1.Time `json:"probeStartTime,omitempty"`

	// MigrationsCreated counts the migration objects the migration benchmark created for this run
	// (<run>-mig-1, ...): one deleted past its timeout is gone, and must not be made again.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3
	MigrationsCreated int32 `json:"migrationsCreated,omitempty"`

	// NotMigratable names the run's VMIs that KubeVirt says cannot be live-migrated (their
	// LiveMigratable condition is False), with KubeVirt's reason and message: a node drain stops
	// such a VMI, and the run with it, instead of moving it.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	NotMigratable string `json:"notMigratable,omitempty"`

	// Disruption names the nodes of the run's pods that were cordoned while it ran (the first step of
	// a node drain), and what vmbench does about it (spec.cluster.disruption).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Disruption string `json:"disruption,omitempty"`

	// CPUs is, per node, the CPUs the run's processes were allowed on, and whether they were pinned.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=node
	CPUs []NodeCPUs `json:"cpus,omitempty"`

	// Environment is the ID of the entry of status.environments that the run ran on: its nodes'
	// versions, KubeVirt's and the images. Absent until the run's members were seen running.
	// +optional
	// +kubebuilder:validation:MaxLength=12
	Environment string `json:"environment,omitempty"`

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

	// Migrations is the number of live migrations of the run's VMIs that runs[].migrations listed,
	// and MigrationsNotCompleted how many of them failed or were aborted (the compacted run keeps
	// the counts, not the list).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Migrations int32 `json:"migrations,omitempty"`
	// +optional
	// +kubebuilder:validation:Minimum=0
	MigrationsNotCompleted int32 `json:"migrationsNotCompleted,omitempty"`
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

// MigrationOutcome is how a live migration ended, as KubeVirt's migration state says.
type MigrationOutcome string

// Outcomes of a live migration.
const (
	MigrationRunning   MigrationOutcome = "Running"
	MigrationCompleted MigrationOutcome = "Completed"
	MigrationFailed    MigrationOutcome = "Failed"
	MigrationAborted   MigrationOutcome = "Aborted"
)

// MigrationTrigger is what started a live migration, read from its VirtualMachineInstanceMigration
// the way KubeVirt's own migration metrics tell them apart (an evacuation before a workload update).
// +kubebuilder:validation:Enum=Benchmark;Evacuation;WorkloadUpdate;User;Unknown
type MigrationTrigger string

// MigrationModeEviction is the mode of a RunMigration that is a pod's eviction and replacement
// (the container arm of the migration benchmark): its start is the eviction accepted, its end the
// replacement pod Ready.
const MigrationModeEviction = "Eviction"

// Triggers of a live migration.
const (
	// MigrationByBenchmark: vmbench's migration benchmark made it (labelled with the run).
	MigrationByBenchmark MigrationTrigger = "Benchmark"
	// MigrationByEvacuation: KubeVirt moved the VMI off a node being drained (kubectl drain, a node
	// upgrade): its migration carries kubevirt.io/evacuationMigration.
	MigrationByEvacuation MigrationTrigger = "Evacuation"
	// MigrationByWorkloadUpdate: KubeVirt moved the VMI to a new virt-launcher after its own upgrade
	// (workloadUpdateStrategy LiveMigrate): kubevirt.io/workloadUpdateMigration.
	MigrationByWorkloadUpdate MigrationTrigger = "WorkloadUpdate"
	// MigrationByUser: another VirtualMachineInstanceMigration, made by a user or another tool.
	MigrationByUser MigrationTrigger = "User"
	// MigrationByUnknown: the migration object was gone when the manager looked for it.
	MigrationByUnknown MigrationTrigger = "Unknown"
)

// StartedElsewhere says that something other than the migration benchmark started m (a node
// drain, KubeVirt's workload update, another object): not one of the benchmark's samples, whose
// timing and policy it did not set. One whose object was gone (Unknown) or not yet looked for counts
// as the benchmark's, as every migration of the master did before triggers were read.
func (m RunMigration) StartedElsewhere() bool {
	return m.Trigger == MigrationByEvacuation || m.Trigger == MigrationByWorkloadUpdate || m.Trigger == MigrationByUser
}

// RunMigration is one live migration of a run's VMI, or, in the container arm of the migration
// benchmark, one eviction of its probe worker pod and the pod that replaced it (mode Eviction).
type RunMigration struct {
	// VMI is the migrated VMI; empty for an eviction, whose pods are sourcePod and targetPod.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	VMI string `json:"vmi,omitempty"`

	// UID is KubeVirt's ID of the migration (its VirtualMachineInstanceMigration's UID).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	UID string `json:"uid,omitempty"`

	// SourceNode and TargetNode are the nodes the VMI left and moved to.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SourceNode string `json:"sourceNode,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	TargetNode string `json:"targetNode,omitempty"`

	// SourcePod and TargetPod are the VMI's virt-launcher pods before and after: the run's frames
	// are read from both.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	SourcePod string `json:"sourcePod,omitempty"`
	// +optional
	// +kubebuilder:validation:MaxLength=253
	TargetPod string `json:"targetPod,omitempty"`

	// StartTime and EndTime are KubeVirt's start and end of the migration.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// +optional
	EndTime *metav1.Time `json:"endTime,omitempty"`

	// Mode is KubeVirt's migration mode: PreCopy, PostCopy or PausedPostCopy; Eviction for a pod
	// evicted through the Eviction API and replaced on another node (MigrationModeEviction).
	// +optional
	// +kubebuilder:validation:MaxLength=32
	Mode string `json:"mode,omitempty"`

	// Outcome is Running, Completed, Failed or Aborted.
	// +required
	// +kubebuilder:validation:Enum=Running;Completed;Failed;Aborted
	Outcome MigrationOutcome `json:"outcome"`

	// Trigger is what started the migration: vmbench's migration benchmark, a node drain
	// (Evacuation), KubeVirt's workload update, or another migration object (User).
	// +optional
	Trigger MigrationTrigger `json:"trigger,omitempty"`

	// Object is the name of the VirtualMachineInstanceMigration, where the manager found it.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Object string `json:"object,omitempty"`

	// Policy is the MigrationPolicy KubeVirt applied to the migration (migrationState's
	// migrationPolicyName); empty when none did and the cluster's settings applied.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	Policy string `json:"policy,omitempty"`

	// Message is KubeVirt's failure reason, or its abort status, when the migration did not complete.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Message string `json:"message,omitempty"`
}
