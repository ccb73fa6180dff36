package preflight

import (
	"fmt"
	"slices"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/platform"
)

// Member is one pod of a run: an MPIJob's launcher or worker, or a VM's virt-launcher pod.
type Member struct {
	// Containers carry the resources the scheduler, quotas and limit ranges count.
	Containers []corev1.Container
	// Estimated is set on virt-launcher pods, which KubeVirt builds: their memory request adds an
	// estimate of KubeVirt's overhead to the VM's.
	Estimated bool
}

// Requests is the sum of the member's container requests.
func (m Member) Requests() corev1.ResourceList { return sumResources(m.Containers, false) }

// Limits is the sum of the member's container limits; a resource that some container does not limit
// is left out.
func (m Member) Limits() corev1.ResourceList { return sumResources(m.Containers, true) }

func sumResources(containers []corev1.Container, limits bool) corev1.ResourceList {
	out := corev1.ResourceList{}
	unlimited := map[corev1.ResourceName]bool{}
	for _, c := range containers {
		list := c.Resources.Requests
		if limits {
			list = c.Resources.Limits
			for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := list[name]; !ok {
					unlimited[name] = true
				}
			}
		}
		for name, q := range list {
			sum := out[name]
			sum.Add(q)
			out[name] = sum
		}
	}
	for name := range unlimited {
		delete(out, name)
	}
	return out
}

// PlatformNeeds is what one run of a platform puts into the namespace.
type PlatformNeeds struct {
	Platform vmbenchv1.Platform
	// Members are the run's pods.
	Members []Member
	// Pods are the pod templates vmbench builds itself (MPIJob launchers and workers), which Pod
	// Security admits or refuses; VMs' pods are KubeVirt's.
	Pods []corev1.PodTemplateSpec
	// Objects counts the run's objects under their ResourceQuota names (count/mpijobs.kubeflow.org,
	// services, ...), those the MPI Operator adds included.
	Objects map[corev1.ResourceName]int64
}

// VM reports whether the platform runs VMs.
func (p PlatformNeeds) VM() bool { return p.Platform.Type == vmbenchv1.PlatformVM }

// Needs is what a suite asks of the cluster, derived from the children vmbench would build for one
// run of each platform.
type Needs struct {
	// Suite names the suite in messages.
	Suite string
	// Explicit is set when the suite came from -f; the default suite's platform-specific problems
	// are warnings, since its user may not use that platform.
	Explicit  bool
	Namespace string
	Cluster   vmbenchv1.ClusterShape
	Placement vmbenchv1.Placement
	Platforms []PlatformNeeds
	// Shared is the suite's shared storage when a benchmark uses the Shared target and a Container or
	// Host platform runs it: VMs share their master's disk over NFS instead.
	Shared *vmbenchv1.SharedStorage
	// Images are the manager's images.
	Images platform.Images
}

// UsesMPIJob reports whether a platform runs as an MPIJob (Container and Host).
func (n Needs) UsesMPIJob() bool {
	for _, p := range n.Platforms {
		if !p.VM() {
			return true
		}
	}
	return false
}

// UsesVMI reports whether a platform runs VMs.
func (n Needs) UsesVMI() bool {
	for _, p := range n.Platforms {
		if p.VM() {
			return true
		}
	}
	return false
}

// severity is Fail when the suite came from -f and Warn for the default suite.
func (n Needs) severity() Result {
	if n.Explicit {
		return Fail
	}
	return Warn
}

// DefaultSuite is what preflight checks without -f: the API's defaults (3 nodes of 2 CPUs and 2Gi,
// a container and a VM platform) and one benchmark of every type.
func DefaultSuite() *vmbenchv1.BenchmarkSuite {
	suite := &vmbenchv1.BenchmarkSuite{}
	suite.Name = "default"
	for _, t := range []vmbenchv1.BenchmarkType{
		vmbenchv1.BenchmarkHPCC, vmbenchv1.BenchmarkSysbenchCPU, vmbenchv1.BenchmarkSysbenchMemory,
		vmbenchv1.BenchmarkStressNGCPU, vmbenchv1.BenchmarkStressNGVM, vmbenchv1.BenchmarkIozone,
		vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkPing, vmbenchv1.BenchmarkFio,
		vmbenchv1.BenchmarkNetperf, vmbenchv1.BenchmarkNetcat,
	} {
		suite.Spec.Benchmarks = append(suite.Spec.Benchmarks, vmbenchv1.Benchmark{Name: string(t), Type: t})
	}
	return suite
}

