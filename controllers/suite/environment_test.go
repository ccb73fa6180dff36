package suite

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runenv"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/history"
)

// A VM run's environment: its VMIs' nodes, virt-launcher's image from the compute container and the
// disk's from the master VM's containerDisk container, all by digest and as the pod and VMI specs
// name them, and the VMIs' machine type; nothing until every VMI runs.
func TestEnvironmentOfAVMRun(t *testing.T) {
	vmi := func(name, role, node string, phase kubevirtv1.VirtualMachineInstancePhase) *kubevirtv1.VirtualMachineInstance {
		return &kubevirtv1.VirtualMachineInstance{
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"), Labels: map[string]string{vmbenchv1.LabelRole: role}},
			Spec: kubevirtv1.VirtualMachineInstanceSpec{Volumes: []kubevirtv1.Volume{
				{Name: "cloudinit", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{}}},
				{Name: "seed", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "seed:1"}}},
				{Name: "rootdisk", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
					Image: "127.0.0.1:5001/vmbench/vm-disk:v2"}}},
			}},
			Status: kubevirtv1.VirtualMachineInstanceStatus{NodeName: node, Phase: phase,
				Machine: &kubevirtv1.Machine{Type: "pc-q35-rhel9.6.0"}},
		}
	}
	launcher := func(v *kubevirtv1.VirtualMachineInstance, disk string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + v.Name, OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(v, kubevirtv1.VirtualMachineInstanceGroupVersionKind)}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "compute", Image: "quay.io/kubevirt/virt-launcher:v1.7.0"},
				{Name: "volumerootdisk", Image: "127.0.0.1:5001/vmbench/vm-disk:v2"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: "compute", Image: "quay.io/kubevirt/virt-launcher:v1.7.0", ImageID: "quay.io/kubevirt/virt-launcher@sha256:aaa"},
				{Name: "volumerootdisk", Image: "127.0.0.1:5001/vmbench/vm-disk:dev", ImageID: disk},
			}},
		}
	}
	master := vmi("r-master", vmbenchv1.RoleMaster, "n1", kubevirtv1.Running)
	worker := vmi("r-node01", "node", "n2", kubevirtv1.Running)
	pods := []corev1.Pod{launcher(master, "sha256:bbb"), launcher(worker, "sha256:ccc")}

	env, ready := environmentOf(vmbenchv1.PlatformVM, []client.Object{master, worker}, pods)
	if !ready {
		t.Fatal("a run whose VMIs all run is not ready")
	}
	want := vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformVM,
		LauncherImage: "quay.io/kubevirt/virt-launcher@sha256:aaa", LauncherImageRef: "quay.io/kubevirt/virt-launcher:v1.7.0",
		MachineType: "pc-q35-rhel9.6.0",
		// A bare digest is named with the image it is of, as the kubelet spells it; the reference is
		// the VMI's own, of the volume whose container it is.
		RunnerImage: "127.0.0.1:5001/vmbench/vm-disk:dev@sha256:bbb", RunnerImageRef: "127.0.0.1:5001/vmbench/vm-disk:v2",
		Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1"}, {Name: "n2"}}}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("environmentOf =\n%+v\nwant\n%+v", env, want)
	}

	for name, objs := range map[string][]client.Object{
		"a VMI still scheduling": {master, vmi("r-node02", "node", "", kubevirtv1.Scheduling)},
		"no VMI yet":             nil,
	} {
		if _, ready := environmentOf(vmbenchv1.PlatformVM, objs, pods); ready {
			t.Errorf("%s: ready", name)
		}
	}
	if _, ready := environmentOf(vmbenchv1.PlatformVM, []client.Object{master}, nil); ready {
		t.Error("a VMI without its virt-launcher pod: ready")
	}
}

