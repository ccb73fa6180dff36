package suite

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var (
	containerPlatform = vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer}
	vmPlatform        = vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM}
	hostPlatform      = vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}
)

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// testSuite is a suite as the API server stores it after applying the CRD's defaults.
func testSuite(benchmarks ...vmbenchv1.Benchmark) *vmbenchv1.BenchmarkSuite {
	if len(benchmarks) == 0 {
		benchmarks = []vmbenchv1.Benchmark{{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC}}
	}
	return &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "bench"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms:   []vmbenchv1.Platform{containerPlatform, vmPlatform},
			Baseline:    "container",
			Cluster:     vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi")},
			Benchmarks:  benchmarks,
			Repetitions: 3,
			Timeout:     vmbenchv1.DurationOf(6 * time.Hour),
		},
	}
}

func TestPlannedRuns(t *testing.T) {
	a := vmbenchv1.Platform{Name: "a", Type: vmbenchv1.PlatformContainer}
	b := vmbenchv1.Platform{Name: "b", Type: vmbenchv1.PlatformVM}
	c := vmbenchv1.Platform{Name: "c", Type: vmbenchv1.PlatformHost}
	run := func(p vmbenchv1.Platform, rep int32, name string) plannedRun {
		return plannedRun{Name: name, Platform: p, Repetition: rep}
	}
	tests := []struct {
		name        string
		platforms   []vmbenchv1.Platform
		repetitions int32
		want        []plannedRun
	}{
		{
			name: "two platforms alternate ABBA", platforms: []vmbenchv1.Platform{containerPlatform, vmPlatform}, repetitions: 3,
			want: []plannedRun{
				run(containerPlatform, 1, "demo-container-1"), run(vmPlatform, 1, "demo-vm-1"),
				run(vmPlatform, 2, "demo-vm-2"), run(containerPlatform, 2, "demo-container-2"),
				run(containerPlatform, 3, "demo-container-3"), run(vmPlatform, 3, "demo-vm-3"),
			},
		},
		{
			name: "two platforms, four repetitions", platforms: []vmbenchv1.Platform{vmPlatform, containerPlatform}, repetitions: 4,
			want: []plannedRun{
				run(vmPlatform, 1, "demo-vm-1"), run(containerPlatform, 1, "demo-container-1"),
				run(containerPlatform, 2, "demo-container-2"), run(vmPlatform, 2, "demo-vm-2"),
				run(vmPlatform, 3, "demo-vm-3"), run(containerPlatform, 3, "demo-container-3"),
				run(containerPlatform, 4, "demo-container-4"), run(vmPlatform, 4, "demo-vm-4"),
			},
		},
		{
			name: "one platform", platforms: []vmbenchv1.Platform{hostPlatform}, repetitions: 2,
			want: []plannedRun{run(hostPlatform, 1, "demo-host-1"), run(hostPlatform, 2, "demo-host-2")},
		},
		{
			name: "three platforms reverse every other repetition", platforms: []vmbenchv1.Platform{a, b, c}, repetitions: 3,
			want: []plannedRun{
				run(a, 1, "demo-a-1"), run(b, 1, "demo-b-1"), run(c, 1, "demo-c-1"),
				run(c, 2, "demo-c-2"), run(b, 2, "demo-b-2"), run(a, 2, "demo-a-2"),
				run(a, 3, "demo-a-3"), run(b, 3, "demo-b-3"), run(c, 3, "demo-c-3"),
			},
		},
		{
			name: "ten repetitions name the tenth run -10", platforms: []vmbenchv1.Platform{a}, repetitions: 10,
			want: func() []plannedRun {
				var out []plannedRun
				for _, name := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"} {
					out = append(out, run(a, int32(len(out)+1), "demo-a-"+name))
				}
				return out
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := testSuite()
			suite.Spec.Platforms, suite.Spec.Repetitions = tt.platforms, tt.repetitions
			if diff := cmp.Diff(tt.want, plannedRuns(suite)); diff != "" {
				t.Errorf("plannedRuns() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecutions(t *testing.T) {
	tests := []struct {
		name  string
		b     vmbenchv1.Benchmark
		nodes int32
		want  int64
	}{
		{name: "hpcc runs once across all nodes", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkHPCC}, nodes: 3, want: 1},
		{name: "sysbench-cpu once per node", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchCPU}, nodes: 3, want: 3},
		{name: "sysbench-memory per node and block size", nodes: 3, want: 9, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory,
			SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{BlockSizes: []string{"1K", "1M", "1G"}}}},
		{name: "sysbench-memory default block sizes", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory}, nodes: 2, want: 4},
		{name: "stress-ng-cpu once per node", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkStressNGCPU}, nodes: 5, want: 5},
		{name: "stress-ng-vm once per node", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkStressNGVM}, nodes: 4, want: 4},
		{name: "iozone per node and target", nodes: 3, want: 6, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIozone,
			Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}}},
		{name: "iperf3 per node and pair", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIperf3}, nodes: 3, want: 9},
		{name: "ping per node and pair", nodes: 4, want: 8, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkPing,
			Ping: &vmbenchv1.PingParams{Pairs: []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode, vmbenchv1.PairNodeToNode}}}},
		{name: "fio once per node", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkFio}, nodes: 8, want: 8},
		{name: "netperf per node, pair and test", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetperf}, nodes: 3, want: 18},
		{name: "netperf one test", nodes: 3, want: 6, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetperf,
			Netperf: &vmbenchv1.NetperfParams{Tests: []vmbenchv1.NetperfTest{vmbenchv1.NetperfTCPRR},
				Pairs: []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode, vmbenchv1.PairNodeToMaster}}}},
		{name: "netcat per node and pair", b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetcat}, nodes: 4, want: 12},
		{name: "sysbench-cpu on all nodes at once", nodes: 3, want: 1,
			b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchCPU, Concurrency: vmbenchv1.ConcurrencyAllNodes}},
		{name: "sysbench-memory on all nodes at once, once per block size", nodes: 3, want: 3, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory,
			Concurrency: vmbenchv1.ConcurrencyAllNodes, SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{BlockSizes: []string{"1K", "1M", "1G"}}}},
		{name: "iozone on all nodes at once, once per target", nodes: 4, want: 2, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIozone, Concurrency: vmbenchv1.ConcurrencyAllNodes,
			Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}}},
		{name: "fio on all nodes at once", nodes: 8, want: 1, b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkFio, Concurrency: vmbenchv1.ConcurrencyAllNodes}},
		{name: "OneNodeAtATime is once per node", nodes: 3, want: 3,
			b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkStressNGCPU, Concurrency: vmbenchv1.ConcurrencyOneNodeAtATime}},
		// Suites stored before the CRD refused it: the runner runs ping pair by pair whatever the field says.
		{name: "AllNodes on ping still counts every pair", nodes: 3, want: 9,
			b: vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkPing, Concurrency: vmbenchv1.ConcurrencyAllNodes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := executions(tt.b.WithDefaults(), tt.nodes); got != tt.want {
				t.Errorf("executions(%s, %d nodes) = %d, want %d", tt.b.Type, tt.nodes, got, tt.want)
			}
		})
	}
}

