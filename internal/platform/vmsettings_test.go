package platform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// withVM is the VM platform with the given settings.
func withVM(vm *vmbenchv1.VMSettings) vmbenchv1.Platform {
	p := vmPlatform
	p.VM = vm
	return p
}

// vmsOf builds the run's VMIs on the platform with the given settings, the suite's cluster shape left
// as testRun sets it.
func vmsOf(t *testing.T, run Run, vm *vmbenchv1.VMSettings) map[string]*kubevirtv1.VirtualMachineInstance {
	t.Helper()
	run.Platform = withVM(vm)
	run.Suite.Spec.Platforms = []vmbenchv1.Platform{run.Platform}
	return buildVMs(t, run).vmis
}

func rootDisk(vmi *kubevirtv1.VirtualMachineInstance) *kubevirtv1.Disk {
	for i := range vmi.Spec.Domain.Devices.Disks {
		if vmi.Spec.Domain.Devices.Disks[i].Name == vmRootDisk {
			return &vmi.Spec.Domain.Devices.Disks[i]
		}
	}
	return nil
}

// Each setting changes exactly its own fields of every VMI, against the VMI of the same suite without
// the block; the cloud-init disk stays virtio and uncached whatever the root disk gets.
func TestVMSettingsChangeOnlyTheirFields(t *testing.T) {
	cases := []struct {
		name string
		vm   vmbenchv1.VMSettings
		// network is the binding the manager chose for the cluster.
		network VMNetwork
		want    func(vmi *kubevirtv1.VirtualMachineInstance)
	}{
		{"empty block", vmbenchv1.VMSettings{}, VMNetworkPasst, func(*kubevirtv1.VirtualMachineInstance) {}},
		{"networkBinding Masquerade", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.Devices.Interfaces[0] = kubevirtv1.Interface{Name: vmInterfaceName,
					InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Masquerade: &kubevirtv1.InterfaceMasquerade{}}}
			}},
		{"networkBinding Bridge", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingBridge}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.Devices.Interfaces[0] = kubevirtv1.Interface{Name: vmInterfaceName,
					InterfaceBindingMethod: kubevirtv1.InterfaceBindingMethod{Bridge: &kubevirtv1.InterfaceBridge{}}}
			}},
		{"networkBinding Passt where the manager chose bridge", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst}, VMNetworkBridge,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.Devices.Interfaces[0] = kubevirtv1.Interface{Name: vmInterfaceName,
					Binding: &kubevirtv1.PluginBinding{Name: "passt"}, Ports: vmPorts(vmRun().Benchmarks)}
			}},
		{"diskBus sata", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSATA}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { rootDisk(vmi).Disk.Bus = kubevirtv1.DiskBusSATA }},
		{"diskBus scsi", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { rootDisk(vmi).Disk.Bus = kubevirtv1.DiskBusSCSI }},
		{"diskBus virtio", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusVirtio}, VMNetworkPasst, func(*kubevirtv1.VirtualMachineInstance) {}},
		{"diskCache none", vmbenchv1.VMSettings{DiskCache: vmbenchv1.VMDiskCacheNone}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { rootDisk(vmi).Cache = kubevirtv1.CacheNone }},
		{"diskCache writeback", vmbenchv1.VMSettings{DiskCache: vmbenchv1.VMDiskCacheWriteback}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { rootDisk(vmi).Cache = kubevirtv1.CacheWriteBack }},
		{"diskCache writethrough", vmbenchv1.VMSettings{DiskCache: vmbenchv1.VMDiskCacheWritethrough}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { rootDisk(vmi).Cache = kubevirtv1.CacheWriteThrough }},
		{"dedicatedCPUs", vmbenchv1.VMSettings{DedicatedCPUs: true}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.CPU.DedicatedCPUPlacement = true
				vmi.Spec.Domain.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("2Gi")
			}},
		{"isolateEmulatorThread", vmbenchv1.VMSettings{DedicatedCPUs: true, IsolateEmulatorThread: true}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.CPU.DedicatedCPUPlacement = true
				vmi.Spec.Domain.CPU.IsolateEmulatorThread = true
				vmi.Spec.Domain.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("2Gi")
			}},
		{"hugepages 2Mi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.Memory.Hugepages = &kubevirtv1.Hugepages{PageSize: "2Mi"}
			}},
		{"hugepages 1Gi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.Memory.Hugepages = &kubevirtv1.Hugepages{PageSize: "1Gi"}
			}},
		{"ioThreads shared", vmbenchv1.VMSettings{IOThreads: vmbenchv1.VMIOThreadsShared}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.IOThreadsPolicy = ptr.To(kubevirtv1.IOThreadsPolicyShared)
			}},
		{"ioThreads auto", vmbenchv1.VMSettings{IOThreads: vmbenchv1.VMIOThreadsAuto}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.IOThreadsPolicy = ptr.To(kubevirtv1.IOThreadsPolicyAuto)
			}},
		{"dedicatedIOThread", vmbenchv1.VMSettings{DedicatedIOThread: true}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { rootDisk(vmi).DedicatedIOThread = ptr.To(true) }},
		{"cpuModel host-passthrough", vmbenchv1.VMSettings{CPUModel: "host-passthrough"}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.CPU.Model = kubevirtv1.CPUModeHostPassthrough
			}},
		{"cpuModel named", vmbenchv1.VMSettings{CPUModel: "Skylake-Server"}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) { vmi.Spec.Domain.CPU.Model = "Skylake-Server" }},
		{"networkMultiqueue", vmbenchv1.VMSettings{NetworkMultiqueue: true}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.Domain.Devices.NetworkInterfaceMultiQueue = ptr.To(true)
			}},
		{"evictionStrategy LiveMigrate", vmbenchv1.VMSettings{EvictionStrategy: "LiveMigrate"}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.EvictionStrategy = ptr.To(kubevirtv1.EvictionStrategyLiveMigrate)
			}},
		{"evictionStrategy LiveMigrateIfPossible", vmbenchv1.VMSettings{EvictionStrategy: "LiveMigrateIfPossible"}, VMNetworkPasst,
			func(vmi *kubevirtv1.VirtualMachineInstance) {
				vmi.Spec.EvictionStrategy = ptr.To(kubevirtv1.EvictionStrategyLiveMigrateIfPossible)
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := vmRun()
			run.VMNetwork = tc.network
			baseline := buildVMs(t, run).vmis
			got := vmsOf(t, run, &tc.vm)
			if len(got) != 3 || len(baseline) != 3 {
				t.Fatalf("built %d and %d VMIs, want 3", len(got), len(baseline))
			}
			for node, vmi := range got {
				want := baseline[node].DeepCopy()
				want.Spec.Domain.Devices.Interfaces[0] = kubevirtv1.Interface{} // the binding is the run's, see below
				tc.want(want)
				if want.Spec.Domain.Devices.Interfaces[0].Name == "" {
					want.Spec.Domain.Devices.Interfaces[0] = baseline[node].Spec.Domain.Devices.Interfaces[0]
				}
				if diff := cmp.Diff(want, vmi); diff != "" {
					t.Errorf("%s: VMI mismatch (-want +got):\n%s", node, diff)
				}
				for _, d := range vmi.Spec.Domain.Devices.Disks {
					if d.Name == vmCloudInitDisk && (d.Disk.Bus != kubevirtv1.DiskBusVirtio || d.Cache != "" || d.DedicatedIOThread != nil) {
						t.Errorf("%s: the cloud-init disk changed: %+v", node, d)
					}
				}
			}
		})
	}
}

