package suite

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// meanStdDev computes the mean and the sample standard deviation the textbook way.
func meanStdDev(xs []float64) (float64, float64) {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

func approxEqual(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func TestCombine(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
	}{
		{"one value has no spread", []float64{5}},
		{"two values", []float64{1, 2}},
		{"textbook example", []float64{2, 4, 4, 4, 5, 5, 7, 9}},
		{"constant", []float64{42, 42, 42}},
		{"negative and fractional", []float64{-3, 0, 3.5, 10, -7.25}},
		{"large offset", []float64{1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4}},
		{"tiny values", []float64{1e-6, 3e-6, 2e-6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n int32
			var mean, stddev float64
			for i, x := range tt.xs {
				n, mean, stddev = summary.Combine(n, mean, stddev, x)
				wantMean, wantStdDev := meanStdDev(tt.xs[:i+1])
				if n != int32(i+1) || !approxEqual(mean, wantMean) || !approxEqual(stddev, wantStdDev) {
					t.Fatalf("after %v: combine = (n %d, mean %g, stddev %g), want (n %d, mean %g, stddev %g)",
						tt.xs[:i+1], n, mean, stddev, i+1, wantMean, wantStdDev)
				}
			}
		})
	}
}

func sample(rep int32, node string, v float64) vmbenchv1.Sample {
	return vmbenchv1.Sample{Repetition: rep, Node: node, Value: v}
}

func metric(name string, v float64) results.Metric {
	return results.Metric{Name: name, Value: v, Unit: "ops/s", Direction: results.HigherIsBetter}
}

func latency(name string, v float64) results.Metric {
	return results.Metric{Name: name, Value: v, Unit: "ms", Direction: results.LowerIsBetter}
}

func TestAddSampleCountsEverySample(t *testing.T) {
	// addSample does not deduplicate: one run's duplicates are resolved by latestResults before it is
	// called, and a run is merged into status only once.
	tests := []struct {
		name string
		add  []vmbenchv1.Sample
	}{
		{name: "one sample", add: []vmbenchv1.Sample{sample(1, "master", 10)}},
		{name: "same repetition and node counts twice", add: []vmbenchv1.Sample{sample(1, "master", 10), sample(1, "master", 99)}},
		{name: "same repetition on another node", add: []vmbenchv1.Sample{sample(1, "master", 10), sample(1, "node01", 20)}},
		{name: "same node in another repetition", add: []vmbenchv1.Sample{sample(1, "master", 10), sample(2, "master", 30)}},
		{
			name: "pairs are nodes too",
			add:  []vmbenchv1.Sample{sample(1, "master-node01", 1), sample(1, "node01-master", 2), sample(1, "master-node01", 3)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			res := summary.ResultFor(st, "cpu", "vm")
			for _, s := range tt.add {
				summary.AddSample(res, metric("events_per_second", s.Value), s)
			}
			values := make([]float64, len(tt.add))
			for i, s := range tt.add {
				values[i] = s.Value
			}
			mean, stddev := meanStdDev(values)
			want := []vmbenchv1.MetricSummary{{Name: "events_per_second", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter,
				Samples: tt.add, N: int32(len(tt.add)), Mean: mean, StdDev: stddev}}
			if diff := cmp.Diff(want, st.Results[0].Metrics, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
				t.Errorf("metrics mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddSampleKeepsMetricsApart(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	res := summary.ResultFor(st, "ping", "container")
	summary.AddSample(res, latency("rtt_avg_ms", 0.5), sample(1, "master-node01", 0.5))
	summary.AddSample(res, metric("packets", 10), sample(1, "master-node01", 10))
	summary.AddSample(res, latency("rtt_avg_ms", 0.7), sample(1, "node01-master", 0.7))
	if got := summary.ResultFor(st, "ping", "container"); got != &st.Results[0] || len(st.Results) != 1 {
		t.Fatalf("resultFor made a second result for the same benchmark and platform: %+v", st.Results)
	}
	want := []vmbenchv1.MetricSummary{
		{Name: "rtt_avg_ms", Unit: "ms", Direction: vmbenchv1.LowerIsBetter, N: 2, Mean: 0.6, StdDev: math.Sqrt(0.02),
			Samples: []vmbenchv1.Sample{sample(1, "master-node01", 0.5), sample(1, "node01-master", 0.7)}},
		{Name: "packets", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 1, Mean: 10,
			Samples: []vmbenchv1.Sample{sample(1, "master-node01", 10)}},
	}
	if diff := cmp.Diff(want, st.Results[0].Metrics, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("metrics mismatch (-want +got):\n%s", diff)
	}
}

func TestAddSampleCapsEveryMetric(t *testing.T) {
	tests := []struct {
		name        string
		add         int
		wantSamples int
	}{
		{name: "below the cap keeps every sample", add: summary.SamplesPerMetric - 1, wantSamples: summary.SamplesPerMetric - 1},
		{name: "at the cap keeps every sample", add: summary.SamplesPerMetric, wantSamples: summary.SamplesPerMetric},
		{name: "past the cap keeps the first samples", add: summary.SamplesPerMetric + 50, wantSamples: summary.SamplesPerMetric},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			res := summary.ResultFor(st, "new", "vm")
			var values []float64
			var added []vmbenchv1.Sample
			for i := 0; i < tt.add; i++ {
				v := float64(i*i%17) + 0.25*float64(i)
				values = append(values, v)
				s := sample(int32(i/10+1), fmt.Sprintf("node%02d", i%10), v)
				added = append(added, s)
				summary.AddSample(res, metric("m", v), s)
			}
			got := st.Results[0].Metrics[0]
			if diff := cmp.Diff(added[:tt.wantSamples], got.Samples); diff != "" {
				t.Errorf("kept samples mismatch (-want +got):\n%s", diff)
			}
			// Statistics count every sample, kept or not.
			mean, stddev := meanStdDev(values)
			if got.N != int32(tt.add) || !approxEqual(got.Mean, mean) || !approxEqual(got.StdDev, stddev) {
				t.Errorf("statistics = (n %d, mean %g, stddev %g), want (n %d, mean %g, stddev %g)",
					got.N, got.Mean, got.StdDev, tt.add, mean, stddev)
			}
		})
	}
}

func TestAddSampleCapIsPerMetric(t *testing.T) {
	// There is no cap across metrics any more: the size of the whole status is fitStatus's business.
	// 70 full metrics hold 7,000 samples, more than any former global budget.
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	const metrics = 70
	for i := 0; i < metrics; i++ {
		res := summary.ResultFor(st, fmt.Sprintf("b%02d", i/2), "container")
		for s := 0; s < summary.SamplesPerMetric+5; s++ {
			summary.AddSample(res, metric(fmt.Sprintf("m%d", i%2), 1), sample(int32(s/8+1), fmt.Sprintf("node%02d", s%8), 1))
		}
	}
	total := 0
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			if len(m.Samples) != summary.SamplesPerMetric || m.N != summary.SamplesPerMetric+5 {
				t.Errorf("%s/%s keeps %d samples of %d, want %d of %d", r.Benchmark, m.Name, len(m.Samples), m.N,
					summary.SamplesPerMetric, summary.SamplesPerMetric+5)
			}
			total += len(m.Samples)
		}
	}
	if total != metrics*summary.SamplesPerMetric {
		t.Errorf("status keeps %d samples, want %d", total, metrics*summary.SamplesPerMetric)
	}
}

func TestLatestResults(t *testing.T) {
	failed := func(benchmark, node, err string) runplan.Message {
		return runplan.Message{Kind: runplan.KindResult, Benchmark: benchmark, Node: node, Error: err}
	}
	tests := []struct {
		name string
		in   []runplan.Message
		want []runplan.Message
	}{
		{name: "nothing"},
		{
			name: "distinct benchmarks and nodes are all kept, in order",
			in: []runplan.Message{resultMsg("cpu", "master", metric("e", 1)), resultMsg("cpu", "node01", metric("e", 2)),
				resultMsg("ping", "master", metric("e", 3)), resultMsg("ping", "master-node01", metric("e", 4))},
			want: []runplan.Message{resultMsg("cpu", "master", metric("e", 1)), resultMsg("cpu", "node01", metric("e", 2)),
				resultMsg("ping", "master", metric("e", 3)), resultMsg("ping", "master-node01", metric("e", 4))},
		},
		{
			name: "the last result of a benchmark and node replaces the earlier ones in their place",
			in: []runplan.Message{resultMsg("cpu", "master", metric("e", 1)), resultMsg("cpu", "node01", metric("e", 2)),
				resultMsg("cpu", "master", metric("e", 10)), resultMsg("cpu", "master", metric("e", 100))},
			want: []runplan.Message{resultMsg("cpu", "master", metric("e", 100)), resultMsg("cpu", "node01", metric("e", 2))},
		},
		{
			name: "a later success replaces an error",
			in:   []runplan.Message{failed("cpu", "master", "exit 1"), resultMsg("cpu", "master", metric("e", 5))},
			want: []runplan.Message{resultMsg("cpu", "master", metric("e", 5))},
		},
		{
			name: "a later error does not replace a measurement",
			in:   []runplan.Message{resultMsg("cpu", "master", metric("e", 5)), failed("cpu", "master", "exit 1")},
			want: []runplan.Message{resultMsg("cpu", "master", metric("e", 5))},
		},
		{
			name: "of two errors the later one stays",
			in:   []runplan.Message{failed("cpu", "master", "exit 1"), failed("cpu", "master", "exit 2")},
			want: []runplan.Message{failed("cpu", "master", "exit 2")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, summary.LatestResults(tt.in), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("latestResults() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSampleError(t *testing.T) {
	tests := []struct {
		name string
		msg  runplan.Message
		want string
	}{
		{name: "good", msg: runplan.Message{Metrics: []results.Metric{metric("events_per_second", 100), latency("latency_ms", 0.1)}}},
		{name: "runner error wins", msg: runplan.Message{Error: "sysbench: exit status 1", Metrics: []results.Metric{metric("x", 1)}},
			want: "sysbench: exit status 1"},
		{name: "no metrics", msg: runplan.Message{}, want: "no metric was parsed"},
		{name: "NaN", msg: runplan.Message{Metrics: []results.Metric{metric("a", 1), latency("rtt_avg_ms", math.NaN())}},
			want: "rtt_avg_ms is not a number"},
		{name: "infinity", msg: runplan.Message{Metrics: []results.Metric{metric("bw", math.Inf(1))}}, want: "bw is not a number"},
		{name: "zero throughput", msg: runplan.Message{Metrics: []results.Metric{metric("events_per_second", 0)}},
			want: "events_per_second is 0 ops/s"},
		{name: "negative throughput", msg: runplan.Message{Metrics: []results.Metric{metric("events_per_second", -2.5)}},
			want: "events_per_second is -2.5 ops/s"},
		{name: "a flag of zero is a measurement: netperf did not reach its interval, its result stands",
			msg: runplan.Message{Metrics: []results.Metric{metric("tcp_rr_transactions_per_second", 2e4),
				{Name: "tcp_rr_confidence_achieved", Value: 0, Unit: results.UnitFlag, Direction: results.HigherIsBetter}}}},
		{name: "zero of a lower-is-better metric is fine",
			msg: runplan.Message{Metrics: []results.Metric{latency("packet_loss_percent", 0), metric("bits_per_second", 1e9)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summary.SampleError(tt.msg); got != tt.want {
				t.Errorf("sampleError() = %q, want %q", got, tt.want)
			}
		})
	}
}

var (
	finishNow   = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	finishStart = finishNow.Add(-10 * time.Minute)
)

func resultMsg(benchmark, node string, ms ...results.Metric) runplan.Message {
	return runplan.Message{Kind: runplan.KindResult, Benchmark: benchmark, Node: node, Metrics: ms}
}

// goodResults are every result of a 2-node run of the "cpu" and "ping" benchmarks.
func goodResults() []runplan.Message {
	return []runplan.Message{
		resultMsg("cpu", "master", metric("events_per_second", 100)),
		resultMsg("cpu", "node01", metric("events_per_second", 110)),
		resultMsg("ping", "master-node01", latency("rtt_avg_ms", 0.5)),
	}
}

func finishBenchmarks() []vmbenchv1.Benchmark {
	return DefaultedBenchmarks(testSuite(
		vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
		vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing},
	))
}

func TestFinishRun(t *testing.T) {
	started := func(virt string) *runplan.Message {
		return &runplan.Message{Kind: runplan.KindStarted, Virtualization: virt}
	}
	done := &runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: 500}
	type want struct {
		phase       vmbenchv1.RunPhase
		message     string
		failed      []string
		accelerator vmbenchv1.Accelerator
		emulated    bool
		// failures and lastError of the cpu and ping results.
		failures  [2]int32
		lastError [2]string
	}
	tests := []struct {
		name         string
		platformType vmbenchv1.PlatformType
		report       summary.RunReport
		outcome      platform.Outcome
		timedOut     bool
		want         want
	}{
		{
			name:    "success",
			report:  summary.RunReport{Started: started("none"), Results: goodResults(), Done: done},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunSucceeded},
		},
		{
			name:     "timed out",
			report:   summary.RunReport{Started: started("none"), Results: goodResults()[:2]},
			outcome:  platform.Outcome{Phase: platform.PhaseRunning},
			timedOut: true,
			want: want{phase: vmbenchv1.RunFailed, failed: []string{"ping"}, failures: [2]int32{0, 1},
				lastError: [2]string{"", "run demo-container-1 reported no result"},
				message:   "run did not finish within its deadline of 25m0s; benchmarks failed: ping (no result reported)"},
		},
		{
			name:     "timed out while the child failed names the deadline",
			report:   summary.RunReport{Results: goodResults()},
			outcome:  platform.Outcome{Phase: platform.PhaseFailed, Message: "MPIJob demo-container-1 failed: DeadlineExceeded: too slow"},
			timedOut: true,
			want:     want{phase: vmbenchv1.RunFailed, message: "run did not finish within its deadline of 25m0s"},
		},
		{
			name:    "child failed with its message",
			report:  summary.RunReport{Started: started("none"), Results: goodResults()},
			outcome: platform.Outcome{Phase: platform.PhaseFailed, Message: "MPIJob demo-container-1 failed: BackoffLimitExceeded: launcher exited"},
			want:    want{phase: vmbenchv1.RunFailed, message: "MPIJob demo-container-1 failed: BackoffLimitExceeded: launcher exited"},
		},
		{
			name:    "no done message",
			report:  summary.RunReport{Started: started("none"), Results: goodResults()},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunFailed, message: "the runner never reported that it finished"},
		},
		{
			name: "corrupt frames",
			report: summary.RunReport{Started: started("none"), Results: goodResults(), Done: done,
				FrameErr: errors.Join(errors.New("frame r-3: bad MAC"), errors.New("frame r-4: incomplete"))},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunFailed, message: "corrupt result frames: frame r-3: bad MAC; frame r-4: incomplete"},
		},
		{
			name: "frames too large",
			report: summary.RunReport{Started: started("none"), Results: goodResults(), Done: done,
				FrameErr: errors.Join(&frame.LimitError{What: "the log", Limit: "4096 distinct messages"})},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunFailed, message: "result frames too large: frame: the log is too large to read: the log holds more than " +
				"4096 distinct messages; what is past that was not read. The runner's messages are far smaller: shorten the tool's output " +
				"(fewer intervals, a smaller range, fewer repetitions per run), or find what else writes frames into the log"},
		},
		{
			name:    "corrupt frames on several lines",
			report:  summary.RunReport{Results: goodResults(), Done: done, FrameErr: errors.New("frame r-3:\nbad MAC")},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunFailed, message: "corrupt result frames: frame r-3:; bad MAC"},
		},
		{
			name:    "log unreadable",
			report:  summary.RunReport{LogErr: errors.New("no pod with labels x exists")},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunFailed, failed: []string{"cpu", "ping"}, failures: [2]int32{1, 1},
				lastError: [2]string{"run demo-container-1 reported no result", "run demo-container-1 reported no result"},
				message:   "reading the runner's log: no pod with labels x exists; benchmarks failed: cpu (no result reported), ping (no result reported)"},
		},
		{
			name:    "a benchmark without result fails the benchmark, not the run",
			report:  summary.RunReport{Started: started("none"), Results: goodResults()[:2], Done: done},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"ping"}, failures: [2]int32{0, 1},
				lastError: [2]string{"", "run demo-container-1 reported no result"},
				message:   "benchmarks failed: ping (no result reported)"},
		},
		{
			name: "a benchmark error on one node",
			report: summary.RunReport{Started: started("none"), Done: done, Results: append(goodResults()[:1],
				runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: "node01", Error: "sysbench: exit status 1"},
				goodResults()[2])},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu"}, failures: [2]int32{1, 0},
				lastError: [2]string{"run demo-container-1, node01: sysbench: exit status 1", ""},
				message:   "benchmarks failed: cpu (node01: sysbench: exit status 1)"},
		},
		{
			name: "a zero throughput is a failure",
			report: summary.RunReport{Done: done, Results: []runplan.Message{
				resultMsg("cpu", "master", metric("events_per_second", 0)), goodResults()[2]}},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu"}, failures: [2]int32{1, 0},
				lastError: [2]string{"run demo-container-1, master: events_per_second is 0 ops/s", ""},
				message:   "benchmarks failed: cpu (master: events_per_second is 0 ops/s)"},
		},
		{
			name: "every failed benchmark is named with its first cause, in spec order",
			report: summary.RunReport{Started: started("none"), Done: done, Results: []runplan.Message{
				{Kind: runplan.KindResult, Benchmark: "ping", Node: "master-node01", Error: "ping: 100% packet loss"},
				{Kind: runplan.KindResult, Benchmark: "ping", Node: "node01-master", Error: "ping: exit status 2"}}},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu", "ping"}, failures: [2]int32{1, 2},
				lastError: [2]string{"run demo-container-1 reported no result", "run demo-container-1, node01-master: ping: exit status 2"},
				message:   "benchmarks failed: cpu (no result reported), ping (master-node01: ping: 100% packet loss)"},
		},
		{
			name: "a runner that measured again replaces its failed result",
			report: summary.RunReport{Started: started("none"), Done: done, Results: []runplan.Message{
				{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: "sysbench: killed"},
				goodResults()[0], goodResults()[1], goodResults()[2]}},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunSucceeded},
		},
		{
			name: "a runner that failed when it measured again keeps the earlier measurement",
			report: summary.RunReport{Started: started("none"), Done: done, Results: append(goodResults(),
				runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: "sysbench: killed"})},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunSucceeded},
		},
		{
			name: "a runner that failed twice at one execution fails the benchmark once",
			report: summary.RunReport{Started: started("none"), Done: done, Results: append(goodResults()[1:],
				runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: "sysbench: killed"},
				runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: "sysbench: killed again"})},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu"}, failures: [2]int32{1, 0},
				lastError: [2]string{"run demo-container-1, master: sysbench: killed again", ""},
				message:   "benchmarks failed: cpu (master: sysbench: killed again)"},
		},
		{
			name:         "VM under software emulation",
			platformType: vmbenchv1.PlatformVM,
			report:       summary.RunReport{Started: started("qemu"), Results: goodResults(), Done: done},
			outcome:      platform.Outcome{Phase: platform.PhaseSucceeded},
			want:         want{phase: vmbenchv1.RunSucceeded, accelerator: vmbenchv1.AcceleratorEmulation, emulated: true},
		},
		{
			name:         "VM under KVM",
			platformType: vmbenchv1.PlatformVM,
			report:       summary.RunReport{Started: started("kvm"), Results: goodResults(), Done: done},
			outcome:      platform.Outcome{Phase: platform.PhaseSucceeded},
			want:         want{phase: vmbenchv1.RunSucceeded, accelerator: vmbenchv1.AcceleratorKVM},
		},
		{
			name:         "VM that never started has no accelerator",
			platformType: vmbenchv1.PlatformVM,
			report:       summary.RunReport{},
			outcome:      platform.Outcome{Phase: platform.PhaseFailed, Message: "VMI demo-vm-1-master failed"},
			want: want{phase: vmbenchv1.RunFailed, failed: []string{"cpu", "ping"}, failures: [2]int32{1, 1},
				lastError: [2]string{"run demo-container-1 reported no result", "run demo-container-1 reported no result"},
				message:   "VMI demo-vm-1-master failed; benchmarks failed: cpu (no result reported), ping (no result reported)"},
		},
		{
			name:         "a container ignores the host's virtualization",
			platformType: vmbenchv1.PlatformContainer,
			report:       summary.RunReport{Started: started("qemu"), Results: goodResults(), Done: done},
			outcome:      platform.Outcome{Phase: platform.PhaseSucceeded},
			want:         want{phase: vmbenchv1.RunSucceeded},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			platformType := tt.platformType
			if platformType == "" {
				platformType = vmbenchv1.PlatformContainer
			}
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1, Phase: vmbenchv1.RunRunning,
				StartTime: &metav1.Time{Time: finishStart}}
			failed := summary.FinishRun(st, run, platformType, finishBenchmarks(), summary.RunCompletion{
				Report: tt.report, Outcome: tt.outcome, TimedOut: tt.timedOut, Deadline: 25 * time.Minute, Now: finishNow,
			})

			if run.Phase != tt.want.phase || run.Message != tt.want.message {
				t.Errorf("run = (%s, %q), want (%s, %q)", run.Phase, run.Message, tt.want.phase, tt.want.message)
			}
			if diff := cmp.Diff(tt.want.failed, failed); diff != "" {
				t.Errorf("failed benchmarks mismatch (-want +got):\n%s", diff)
			}
			if run.Accelerator != tt.want.accelerator {
				t.Errorf("accelerator = %q, want %q", run.Accelerator, tt.want.accelerator)
			}
			if run.CompletionTime == nil || !run.CompletionTime.Time.Equal(finishNow) {
				t.Errorf("completion time = %v, want %v", run.CompletionTime, finishNow)
			}
			type outcome struct {
				Benchmark, Platform string
				Emulated            bool
				Failures            int32
				LastError           string
			}
			var got []outcome
			for _, r := range st.Results {
				got = append(got, outcome{r.Benchmark, r.Platform, r.Emulated, r.Failures, r.LastError})
			}
			wantResults := []outcome{
				{"cpu", "container", tt.want.emulated, tt.want.failures[0], tt.want.lastError[0]},
				{"ping", "container", tt.want.emulated, tt.want.failures[1], tt.want.lastError[1]},
			}
			if diff := cmp.Diff(wantResults, got); diff != "" {
				t.Errorf("results mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishRunRecordsSamples(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-vm-2", Platform: "vm", Repetition: 2, StartTime: &metav1.Time{Time: finishStart}}
	msgs := append(goodResults(),
		resultMsg("unknown", "master", metric("x", 1)), // not in the spec: ignored
		resultMsg("cpu", "node02", metric("events_per_second", 120)))
	summary.FinishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), summary.RunCompletion{
		Report:  summary.RunReport{Results: msgs, Done: &runplan.Message{Kind: runplan.KindDone}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	want := []vmbenchv1.BenchmarkResult{
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{
			Name: "events_per_second", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 3, Mean: 110, StdDev: 10,
			Samples: []vmbenchv1.Sample{sample(2, "master", 100), sample(2, "node01", 110), sample(2, "node02", 120)},
		}}},
		{Benchmark: "ping", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{
			Name: "rtt_avg_ms", Unit: "ms", Direction: vmbenchv1.LowerIsBetter, N: 1, Mean: 0.5,
			Samples: []vmbenchv1.Sample{sample(2, "master-node01", 0.5)},
		}}},
	}
	if diff := cmp.Diff(want, st.Results, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
}

