package bands

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestSettingsOfReadsTheContainerNodesSteal: the steal time that tells nodes that are VMs comes from
// the container runs, whose pods read the node's own counters, and not from the VM runs, whose
// guests count the steal of their own hypervisor.
func TestSettingsOfReadsTheContainerNodesSteal(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{
		Spec: vmbenchv1.BenchmarkSuiteSpec{Platforms: []vmbenchv1.Platform{
			{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}}},
		Status: vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{
			{Name: "s-vm-1", Platform: "vm", Noise: []vmbenchv1.NodeNoise{{Node: "master", StealPercent: 9}}},
			{Name: "s-container-1", Platform: "container", Noise: []vmbenchv1.NodeNoise{{Node: "master", StealPercent: 0.4}, {Node: "node01", StealPercent: 1.2}}},
		}},
	}
	if got := SettingsOf(suite, "vm", false).NodeStealPercent; got != 1.2 {
		t.Errorf("steal %g, want the container nodes' largest, 1.2", got)
	}
	suite.Status.Runs = suite.Status.Runs[:1]
	if got := SettingsOf(suite, "vm", false).NodeStealPercent; got != 0 {
		t.Errorf("steal %g from VM runs only, want 0", got)
	}
}

// TestSettingsOfRequestsBelowLimits: a CPU request below cluster.cpu, or a memory request below
// cluster.memory, leaves the VMs Burstable, a cause of a result below its band; requests equal to
// their limits, or none, do not (mutant B4 of test-quality-97ef9ca.md ignores the CPU request).
func TestSettingsOfRequestsBelowLimits(t *testing.T) {
	q := resource.MustParse
	ptr := func(s string) *resource.Quantity { v := q(s); return &v }
	for _, tt := range []struct {
		name    string
		cluster vmbenchv1.ClusterShape
		want    bool
	}{
		{"no requests", vmbenchv1.ClusterShape{CPU: 2, Memory: ptr("2Gi")}, false},
		{"CPU request below the CPU", vmbenchv1.ClusterShape{CPU: 2, Memory: ptr("2Gi"), CPURequest: ptr("1500m")}, true},
		{"memory request below the memory", vmbenchv1.ClusterShape{CPU: 2, Memory: ptr("2Gi"), MemoryRequest: ptr("1Gi")}, true},
		{"both below", vmbenchv1.ClusterShape{CPU: 2, Memory: ptr("2Gi"), CPURequest: ptr("100m"), MemoryRequest: ptr("512Mi")}, true},
		{"both equal to their limits", vmbenchv1.ClusterShape{CPU: 2, Memory: ptr("2Gi"), CPURequest: ptr("2000m"), MemoryRequest: ptr("2048Mi")}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			suite := &vmbenchv1.BenchmarkSuite{Spec: vmbenchv1.BenchmarkSuiteSpec{Cluster: tt.cluster,
				Platforms: []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}}}
			if got := SettingsOf(suite, "vm", false).RequestsBelowLimits; got != tt.want {
				t.Errorf("RequestsBelowLimits = %t, want %t", got, tt.want)
			}
			// The read-back settings of a VMI do not hold the requests: the spec's count either way.
			suite.Status.VMSettings = []vmbenchv1.VMSettingsStatus{{Platform: "vm", Run: "s-vm-1", DiskBus: "virtio"}}
			if got := SettingsOf(suite, "vm", false).RequestsBelowLimits; got != tt.want {
				t.Errorf("with a VMI read back: RequestsBelowLimits = %t, want %t", got, tt.want)
			}
		})
	}
}

// TestSettingsOfPrefersTheVMIToTheSpec: the settings are those KubeVirt admitted, read back from a
// VMI of the platform (status.vmSettings), where there is one; before any VMI was seen, the spec's,
// with cluster.dedicatedCPUs counting for every platform (mutant B3 of test-quality-97ef9ca.md
// ignores it). Another platform's VMI is not this platform's.
func TestSettingsOfPrefersTheVMIToTheSpec(t *testing.T) {
	spec := vmbenchv1.BenchmarkSuiteSpec{
		Cluster: vmbenchv1.ClusterShape{CPU: 2, DedicatedCPUs: true},
		Platforms: []vmbenchv1.Platform{
			{Name: "container", Type: vmbenchv1.PlatformContainer},
			{Name: "vm", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingBridge,
				DiskBus: vmbenchv1.VMDiskBusSATA, DiskCache: vmbenchv1.VMDiskCacheWritethrough, IsolateEmulatorThread: true,
				Hugepages: vmbenchv1.VMHugepages2Mi, IOThreads: vmbenchv1.VMIOThreadsAuto, DedicatedIOThread: true,
				CPUModel: "Westmere", NetworkMultiqueue: true}},
			{Name: "vm2", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{DedicatedCPUs: true}},
		}}
	fromSpec := Settings{NetworkBinding: "Bridge", DiskBus: "sata", DiskCache: "writethrough", DedicatedCPUs: true,
		IsolateEmulatorThread: true, Hugepages: "2Mi", IOThreads: "auto", DedicatedIOThread: true, CPUModel: "Westmere",
		NetworkMultiqueue: true}
	readBack := vmbenchv1.VMSettingsStatus{Platform: "vm", Run: "s-vm-1", NetworkBinding: "Masquerade", DiskBus: "virtio",
		DedicatedCPUs: false, IOThreads: "shared", CPUModel: "host-model"}
	fromVMI := Settings{NetworkBinding: "Masquerade", DiskBus: "virtio", IOThreads: "shared", CPUModel: "host-model"}

	for _, tt := range []struct {
		name     string
		cluster  bool // cluster.dedicatedCPUs
		status   []vmbenchv1.VMSettingsStatus
		platform string
		want     Settings
	}{
		{"no VMI seen: the spec", true, nil, "vm", fromSpec},
		{"no VMI seen: cluster.dedicatedCPUs and vm.dedicatedCPUs", true, nil, "vm2", Settings{DedicatedCPUs: true}},
		{"no VMI seen, shared CPUs in the cluster", false, nil, "vm", func() Settings { s := fromSpec; s.DedicatedCPUs = false; return s }()},
		{"no VMI seen: vm.dedicatedCPUs alone", false, nil, "vm2", Settings{DedicatedCPUs: true}},
		{"a VMI read back: the VMI, not the spec", true, []vmbenchv1.VMSettingsStatus{readBack}, "vm", fromVMI},
		{"another platform's VMI: the spec", true, []vmbenchv1.VMSettingsStatus{{Platform: "vm2", Run: "s-vm2-1", NetworkBinding: "Passt"}}, "vm", fromSpec},
	} {
		t.Run(tt.name, func(t *testing.T) {
			suite := &vmbenchv1.BenchmarkSuite{Spec: *spec.DeepCopy(), Status: vmbenchv1.BenchmarkSuiteStatus{VMSettings: tt.status}}
			suite.Spec.Cluster.DedicatedCPUs = tt.cluster
			if got := SettingsOf(suite, tt.platform, false); got != tt.want {
				t.Errorf("SettingsOf(%s) =\n%+v\nwant\n%+v", tt.platform, got, tt.want)
			}
		})
	}
	suite := &vmbenchv1.BenchmarkSuite{Spec: spec}
	if !SettingsOf(suite, "vm", true).Emulated || SettingsOf(suite, "vm", false).Emulated {
		t.Error("Emulated is not the caller's")
	}
}