// cluster.dedicatedCPUs pins every VM platform, vm.dedicatedCPUs only its own.
func TestVMDedicatedCPUsComeFromTheClusterOrThePlatform(t *testing.T) {
	for _, tc := range []struct {
		cluster, platform, want bool
	}{{false, false, false}, {true, false, true}, {false, true, true}, {true, true, true}} {
		run := vmRun()
		run.Suite.Spec.Cluster.DedicatedCPUs = tc.cluster
		for node, vmi := range vmsOf(t, run, &vmbenchv1.VMSettings{DedicatedCPUs: tc.platform}) {
			if got := vmi.Spec.Domain.CPU.DedicatedCPUPlacement; got != tc.want {
				t.Errorf("cluster %t, platform %t: %s has dedicatedCpuPlacement %t, want %t", tc.cluster, tc.platform, node, got, tc.want)
			}
		}
	}
}

// A vm block without a field set builds the VMIs of a suite without the block, byte for byte.
func TestEmptyVMBlockIsUnchanged(t *testing.T) {
	run := vmRun()
	run.Platform = withVM(&vmbenchv1.VMSettings{})
	run.Suite.Spec.Platforms = []vmbenchv1.Platform{run.Platform}
	without := vmRun()
	if got, want := string(goldenJSON(t, run)), string(goldenJSON(t, without)); got != want {
		t.Error("an empty vm block changed the VMIs")
	}
}

