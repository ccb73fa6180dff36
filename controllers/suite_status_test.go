package controllers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
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
				n, mean, stddev = combine(n, mean, stddev, x)
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
			res := resultFor(st, "cpu", "vm")
			for _, s := range tt.add {
				addSample(res, metric("events_per_second", s.Value), s)
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
	res := resultFor(st, "ping", "container")
	addSample(res, latency("rtt_avg_ms", 0.5), sample(1, "master-node01", 0.5))
	addSample(res, metric("packets", 10), sample(1, "master-node01", 10))
	addSample(res, latency("rtt_avg_ms", 0.7), sample(1, "node01-master", 0.7))
	if got := resultFor(st, "ping", "container"); got != &st.Results[0] || len(st.Results) != 1 {
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
		{name: "below the cap keeps every sample", add: samplesPerMetric - 1, wantSamples: samplesPerMetric - 1},
		{name: "at the cap keeps every sample", add: samplesPerMetric, wantSamples: samplesPerMetric},
		{name: "past the cap keeps the first samples", add: samplesPerMetric + 50, wantSamples: samplesPerMetric},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			res := resultFor(st, "new", "vm")
			var values []float64
			var added []vmbenchv1.Sample
			for i := 0; i < tt.add; i++ {
				v := float64(i*i%17) + 0.25*float64(i)
				values = append(values, v)
				s := sample(int32(i/10+1), fmt.Sprintf("node%02d", i%10), v)
				added = append(added, s)
				addSample(res, metric("m", v), s)
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
		res := resultFor(st, fmt.Sprintf("b%02d", i/2), "container")
		for s := 0; s < samplesPerMetric+5; s++ {
			addSample(res, metric(fmt.Sprintf("m%d", i%2), 1), sample(int32(s/8+1), fmt.Sprintf("node%02d", s%8), 1))
		}
	}
	total := 0
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			if len(m.Samples) != samplesPerMetric || m.N != samplesPerMetric+5 {
				t.Errorf("%s/%s keeps %d samples of %d, want %d of %d", r.Benchmark, m.Name, len(m.Samples), m.N,
					samplesPerMetric, samplesPerMetric+5)
			}
			total += len(m.Samples)
		}
	}
	if total != metrics*samplesPerMetric {
		t.Errorf("status keeps %d samples, want %d", total, metrics*samplesPerMetric)
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
			if diff := cmp.Diff(tt.want, latestResults(tt.in), cmpopts.EquateEmpty()); diff != "" {
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
			if got := sampleError(tt.msg); got != tt.want {
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
		report       runReport
		outcome      platform.Outcome
		timedOut     bool
		want         want
	}{
		{
			name:    "success",
			report:  runReport{Started: started("none"), Results: goodResults(), Done: done},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunSucceeded},
		},
		{
			name:     "timed out",
			report:   runReport{Started: started("none"), Results: goodResults()[:2]},
			outcome:  platform.Outcome{Phase: platform.PhaseRunning},
			timedOut: true,
			want: want{phase: vmbenchv1.RunFailed, failed: []string{"ping"}, failures: [2]int32{0, 1},
				lastError: [2]string{"", "run demo-container-1 reported no result"},
				message:   "run did not finish within its deadline of 25m0s; benchmarks failed: ping (no result reported)"},
		},
		{
			name:     "timed out while the child failed names the deadline",
			report:   runReport{Results: goodResults()},
			outcome:  platform.Outcome{Phase: platform.PhaseFailed, Message: "MPIJob demo-container-1 failed: DeadlineExceeded: too slow"},
			timedOut: true,
			want:     want{phase: vmbenchv1.RunFailed, message: "run did not finish within its deadline of 25m0s"},
		},
		{
			name:    "child failed with its message",
			report:  runReport{Started: started("none"), Results: goodResults()},
			outcome: platform.Outcome{Phase: platform.PhaseFailed, Message: "MPIJob demo-container-1 failed: BackoffLimitExceeded: launcher exited"},
			want:    want{phase: vmbenchv1.RunFailed, message: "MPIJob demo-container-1 failed: BackoffLimitExceeded: launcher exited"},
		},
		{
			name:    "no done message",
			report:  runReport{Started: started("none"), Results: goodResults()},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunFailed, message: "the runner never reported that it finished"},
		},
		{
			name: "corrupt frames",
			report: runReport{Started: started("none"), Results: goodResults(), Done: done,
				FrameErr: errors.Join(errors.New("frame r-3: bad MAC"), errors.New("frame r-4: incomplete"))},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunFailed, message: "corrupt result frames: frame r-3: bad MAC; frame r-4: incomplete"},
		},
		{
			name:    "corrupt frames on several lines",
			report:  runReport{Results: goodResults(), Done: done, FrameErr: errors.New("frame r-3:\nbad MAC")},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunFailed, message: "corrupt result frames: frame r-3:; bad MAC"},
		},
		{
			name:    "log unreadable",
			report:  runReport{LogErr: errors.New("no pod with labels x exists")},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunFailed, failed: []string{"cpu", "ping"}, failures: [2]int32{1, 1},
				lastError: [2]string{"run demo-container-1 reported no result", "run demo-container-1 reported no result"},
				message:   "reading the runner's log: no pod with labels x exists; benchmarks failed: cpu (no result reported), ping (no result reported)"},
		},
		{
			name:    "a benchmark without result fails the benchmark, not the run",
			report:  runReport{Started: started("none"), Results: goodResults()[:2], Done: done},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"ping"}, failures: [2]int32{0, 1},
				lastError: [2]string{"", "run demo-container-1 reported no result"},
				message:   "benchmarks failed: ping (no result reported)"},
		},
		{
			name: "a benchmark error on one node",
			report: runReport{Started: started("none"), Done: done, Results: append(goodResults()[:1],
				runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: "node01", Error: "sysbench: exit status 1"},
				goodResults()[2])},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu"}, failures: [2]int32{1, 0},
				lastError: [2]string{"run demo-container-1, node01: sysbench: exit status 1", ""},
				message:   "benchmarks failed: cpu (node01: sysbench: exit status 1)"},
		},
		{
			name: "a zero throughput is a failure",
			report: runReport{Done: done, Results: []runplan.Message{
				resultMsg("cpu", "master", metric("events_per_second", 0)), goodResults()[2]}},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu"}, failures: [2]int32{1, 0},
				lastError: [2]string{"run demo-container-1, master: events_per_second is 0 ops/s", ""},
				message:   "benchmarks failed: cpu (master: events_per_second is 0 ops/s)"},
		},
		{
			name: "every failed benchmark is named with its first cause, in spec order",
			report: runReport{Started: started("none"), Done: done, Results: []runplan.Message{
				{Kind: runplan.KindResult, Benchmark: "ping", Node: "master-node01", Error: "ping: 100% packet loss"},
				{Kind: runplan.KindResult, Benchmark: "ping", Node: "node01-master", Error: "ping: exit status 2"}}},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want: want{phase: vmbenchv1.RunSucceeded, failed: []string{"cpu", "ping"}, failures: [2]int32{1, 2},
				lastError: [2]string{"run demo-container-1 reported no result", "run demo-container-1, node01-master: ping: exit status 2"},
				message:   "benchmarks failed: cpu (no result reported), ping (master-node01: ping: 100% packet loss)"},
		},
		{
			name: "a runner that measured again replaces its failed result",
			report: runReport{Started: started("none"), Done: done, Results: []runplan.Message{
				{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: "sysbench: killed"},
				goodResults()[0], goodResults()[1], goodResults()[2]}},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunSucceeded},
		},
		{
			name: "a runner that failed when it measured again keeps the earlier measurement",
			report: runReport{Started: started("none"), Done: done, Results: append(goodResults(),
				runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Error: "sysbench: killed"})},
			outcome: platform.Outcome{Phase: platform.PhaseSucceeded},
			want:    want{phase: vmbenchv1.RunSucceeded},
		},
		{
			name: "a runner that failed twice at one execution fails the benchmark once",
			report: runReport{Started: started("none"), Done: done, Results: append(goodResults()[1:],
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
			report:       runReport{Started: started("qemu"), Results: goodResults(), Done: done},
			outcome:      platform.Outcome{Phase: platform.PhaseSucceeded},
			want:         want{phase: vmbenchv1.RunSucceeded, accelerator: vmbenchv1.AcceleratorEmulation, emulated: true},
		},
		{
			name:         "VM under KVM",
			platformType: vmbenchv1.PlatformVM,
			report:       runReport{Started: started("kvm"), Results: goodResults(), Done: done},
			outcome:      platform.Outcome{Phase: platform.PhaseSucceeded},
			want:         want{phase: vmbenchv1.RunSucceeded, accelerator: vmbenchv1.AcceleratorKVM},
		},
		{
			name:         "VM that never started has no accelerator",
			platformType: vmbenchv1.PlatformVM,
			report:       runReport{},
			outcome:      platform.Outcome{Phase: platform.PhaseFailed, Message: "VMI demo-vm-1-master failed"},
			want: want{phase: vmbenchv1.RunFailed, failed: []string{"cpu", "ping"}, failures: [2]int32{1, 1},
				lastError: [2]string{"run demo-container-1 reported no result", "run demo-container-1 reported no result"},
				message:   "VMI demo-vm-1-master failed; benchmarks failed: cpu (no result reported), ping (no result reported)"},
		},
		{
			name:         "a container ignores the host's virtualization",
			platformType: vmbenchv1.PlatformContainer,
			report:       runReport{Started: started("qemu"), Results: goodResults(), Done: done},
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
			failed := finishRun(st, run, platformType, finishBenchmarks(), runCompletion{
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
	finishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), runCompletion{
		Report:  runReport{Results: msgs, Done: &runplan.Message{Kind: runplan.KindDone}},
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
	failed := finishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), runCompletion{
		Report:  runReport{Results: msgs, Done: &runplan.Message{Kind: runplan.KindDone}},
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
		report        runReport
		created       map[string]time.Time
		wantBoot      []vmbenchv1.NodeTiming
		wantOrchestra *float64
	}{
		{
			name:  "boot per node from creation to readiness, orchestration is wall time minus benchmark time",
			start: &metav1.Time{Time: finishStart},
			report: runReport{
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
			report: runReport{Started: &runplan.Message{Kind: runplan.KindStarted}},
		},
		{
			name:   "no start time, no orchestration time",
			report: runReport{Done: &runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			run := &vmbenchv1.RunStatus{Name: "demo-vm-1", Platform: "vm", Repetition: 1, StartTime: tt.start}
			finishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), runCompletion{
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
		finishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), runCompletion{
			Report: runReport{Started: &runplan.Message{Kind: runplan.KindStarted, Virtualization: virt}, Results: goodResults(),
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
	finishRun(st, run, vmbenchv1.PlatformContainer, benchmarks, runCompletion{
		Report:  runReport{Started: &runplan.Message{Kind: runplan.KindStarted}, Results: goodResults(), Done: &runplan.Message{Kind: runplan.KindDone}},
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

// A run records what backed its platform's Shared target: the claim and class in pods, the master
// VM's NFS server in VMs, with what the runner saw mounted; nothing when no benchmark used the target
// or the export failed.
func TestFinishRunRecordsWhatBackedTheSharedTarget(t *testing.T) {
	const mountedPrefix = "NFSv4.2 export of VM master (nfs-kernel-server 1), mounted as nfs4 "
	shared := DefaultedBenchmarks(testSuite(vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "Shared"}}}))
	class := &vmbenchv1.SharedStorage{StorageClassName: "vmbench-shared"}
	tests := []struct {
		name         string
		platformType vmbenchv1.PlatformType
		benchmarks   []vmbenchv1.Benchmark
		started      runplan.Message
		want         string
	}{
		{"container", vmbenchv1.PlatformContainer, shared, runplan.Message{SharedMount: "ext4 /dev/vda"},
			"PVC <run>-shared of storage class vmbench-shared (ReadWriteMany), mounted as ext4 /dev/vda"},
		{"host, mount not seen", vmbenchv1.PlatformHost, shared, runplan.Message{},
			"PVC <run>-shared of storage class vmbench-shared (ReadWriteMany)"},
		{"vm", vmbenchv1.PlatformVM, shared,
			runplan.Message{SharedServer: "nfs-kernel-server 1:2.6.2-4+deb12u1", SharedMount: "nfs4 master.demo-x-1.bench.svc:/srv/vmbench-shared"},
			"NFSv4.2 export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1), mounted as nfs4 master.<run>.bench.svc:/srv/vmbench-shared"},
		{"vm whose master could not export", vmbenchv1.PlatformVM, shared, runplan.Message{}, ""},
		{"no benchmark on the Shared target", vmbenchv1.PlatformContainer, finishBenchmarks(), runplan.Message{SharedMount: "ext4 /dev/vda"}, ""},
		{"a mount past the schema's limit", vmbenchv1.PlatformVM, shared,
			runplan.Message{SharedServer: "nfs-kernel-server 1", SharedMount: "nfs4 " + strings.Repeat("m", 300)},
			mountedPrefix + strings.Repeat("m", 256-3-len(mountedPrefix)) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			run := &vmbenchv1.RunStatus{Name: "demo-x-1", Platform: "x", Repetition: 1}
			started := tt.started
			started.Kind = runplan.KindStarted
			finishRun(st, run, tt.platformType, tt.benchmarks, runCompletion{
				Report:  runReport{Started: &started, Done: &runplan.Message{Kind: runplan.KindDone}},
				Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow, SharedStorage: class,
			})
			var want []vmbenchv1.PlatformSharedStorage
			if tt.want != "" {
				want = []vmbenchv1.PlatformSharedStorage{{Platform: "x", BackedBy: tt.want, Run: "demo-x-1"}}
			}
			if diff := cmp.Diff(want, st.SharedStorage); diff != "" {
				t.Errorf("sharedStorage mismatch (-want +got):\n%s", diff)
			}
			for _, s := range st.SharedStorage {
				if len(s.BackedBy) > maxSharedStorage {
					t.Errorf("backedBy of %d bytes, beyond the schema's %d", len(s.BackedBy), maxSharedStorage)
				}
			}
		})
	}
}

// One entry per platform, the latest run's: a later run replaces what an earlier one recorded, and
// a run that recorded nothing (its export failed) keeps the earlier entry.
func TestFinishRunKeepsTheLatestSharedStoragePerPlatform(t *testing.T) {
	shared := DefaultedBenchmarks(testSuite(vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Shared"}}}))
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	for i, server := range []string{"nfs-kernel-server 1:2.6.2-4", "nfs-kernel-server 1:2.6.2-4+deb12u1", ""} {
		run := &vmbenchv1.RunStatus{Name: fmt.Sprintf("demo-vm-%d", i+1), Platform: "vm", Repetition: int32(i + 1)}
		finishRun(st, run, vmbenchv1.PlatformVM, shared, runCompletion{
			Report:  runReport{Started: &runplan.Message{Kind: runplan.KindStarted, SharedServer: server}, Done: &runplan.Message{Kind: runplan.KindDone}},
			Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
		})
	}
	container := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	finishRun(st, container, vmbenchv1.PlatformContainer, shared, runCompletion{
		Report:  runReport{Started: &runplan.Message{Kind: runplan.KindStarted}, Done: &runplan.Message{Kind: runplan.KindDone}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow, SharedStorage: &vmbenchv1.SharedStorage{StorageClassName: "nfs"},
	})
	want := []vmbenchv1.PlatformSharedStorage{
		{Platform: "vm", BackedBy: "NFSv4.2 export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1)", Run: "demo-vm-2"},
		{Platform: "container", BackedBy: "PVC <run>-shared of storage class nfs (ReadWriteMany)", Run: "demo-container-1"},
	}
	if diff := cmp.Diff(want, st.SharedStorage); diff != "" {
		t.Errorf("sharedStorage mismatch (-want +got):\n%s", diff)
	}
}

func TestFinishRunTruncatesMessages(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	long := strings.Repeat("x", 2000)
	finishRun(st, run, vmbenchv1.PlatformContainer, finishBenchmarks(), runCompletion{
		Report: runReport{Done: &runplan.Message{Kind: runplan.KindDone}, Results: []runplan.Message{
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

func summary(name string, dir vmbenchv1.Direction, n int32, mean float64) vmbenchv1.MetricSummary {
	return vmbenchv1.MetricSummary{Name: name, Unit: "u", Direction: dir, N: n, Mean: mean}
}

func TestComputeRatios(t *testing.T) {
	hi, lo := vmbenchv1.HigherIsBetter, vmbenchv1.LowerIsBetter
	result := func(benchmark, platform string, emulated bool, ms ...vmbenchv1.MetricSummary) vmbenchv1.BenchmarkResult {
		return vmbenchv1.BenchmarkResult{Benchmark: benchmark, Platform: platform, Emulated: emulated, Metrics: ms}
	}
	ratios := func(benchmark, platform string, emulated bool, rs ...vmbenchv1.RatioValue) vmbenchv1.PlatformRatios {
		return vmbenchv1.PlatformRatios{Benchmark: benchmark, Platform: platform, Emulated: emulated, Metrics: rs}
	}
	rv := func(metric string, ratio, overhead float64) vmbenchv1.RatioValue {
		return vmbenchv1.RatioValue{Metric: metric, Ratio: ratio, OverheadPercent: overhead}
	}
	tests := []struct {
		name     string
		baseline string
		results  []vmbenchv1.BenchmarkResult
		want     []vmbenchv1.PlatformRatios
	}{
		{
			name: "platform worse than the baseline has a positive overhead either way", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 200), summary("latency", lo, 3, 2)),
				result("cpu", "vm", false, summary("events", hi, 3, 150), summary("latency", lo, 3, 3)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("events", 0.75, 25), rv("latency", 1.5, 50))},
		},
		{
			name: "platform better than the baseline has a negative overhead either way", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 200), summary("latency", lo, 3, 2)),
				result("cpu", "vm", false, summary("events", hi, 3, 250), summary("latency", lo, 3, 1)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("events", 1.25, -25), rv("latency", 0.5, -50))},
		},
		{
			name: "rounded to 4 and 2 digits", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 1, 3)),
				result("cpu", "vm", false, summary("events", hi, 1, 1)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("events", 0.3333, 66.67))},
		},
		{
			name: "metrics in the baseline's order, whatever the other platform's order", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("a", hi, 1, 10), summary("b", hi, 1, 10), summary("c", hi, 1, 10)),
				result("cpu", "vm", false, summary("c", hi, 1, 30), summary("a", hi, 1, 10), summary("b", hi, 1, 20)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("a", 1, 0), rv("b", 2, -100), rv("c", 3, -200))},
		},
		{
			name: "skips a zero baseline, empty metrics and metrics missing on the other platform", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("ping", "container", false, summary("loss", lo, 3, 0), summary("rtt", lo, 3, 1), summary("only-base", lo, 1, 1),
					summary("empty-base", lo, 0, 0), summary("empty-other", lo, 2, 4)),
				result("ping", "vm", false, summary("loss", lo, 3, 5), summary("rtt", lo, 3, 2), summary("only-other", lo, 1, 1),
					summary("empty-base", lo, 2, 3), summary("empty-other", lo, 0, 0)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("ping", "vm", false, rv("rtt", 2, 100))},
		},
		{
			name: "a platform without any ratio has no entry", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 100), summary("loss", lo, 3, 0)),
				result("cpu", "vm", false, summary("events", hi, 0, 0), summary("loss", lo, 3, 1)),
				result("cpu", "kata", false, summary("events", hi, 3, 50)),
				result("cpu", "host", false),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "kata", false, rv("events", 0.5, 50))},
		},
		{
			name: "emulated flag is carried", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 100)),
				result("cpu", "vm", true, summary("events", hi, 3, 10)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", true, rv("events", 0.1, 90))},
		},
		{
			name: "every other platform against the baseline, benchmark by benchmark, no baseline no ratio", baseline: "host",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "vm", false, summary("events", hi, 3, 80)),
				result("cpu", "host", false, summary("events", hi, 3, 100), summary("latency", lo, 3, 1)),
				result("cpu", "container", true, summary("events", hi, 3, 90), summary("latency", lo, 3, 1.1)),
				result("mem", "vm", false, summary("bw", hi, 3, 80)),
				result("mem", "container", false, summary("bw", hi, 3, 90)),
				result("net", "container", false, summary("bw", hi, 3, 90)),
				result("net", "host", false, summary("bw", hi, 3, 45)),
			},
			want: []vmbenchv1.PlatformRatios{
				ratios("cpu", "vm", false, rv("events", 0.8, 20)),
				ratios("cpu", "container", true, rv("events", 0.9, 10), rv("latency", 1.1, 10)),
				ratios("net", "container", false, rv("bw", 2, -100)),
			},
		},
		{name: "nothing measured", baseline: "container"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{Results: tt.results}
			if diff := cmp.Diff(tt.want, computeRatios(st, tt.baseline), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("computeRatios() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadline(t *testing.T) {
	spec := vmbenchv1.BenchmarkSuiteSpec{
		Baseline: "container",
		Benchmarks: []vmbenchv1.Benchmark{
			{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC},
			{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory},
			{Name: "stress", Type: vmbenchv1.BenchmarkStressNGCPU},
			{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
		},
	}
	// ratios are the ratios of one benchmark on the "vm" platform.
	ratios := func(benchmark string, emulated bool, rs ...vmbenchv1.RatioValue) vmbenchv1.PlatformRatios {
		return vmbenchv1.PlatformRatios{Benchmark: benchmark, Platform: "vm", Emulated: emulated, Metrics: rs}
	}
	rv := func(metric string, r float64) vmbenchv1.RatioValue {
		return vmbenchv1.RatioValue{Metric: metric, Ratio: r}
	}
	tests := []struct {
		name   string
		ratios []vmbenchv1.PlatformRatios
		want   *vmbenchv1.Headline
	}{
		{name: "no ratios"},
		{
			name:   "first benchmark in spec order, not in ratio order",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false, rv("events_per_second", 0.98)), ratios("linpack", false, rv("HPL_Tflops", 0.5))},
			want:   &vmbenchv1.Headline{Benchmark: "linpack", Metric: "HPL_Tflops", Summary: "vm/container 0.50"},
		},
		{
			name: "a benchmark without its headline metric is passed over",
			ratios: []vmbenchv1.PlatformRatios{ratios("linpack", false, rv("PTRANS_GBs", 0.7), rv("xHPL_Tflops", 0.7)),
				ratios("cpu", false, rv("latency_avg_ms", 1.1), rv("events_per_second", 0.934))},
			want: &vmbenchv1.Headline{Benchmark: "cpu", Metric: "events_per_second", Summary: "vm/container 0.93"},
		},
		{
			name: "the first platform that has the headline metric",
			ratios: []vmbenchv1.PlatformRatios{
				{Benchmark: "cpu", Platform: "kata", Metrics: []vmbenchv1.RatioValue{rv("latency_avg_ms", 1.1)}},
				{Benchmark: "cpu", Platform: "vm2", Emulated: true, Metrics: []vmbenchv1.RatioValue{rv("events_per_second", 0.5)}},
				{Benchmark: "cpu", Platform: "vm3", Metrics: []vmbenchv1.RatioValue{rv("events_per_second", 0.7)}},
			},
			want: &vmbenchv1.Headline{Benchmark: "cpu", Metric: "events_per_second", Summary: "vm2/container 0.50 (emulated)"},
		},
		{
			name:   "suffix after a block size prefix",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false, rv("events_per_second", 1)), ratios("mem", false, rv("bs1M_mib_per_second", 0.876))},
			want:   &vmbenchv1.Headline{Benchmark: "mem", Metric: "bs1M_mib_per_second", Summary: "vm/container 0.88"},
		},
		{
			name:   "stress-ng metrics carry the stressor's name",
			ratios: []vmbenchv1.PlatformRatios{ratios("stress", false, rv("cpu_bogo_ops_per_second_real", 0.91))},
			want:   &vmbenchv1.Headline{Benchmark: "stress", Metric: "cpu_bogo_ops_per_second_real", Summary: "vm/container 0.91"},
		},
		{
			name:   "emulated",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", true, rv("events_per_second", 0.12))},
			want:   &vmbenchv1.Headline{Benchmark: "cpu", Metric: "events_per_second", Summary: "vm/container 0.12 (emulated)"},
		},
		{
			name:   "no headline metric anywhere",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false, rv("latency_avg_ms", 1.1)), ratios("other", false, rv("events_per_second", 1))},
		},
		{name: "an entry without metrics", ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, headline(spec, tt.ratios)); diff != "" {
				t.Errorf("headline() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetConditions(t *testing.T) {
	now := finishNow
	earlier := metav1.NewTime(now.Add(-time.Hour))
	r := func(name string, phase vmbenchv1.RunPhase, msg string) vmbenchv1.RunStatus {
		return vmbenchv1.RunStatus{Name: name, Phase: phase, Message: msg}
	}
	type cond struct {
		Type   string
		Status metav1.ConditionStatus
		Reason string
	}
	// conds lists the four conditions, RunsFailed False; withRunsFailed makes it True.
	conds := func(progressing, complete, failed cond) []cond {
		progressing.Type, complete.Type, failed.Type = vmbenchv1.ConditionProgressing, vmbenchv1.ConditionComplete, vmbenchv1.ConditionFailed
		return []cond{progressing, complete, failed, {Type: vmbenchv1.ConditionRunsFailed, Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNoFailure}}
	}
	withRunsFailed := func(c []cond) []cond {
		c[3] = cond{Type: vmbenchv1.ConditionRunsFailed, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunFailed}
		return c
	}
	notDone := cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNotDone}
	noFailure := cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNoFailure}
	finished := cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonFinished}
	failedBy := func(reason string) (cond, cond) {
		return cond{Status: metav1.ConditionFalse, Reason: reason}, cond{Status: metav1.ConditionTrue, Reason: reason}
	}

	tests := []struct {
		name           string
		runs           []vmbenchv1.RunStatus
		startTime      *metav1.Time
		completionTime *metav1.Time
		state          suiteState
		wantConds      []cond
		wantPhase      vmbenchv1.SuitePhase
		wantProgress   string
		wantCompletion *metav1.Time
		// wantMessages are substrings of the Progressing and Failed messages.
		wantProgressingMsg, wantFailedMsg []string
		wantRunsFailedMsg                 string
	}{
		{
			name:         "pending until the first run starts",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunPending, ""), r("s-vm-1", vmbenchv1.RunPending, "")},
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonPending}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuitePending,
			wantProgress: "0/2", wantProgressingMsg: []string{"run s-container-1 (0/2 runs finished)"},
		},
		{
			name:         "running once the suite has a start time, even before a run finished",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunRunning, ""), r("s-vm-1", vmbenchv1.RunPending, "")},
			startTime:    &earlier,
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunning}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "0/2", wantProgressingMsg: []string{"run s-container-1 (0/2 runs finished)"},
		},
		{
			name: "running",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""), r("s-vm-1", vmbenchv1.RunRunning, ""),
				r("s-vm-2", vmbenchv1.RunPending, "")},
			startTime:    &earlier,
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunning}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "1/3", wantProgressingMsg: []string{"run s-vm-1 (1/3 runs finished)"},
		},
		{
			name: "running with failures so far clears an old completion time",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunFailed, "boom"),
				r("s-vm-1", vmbenchv1.RunSucceeded, "benchmarks failed: ping (no result reported)"), r("s-vm-2", vmbenchv1.RunRunning, "")},
			startTime: &earlier, completionTime: &earlier,
			wantConds:    withRunsFailed(conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunning}, notDone, noFailure)),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "2/3", wantProgressingMsg: []string{"run s-vm-2 (2/3 runs finished); 2 failures so far"},
			wantRunsFailedMsg: "1 of 3 runs failed; first: s-container-1: boom",
		},
		{
			name:         "a run held up names its cause",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunRunning, "waiting: ..."), r("s-vm-1", vmbenchv1.RunPending, "")},
			startTime:    &earlier,
			state:        suiteState{Waiting: &cause{Reason: ReasonImagePull, Message: "pod s-container-1-worker-0 cannot pull image runner:x"}},
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: ReasonImagePull}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "0/2", wantProgressingMsg: []string{"run s-container-1 is waiting: pod s-container-1-worker-0 cannot pull image runner:x (0/2 runs finished)"},
		},
		{
			name:         "complete",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""), r("s-vm-1", vmbenchv1.RunSucceeded, "")},
			startTime:    &earlier,
			wantConds:    conds(finished, cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonCompleted}, noFailure),
			wantPhase:    vmbenchv1.SuiteComplete,
			wantProgress: "2/2", wantCompletion: &metav1.Time{Time: now},
		},
		{
			name:      "complete keeps the first completion time",
			runs:      []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, "")},
			startTime: &earlier, completionTime: &earlier,
			wantConds:    conds(finished, cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonCompleted}, noFailure),
			wantPhase:    vmbenchv1.SuiteComplete,
			wantProgress: "1/1", wantCompletion: &earlier,
		},
		{
			name: "failed by a run",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, "benchmarks failed: ping (no result reported)"),
				r("s-vm-1", vmbenchv1.RunFailed, "VMI s-vm-1-master failed")},
			startTime: &earlier,
			wantConds: func() []cond {
				c, f := failedBy(vmbenchv1.ReasonRunFailed)
				return withRunsFailed(conds(finished, c, f))
			}(),
			wantPhase:    vmbenchv1.SuiteFailed,
			wantProgress: "2/2", wantCompletion: &metav1.Time{Time: now},
			wantFailedMsg: []string{"s-vm-1: VMI s-vm-1-master failed; s-container-1: benchmarks failed: ping (no result reported)"},
		},
		{
			name: "failed by a benchmark only",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""),
				r("s-vm-1", vmbenchv1.RunSucceeded, "benchmarks failed: cpu (node01: exit 1)")},
			startTime: &earlier,
			wantConds: func() []cond {
				c, f := failedBy(vmbenchv1.ReasonBenchmarkFailed)
				return conds(finished, c, f)
			}(),
			wantPhase:    vmbenchv1.SuiteFailed,
			wantProgress: "2/2", wantCompletion: &metav1.Time{Time: now},
			wantFailedMsg: []string{"s-vm-1: benchmarks failed: cpu (node01: exit 1)"},
		},
		{
			name: "timed out with a run still active",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""), r("s-vm-1", vmbenchv1.RunRunning, ""),
				r("s-vm-2", vmbenchv1.RunFailed, "not started: the suite timed out after 6h0m0s")},
			startTime: &earlier,
			state:     suiteState{TimedOut: true},
			wantConds: func() []cond {
				c, f := failedBy(vmbenchv1.ReasonSuiteTimeout)
				return withRunsFailed(conds(finished, c, f))
			}(),
			wantPhase:    vmbenchv1.SuiteFailed,
			wantProgress: "2/3", wantCompletion: &metav1.Time{Time: now},
			wantFailedMsg: []string{"the suite timed out; s-vm-2: not started: the suite timed out after 6h0m0s"},
		},
		{
			name:  "invalid spec",
			runs:  []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunPending, ""), r("s-vm-1", vmbenchv1.RunPending, "")},
			state: suiteState{InvalidSpec: errors.New("cluster.cpuRequest 3 exceeds cluster.cpu 2: lower cluster.cpuRequest or remove it")},
			wantConds: conds(
				cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonInvalidSpec},
				cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonInvalidSpec},
				cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonInvalidSpec}),
			wantPhase:     vmbenchv1.SuiteFailed,
			wantProgress:  "0/2",
			wantFailedMsg: []string{"cluster.cpuRequest 3 exceeds cluster.cpu 2: lower cluster.cpuRequest or remove it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{Runs: tt.runs, StartTime: tt.startTime, CompletionTime: tt.completionTime}
			state := tt.state
			state.Generation, state.Now = 7, now
			setConditions(st, state)

			var got []cond
			for _, c := range st.Conditions {
				got = append(got, cond{c.Type, c.Status, c.Reason})
				if c.ObservedGeneration != 7 {
					t.Errorf("condition %s has observedGeneration %d, want 7", c.Type, c.ObservedGeneration)
				}
				if c.Message == "" {
					t.Errorf("condition %s has no message", c.Type)
				}
			}
			if diff := cmp.Diff(tt.wantConds, got); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
			if st.Phase != tt.wantPhase || st.Progress != tt.wantProgress {
				t.Errorf("phase, progress = %s, %q; want %s, %q", st.Phase, st.Progress, tt.wantPhase, tt.wantProgress)
			}
			if diff := cmp.Diff(tt.wantCompletion, st.CompletionTime); diff != "" {
				t.Errorf("completion time mismatch (-want +got):\n%s", diff)
			}
			for _, want := range tt.wantProgressingMsg {
				if msg := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionProgressing).Message; !strings.Contains(msg, want) {
					t.Errorf("Progressing message = %q, want it to contain %q", msg, want)
				}
			}
			if msg := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionRunsFailed).Message; tt.wantRunsFailedMsg != "" && msg != tt.wantRunsFailedMsg {
				t.Errorf("RunsFailed message = %q, want %q", msg, tt.wantRunsFailedMsg)
			}
			for _, want := range tt.wantFailedMsg {
				if msg := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionFailed).Message; !strings.Contains(msg, want) {
					t.Errorf("Failed message = %q, want it to contain %q", msg, want)
				}
			}
			if meta.IsStatusConditionTrue(st.Conditions, vmbenchv1.ConditionComplete) && meta.IsStatusConditionTrue(st.Conditions, vmbenchv1.ConditionFailed) {
				t.Error("Complete and Failed are both True")
			}
		})
	}
}

