// Package platform holds one adapter per kind of child that runs a suite's benchmarks: MPIJobs for
// container and host platforms, VirtualMachineInstances for VM platforms. An adapter builds a run's
// children, reads the run's outcome from them, and says where the runner's log is.
package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Phase is a run's state as its children show it.
type Phase string

const (
	PhasePending   Phase = "Pending"
	PhaseRunning   Phase = "Running"
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
)

// Outcome is what an adapter reads from a run's children.
type Outcome struct {
	Phase Phase
	// Message explains a failure, in words from the child's own status.
	Message string
	// Gone names a child that the run needs and that is missing. The controller confirms it around
	// its cache before it fails the run.
	Gone *ChildRef
}

// ChildRef names one child of a run.
type ChildRef struct {
	GVK  schema.GroupVersionKind
	Name string
}

func (c ChildRef) String() string { return c.GVK.Kind + " " + c.Name }

// Finished reports whether the run's children are done, successfully or not.
func (o Outcome) Finished() bool { return o.Phase == PhaseSucceeded || o.Phase == PhaseFailed }

// Images are the images the children run.
type Images struct {
	// Runner is the image of MPIJob launchers and workers.
	Runner string
	// VMDisk is the containerDisk image of VMs.
	VMDisk string
	// PullPolicy applies to both; IfNotPresent lets preloaded images work without a registry.
	PullPolicy corev1.PullPolicy
}

// Run is one platform's cluster running every benchmark once: the input of every adapter.
type Run struct {
	Suite      *vmbenchv1.BenchmarkSuite
	Name       string
	Platform   vmbenchv1.Platform
	Repetition int32
	// Benchmarks are the suite's benchmarks with defaults applied.
	Benchmarks []vmbenchv1.Benchmark
	// AuthSecret is the run's own Secret with its frame token (and a VM run's SSH key pair); Auth is
	// its content, derived from the manager's master key for this run alone.
	AuthSecret string
	Auth       Auth
	// SecretsOwner is the UID of the run's object that owns its Secrets (the garbage collector
	// deletes them with it). Their names end with a hash of it (SecretName): a Secret of such a name
	// can only have been made by an earlier attempt to start this run, with the same content.
	SecretsOwner types.UID
	Images       Images
	// Deadline bounds the run's children: a backstop behind the runner's own per-benchmark timeouts.
	Deadline time.Duration
	// VMNetwork is the VM interface binding chosen for this cluster; a VM platform's own
	// vm.networkBinding takes its place (RunVMNetwork).
	VMNetwork VMNetwork
	// NetworkPolicy adds a NetworkPolicy that admits connections to the run's pods only from the
	// run's own pods. Host runs get none: they share their nodes' network, which no NetworkPolicy
	// governs.
	NetworkPolicy bool
}

// Children are the objects that exist for one run, as listed by the controller.
type Children struct {
	Objects []client.Object
}

// LogSource says which pod's log carries the runner's frames. Labels alone do not say it: anyone who
// may create pods in the namespace can copy them. The pod must also be controlled by the run's child
// Owner, directly or, when Via is set, through the object Via names, which Owner controls (the MPI
// Operator's launcher Job). The controller checks the UIDs of that chain before it reads a log.
type LogSource struct {
	Selector  labels.Set
	Container string
	Owner     ChildRef
	Via       *ChildRef
}

// Adapter is one kind of platform.
type Adapter interface {
	// Kinds are the GVKs this adapter creates; the controller watches and cleans up each of them.
	Kinds() []schema.GroupVersionKind
	// Build returns every child of the run. It is pure: the same run gives the same objects.
	Build(run Run) ([]client.Object, error)
	// Observe reads the run's outcome from its children. PhaseRunning means that the run's whole
	// cluster is up; PhasePending that it is still starting.
	Observe(run Run, children Children) Outcome
	// LogSource says where the runner's frames can be read.
	LogSource(run Run) LogSource
}

// For returns the adapter of a platform type.
func For(t vmbenchv1.PlatformType) (Adapter, error) {
	switch t {
	case vmbenchv1.PlatformContainer, vmbenchv1.PlatformHost:
		return MPIJobAdapter{}, nil
	case vmbenchv1.PlatformVM:
		return VMIAdapter{}, nil
	}
	return nil, fmt.Errorf("platform type %q is not supported: use Container, VM or Host", t)
}

// NodeNames are the role names of a run's nodes: master, node01, node02, ...
func NodeNames(nodes int32) []string {
	names := make([]string, 0, nodes)
	names = append(names, vmbenchv1.RoleMaster)
	for i := int32(1); i < nodes; i++ {
		names = append(names, fmt.Sprintf("node%02d", i))
	}
	return names
}

// runLabels go on every child of a run and on the pods and VMs inside it.
func runLabels(run Run) map[string]string {
	return map[string]string{
		vmbenchv1.LabelSuite:    run.Suite.Name,
		vmbenchv1.LabelRun:      run.Name,
		vmbenchv1.LabelPlatform: run.Platform.Name,
	}
}

func withRole(l map[string]string, role string) map[string]string {
	out := make(map[string]string, len(l)+1)
	for k, v := range l {
		out[k] = v
	}
	out[vmbenchv1.LabelRole] = role
	return out
}

// SecretName is the name of one of a run's Secrets: base, then a hash of the UID of the object that
// owns the run's Secrets. Names that differ for every owner let the manager create its Secrets
// without ever reading or overwriting one: an existing Secret of that name is an earlier attempt's.
func SecretName(run Run, base string) string {
	if run.SecretsOwner == "" {
		return base
	}
	sum := sha256.Sum256([]byte(run.SecretsOwner))
	return base + "-" + hex.EncodeToString(sum[:])[:10]
}

func objectMeta(run Run, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: run.Suite.Namespace, Labels: runLabels(run)}
}

// NewPlan is the runner's plan for a run whose nodes are reachable at the given addresses.
func NewPlan(run Run, nodes []runplan.Node, localDir, sharedDir string, mpiArgs []string) runplan.Plan {
	shape := run.Suite.Spec.Cluster
	mem := shape.MemoryLimit()
	return runplan.Plan{
		Suite:        run.Suite.Name,
		Namespace:    run.Suite.Namespace,
		Run:          run.Name,
		Platform:     run.Platform.Name,
		PlatformType: run.Platform.Type,
		Repetition:   run.Repetition,
		Nodes:        nodes,
		CPU:          shape.CPULimit(),
		MemoryBytes:  mem.Value(),
		LocalDir:     localDir,
		SharedDir:    sharedDir,
		SSHPort:      runplan.DefaultSSHPort,
		MPIArgs:      mpiArgs,
		Benchmarks:   run.Benchmarks,
	}
}

// resources are the requests and limits of every node: Guaranteed QoS unless the suite lowered the
// requests.
func resources(shape vmbenchv1.ClusterShape) corev1.ResourceRequirements {
	cpuRequest, memoryRequest := shape.Requests()
	return corev1.ResourceRequirements{
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    *resourceCPU(shape.CPULimit()),
			corev1.ResourceMemory: shape.MemoryLimit(),
		},
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    cpuRequest,
			corev1.ResourceMemory: memoryRequest,
		},
	}
}

// UsesShared reports whether any benchmark writes to the shared storage target.
func UsesShared(benchmarks []vmbenchv1.Benchmark) bool {
	return vmbenchv1.UsesStorageTarget(benchmarks, vmbenchv1.StorageShared)
}

// SharedClaimName is the name of a Container or Host run's ReadWriteMany claim for the Shared target.
func SharedClaimName(run string) string { return run + "-shared" }
