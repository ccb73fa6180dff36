package suite

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The cross-field rules of a suite's spec are the ValidatingAdmissionPolicy vmbench-suite-spec
// (config/admission/suite_spec.yaml), not CRD rules: where that policy is not installed, a suite that
// breaks one reaches the manager, and validateSpec must refuse it (condition InvalidSpec) before a run
// starts. One case per rule of the policy, in its order; each bad spec breaks that rule alone.
func TestValidateSpecRefusesWhatTheSpecPolicyRefuses(t *testing.T) {
	q := func(s string) *resource.Quantity { return ptr.To(resource.MustParse(s)) }
	hpcc := func(p vmbenchv1.HPCCParams) vmbenchv1.Benchmark {
		return vmbenchv1.Benchmark{Name: "hpl", Type: vmbenchv1.BenchmarkHPCC, HPCC: &p}
	}
	vm := func(s *vmbenchv1.BenchmarkSuite, settings vmbenchv1.VMSettings) { s.Spec.Platforms[1].VM = &settings }
	tests := []struct {
		name string
		edit func(*vmbenchv1.BenchmarkSuite)
	}{
		{"baseline that is no platform", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Baseline = "bare" }},
		{"network benchmark on one node", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 1
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "net", Type: vmbenchv1.BenchmarkIperf3}}
		}},
		{"node-node pair on two nodes", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 2
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "net", Type: vmbenchv1.BenchmarkPing,
				Ping: &vmbenchv1.PingParams{Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToNode}}}}
		}},
		{"Shared target without shared storage", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "disk", Type: vmbenchv1.BenchmarkFio,
				Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}}}
		}},
		{"precision on one repetition", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions = 1
			s.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 10, Metrics: []string{"hpcc"}}
		}},
		{"maxRepetitions below repetitions", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 2, Metrics: []string{"hpcc"}}
		}},
		{"precision metric of no benchmark", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 10, Metrics: []string{"hpl/HPL_Tflops"}}
		}},
		{"hpcc p*q not the ranks", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{hpcc(vmbenchv1.HPCCParams{P: ptr.To[int32](3), Q: ptr.To[int32](3)})}
		}},
		{"hpcc grid p*q not the ranks", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{hpcc(vmbenchv1.HPCCParams{Grids: []vmbenchv1.HPLGrid{{P: 2, Q: 3}, {P: 1, Q: 5}}})}
		}},
		{"hpcc Workers on one node", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 1
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{hpcc(vmbenchv1.HPCCParams{Nodes: vmbenchv1.HPCCWorkers})}
		}},
		{"isolateEmulatorThread without dedicated CPUs", func(s *vmbenchv1.BenchmarkSuite) {
			vm(s, vmbenchv1.VMSettings{IsolateEmulatorThread: true})
		}},
		{"dedicatedCPUs with a CPU request", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.CPURequest = q("1")
			vm(s, vmbenchv1.VMSettings{DedicatedCPUs: true})
		}},
		{"1Gi huge pages on 1536Mi", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Memory = q("1536Mi")
			vm(s, vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi})
		}},
		{"Masquerade with hpcc across VMs", func(s *vmbenchv1.BenchmarkSuite) {
			vm(s, vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade})
		}},
		{"HPL problem size above the memory", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{hpcc(vmbenchv1.HPCCParams{N: ptr.To[int32](150000)})}
		}},
		{"HPL block wider than the derived matrix", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, q("256Mi")
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{hpcc(vmbenchv1.HPCCParams{MemoryPercent: 1, BlockSizes: []int32{64, 1024}})}
		}},
		{"sysbench block above the memory", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory,
				SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{BlockSizes: []string{"1K", "4G"}}}}
		}},
		{"stress-ng bytes above the memory", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "vm", Type: vmbenchv1.BenchmarkStressNGVM,
				StressNGVM: &vmbenchv1.StressNGVMParams{Bytes: "4G"}}}
		}},
		{"Shared writes above the shared storage size", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: q("1Gi")}
			s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "disk", Type: vmbenchv1.BenchmarkFio,
				Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared, Size: "2g"}}}
		}},
	}
	if len(tests) != 19 {
		t.Fatalf("%d cases, want one for each of the policy's 19 rules", len(tests))
	}
	if err := validateSpec(testSuite(), DefaultedBenchmarks(testSuite())); err != nil {
		t.Fatalf("validateSpec(testSuite()) = %v, want nil: the cases must start from a valid suite", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := testSuite()
			tt.edit(suite)
			if err := validateSpec(suite, DefaultedBenchmarks(suite)); err == nil {
				t.Errorf("validateSpec() = nil: a suite the spec policy refuses would run where the policy is not installed")
			} else {
				t.Log(err)
			}
		})
	}
}
