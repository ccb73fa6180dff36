package report

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite testdata/suite-demo.yaml and testdata/quick-first-screen.golden")

const demoFixture = "testdata/suite-demo.yaml"

// The sysbench-cpu samples are written out so that the tests can check the statistics against
// values computed by hand; they are in status order: repetition 1 on master, node01, node02, then
// repetition 2, ...
var (
	sysbenchEventsContainer = []float64{1012.4, 998.7, 1005.1, 1009.8, 1001.3, 995.6, 1003.2, 1011.9, 997.0}
	sysbenchEventsVM        = []float64{96.3, 94.8, 97.1, 95.2, 93.9, 96.8, 94.1, 97.4, 95.5}
	sysbenchLatAvgContainer = []float64{1.98, 2.00, 1.99, 1.98, 2.00, 2.01, 1.99, 1.98, 2.01}
	sysbenchLatAvgVM        = []float64{20.77, 21.10, 20.60, 21.01, 21.30, 20.66, 21.25, 20.53, 20.94}
	sysbenchLatMaxContainer = []float64{12.1, 30.5, 8.2, 15.0, 41.3, 9.9, 22.7, 11.4, 18.8}
	sysbenchLatMaxVM        = []float64{14.2, 35.8, 10.1, 19.6, 44.9, 12.0, 25.3, 13.7, 21.4}
)

var (
	demoNodes = []string{"master", "node01", "node02"}
	// demoPairs are the iperf3 pairs of a 3-node run with master-node, node-master and node-node.
	demoPairs = []string{"master-node01", "master-node02", "node01-master", "node02-master", "node01-node02"}
)

// hpccBase are container figures of a 3-node, 2-CPU kind cluster, and how much an emulated VM
// keeps of each (above 1 for latencies, which get worse).
var hpccBase = []struct {
	name, unit string
	dir        vmbenchv1.Direction
	value, vm  float64
}{
	{"HPL_Tflops", "Tflop/s", vmbenchv1.HigherIsBetter, 0.0121, 0.071},
	{"StarDGEMM_Gflops", "Gflop/s", vmbenchv1.HigherIsBetter, 6.1, 0.068},
	{"SingleDGEMM_Gflops", "Gflop/s", vmbenchv1.HigherIsBetter, 6.4, 0.066},
	{"PTRANS_GBs", "GB/s", vmbenchv1.HigherIsBetter, 0.82, 0.21},
	{"MPIRandomAccess_GUPs", "GUP/s", vmbenchv1.HigherIsBetter, 0.0061, 0.14},
	{"MPIRandomAccess_LCG_GUPs", "GUP/s", vmbenchv1.HigherIsBetter, 0.0058, 0.15},
	{"StarRandomAccess_GUPs", "GUP/s", vmbenchv1.HigherIsBetter, 0.029, 0.16},
	{"SingleRandomAccess_GUPs", "GUP/s", vmbenchv1.HigherIsBetter, 0.041, 0.15},
	{"StarRandomAccess_LCG_GUPs", "GUP/s", vmbenchv1.HigherIsBetter, 0.027, 0.16},
	{"SingleRandomAccess_LCG_GUPs", "GUP/s", vmbenchv1.HigherIsBetter, 0.039, 0.15},
	{"StarSTREAM_Copy", "GB/s", vmbenchv1.HigherIsBetter, 5.2, 0.31},
	{"StarSTREAM_Scale", "GB/s", vmbenchv1.HigherIsBetter, 5.0, 0.29},
	{"StarSTREAM_Add", "GB/s", vmbenchv1.HigherIsBetter, 5.6, 0.30},
	{"StarSTREAM_Triad", "GB/s", vmbenchv1.HigherIsBetter, 5.5, 0.28},
	{"SingleSTREAM_Copy", "GB/s", vmbenchv1.HigherIsBetter, 9.8, 0.33},
	{"SingleSTREAM_Scale", "GB/s", vmbenchv1.HigherIsBetter, 9.1, 0.30},
	{"SingleSTREAM_Add", "GB/s", vmbenchv1.HigherIsBetter, 10.4, 0.31},
	{"SingleSTREAM_Triad", "GB/s", vmbenchv1.HigherIsBetter, 10.2, 0.29},
	{"StarFFT_Gflops", "Gflop/s", vmbenchv1.HigherIsBetter, 1.05, 0.09},
	{"SingleFFT_Gflops", "Gflop/s", vmbenchv1.HigherIsBetter, 1.21, 0.08},
	{"MPIFFT_Gflops", "Gflop/s", vmbenchv1.HigherIsBetter, 1.9, 0.07},
	{"MinPingPongLatency_usec", "us", vmbenchv1.LowerIsBetter, 0.35, 5.1},
	{"AvgPingPongLatency_usec", "us", vmbenchv1.LowerIsBetter, 2.1, 6.3},
	{"MaxPingPongLatency_usec", "us", vmbenchv1.LowerIsBetter, 9.8, 4.2},
	{"MinPingPongBandwidth_GBytes", "GB/s", vmbenchv1.HigherIsBetter, 1.1, 0.22},
	{"AvgPingPongBandwidth_GBytes", "GB/s", vmbenchv1.HigherIsBetter, 4.2, 0.18},
	{"MaxPingPongBandwidth_GBytes", "GB/s", vmbenchv1.HigherIsBetter, 7.9, 0.17},
	{"NaturallyOrderedRingLatency_usec", "us", vmbenchv1.LowerIsBetter, 1.7, 5.8},
	{"RandomlyOrderedRingLatency_usec", "us", vmbenchv1.LowerIsBetter, 2.3, 5.5},
	{"NaturallyOrderedRingBandwidth_GBytes", "GB/s", vmbenchv1.HigherIsBetter, 1.4, 0.21},
	{"RandomlyOrderedRingBandwidth_GBytes", "GB/s", vmbenchv1.HigherIsBetter, 0.9, 0.23},
}

