package metrics

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
)

// worstCaseSuite fills every list of the status to its CRD limit: 12 benchmarks on 4 platforms
// (48 results of 48 metrics), 36 ratio lists of 48 ratios, 120 runs with launcher overheads, and
// the longest names the CRD allows. Its benchmarks' types measure all four resources, so that the
// summary has every group.
func worstCaseSuite(ns, name string, phase vmbenchv1.SuitePhase) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       vmbenchv1.BenchmarkSuiteSpec{Baseline: "platform0000"},
		Status:     vmbenchv1.BenchmarkSuiteStatus{Phase: phase},
	}
	types := []vmbenchv1.BenchmarkType{vmbenchv1.BenchmarkSysbenchCPU, vmbenchv1.BenchmarkSysbenchMemory, vmbenchv1.BenchmarkFio, vmbenchv1.BenchmarkIperf3}
	for b := range 12 {
		bench := fmt.Sprintf("benchmark-%014d", b)
		s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: bench, Type: types[b%len(types)]})
		for p := range 4 {
			platform := fmt.Sprintf("platform%04d", p)
			r := vmbenchv1.BenchmarkResult{Benchmark: bench, Platform: platform, Emulated: p == 3}
			pr := vmbenchv1.PlatformRatios{Benchmark: bench, Platform: platform, Emulated: p == 3}
			for m := range 48 {
				metric := fmt.Sprintf("metric_%02d_%s", m, strings.Repeat("x", 54))
				dir := vmbenchv1.HigherIsBetter
				if m%2 == 1 {
					dir = vmbenchv1.LowerIsBetter
				}
				mean := 100 + float64(p*m)
				var samples []vmbenchv1.Sample
				for rep := range 3 {
					samples = append(samples, vmbenchv1.Sample{Repetition: int32(rep + 1), Node: "master", Value: mean + float64(rep)})
				}
				r.Metrics = append(r.Metrics, vmbenchv1.MetricSummary{Name: metric, Unit: "unit-" + strings.Repeat("u", 11),
					Direction: dir, Samples: samples, N: 3, Mean: mean + 1, StdDev: 1})
				if p > 0 {
					pr.Metrics = append(pr.Metrics, vmbenchv1.RatioValue{Metric: metric, Ratio: (mean + 1) / 101, OverheadPercent: 1})
				}
			}
			s.Status.Results = append(s.Status.Results, r)
			if p > 0 {
				s.Status.Ratios = append(s.Status.Ratios, pr)
			}
		}
	}
	for i := range 120 {
		s.Status.Runs = append(s.Status.Runs, vmbenchv1.RunStatus{Name: fmt.Sprintf("run-%d", i), Platform: fmt.Sprintf("platform%04d", i%4),
			LauncherOverhead: &vmbenchv1.ResourceOverhead{CPU: resource.MustParse("200m"), Memory: resource.MustParse("250Mi")}})
	}
	s.Status.Headline = &vmbenchv1.Headline{Benchmark: s.Status.Results[0].Benchmark, Metric: s.Status.Results[0].Metrics[0].Name}
	return s
}

// withOptions sets the options and the clock for one test.
func withOptions(t *testing.T, o Options, now func() time.Time) {
	t.Helper()
	suites.mu.Lock()
	oldOpts, oldNow := suites.opts, suites.now
	suites.opts, suites.now = o, now
	suites.mu.Unlock()
	t.Cleanup(func() {
		suites.mu.Lock()
		suites.opts, suites.now = oldOpts, oldNow
		suites.mu.Unlock()
	})
}

// suiteSeriesCount counts every series of one suite in the registry, by family.
func suiteSeriesCount(t *testing.T, ns, name string) (int, map[string]int) {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	total, by := 0, map[string]int{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if l := labelMap(m); l["namespace"] == ns && l["suite"] == name {
				total++
				by[f.GetName()]++
			}
		}
	}
	return total, by
}

var detailFamilies = []string{"vmbench_result_value", "vmbench_result_stddev", "vmbench_result_samples",
	"vmbench_result_ratio", "vmbench_result_overhead_percent"}