// A container run is ready once every pod is on a node and every container reports its image; its
// runner image is the one the pods' spec names beside the digest the kubelet ran.
func TestEnvironmentOfAContainerRun(t *testing.T) {
	pod := func(node, imageID string) corev1.Pod {
		// The kubelet may report another tag of the same image than the spec names.
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "worker", Image: "runner:v2"}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "worker", Image: "runner:dev", ImageID: imageID}}}}
	}
	env, ready := environmentOf(vmbenchv1.PlatformContainer, nil, []corev1.Pod{pod("n2", "runner@sha256:1"), pod("n1", "runner@sha256:1")})
	if !ready || len(env.Nodes) != 2 || env.Nodes[0].Name != "n1" || env.RunnerImage != "runner@sha256:1" || env.RunnerImageRef != "runner:v2" {
		t.Errorf("environmentOf = %+v, %t", env, ready)
	}
	// A host run's pods are read the same way.
	env, ready = environmentOf(vmbenchv1.PlatformHost, nil, []corev1.Pod{pod("n1", "runner@sha256:1")})
	if !ready || env.Platform != vmbenchv1.PlatformHost || env.RunnerImageRef != "runner:v2" || len(env.Nodes) != 1 {
		t.Errorf("environmentOf a host run = %+v, %t", env, ready)
	}
	for name, pods := range map[string][]corev1.Pod{
		"a pod not scheduled":       {pod("n1", "runner@sha256:1"), pod("", "")},
		"a container without image": {pod("n1", "")},
		"no pods":                   nil,
	} {
		if _, ready := environmentOf(vmbenchv1.PlatformContainer, nil, pods); ready {
			t.Errorf("%s: ready", name)
		}
	}
}

// Equal environments are kept once, whatever their message; the fifth distinct one pushes the
// oldest out.
func TestKeepEnvironment(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	env := func(kernel string) vmbenchv1.RunEnvironment {
		return vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformContainer, Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: kernel}}}
	}
	id := keepEnvironment(st, env("6.1"))
	noted := env("6.1")
	noted.Message = "KubeVirt's version could not be read"
	if again := keepEnvironment(st, noted); again != id || len(st.Environments) != 1 {
		t.Fatalf("the same environment again: id %s (first %s), %d entries", again, id, len(st.Environments))
	}
	if len(id) != 12 {
		t.Errorf("id %q is not 12 hex digits", id)
	}
	for i := 2; i <= 5; i++ {
		keepEnvironment(st, env(fmt.Sprintf("6.%d", i)))
	}
	if len(st.Environments) != maxEnvironments {
		t.Fatalf("%d environments kept, want %d", len(st.Environments), maxEnvironments)
	}
	if st.Environments[0].Nodes[0].KernelVersion != "6.2" || st.Environments[3].Nodes[0].KernelVersion != "6.5" {
		t.Errorf("kept %s..%s, want 6.2..6.5", st.Environments[0].Nodes[0].KernelVersion, st.Environments[3].Nodes[0].KernelVersion)
	}

	// Over its budget, the status keeps the newest environment of each platform type.
	vm := vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformVM, KubeVirtVersion: "v1.7.0"}
	vm.ID = keepEnvironment(st, vm)
	if !summary.NewestEnvironments(st) {
		t.Fatal("newestEnvironments changed nothing")
	}
	if len(st.Environments) != 2 || st.Environments[0].Nodes[0].KernelVersion != "6.5" || st.Environments[1].ID != vm.ID {
		t.Errorf("newestEnvironments kept %+v, want the 6.5 container environment and the VM one", st.Environments)
	}
	if summary.NewestEnvironments(st) {
		t.Error("newestEnvironments changed a list with one entry per platform type")
	}
}

