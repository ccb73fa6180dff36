package platform

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files under testdata/vm-unchanged")

// unchangedRuns are VM runs of suites without a vm block, one per way the manager and the cluster
// shape the VMs: each network binding, cluster.dedicatedCPUs, lowered requests, netperf's ports.
func unchangedRuns() map[string]Run {
	runs := map[string]Run{}
	for _, network := range []VMNetwork{VMNetworkPasst, VMNetworkBridge, VMNetworkMasquerade} {
		run := vmRun()
		run.VMNetwork = network
		runs[string(network)] = run
	}
	dedicated := vmRun()
	dedicated.Suite.Spec.Cluster.DedicatedCPUs = true
	dedicated.VMNetwork = VMNetworkBridge
	runs["dedicated"] = dedicated
	lowered := vmRun(vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf})
	lowered.Suite.Spec.Cluster.CPURequest = quantity("500m")
	lowered.Suite.Spec.Cluster.MemoryRequest = quantity("2Gi")
	runs["requests"] = lowered
	return runs
}

// goldenJSON is the run's VMIs as Build returns them, indented, in Build's order.
func goldenJSON(t *testing.T, run Run) []byte {
	t.Helper()
	objs, err := VMIAdapter{}.Build(run)
	if err != nil {
		t.Fatal(err)
	}
	var vmis []*kubevirtv1.VirtualMachineInstance
	for _, o := range objs {
		if vmi, ok := o.(*kubevirtv1.VirtualMachineInstance); ok {
			vmis = append(vmis, vmi)
		}
	}
	out, err := json.MarshalIndent(vmis, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// A suite without a vm block builds, byte for byte, the VMIs that vmbench built before VM
// platforms could set how their VMs are built: the golden files were written by that code.
func TestVMsWithoutSettingsAreUnchanged(t *testing.T) {
	for name, run := range unchangedRuns() {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "vm-unchanged", name+".json")
			got := goldenJSON(t, run)
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the VMIs of a suite without a vm block changed; diff %s against the output of this test", path)
			}
		})
	}
}
