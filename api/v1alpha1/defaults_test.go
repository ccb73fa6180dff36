package v1alpha1

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func dur(d time.Duration) *Duration { return DurationOf(d) }

// def is a default as the CRD's markers write it, which WithDefaults writes alike.
func def(s Duration) *Duration { return &s }

func qty(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// The expected values below are copied from the +kubebuilder:default markers of the parameter types
// (hpcc_types.go, cpu_memory_types.go, storage_types.go, network_types.go), so that a marker and
// WithDefaults cannot drift apart unnoticed; iozone's fileSize and recordSize
// have no marker (see defaults.go) and come from the DefaultIozone constants.
func TestWithDefaultsFillsEveryMarkerDefault(t *testing.T) {
	tests := []struct {
		typ  BenchmarkType
		want Benchmark
	}{
		// nb has no marker default (a rule refuses it beside blockSizes): BlockSizeList gives 192.
		{BenchmarkHPCC, Benchmark{HPCC: &HPCCParams{MemoryPercent: 80, Nodes: HPCCAllNodes}}},
		{BenchmarkSysbenchCPU, Benchmark{SysbenchCPU: &SysbenchCPUParams{MaxPrime: 20000, Duration: def("10s")}}},
		{BenchmarkSysbenchMemory, Benchmark{SysbenchMemory: &SysbenchMemoryParams{
			BlockSizes: []string{"1K", "1M"}, TotalSize: "10G", Operation: "write"}}},
		{BenchmarkStressNGCPU, Benchmark{StressNGCPU: &StressNGCPUParams{Method: "matrixprod", Duration: def("60s")}}},
		{BenchmarkStressNGVM, Benchmark{StressNGVM: &StressNGVMParams{Bytes: "50%", Workers: 1, Duration: def("60s")}}},
		{BenchmarkIozone, Benchmark{Iozone: &IozoneParams{
			FileSize: "512M", RecordSize: "64k", Tests: []IozoneTest{"write", "read", "random"}, Targets: []StorageTarget{StorageLocal}}}},
		{BenchmarkIperf3, Benchmark{Iperf3: &Iperf3Params{
			Pairs:    []NodePair{PairMasterToNode, PairNodeToMaster, PairNodeToNode},
			Duration: def("10s"), Parallel: 1, Protocol: "TCP", Port: 5201, ServerPort: 5201}}},
		{BenchmarkPing, Benchmark{Ping: &PingParams{Count: 10, Pairs: []NodePair{PairMasterToNode, PairNodeToMaster, PairNodeToNode}}}},
		{BenchmarkFio, Benchmark{Fio: &FioParams{
			RW: "randread", BlockSize: "4k", Size: "256m", IODepth: 16, IOEngine: "libaio",
			Direct: ptr.To(true), NumJobs: 1, Target: StorageLocal}}},
		{BenchmarkNetperf, Benchmark{Netperf: &NetperfParams{
			Tests: []NetperfTest{NetperfTCPRR, NetperfTCPStream}, Duration: def("10s"),
			Confidence: &NetperfConfidence{Level: 95, WidthPercent: 5, MinIterations: 3, MaxIterations: 10},
			Pairs:      []NodePair{PairMasterToNode, PairNodeToMaster, PairNodeToNode}}}},
		{BenchmarkNetcat, Benchmark{Netcat: &NetcatParams{Size: "1Gi",
			Pairs: []NodePair{PairMasterToNode, PairNodeToMaster, PairNodeToNode}}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			want := tt.want
			want.Name, want.Type, want.Timeout, want.Concurrency = "b", tt.typ, def("30m"), ConcurrencyOneNodeAtATime
			got := Benchmark{Name: "b", Type: tt.typ}.WithDefaults()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("WithDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithDefaultsKeepsUserValues(t *testing.T) {
	tests := []struct {
		name string
		in   Benchmark
		want Benchmark
	}{
		{
			name: "timeout",
			in:   Benchmark{Type: BenchmarkSysbenchCPU, Timeout: dur(time.Minute)},
			want: Benchmark{Type: BenchmarkSysbenchCPU, Timeout: dur(time.Minute),
				SysbenchCPU: &SysbenchCPUParams{MaxPrime: 20000, Duration: def("10s")}},
		},
		{
			name: "hpcc",
			in: Benchmark{Type: BenchmarkHPCC, HPCC: &HPCCParams{N: ptr.To[int32](1000), MemoryPercent: 50, NB: 64,
				P: ptr.To[int32](2), Q: ptr.To[int32](3), RanksPerNode: ptr.To[int32](2)}},
			want: Benchmark{Type: BenchmarkHPCC, Timeout: def("30m"), HPCC: &HPCCParams{N: ptr.To[int32](1000),
				MemoryPercent: 50, NB: 64, P: ptr.To[int32](2), Q: ptr.To[int32](3), RanksPerNode: ptr.To[int32](2), Nodes: HPCCAllNodes}},
		},
		{
			name: "hpcc partly set",
			in:   Benchmark{Type: BenchmarkHPCC, HPCC: &HPCCParams{NB: 256}},
			want: Benchmark{Type: BenchmarkHPCC, Timeout: def("30m"), HPCC: &HPCCParams{MemoryPercent: 80, NB: 256, Nodes: HPCCAllNodes}},
		},
		{
			name: "hpcc sweep on the workers",
			in: Benchmark{Type: BenchmarkHPCC, HPCC: &HPCCParams{ProblemSizes: []int32{1024, 2048}, BlockSizes: []int32{32, 64},
				Grids: []HPLGrid{{P: 1, Q: 4}, {P: 2, Q: 2}}, Nodes: HPCCWorkers}},
			want: Benchmark{Type: BenchmarkHPCC, Timeout: def("30m"), HPCC: &HPCCParams{ProblemSizes: []int32{1024, 2048},
				BlockSizes: []int32{32, 64}, Grids: []HPLGrid{{P: 1, Q: 4}, {P: 2, Q: 2}}, MemoryPercent: 80, Nodes: HPCCWorkers}},
		},
		{
			name: "sysbench-cpu",
			in:   Benchmark{Type: BenchmarkSysbenchCPU, SysbenchCPU: &SysbenchCPUParams{MaxPrime: 5, Threads: 3, Duration: dur(time.Second)}},
			want: Benchmark{Type: BenchmarkSysbenchCPU, Timeout: def("30m"),
				SysbenchCPU: &SysbenchCPUParams{MaxPrime: 5, Threads: 3, Duration: dur(time.Second)}},
		},
		{
			name: "sysbench-memory",
			in: Benchmark{Type: BenchmarkSysbenchMemory, SysbenchMemory: &SysbenchMemoryParams{
				BlockSizes: []string{"4K"}, TotalSize: "1G", Operation: "read", Threads: 2}},
			want: Benchmark{Type: BenchmarkSysbenchMemory, Timeout: def("30m"), SysbenchMemory: &SysbenchMemoryParams{
				BlockSizes: []string{"4K"}, TotalSize: "1G", Operation: "read", Threads: 2}},
		},
		{
			name: "stress-ng-cpu",
			in:   Benchmark{Type: BenchmarkStressNGCPU, StressNGCPU: &StressNGCPUParams{Method: "fft", Workers: 4, Duration: dur(time.Second)}},
			want: Benchmark{Type: BenchmarkStressNGCPU, Timeout: def("30m"),
				StressNGCPU: &StressNGCPUParams{Method: "fft", Workers: 4, Duration: dur(time.Second)}},
		},
		{
			name: "stress-ng-vm",
			in:   Benchmark{Type: BenchmarkStressNGVM, StressNGVM: &StressNGVMParams{Bytes: "256M", Workers: 3, Duration: dur(time.Second)}},
			want: Benchmark{Type: BenchmarkStressNGVM, Timeout: def("30m"),
				StressNGVM: &StressNGVMParams{Bytes: "256M", Workers: 3, Duration: dur(time.Second)}},
		},
		{
			name: "iozone",
			in: Benchmark{Type: BenchmarkIozone, Iozone: &IozoneParams{FileSize: "1G", RecordSize: "1m",
				Tests: []IozoneTest{"read"}, Targets: []StorageTarget{StorageShared}, DirectIO: true}},
			want: Benchmark{Type: BenchmarkIozone, Timeout: def("30m"), Iozone: &IozoneParams{FileSize: "1G", RecordSize: "1m",
				Tests: []IozoneTest{"read"}, Targets: []StorageTarget{StorageShared}, DirectIO: true}},
		},
		{
			name: "iozone auto mode takes the range's defaults, not the single run's",
			in:   Benchmark{Type: BenchmarkIozone, Iozone: &IozoneParams{Auto: true}},
			want: Benchmark{Type: BenchmarkIozone, Timeout: def("30m"), Iozone: &IozoneParams{Auto: true, MaxFileSize: "512M", MinFileSize: "64k",
				Tests: []IozoneTest{"write", "read", "random"}, Targets: []StorageTarget{StorageLocal}}},
		},
		{
			name: "iozone auto mode keeps its range",
			in:   Benchmark{Type: BenchmarkIozone, Iozone: &IozoneParams{Auto: true, MaxFileSize: "4g", MinFileSize: "1m", DirectIO: true}},
			want: Benchmark{Type: BenchmarkIozone, Timeout: def("30m"), Iozone: &IozoneParams{Auto: true, MaxFileSize: "4g", MinFileSize: "1m",
				DirectIO: true, Tests: []IozoneTest{"write", "read", "random"}, Targets: []StorageTarget{StorageLocal}}},
		},
		{
			name: "iperf3",
			in: Benchmark{Type: BenchmarkIperf3, Iperf3: &Iperf3Params{Pairs: []NodePair{PairNodeToNode}, Duration: dur(time.Second),
				Parallel: 4, Protocol: "UDP", Port: 6000, ServerPort: 6001}},
			want: Benchmark{Type: BenchmarkIperf3, Timeout: def("30m"), Iperf3: &Iperf3Params{Pairs: []NodePair{PairNodeToNode},
				Duration: dur(time.Second), Parallel: 4, Protocol: "UDP", Port: 6000, ServerPort: 6001}},
		},
		{
			name: "ping",
			in:   Benchmark{Type: BenchmarkPing, Ping: &PingParams{Count: 3, Pairs: []NodePair{PairMasterToNode}}},
			want: Benchmark{Type: BenchmarkPing, Timeout: def("30m"), Ping: &PingParams{Count: 3, Pairs: []NodePair{PairMasterToNode}}},
		},
		{
			name: "fio, direct false is kept",
			in: Benchmark{Type: BenchmarkFio, Fio: &FioParams{RW: "write", BlockSize: "1m", Size: "1g", IODepth: 4, IOEngine: "psync",
				Direct: ptr.To(false), NumJobs: 2, Runtime: dur(time.Second), Target: StorageShared}},
			want: Benchmark{Type: BenchmarkFio, Timeout: def("30m"), Fio: &FioParams{RW: "write", BlockSize: "1m", Size: "1g",
				IODepth: 4, IOEngine: "psync", Direct: ptr.To(false), NumJobs: 2, Runtime: dur(time.Second), Target: StorageShared}},
		},
		{
			name: "concurrency AllNodes is kept",
			in:   Benchmark{Type: BenchmarkFio, Concurrency: ConcurrencyAllNodes, Fio: &FioParams{Target: StorageLocal}},
			want: Benchmark{Type: BenchmarkFio, Timeout: def("30m"), Concurrency: ConcurrencyAllNodes, Fio: &FioParams{
				RW: "randread", BlockSize: "4k", Size: "256m", IODepth: 16, IOEngine: "libaio",
				Direct: ptr.To(true), NumJobs: 1, Target: StorageLocal}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want.Concurrency == "" {
				// Every case but the one above leaves concurrency to its default.
				tt.want.Concurrency = ConcurrencyOneNodeAtATime
			}
			if diff := cmp.Diff(tt.want, tt.in.WithDefaults()); diff != "" {
				t.Errorf("WithDefaults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWithDefaultsDoesNotTouchItsReceiver(t *testing.T) {
	tests := []Benchmark{
		{Type: BenchmarkHPCC, HPCC: &HPCCParams{N: ptr.To[int32](500)}},
		{Type: BenchmarkSysbenchCPU, SysbenchCPU: &SysbenchCPUParams{Threads: 2}},
		{Type: BenchmarkSysbenchMemory, SysbenchMemory: &SysbenchMemoryParams{Threads: 1}},
		{Type: BenchmarkStressNGCPU, StressNGCPU: &StressNGCPUParams{}},
		{Type: BenchmarkStressNGVM, StressNGVM: &StressNGVMParams{}},
		{Type: BenchmarkIozone, Iozone: &IozoneParams{Tests: []IozoneTest{"write"}}},
		{Type: BenchmarkIperf3, Iperf3: &Iperf3Params{Pairs: []NodePair{PairNodeToNode}}},
		{Type: BenchmarkPing, Ping: &PingParams{}},
		{Type: BenchmarkFio, Fio: &FioParams{Runtime: dur(time.Second)}, Timeout: dur(time.Hour)},
		{Type: BenchmarkNetperf, Netperf: &NetperfParams{Confidence: &NetperfConfidence{Level: 99}}},
		{Type: BenchmarkNetcat, Netcat: &NetcatParams{Size: "1Mi"}},
	}
	for _, in := range tests {
		t.Run(string(in.Type), func(t *testing.T) {
			before := *in.DeepCopy()
			out := in.WithDefaults()
			if diff := cmp.Diff(before, in); diff != "" {
				t.Fatalf("WithDefaults() changed its receiver (-before +after):\n%s", diff)
			}
			// The copy shares no memory with the receiver: changing every pointer and slice of the result
			// leaves the receiver as it was.
			scribble(&out)
			if diff := cmp.Diff(before, in); diff != "" {
				t.Errorf("the result of WithDefaults() aliases its receiver (-before +after):\n%s", diff)
			}
		})
	}
}

// scribble overwrites everything a Benchmark points to.
func scribble(b *Benchmark) {
	*b.Timeout = "42s"
	switch {
	case b.HPCC != nil:
		*b.HPCC.N = 42
		b.HPCC.NB = 42
	case b.SysbenchCPU != nil:
		b.SysbenchCPU.Threads = 42
		*b.SysbenchCPU.Duration = "42s"
	case b.SysbenchMemory != nil:
		b.SysbenchMemory.Threads = 42
		b.SysbenchMemory.BlockSizes[0] = "42"
	case b.StressNGCPU != nil:
		b.StressNGCPU.Method = "42"
	case b.StressNGVM != nil:
		b.StressNGVM.Bytes = "42"
	case b.Iozone != nil:
		b.Iozone.Tests[0] = "42"
	case b.Iperf3 != nil:
		b.Iperf3.Pairs[0] = "42"
	case b.Ping != nil:
		b.Ping.Count = 42
	case b.Fio != nil:
		*b.Fio.Runtime = "42s"
		*b.Fio.Direct = false
	case b.Netperf != nil:
		b.Netperf.Tests[0] = "42"
		b.Netperf.Confidence.Level = 42
		*b.Netperf.Duration = "42s"
	case b.Netcat != nil:
		b.Netcat.Size = "42"
		b.Netcat.Pairs[0] = "42"
	}
}

func TestWithDefaultsSharesNoDefaultSlices(t *testing.T) {
	// Two defaulted benchmarks must not share their default lists: changing one changes the other
	// otherwise.
	a := Benchmark{Type: BenchmarkPing}.WithDefaults()
	b := Benchmark{Type: BenchmarkPing}.WithDefaults()
	a.Ping.Pairs[0] = PairNodeToNode
	if b.Ping.Pairs[0] != PairMasterToNode {
		t.Errorf("default ping pairs are shared between benchmarks: got %v", b.Ping.Pairs)
	}
}

func TestDerivedN(t *testing.T) {
	const gi = int64(1) << 30
	tests := []struct {
		name    string
		p       HPCCParams
		nodes   int32
		memory  int64
		want    int32
		checkNB bool
	}{
		{
			// budget = 3 × 2 GiB × 80% = 5,153,960,755.2 bytes; /8 bytes per double = 644,245,094.4;
			// sqrt = 25,381.98 → 25,381; largest multiple of 192 below it: 132 × 192 = 25,344.
			// 25,344² × 8 = 5,138,546,688 ≤ budget < 25,536² × 8 = 5,216,698,368.
			name: "3 nodes of 2Gi at 80% and NB 192", p: HPCCParams{MemoryPercent: 80, NB: 192},
			nodes: 3, memory: 2 * gi, want: 25344, checkNB: true,
		},
		{
			// budget = 1 GiB × 50% = 536,870,912; /8 = 67,108,864 = 8192² exactly, a multiple of 256.
			name: "exact square", p: HPCCParams{MemoryPercent: 50, NB: 256}, nodes: 1, memory: gi, want: 8192, checkNB: true,
		},
		{
			// budget = 8 × 4 GiB × 90% = 30,923,764,531.2; /8 = 3,865,470,566.4; sqrt = 62,172.9 → 62,172;
			// 62,172 - 62,172 mod 100 = 62,100.
			name: "8 nodes of 4Gi at 90% and NB 100", p: HPCCParams{MemoryPercent: 90, NB: 100},
			nodes: 8, memory: 4 * gi, want: 62100, checkNB: true,
		},
		{
			// budget = 2 × 1 MiB × 10% = 209,715.2; /8 = 26,214.4; sqrt = 161.9 → 161, no NB to round to.
			name: "no NB", p: HPCCParams{MemoryPercent: 10}, nodes: 2, memory: 1 << 20, want: 161,
		},
		{
			// sqrt(100 KiB × 80% / 8) = sqrt(10,240) = 101.2 → 101, below NB 192 → 0.
			name: "too little memory for one block", p: HPCCParams{MemoryPercent: 80, NB: 192}, nodes: 1, memory: 100 << 10, want: 0,
		},
		{
			// sqrt(8 × 64 GiB × 90% / 8) = 248,691 is above the API's maximum N: capped to the largest
			// multiple of 192 below MaxProblemSize, 1,041 × 192 = 199,872.
			name: "capped at the API maximum", p: HPCCParams{MemoryPercent: 90, NB: 192}, nodes: 8, memory: 64 * gi,
			want: MaxProblemSize - MaxProblemSize%192,
		},
		{
			// 8 × MaxInt64 × 90% overflows int64 on the way: still the capped value, never a wrapped one.
			name: "no overflow", p: HPCCParams{MemoryPercent: 90, NB: 192}, nodes: 8, memory: math.MaxInt64,
			want: MaxProblemSize - MaxProblemSize%192,
		},
		{
			// 8 nodes × 39,999,999,999 bytes × 100% / 8 bytes per double = 39,999,999,999 = 200,000² - 1 elements:
			// one short of the maximum's square. Without NB nothing is rounded.
			name: "one element short of the maximum's square", p: HPCCParams{MemoryPercent: 100}, nodes: 8, memory: 39999999999,
			want: MaxProblemSize - 1,
		},
		{
			name: "the maximum's square exactly", p: HPCCParams{MemoryPercent: 100}, nodes: 8, memory: 40000000000,
			want: MaxProblemSize,
		},
		{
			// Above the cap and no NB: the cap itself, not rounded to anything.
			name: "capped without NB", p: HPCCParams{MemoryPercent: 90}, nodes: 8, memory: 64 * gi, want: MaxProblemSize,
		},
		{
			name: "a negative NB does not round", p: HPCCParams{MemoryPercent: 10, NB: -5}, nodes: 2, memory: 1 << 20, want: 161,
		},
		{name: "no nodes", p: HPCCParams{MemoryPercent: 80, NB: 192}, nodes: 0, memory: 2 * gi, want: 0},
		{name: "negative nodes", p: HPCCParams{MemoryPercent: 80, NB: 192}, nodes: -3, memory: 2 * gi, want: 0},
		{name: "no memory", p: HPCCParams{MemoryPercent: 80, NB: 192}, nodes: 3, memory: 0, want: 0},
		{name: "negative memory", p: HPCCParams{MemoryPercent: 80, NB: 192}, nodes: 3, memory: -2 * gi, want: 0},
		{name: "no memory percent", p: HPCCParams{NB: 192}, nodes: 3, memory: 2 * gi, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.DerivedN(tt.nodes, tt.memory)
			if got != tt.want {
				t.Fatalf("DerivedN(%d, %d) = %d, want %d", tt.nodes, tt.memory, got, tt.want)
			}
			if !tt.checkNB {
				return
			}
			if got%tt.p.NB != 0 {
				t.Errorf("N = %d is not a multiple of NB %d", got, tt.p.NB)
			}
			budget := float64(tt.memory) * float64(tt.nodes) * float64(tt.p.MemoryPercent) / 100
			if n := float64(got); n*n*8 > budget {
				t.Errorf("N = %d needs %.0f bytes, more than the budget of %.0f", got, n*n*8, budget)
			}
			if n := float64(got + tt.p.NB); n*n*8 <= budget {
				t.Errorf("N + NB = %d still fits the budget of %.0f: N is not the largest", got+tt.p.NB, budget)
			}
		})
	}
}

func TestClusterShapeAccessors(t *testing.T) {
	tests := []struct {
		name                      string
		shape                     ClusterShape
		memory                    string
		cpu, nodes                int32
		cpuRequest, memoryRequest string
		guaranteed                bool
	}{
		{name: "empty takes the defaults", shape: ClusterShape{},
			memory: "2Gi", cpu: 2, nodes: 3, cpuRequest: "2", memoryRequest: "2Gi", guaranteed: true},
		{name: "set values", shape: ClusterShape{Nodes: 5, CPU: 8, Memory: qty("16Gi")},
			memory: "16Gi", cpu: 8, nodes: 5, cpuRequest: "8", memoryRequest: "16Gi", guaranteed: true},
		{name: "cpu request lowered", shape: ClusterShape{CPU: 4, CPURequest: qty("500m")},
			memory: "2Gi", cpu: 4, nodes: 3, cpuRequest: "500m", memoryRequest: "2Gi"},
		{name: "memory request lowered", shape: ClusterShape{Memory: qty("4Gi"), MemoryRequest: qty("1Gi")},
			memory: "4Gi", cpu: 2, nodes: 3, cpuRequest: "2", memoryRequest: "1Gi"},
		{name: "both lowered", shape: ClusterShape{CPURequest: qty("1"), MemoryRequest: qty("512Mi")},
			memory: "2Gi", cpu: 2, nodes: 3, cpuRequest: "1", memoryRequest: "512Mi"},
		{name: "requests set equal to the limits", shape: ClusterShape{CPU: 4, Memory: qty("8Gi"), CPURequest: qty("4"), MemoryRequest: qty("8Gi")},
			memory: "8Gi", cpu: 4, nodes: 3, cpuRequest: "4", memoryRequest: "8Gi", guaranteed: true},
		{name: "requests equal to the limits in other units", shape: ClusterShape{CPURequest: qty("2000m"), MemoryRequest: qty("2048Mi")},
			memory: "2Gi", cpu: 2, nodes: 3, cpuRequest: "2", memoryRequest: "2Gi", guaranteed: true},
		{name: "cpu request equal, memory request lowered", shape: ClusterShape{CPU: 4, CPURequest: qty("4"), MemoryRequest: qty("1Gi")},
			memory: "2Gi", cpu: 4, nodes: 3, cpuRequest: "4", memoryRequest: "1Gi"},
		{name: "memory request equal, cpu request lowered", shape: ClusterShape{CPURequest: qty("1999m"), MemoryRequest: qty("2Gi")},
			memory: "2Gi", cpu: 2, nodes: 3, cpuRequest: "1999m", memoryRequest: "2Gi"},
		{name: "requests above the limits are not Guaranteed either", shape: ClusterShape{CPURequest: qty("3"), MemoryRequest: qty("3Gi")},
			memory: "2Gi", cpu: 2, nodes: 3, cpuRequest: "3", memoryRequest: "3Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.shape.MemoryLimit()
			cpuReq, memReq := tt.shape.Requests()
			got := []string{m.String(), cpuReq.String(), memReq.String()}
			want := []string{tt.memory, tt.cpuRequest, tt.memoryRequest}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("memory limit, cpu request, memory request mismatch (-want +got):\n%s", diff)
			}
			if got := tt.shape.CPULimit(); got != tt.cpu {
				t.Errorf("CPULimit() = %d, want %d", got, tt.cpu)
			}
			if got := tt.shape.NodeCount(); got != tt.nodes {
				t.Errorf("NodeCount() = %d, want %d", got, tt.nodes)
			}
			if got := tt.shape.Guaranteed(); got != tt.guaranteed {
				t.Errorf("Guaranteed() = %t, want %t", got, tt.guaranteed)
			}
		})
	}
}

func TestMemoryLimitReturnsACopy(t *testing.T) {
	shape := ClusterShape{}
	m := shape.MemoryLimit()
	m.Add(resource.MustParse("1Gi"))
	if got := shape.MemoryLimit(); got.String() != "2Gi" || DefaultMemory.String() != "2Gi" {
		t.Errorf("changing a returned default changed the default: MemoryLimit() = %s, DefaultMemory = %s", got.String(), DefaultMemory.String())
	}

	set := ClusterShape{Memory: qty("4Gi")}
	m = set.MemoryLimit()
	m.Add(resource.MustParse("1Gi"))
	if set.Memory.String() != "4Gi" {
		t.Errorf("changing the returned limit changed the shape: Memory = %s", set.Memory.String())
	}
}

func TestSuiteTimeout(t *testing.T) {
	if got := (BenchmarkSuiteSpec{}).SuiteTimeout(); got != 6*time.Hour {
		t.Errorf("default SuiteTimeout() = %s, want 6h", got)
	}
	if got := (BenchmarkSuiteSpec{Timeout: dur(time.Hour)}).SuiteTimeout(); got != time.Hour {
		t.Errorf("SuiteTimeout() = %s, want 1h", got)
	}
}

// The lists the runner plans with: a sweep's lists, else the single values, else the defaults.
func TestHPCCParamLists(t *testing.T) {
	grid := []HPLGrid{{P: 2, Q: 3}}
	for _, tc := range []struct {
		name   string
		p      HPCCParams
		ns     []int32
		nbs    []int32
		grids  []HPLGrid
		nodes3 int32
	}{
		{"nothing set", HPCCParams{}, nil, []int32{DefaultNB}, nil, 3},
		{"single values", HPCCParams{N: ptr.To[int32](1000), NB: 64, P: ptr.To[int32](2), Q: ptr.To[int32](3)}, []int32{1000}, []int32{64}, grid, 3},
		{"only p", HPCCParams{P: ptr.To[int32](2)}, nil, []int32{DefaultNB}, nil, 3},
		{"lists", HPCCParams{ProblemSizes: []int32{1024, 2048}, BlockSizes: []int32{32, 64}, Grids: grid, Nodes: HPCCWorkers},
			[]int32{1024, 2048}, []int32{32, 64}, grid, 2},
		{"all nodes", HPCCParams{Nodes: HPCCAllNodes}, nil, []int32{DefaultNB}, nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.ns, tc.p.ProblemSizeList()); diff != "" {
				t.Errorf("ProblemSizeList (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.nbs, tc.p.BlockSizeList()); diff != "" {
				t.Errorf("BlockSizeList (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.grids, tc.p.GridList()); diff != "" {
				t.Errorf("GridList (-want +got):\n%s", diff)
			}
			if got := tc.p.NodesTakingPart(3); got != tc.nodes3 {
				t.Errorf("NodesTakingPart(3) = %d, want %d", got, tc.nodes3)
			}
		})
	}
}

// A derived N is a multiple of the largest block size, so that every power-of-two block size
// divides it.
func TestSizingN(t *testing.T) {
	const gi = 1 << 30
	// 80% of 3 x 2 GiB -> sqrt 25381.98: 25344 = 132 x 192 = 99 x 256.
	for _, tc := range []struct {
		p    HPCCParams
		want int32
	}{
		{HPCCParams{}, 25344},
		{HPCCParams{NB: 100}, 25300},
		{HPCCParams{BlockSizes: []int32{32, 64, 1024}}, 24576},
		{HPCCParams{BlockSizes: []int32{1000, 64}, MemoryPercent: 80}, 25000},
	} {
		if got := tc.p.SizingN(3, 2*gi); got != tc.want {
			t.Errorf("%+v: SizingN = %d, want %d", tc.p, got, tc.want)
		}
	}
}
