package suite

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Two huge but finite samples, 1e160 and 1, once gave a standard deviation of +Inf, which JSON
// cannot hold: every later status write of the suite failed. A value beyond maxValue is refused
// where it enters, with its metric named, and the status stays writable.
func TestHugeSamplesAreRefusedAndTheStatusStaysWritable(t *testing.T) {
	if _, _, sd := summary.Combine(1, 1e160, 0, 1); !math.IsInf(sd, 1) {
		t.Fatalf("the premise: combine(1e160, 1) gives a standard deviation of %g, not +Inf", sd)
	}
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	suite := testSuite(vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}, vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing})
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1, StartTime: &metav1.Time{Time: finishStart}}
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, finishBenchmarks(), summary.RunCompletion{
		Report: summary.RunReport{Results: []runplan.Message{
			resultMsg("cpu", "master", metric("events_per_second", 1e160)),
			resultMsg("cpu", "node01", metric("events_per_second", 1)),
			resultMsg("ping", "master-node01", latency("rtt_avg_ms", 0.5)),
		}, Done: &runplan.Message{Kind: runplan.KindDone}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	if !strings.Contains(run.Message, "benchmarks failed: cpu (master: events_per_second is 1e+160 ops/s, beyond the 1e+15 that vmbench takes of any value") {
		t.Errorf("run %s: %q does not name the metric", run.Phase, run.Message)
	}
	cpu := summary.ResultFor(st, "cpu", "container")
	if m := summary.FindMetric(cpu.Metrics, "events_per_second"); m == nil || m.N != 1 || m.Mean != 1 || m.StdDev != 0 {
		t.Errorf("statistics %+v, want the one good sample", m)
	}
	if cpu.Failures != 1 || !strings.Contains(cpu.LastError, "events_per_second is 1e+160") {
		t.Errorf("failures %d, last error %q", cpu.Failures, cpu.LastError)
	}
	st.Ratios = summary.ComputeRatios(st, suite.Spec.Baseline)
	summary.FitWithWarnings(st, func() []string { return warnings(suite.Spec, st, "") })
	if _, err := json.Marshal(st); err != nil {
		t.Fatalf("the status cannot be written: %v", err)
	}
}

func TestSampleErrorBoundsEveryValue(t *testing.T) {
	tests := []struct {
		name string
		msg  runplan.Message
		want string
	}{
		{name: "at the bound", msg: runplan.Message{Metrics: []results.Metric{metric("bytes_per_second", 1e15), latency("offset_ms", -1e15)}}},
		{name: "past the bound", msg: runplan.Message{Metrics: []results.Metric{metric("bytes_per_second", 1.5e15)}},
			want: "bytes_per_second is 1.5e+15 ops/s, beyond the 1e+15 that vmbench takes of any value"},
		{name: "past the bound, negative", msg: runplan.Message{Metrics: []results.Metric{latency("offset_ms", -1e160)}},
			want: "offset_ms is -1e+160 ms, beyond the 1e+15"},
		{name: "noise past the bound", msg: runplan.Message{Metrics: []results.Metric{metric("x", 1)},
			Noise: &runplan.Noise{Node: "master", StealPercent: 1, OthersPercent: ptr.To(1e300)}},
			want: "the noise sampled on master has othersPercent 1e+300, beyond the 1e+15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary.SampleError(tt.msg)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("sampleError() = %q, want %q", got, tt.want)
			}
		})
	}
	// Noise beyond the bound is not summed into the run's noise, where two of them overflow.
	huge := runplan.Message{Noise: &runplan.Noise{Node: "master", StealPercent: 1e308}}
	if got := summary.NodeNoise([]runplan.Message{huge, huge}); len(got) != 0 {
		t.Errorf("nodeNoise() = %+v, want nothing", got)
	}
}

// A status edited by hand to hold huge statistics, and means of very different magnitudes, must not
// give an infinite statistic or ratio either.
func TestStatisticsAndRatiosStayFinite(t *testing.T) {
	res := &vmbenchv1.BenchmarkResult{Metrics: []vmbenchv1.MetricSummary{{Name: "x", N: 2, Mean: 1e300, StdDev: 1e300}}}
	if summary.AddSample(res, metric("x", -1e15), sample(1, "master", -1e15)) {
		t.Errorf("a sample that makes the statistics infinite was added: %+v", res.Metrics[0])
	}
	if m := res.Metrics[0]; m.N != 2 || m.Mean != 1e300 {
		t.Errorf("statistics changed: %+v", m)
	}
	st := &vmbenchv1.BenchmarkSuiteStatus{Results: []vmbenchv1.BenchmarkResult{
		{Benchmark: "cpu", Platform: "container", Metrics: []vmbenchv1.MetricSummary{{Name: "x", N: 1, Mean: 1e-300}, {Name: "y", N: 1, Mean: 2}}},
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{Name: "x", N: 1, Mean: 1e15}, {Name: "y", N: 1, Mean: 1}}},
	}}
	ratios := summary.ComputeRatios(st, "container")
	if len(ratios) != 1 || len(ratios[0].Metrics) != 1 || ratios[0].Metrics[0].Metric != "y" {
		t.Fatalf("ratios %+v, want y alone", ratios)
	}
	if _, err := json.Marshal(ratios); err != nil {
		t.Fatal(err)
	}
	if got := summary.Round(1e305, 4); got != 1e305 {
		t.Errorf("round(1e305, 4) = %g", got)
	}
}

// A status that cannot be marshalled is named in a Warning event, as a bug to report.
func TestUnwritableStatusIsNamedInAnEvent(t *testing.T) {
	recorder := events.NewFakeRecorder(1)
	r := &SuiteReconciler{Recorder: recorder}
	_, err := json.Marshal(vmbenchv1.MetricSummary{Mean: math.Inf(1)})
	r.statusNotWritten(testSuite(), fmt.Errorf("writing status: %w", err))
	got := <-recorder.Events
	want := "Warning StatusNotWritten the suite's status could not be written, so it shows an earlier state: writing status: " +
		"json: unsupported value: +Inf; a value in it cannot be stored (not a finite number): this is a vmbench bug, report it with this message"
	if got != want {
		t.Errorf("event %q\nwant  %q", got, want)
	}
}