// defaultPlatforms are the API's default for spec.platforms.
func defaultPlatforms() []vmbenchv1.Platform {
	return []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}}
}

// NewNeeds builds one run of every platform of the suite, with the API's defaults applied, in the
// namespace, and reads what they need from the children.
func NewNeeds(suite *vmbenchv1.BenchmarkSuite, explicit bool, namespace string, images platform.Images) (Needs, error) {
	suite = suite.DeepCopy()
	suite.Namespace = namespace
	if suite.Name == "" {
		suite.Name = "preflight"
	}
	if len(suite.Spec.Platforms) == 0 {
		suite.Spec.Platforms = defaultPlatforms()
	}
	benchmarks := suitecontroller.DefaultedBenchmarks(suite)
	needs := Needs{
		Suite: suite.Name, Explicit: explicit, Namespace: namespace,
		Cluster: suite.Spec.Cluster, Placement: suite.Spec.Placement, Images: images,
	}
	if suite.Spec.SharedStorage != nil && platform.UsesShared(benchmarks) && slices.ContainsFunc(suite.Spec.Platforms,
		func(p vmbenchv1.Platform) bool { return p.Type != vmbenchv1.PlatformVM }) {
		needs.Shared = suite.Spec.SharedStorage
	}
	for _, p := range suite.Spec.Platforms {
		adapter, err := platform.For(p.Type)
		if err != nil {
			return Needs{}, err
		}
		run := platform.Run{
			Suite: suite, Name: fmt.Sprintf("%s-%s-1", suite.Name, p.Name), Platform: p, Repetition: 1,
			Benchmarks: benchmarks, AuthSecret: suite.Name + "-auth", Images: images,
			// Any value does: only the shape of the children matters here.
			Auth: platform.Auth{Token: []byte("preflight"), SSHPrivateKey: []byte("preflight"), SSHPublicKey: []byte("preflight"),
				SSHHostKey: []byte("preflight"), SSHHostPublicKey: []byte("preflight"), KnownHosts: []byte("preflight")},
			Deadline: time.Hour,
		}
		objs, err := adapter.Build(run)
		if err != nil {
			return Needs{}, fmt.Errorf("platform %s: %w", p.Name, err)
		}
		needs.Platforms = append(needs.Platforms, platformNeeds(p, suite.Spec.Cluster, objs))
	}
	return needs, nil
}

// Objects the MPI Operator (v2beta1) makes for every MPIJob: the launcher's Job, a headless Service,
// a ConfigMap with the hostfile and a Secret with the SSH keys.
var mpiOperatorObjects = map[corev1.ResourceName]int64{
	"count/jobs.batch": 1, corev1.ResourceServices: 1, corev1.ResourceConfigMaps: 1, corev1.ResourceSecrets: 1,
}

// Quota names of the object counts that preflight checks.
const (
	quotaMPIJobs = corev1.ResourceName("count/mpijobs.kubeflow.org")
	quotaVMIs    = corev1.ResourceName("count/virtualmachineinstances.kubevirt.io")
)

