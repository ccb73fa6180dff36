package v1alpha1

// Parameters of type hpcc: the HPC Challenge run across the nodes of a run, with its HPL sweep.

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
