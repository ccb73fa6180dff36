package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// registry holds every collector, registered once for the whole test binary as in the manager.
var registry = func() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	Register(reg)
	return reg
}()

// series returns the series of a metric family whose labels include every given label.
func series(t *testing.T, name string, match map[string]string) []*dto.Metric {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var out []*dto.Metric
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			got := labelMap(m)
			for k, v := range match {
				if got[k] != v {
					continue next
				}
			}
			out = append(out, m)
		}
	}
	return out
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func suiteSelector(ns, name string) map[string]string {
	return map[string]string{"namespace": ns, "suite": name}
}

var perSuiteFamilies = []string{"vmbench_result_value", "vmbench_result_stddev", "vmbench_result_samples",
	"vmbench_result_ratio", "vmbench_result_overhead_percent", "vmbench_suite_phase"}

// counts is the number of series of every per-suite family for one suite.
func counts(t *testing.T, ns, name string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range perSuiteFamilies {
		out[f] = len(series(t, f, suiteSelector(ns, name)))
	}
	return out
}

func summary(name string, dir vmbenchv1.Direction, n int32, mean, stddev float64) vmbenchv1.MetricSummary {
	return vmbenchv1.MetricSummary{Name: name, Unit: "ops/s", Direction: dir, N: n, Mean: mean, StdDev: stddev}
}

// measuredSuite has 2 benchmarks on 2 platforms: cpu with 2 metrics, ping with 3, so 10 metric
// series, and 5 ratios.
func measuredSuite(ns, name string, phase vmbenchv1.SuitePhase) *vmbenchv1.BenchmarkSuite {
	cpu := []vmbenchv1.MetricSummary{summary("events_per_second", vmbenchv1.HigherIsBetter, 3, 1000, 10),
		summary("latency_avg_ms", vmbenchv1.LowerIsBetter, 3, 1, 0.1)}
	ping := []vmbenchv1.MetricSummary{summary("rtt_min_ms", vmbenchv1.LowerIsBetter, 6, 0.1, 0),
		summary("rtt_avg_ms", vmbenchv1.LowerIsBetter, 6, 0.2, 0), summary("rtt_max_ms", vmbenchv1.LowerIsBetter, 6, 0.3, 0)}
	return &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       vmbenchv1.BenchmarkSuiteSpec{Baseline: "container"},
		Status: vmbenchv1.BenchmarkSuiteStatus{
			Phase: phase,
			Results: []vmbenchv1.BenchmarkResult{
				{Benchmark: "cpu", Platform: "container", Metrics: cpu},
				{Benchmark: "cpu", Platform: "vm", Emulated: true, Metrics: cpu},
				{Benchmark: "ping", Platform: "container", Metrics: ping},
				{Benchmark: "ping", Platform: "vm", Metrics: ping},
			},
			Ratios: []vmbenchv1.PlatformRatios{
				{Benchmark: "cpu", Platform: "vm", Emulated: true, Metrics: []vmbenchv1.RatioValue{
					{Metric: "events_per_second", Ratio: 0.9, OverheadPercent: 10},
					{Metric: "latency_avg_ms", Ratio: 1.2, OverheadPercent: 20},
				}},
				{Benchmark: "ping", Platform: "vm", Metrics: []vmbenchv1.RatioValue{
					{Metric: "rtt_min_ms", Ratio: 1.5, OverheadPercent: 50},
					{Metric: "rtt_avg_ms", Ratio: 2, OverheadPercent: 100},
					{Metric: "rtt_max_ms", Ratio: 1, OverheadPercent: 0},
				}},
			},
		},
	}
}

func phases(t *testing.T, ns, name string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, m := range series(t, "vmbench_suite_phase", suiteSelector(ns, name)) {
		out[labelMap(m)["phase"]] = m.GetGauge().GetValue()
	}
	return out
}

