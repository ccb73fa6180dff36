package bands

import (
	"testing"

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
