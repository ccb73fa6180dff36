package platform

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// A VM platform's vm block changes how its VMIs are built (applyVMSettings), what the cluster's
// KubeVirt must offer before a run starts (UnsupportedVMSettings), and what the suite's status
// records of the VMs that ran (VMSettingsOf). Without the block, or with any field of it left out,
// the VMI is built exactly as before the block existed.

// VMNetworkOf is the binding a VM platform's settings ask for; "" when they leave it to the manager.
func VMNetworkOf(p vmbenchv1.Platform) VMNetwork {
	if p.VM == nil {
		return ""
	}
	switch p.VM.NetworkBinding {
	case vmbenchv1.VMBindingBridge:
		return VMNetworkBridge
	case vmbenchv1.VMBindingPasst:
		return VMNetworkPasst
	case vmbenchv1.VMBindingMasquerade:
		return VMNetworkMasquerade
	}
	return ""
}

// RunVMNetwork is the binding of a VM platform's run: the platform's own vm.networkBinding, else the
// one the manager chose for the cluster.
func RunVMNetwork(p vmbenchv1.Platform, chosen VMNetwork) VMNetwork {
	if n := VMNetworkOf(p); n != "" {
		return n
	}
	return chosen
}

// applyVMSettings sets on a VMI what the platform's vm block asks for, besides the network binding
// (which the run carries, as the manager may choose it) and dedicated CPUs (dedicateCPUs). KubeVirt
// derives the virt-launcher pod's needs from them: huge pages requested at the guest's memory, one
// more CPU for an isolated emulator thread.
func applyVMSettings(vmi *kubevirtv1.VirtualMachineInstance, p vmbenchv1.Platform) {
	vm := p.VM
	if vm == nil {
		return
	}
	domain := &vmi.Spec.Domain
	for i := range domain.Devices.Disks {
		disk := &domain.Devices.Disks[i]
		if disk.Name != vmRootDisk {
			continue
		}
		if vm.DiskBus != "" && disk.Disk != nil {
			disk.Disk.Bus = kubevirtv1.DiskBus(vm.DiskBus)
		}
		if vm.DiskCache != "" {
			disk.Cache = kubevirtv1.DriverCache(vm.DiskCache)
		}
		if vm.DedicatedIOThread {
			disk.DedicatedIOThread = ptr.To(true)
		}
	}
	if vm.IOThreads != "" {
		domain.IOThreadsPolicy = ptr.To(kubevirtv1.IOThreadsPolicy(vm.IOThreads))
	}
	if vm.Hugepages != "" {
		if domain.Memory == nil {
			domain.Memory = &kubevirtv1.Memory{}
		}
		domain.Memory.Hugepages = &kubevirtv1.Hugepages{PageSize: string(vm.Hugepages)}
	}
	if vm.IsolateEmulatorThread {
		if domain.CPU == nil {
			domain.CPU = &kubevirtv1.CPU{}
		}
		domain.CPU.IsolateEmulatorThread = true
	}
	if vm.CPUModel != "" {
		if domain.CPU == nil {
			domain.CPU = &kubevirtv1.CPU{}
		}
		domain.CPU.Model = vm.CPUModel
	}
	if vm.NetworkMultiqueue {
		domain.Devices.NetworkInterfaceMultiQueue = ptr.To(true)
	}
	if vm.EvictionStrategy != "" {
		vmi.Spec.EvictionStrategy = ptr.To(kubevirtv1.EvictionStrategy(vm.EvictionStrategy))
	}
}

// KubeVirtFeatures is what the cluster's KubeVirt CRs say about the settings a VM platform may ask
// for.
type KubeVirtFeatures struct {
	// Found is set when a KubeVirt CR exists.
	Found bool
	// PasstBinding is set when a CR registers the passt binding plugin
	// (spec.configuration.network.binding.passt).
	PasstBinding bool
	// BridgeForbidden is set when a CR refuses bridge binding on the pod network
	// (spec.configuration.network.permitBridgeInterfaceOnPodNetwork: false).
	BridgeForbidden bool
	// BridgeUnusable is set when vmbench's own install found that bridge binding cannot work on the
	// nodes' kernel, which has no dummy links, and said so in the CR's annotation.
	BridgeUnusable bool
	// FeatureGates are the CRs' spec.configuration.developerConfiguration.featureGates.
	FeatureGates []string
}

