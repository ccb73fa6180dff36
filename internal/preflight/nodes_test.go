package preflight

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestCheckNodesFit(t *testing.T) {
	const vm, container = vmbenchv1.PlatformVM, vmbenchv1.PlatformContainer
	tests := []struct {
		name   string
		suite  func(t *testing.T) *vmbenchv1.BenchmarkSuite
		nodes  func(t *testing.T) []corev1.Node
		kv     KubeVirtConfig
		check  string
		result Result
		detail []string
	}{
		{name: "the quick sample fits the kind cluster's two workers",
			suite: quick, nodes: kindNodes, kv: KubeVirtConfig{Found: true, Emulation: true}, check: "fit/container", result: Pass,
			detail: []string{"the run's 3 pods of 100m CPU, 1Gi fit", "room for 14", "node vmbench-worker 7 (2 CPUs, 7.6Gi)",
				"not counted: vmbench-control-plane (taint node-role.kubernetes.io/control-plane:NoSchedule not tolerated)"}},
		{name: "the quick sample's VMs carry KubeVirt's overhead",
			suite: quick, nodes: kindNodes, kv: KubeVirtConfig{Found: true, Emulation: true}, check: "fit/vm", result: Pass,
			detail: []string{"3 VMs of 100m CPU, 1.2Gi (with KubeVirt's overhead, estimated) fit", "node vmbench-worker 6"}},
		{name: "more CPU than any node has names every node's figure",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 64, "64", "2Gi") },
			nodes: kindNodes, check: "fit/container", result: Fail,
			detail: []string{"no node has 64 CPUs allocatable: node vmbench-worker 2, node vmbench-worker2 2", "not counted: vmbench-control-plane"}},
		{name: "the brief's example: 4 CPUs on two nodes of 2",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 4, "", "2Gi", container) },
			nodes: func(*testing.T) []corev1.Node { return []corev1.Node{node("a", "2", "16Gi"), node("b", "2", "16Gi")} },
			check: "fit/container", result: Fail, detail: []string{"no node has 4 CPUs allocatable: node a 2, node b 2"}},
		{name: "more memory than any node has",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 1, "", "16Gi", container) },
			nodes: func(*testing.T) []corev1.Node { return []corev1.Node{node("a", "8", "8Gi"), node("b", "8", "12Gi")} },
			check: "fit/container", result: Fail, detail: []string{"no node has 16Gi memory allocatable: node a 8Gi, node b 12Gi"}},
		{name: "one resource short on each node",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 4, "", "8Gi", container) },
			nodes: func(*testing.T) []corev1.Node { return []corev1.Node{node("a", "8", "4Gi"), node("b", "2", "32Gi")} },
			check: "fit/container", result: Fail, detail: []string{"no node has both 4 CPUs and 8Gi allocatable: node a 0 (8 CPUs, 4Gi), node b 0 (2 CPUs, 32Gi)"}},
		{name: "each pod fits somewhere, but not all three",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 2, "", "2Gi", container) },
			nodes: func(*testing.T) []corev1.Node { return []corev1.Node{node("a", "2", "8Gi"), node("b", "3", "8Gi")} },
			check: "fit/container", result: Fail, detail: []string{"the run's 3 pods of 2 CPUs, 2Gi need room for 3, the nodes have room for 2: node a 1 (2 CPUs, 8Gi), node b 1 (3 CPUs, 8Gi)"}},
		{name: "cordoned, not Ready and unmatched nodes do not count",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite {
				s := shaped(t, 1, "", "1Gi", container)
				s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"pool": "bench"}
				return s
			},
			nodes: func(*testing.T) []corev1.Node {
				return []corev1.Node{node("a", "8", "8Gi", cordoned), node("b", "8", "8Gi", notReady), node("c", "8", "8Gi")}
			},
			check: "fit/container", result: Fail,
			detail: []string{"no node can take the run's 3 pods of 1 CPU, 1Gi; not counted: a (cordoned), b (not Ready), c (does not match spec.placement.nodeSelector pool=bench)"}},
		{name: "a toleration lets runs use a tainted node",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite {
				s := shaped(t, 1, "", "1Gi", container)
				s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}
				return s
			},
			nodes: func(*testing.T) []corev1.Node { return []corev1.Node{node("a", "8", "8Gi", tainted("dedicated"))} },
			check: "fit/container", result: Pass, detail: []string{"room for 8 (node a 8 (8 CPUs, 8Gi))"}},
		{name: "VMs need KubeVirt's nodes with KVM unless emulation is allowed",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 1, "", "1Gi", vm) },
			nodes: func(*testing.T) []corev1.Node {
				return []corev1.Node{node("a", "8", "8Gi"), node("b", "8", "8Gi", kubeVirtNode("")), node("c", "8", "8Gi", kubeVirtNode("1k"))}
			},
			kv: KubeVirtConfig{Found: true}, check: "fit/vm", result: Pass,
			detail: []string{"room for 6 (node c 6 (8 CPUs, 8Gi)); not counted: a (not kubevirt.io/schedulable=true), b (no devices.kubevirt.io/kvm)"}},
		{name: "under emulation the KVM device does not matter",
			suite: func(t *testing.T) *vmbenchv1.BenchmarkSuite { return shaped(t, 1, "", "1Gi", vm) },
			nodes: func(*testing.T) []corev1.Node { return []corev1.Node{node("b", "8", "8Gi", kubeVirtNode(""))} },
			kv:    KubeVirtConfig{Found: true, Emulation: true}, check: "fit/vm", result: Pass, detail: []string{"node b 6"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := CheckNodes(needsOf(t, tt.suite(t), true), tt.nodes(t), tt.kv)
			expect(t, byName(checks, tt.check), tt.result, tt.detail...)
		})
	}
}