func kubeVirtCR(annotations map[string]string, configuration map[string]any) unstructured.Unstructured {
	kv := unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"configuration": configuration}}}
	kv.SetAnnotations(annotations)
	return kv
}

func TestClusterKubeVirtFeatures(t *testing.T) {
	passt := map[string]any{"network": map[string]any{"binding": map[string]any{"passt": map[string]any{"sidecarImage": "passt:v1"}}}}
	noBridge := map[string]any{"network": map[string]any{"permitBridgeInterfaceOnPodNetwork": false}}
	gates := map[string]any{"developerConfiguration": map[string]any{"featureGates": []any{"CPUManager", "Root"}}}
	cases := []struct {
		name string
		crs  []unstructured.Unstructured
		want KubeVirtFeatures
	}{
		{"no CR", nil, KubeVirtFeatures{}},
		{"bare CR", []unstructured.Unstructured{kubeVirtCR(nil, map[string]any{})}, KubeVirtFeatures{Found: true}},
		{"passt registered, as hack/kind/kubevirt.sh does without dummy links",
			[]unstructured.Unstructured{kubeVirtCR(map[string]string{AnnotationVMNetwork: "passt"}, passt)},
			KubeVirtFeatures{Found: true, PasstBinding: true, BridgeUnusable: true}},
		{"bridge forbidden", []unstructured.Unstructured{kubeVirtCR(map[string]string{AnnotationVMNetwork: "bridge"}, noBridge)},
			KubeVirtFeatures{Found: true, BridgeForbidden: true}},
		{"feature gates", []unstructured.Unstructured{kubeVirtCR(nil, gates)},
			KubeVirtFeatures{Found: true, FeatureGates: []string{"CPUManager", "Root"}}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, ClusterKubeVirtFeatures(tc.crs)); diff != "" {
			t.Errorf("%s: features mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
	if !ClusterKubeVirtFeatures(cases[4].crs).HasFeatureGate(FeatureGateCPUManager) {
		t.Error("HasFeatureGate(CPUManager) = false with the gate listed")
	}
}

func TestUnsupportedVMSettings(t *testing.T) {
	everything := KubeVirtFeatures{Found: true, PasstBinding: true}
	cases := []struct {
		name    string
		binding vmbenchv1.VMNetworkBinding
		f       KubeVirtFeatures
		want    []string // substrings of the message; none: supported
	}{
		{"passt registered", vmbenchv1.VMBindingPasst, everything, nil},
		{"passt unregistered", vmbenchv1.VMBindingPasst, KubeVirtFeatures{Found: true},
			[]string{"platform vmtuned asks for vm.networkBinding Passt", "spec.configuration.network.binding.passt", "set vm.networkBinding to Bridge or Masquerade"}},
		{"bridge", vmbenchv1.VMBindingBridge, everything, nil},
		{"bridge forbidden", vmbenchv1.VMBindingBridge, KubeVirtFeatures{Found: true, BridgeForbidden: true},
			[]string{"permitBridgeInterfaceOnPodNetwork: false", "set vm.networkBinding to Passt or Masquerade"}},
		{"bridge without dummy links", vmbenchv1.VMBindingBridge, KubeVirtFeatures{Found: true, BridgeUnusable: true},
			[]string{"dummy link", "vmbench.io/vm-network: passt", "set vm.networkBinding to Passt or Masquerade"}},
		{"masquerade always works", vmbenchv1.VMBindingMasquerade, KubeVirtFeatures{Found: true, BridgeForbidden: true}, nil},
		{"left to the manager", "", KubeVirtFeatures{Found: true}, nil},
		{"no KubeVirt CR to judge by", vmbenchv1.VMBindingPasst, KubeVirtFeatures{}, nil},
	}
	for _, tc := range cases {
		p := withVM(&vmbenchv1.VMSettings{NetworkBinding: tc.binding})
		p.Name = "vmtuned"
		got := UnsupportedVMSettings(p, tc.f)
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: %q, want none", tc.name, got)
		}
		if len(tc.want) > 0 && got == "" {
			t.Errorf("%s: supported, want a message", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q does not say %q", tc.name, got, w)
			}
		}
	}
}

// What the status records is read from the VMI as stored, KubeVirt's defaults and status included,
// not from the suite's spec.
func TestVMSettingsOfReadsTheVMI(t *testing.T) {
	run := vmRun()
	vmis := vmsOf(t, run, &vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI, DiskCache: vmbenchv1.VMDiskCacheWriteback,
		DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: vmbenchv1.VMHugepages2Mi, CPUModel: "Haswell-noTSX", NetworkMultiqueue: true,
		EvictionStrategy: vmbenchv1.VMEvictionStrategy(kubevirtv1.EvictionStrategyLiveMigrate)})
	vmi := vmis[vmbenchv1.RoleMaster]
	vmi.Status.QOSClass = ptr.To(corev1.PodQOSGuaranteed)
	want := vmbenchv1.VMSettingsStatus{Run: "demo-vm-1", NetworkBinding: "Passt", DiskBus: "scsi", DiskCache: "writeback",
		DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: "2Mi", CPUModel: "Haswell-noTSX", NetworkMultiqueue: true, EvictionStrategy: "LiveMigrate", QOSClass: "Guaranteed"}
	if diff := cmp.Diff(want, VMSettingsOf(vmi)); diff != "" {
		t.Errorf("settings mismatch (-want +got):\n%s", diff)
	}

	// A VMI of a suite without the block, as KubeVirt stored it: its webhook filled in what vmbench
	// left out, which the status shows.
	plain := vmRun()
	plain.VMNetwork = VMNetworkMasquerade
	stored := buildVMs(t, plain).vmis[vmbenchv1.RoleMaster]
	stored.Spec.Domain.Devices.Disks[0].Disk.Bus = ""
	stored.Spec.Domain.IOThreadsPolicy = ptr.To(kubevirtv1.IOThreadsPolicyShared)
	stored.Spec.Domain.Devices.Interfaces[0].Binding = &kubevirtv1.PluginBinding{Name: "managedtap"}
	stored.Spec.Domain.Devices.Interfaces[0].Masquerade = nil
	want = vmbenchv1.VMSettingsStatus{Run: "demo-vm-1", NetworkBinding: "managedtap", IOThreads: "shared"}
	if diff := cmp.Diff(want, VMSettingsOf(stored)); diff != "" {
		t.Errorf("stored settings mismatch (-want +got):\n%s", diff)
	}
	if got := VMSettingsOf(&kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "x"}}); got != (vmbenchv1.VMSettingsStatus{}) {
		t.Errorf("an empty VMI gave %+v", got)
	}
}

