package preflight

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// variantNeeds is the quick sample's shape with whole requests (3 nodes of 1 CPU, 1Gi), a container
// baseline and a VM platform "vmtuned" with the given settings.
func variantNeeds(t *testing.T, vm vmbenchv1.VMSettings) Needs {
	t.Helper()
	s := shaped(t, 1, "", "1Gi", vmbenchv1.PlatformContainer, vmbenchv1.PlatformVM)
	s.Spec.Platforms[1].Name, s.Spec.Platforms[1].VM = "vmtuned", &vm
	return needsOf(t, s, true)
}

// kubeVirtOf reads a KubeVirt CR with the given annotations and spec.configuration.
func kubeVirtOf(emulation bool, annotations map[string]string, configuration map[string]any) KubeVirtConfig {
	configuration["developerConfiguration"] = map[string]any{"useEmulation": emulation}
	kv := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"configuration": configuration}}}
	kv.SetAnnotations(annotations)
	return KubeVirtConfigOf([]unstructured.Unstructured{kv})
}

// kindKubeVirt is the KubeVirt CR that hack/kind/kubevirt.sh writes on this machine: emulation, and the
// passt binding registered because the kernel has no dummy links.
func kindKubeVirt() KubeVirtConfig {
	return kubeVirtOf(true, map[string]string{"vmbench.io/kvm": "tcg: /dev/kvm cannot run a guest", "vmbench.io/vm-network": "passt"},
		map[string]any{"imagePullPolicy": "IfNotPresent", "network": map[string]any{"binding": map[string]any{
			"passt": map[string]any{"sidecarImage": "vmbench/network-passt-binding:v1.7.0"}}}})
}

// pinning is a node whose kubelet has the static CPU manager, as KubeVirt labels it.
func pinning(n *corev1.Node) { n.Labels[LabelCPUManager] = "true" }

func hugepages(size, amount string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Status.Allocatable[corev1.ResourceName(corev1.ResourceHugePagesPrefix+size)] = resource.MustParse(amount)
	}
}

func TestCheckVMSettings(t *testing.T) {
	kvmNodes := func(opts ...func(*corev1.Node)) []corev1.Node {
		return []corev1.Node{
			node("a", "4", "8Gi", append([]func(*corev1.Node){kubeVirtNode("1k")}, opts...)...),
			node("b", "4", "8Gi", append([]func(*corev1.Node){kubeVirtNode("1k")}, opts...)...),
		}
	}
	kvm := kubeVirtOf(false, nil, map[string]any{})
	cpuManagerGate := kubeVirtOf(false, nil, map[string]any{})
	cpuManagerGate.Features.FeatureGates = []string{"CPUManager"}
	cases := []struct {
		name   string
		vm     vmbenchv1.VMSettings
		nodes  []corev1.Node
		kv     KubeVirtConfig
		result Result
		detail []string
		action []string
	}{
		{"passt on the kind cluster", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst, DiskBus: vmbenchv1.VMDiskBusSCSI},
			kindNodes(t), kindKubeVirt(), Pass, []string{"Passt binding offered", "disk bus scsi"}, nil},
		{"bridge on the kind cluster, whose kernel has no dummy links", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingBridge},
			kindNodes(t), kindKubeVirt(), Fail, []string{"platform vmtuned asks for vm.networkBinding Bridge", "dummy link", "vmbench.io/vm-network: passt"}, nil},
		{"passt where KubeVirt does not register it", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst},
			kvmNodes(), kvm, Fail, []string{"registers no passt binding plugin (spec.configuration.network.binding.passt)", "set vm.networkBinding to Bridge or Masquerade"}, nil},
		{"dedicated CPUs on the kind cluster", vmbenchv1.VMSettings{DedicatedCPUs: true}, kindNodes(t), kindKubeVirt(), Fail,
			[]string{"dedicated CPUs: KubeVirt places such VMs only on nodes labelled cpumanager=true, and no node the suite may use is"},
			[]string{"--cpu-manager-policy=static", "add CPUManager to the KubeVirt CR's spec.configuration.developerConfiguration.featureGates (it lists none)", "or remove vm.dedicatedCPUs"}},
		{"dedicated CPUs where the gate is on but no kubelet pins", vmbenchv1.VMSettings{DedicatedCPUs: true}, kvmNodes(), cpuManagerGate, Fail,
			[]string{"no node the suite may use is"}, []string{"--cpu-manager-policy=static, so that virt-handler labels them"}},
		{"dedicated CPUs on pinning nodes", vmbenchv1.VMSettings{DedicatedCPUs: true, IsolateEmulatorThread: true},
			kvmNodes(pinning), cpuManagerGate, Pass,
			[]string{"dedicated CPUs on nodes labelled cpumanager=true: room for 4 (node a 2, node b 2)", "one more CPU per VM for the emulator thread"}, nil},
		{"dedicated CPUs on too few pinning nodes", vmbenchv1.VMSettings{DedicatedCPUs: true, IsolateEmulatorThread: true},
			[]corev1.Node{node("a", "4", "8Gi", kubeVirtNode("1k"), pinning), node("b", "4", "8Gi", kubeVirtNode("1k"))}, cpuManagerGate, Fail,
			[]string{"the run's 3 VMs of 2 CPUs", "need room for 3 on nodes labelled cpumanager=true, which have room for 2: node a 2"},
			[]string{"give more nodes the static CPU manager"}},
		{"2Mi pages on the kind cluster, which has none", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, kindNodes(t), kindKubeVirt(), Fail,
			[]string{"huge pages: the run's 3 VMs need 1Gi of 2Mi pages each (allocatable hugepages-2Mi), the nodes have room for 0: node vmbench-worker 0 (0)"},
			[]string{"vm.nr_hugepages", "restart their kubelets, which report them as hugepages-2Mi", "or remove vm.hugepages"}},
		{"1Gi pages where the nodes have 2Mi pages", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi}, kvmNodes(hugepages("2Mi", "4Gi")), kvm, Fail,
			[]string{"allocatable hugepages-1Gi), the nodes have room for 0"}, []string{"hugepagesz=1G"}},
		{"2Mi pages for three VMs", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, kvmNodes(hugepages("2Mi", "2Gi")), kvm, Pass,
			[]string{"2Mi huge pages: room for 4 (node a 2Gi (2), node b 2Gi (2))"}, nil},
		{"cache none, which needs O_DIRECT", vmbenchv1.VMSettings{DiskCache: vmbenchv1.VMDiskCacheNone}, kvmNodes(), kvm, Warn,
			[]string{"disk cache none", "needs O_DIRECT", "does not support direct I/O"}, nil},
		{"IO threads under emulation", vmbenchv1.VMSettings{IOThreads: vmbenchv1.VMIOThreadsAuto, DedicatedIOThread: true}, kindNodes(t), kindKubeVirt(), Warn,
			[]string{"IO threads auto", "a dedicated IO thread", "under emulation (useEmulation: true)", "change little"}, nil},
		{"writeback on KVM", vmbenchv1.VMSettings{DiskCache: vmbenchv1.VMDiskCacheWriteback}, kvmNodes(), kvm, Pass, []string{"disk cache writeback"}, nil},
		{"an empty block", vmbenchv1.VMSettings{}, kvmNodes(), kvm, Pass, []string{"as asked"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checks := CheckVMSettings(variantNeeds(t, tc.vm), tc.nodes, tc.kv, nil)
			if len(checks) != 1 {
				t.Fatalf("%d checks, want 1 for the one platform with a vm block: %+v", len(checks), checks)
			}
			c := checks[0]
			if c.Name != "vm/vmtuned" {
				t.Errorf("check %q, want vm/vmtuned", c.Name)
			}
			expect(t, c, tc.result, tc.detail...)
			for _, a := range tc.action {
				expect(t, Check{Name: c.Name, Result: c.Result, Detail: c.Action}, c.Result, a)
			}
		})
	}
}