func TestWorstCaseSuiteStaysUnderTheCap(t *testing.T) {
	const ns, name = "worst", "suite-of-the-longest-name-allowed"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	// Without a cap (the exporter as it was: every metric, for the suite's life).
	withOptions(t, Options{Detail: true, MaxSeriesPerSuite: 1 << 30}, clock)
	start := time.Now()
	RecordSuite(worstCaseSuite(ns, name, vmbenchv1.SuiteRunning))
	t.Logf("recording the worst-case suite with its report summaries took %s", time.Since(start).Round(time.Millisecond))
	uncapped, by := suiteSeriesCount(t, ns, name)
	detail := 0
	for _, f := range detailFamilies {
		detail += by[f]
	}
	if want := 48*48*3 + 36*48*2; detail != want {
		t.Fatalf("uncapped: %d detail series, want %d (the worst case's every metric): %v", detail, want, by)
	}
	summary := uncapped - detail
	t.Logf("worst-case suite, uncapped: %d series (%d detail, %d summary)", uncapped, detail, summary)
	if summary > MinMaxSeriesPerSuite {
		t.Errorf("the summary of the worst case has %d series, above the lowest cap allowed %d: %v", summary, MinMaxSeriesPerSuite, by)
	}

	// The defaults, while the suite runs: capped, the rest counted. (A new suite of the same size,
	// so that the report's summaries are not built again.)
	withOptions(t, DefaultOptions(), clock)
	before := counterValue(t, "vmbench_metric_series_dropped_total", nil)
	start = time.Now()
	RecordSuite(worstCaseSuite(ns, name, vmbenchv1.SuiteRunning))
	t.Logf("recording it again with the same results took %s", time.Since(start).Round(time.Millisecond))
	running, by := suiteSeriesCount(t, ns, name)
	t.Logf("worst-case suite, defaults, running: %d series: %v", running, by)
	if running > DefaultMaxSeriesPerSuite {
		t.Errorf("a running worst-case suite exports %d series, above the cap %d", running, DefaultMaxSeriesPerSuite)
	}
	dropped := counterValue(t, "vmbench_metric_series_dropped_total", nil) - before
	if int(dropped) != uncapped-running {
		t.Errorf("vmbench_metric_series_dropped_total grew by %g, want the %d series not exported", dropped, uncapped-running)
	}
	if got := series(t, "vmbench_suite_series_dropped", suiteSelector(ns, name)); len(got) != 1 || got[0].GetGauge().GetValue() != dropped {
		t.Errorf("vmbench_suite_series_dropped = %v, want one series at %g", got, dropped)
	}
	// Every summary series is kept; the cap cuts the detail, whole metrics at a time.
	if by["vmbench_result_value"] != by["vmbench_result_stddev"] || by["vmbench_result_value"] != by["vmbench_result_samples"] {
		t.Errorf("a metric's detail is cut apart: %v", by)
	}
	if running-summary != by["vmbench_result_value"]+by["vmbench_result_stddev"]+by["vmbench_result_samples"]+
		by["vmbench_result_ratio"]+by["vmbench_result_overhead_percent"] {
		t.Errorf("summary series were dropped: %v", by)
	}
	// The same status again is not counted again.
	RecordSuite(worstCaseSuite(ns, name, vmbenchv1.SuiteRunning))
	if again := counterValue(t, "vmbench_metric_series_dropped_total", nil) - before; again != dropped {
		t.Errorf("recording the same status again counted %g more dropped series", again-dropped)
	}

	// Once it ended and the retention passed, the summary alone.
	ended := worstCaseSuite(ns, name, vmbenchv1.SuiteComplete)
	ended.Status.CompletionTime = &metav1.Time{Time: now}
	RecordSuite(ended)
	now = now.Add(DefaultDetailRetention)
	after, by := suiteSeriesCount(t, ns, name)
	t.Logf("worst-case suite, defaults, ended past the retention: %d series: %v", after, by)
	if after != summary {
		t.Errorf("an ended worst-case suite exports %d series, want its %d summary series: %v", after, summary, by)
	}
}

