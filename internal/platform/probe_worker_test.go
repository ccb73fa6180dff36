package platform

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestProbeWorkerPod protects the container arm's worker pod: its name, the run's labels and role
// probe, the runner's probe-worker mode pointed at the master's name under the MPI Operator's
// Service and the probe port, what Pod Security's restricted profile asks (non-root, runtime-default
// seccomp, no escalation, every capability dropped), nothing of the node or the namespace (no volume,
// no token, no host namespace), one CPU, and for a replacement a required affinity off the evicted
// pod's node.
func TestProbeWorkerPod(t *testing.T) {
	run := testRun(containerPlatform)
	first := ProbeWorkerPod(run, 1, 90*time.Second, "")
	if first.Name != "demo-container-1-probe-1" || first.Labels[vmbenchv1.LabelRun] != run.Name || first.Labels[vmbenchv1.LabelRole] != vmbenchv1.RoleProbe {
		t.Errorf("pod %s labels %v, want demo-container-1-probe-1 with the run's labels and role probe", first.Name, first.Labels)
	}
	c := first.Spec.Containers[0]
	want := []string{"runner", "probe-worker", "--master", "demo-container-1-launcher.demo-container-1.bench.svc:12868", "--duration", "1m30s"}
	if len(c.Command) != len(want) {
		t.Fatalf("command %q, want %q", c.Command, want)
	}
	for i := range want {
		if c.Command[i] != want[i] {
			t.Errorf("command %q, want %q", c.Command, want)
		}
	}
	sc, psc := c.SecurityContext, first.Spec.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Privileged != nil || len(sc.Capabilities.Add) != 0 ||
		len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("container security %+v, want no escalation, no privilege, every capability dropped", sc)
	}
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security %+v, want non-root with the runtime's default seccomp profile", psc)
	}
	if len(first.Spec.Volumes) != 0 || first.Spec.AutomountServiceAccountToken == nil || *first.Spec.AutomountServiceAccountToken ||
		first.Spec.HostNetwork || first.Spec.HostPID || first.Spec.NodeName != "" || first.Spec.Affinity != nil {
		t.Errorf("spec %+v, want no volume, no token, no host namespace, no node and no affinity for the first worker", first.Spec)
	}
	if cpu := c.Resources.Limits[corev1.ResourceCPU]; cpu.String() != "1" {
		t.Errorf("cpu limit %s, want 1 (the probe's loop)", cpu.String())
	}
	replacement := ProbeWorkerPod(run, 2, time.Minute, "node-b")
	terms := replacement.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 1 || len(terms[0].MatchFields) != 1 || terms[0].MatchFields[0].Key != "metadata.name" ||
		terms[0].MatchFields[0].Operator != corev1.NodeSelectorOpNotIn || terms[0].MatchFields[0].Values[0] != "node-b" {
		t.Errorf("replacement affinity %+v, want metadata.name NotIn [node-b]", terms)
	}
	if k, ok := ProbeWorkerIndex(run.Name, replacement.Name); !ok || k != 2 {
		t.Errorf("ProbeWorkerIndex(%s) = %d, %v", replacement.Name, k, ok)
	}
	if _, ok := ProbeWorkerIndex(run.Name, run.Name+"-probe-02"); ok {
		t.Error("ProbeWorkerIndex read a name the manager does not make")
	}
}

// TestProbePeerPodOfAVMRun protects the VM arm's peer: a VM run's probe worker reports to the master
// VM by its name in the run's headless Service (which follows the VM to its new virt-launcher pod
// after a live migration) on the probe port, without the CPU loop (--load=false) and with 200m of
// CPU, not a whole one beside the VMs; and the master VM's passt binding forwards the probe port
// where the suite has a migration benchmark, and not otherwise.
func TestProbePeerPodOfAVMRun(t *testing.T) {
	migration := vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration}
	run := testRun(vmPlatform, migration)
	pod := ProbeWorkerPod(run, 1, time.Minute, "")
	c := pod.Spec.Containers[0]
	want := []string{"runner", "probe-worker", "--master", "master." + run.Name + ".bench.svc:12868", "--duration", "1m0s", "--load=false"}
	if len(c.Command) != len(want) {
		t.Fatalf("command %q, want %q", c.Command, want)
	}
	for i := range want {
		if c.Command[i] != want[i] {
			t.Errorf("command %q, want %q", c.Command, want)
		}
	}
	if cpu := c.Resources.Limits[corev1.ResourceCPU]; cpu.String() != "200m" {
		t.Errorf("CPU limit %s, want 200m", cpu.String())
	}
	forwards := func(benchmarks ...vmbenchv1.Benchmark) bool {
		for _, p := range vmPorts(benchmarks) {
			if p.Port == 12868 && p.Protocol == "TCP" {
				return true
			}
		}
		return false
	}
	if !forwards(migration) {
		t.Error("the VM's ports lack 12868 with a migration benchmark: the peer could not reach the probe under passt")
	}
	if forwards(vmbenchv1.Benchmark{Name: "p", Type: vmbenchv1.BenchmarkPing}) {
		t.Error("the VM's ports have 12868 without a migration benchmark")
	}
}