func TestFinishRunKeepsTheLastResult(t *testing.T) {
	// A runner started again in the same log (a rebooted VM) reports a benchmark and node twice: only
	// the last result counts, once.
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-vm-1", Platform: "vm", Repetition: 1, StartTime: &metav1.Time{Time: finishStart}}
	msgs := []runplan.Message{
		resultMsg("cpu", "master", metric("events_per_second", 100), latency("latency_avg_ms", 1)),
		resultMsg("ping", "master-node01", latency("rtt_avg_ms", 0.5)),
		resultMsg("cpu", "master", metric("events_per_second", 250), latency("latency_avg_ms", 3)),
	}
	failed := summary.FinishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), summary.RunCompletion{
		Report:  summary.RunReport{Results: msgs, Done: &runplan.Message{Kind: runplan.KindDone}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	if len(failed) != 0 || run.Phase != vmbenchv1.RunSucceeded {
		t.Errorf("run = %s with failed benchmarks %v, want Succeeded with none", run.Phase, failed)
	}
	want := []vmbenchv1.BenchmarkResult{
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{
			{Name: "events_per_second", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 1, Mean: 250,
				Samples: []vmbenchv1.Sample{sample(1, "master", 250)}},
			{Name: "latency_avg_ms", Unit: "ms", Direction: vmbenchv1.LowerIsBetter, N: 1, Mean: 3,
				Samples: []vmbenchv1.Sample{sample(1, "master", 3)}},
		}},
		{Benchmark: "ping", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{
			Name: "rtt_avg_ms", Unit: "ms", Direction: vmbenchv1.LowerIsBetter, N: 1, Mean: 0.5,
			Samples: []vmbenchv1.Sample{sample(1, "master-node01", 0.5)},
		}}},
	}
	if diff := cmp.Diff(want, st.Results, cmpopts.EquateApprox(1e-12, 0)); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
}