func TestDetailWhileRunningAndForTheRetention(t *testing.T) {
	const ns, name = "retention", "demo"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	withOptions(t, Options{DetailRetention: time.Hour, MaxSeriesPerSuite: DefaultMaxSeriesPerSuite}, clock)

	detail := func() int {
		n := 0
		for _, f := range detailFamilies {
			n += len(series(t, f, suiteSelector(ns, name)))
		}
		return n
	}
	RecordSuite(measuredSuite(ns, name, vmbenchv1.SuiteRunning))
	now = now.Add(1000 * time.Hour)
	if got := detail(); got != 40 {
		t.Errorf("running for long: %d detail series, want 40", got)
	}

	ended := measuredSuite(ns, name, vmbenchv1.SuiteComplete)
	ended.Status.CompletionTime = &metav1.Time{Time: now}
	RecordSuite(ended)
	now = now.Add(time.Hour - time.Second)
	if got := detail(); got != 40 {
		t.Errorf("within the retention: %d detail series, want 40", got)
	}
	now = now.Add(time.Second)
	if got := detail(); got != 0 {
		t.Errorf("past the retention: %d detail series, want 0", got)
	}
	if got := phases(t, ns, name); got["Complete"] != 1 {
		t.Errorf("past the retention the phase is gone: %v", got)
	}
	if got := series(t, "vmbench_summary_ratio", suiteSelector(ns, name)); len(got) == 0 {
		t.Error("past the retention the summary is gone")
	}

	// The retention counts from when the exporter saw the suite end, whatever the completion time
	// says (the controller's clock is another); later records do not move it.
	ForgetSuite(ns, name)
	RecordSuite(measuredSuite(ns, name, vmbenchv1.SuiteRunning))
	failed := measuredSuite(ns, name, vmbenchv1.SuiteFailed)
	failed.Status.CompletionTime = &metav1.Time{Time: now.Add(-100 * time.Hour)}
	RecordSuite(failed)
	now = now.Add(30 * time.Minute)
	RecordSuite(failed)
	if got := detail(); got != 40 {
		t.Errorf("30 minutes after it was seen failed: %d detail series, want 40", got)
	}
	now = now.Add(30 * time.Minute)
	if got := detail(); got != 0 {
		t.Errorf("60 minutes after it was seen failed: %d detail series, want 0", got)
	}

	// A suite first seen ended (the manager restarted) ended at its completion time: no detail
	// comes back for a suite that ended long ago.
	ForgetSuite(ns, name)
	long := measuredSuite(ns, name, vmbenchv1.SuiteComplete)
	long.Status.CompletionTime = &metav1.Time{Time: now.Add(-2 * time.Hour)}
	RecordSuite(long)
	if got := detail(); got != 0 {
		t.Errorf("first seen 2 hours after it ended: %d detail series, want 0", got)
	}

	// --metrics-detail keeps them for the suite's life.
	withOptions(t, Options{Detail: true, DetailRetention: time.Hour, MaxSeriesPerSuite: DefaultMaxSeriesPerSuite}, clock)
	if got := detail(); got != 40 {
		t.Errorf("with Detail: %d detail series, want 40", got)
	}
}

func TestSummarySeries(t *testing.T) {
	const ns, name = "summary", "demo"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	s := measuredSuite(ns, name, vmbenchv1.SuiteComplete)
	s.Status.Headline = &vmbenchv1.Headline{Benchmark: "ping", Metric: "rtt_avg_ms", Summary: "vm/container 2.00"}
	RecordSuite(s)

	sel := suiteSelector(ns, name)
	sel["metric"], sel["platform"], sel["baseline"] = "rtt_avg_ms", "vm", "container"
	if got := series(t, "vmbench_suite_headline_ratio", sel); len(got) != 1 || got[0].GetGauge().GetValue() != 2 {
		t.Errorf("headline series = %v, want one at 2", got)
	}
	groups := map[string]float64{}
	for _, m := range series(t, "vmbench_summary_ratio", suiteSelector(ns, name)) {
		l := labelMap(m)
		if l["platform"] != "vm" || l["baseline"] != "container" {
			t.Errorf("summary of %v", l)
		}
		groups[l["kind"]+"/"+l["group"]] = m.GetGauge().GetValue()
	}
	// Higher is better: cpu's events_per_second 1000 vs 1000 and latency 1 vs 1 give 1; every mean
	// is equal on both platforms in measuredSuite.
	for _, g := range []string{"benchmark/cpu", "benchmark/ping", "overall/overall"} {
		if v, ok := groups[g]; !ok || v != 1 {
			t.Errorf("vmbench_summary_ratio %s = %v (present %v), want 1: %v", g, v, ok, groups)
		}
	}
	verdicts := 0.0
	for _, m := range series(t, "vmbench_summary_verdicts", map[string]string{"namespace": ns, "suite": name, "kind": "overall"}) {
		verdicts += m.GetGauge().GetValue()
	}
	if verdicts != 5 {
		t.Errorf("overall verdicts count %g metrics, want 5", verdicts)
	}
}

func TestLabelValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"events_per_second", "events_per_second"},
		{"read KB/s µs", "read KB/s µs"},
		{"a\nb\tc\x1b[31m", "a_b_c_[31m"},
		{"bad\xffutf8", "bad_utf8"},
		{"zero\u200bwidth", "zero_width"},
		{strings.Repeat("x", 100), strings.Repeat("x", MaxLabelValueBytes)},
		{strings.Repeat("x", 63) + "é", strings.Repeat("x", 63)},
		{"", ""},
	} {
		if got := labelValue(c.in); got != c.want {
			t.Errorf("labelValue(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestToolOutputCannotBreakTheScrape(t *testing.T) {
	const ns, name = "labels", "demo"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	s := measuredSuite(ns, name, vmbenchv1.SuiteRunning)
	cpu := s.Status.Results[0].Metrics
	cpu[0].Name = "bad\xffname\n" + strings.Repeat("y", 80)
	cpu[0].Unit = "\x00ops"
	// Two names that are the same once sanitised: one series, the other counted as dropped.
	cpu[1].Name = "bad_name_" + strings.Repeat("y", 80)
	cpu[1].Unit = "_ops"
	cpu[1].Direction = cpu[0].Direction
	s.Status.Results[0].Metrics = cpu
	s.Status.Results[1].Metrics = nil
	s.Status.Ratios = nil
	RecordSuite(s) // Gather fails on invalid UTF-8 or a duplicate series.

	var names []string
	for _, m := range series(t, "vmbench_result_value", suiteSelector(ns, name)) {
		l := labelMap(m)
		for k, v := range l {
			if len(v) > MaxLabelValueBytes {
				t.Errorf("label %s has %d bytes: %q", k, len(v), v)
			}
		}
		names = append(names, l["metric"]+" "+l["unit"])
	}
	slices.Sort(names)
	want := []string{"bad_name_" + strings.Repeat("y", MaxLabelValueBytes-9) + " _ops",
		"rtt_avg_ms ops/s", "rtt_avg_ms ops/s", "rtt_max_ms ops/s", "rtt_max_ms ops/s", "rtt_min_ms ops/s", "rtt_min_ms ops/s"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("metric labels (-want +got):\n%s", diff)
	}
	if got := series(t, "vmbench_suite_series_dropped", suiteSelector(ns, name)); len(got) != 1 || got[0].GetGauge().GetValue() != 3 {
		t.Errorf("vmbench_suite_series_dropped = %v, want 3 (the colliding metric's value, stddev and samples)", got)
	}
}

// Protects the migration benchmark's figures on /metrics: they leave through the generic
// per-metric series like every other benchmark's (vmbench_result_value, _stddev, _samples), one
// series per figure and platform, with the direction that the schedule history and the board read
// (completed higher-is-better, the others lower-is-better), and no label beyond the detail labels.
func TestMigrationFiguresAreExported(t *testing.T) {
	const ns, name = "migration", "mig"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	withOptions(t, DefaultOptions(), time.Now)
	s := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmbenchv1.BenchmarkSuiteSpec{Baseline: "vm", Platforms: []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}},
			Benchmarks: []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}}},
		Status: vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteRunning}}
	figures := []struct {
		metric, unit string
		dir          vmbenchv1.Direction
		values       []float64
		mean         float64
	}{
		{disruption.MetricCompleted, "bool", vmbenchv1.HigherIsBetter, []float64{1, 1, 0}, 2.0 / 3},
		{disruption.MetricTotal, "s", vmbenchv1.LowerIsBetter, []float64{3, 4}, 3.5},
		{disruption.MetricPause, "ms", vmbenchv1.LowerIsBetter, []float64{300, 320}, 310},
		{disruption.MetricBackgroundGap, "ms", vmbenchv1.LowerIsBetter, []float64{20, 40}, 30},
		{disruption.MetricClockStep, "ms", vmbenchv1.LowerIsBetter, []float64{0, 10}, 5},
		{disruption.MetricDip, "%", vmbenchv1.LowerIsBetter, []float64{40, 60}, 50},
		{disruption.MetricRecovery, "s", vmbenchv1.LowerIsBetter, []float64{0.8, 1.2}, 1},
	}
	res := vmbenchv1.BenchmarkResult{Benchmark: "mig", Platform: "vm"}
	for _, f := range figures {
		m := vmbenchv1.MetricSummary{Name: f.metric, Unit: f.unit, Direction: f.dir, N: int32(len(f.values)), Mean: f.mean}
		for _, v := range f.values {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Node: "master", Value: v, Migrated: true})
		}
		res.Metrics = append(res.Metrics, m)
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{res}
	RecordSuite(s)

	for _, f := range figures {
		sel := suiteSelector(ns, name)
		for k, v := range map[string]string{"benchmark": "mig", "platform": "vm", "metric": f.metric, "unit": f.unit,
			"direction": string(f.dir), "emulated": "false"} {
			sel[k] = v
		}
		for family, want := range map[string]float64{"vmbench_result_value": f.mean, "vmbench_result_samples": float64(len(f.values))} {
			got := series(t, family, sel)
			if len(got) != 1 {
				t.Errorf("%s%v: %d series, want 1", family, sel, len(got))
				continue
			}
			if v := got[0].GetGauge().GetValue(); v != want {
				t.Errorf("%s{metric=%q} = %g, want %g", family, f.metric, v, want)
			}
			if l := labelMap(got[0]); len(l) != len(detailLabels) {
				t.Errorf("%s{metric=%q} has labels %v, want only %v", family, f.metric, l, detailLabels)
			}
		}
	}
	if n := len(series(t, "vmbench_result_value", suiteSelector(ns, name))); n != len(figures) {
		t.Errorf("%d value series of the migration suite, want one per figure (%d)", n, len(figures))
	}
}