func TestSetConditionsUpdatesExistingConditions(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{{Name: "s-container-1", Phase: vmbenchv1.RunRunning}}}
	setConditions(st, suiteState{Generation: 1, Now: finishNow})
	st.Runs[0].Phase = vmbenchv1.RunSucceeded
	setConditions(st, suiteState{Generation: 2, Now: finishNow})
	if len(st.Conditions) != 4 {
		t.Fatalf("got %d conditions, want 4: %+v", len(st.Conditions), st.Conditions)
	}
	if c := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionComplete); c.Status != metav1.ConditionTrue || c.ObservedGeneration != 2 {
		t.Errorf("Complete = %s at generation %d, want True at 2", c.Status, c.ObservedGeneration)
	}
}

func TestWarnings(t *testing.T) {
	const (
		trimmedWarning    = "some metrics keep only their statistics, not every sample, so that the status stays small"
		requestsWarning   = "cluster requests are below limits: pods and VMs are not in Guaranteed QoS, so neighbours can take their CPU"
		emulationWarning  = "VMs ran under software emulation (no usable KVM): VM figures do not measure VM overhead"
		masqueradeWarning = "VMs use masquerade networking: every guest is 10.0.2.2, so MPI across VMs cannot work on this cluster"
	)
	emulated := []vmbenchv1.RunStatus{
		{Name: "s-vm-1", Accelerator: vmbenchv1.AcceleratorKVM},
		{Name: "s-vm-2", Accelerator: vmbenchv1.AcceleratorEmulation},
		{Name: "s-vm-3", Accelerator: vmbenchv1.AcceleratorEmulation},
	}
	// withSamples is a result whose metric counted n samples and keeps kept of them.
	withSamples := func(n, kept int) []vmbenchv1.BenchmarkResult {
		m := vmbenchv1.MetricSummary{Name: "events", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: int32(n), Mean: 1}
		for i := 0; i < kept; i++ {
			m.Samples = append(m.Samples, sample(int32(i+1), "master", 1))
		}
		other := vmbenchv1.MetricSummary{Name: "other", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 1, Mean: 1,
			Samples: []vmbenchv1.Sample{sample(1, "master", 1)}}
		return []vmbenchv1.BenchmarkResult{
			{Benchmark: "cpu", Platform: "container", Metrics: []vmbenchv1.MetricSummary{other}},
			{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{other, m}},
		}
	}
	tests := []struct {
		name    string
		edit    func(*vmbenchv1.BenchmarkSuiteSpec)
		runs    []vmbenchv1.RunStatus
		results []vmbenchv1.BenchmarkResult
		network platform.VMNetwork
		want    []string
	}{
		{name: "fair comparison", network: platform.VMNetworkBridge,
			runs: []vmbenchv1.RunStatus{{Name: "s-vm-1", Accelerator: vmbenchv1.AcceleratorKVM}}},
		{name: "passt is fine", network: platform.VMNetworkPasst},
		{name: "cpu request lowered", network: platform.VMNetworkBridge, want: []string{requestsWarning},
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) { s.Cluster.CPURequest = quantity("500m") }},
		{name: "memory request lowered", network: platform.VMNetworkBridge, want: []string{requestsWarning},
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) { s.Cluster.MemoryRequest = quantity("1Gi") }},
		{name: "requests equal to the limits are Guaranteed", network: platform.VMNetworkBridge,
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) {
				s.Cluster.CPURequest, s.Cluster.MemoryRequest = quantity("2000m"), quantity("2048Mi")
			}},
		{name: "every sample kept", network: platform.VMNetworkBridge, results: withSamples(3, 3)},
		{name: "samples capped per metric", network: platform.VMNetworkBridge, results: withSamples(samplesPerMetric+1, samplesPerMetric),
			want: []string{trimmedWarning}},
		{name: "samples dropped to fit the status", network: platform.VMNetworkBridge, results: withSamples(7, 0),
			want: []string{trimmedWarning}},
		{name: "emulation is named once", network: platform.VMNetworkBridge, runs: emulated, want: []string{emulationWarning}},
		{name: "masquerade with VMs", network: platform.VMNetworkMasquerade, want: []string{masqueradeWarning}},
		{name: "auto found masquerade for a run", network: platform.VMNetworkAuto, want: []string{masqueradeWarning},
			runs: []vmbenchv1.RunStatus{{Name: "s-vm-1", Network: "masquerade"}}},
		{name: "auto found passt", network: platform.VMNetworkAuto, runs: []vmbenchv1.RunStatus{{Name: "s-vm-1", Network: "passt"}}},
		{name: "masquerade without VMs", network: platform.VMNetworkMasquerade,
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) {
				s.Platforms = []vmbenchv1.Platform{containerPlatform, hostPlatform}
			}},
		{name: "everything", network: platform.VMNetworkMasquerade, runs: emulated, results: withSamples(5, 0),
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) {
				s.Cluster.CPURequest = quantity("1")
				s.Platforms = append(s.Platforms, vmbenchv1.Platform{Name: "vm2", Type: vmbenchv1.PlatformVM})
			},
			want: []string{trimmedWarning, requestsWarning, emulationWarning, masqueradeWarning}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSuite().Spec
			if tt.edit != nil {
				tt.edit(&spec)
			}
			got := warnings(spec, &vmbenchv1.BenchmarkSuiteStatus{Runs: tt.runs, Results: tt.results}, tt.network)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("warnings() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// jsonSize is the size of v as JSON, as the API server stores it.
func jsonSize(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

type metricStats struct {
	N            int32
	Mean, StdDev float64
	Samples      int
}

// statsOf is every metric's statistics and sample count, by benchmark, platform and metric.
func statsOf(st *vmbenchv1.BenchmarkSuiteStatus) map[string]metricStats {
	out := map[string]metricStats{}
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			out[r.Benchmark+"/"+r.Platform+"/"+m.Name] = metricStats{m.N, m.Mean, m.StdDev, len(m.Samples)}
		}
	}
	return out
}