// AnnotationVMNetwork is the annotation that hack/kind/kubevirt.sh puts on the KubeVirt CR: passt
// when the nodes' kernel cannot make the dummy link that bridge binding needs, bridge otherwise.
const AnnotationVMNetwork = "vmbench.io/vm-network"

// FeatureGateCPUManager is KubeVirt's feature gate under which virt-handler labels the nodes whose
// kubelet has the static CPU manager cpumanager=true, the only nodes that take VMs with dedicated
// CPUs (an alpha gate in KubeVirt v1.7).
const FeatureGateCPUManager = "CPUManager"

// ClusterKubeVirtFeatures reads the KubeVirt CRs.
func ClusterKubeVirtFeatures(kubevirts []unstructured.Unstructured) KubeVirtFeatures {
	f := KubeVirtFeatures{Found: len(kubevirts) > 0}
	f.PasstBinding = ClusterVMNetwork(kubevirts) == VMNetworkPasst
	for _, kv := range kubevirts {
		if permit, found, _ := unstructured.NestedBool(kv.Object, "spec", "configuration", "network", "permitBridgeInterfaceOnPodNetwork"); found && !permit {
			f.BridgeForbidden = true
		}
		if kv.GetAnnotations()[AnnotationVMNetwork] == string(VMNetworkPasst) {
			f.BridgeUnusable = true
		}
		gates, _, _ := unstructured.NestedStringSlice(kv.Object, "spec", "configuration", "developerConfiguration", "featureGates")
		f.FeatureGates = append(f.FeatureGates, gates...)
	}
	return f
}

// UnsupportedVMSettings names the first network binding that a VM platform asks for and that the
// cluster's KubeVirt cannot give, with what to change; "" when there is none. What depends on the
// nodes (dedicated CPUs, huge pages) is for preflight, which reads them, and for the scheduler's
// own message while the run starts (VMSchedulingHint).
func UnsupportedVMSettings(p vmbenchv1.Platform, f KubeVirtFeatures) string {
	if !f.Found {
		return ""
	}
	switch VMNetworkOf(p) {
	case VMNetworkPasst:
		if !f.PasstBinding {
			return fmt.Sprintf("platform %s asks for vm.networkBinding Passt, but the cluster's KubeVirt CR registers no passt binding plugin "+
				"(spec.configuration.network.binding.passt): register it with KubeVirt's network-passt-binding sidecar image, "+
				"or set vm.networkBinding to Bridge or Masquerade", p.Name)
		}
	case VMNetworkBridge:
		if f.BridgeForbidden {
			return fmt.Sprintf("platform %s asks for vm.networkBinding Bridge, but the cluster's KubeVirt CR forbids bridge binding on the pod network "+
				"(spec.configuration.network.permitBridgeInterfaceOnPodNetwork: false): allow it there, or set vm.networkBinding to Passt or Masquerade", p.Name)
		}
		if f.BridgeUnusable {
			return fmt.Sprintf("platform %s asks for vm.networkBinding Bridge, but vmbench's KubeVirt install found that the nodes' kernel cannot make "+
				"the dummy link bridge binding needs (annotation %s: passt on the KubeVirt CR): set vm.networkBinding to Passt or Masquerade", p.Name, AnnotationVMNetwork)
		}
	}
	return ""
}

// HasFeatureGate reports whether the KubeVirt CRs enable a feature gate.
func (f KubeVirtFeatures) HasFeatureGate(gate string) bool {
	return slices.Contains(f.FeatureGates, gate)
}