// Protects a dirty-rate sweep's figures on /metrics: each figure at each rate (pause_ms_at_64Mi,
// ..., and the writer's achieved dirtied_mib_per_s_at_64Mi) is its own series through the generic
// result families, with its mean and sample count: 9 figures at 3 rates, 27 value series, none
// dropped.
func TestDirtyRateSweepFiguresAreExported(t *testing.T) {
	const ns, name = "migration", "sweep"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	withOptions(t, DefaultOptions(), time.Now)
	s := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vmbenchv1.BenchmarkSuiteSpec{Baseline: "vm", Platforms: []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}},
			Benchmarks: []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}}},
		Status: vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteRunning}}
	res := vmbenchv1.BenchmarkResult{Benchmark: "mig", Platform: "vm"}
	rates := []string{"0", "64Mi", "256Mi"}
	for r, rate := range rates {
		for f, figure := range disruption.Figures {
			v := float64(100*r + f)
			res.Metrics = append(res.Metrics, vmbenchv1.MetricSummary{Name: disruption.RateMetric(figure, rate), Unit: "ms",
				Direction: vmbenchv1.LowerIsBetter, N: 2, Mean: v, Samples: []vmbenchv1.Sample{{Node: "master", Value: v}, {Node: "master", Value: v}}})
		}
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{res}
	RecordSuite(s)
	for r, rate := range rates {
		for f, figure := range disruption.Figures {
			sel := suiteSelector(ns, name)
			sel["metric"] = disruption.RateMetric(figure, rate)
			got := series(t, "vmbench_result_value", sel)
			if len(got) != 1 || got[0].GetGauge().GetValue() != float64(100*r+f) {
				t.Errorf("vmbench_result_value{metric=%q} = %v, want one series of %d", sel["metric"], got, 100*r+f)
			}
		}
	}
	if n := len(series(t, "vmbench_result_value", suiteSelector(ns, name))); n != 3*len(disruption.Figures) {
		t.Errorf("%d value series of the sweep, want %d (every figure at every rate)", n, 3*len(disruption.Figures))
	}
	if got := series(t, "vmbench_suite_series_dropped", suiteSelector(ns, name)); len(got) == 1 && got[0].GetGauge().GetValue() != 0 {
		t.Errorf("vmbench_suite_series_dropped = %v, want 0", got[0].GetGauge().GetValue())
	}
}