// demoSuite is a finished suite as the controller leaves it: container against emulated VMs,
// 3 repetitions on 3 nodes, hpcc at two problem sizes (the larger one timed out twice on the VMs),
// sysbench-cpu per node, iozone auto-mode metrics whose samples were dropped to fit the status,
// iperf3 over five node pairs.
func demoSuite() *vmbenchv1.BenchmarkSuite {
	rng := rand.New(rand.NewPCG(2026, 11))
	noisy := func(mean, rel float64) float64 { return round4(mean * (1 + rel*rng.NormFloat64())) }

	s := &vmbenchv1.BenchmarkSuite{
		TypeMeta:   metav1.TypeMeta{APIVersion: "vmbench.io/v1alpha1", Kind: "BenchmarkSuite"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "bench"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms: []vmbenchv1.Platform{
				{Name: "container", Type: vmbenchv1.PlatformContainer},
				{Name: "vm", Type: vmbenchv1.PlatformVM},
			},
			Baseline:    "container",
			Cluster:     vmbenchv1.ClusterShape{Nodes: 3, CPU: 2},
			Repetitions: 3,
			Benchmarks: []vmbenchv1.Benchmark{
				{Name: "hpcc-n4000", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptr.To[int32](4000), NB: 192}},
				{Name: "hpcc-n8000", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptr.To[int32](8000), NB: 192}},
				{Name: "sysbench-cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
				{Name: "iozone", Type: vmbenchv1.BenchmarkIozone},
				{Name: "iperf3", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{
					Pairs: []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode, vmbenchv1.PairNodeToMaster, vmbenchv1.PairNodeToNode}}},
			},
		},
	}
	st := &s.Status
	st.Phase = vmbenchv1.SuiteComplete
	st.Progress = "6/6"
	for i, run := range []struct {
		platform string
		rep      int32
	}{{"container", 1}, {"vm", 1}, {"vm", 2}, {"container", 2}, {"container", 3}, {"vm", 3}} {
		rs := vmbenchv1.RunStatus{Name: "demo-" + run.platform + "-" + strconv.Itoa(int(run.rep)), Platform: run.platform,
			Repetition: run.rep, Phase: vmbenchv1.RunSucceeded}
		if run.platform == "vm" {
			rs.Accelerator = vmbenchv1.AcceleratorEmulation
			for j, n := range demoNodes {
				rs.BootSeconds = append(rs.BootSeconds, vmbenchv1.NodeTiming{Node: n, Seconds: 88.5 + float64(3*i+j)})
			}
			if run.rep > 1 {
				rs.Phase = vmbenchv1.RunFailed
				rs.Message = "benchmarks failed: hpcc-n8000 (master: timed out after 30m0s)"
			}
		}
		st.Runs = append(st.Runs, rs)
	}

	perRep := func(f func(rep int32) float64) []vmbenchv1.Sample {
		var out []vmbenchv1.Sample
		for rep := int32(1); rep <= 3; rep++ {
			out = append(out, vmbenchv1.Sample{Repetition: rep, Node: "master", Value: f(rep)})
		}
		return out
	}
	for _, hpl := range []struct {
		bench string
		scale float64
	}{{"hpcc-n4000", 1}, {"hpcc-n8000", 1.31}} {
		for _, platform := range []string{"container", "vm"} {
			res := vmbenchv1.BenchmarkResult{Benchmark: hpl.bench, Platform: platform, Emulated: platform == "vm"}
			for _, m := range hpccBase {
				value := m.value
				if m.name == "HPL_Tflops" {
					value *= hpl.scale
				}
				if platform == "vm" {
					value *= m.vm
				}
				samples := perRep(func(int32) float64 { return noisy(value, 0.03) })
				if platform == "vm" && hpl.bench == "hpcc-n8000" {
					samples = samples[:1]
				}
				res.Metrics = append(res.Metrics, summary(m.name, m.unit, m.dir, samples))
			}
			if platform == "vm" && hpl.bench == "hpcc-n8000" {
				res.Failures = 2
				res.LastError = "run demo-vm-3, master: timed out after 30m0s"
			}
			st.Results = append(st.Results, res)
		}
	}

	perNode := func(values []float64) []vmbenchv1.Sample {
		out := make([]vmbenchv1.Sample, len(values))
		for i, v := range values {
			out[i] = vmbenchv1.Sample{Repetition: int32(i/len(demoNodes) + 1), Node: demoNodes[i%len(demoNodes)], Value: v}
		}
		return out
	}
	generated := func(mean, rel float64) []float64 {
		out := make([]float64, 9)
		for i := range out {
			out[i] = noisy(mean, rel)
		}
		return out
	}
	for _, platform := range []string{"container", "vm"} {
		events, latAvg, latMax := sysbenchEventsContainer, sysbenchLatAvgContainer, sysbenchLatMaxContainer
		latMin, latP95 := generated(1.21, 0.01), generated(2.11, 0.02)
		if platform == "vm" {
			events, latAvg, latMax = sysbenchEventsVM, sysbenchLatAvgVM, sysbenchLatMaxVM
			latMin, latP95 = generated(18.9, 0.02), generated(23.5, 0.03)
		}
		st.Results = append(st.Results, vmbenchv1.BenchmarkResult{Benchmark: "sysbench-cpu", Platform: platform, Emulated: platform == "vm",
			Metrics: []vmbenchv1.MetricSummary{
				summary("events_per_second", "events/s", vmbenchv1.HigherIsBetter, perNode(events)),
				summary("latency_min_ms", "ms", vmbenchv1.LowerIsBetter, perNode(latMin)),
				summary("latency_avg_ms", "ms", vmbenchv1.LowerIsBetter, perNode(latAvg)),
				summary("latency_max_ms", "ms", vmbenchv1.LowerIsBetter, perNode(latMax)),
				summary("latency_p95_ms", "ms", vmbenchv1.LowerIsBetter, perNode(latP95)),
			}})
	}

	// iozone -a: small files are served from the page cache, large records amortise the syscalls.
	for _, platform := range []string{"container", "vm"} {
		res := vmbenchv1.BenchmarkResult{Benchmark: "iozone", Platform: platform, Emulated: platform == "vm"}
		factor := 1.0
		if platform == "vm" {
			factor = 0.17
		}
		for _, test := range []string{"write", "read"} {
			for _, fileKB := range []int{1024, 4096, 16384, 65536} {
				for _, recKB := range []int{4, 16, 64, 256, 1024} {
					recGain := 1 + 0.35*math.Log2(float64(recKB)/4)/8
					mean := 410000 * recGain
					if test == "read" {
						mean = 2900000 * recGain
						if fileKB == 65536 {
							mean = 880000 * recGain
						}
					}
					name := test + "_" + strconv.Itoa(fileKB) + "k_" + strconv.Itoa(recKB) + "k"
					m := summary(name, "KiB/s", vmbenchv1.HigherIsBetter, perNode(generated(mean*factor, 0.06)))
					m.Samples = nil
					res.Metrics = append(res.Metrics, m)
				}
			}
		}
		st.Results = append(st.Results, res)
	}

	for _, platform := range []string{"container", "vm"} {
		bw, retrans, cpu := 24.0e9, 12.0, 38.0
		if platform == "vm" {
			bw, retrans, cpu = 0.92e9, 240, 97
		}
		var bits, sender, retransmits, cpuHost []vmbenchv1.Sample
		for rep := int32(1); rep <= 3; rep++ {
			for _, pair := range demoPairs {
				b := round4(bw * (1 + 0.06*rng.NormFloat64()))
				bits = append(bits, vmbenchv1.Sample{Repetition: rep, Node: pair, Value: b})
				sender = append(sender, vmbenchv1.Sample{Repetition: rep, Node: pair, Value: round4(b * 1.002)})
				retransmits = append(retransmits, vmbenchv1.Sample{Repetition: rep, Node: pair, Value: math.Round(retrans * (1 + 0.5*rng.Float64()))})
				cpuHost = append(cpuHost, vmbenchv1.Sample{Repetition: rep, Node: pair, Value: noisy(cpu, 0.02)})
			}
		}
		st.Results = append(st.Results, vmbenchv1.BenchmarkResult{Benchmark: "iperf3", Platform: platform, Emulated: platform == "vm",
			Metrics: []vmbenchv1.MetricSummary{
				summary("bits_per_second", "bit/s", vmbenchv1.HigherIsBetter, bits),
				summary("sender_bits_per_second", "bit/s", vmbenchv1.HigherIsBetter, sender),
				summary("retransmits", "count", vmbenchv1.LowerIsBetter, retransmits),
				summary("cpu_host_percent", "%", vmbenchv1.LowerIsBetter, cpuHost),
			}})
	}
	st.Headline = &vmbenchv1.Headline{Benchmark: "hpcc-n4000", Metric: "HPL_Tflops", Summary: "vm/container 0.07 (emulated)"}
	st.Warnings = []string{
		"some metrics keep only their statistics, not every sample, so that the status stays small",
		"VMs ran under software emulation (no usable KVM): VM figures do not measure VM overhead",
	}
	return s
}

