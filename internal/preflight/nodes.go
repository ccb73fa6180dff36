package preflight

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/vmbench/vmbench/internal/platform"
)

// What KubeVirt shows on nodes: the KVM device its device plugin offers, the label virt-handler sets
// where VMs may run, and the label its node labeller sets where the kubelet's CPU manager is static.
const (
	KVMDevice          corev1.ResourceName = "devices.kubevirt.io/kvm"
	LabelKubeVirtNode                      = kubevirtv1.NodeSchedulable
	LabelCPUManager                        = kubevirtv1.CPUManager
	maxNodeRows                            = 20
	maxNodesInSentence                     = 8
)

// KubeVirtConfig is what preflight reads from the cluster's KubeVirt CRs.
type KubeVirtConfig struct {
	// Found is set when a KubeVirt CR exists.
	Found bool
	// Emulation is set when a KubeVirt CR has spec.configuration.developerConfiguration.useEmulation.
	Emulation bool
	// Launcher is what decides the security context of the VMs' virt-launcher pods.
	Launcher platform.VirtLauncher
	// Features are what VM platforms' vm settings may need of KubeVirt.
	Features platform.KubeVirtFeatures
}

// KubeVirtConfigOf reads the KubeVirt CRs (kubevirts.kubevirt.io).
func KubeVirtConfigOf(kubevirts []unstructured.Unstructured) KubeVirtConfig {
	cfg := KubeVirtConfig{Found: len(kubevirts) > 0, Launcher: platform.ClusterVirtLauncher(kubevirts), Features: platform.ClusterKubeVirtFeatures(kubevirts)}
	for _, kv := range kubevirts {
		if on, _, _ := unstructured.NestedBool(kv.Object, "spec", "configuration", "developerConfiguration", "useEmulation"); on {
			cfg.Emulation = true
		}
	}
	return cfg
}

// nodeView is one node as a run's pods see it.
type nodeView struct {
	name string
	// excluded says why no pod of the suite can land there; empty when they can.
	excluded    string
	cpu, memory resource.Quantity
	kvm         int64
	kubevirt    bool
}

func viewNodes(nodes []corev1.Node, needs Needs) []nodeView {
	views := make([]nodeView, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		kvm := n.Status.Allocatable[KVMDevice]
		v := nodeView{
			name: n.Name, cpu: n.Status.Allocatable[corev1.ResourceCPU], memory: n.Status.Allocatable[corev1.ResourceMemory],
			kvm: kvm.Value(), kubevirt: n.Labels[LabelKubeVirtNode] == "true",
		}
		v.excluded = excluded(n, needs)
		views = append(views, v)
	}
	sort.Slice(views, func(i, j int) bool { return views[i].name < views[j].name })
	return views
}

// excluded says why the suite's pods cannot be scheduled on the node, whatever their size.
func excluded(n *corev1.Node, needs Needs) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	ready := false
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "not Ready"
	}
	for i := range n.Spec.Taints {
		taint := &n.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for _, t := range needs.Placement.PodTolerations() {
			if t.ToleratesTaint(klog.Background(), taint, false) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			return "taint " + taint.ToString() + " not tolerated"
		}
	}
	for k, v := range needs.Placement.NodeSelectorLabels() {
		if got, ok := n.Labels[k]; !ok || got != v {
			return fmt.Sprintf("does not match spec.placement.nodeSelector %s=%s", k, v)
		}
	}
	return ""
}

// usableForVMs says why VMs cannot run on an otherwise usable node; empty when they can.
func (v nodeView) usableForVMs(kv KubeVirtConfig) string {
	if !v.kubevirt {
		return "not " + LabelKubeVirtNode + "=true"
	}
	if v.kvm <= 0 && !kv.Emulation {
		return "no " + string(KVMDevice)
	}
	return ""
}

// largest is the member of the platform with the largest requests; a run's members are alike, the
// launcher and workers of an MPIJob have the same resources.
func largest(p PlatformNeeds) (cpu, memory resource.Quantity) {
	for _, m := range p.Members {
		req := m.Requests()
		if q := req[corev1.ResourceCPU]; q.Cmp(cpu) > 0 {
			cpu = q
		}
		if q := req[corev1.ResourceMemory]; q.Cmp(memory) > 0 {
			memory = q
		}
	}
	return cpu, memory
}

