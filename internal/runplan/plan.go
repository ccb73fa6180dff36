// Package runplan is the contract between the controller and the runner: the plan of one run that
// the controller hands to the runner, and the messages the runner reports back.
package runplan

import (
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// Plan is everything the runner on a run's master needs: who its peers are, what the nodes' limits
// are and which benchmarks to run, with every default already applied.
type Plan struct {
	Suite        string                 `json:"suite"`
	Namespace    string                 `json:"namespace"`
	Run          string                 `json:"run"`
	Platform     string                 `json:"platform"`
	PlatformType vmbenchv1.PlatformType `json:"platformType"`
	Repetition   int32                  `json:"repetition"`

	// Nodes are the run's machines; Nodes[0] is the master, on which the runner runs.
	Nodes []Node `json:"nodes"`

	// CPU and MemoryBytes are each node's limits. Tools size themselves from these, never from
	// /proc, which shows the host in a pod.
	CPU         int32 `json:"cpu"`
	MemoryBytes int64 `json:"memoryBytes"`

	// LocalDir is scratch space on every node's own disk; SharedDir is the shared volume, mounted at
	// the same path on every node, or empty when the suite has none; RootFSDir is a directory of the
	// node's root file system (a container's writable layer, a VM's root disk), where no volume is
	// mounted, or empty where the plan has none.
	LocalDir  string `json:"localDir"`
	SharedDir string `json:"sharedDir,omitempty"`
	RootFSDir string `json:"rootFSDir,omitempty"`

	// SharedExport, when set, is the directory of the master that the runner exports over NFSv4
	// (port NFSPort) and mounts at SharedDir on every node, the master included, before the first
	// benchmark: the Shared target of VMs, whose disks are their own.
	SharedExport string `json:"sharedExport,omitempty"`

	// SSHPort is the port of every node's sshd (2222: unprivileged, as the MPI Operator expects).
	SSHPort int32 `json:"sshPort"`
	// KnownHostsFile is the known_hosts that pins the run's host key: ssh to the other nodes
	// accepts no other key. Empty in a plan whose nodes are all this machine.
	KnownHostsFile string `json:"knownHostsFile,omitempty"`

	// MPIArgs are extra mpirun arguments of this platform, for example its btl and port ranges.
	MPIArgs []string `json:"mpiArgs,omitempty"`

	// NodeReadyCheck, when set, is the command that must succeed on every node but the master before
	// the run starts, rather than any command: a VM answers over ssh while cloud-init is still
	// setting it up (and restarting its sshd).
	NodeReadyCheck []string `json:"nodeReadyCheck,omitempty"`

	// Benchmarks run in this order, with defaults applied.
	Benchmarks []vmbenchv1.Benchmark `json:"benchmarks"`
}

// Node is one machine of a run.
type Node struct {
	// Name is the node's role name: master, node01, node02, ...
	Name string `json:"name"`
	// Address is the DNS name (or IP) under which the other nodes reach it.
	Address string `json:"address"`
}

// MessageKind says what a Message reports.
type MessageKind string

const (
	// KindStarted is sent once all nodes answer, before the first benchmark.
	KindStarted MessageKind = "started"
	// KindResult is sent after each execution of a benchmark on one node or pair.
	KindResult MessageKind = "result"
	// KindProbeStarted is sent when the migration benchmark's probe starts on the master (Benchmark,
	// Node, and Seconds: how long it will run), so that the controller can time the migrations.
	KindProbeStarted MessageKind = "probe-started"
	// KindDone is sent last; a run without it did not finish.
	KindDone MessageKind = "done"
)

// Message is one report of the runner. It travels framed and authenticated (package frame).
type Message struct {
	Kind MessageKind `json:"kind"`
	Run  string      `json:"run"`
	// Time is the runner's clock when it sent the message.
	Time time.Time `json:"time"`

	// Started: when each node first answered, and what the master's virtualization looks like from
	// inside (systemd-detect-virt: "kvm", "qemu", "none", ...).
	NodesReady     map[string]time.Time `json:"nodesReady,omitempty"`
	Virtualization string               `json:"virtualization,omitempty"`
	// CPUSets is, per node, the CPUs its processes may run on and the CPUs online, for telling
	// whether dedicated CPUs were granted.
	CPUSets map[string]CPUSet `json:"cpuSets,omitempty"`

	// SharedServer names the NFS server of a plan with SharedExport, with its version, e.g.
	// "nfs-kernel-server 1:2.6.2-4+deb12u1"; empty when the export could not be set up.
	// SharedMount is what SharedDir was on a node other than the master, where there is one, as its
	// /proc/self/mountinfo says: the file system's type and source, e.g. "nfs4
	// master.s-vm-1.ns.svc:/srv/vmbench-shared".
	SharedServer string `json:"sharedServer,omitempty"`
	SharedMount  string `json:"sharedMount,omitempty"`

	// Result: one execution of one benchmark.
	Benchmark string `json:"benchmark,omitempty"`
	Node      string `json:"node,omitempty"`
	// Variant tells apart the executions of one benchmark on one node, such as the block sizes of
	// sysbench-memory ("bs1K") or the targets of iozone ("shared"); its metric names carry it as a
	// prefix. Empty where a benchmark runs once per node.
	Variant string           `json:"variant,omitempty"`
	Metrics []results.Metric `json:"metrics,omitempty"`
	Error   string           `json:"error,omitempty"`
	Seconds float64          `json:"seconds,omitempty"`
	// RawTail is the end of the tool's output, kept for people to read, never parsed again.
	RawTail string `json:"rawTail,omitempty"`
	// Table is the whole result of a tool whose output holds more figures than Metrics keeps: the
	// table of an iozone auto-mode run, the time series of an iperf3 measurement. The controller keeps
	// it in the run's tables ConfigMap. TableError says why an execution that should have one has
	// none.
	Table      *results.Table `json:"table,omitempty"`
	TableError string         `json:"tableError,omitempty"`
	// Noise is what the rest of the node did while the execution ran; nil when it could not be
	// sampled.
	Noise *Noise `json:"noise,omitempty"`
	// Concurrent says that the execution ran on every node at the same moment (the benchmark's
	// concurrency AllNodes), so that its figures include the other nodes' contention.
	Concurrent bool `json:"concurrent,omitempty"`

	// Done: the time all benchmarks took together.
	BenchmarkSeconds float64 `json:"benchmarkSeconds,omitempty"`
}

// Paths and names shared by the controller's child builders and the runner.
const (
	// PlanFile is where the plan is mounted in pods and written in VMs.
	PlanFile = "/etc/vmbench/plan.json"
	// TokenEnv holds the per-suite key that authenticates the runner's frames.
	TokenEnv = "VMBENCH_TOKEN"
	// TokenFile is the alternative to TokenEnv (used in VMs).
	TokenFile = "/etc/vmbench/token"
	// DefaultSSHPort is the sshd port on every node.
	DefaultSSHPort = 2222
	// NetperfControlPort is the port of netserver on the far node of a netperf pair (netperf's own
	// default), and NetperfDataPort the port of its test connections (netperf -- -P), fixed rather
	// than ephemeral so that passt forwards it into a VM and a Host pod can declare it.
	NetperfControlPort = 12865
	NetperfDataPort    = 12866
	// NetcatPort is the port of the nc receiver on the far node of a netcat pair.
	NetcatPort = 12867
	// ProbeReportPort is where the runner on a Container run's master receives the reports of the
	// migration benchmark's probe worker pod (the container arm): a TCP port inside the run's
	// NetworkPolicy, which admits only the run's own pods.
	ProbeReportPort = 12868
	// NFSPort is the one port of the master VM's NFSv4 server, which the other VMs mount the Shared
	// target from: NFSv4 needs neither rpcbind nor mountd on the network.
	NFSPort = 2049
	// SSHDir holds, on every node of a run, the known_hosts that pins the run's host key, and in pods
	// the host key too (VMs keep theirs where sshd's default is).
	SSHDir = "/etc/ssh/vmbench"
	// KnownHostsFile is the known_hosts in SSHDir.
	KnownHostsFile = SSHDir + "/known_hosts"
)