func TestCheckNodesRows(t *testing.T) {
	checks := CheckNodes(needsOf(t, quick(t), true), kindNodes(t), KubeVirtConfig{Found: true, Emulation: true})
	expect(t, byName(checks, "node/vmbench-control-plane"), Skip, "runs cannot use it: taint node-role.kubernetes.io/control-plane:NoSchedule not tolerated")
	expect(t, byName(checks, "node/vmbench-worker"), Pass, "allocatable 2 CPUs, 7.6Gi: room for 7 pods, room for 6 VMs, KVM (devices.kubevirt.io/kvm 1000)")

	small := CheckNodes(needsOf(t, shaped(t, 4, "1", "2Gi", vmbenchv1.PlatformContainer), true),
		[]corev1.Node{node("tiny", "500m", "8Gi"), node("big", "8", "32Gi")}, KubeVirtConfig{})
	expect(t, byName(small, "node/tiny"), Warn, "room for 0 pods", "too small for one container member (1 CPU, 2Gi)", "fewer CPUs than cluster.cpu 4")
	expect(t, byName(small, "node/big"), Pass, "room for 8 pods")

	if got := CheckNodes(needsOf(t, quick(t), true), nil, KubeVirtConfig{}); len(got) != 1 || got[0].Result != Fail {
		t.Errorf("no nodes: %+v", got)
	}
}

func TestCheckVirtualization(t *testing.T) {
	kvmNodes := []corev1.Node{node("a", "8", "8Gi", kubeVirtNode("1k")), node("b", "8", "8Gi", kubeVirtNode("1k"))}
	plain := []corev1.Node{node("a", "8", "8Gi", kubeVirtNode("")), node("b", "8", "8Gi", kubeVirtNode(""))}
	tests := []struct {
		name      string
		explicit  bool
		platforms []vmbenchv1.PlatformType
		nodes     []corev1.Node
		kv        KubeVirtConfig
		kvErr     error
		vmi       bool
		forbid    bool
		result    Result
		detail    string
	}{
		{name: "KVM", explicit: true, nodes: kvmNodes, kv: KubeVirtConfig{Found: true}, vmi: true, result: Pass,
			detail: "VMs get KVM: devices.kubevirt.io/kvm on a, b"},
		{name: "emulation is a warning", explicit: true, nodes: plain, kv: KubeVirtConfig{Found: true, Emulation: true}, vmi: true, result: Warn,
			detail: "VMs would run under QEMU software emulation (KubeVirt's useEmulation: true)"},
		{name: "emulation that the manager forbids fails", explicit: true, nodes: plain, kv: KubeVirtConfig{Found: true, Emulation: true}, vmi: true, forbid: true,
			result: Fail, detail: "--emulation=forbid"},
		{name: "emulation though KVM is there", explicit: true, nodes: kvmNodes, kv: KubeVirtConfig{Found: true, Emulation: true}, vmi: true, result: Warn,
			detail: "a, b offer devices.kubevirt.io/kvm, but KubeVirt does not ask for it"},
		{name: "no KVM, no emulation", explicit: true, nodes: plain, kv: KubeVirtConfig{Found: true}, vmi: true, result: Fail,
			detail: "no node offers devices.kubevirt.io/kvm (KubeVirt nodes: a, b) and KubeVirt does not allow emulation"},
		{name: "no KVM, no emulation, default suite", nodes: plain, kv: KubeVirtConfig{Found: true}, vmi: true, result: Warn},
		{name: "no virt-handler anywhere", explicit: true, nodes: []corev1.Node{node("a", "8", "8Gi")}, kv: KubeVirtConfig{Found: true}, vmi: true,
			result: Fail, detail: "no node the suite may use is labelled kubevirt.io/schedulable=true"},
		{name: "no KubeVirt CR", explicit: true, nodes: kvmNodes, vmi: true, result: Fail, detail: "no KubeVirt CR exists"},
		{name: "KubeVirt CR unreadable", explicit: true, nodes: kvmNodes, kvErr: errForbidden, vmi: true, result: Warn, detail: "cannot read KubeVirt's configuration"},
		{name: "no KubeVirt", explicit: true, nodes: kvmNodes, result: Skip, detail: "KubeVirt is not installed"},
		{name: "no VM platform", explicit: true, platforms: []vmbenchv1.PlatformType{vmbenchv1.PlatformContainer}, nodes: plain, vmi: true,
			result: Skip, detail: "no VM platform"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := quick(t)
			if tt.platforms != nil {
				s = shaped(t, 1, "100m", "1Gi", tt.platforms...)
			}
			c := CheckVirtualization(needsOf(t, s, tt.explicit), tt.nodes, tt.kv, tt.kvErr, tt.vmi, tt.forbid)
			expect(t, c, tt.result, tt.detail)
			if c.Result != Pass && c.Result != Skip && c.Action == "" {
				t.Errorf("%s without an action", c.Result)
			}
		})
	}
}