// room is how many pods of the given requests the node's allocatable resources hold, before the
// requests of the pods already running there.
func (v nodeView) room(cpu, memory resource.Quantity) int64 {
	n := int64(1 << 20)
	if c := cpu.MilliValue(); c > 0 {
		n = min(n, v.cpu.MilliValue()/c)
	}
	if m := memory.Value(); m > 0 {
		n = min(n, v.memory.Value()/m)
	}
	return n
}

// CheckNodes says, for each platform kind, whether one run's pods fit on the nodes at all (by
// allocatable resources, before other pods' requests), and lists each node with its figures.
func CheckNodes(needs Needs, nodes []corev1.Node, kv KubeVirtConfig) []Check {
	if len(nodes) == 0 {
		return []Check{fail("nodes", "the cluster has no nodes", "add nodes")}
	}
	views := viewNodes(nodes, needs)
	var out []Check
	seen := map[string]bool{}
	for _, p := range needs.Platforms {
		kind := "container"
		if p.VM() {
			kind = "vm"
		}
		if seen[kind] || len(p.Members) == 0 {
			continue
		}
		seen[kind] = true
		if p.VM() && !kv.Found {
			out = append(out, skip("fit/"+kind, "KubeVirt is not deployed (see api/virtualmachineinstances and kvm)"))
			continue
		}
		out = append(out, fitCheck(kind, p, views, kv, needs.severity()))
	}
	for i, v := range views {
		if i == maxNodeRows {
			out = append(out, skip("node/...", fmt.Sprintf("%d more nodes not listed", len(views)-maxNodeRows)))
			break
		}
		out = append(out, nodeRow(needs, v, kv))
	}
	return out
}

// fitCheck is the fit of one platform kind's run; vmSeverity is the result when only the VM
// platforms cannot run.
func fitCheck(kind string, p PlatformNeeds, views []nodeView, kv KubeVirtConfig, vmSeverity Result) Check {
	name := "fit/" + kind
	cpu, memory := largest(p)
	members := int64(len(p.Members))
	what := fmt.Sprintf("%d pods of %s, %s", members, cpusText(cpu), memText(memory))
	if p.VM() {
		what = fmt.Sprintf("%d VMs of %s, %s (with KubeVirt's overhead, estimated)", members, cpusText(cpu), memText(memory))
	}
	var candidates []nodeView
	var left []string
	for _, v := range views {
		why := v.excluded
		if why == "" && p.VM() {
			why = v.usableForVMs(kv)
		}
		if why != "" {
			left = append(left, v.name+" ("+why+")")
			continue
		}
		candidates = append(candidates, v)
	}
	notCounted := ""
	if len(left) > 0 {
		notCounted = "; not counted: " + list(left, maxNodesInSentence)
	}
	action := "lower spec.cluster (cpu, memory, or cpuRequest/memoryRequest), or add larger nodes"
	if len(candidates) == 0 {
		for _, v := range views {
			if v.excluded == "" {
				// Nodes are there, only not for VMs: a problem of the VM platforms alone.
				return Check{Name: name, Result: vmSeverity, Detail: "no node can take the run's " + what + notCounted,
					Action: "run KubeVirt's virt-handler on the nodes (kubevirt.io/schedulable=true), with /dev/kvm or useEmulation"}
			}
		}
		return fail(name, "no node can take the run's "+what+notCounted,
			"uncordon or add nodes, or tolerate their taints and match their labels under spec.placement")
	}
	var total int64
	var cpuShort, memShort, figures []string
	for _, v := range candidates {
		total += v.room(cpu, memory)
		if v.cpu.Cmp(cpu) < 0 {
			cpuShort = append(cpuShort, "node "+v.name+" "+cpuText(v.cpu))
		}
		if v.memory.Cmp(memory) < 0 {
			memShort = append(memShort, "node "+v.name+" "+memText(v.memory))
		}
		figures = append(figures, fmt.Sprintf("node %s %d (%s, %s)", v.name, v.room(cpu, memory), cpusText(v.cpu), memText(v.memory)))
	}
	switch {
	case len(cpuShort) == len(candidates):
		return fail(name, fmt.Sprintf("no node has %s allocatable: %s%s", cpusText(cpu), list(cpuShort, maxNodesInSentence), notCounted), action)
	case len(memShort) == len(candidates):
		return fail(name, fmt.Sprintf("no node has %s memory allocatable: %s%s", memText(memory), list(memShort, maxNodesInSentence), notCounted), action)
	case total == 0:
		return fail(name, fmt.Sprintf("no node has both %s and %s allocatable: %s%s", cpusText(cpu), memText(memory), list(figures, maxNodesInSentence), notCounted), action)
	case total < members:
		return fail(name, fmt.Sprintf("the run's %s need room for %d, the nodes have room for %d: %s%s",
			what, members, total, list(figures, maxNodesInSentence), notCounted), action)
	}
	return pass(name, fmt.Sprintf("the run's %s fit, by allocatable resources before other pods' requests: room for %d (%s)%s",
		what, total, list(figures, maxNodesInSentence), notCounted))
}