func platformNeeds(p vmbenchv1.Platform, shape vmbenchv1.ClusterShape, objs []client.Object) PlatformNeeds {
	out := PlatformNeeds{Platform: p, Objects: map[corev1.ResourceName]int64{}}
	count := func(name corev1.ResourceName, n int64) { out.Objects[name] += n }
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			count(corev1.ResourceConfigMaps, 1)
		case *corev1.Secret:
			count(corev1.ResourceSecrets, 1)
		case *corev1.Service:
			count(corev1.ResourceServices, 1)
		case *corev1.PersistentVolumeClaim:
			count(corev1.ResourcePersistentVolumeClaims, 1)
			if q, ok := o.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
				count(corev1.ResourceRequestsStorage, q.Value())
			}
		case *mpiv2.MPIJob:
			count(quotaMPIJobs, 1)
			for name, n := range mpiOperatorObjects {
				count(name, n)
			}
			for _, role := range []mpiv2.MPIReplicaType{mpiv2.MPIReplicaTypeLauncher, mpiv2.MPIReplicaTypeWorker} {
				spec := o.Spec.MPIReplicaSpecs[role]
				if spec == nil {
					continue
				}
				replicas := int32(1)
				if spec.Replicas != nil {
					replicas = *spec.Replicas
				}
				for range replicas {
					out.Members = append(out.Members, Member{Containers: spec.Template.Spec.Containers})
				}
				out.Pods = append(out.Pods, spec.Template)
			}
		case *kubevirtv1.VirtualMachineInstance:
			count(quotaVMIs, 1)
			out.Members = append(out.Members, virtLauncher(o, shape))
		}
	}
	count(corev1.ResourcePods, int64(len(out.Members)))
	return out
}

// virtLauncher estimates the compute container of a VM's virt-launcher pod: the VMI's requests and
// limits, with KubeVirt's memory overhead added to the memory request. With huge pages, KubeVirt asks
// for the guest's memory as huge pages and for the overhead alone as memory; an isolated emulator
// thread takes one more CPU. KubeVirt's small sidecars (the serial console logger) are left out.
func virtLauncher(vmi *kubevirtv1.VirtualMachineInstance, shape vmbenchv1.ClusterShape) Member {
	res := vmi.Spec.Domain.Resources
	requests, limits := res.Requests.DeepCopy(), res.Limits.DeepCopy()
	overhead := VMMemoryOverhead(shape.CPULimit(), shape.MemoryLimit())
	memory := requests[corev1.ResourceMemory]
	if m := vmi.Spec.Domain.Memory; m != nil && m.Hugepages != nil {
		pages := corev1.ResourceName(corev1.ResourceHugePagesPrefix + m.Hugepages.PageSize)
		requests[pages] = memory.DeepCopy()
		if limits == nil {
			limits = corev1.ResourceList{}
		}
		limits[pages] = memory.DeepCopy()
		memory = resource.Quantity{}
		if _, ok := limits[corev1.ResourceMemory]; ok {
			limits[corev1.ResourceMemory] = overhead
		}
	}
	memory.Add(overhead)
	requests[corev1.ResourceMemory] = memory
	if cpu := vmi.Spec.Domain.CPU; cpu != nil && cpu.IsolateEmulatorThread {
		for _, list := range []corev1.ResourceList{requests, limits} {
			if q, ok := list[corev1.ResourceCPU]; ok {
				q.Add(*resource.NewQuantity(1, resource.DecimalSI))
				list[corev1.ResourceCPU] = q
			}
		}
	}
	return Member{
		Containers: []corev1.Container{{Name: "compute", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits}}},
		Estimated:  true,
	}
}

// VMMemoryOverhead estimates what KubeVirt adds to a VM's memory request for its virt-launcher pod:
// its own processes (virt-launcher, virtqemud, virtlogd and QEMU itself, about 200Mi), video memory
// (16Mi), 8Mi per vCPU and the guest's page tables (1/512 of its memory). It is an estimate: the
// exact figure depends on KubeVirt's version and the VM's devices.
func VMMemoryOverhead(cpus int32, guest resource.Quantity) resource.Quantity {
	const mi = 1 << 20
	bytes := int64(216*mi) + int64(cpus)*8*mi + guest.Value()/512
	// Rounded up to whole MiB, so that messages read well.
	bytes = (bytes + mi - 1) / mi * mi
	return *resource.NewQuantity(bytes, resource.BinarySI)
}