func TestRecordSuite(t *testing.T) {
	const ns, name = "record", "demo"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	RecordSuite(measuredSuite(ns, name, vmbenchv1.SuiteRunning))

	want := map[string]int{"vmbench_result_value": 10, "vmbench_result_stddev": 10, "vmbench_result_samples": 10,
		"vmbench_result_ratio": 5, "vmbench_result_overhead_percent": 5, "vmbench_suite_phase": 4}
	if diff := cmp.Diff(want, counts(t, ns, name)); diff != "" {
		t.Errorf("series counts mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"Pending": 0, "Running": 1, "Complete": 0, "Failed": 0}, phases(t, ns, name)); diff != "" {
		t.Errorf("phase series mismatch (-want +got):\n%s", diff)
	}

	values := []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"vmbench_result_value", map[string]string{"benchmark": "cpu", "platform": "vm", "metric": "events_per_second",
			"unit": "ops/s", "direction": "HigherIsBetter", "emulated": "true"}, 1000},
		{"vmbench_result_stddev", map[string]string{"benchmark": "cpu", "platform": "container", "metric": "events_per_second",
			"emulated": "false"}, 10},
		{"vmbench_result_samples", map[string]string{"benchmark": "ping", "platform": "vm", "metric": "rtt_avg_ms",
			"direction": "LowerIsBetter"}, 6},
		{"vmbench_result_ratio", map[string]string{"benchmark": "ping", "metric": "rtt_avg_ms", "platform": "vm",
			"baseline": "container", "emulated": "false"}, 2},
		{"vmbench_result_overhead_percent", map[string]string{"benchmark": "cpu", "metric": "latency_avg_ms", "platform": "vm",
			"baseline": "container", "emulated": "true"}, 20},
	}
	for _, v := range values {
		sel := suiteSelector(ns, name)
		for k, val := range v.labels {
			sel[k] = val
		}
		got := series(t, v.family, sel)
		if len(got) != 1 {
			t.Errorf("%s%v: %d series, want 1", v.family, v.labels, len(got))
			continue
		}
		if g := got[0].GetGauge().GetValue(); g != v.want {
			t.Errorf("%s%v = %g, want %g", v.family, v.labels, g, v.want)
		}
	}
}