func TestRunDeadline(t *testing.T) {
	timeout := vmbenchv1.DurationOf
	tests := []struct {
		name       string
		startup    time.Duration
		benchmarks []vmbenchv1.Benchmark
		nodes      int32
		want       time.Duration
	}{
		{name: "no benchmarks is the startup time", startup: 5 * time.Minute, nodes: 3, want: 5 * time.Minute},
		{
			name: "startup plus timeout times executions", startup: 5 * time.Minute, nodes: 3,
			benchmarks: []vmbenchv1.Benchmark{
				{Type: vmbenchv1.BenchmarkHPCC, Timeout: timeout(10 * time.Minute)},        // 1 × 10m
				{Type: vmbenchv1.BenchmarkSysbenchMemory, Timeout: timeout(time.Minute)},   // 3 nodes × 2 block sizes × 1m
				{Type: vmbenchv1.BenchmarkPing, Timeout: timeout(30 * time.Second)},        // 3 nodes × 3 pairs × 30s
				{Type: vmbenchv1.BenchmarkSysbenchCPU, Timeout: timeout(20 * time.Second)}, // 3 nodes × 20s
			},
			// 5m + 10m + 6m + 4m30s + 1m = 26m30s
			want: 26*time.Minute + 30*time.Second,
		},
		{
			name: "AllNodes takes one timeout, not one per node", startup: 5 * time.Minute, nodes: 3,
			benchmarks: []vmbenchv1.Benchmark{
				{Type: vmbenchv1.BenchmarkSysbenchCPU, Timeout: timeout(20 * time.Minute), Concurrency: vmbenchv1.ConcurrencyAllNodes}, // 20m
				{Type: vmbenchv1.BenchmarkSysbenchCPU, Timeout: timeout(time.Minute)},                                                  // 3 nodes × 1m
			},
			want: 28 * time.Minute,
		},
		{
			name: "default timeouts", startup: time.Minute, nodes: 2,
			benchmarks: []vmbenchv1.Benchmark{{Type: vmbenchv1.BenchmarkFio}}, // 2 nodes × 30m
			want:       61 * time.Minute,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := testSuite(tt.benchmarks...)
			suite.Spec.Benchmarks = tt.benchmarks
			if got := runDeadline(tt.startup, DefaultedBenchmarks(suite), tt.nodes); got != tt.want {
				t.Errorf("runDeadline() = %s, want %s", got, tt.want)
			}
		})
	}
}