func TestVMSchedulingHint(t *testing.T) {
	shape := vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi")}
	selector := "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) didn't match Pod's node affinity/selector."
	hugepages := "0/3 nodes are available: 1 node(s) had untolerated taint, 2 Insufficient hugepages-2Mi."
	cases := []struct {
		name    string
		vm      *vmbenchv1.VMSettings
		cluster bool
		msg     string
		want    []string
	}{
		{"dedicated CPUs on nodes without the label", &vmbenchv1.VMSettings{DedicatedCPUs: true}, false, selector,
			[]string{"cpumanager=true", "--cpu-manager-policy=static", "CPUManager feature gate", "remove vm.dedicatedCPUs and cluster.dedicatedCPUs"}},
		{"cluster.dedicatedCPUs", nil, true, selector, []string{"cpumanager=true"}},
		{"a selector mismatch without dedicated CPUs", nil, false, selector, nil},
		{"huge pages missing", &vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, false, hugepages,
			[]string{"vm.hugepages 2Mi needs 2Gi of pre-allocated 2Mi huge pages per VM", "allocatable hugepages-2Mi", "remove vm.hugepages"}},
		{"huge pages, but the nodes lack CPU", &vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, false, "0/3 nodes are available: 3 Insufficient cpu.", nil},
	}
	for _, tc := range cases {
		s := shape
		s.DedicatedCPUs = tc.cluster
		got := VMSchedulingHint(withVM(tc.vm), s, tc.msg)
		if len(tc.want) == 0 && got != "" {
			t.Errorf("%s: hint %q, want none", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: hint %q does not say %q", tc.name, got, w)
			}
		}
	}
}