func TestRecordSuiteDropsStaleSeries(t *testing.T) {
	const ns, name = "stale", "demo"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	RecordSuite(measuredSuite(ns, name, vmbenchv1.SuiteRunning))

	fewer := measuredSuite(ns, name, vmbenchv1.SuiteComplete)
	fewer.Status.Results = fewer.Status.Results[:1] // cpu on container: 2 metrics
	fewer.Status.Ratios = fewer.Status.Ratios[1:2]  // ping only, with one ratio, changed
	fewer.Status.Ratios[0].Metrics = []vmbenchv1.RatioValue{{Metric: "rtt_max_ms", Ratio: 1.25, OverheadPercent: 25}}
	fewer.Status.Results[0].Metrics[0].Mean = 1234.5 // a changed value replaces the old one
	RecordSuite(fewer)

	want := map[string]int{"vmbench_result_value": 2, "vmbench_result_stddev": 2, "vmbench_result_samples": 2,
		"vmbench_result_ratio": 1, "vmbench_result_overhead_percent": 1, "vmbench_suite_phase": 4}
	if diff := cmp.Diff(want, counts(t, ns, name)); diff != "" {
		t.Errorf("series counts after a smaller status mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"Pending": 0, "Running": 0, "Complete": 1, "Failed": 0}, phases(t, ns, name)); diff != "" {
		t.Errorf("phase series mismatch (-want +got):\n%s", diff)
	}
	sel := suiteSelector(ns, name)
	sel["metric"] = "events_per_second"
	if got := series(t, "vmbench_result_value", sel); len(got) != 1 || got[0].GetGauge().GetValue() != 1234.5 {
		t.Errorf("events_per_second series = %v, want one at 1234.5", got)
	}
	sel = suiteSelector(ns, name)
	sel["metric"], sel["benchmark"], sel["platform"] = "rtt_max_ms", "ping", "vm"
	if got := series(t, "vmbench_result_ratio", sel); len(got) != 1 || got[0].GetGauge().GetValue() != 1.25 {
		t.Errorf("rtt_max_ms ratio series = %v, want one at 1.25", got)
	}
	if got := series(t, "vmbench_result_overhead_percent", sel); len(got) != 1 || got[0].GetGauge().GetValue() != 25 {
		t.Errorf("rtt_max_ms overhead series = %v, want one at 25", got)
	}
}

func TestRecordSuiteEmptyStatus(t *testing.T) {
	const ns, name = "empty", "demo"
	t.Cleanup(func() { ForgetSuite(ns, name) })
	RecordSuite(&vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	want := map[string]int{"vmbench_result_value": 0, "vmbench_result_stddev": 0, "vmbench_result_samples": 0,
		"vmbench_result_ratio": 0, "vmbench_result_overhead_percent": 0, "vmbench_suite_phase": 4}
	if diff := cmp.Diff(want, counts(t, ns, name)); diff != "" {
		t.Errorf("series counts mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"Pending": 0, "Running": 0, "Complete": 0, "Failed": 0}, phases(t, ns, name)); diff != "" {
		t.Errorf("a suite without a phase has a phase at 1 (-want +got):\n%s", diff)
	}
}

func TestForgetSuite(t *testing.T) {
	type suiteID struct{ ns, name string }
	gone := suiteID{"forget", "a"}
	kept := []suiteID{{"forget", "b"}, {"other", "a"}, {"forget", "aa"}}
	t.Cleanup(func() {
		for _, s := range kept {
			ForgetSuite(s.ns, s.name)
		}
	})
	for _, s := range append([]suiteID{gone}, kept...) {
		RecordSuite(measuredSuite(s.ns, s.name, vmbenchv1.SuiteFailed))
	}
	ForgetSuite(gone.ns, gone.name)

	none := map[string]int{}
	for _, f := range perSuiteFamilies {
		none[f] = 0
	}
	full := map[string]int{"vmbench_result_value": 10, "vmbench_result_stddev": 10, "vmbench_result_samples": 10,
		"vmbench_result_ratio": 5, "vmbench_result_overhead_percent": 5, "vmbench_suite_phase": 4}
	if diff := cmp.Diff(none, counts(t, gone.ns, gone.name)); diff != "" {
		t.Errorf("series left of a forgotten suite (-want +got):\n%s", diff)
	}
	for _, s := range kept {
		if diff := cmp.Diff(full, counts(t, s.ns, s.name)); diff != "" {
			t.Errorf("suite %s/%s lost series when another was forgotten (-want +got):\n%s", s.ns, s.name, diff)
		}
	}
	// Forgetting a suite that has no series is fine.
	ForgetSuite("nowhere", "nothing")
}

func counterValue(t *testing.T, name string, match map[string]string) float64 {
	t.Helper()
	got := series(t, name, match)
	switch len(got) {
	case 0:
		return 0
	case 1:
		return got[0].GetCounter().GetValue()
	}
	t.Fatalf("%s%v matches %d series", name, match, len(got))
	return 0
}

func histogram(t *testing.T, platformType string) (uint64, float64) {
	t.Helper()
	got := series(t, "vmbench_node_ready_seconds", map[string]string{"platform_type": platformType})
	if len(got) == 0 {
		return 0, 0
	}
	return got[0].GetHistogram().GetSampleCount(), got[0].GetHistogram().GetSampleSum()
}

func TestRunFinished(t *testing.T) {
	vmFailed := map[string]string{"platform_type": "VM", "outcome": "Failed"}
	vmSucceeded := map[string]string{"platform_type": "VM", "outcome": "Succeeded"}
	containerFailed := map[string]string{"platform_type": "Container", "outcome": "Failed"}
	iperfVM := map[string]string{"benchmark_type": "iperf3", "platform_type": "VM"}
	hpccVM := map[string]string{"benchmark_type": "hpcc", "platform_type": "VM"}

	before := map[string]float64{
		"vmFailed": counterValue(t, "vmbench_runs_total", vmFailed), "vmSucceeded": counterValue(t, "vmbench_runs_total", vmSucceeded),
		"containerFailed": counterValue(t, "vmbench_runs_total", containerFailed),
		"iperfVM":         counterValue(t, "vmbench_benchmark_failures_total", iperfVM),
		"hpccVM":          counterValue(t, "vmbench_benchmark_failures_total", hpccVM),
	}
	count, sum := histogram(t, "VM")

	RunFinished(vmbenchv1.PlatformVM, vmbenchv1.RunStatus{Phase: vmbenchv1.RunFailed,
		BootSeconds: []vmbenchv1.NodeTiming{{Node: "master", Seconds: 30}, {Node: "node01", Seconds: 45.5}}},
		[]vmbenchv1.BenchmarkType{vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkHPCC})
	RunFinished(vmbenchv1.PlatformVM, vmbenchv1.RunStatus{Phase: vmbenchv1.RunSucceeded}, nil)

	after := map[string]float64{
		"vmFailed": counterValue(t, "vmbench_runs_total", vmFailed), "vmSucceeded": counterValue(t, "vmbench_runs_total", vmSucceeded),
		"containerFailed": counterValue(t, "vmbench_runs_total", containerFailed),
		"iperfVM":         counterValue(t, "vmbench_benchmark_failures_total", iperfVM),
		"hpccVM":          counterValue(t, "vmbench_benchmark_failures_total", hpccVM),
	}
	wantDelta := map[string]float64{"vmFailed": 1, "vmSucceeded": 1, "containerFailed": 0, "iperfVM": 2, "hpccVM": 1}
	gotDelta := map[string]float64{}
	for k := range after {
		gotDelta[k] = after[k] - before[k]
	}
	if diff := cmp.Diff(wantDelta, gotDelta); diff != "" {
		t.Errorf("counter increments mismatch (-want +got):\n%s", diff)
	}
	newCount, newSum := histogram(t, "VM")
	if newCount-count != 2 || newSum-sum != 75.5 {
		t.Errorf("node ready histogram grew by %d samples summing to %g, want 2 summing to 75.5", newCount-count, newSum-sum)
	}
}

func startupHistogram(t *testing.T, platformType, phase string) (uint64, float64) {
	t.Helper()
	got := series(t, "vmbench_run_startup_seconds", map[string]string{"platform_type": platformType, "phase": phase})
	if len(got) == 0 {
		return 0, 0
	}
	return got[0].GetHistogram().GetSampleCount(), got[0].GetHistogram().GetSampleSum()
}

func TestRunFinishedStartupPhases(t *testing.T) {
	phases := []string{"vmiScheduled", "vmiRunning", "runnerReady", "podsScheduled"}
	type obs struct {
		count uint64
		sum   float64
	}
	before := map[string]obs{}
	for _, p := range phases {
		c, s := startupHistogram(t, "VM", p)
		before[p] = obs{c, s}
	}
	RunFinished(vmbenchv1.PlatformVM, vmbenchv1.RunStatus{Phase: vmbenchv1.RunSucceeded,
		StartupSeconds: &vmbenchv1.RunStartup{VMIScheduled: ptr(4.5), VMIRunning: ptr(12), RunnerReady: ptr(40)}}, nil)
	RunFinished(vmbenchv1.PlatformVM, vmbenchv1.RunStatus{Phase: vmbenchv1.RunFailed,
		StartupSeconds: &vmbenchv1.RunStartup{VMIScheduled: ptr(3)}}, nil)
	// An old status without startup phases observes nothing.
	RunFinished(vmbenchv1.PlatformVM, vmbenchv1.RunStatus{Phase: vmbenchv1.RunSucceeded}, nil)

	// vmiScheduled: 4.5 + 3 over two runs; the others once; podsScheduled never on VMs.
	want := map[string]obs{"vmiScheduled": {2, 7.5}, "vmiRunning": {1, 12}, "runnerReady": {1, 40}, "podsScheduled": {0, 0}}
	got := map[string]obs{}
	for _, p := range phases {
		c, s := startupHistogram(t, "VM", p)
		got[p] = obs{c - before[p].count, s - before[p].sum}
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(obs{})); diff != "" {
		t.Errorf("startup histogram growth (-want +got):\n%s", diff)
	}
}

func TestRecordSuiteLauncherOverhead(t *testing.T) {
	s := measuredSuite("ns-overhead", "s", vmbenchv1.SuiteComplete)
	over := func(cpu, memory string) *vmbenchv1.ResourceOverhead {
		return &vmbenchv1.ResourceOverhead{CPU: resource.MustParse(cpu), Memory: resource.MustParse(memory)}
	}
	s.Status.Runs = []vmbenchv1.RunStatus{
		{Name: "vm-1", Platform: "vm", LauncherOverhead: over("200m", "250Mi")},
		{Name: "vm-2", Platform: "vm", LauncherOverhead: over("150m", "300Mi")},
		{Name: "container-1", Platform: "container"},
	}
	RecordSuite(s)
	value := func(family string) map[string]float64 {
		out := map[string]float64{}
		for _, m := range series(t, family, suiteSelector("ns-overhead", "s")) {
			out[labelMap(m)["platform"]] = m.GetGauge().GetValue()
		}
		return out
	}
	// The largest per resource over the platform's runs: 200m from vm-1, 300Mi = 314572800 bytes
	// from vm-2; the container platform has no series.
	if diff := cmp.Diff(map[string]float64{"vm": 0.2}, value("vmbench_vm_launcher_overhead_cpu_cores")); diff != "" {
		t.Errorf("cpu overhead (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"vm": 314572800}, value("vmbench_vm_launcher_overhead_memory_bytes")); diff != "" {
		t.Errorf("memory overhead (-want +got):\n%s", diff)
	}
	ForgetSuite("ns-overhead", "s")
	if n := len(value("vmbench_vm_launcher_overhead_cpu_cores")) + len(value("vmbench_vm_launcher_overhead_memory_bytes")); n != 0 {
		t.Errorf("%d overhead series left after ForgetSuite, want 0", n)
	}
}

func ptr(v float64) *float64 { return &v }