func nodeRow(needs Needs, v nodeView, kv KubeVirtConfig) Check {
	name := "node/" + v.name
	if v.excluded != "" {
		return skip(name, "runs cannot use it: "+v.excluded)
	}
	figures := fmt.Sprintf("allocatable %s, %s", cpusText(v.cpu), memText(v.memory))
	var facts, problems []string
	seen := map[bool]bool{}
	for _, p := range needs.Platforms {
		if seen[p.VM()] || len(p.Members) == 0 || (p.VM() && !kv.Found) {
			continue
		}
		seen[p.VM()] = true
		cpu, memory := largest(p)
		switch {
		case p.VM() && v.usableForVMs(kv) != "":
			facts = append(facts, "no VMs: "+v.usableForVMs(kv))
		case p.VM():
			facts = append(facts, "room for "+plural(v.room(cpu, memory), "VM"))
		default:
			facts = append(facts, "room for "+plural(v.room(cpu, memory), "pod"))
		}
		if v.room(cpu, memory) == 0 {
			problems = append(problems, fmt.Sprintf("too small for one %s member (%s, %s)", p.Platform.Name, cpusText(cpu), memText(memory)))
		}
	}
	if needs.UsesVMI() && kv.Found {
		switch {
		case v.kvm > 0:
			facts = append(facts, fmt.Sprintf("KVM (%s %d)", KVMDevice, v.kvm))
		case v.kubevirt:
			facts = append(facts, "no KVM device")
		}
	}
	if limit := needs.Cluster.CPULimit(); v.cpu.MilliValue() < int64(limit)*1000 {
		problems = append(problems, fmt.Sprintf("fewer CPUs than cluster.cpu %d: the benchmarks' threads would share them", limit))
	}
	detail := figures + ": " + strings.Join(facts, ", ")
	if len(problems) > 0 {
		return warn(name, detail+"; "+strings.Join(problems, "; "), "runs go to the other nodes; lower spec.cluster to use this one")
	}
	return pass(name, detail)
}

