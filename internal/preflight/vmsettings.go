package preflight

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// CheckVMSettings says, for each VM platform with a vm block, whether the cluster can build its VMs
// that way: the network binding against the KubeVirt CR, dedicated CPUs against the nodes that
// KubeVirt labelled cpumanager=true, huge pages against the nodes' pre-allocated pages. Each line
// names what is missing and what to do; there is no fallback to a default VM.
func CheckVMSettings(needs Needs, nodes []corev1.Node, kv KubeVirtConfig, kvErr error) []Check {
	var out []Check
	for _, p := range needs.Platforms {
		if !p.VM() || p.Platform.VM == nil {
			continue
		}
		name := "vm/" + p.Platform.Name
		switch {
		case kvErr != nil:
			out = append(out, warn(name, "cannot read KubeVirt's configuration (kubevirts.kubevirt.io): "+firstLine(kvErr),
				"grant get/list on kubevirts.kubevirt.io to check the platform's vm settings"))
		case !kv.Found:
			out = append(out, skip(name, "KubeVirt is not deployed (see api/virtualmachineinstances and kvm)"))
		default:
			out = append(out, vmSettingsCheck(name, needs, p, nodes, kv))
		}
	}
	return out
}

func vmSettingsCheck(name string, needs Needs, p PlatformNeeds, nodes []corev1.Node, kv KubeVirtConfig) Check {
	vm := p.Platform.VM
	if msg := platform.UnsupportedVMSettings(p.Platform, kv.Features); msg != "" {
		return Check{Name: name, Result: needs.severity(), Detail: msg, Action: "change the platform's vm settings or the KubeVirt CR as the detail says"}
	}
	var facts, warnings []string
	if b := vm.NetworkBinding; b != "" {
		facts = append(facts, fmt.Sprintf("%s binding offered", b))
	}
	vms := int64(len(p.Members))
	views := vmNodes(nodes, needs, kv)
	if p.Platform.DedicatedCPUsOf(needs.Cluster) {
		cpu, memory := largest(p)
		var pinning []string
		room := int64(0)
		for _, v := range views {
			if v.node.Labels[LabelCPUManager] != "true" {
				continue
			}
			n := v.view.room(cpu, memory)
			room += n
			pinning = append(pinning, fmt.Sprintf("node %s %d", v.view.name, n))
		}
		if len(pinning) == 0 {
			action := "start the benchmark nodes' kubelets with --cpu-manager-policy=static"
			if !kv.Features.HasFeatureGate(platform.FeatureGateCPUManager) {
				action += fmt.Sprintf(" and add %s to the KubeVirt CR's spec.configuration.developerConfiguration.featureGates (it lists none)", platform.FeatureGateCPUManager)
			}
			return Check{Name: name, Result: needs.severity(),
				Detail: fmt.Sprintf("dedicated CPUs: KubeVirt places such VMs only on nodes labelled %s=true, and no node the suite may use is", LabelCPUManager),
				Action: action + ", so that virt-handler labels them; or remove vm.dedicatedCPUs (and cluster.dedicatedCPUs)"}
		}
		if room < vms {
			return Check{Name: name, Result: needs.severity(),
				Detail: fmt.Sprintf("dedicated CPUs: the run's %d VMs of %s, %s need room for %d on nodes labelled %s=true, which have room for %d: %s",
					vms, cpusText(cpu), memText(memory), vms, LabelCPUManager, room, list(pinning, maxNodesInSentence)),
				Action: "give more nodes the static CPU manager, or lower spec.cluster"}
		}
		facts = append(facts, fmt.Sprintf("dedicated CPUs on nodes labelled %s=true: room for %d (%s)", LabelCPUManager, room, list(pinning, maxNodesInSentence)))
	}
	if vm.Hugepages != "" {
		resource := corev1.ResourceName(corev1.ResourceHugePagesPrefix + string(vm.Hugepages))
		guest := needs.Cluster.MemoryLimit()
		var pages []string
		room := int64(0)
		for _, v := range views {
			alloc := v.node.Status.Allocatable[resource]
			n := alloc.Value() / guest.Value()
			room += n
			pages = append(pages, fmt.Sprintf("node %s %s (%d)", v.view.name, memText(alloc), n))
		}
		if room < vms {
			detail := fmt.Sprintf("huge pages: the run's %d VMs need %s of %s pages each (allocatable %s), the nodes have room for %d", vms, memText(guest), vm.Hugepages, resource, room)
			if len(pages) > 0 {
				detail += ": " + list(pages, maxNodesInSentence)
			}
			return Check{Name: name, Result: needs.severity(), Detail: detail,
				Action: fmt.Sprintf("pre-allocate %s huge pages on the nodes (for 2Mi the sysctl vm.nr_hugepages, for 1Gi the kernel's hugepagesz=1G hugepages=N at boot) "+
					"and restart their kubelets, which report them as %s; or remove vm.hugepages", vm.Hugepages, resource)}
		}
		facts = append(facts, fmt.Sprintf("%s huge pages: room for %d (%s)", vm.Hugepages, room, list(pages, maxNodesInSentence)))
	}
	if vm.IsolateEmulatorThread {
		facts = append(facts, "one more CPU per VM for the emulator thread (counted in fit/vm)")
	}
	if vm.DiskBus != "" {
		facts = append(facts, "disk bus "+string(vm.DiskBus))
	}
	if vm.DiskCache != "" {
		facts = append(facts, "disk cache "+string(vm.DiskCache))
	}
	if vm.IOThreads != "" {
		facts = append(facts, "IO threads "+string(vm.IOThreads))
	}
	if vm.DedicatedIOThread {
		facts = append(facts, "a dedicated IO thread")
	}
	if vm.DiskCache == vmbenchv1.VMDiskCacheNone {
		warnings = append(warnings, "disk cache none needs O_DIRECT on the nodes' file system that holds virt-launcher's copy of the VM disk, "+
			"which cannot be seen from the API: KubeVirt fails the VM otherwise ('does not support direct I/O')")
	}
	if kv.Emulation && (p.Platform.DedicatedCPUsOf(needs.Cluster) || vm.Hugepages != "" || vm.IsolateEmulatorThread || vm.IOThreads != "") {
		warnings = append(warnings, "under emulation (useEmulation: true) QEMU's translation dominates: dedicated CPUs, huge pages, "+
			"the emulator thread and IO threads change little of the figures")
	}
	detail := "as asked"
	if len(facts) > 0 {
		detail = strings.Join(facts, "; ")
	}
	if len(warnings) > 0 {
		return warn(name, detail+"; "+strings.Join(warnings, "; "),
			"read the VM figures with this in mind; docs/vm-variants.md says what each setting needs")
	}
	return pass(name, detail)
}

// vmNode is a node that the suite's VMs may use.
type vmNode struct {
	node *corev1.Node
	view nodeView
}

// vmNodes are the nodes that may take the suite's VMs: usable by the suite and by KubeVirt.
func vmNodes(nodes []corev1.Node, needs Needs, kv KubeVirtConfig) []vmNode {
	byName := map[string]*corev1.Node{}
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	var out []vmNode
	for _, v := range viewNodes(nodes, needs) {
		if v.excluded != "" || v.usableForVMs(kv) != "" {
			continue
		}
		out = append(out, vmNode{node: byName[v.name], view: v})
	}
	return out
}