// jsonName is the name under which a field appears in YAML, which is what a message must name.
func jsonName(t *testing.T, v any, field string) string {
	t.Helper()
	f, ok := reflect.TypeOf(v).FieldByName(field)
	if !ok {
		t.Fatalf("%T has no field %s", v, field)
	}
	return strings.Split(f.Tag.Get("json"), ",")[0]
}

func TestValidateSpec(t *testing.T) {
	hpcc := vmbenchv1.Benchmark{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC}
	tests := []struct {
		name       string
		edit       func(*vmbenchv1.BenchmarkSuite)
		wantErr    []string // substrings of the error; nil means valid
		benchmarks []vmbenchv1.Benchmark
	}{
		{name: "default suite is valid", edit: func(*vmbenchv1.BenchmarkSuite) {}},
		{name: "suite built in Go without defaults is valid", edit: func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster = vmbenchv1.ClusterShape{}
		}},
		{name: "requests equal to limits are valid", edit: func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.CPURequest, s.Spec.Cluster.MemoryRequest = quantity("2"), quantity("2Gi")
		}},
		{name: "lower requests on containers only are valid", edit: func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform, hostPlatform}
			s.Spec.Cluster.CPURequest, s.Spec.Cluster.MemoryRequest = quantity("500m"), quantity("1Gi")
		}},
		{name: "lower cpu request with VMs is valid", edit: func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.CPURequest = quantity("1500m")
		}},
		{
			name:    "cpu request above cpu",
			edit:    func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.CPURequest = quantity("2500m") },
			wantErr: []string{"cluster.cpuRequest 2500m exceeds cluster.cpu 2", "lower cluster.cpuRequest or remove it"},
		},
		{
			name:    "memory request above memory",
			edit:    func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = quantity("3Gi") },
			wantErr: []string{"cluster.memoryRequest 3Gi exceeds cluster.memory 2Gi", "lower cluster.memoryRequest or remove it"},
		},
		{
			name: "memory request above the default memory",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Memory = nil
				s.Spec.Cluster.MemoryRequest = quantity("4Gi")
			},
			wantErr: []string{"cluster.memoryRequest 4Gi exceeds cluster.memory 2Gi"},
		},
		{
			// sqrt(256Mi × 1% / 8) = 579 is below NB 1024.
			name: "derived HPL N too small for tiny memory",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, quantity("256Mi")
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
				{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{MemoryPercent: 1, NB: 1024}}},
			wantErr: []string{"benchmark linpack", "1 nodes of 256Mi", "1% memory and NB=1024",
				"set hpcc.problemSize, or raise cluster.memory or hpcc.memoryPercent"},
		},
		{
			// The largest block size decides: sqrt(256Mi × 1% / 8) = 579 is below 1024, not below 64.
			name: "derived HPL N too small for the largest of the block sizes",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, quantity("256Mi")
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{MemoryPercent: 1, BlockSizes: []int32{64, 1024}}}},
			wantErr:    []string{"benchmark linpack", "1 nodes of 256Mi", "1% memory and NB=1024"},
		},
		{
			// The workers' memory only: 1 worker of 256Mi at 2% gives sqrt(671088) = 819 < 1024; with
			// the master it would be 1158.
			name: "derived HPL N on the workers only",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 2, quantity("256Mi")
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{MemoryPercent: 2, NB: 1024, Nodes: vmbenchv1.HPCCWorkers}}},
			wantErr:    []string{"benchmark linpack", "1 nodes of 256Mi", "2% memory and NB=1024"},
		},
		{
			name: "derived HPL N on all nodes of the same cluster is valid",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 2, quantity("256Mi")
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{MemoryPercent: 2, NB: 1024}}},
		},
		{
			name: "workers only on a one-node cluster",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes = 1
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptr.To[int32](1000), Nodes: vmbenchv1.HPCCWorkers}}},
			wantErr:    []string{"benchmark linpack", "hpcc.nodes Workers", "the cluster has 1 node(s)", "set spec.cluster.nodes to 2 or more, or hpcc.nodes to All"},
		},
		{
			name: "huge memory caps the derived HPL N and is valid",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 8, quantity("256Gi")
			},
			benchmarks: []vmbenchv1.Benchmark{hpcc},
		},
		{
			name: "tiny memory with hpcc.problemSize set is valid",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, quantity("256Mi")
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptr.To[int32](1000)}}},
		},
		{
			name: "tiny memory without hpcc is valid",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, quantity("256Mi")
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
			},
			benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}},
		},
		{
			name: "VM with memory request below memory",
			edit: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform, {Name: "kubevirt", Type: vmbenchv1.PlatformVM}}
				s.Spec.Cluster.MemoryRequest = quantity("1Gi")
			},
			wantErr: []string{"platform kubevirt", "cluster.memoryRequest below cluster.memory", "remove cluster.memoryRequest"},
		},
	}
	// The message names the field as it appears in YAML.
	if got := jsonName(t, vmbenchv1.HPCCParams{}, "N"); got != "problemSize" {
		t.Errorf("HPCCParams.N serializes as %q, but the message says hpcc.problemSize", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := testSuite(tt.benchmarks...)
			tt.edit(suite)
			err := validateSpec(suite, DefaultedBenchmarks(suite))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("validateSpec() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("validateSpec() = nil, want an error containing %q", tt.wantErr)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("validateSpec() = %q, want it to contain %q", err, want)
				}
			}
		})
	}
}