func TestFitStatus(t *testing.T) {
	// filled is a metric with n samples.
	filled := func(name string, n int) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter}
		for i := 0; i < n; i++ {
			v := 1000 + float64(i*i%37) + 0.125*float64(i)
			m.Samples = append(m.Samples, sample(int32(i/8+1), fmt.Sprintf("node%02d", i%8), v))
			m.N, m.Mean, m.StdDev = combine(m.N, m.Mean, m.StdDev, v)
		}
		return m
	}
	// The biggest metric sits in the middle, so that neither the first nor the last is picked by luck.
	base := func() *vmbenchv1.BenchmarkSuiteStatus {
		return &vmbenchv1.BenchmarkSuiteStatus{Results: []vmbenchv1.BenchmarkResult{
			{Benchmark: "a", Platform: "container", Metrics: []vmbenchv1.MetricSummary{filled("small", 10), filled("mid", 50)}},
			{Benchmark: "b", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{filled("tiny", 1), filled("big", 100)}},
			{Benchmark: "c", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{filled("mid2", 40)}},
		}}
	}
	// drop removes the samples of the named metrics, as fitStatus does.
	drop := func(st *vmbenchv1.BenchmarkSuiteStatus, names ...string) {
		for i := range st.Results {
			for j := range st.Results[i].Metrics {
				if slices.Contains(names, st.Results[i].Metrics[j].Name) {
					st.Results[i].Metrics[j].Samples = nil
				}
			}
		}
	}
	// padTo pads st with a warning so that, once the named metrics lost their samples, it is target
	// bytes of JSON.
	padTo := func(st *vmbenchv1.BenchmarkSuiteStatus, target int, without ...string) {
		probe := st.DeepCopy()
		drop(probe, without...)
		probe.Warnings = []string{""}
		k := target - jsonSize(t, probe)
		if k < 0 {
			t.Fatalf("status is %d bytes without padding, more than the target %d", target-k, target)
		}
		st.Warnings = []string{strings.Repeat("w", k)}
	}
	tests := []struct {
		name        string
		status      func() *vmbenchv1.BenchmarkSuiteStatus
		wantDropped []string
		// wantOver is true when even the status without any sample is above the budget.
		wantOver bool
	}{
		{name: "a small status is left alone", status: base},
		{name: "exactly at the budget is left alone", status: func() *vmbenchv1.BenchmarkSuiteStatus {
			st := base()
			padTo(st, statusBudget)
			return st
		}},
		{name: "one byte over drops the biggest metric's samples only", wantDropped: []string{"big"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				padTo(st, statusBudget+1)
				return st
			}},
		{name: "still over after the biggest drops the next biggest", wantDropped: []string{"big", "mid"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				padTo(st, statusBudget+1, "big")
				return st
			}},
		{name: "fits once the biggest is gone", wantDropped: []string{"big"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				padTo(st, statusBudget, "big")
				return st
			}},
		{name: "drops every sample and stops when the statistics alone are too big", wantOver: true,
			wantDropped: []string{"small", "mid", "tiny", "big", "mid2"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				st.Warnings = []string{strings.Repeat("w", statusBudget)}
				return st
			}},
		{name: "too big without any sample drops nothing", wantOver: true,
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				drop(st, "small", "mid", "tiny", "big", "mid2")
				st.Warnings = []string{strings.Repeat("w", statusBudget)}
				return st
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.status()
			want := st.DeepCopy()
			drop(want, tt.wantDropped...)
			before := statsOf(st)

			dropped := fitStatus(st)
			if dropped != (len(tt.wantDropped) > 0) {
				t.Errorf("fitStatus() = %t, want %t", dropped, len(tt.wantDropped) > 0)
			}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("status mismatch (-want +got):\n%s", diff)
			}
			if size := jsonSize(t, st); (size > statusBudget) != tt.wantOver {
				t.Errorf("status is %d bytes after fitStatus, budget %d", size, statusBudget)
			}
			// Statistics are never touched.
			after := statsOf(st)
			for k, b := range before {
				a := after[k]
				if a.N != b.N || a.Mean != b.Mean || a.StdDev != b.StdDev {
					t.Errorf("%s statistics changed from %+v to %+v", k, b, a)
				}
			}
		})
	}
}