func TestCheckVMSettingsWithoutKubeVirt(t *testing.T) {
	needs := variantNeeds(t, vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst})
	expect(t, byName(CheckVMSettings(needs, kindNodes(t), KubeVirtConfig{}, nil), "vm/vmtuned"), Skip, "KubeVirt is not deployed")
	expect(t, byName(CheckVMSettings(needs, kindNodes(t), KubeVirtConfig{}, errors.New("kubevirts.kubevirt.io is forbidden")), "vm/vmtuned"),
		Warn, "cannot read KubeVirt's configuration (kubevirts.kubevirt.io): kubevirts.kubevirt.io is forbidden")
	if checks := CheckVMSettings(needsOf(t, quick(t), true), kindNodes(t), kindKubeVirt(), nil); len(checks) != 0 {
		t.Errorf("platforms without a vm block got checks: %+v", checks)
	}
}

// The fit of a run counts what KubeVirt asks the scheduler for: huge pages instead of the guest's
// memory, and one more CPU for an isolated emulator thread.
func TestVirtLauncherOfVMSettings(t *testing.T) {
	plain := variantNeeds(t, vmbenchv1.VMSettings{})
	tuned := variantNeeds(t, vmbenchv1.VMSettings{DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: vmbenchv1.VMHugepages2Mi})
	overhead := VMMemoryOverhead(1, resource.MustParse("1Gi"))
	for _, tc := range []struct {
		name     string
		needs    Needs
		requests map[corev1.ResourceName]string
		limits   map[corev1.ResourceName]string
	}{
		{"default VM", plain, map[corev1.ResourceName]string{corev1.ResourceCPU: "1", corev1.ResourceMemory: "1Gi+overhead"},
			map[corev1.ResourceName]string{corev1.ResourceCPU: "1"}},
		{"tuned VM", tuned, map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "overhead", "hugepages-2Mi": "1Gi"},
			map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "overhead", "hugepages-2Mi": "1Gi"}},
	} {
		vm := tc.needs.Platforms[1]
		if len(vm.Members) != 3 {
			t.Fatalf("%s: %d members", tc.name, len(vm.Members))
		}
		for _, side := range []struct {
			got  corev1.ResourceList
			want map[corev1.ResourceName]string
		}{{vm.Members[0].Requests(), tc.requests}, {vm.Members[0].Containers[0].Resources.Limits, tc.limits}} {
			if len(side.got) != len(side.want) {
				t.Errorf("%s: %v, want %v", tc.name, side.got, side.want)
			}
			for name, w := range side.want {
				want := resource.Quantity{}
				switch w {
				case "overhead":
					want = overhead
				case "1Gi+overhead":
					want = resource.MustParse("1Gi")
					want.Add(overhead)
				default:
					want = resource.MustParse(w)
				}
				if got := side.got[name]; got.Cmp(want) != 0 {
					t.Errorf("%s: %s %s, want %s", tc.name, name, got.String(), want.String())
				}
			}
		}
	}
}