// CheckVirtualization says whether VMs would run with KVM, under emulation, or not at all.
// managerForbidsEmulation is set when the manager runs with --emulation=forbid.
func CheckVirtualization(needs Needs, nodes []corev1.Node, kv KubeVirtConfig, kvErr error, vmiServed, managerForbidsEmulation bool) Check {
	const name = "kvm"
	switch {
	case !needs.UsesVMI():
		return skip(name, "the suite has no VM platform")
	case !vmiServed:
		return skip(name, "KubeVirt is not installed (see api/virtualmachineinstances)")
	case kvErr != nil:
		return warn(name, "cannot read KubeVirt's configuration (kubevirts.kubevirt.io): "+firstLine(kvErr),
			"grant get/list on kubevirts.kubevirt.io, or ask the cluster's admin whether useEmulation is set")
	case !kv.Found:
		return Check{Name: name, Result: needs.severity(), Detail: "the VMI API is served but no KubeVirt CR exists: KubeVirt is not deployed",
			Action: "deploy KubeVirt (a KubeVirt CR in its namespace)"}
	}
	var labelled, withKVM []string
	for _, v := range viewNodes(nodes, needs) {
		if v.excluded != "" || !v.kubevirt {
			continue
		}
		labelled = append(labelled, v.name)
		if v.kvm > 0 {
			withKVM = append(withKVM, v.name)
		}
	}
	if len(labelled) == 0 {
		return Check{Name: name, Result: needs.severity(),
			Detail: "no node the suite may use is labelled " + LabelKubeVirtNode + "=true: virt-handler runs on none of them, VMs cannot start",
			Action: "check KubeVirt's virt-handler DaemonSet, and spec.placement"}
	}
	if kv.Emulation {
		detail := "VMs would run under QEMU software emulation (KubeVirt's useEmulation: true): their figures are marked emulated and say nothing about VM overhead"
		if len(withKVM) > 0 {
			detail += fmt.Sprintf(" (%s offer %s, but KubeVirt does not ask for it with useEmulation)", list(withKVM, maxNodesInSentence), KVMDevice)
		}
		if managerForbidsEmulation {
			return Check{Name: name, Result: needs.severity(), Detail: detail + "; the manager runs with --emulation=forbid, so VM runs fail",
				Action: "give the nodes /dev/kvm and set useEmulation false, or install vmbench with emulation=allow"}
		}
		return warn(name, detail, "for VM figures that mean something, use nodes with hardware virtualisation (/dev/kvm) and set spec.configuration.developerConfiguration.useEmulation false in the KubeVirt CR")
	}
	if len(withKVM) == 0 {
		return Check{Name: name, Result: needs.severity(),
			Detail: fmt.Sprintf("no node offers %s (KubeVirt nodes: %s) and KubeVirt does not allow emulation: VMs cannot be scheduled", KVMDevice, list(labelled, maxNodesInSentence)),
			Action: "use nodes with /dev/kvm (nested virtualisation on cloud VMs), or set useEmulation: true in the KubeVirt CR (figures then say nothing about VM overhead)"}
	}
	return pass(name, fmt.Sprintf("VMs get KVM: %s on %s", KVMDevice, list(withKVM, maxNodesInSentence)))
}

// CheckCPUManager reports the kubelets' CPU manager policy where it can be seen: from the kubelet's
// configuration (policies, read through the API server's node proxy) or from KubeVirt's cpumanager
// node label.
func CheckCPUManager(needs Needs, nodes []corev1.Node, policies map[string]string, policyErr error) Check {
	const name = "cpu-manager"
	byPolicy := map[string][]string{}
	for _, v := range viewNodes(nodes, needs) {
		if v.excluded != "" {
			continue
		}
		policy := policies[v.name]
		if policy == "" {
			for i := range nodes {
				if nodes[i].Name != v.name {
					continue
				}
				switch nodes[i].Labels[LabelCPUManager] {
				case "true":
					policy = "static"
				case "false":
					policy = "none"
				}
			}
		}
		if policy != "" {
			byPolicy[policy] = append(byPolicy[policy], v.name)
		}
	}
	if len(byPolicy) == 0 {
		why := "the nodes carry no " + LabelCPUManager + " label (KubeVirt sets it)"
		if policyErr != nil {
			why += " and the kubelets' configuration cannot be read: " + firstLine(policyErr)
		}
		return skip(name, "not visible: "+why)
	}
	var parts []string
	for _, policy := range sortedKeys(byPolicy) {
		parts = append(parts, policy+" on "+list(byPolicy[policy], maxNodesInSentence))
	}
	detail := strings.Join(parts, "; ")
	if _, ok := byPolicy["static"]; !ok && needs.Cluster.DedicatedCPUs {
		return warn(name, detail+": cluster.dedicatedCPUs asks for CPUs of their own, which no node's kubelet grants, so runs will record that nothing was pinned",
			"start the benchmark nodes' kubelets with --cpu-manager-policy=static (and, for VMs, enable KubeVirt's CPUManager feature gate), or set cluster.dedicatedCPUs to false")
	}
	if _, ok := byPolicy["static"]; !ok && needs.Cluster.Guaranteed() {
		detail += " (with static, Guaranteed pods of whole CPUs get CPUs of their own, which steadies the figures)"
	}
	return pass(name, detail)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