// summary is a metric as the controller stores it: samples plus their count, mean and sample
// standard deviation (two-pass, independent of package report's gonum-based code).
func summary(name, unit string, dir vmbenchv1.Direction, samples []vmbenchv1.Sample) vmbenchv1.MetricSummary {
	m := vmbenchv1.MetricSummary{Name: name, Unit: unit, Direction: dir, Samples: samples, N: int32(len(samples))}
	for _, s := range samples {
		m.Mean += s.Value
	}
	m.Mean /= float64(len(samples))
	if len(samples) > 1 {
		ss := 0.0
		for _, s := range samples {
			ss += (s.Value - m.Mean) * (s.Value - m.Mean)
		}
		m.StdDev = math.Sqrt(ss / float64(len(samples)-1))
	}
	return m
}

func round4(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

// TestDemoFixtureFile keeps testdata/suite-demo.yaml, which the CLI's tests and demos read, equal to
// demoSuite; run with -update after changing demoSuite.
func TestDemoFixtureFile(t *testing.T) {
	want, err := yaml.Marshal(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	want = append([]byte("# Generated by TestDemoFixtureFile from demoSuite (fixture_test.go); run go test -update to rewrite.\n"), want...)
	if *update {
		if err := os.MkdirAll(filepath.Dir(demoFixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(demoFixture, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(demoFixture)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; run go test ./internal/report/ -run TestDemoFixtureFile -update", demoFixture)
	}
}