func TestCheckCPUManager(t *testing.T) {
	needs := needsOf(t, shaped(t, 2, "", "2Gi", vmbenchv1.PlatformContainer), true)
	nodes := []corev1.Node{node("a", "8", "8Gi"), node("b", "8", "8Gi", labelled(LabelCPUManager, "true")), node("c", "8", "8Gi", cordoned)}

	expect(t, CheckCPUManager(needs, nodes, map[string]string{"a": "static"}, nil), Pass, "static on a, b")
	expect(t, CheckCPUManager(needs, nodes, nil, errForbidden), Pass, "static on b")
	expect(t, CheckCPUManager(needs, nodes[:1], map[string]string{"a": "none"}, nil), Pass,
		"none on a (with static, Guaranteed pods of whole CPUs get CPUs of their own")
	expect(t, CheckCPUManager(needs, nodes[:1], nil, errForbidden), Skip,
		"not visible: the nodes carry no cpumanager label (KubeVirt sets it) and the kubelets' configuration cannot be read: nodes \"a\" is forbidden")

	// Dedicated CPUs asked for: a cluster without a static kubelet is warned about, one with it passes.
	needs.Cluster.DedicatedCPUs = true
	expect(t, CheckCPUManager(needs, nodes[:1], map[string]string{"a": "none"}, nil), Warn,
		"none on a: cluster.dedicatedCPUs asks for CPUs of their own, which no node's kubelet grants")
	expect(t, CheckCPUManager(needs, nodes, map[string]string{"a": "none"}, nil), Pass, "none on a; static on b")
}

func TestCPUManagerPolicy(t *testing.T) {
	for raw, want := range map[string]string{
		`{"kubeletconfig":{"cpuManagerPolicy":"static","cpuManagerReconcilePeriod":"10s"}}`: "static",
		`{"kubeletconfig":{"staticPodPath":"/etc/kubernetes/manifests"}}`:                   "none",
	} {
		if got, err := CPUManagerPolicy([]byte(raw)); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", raw, got, err, want)
		}
	}
	if _, err := CPUManagerPolicy([]byte(`<html>`)); err == nil {
		t.Error("garbage: no error")
	}
}

func TestFitOfVMsWithoutKubeVirt(t *testing.T) {
	nodes := []corev1.Node{node("a", "8", "8Gi"), node("b", "8", "8Gi")}
	// No KubeVirt at all: the API check says so, the VMs' fit is not checked, the nodes do not speak of VMs.
	checks := CheckNodes(needsOf(t, quick(t), true), nodes, KubeVirtConfig{})
	expect(t, byName(checks, "fit/vm"), Skip, "KubeVirt is not deployed")
	expect(t, byName(checks, "fit/container"), Pass)
	expect(t, byName(checks, "node/a"), Pass, "allocatable 8 CPUs, 8Gi: room for 8 pods")
	if d := byName(checks, "node/a").Detail; strings.Contains(d, "VM") {
		t.Errorf("node row speaks of VMs: %s", d)
	}
	// KubeVirt deployed, but virt-handler on none of the nodes: only the VM platforms cannot run.
	kv := KubeVirtConfig{Found: true}
	expect(t, byName(CheckNodes(needsOf(t, quick(t), true), nodes, kv), "fit/vm"), Fail,
		"no node can take the run's 3 VMs", "a (not kubevirt.io/schedulable=true)")
	expect(t, byName(CheckNodes(needsOf(t, quick(t), false), nodes, kv), "fit/vm"), Warn)
}