// TestWorstCaseStatusSize fills a suite's status at every API maximum, as the reconciler does, and
// checks that fitStatus brings it within its budget and the object stays well below etcd's limit of
// 1.5 MiB, without losing any statistic: runs are compacted oldest first, then samples are dropped.
func TestWorstCaseStatusSize(t *testing.T) {
	const (
		maxBenchmarks  = 12
		maxPlatforms   = 4
		maxRepetitions = 30
		maxNodes       = 8
		// HPCC's 31 figures and an HPL sweep of the most points the API admits. At the cap of 48
		// the statistics alone take 99.4% of the budget and no sample fits.
		metricsPerRes = 31 + vmbenchv1.MaxHPLPoints
		objectLimit   = 1 << 20
	)
	rng := rand.New(rand.NewPCG(1, 2))
	suite := testSuite()
	suite.Name = strings.Repeat("s", vmbenchv1.MaxSuiteNameLength)
	suite.Spec.Repetitions = maxRepetitions
	suite.Spec.Cluster.Nodes = maxNodes
	suite.Spec.Cluster.CPURequest = quantity("1")
	suite.Spec.Platforms = nil
	for i := 0; i < maxPlatforms; i++ {
		typ := vmbenchv1.PlatformVM
		if i == 0 {
			typ = vmbenchv1.PlatformContainer
		}
		name := fmt.Sprintf("platform%04d", i)
		if len(name) != vmbenchv1.MaxPlatformNameLength {
			t.Fatalf("platform name %q is not %d characters", name, vmbenchv1.MaxPlatformNameLength)
		}
		p := vmbenchv1.Platform{Name: name, Type: typ}
		if typ == vmbenchv1.PlatformVM {
			// Every setting the requests below allow, at its longest value.
			p.VM = &vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingBridge, DiskBus: vmbenchv1.VMDiskBusVirtio,
				DiskCache: vmbenchv1.VMDiskCacheWritethrough, Hugepages: vmbenchv1.VMHugepages1Gi, IOThreads: vmbenchv1.VMIOThreadsShared, DedicatedIOThread: true}
		}
		suite.Spec.Platforms = append(suite.Spec.Platforms, p)
	}
	suite.Spec.Baseline = suite.Spec.Platforms[0].Name
	suite.Spec.Placement = vmbenchv1.Placement{NodeSelector: map[string]vmbenchv1.LabelValue{"vmbench.io/pool": "bench"},
		Tolerations: []corev1.Toleration{{Key: "vmbench.io/dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
	suite.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs-client", Size: quantity("4Gi")}
	suite.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 0.5, MaxRepetitions: maxRepetitions}
	types := []vmbenchv1.BenchmarkType{vmbenchv1.BenchmarkSysbenchCPU, vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkFio,
		vmbenchv1.BenchmarkPing, vmbenchv1.BenchmarkHPCC, vmbenchv1.BenchmarkSysbenchMemory, vmbenchv1.BenchmarkStressNGCPU,
		vmbenchv1.BenchmarkStressNGVM, vmbenchv1.BenchmarkIozone}
	suite.Spec.Benchmarks = nil
	for i := 0; i < maxBenchmarks; i++ {
		name := fmt.Sprintf("benchmark-%02d-%s", i, strings.Repeat("x", 11)) // 24 characters, the API maximum
		b := vmbenchv1.Benchmark{Name: name, Type: types[i%len(types)]}
		if b.Type == vmbenchv1.BenchmarkIozone {
			// Every target: each run records what backed the Shared one.
			b.Iozone = &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageRootFS, vmbenchv1.StorageShared}}
		}
		suite.Spec.Benchmarks = append(suite.Spec.Benchmarks, b)
		suite.Spec.Precision.Metrics = append(suite.Spec.Precision.Metrics, name)
	}
	// kubectl apply keeps the applied spec in an annotation, and the API server stores the defaults.
	applied, err := json.Marshal(suite)
	if err != nil {
		t.Fatal(err)
	}
	suite.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}
	benchmarks := DefaultedBenchmarks(suite)
	suite.Spec.Benchmarks = benchmarks
	if err := validateSpec(suite, benchmarks); err != nil {
		t.Fatalf("the worst-case spec is invalid: %v", err)
	}

	// Network benchmarks report per pair of nodes, the others per node.
	nodes := platform.NodeNames(maxNodes)
	var pairs []string
	for _, n := range nodes[1:] {
		pairs = append(pairs, "master-"+n, n+"-master")
	}
	for i := 1; i+1 < len(nodes); i++ {
		pairs = append(pairs, nodes[i]+"-"+nodes[i+1])
	}
	metricNames := make([]string, metricsPerRes)
	for i := range metricNames {
		metricNames[i] = fmt.Sprintf("%s_%02d", strings.Repeat("m", 61), i) // 64 characters, the API maximum
	}

	// Every execution keeps a table, and loses one too, so that both counts and the warning that
	// names every benchmark on every platform take their room.
	tablesOfEveryExecution := map[string]int32{}
	for _, b := range benchmarks {
		tablesOfEveryExecution[b.Name] = int32(len(pairs))
	}

	st := &suite.Status
	syncRuns(st, plannedRuns(suite))
	if len(st.Runs) != maxPlatforms*maxRepetitions {
		t.Fatalf("planned %d runs, want %d", len(st.Runs), maxPlatforms*maxRepetitions)
	}
	longMessage := strings.Repeat("e", 2000)
	for i := range st.Runs {
		run := &st.Runs[i]
		run.StartTime = &metav1.Time{Time: finishStart}
		// What the run's start recorded while it went on: every phase, and the launcher's overhead.
		phase := 123.456789
		run.StartupSeconds = &vmbenchv1.RunStartup{PodsScheduled: &phase, SandboxesReady: &phase, ContainersStarted: &phase,
			VMIScheduled: &phase, VMIRunning: &phase, RunnerReady: &phase}
		run.LauncherOverhead = &vmbenchv1.ResourceOverhead{CPU: *quantity("1234567m"), Memory: *quantity("123456789Ki")}
		run.Network = string(platform.VMNetworkMasquerade)
		ready := map[string]time.Time{}
		created := map[string]time.Time{}
		cpuSets := map[string]runplan.CPUSet{}
		for _, n := range nodes {
			cpuSets[n] = runplan.CPUSet{Allowed: strings.Repeat("0-1,", 40), Online: 256}
			created[n] = finishStart
			ready[n] = finishStart.Add(time.Duration(rng.Int64N(int64(time.Minute))))
		}
		var msgs []runplan.Message
		for bi, b := range benchmarks {
			where := nodes
			if b.Type == vmbenchv1.BenchmarkIperf3 || b.Type == vmbenchv1.BenchmarkPing {
				where = pairs
			}
			for _, node := range where {
				ms := make([]results.Metric, metricsPerRes)
				for mi, name := range metricNames {
					dir := results.HigherIsBetter
					if (bi+mi)%3 == 0 {
						dir = results.LowerIsBetter
					}
					ms[mi] = results.Metric{Name: name, Value: 1 + rng.Float64()*1e6, Unit: strings.Repeat("u", 16), Direction: dir}
				}
				m := resultMsg(b.Name, node, ms...)
				sampled, _, _ := strings.Cut(node, "-")
				m.Noise = &runplan.Noise{Node: sampled, BusyPercent: 99.9, StealPercent: 10.123456789, OthersPercent: pct(33.333333333), CPUs: 64}
				msgs = append(msgs, m)
			}
		}
		finishRun(st, run, vmbenchv1.PlatformVM, benchmarks, runCompletion{
			Report: runReport{
				Started: &runplan.Message{Kind: runplan.KindStarted, NodesReady: ready, Virtualization: "qemu", CPUSets: cpuSets,
					SharedServer: strings.Repeat("v", 100), SharedMount: strings.Repeat("m", 300)},
				Results: msgs,
				Done:    &runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: 123.456789},
			},
			Outcome: platform.Outcome{Phase: platform.PhaseFailed, Message: longMessage},
			Now:     finishNow, Created: created,
			TablesKept: tablesOfEveryExecution, TablesLost: tablesOfEveryExecution,
		})
	}
	st.StartTime = &metav1.Time{Time: finishStart}
	st.Ratios = computeRatios(st, suite.Spec.Baseline)
	for _, p := range suite.Spec.Platforms[1:] {
		st.VMSettings = append(st.VMSettings, vmbenchv1.VMSettingsStatus{Platform: p.Name, Run: strings.Repeat("r", 63),
			NetworkBinding: strings.Repeat("n", 32), DiskBus: strings.Repeat("b", 16), DiskCache: strings.Repeat("c", 16), DedicatedCPUs: true,
			IsolateEmulatorThread: true, Hugepages: strings.Repeat("h", 8), IOThreads: strings.Repeat("i", 16), DedicatedIOThread: true,
			QOSClass: strings.Repeat("q", 16)})
	}
	vmSettings := slices.Clone(st.VMSettings)

	if len(st.Results) != maxBenchmarks*maxPlatforms {
		t.Fatalf("built %d results, want %d", len(st.Results), maxBenchmarks*maxPlatforms)
	}
	for _, r := range st.Results {
		if len(r.Metrics) != metricsPerRes {
			t.Fatalf("result %s/%s has %d metrics, want %d", r.Benchmark, r.Platform, len(r.Metrics), metricsPerRes)
		}
	}
	if len(st.SharedStorage) != maxPlatforms {
		t.Fatalf("%d platforms recorded what backed their Shared target, want %d", len(st.SharedStorage), maxPlatforms)
	}
	for _, s := range st.SharedStorage {
		if len(s.BackedBy) != maxSharedStorage {
			t.Fatalf("platform %s records %d bytes of what backed its Shared target, want the schema's maximum of %d", s.Platform, len(s.BackedBy), maxSharedStorage)
		}
	}
	if len(st.Ratios) != maxBenchmarks*(maxPlatforms-1) {
		t.Fatalf("built %d platform ratios, want %d", len(st.Ratios), maxBenchmarks*(maxPlatforms-1))
	}
	for _, pr := range st.Ratios {
		if len(pr.Metrics) != metricsPerRes {
			t.Fatalf("ratios %s/%s have %d metrics, want %d", pr.Benchmark, pr.Platform, len(pr.Metrics), metricsPerRes)
		}
	}
	for _, r := range st.Runs {
		if r.StartupSeconds == nil || r.StartupSeconds.RunnerReady == nil || len(r.StartupSeconds.Phases()) != 6 {
			t.Fatalf("run %s recorded startup %+v, want every phase", r.Name, r.StartupSeconds)
		}
		if len(r.Message) != 1024 || len(r.BootSeconds) != maxNodes || len(r.Noise) != maxNodes || len(r.CPUs) != maxNodes {
			t.Fatalf("run %s has a message of %d bytes, %d boot times, %d noise and %d CPU figures, want 1024 and %d of each",
				r.Name, len(r.Message), len(r.BootSeconds), len(r.Noise), len(r.CPUs), maxNodes)
		}
	}

	// The reconciler judges precision before it fits the status.
	precision := applyPrecision(suite)
	if len(st.Runs) != maxPlatforms*maxRepetitions || st.Precision == nil {
		t.Fatalf("after applyPrecision: %d runs and precision %v, want %d runs and a precision status", len(st.Runs), st.Precision, maxPlatforms*maxRepetitions)
	}

	before := statsOf(st)
	runsBefore := slices.Clone(st.Runs)
	sizeBefore, samplesBefore := jsonSize(t, st), 0
	sectionsBefore := fmt.Sprintf("results %d, ratios %d, runs %d", jsonSize(t, st.Results), jsonSize(t, st.Ratios), jsonSize(t, st.Runs))
	for _, s := range before {
		samplesBefore += s.Samples
		if s.N != maxRepetitions*maxNodes && s.N != maxRepetitions*int32(len(pairs)) {
			t.Fatalf("a metric counted %d samples, want %d or %d", s.N, maxRepetitions*maxNodes, maxRepetitions*len(pairs))
		}
	}
	// The rest of status is set before fitting, as in Reconcile, and the warnings again after it.
	st.Headline = headline(suite.Spec, st.Ratios)
	setConditions(st, suiteState{Generation: 1, Now: finishNow})
	setPrecisionReached(suite, precision)
	start := time.Now()
	fitWithWarnings(st, func() []string { return warnings(suite.Spec, st, platform.VMNetworkMasquerade) })
	elapsed := time.Since(start)
	sizeAfter := jsonSize(t, st)

	if sizeAfter > statusBudget {
		t.Errorf("status is %d bytes after fitStatus, more than the budget of %d", sizeAfter, statusBudget)
	}
	if diff := cmp.Diff(vmSettings, st.VMSettings); diff != "" {
		t.Errorf("fitStatus changed the VM settings (-want +got):\n%s", diff)
	}
	after := statsOf(st)
	samplesAfter, kept := 0, 0
	smallestDropped, largestKept := math.MaxInt, 0
	for k, b := range before {
		a := after[k]
		if a.N != b.N || a.Mean != b.Mean || a.StdDev != b.StdDev {
			t.Errorf("%s statistics changed from (n %d, mean %g, stddev %g) to (n %d, mean %g, stddev %g)",
				k, b.N, b.Mean, b.StdDev, a.N, a.Mean, a.StdDev)
		}
		switch a.Samples {
		case 0:
			smallestDropped = min(smallestDropped, b.Samples)
		case b.Samples:
			kept++
			largestKept = max(largestKept, b.Samples)
		default:
			t.Errorf("%s keeps %d of its %d samples, want all or none", k, a.Samples, b.Samples)
		}
		samplesAfter += a.Samples
	}
	// At every API maximum some samples still fit: the statistics alone leave room under the budget.
	if kept == 0 {
		t.Errorf("no metric kept its samples: the status without any sample is too close to the budget of %d", statusBudget)
	}
	// The biggest go first: no metric that kept its samples had more than one that lost them.
	if largestKept > smallestDropped {
		t.Errorf("a metric with %d samples kept them while one with %d lost them", largestKept, smallestDropped)
	}
	// Runs are compacted before any sample is dropped, oldest first: the compacted runs are a prefix,
	// and here, with samples dropped, every run. Each keeps its summary and the rest of its fields.
	compacted := 0
	for i, r := range st.Runs {
		if r.Compacted == nil {
			t.Errorf("run %s was not compacted, though samples were dropped", r.Name)
			continue
		}
		compacted++
		want := runsBefore[i]
		want.Noise, want.CPUs, want.BootSeconds = nil, nil, nil
		want.Message = want.Message[:maxCompactedMessage-3] + "..."
		want.Compacted = &vmbenchv1.RunSummary{Nodes: maxNodes, MaxNoisePercent: ptrTo(maxNoise(runsBefore[i].Noise)),
			MaxBootSeconds: ptrTo(maxBoot(runsBefore[i].BootSeconds)), Unpinned: nodes}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("compacted run %s mismatch (-want +got):\n%s", r.Name, diff)
		}
	}

	if len(st.Warnings) < 2 || !strings.Contains(st.Warnings[0], "keep only their statistics") ||
		!strings.Contains(st.Warnings[1], fmt.Sprintf("%d of %d runs keep only a summary", compacted, len(st.Runs))) {
		t.Errorf("warnings %q do not say that samples were dropped and runs compacted", st.Warnings)
	}
	bare := st.DeepCopy()
	for i := range bare.Results {
		for j := range bare.Results[i].Metrics {
			bare.Results[i].Metrics[j].Samples = nil
		}
	}
	floor := jsonSize(t, bare)
	total := jsonSize(t, suite)
	t.Logf("status without any sample: %d bytes, %.1f%% of the budget", floor, 100*float64(floor)/statusBudget)
	t.Logf("status before fitStatus: %d bytes (%.2f MiB; %s), %d samples; after: %d bytes (%.2f MiB), %d samples in %d of %d metrics, %d of %d runs compacted, in %s",
		sizeBefore, float64(sizeBefore)/(1<<20), sectionsBefore, samplesBefore, sizeAfter, float64(sizeAfter)/(1<<20), samplesAfter, kept, len(before),
		compacted, len(st.Runs), elapsed)
	t.Logf("final status %d bytes (results %d, ratios %d, runs %d, conditions %d, warnings %d, VM settings %d); whole suite %d bytes (%.2f MiB), spec %d, annotation %d",
		jsonSize(t, st), jsonSize(t, st.Results), jsonSize(t, st.Ratios), jsonSize(t, st.Runs), jsonSize(t, st.Conditions), jsonSize(t, st.Warnings), jsonSize(t, st.VMSettings),
		total, float64(total)/(1<<20), jsonSize(t, suite.Spec), len(applied))
	if total >= objectLimit {
		t.Errorf("worst-case suite is %d bytes, want less than %d (etcd refuses objects above 1.5 MiB)", total, objectLimit)
	}
}

