package suite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// settingsVMI is a VMI of a run as the API server stores it, with the given role and root disk bus.
func settingsVMI(run, role string, bus kubevirtv1.DiskBus, qos *corev1.PodQOSClass) *kubevirtv1.VirtualMachineInstance {
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: run + "-" + role,
		Labels: map[string]string{vmbenchv1.LabelRun: run, vmbenchv1.LabelRole: role}}}
	vmi.Spec.Domain.Devices.Disks = []kubevirtv1.Disk{{Name: "rootdisk", DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: bus}}}}
	vmi.Spec.Domain.Devices.Interfaces = []kubevirtv1.Interface{{Name: "default", Binding: &kubevirtv1.PluginBinding{Name: "passt"}}}
	vmi.Status.QOSClass = qos
	return vmi
}

func TestRecordVMSettings(t *testing.T) {
	guaranteed := ptr.To(corev1.PodQOSGuaranteed)
	st := &vmbenchv1.BenchmarkSuiteStatus{}

	// No VMI yet: nothing to read.
	recordVMSettings(st, "vmtuned", []client.Object{&corev1.Service{}})
	if len(st.VMSettings) != 0 {
		t.Fatalf("recorded %+v without a VMI", st.VMSettings)
	}
	// The master's VMI is read, whichever comes first; the platform is the run's.
	recordVMSettings(st, "vmtuned", []client.Object{settingsVMI("s-vmtuned-1", "node", "virtio", nil), settingsVMI("s-vmtuned-1", "master", "scsi", nil)})
	recordVMSettings(st, "vmdefault", []client.Object{settingsVMI("s-vmdefault-1", "node", "virtio", nil)})
	want := []vmbenchv1.VMSettingsStatus{
		{Platform: "vmtuned", Run: "s-vmtuned-1", NetworkBinding: "Passt", DiskBus: "scsi"},
		{Platform: "vmdefault", Run: "s-vmdefault-1", NetworkBinding: "Passt", DiskBus: "virtio"},
	}
	if diff := cmp.Diff(want, st.VMSettings); diff != "" {
		t.Fatalf("settings mismatch (-want +got):\n%s", diff)
	}
	// KubeVirt reports the QoS class once the VM is scheduled; a later look at the same run that
	// does not show it keeps it.
	recordVMSettings(st, "vmtuned", []client.Object{settingsVMI("s-vmtuned-1", "master", "scsi", guaranteed)})
	recordVMSettings(st, "vmtuned", []client.Object{settingsVMI("s-vmtuned-1", "master", "scsi", nil)})
	want[0].QOSClass = "Guaranteed"
	if diff := cmp.Diff(want, st.VMSettings); diff != "" {
		t.Fatalf("after the QoS class (-want +got):\n%s", diff)
	}
	// A later run replaces what an earlier one recorded, its QoS class included.
	recordVMSettings(st, "vmtuned", []client.Object{settingsVMI("s-vmtuned-2", "master", "sata", nil)})
	want[0] = vmbenchv1.VMSettingsStatus{Platform: "vmtuned", Run: "s-vmtuned-2", NetworkBinding: "Passt", DiskBus: "sata"}
	if diff := cmp.Diff(want, st.VMSettings); diff != "" {
		t.Fatalf("after run 2 (-want +got):\n%s", diff)
	}
	// The eviction strategy the VMI carries (vm.evictionStrategy) is what a drain does to it: recorded
	// as the VMI has it, absent where the VMI leaves it to the KubeVirt CR.
	migrating := settingsVMI("s-vmtuned-3", "master", "virtio", nil)
	migrating.Spec.EvictionStrategy = ptr.To(kubevirtv1.EvictionStrategyLiveMigrate)
	recordVMSettings(st, "vmtuned", []client.Object{migrating})
	want[0] = vmbenchv1.VMSettingsStatus{Platform: "vmtuned", Run: "s-vmtuned-3", NetworkBinding: "Passt", DiskBus: "virtio", EvictionStrategy: "LiveMigrate"}
	if diff := cmp.Diff(want, st.VMSettings); diff != "" {
		t.Fatalf("with an eviction strategy (-want +got):\n%s", diff)
	}
}

func TestExplainVMScheduling(t *testing.T) {
	suite := testSuite()
	tuned := vmbenchv1.Platform{Name: "vmtuned", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{DedicatedCPUs: true}}
	unschedulable := &conditions.Cause{Reason: failure.ReasonUnschedulable,
		Message: "pod virt-launcher-s-vmtuned-1-master-x cannot be scheduled: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}
	got := explainVMScheduling(unschedulable, platform.Run{Suite: suite, Platform: tuned})
	if !strings.HasPrefix(got.Message, unschedulable.Message+"; dedicated CPUs put VMs only on nodes labelled cpumanager=true") || got.Reason != failure.ReasonUnschedulable {
		t.Errorf("explained cause %+v", got)
	}
	if strings.Contains(unschedulable.Message, "cpumanager") {
		t.Error("the cause it was given was changed")
	}
	for name, tc := range map[string]struct {
		c *conditions.Cause
		p vmbenchv1.Platform
	}{
		"no cause":              {nil, tuned},
		"an image pull":         {&conditions.Cause{Reason: failure.ReasonImagePull, Message: "node(s) didn't match"}, tuned},
		"a container platform":  {unschedulable, vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer}},
		"a VM without settings": {unschedulable, vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM}},
	} {
		if got := explainVMScheduling(tc.c, platform.Run{Suite: suite, Platform: tc.p}); got != tc.c {
			t.Errorf("%s: %+v, want the cause unchanged", name, got)
		}
	}
}

// Masquerade that a platform asked for itself is no warning: the API refused it where MPI spans the
// VMs. Masquerade that the manager chose for the cluster still is.
func TestMasqueradeWarningIsForTheManagersChoice(t *testing.T) {
	const warning = "VMs use masquerade networking"
	spec := vmbenchv1.BenchmarkSuiteSpec{Cluster: vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi")},
		Platforms: []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer},
			{Name: "vmnat", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade}}}}
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{{Name: "s-vmnat-1", Platform: "vmnat", Network: "masquerade"}}}
	for _, w := range warnings(spec, st, platform.VMNetworkPasst) {
		if strings.Contains(w, warning) {
			t.Errorf("warned for the platform's own masquerade: %q", w)
		}
	}
	spec.Platforms = append(spec.Platforms, vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM})
	found := false
	for _, w := range warnings(spec, st, platform.VMNetworkMasquerade) {
		found = found || strings.Contains(w, warning)
	}
	if !found {
		t.Error("no warning for a VM platform under the manager's masquerade")
	}
}