func TestFinishRunTimings(t *testing.T) {
	created := finishStart.Add(5 * time.Second)
	tests := []struct {
		name          string
		start         *metav1.Time
		report        summary.RunReport
		created       map[string]time.Time
		wantBoot      []vmbenchv1.NodeTiming
		wantOrchestra *float64
	}{
		{
			name:  "boot per node from creation to readiness, orchestration is wall time minus benchmark time",
			start: &metav1.Time{Time: finishStart},
			report: summary.RunReport{
				Started: &runplan.Message{Kind: runplan.KindStarted, NodesReady: map[string]time.Time{
					"node01": created.Add(20 * time.Second),
					"master": created.Add(12340 * time.Millisecond),
					"node02": created.Add(-time.Second), // before its creation: a clock skew, skipped
					"node03": created,                   // created unknown: skipped
				}},
				Done: &runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: 450.5},
			},
			created:       map[string]time.Time{"master": created, "node01": created, "node02": created},
			wantBoot:      []vmbenchv1.NodeTiming{{Node: "master", Seconds: 12.3}, {Node: "node01", Seconds: 20}},
			wantOrchestra: ptr.To(600 - 450.5),
		},
		{
			name:   "no done message, no orchestration time",
			start:  &metav1.Time{Time: finishStart},
			report: summary.RunReport{Started: &runplan.Message{Kind: runplan.KindStarted}},
		},
		{
			name:   "no start time, no orchestration time",
			report: summary.RunReport{Done: &runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			run := &vmbenchv1.RunStatus{Name: "demo-vm-1", Platform: "vm", Repetition: 1, StartTime: tt.start}
			summary.FinishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), summary.RunCompletion{
				Report: tt.report, Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow, Created: tt.created,
			})
			if diff := cmp.Diff(tt.wantBoot, run.BootSeconds); diff != "" {
				t.Errorf("boot seconds mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOrchestra, run.OrchestrationSeconds, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("orchestration seconds mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishRunKeepsEmulatedFlag(t *testing.T) {
	// Once any sample of a result came from an emulated VM, the result stays marked emulated.
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	for rep, virt := range []string{"qemu", "kvm"} {
		run := &vmbenchv1.RunStatus{Name: fmt.Sprintf("demo-vm-%d", rep+1), Platform: "vm", Repetition: int32(rep + 1)}
		summary.FinishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), summary.RunCompletion{
			Report: summary.RunReport{Started: &runplan.Message{Kind: runplan.KindStarted, Virtualization: virt}, Results: goodResults(),
				Done: &runplan.Message{Kind: runplan.KindDone}},
			Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
		})
	}
	for _, r := range st.Results {
		if !r.Emulated {
			t.Errorf("result %s/%s lost its emulated flag after a KVM run", r.Benchmark, r.Platform)
		}
		if r.Metrics[0].N != 2 && r.Benchmark == "ping" || r.Metrics[0].N != 4 && r.Benchmark == "cpu" {
			t.Errorf("result %s/%s has %d samples, want one per repetition and node", r.Benchmark, r.Platform, r.Metrics[0].N)
		}
	}
}

func TestFinishRunMarksAllNodesResults(t *testing.T) {
	// A benchmark run on all nodes at once has its result marked; the others do not.
	benchmarks := finishBenchmarks()
	benchmarks[0].Concurrency = vmbenchv1.ConcurrencyAllNodes
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, benchmarks, summary.RunCompletion{
		Report:  summary.RunReport{Started: &runplan.Message{Kind: runplan.KindStarted}, Results: goodResults(), Done: &runplan.Message{Kind: runplan.KindDone}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	if len(st.Results) != 2 {
		t.Fatalf("%d results, want 2", len(st.Results))
	}
	for _, r := range st.Results {
		if want := r.Benchmark == "cpu"; r.Concurrent != want {
			t.Errorf("result %s/%s: concurrent = %v, want %v", r.Benchmark, r.Platform, r.Concurrent, want)
		}
	}
}

func TestFinishRunTruncatesMessages(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	long := strings.Repeat("x", 2000)
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, finishBenchmarks(), summary.RunCompletion{
		Report: summary.RunReport{Done: &runplan.Message{Kind: runplan.KindDone}, Results: []runplan.Message{
			{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: long}, goodResults()[2]}},
		Outcome: platform.Outcome{Phase: platform.PhaseFailed, Message: long}, Now: finishNow,
	})
	if len(run.Message) != 1024 || !strings.HasSuffix(run.Message, "...") {
		t.Errorf("run message has %d bytes ending in %q, want 1024 ending in ...", len(run.Message), run.Message[len(run.Message)-5:])
	}
	if got := st.Results[0].LastError; len(got) != 512 || !strings.HasSuffix(got, "...") {
		t.Errorf("lastError has %d bytes, want 512 ending in ...", len(got))
	}
}

// Once a metric's samples were dropped or capped, later values only go into its statistics: the
// samples kept are always the first ones measured, never a subset biased towards later repetitions.
func TestAddSampleNeverRefillsTrimmedDetail(t *testing.T) {
	res := &vmbenchv1.BenchmarkResult{Benchmark: "cpu", Platform: "vm"}
	for i := range 4 {
		summary.AddSample(res, metric("e", float64(i)), sample(int32(i+1), "master", float64(i)))
	}
	res.Metrics[0].Samples = nil // what fitStatus does
	summary.AddSample(res, metric("e", 10), sample(5, "master", 10))
	m := res.Metrics[0]
	if len(m.Samples) != 0 || m.N != 5 {
		t.Fatalf("after trimming: %d samples, N=%d; want 0 samples, N=5", len(m.Samples), m.N)
	}
	if want := (0.0 + 1 + 2 + 3 + 10) / 5; math.Abs(m.Mean-want) > 1e-12 {
		t.Errorf("mean %v, want %v", m.Mean, want)
	}
}

// When the runner could not run at all it says why in a result without a benchmark; that cause, not
// just "no result reported", must reach the run.
func TestFinishRunReportsRunnerAbort(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-vm-1", Platform: "vm", Repetition: 1, Phase: vmbenchv1.RunRunning}
	report := summary.RunReport{
		Results: []runplan.Message{{Kind: runplan.KindResult, Error: "nodes did not answer within 15m0s: node02"}},
		Done:    &runplan.Message{Kind: runplan.KindDone},
	}
	summary.FinishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), summary.RunCompletion{Report: report, Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}})
	if run.Phase != vmbenchv1.RunFailed {
		t.Errorf("phase %s, want Failed", run.Phase)
	}
	if !strings.HasPrefix(run.Message, "runner: nodes did not answer within 15m0s: node02") {
		t.Errorf("message %q does not start with the runner's cause", run.Message)
	}
}