// VMSettingsOf reads back how a VMI was built, as the API server stored it (with KubeVirt's
// defaults), for the suite's status.
func VMSettingsOf(vmi *kubevirtv1.VirtualMachineInstance) vmbenchv1.VMSettingsStatus {
	out := vmbenchv1.VMSettingsStatus{Run: vmi.Labels[vmbenchv1.LabelRun]}
	domain := vmi.Spec.Domain
	for _, iface := range domain.Devices.Interfaces {
		if iface.Name != vmInterfaceName {
			continue
		}
		switch {
		case iface.Bridge != nil:
			out.NetworkBinding = string(vmbenchv1.VMBindingBridge)
		case iface.Masquerade != nil:
			out.NetworkBinding = string(vmbenchv1.VMBindingMasquerade)
		case iface.Binding != nil && iface.Binding.Name == string(VMNetworkPasst):
			out.NetworkBinding = string(vmbenchv1.VMBindingPasst)
		case iface.Binding != nil:
			out.NetworkBinding = truncateTo(iface.Binding.Name, 32)
		}
	}
	for _, disk := range domain.Devices.Disks {
		if disk.Name != vmRootDisk {
			continue
		}
		if disk.Disk != nil {
			out.DiskBus = truncateTo(string(disk.Disk.Bus), 16)
		}
		out.DiskCache = truncateTo(string(disk.Cache), 16)
		out.DedicatedIOThread = ptr.Deref(disk.DedicatedIOThread, false)
	}
	if cpu := domain.CPU; cpu != nil {
		out.DedicatedCPUs = cpu.DedicatedCPUPlacement
		out.IsolateEmulatorThread = cpu.IsolateEmulatorThread
		out.CPUModel = truncateTo(cpu.Model, 64)
	}
	out.NetworkMultiqueue = ptr.Deref(domain.Devices.NetworkInterfaceMultiQueue, false)
	if e := vmi.Spec.EvictionStrategy; e != nil {
		out.EvictionStrategy = truncateTo(string(*e), 24)
	}
	if m := domain.Memory; m != nil && m.Hugepages != nil {
		out.Hugepages = truncateTo(m.Hugepages.PageSize, 8)
	}
	if domain.IOThreadsPolicy != nil {
		out.IOThreads = truncateTo(string(*domain.IOThreadsPolicy), 16)
	}
	if q := vmi.Status.QOSClass; q != nil {
		out.QOSClass = truncateTo(string(*q), 16)
	}
	return out
}

// VMSchedulingHint says what a VM platform's settings need of the nodes, for a run whose VMs the
// scheduler cannot place: the scheduler's message names a node selector or huge pages, not the
// setting behind them. "" when no setting explains the message.
func VMSchedulingHint(p vmbenchv1.Platform, shape vmbenchv1.ClusterShape, schedulerMessage string) string {
	var hints []string
	if p.DedicatedCPUsOf(shape) && containsAny(schedulerMessage, "node affinity/selector", "node(s) didn't match", kubevirtv1.CPUManager) {
		hints = append(hints, fmt.Sprintf("dedicated CPUs put VMs only on nodes labelled %s=true, which virt-handler sets where the kubelet runs "+
			"--cpu-manager-policy=static and KubeVirt's %s feature gate is on: configure such nodes, or remove vm.dedicatedCPUs and cluster.dedicatedCPUs",
			kubevirtv1.CPUManager, FeatureGateCPUManager))
	}
	if p.VM != nil && p.VM.Hugepages != "" {
		resource := string(corev1.ResourceHugePagesPrefix) + string(p.VM.Hugepages)
		if containsAny(schedulerMessage, resource, "hugepages") {
			memory := shape.MemoryLimit()
			hints = append(hints, fmt.Sprintf("vm.hugepages %s needs %s of pre-allocated %s huge pages per VM, which the nodes report as allocatable %s: "+
				"reserve them on the nodes (the kernel's hugepages settings) and restart their kubelets, or remove vm.hugepages",
				p.VM.Hugepages, memory.String(), p.VM.Hugepages, resource))
		}
	}
	return joinHints(hints)
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func joinHints(hints []string) string { return strings.Join(hints, "; ") }

func truncateTo(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