func TestDefaultedBenchmarks(t *testing.T) {
	suite := testSuite(
		vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{RW: "write"}},
		vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing},
		vmbenchv1.Benchmark{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC, Timeout: vmbenchv1.DurationOf(time.Hour)},
	)
	before := suite.DeepCopy()
	got := DefaultedBenchmarks(suite)

	want := make([]vmbenchv1.Benchmark, len(before.Spec.Benchmarks))
	for i, b := range before.Spec.Benchmarks {
		want[i] = b.WithDefaults()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DefaultedBenchmarks() mismatch (-want +got):\n%s", diff)
	}
	if got[0].Fio.RW != "write" || got[0].Fio.IODepth != 16 || got[1].Ping.Count != 10 || got[2].Timeout.Duration() != time.Hour {
		t.Errorf("DefaultedBenchmarks() did not keep user values and fill defaults: %+v", got)
	}
	if diff := cmp.Diff(before, suite); diff != "" {
		t.Errorf("DefaultedBenchmarks() changed the suite (-before +after):\n%s", diff)
	}
}

func TestDefaultPairsFitTheCluster(t *testing.T) {
	for _, tc := range []struct {
		nodes int32
		want  []vmbenchv1.NodePair
	}{
		{2, []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode, vmbenchv1.PairNodeToMaster}},
		{3, []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode, vmbenchv1.PairNodeToMaster, vmbenchv1.PairNodeToNode}},
	} {
		s := &vmbenchv1.BenchmarkSuite{Spec: vmbenchv1.BenchmarkSuiteSpec{
			Cluster: vmbenchv1.ClusterShape{Nodes: tc.nodes},
			Benchmarks: []vmbenchv1.Benchmark{
				{Name: "net", Type: vmbenchv1.BenchmarkIperf3},
				{Name: "ping", Type: vmbenchv1.BenchmarkPing},
				{Name: "explicit", Type: vmbenchv1.BenchmarkPing, Ping: &vmbenchv1.PingParams{Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToMaster}}},
				{Name: "netperf", Type: vmbenchv1.BenchmarkNetperf},
				{Name: "netcat", Type: vmbenchv1.BenchmarkNetcat},
			},
		}}
		got := DefaultedBenchmarks(s)
		if diff := cmp.Diff(tc.want, got[0].Iperf3.Pairs); diff != "" {
			t.Errorf("%d nodes, iperf3 pairs (-want +got):\n%s", tc.nodes, diff)
		}
		if diff := cmp.Diff(tc.want, got[1].Ping.Pairs); diff != "" {
			t.Errorf("%d nodes, ping pairs (-want +got):\n%s", tc.nodes, diff)
		}
		if diff := cmp.Diff(tc.want, got[3].Netperf.Pairs); diff != "" {
			t.Errorf("%d nodes, netperf pairs (-want +got):\n%s", tc.nodes, diff)
		}
		if diff := cmp.Diff(tc.want, got[4].Netcat.Pairs); diff != "" {
			t.Errorf("%d nodes, netcat pairs (-want +got):\n%s", tc.nodes, diff)
		}
		if diff := cmp.Diff([]vmbenchv1.NodePair{vmbenchv1.PairNodeToMaster}, got[2].Ping.Pairs); diff != "" {
			t.Errorf("%d nodes, explicit pairs changed (-want +got):\n%s", tc.nodes, diff)
		}
	}
}