// The node's versions come from its kubelet's nodeInfo, its CPU model from KubeVirt's labeller.
func TestNodeEnvironment(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{
		"host-model-cpu.node.kubevirt.io/Cascadelake-Server": "true", "cpu-model.node.kubevirt.io/Skylake-Server": "true"}},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KernelVersion: "6.1.0-40-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)",
			ContainerRuntimeVersion: "containerd://1.7.24", KubeletVersion: "v1.36.3", Architecture: "amd64"}}}
	got := runenv.NodeEnvironment(n)
	want := vmbenchv1.NodeEnvironment{Name: "n1", KernelVersion: "6.1.0-40-amd64", OSImage: "Debian GNU/Linux 12 (bookworm)",
		ContainerRuntimeVersion: "containerd://1.7.24", KubeletVersion: "v1.36.3", Architecture: "amd64", CPUModel: "Cascadelake-Server"}
	if got != want {
		t.Errorf("nodeEnvironment = %+v, want %+v", got, want)
	}
}

// What a suite measures decides its hash; how often it runs does not.
func TestParametersHash(t *testing.T) {
	a := testSuite(vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
		vmbenchv1.Benchmark{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory})
	h := parametersHash(a)
	b := a.DeepCopy()
	b.Spec.Repetitions++
	if parametersHash(b) != h {
		t.Error("more repetitions changed the parameters hash")
	}
	c := a.DeepCopy()
	c.Spec.Cluster.Nodes = 5
	if parametersHash(c) == h {
		t.Error("another cluster shape kept the parameters hash")
	}
	d := a.DeepCopy()
	d.Spec.Benchmarks = d.Spec.Benchmarks[:len(d.Spec.Benchmarks)-1]
	if parametersHash(d) == h {
		t.Error("a benchmark less kept the parameters hash")
	}
}

// KubeVirt's version is the one its CR reports deployed.
func TestKubeVirtVersion(t *testing.T) {
	kv := unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"observedKubeVirtVersion": "v1.7.0"}}}
	if got := runenv.KubeVirtVersion([]unstructured.Unstructured{{Object: map[string]any{}}, kv}); got != "v1.7.0" {
		t.Errorf("kubeVirtVersion = %q", got)
	}
}

// The same digest under a new tag is another environment, in a suite's status and between two
// records; so is a new digest under the same tag.
func TestRunnerImageRefMakesAnEnvironment(t *testing.T) {
	env := func(digest, ref string) vmbenchv1.RunEnvironment {
		return vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformContainer, RunnerImage: "registry.example/vmbench-runner@sha256:" + digest,
			RunnerImageRef: ref, Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.1"}}}
	}
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	a := keepEnvironment(st, env("1", "registry.example/vmbench-runner:a"))
	b := keepEnvironment(st, env("1", "registry.example/vmbench-runner:b"))
	if a == b || len(st.Environments) != 2 {
		t.Errorf("a new tag of the same digest: IDs %s and %s, %d environments; want two", a, b, len(st.Environments))
	}

	tests := []struct {
		name          string
		before, after vmbenchv1.RunEnvironment
		want          []string
	}{
		{"a new tag of the same digest", env("1", "registry.example/vmbench-runner:a"), env("1", "registry.example/vmbench-runner:b"),
			[]string{"runnerImageRef: registry.example/vmbench-runner:a → registry.example/vmbench-runner:b"}},
		{"a new digest under the same tag", env("1", "registry.example/vmbench-runner:a"), env("2", "registry.example/vmbench-runner:a"),
			[]string{"runnerImage: registry.example/vmbench-runner@sha256:1 → registry.example/vmbench-runner@sha256:2"}},
		{"nothing", env("1", "registry.example/vmbench-runner:a"), env("1", "registry.example/vmbench-runner:a"), nil},
		{"QEMU's machine type", vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformVM, MachineType: "pc-q35-rhel9.4.0"},
			vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformVM, MachineType: "pc-q35-rhel9.6.0"},
			[]string{"machineType: pc-q35-rhel9.4.0 → pc-q35-rhel9.6.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := history.EnvironmentChanges([]vmbenchv1.RunEnvironment{tt.before}, []vmbenchv1.RunEnvironment{tt.after})
			if !slices.Equal(got, tt.want) {
				t.Errorf("EnvironmentChanges() = %q, want %q", got, tt.want)
			}
		})
	}
}