func maxNoise(ns []vmbenchv1.NodeNoise) float64 {
	m := 0.0
	for _, n := range ns {
		m = max(m, n.MaxPercent)
	}
	return m
}

func maxBoot(bs []vmbenchv1.NodeTiming) float64 {
	m := 0.0
	for _, b := range bs {
		m = max(m, b.Seconds)
	}
	return m
}

// Once a metric's samples were dropped or capped, later values only go into its statistics: the
// samples kept are always the first ones measured, never a subset biased towards later repetitions.
func TestAddSampleNeverRefillsTrimmedDetail(t *testing.T) {
	res := &vmbenchv1.BenchmarkResult{Benchmark: "cpu", Platform: "vm"}
	for i := range 4 {
		addSample(res, metric("e", float64(i)), sample(int32(i+1), "master", float64(i)))
	}
	res.Metrics[0].Samples = nil // what fitStatus does
	addSample(res, metric("e", 10), sample(5, "master", 10))
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
	report := runReport{
		Results: []runplan.Message{{Kind: runplan.KindResult, Error: "nodes did not answer within 15m0s: node02"}},
		Done:    &runplan.Message{Kind: runplan.KindDone},
	}
	finishRun(st, run, vmbenchv1.PlatformVM, finishBenchmarks(), runCompletion{Report: report, Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}})
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
	got := latestResults([]runplan.Message{bs("bs1K", 1), bs("bs1M", 2), bs("bs1K", 3)})
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
	finishRun(st, run, vmbenchv1.PlatformContainer, []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}, runCompletion{
		Report: runReport{Done: &runplan.Message{Kind: runplan.KindDone},
			Results: []runplan.Message{{Kind: runplan.KindResult, Benchmark: "cpu", Node: "master", Metrics: ms}}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	if got := len(st.Results[0].Metrics); got != maxMetricsPerEntry {
		t.Errorf("kept %d metrics, want %d", got, maxMetricsPerEntry)
	}
	long := st.Results[0].Metrics[10].Name
	if len(long) != maxMetricName || !strings.HasPrefix(long, "a_stressor_a_stressor_") {
		t.Errorf("the long name became %q, want its start and a hash in %d characters", long, maxMetricName)
	}
	for _, m := range st.Results[0].Metrics {
		if len(m.Name) > maxMetricName {
			t.Errorf("kept metric %q, longer than the schema's %d", m.Name, maxMetricName)
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