// Two executions of one benchmark on one node (sysbench-memory's block sizes) are both kept; only a
// repeat of the same variant replaces the earlier one.
func TestLatestResultsKeepsVariantsApart(t *testing.T) {
	bs := func(variant string, v float64) runplan.Message {
		m := resultMsg("mem", "master", metric(variant+"_mib_per_second", v))
		m.Variant = variant
		return m
	}
	got := summary.LatestResults([]runplan.Message{bs("bs1K", 1), bs("bs1M", 2), bs("bs1K", 3)})
	if diff := cmp.Diff([]runplan.Message{bs("bs1K", 3), bs("bs1M", 2)}, got); diff != "" {
		t.Errorf("latestResults() mismatch (-want +got):\n%s", diff)
	}
}

// A parser may report more metrics, or longer names, than the status schema holds (stress-ng with
// several stressors, iozone's auto mode): those are left out and named, the rest is kept, and the
// status stays one the API server accepts.
func TestFinishRunKeepsStatusWithinItsSchema(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	var ms []results.Metric
	for i := 0; i < 60; i++ {
		ms = append(ms, results.Metric{Name: fmt.Sprintf("m%02d", i), Unit: "MB/s", Direction: results.HigherIsBetter, Value: 1})
	}
	ms = append(ms[:10:10], append([]results.Metric{{Name: strings.Repeat("a_stressor_", 7), Unit: "ops/s", Direction: results.HigherIsBetter, Value: 1}}, ms[10:]...)...)
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}, summary.RunCompletion{
		Report: summary.RunReport{Done: &runplan.Message{Kind: runplan.KindDone},
			Results: []runplan.Message{{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Metrics: ms}}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	if got := len(st.Results[0].Metrics); got != summary.MaxMetricsPerEntry {
		t.Errorf("kept %d metrics, want %d", got, summary.MaxMetricsPerEntry)
	}
	long := st.Results[0].Metrics[10].Name
	if len(long) != summary.MaxMetricName || !strings.HasPrefix(long, "a_stressor_a_stressor_") {
		t.Errorf("the long name became %q, want its start and a hash in %d characters", long, summary.MaxMetricName)
	}
	for _, m := range st.Results[0].Metrics {
		if len(m.Name) > summary.MaxMetricName {
			t.Errorf("kept metric %q, longer than the schema's %d", m.Name, summary.MaxMetricName)
		}
	}
	if run.Phase != vmbenchv1.RunSucceeded || run.Message != "" {
		t.Errorf("run %s %q: metrics that do not fit are not a failure", run.Phase, run.Message)
	}
	w := warnings(vmbenchv1.BenchmarkSuiteSpec{}, st, "")
	if len(w) == 0 || !strings.Contains(w[0], "cpu on container reported more metrics than status holds (48)") {
		t.Errorf("warnings %q do not say that metrics were left out", w)
	}
}
