package metrics

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

func TestScheduleStatusSeries(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-status", "nightly") })
	sched := &vmbenchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns-status", Name: "nightly", CreationTimestamp: metav1.Unix(1690000000, 0)},
		Status: vmbenchv1.BenchmarkScheduleStatus{
			Conditions:         []metav1.Condition{{Type: vmbenchv1.ConditionValid, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonValid}},
			LastSuccessfulTime: &metav1.Time{Time: time.Unix(1700000000, 0)},
			NextScheduleTime:   &metav1.Time{Time: time.Unix(1700086400, 500_000_000)},
			Records:            7,
			Findings: []vmbenchv1.Finding{
				{ID: "a", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingUntriaged},
				{ID: "b", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingUntriaged},
				{ID: "c", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingAcknowledged},
				{ID: "d", Arm: vmbenchv1.ArmRatio, Regression: false, State: vmbenchv1.FindingUntriaged},
				{ID: "e", Arm: vmbenchv1.ArmHost, Regression: true, State: vmbenchv1.FindingExpected},
				{ID: "f", Arm: vmbenchv1.ArmContainer, Regression: true, State: vmbenchv1.FindingInvalid},
				// Waiting for or cleared by confirmation runs: not open; confirmed: open.
				{ID: "g", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationPending},
				{ID: "h", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationNotConfirmed},
				{ID: "i", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationConfirmed},
			},
			Baseline: &vmbenchv1.BaselineStatus{Suite: "nightly-29000000", Verdict: vmbenchv1.BaselineDrifted, Series: []vmbenchv1.BaselineSeries{
				{Platform: "vm", Verdict: vmbenchv1.BaselineDrifted}, {Platform: "container", Verdict: vmbenchv1.BaselineDrifted},
				{Platform: "host", Verdict: vmbenchv1.BaselineInconclusive}}},
		},
	}
	RecordSchedule(sched)
	want := `
# HELP vmbench_schedule_findings_open ` + help(t, "vmbench_schedule_findings_open") + `
# TYPE vmbench_schedule_findings_open gauge
vmbench_schedule_findings_open{arm="container",namespace="ns-status",regression="false",schedule="nightly"} 0
vmbench_schedule_findings_open{arm="container",namespace="ns-status",regression="true",schedule="nightly"} 0
vmbench_schedule_findings_open{arm="host",namespace="ns-status",regression="false",schedule="nightly"} 0
vmbench_schedule_findings_open{arm="host",namespace="ns-status",regression="true",schedule="nightly"} 0
vmbench_schedule_findings_open{arm="ratio",namespace="ns-status",regression="false",schedule="nightly"} 1
vmbench_schedule_findings_open{arm="ratio",namespace="ns-status",regression="true",schedule="nightly"} 0
vmbench_schedule_findings_open{arm="vm",namespace="ns-status",regression="false",schedule="nightly"} 0
vmbench_schedule_findings_open{arm="vm",namespace="ns-status",regression="true",schedule="nightly"} 3
# HELP vmbench_schedule_baseline_drifted ` + help(t, "vmbench_schedule_baseline_drifted") + `
# TYPE vmbench_schedule_baseline_drifted gauge
vmbench_schedule_baseline_drifted{namespace="ns-status",schedule="nightly"} 2
# HELP vmbench_schedule_last_success_timestamp_seconds ` + help(t, "vmbench_schedule_last_success_timestamp_seconds") + `
# TYPE vmbench_schedule_last_success_timestamp_seconds gauge
vmbench_schedule_last_success_timestamp_seconds{namespace="ns-status",schedule="nightly"} 1.7e+09
# HELP vmbench_schedule_next_run_timestamp_seconds ` + help(t, "vmbench_schedule_next_run_timestamp_seconds") + `
# TYPE vmbench_schedule_next_run_timestamp_seconds gauge
vmbench_schedule_next_run_timestamp_seconds{namespace="ns-status",schedule="nightly"} 1.7000864005e+09
# HELP vmbench_schedule_records ` + help(t, "vmbench_schedule_records") + `
# TYPE vmbench_schedule_records gauge
vmbench_schedule_records{namespace="ns-status",schedule="nightly"} 7
# HELP vmbench_schedule_created_timestamp_seconds ` + help(t, "vmbench_schedule_created_timestamp_seconds") + `
# TYPE vmbench_schedule_created_timestamp_seconds gauge
vmbench_schedule_created_timestamp_seconds{namespace="ns-status",schedule="nightly"} 1.69e+09
# HELP vmbench_schedule_valid ` + help(t, "vmbench_schedule_valid") + `
# TYPE vmbench_schedule_valid gauge
vmbench_schedule_valid{namespace="ns-status",schedule="nightly"} 1
`
	names := []string{"vmbench_schedule_findings_open", "vmbench_schedule_baseline_drifted", "vmbench_schedule_last_success_timestamp_seconds",
		"vmbench_schedule_next_run_timestamp_seconds", "vmbench_schedule_records", "vmbench_schedule_created_timestamp_seconds", "vmbench_schedule_valid"}
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}

	// Triaging the findings and suspending the schedule (no next run) show at the next reconcile.
	for i := range sched.Status.Findings {
		sched.Status.Findings[i].State = vmbenchv1.FindingAcknowledged
	}
	sched.Status.NextScheduleTime = nil
	sched.Status.Baseline = nil
	RecordSchedule(sched)
	if n := len(series(t, "vmbench_schedule_baseline_drifted", map[string]string{"namespace": "ns-status"})); n != 0 {
		t.Errorf("baseline series without a baseline: %d, want none", n)
	}
	if got := sumOf(t, "vmbench_schedule_findings_open", "ns-status"); got != 0 {
		t.Errorf("open findings after triage: %v, want 0", got)
	}
	if n := len(series(t, "vmbench_schedule_next_run_timestamp_seconds", map[string]string{"namespace": "ns-status"})); n != 0 {
		t.Errorf("next run series of a suspended schedule: %d, want none", n)
	}
	// An invalid spec (VMBenchScheduleInvalid reads it), and a schedule not judged yet.
	sched.Status.Conditions[0].Status = metav1.ConditionFalse
	RecordSchedule(sched)
	if got := series(t, "vmbench_schedule_valid", map[string]string{"namespace": "ns-status"}); len(got) != 1 || got[0].GetGauge().GetValue() != 0 {
		t.Errorf("vmbench_schedule_valid of a schedule with Valid=False: %v, want one series of 0", got)
	}
	sched.Status.Conditions = nil
	RecordSchedule(sched)
	if n := len(series(t, "vmbench_schedule_valid", map[string]string{"namespace": "ns-status"})); n != 0 {
		t.Errorf("vmbench_schedule_valid before the manager judged the spec: %d series, want none", n)
	}

	ForgetSchedule("ns-status", "nightly")
	for _, name := range names {
		if n := len(series(t, name, map[string]string{"namespace": "ns-status"})); n != 0 {
			t.Errorf("%s: %d series after ForgetSchedule, want none", name, n)
		}
	}
}

func TestScheduleRatioSeriesOfTheLatestRecord(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-ratio", "weekly") })
	first := history.Record{Metrics: []history.MetricRecord{
		{Benchmark: "cpu", Platform: "vm", Metric: "events_per_second", N: 3, VarLog: ptr(0.0004), Ratio: ptr(0.9), RatioLow: ptr(0.85), RatioHigh: ptr(0.95)},
		{Benchmark: "cpu", Platform: "pod", Metric: "events_per_second", N: 1, Ratio: ptr(1.0)},
		// The baseline has no ratio: no series.
		{Benchmark: "cpu", Platform: "host", Metric: "events_per_second", N: 3, VarLog: ptr(0.0001)},
	}}
	RecordScheduleRecord("ns-ratio", "weekly", first)
	want := `
# HELP vmbench_schedule_noise ` + help(t, "vmbench_schedule_noise") + `
# TYPE vmbench_schedule_noise gauge
vmbench_schedule_noise{benchmark="cpu",metric="events_per_second",namespace="ns-ratio",platform="vm",schedule="weekly"} 0.02
# HELP vmbench_schedule_ratio ` + help(t, "vmbench_schedule_ratio") + `
# TYPE vmbench_schedule_ratio gauge
vmbench_schedule_ratio{benchmark="cpu",metric="events_per_second",namespace="ns-ratio",platform="pod",schedule="weekly"} 1
vmbench_schedule_ratio{benchmark="cpu",metric="events_per_second",namespace="ns-ratio",platform="vm",schedule="weekly"} 0.9
# HELP vmbench_schedule_ratio_high ` + help(t, "vmbench_schedule_ratio_high") + `
# TYPE vmbench_schedule_ratio_high gauge
vmbench_schedule_ratio_high{benchmark="cpu",metric="events_per_second",namespace="ns-ratio",platform="vm",schedule="weekly"} 0.95
# HELP vmbench_schedule_ratio_low ` + help(t, "vmbench_schedule_ratio_low") + `
# TYPE vmbench_schedule_ratio_low gauge
vmbench_schedule_ratio_low{benchmark="cpu",metric="events_per_second",namespace="ns-ratio",platform="vm",schedule="weekly"} 0.85
`
	names := []string{"vmbench_schedule_ratio", "vmbench_schedule_ratio_low", "vmbench_schedule_ratio_high", "vmbench_schedule_noise"}
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}

	// The next record replaces the ratios; the status series stay.
	RecordSchedule(&vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "ns-ratio", Name: "weekly"},
		Status: vmbenchv1.BenchmarkScheduleStatus{Records: 2}})
	RecordScheduleRecord("ns-ratio", "weekly", history.Record{Metrics: []history.MetricRecord{
		{Benchmark: "cpu", Platform: "vm", Metric: "events_per_second", N: 1, Ratio: ptr(0.7)},
	}})
	got := series(t, "vmbench_schedule_ratio", map[string]string{"namespace": "ns-ratio"})
	if len(got) != 1 || got[0].GetGauge().GetValue() != 0.7 {
		t.Errorf("ratio series after the next record: %v, want only vm's 0.7", got)
	}
	for _, name := range []string{"vmbench_schedule_ratio_low", "vmbench_schedule_ratio_high", "vmbench_schedule_noise"} {
		if n := len(series(t, name, map[string]string{"namespace": "ns-ratio"})); n != 0 {
			t.Errorf("%s: %d series of the previous record, want none", name, n)
		}
	}
	if n := len(series(t, "vmbench_schedule_records", map[string]string{"namespace": "ns-ratio"})); n != 1 {
		t.Errorf("vmbench_schedule_records: %d series, want 1", n)
	}
}

func TestScheduleRatioSeriesAreCapped(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-cap", "big") })
	var rec history.Record
	// 100 metrics with ratio, interval and noise: 400 series for a cap of 200.
	for i := range 100 {
		rec.Metrics = append(rec.Metrics, history.MetricRecord{Benchmark: "b", Platform: "vm", Metric: fmt.Sprintf("m%03d", i),
			N: 3, VarLog: ptr(0.01), Ratio: ptr(1.0), RatioLow: ptr(0.9), RatioHigh: ptr(1.1)})
	}
	// A name that collides with m000 once sanitised to a label value.
	rec.Metrics = append(rec.Metrics, history.MetricRecord{Benchmark: "b", Platform: "vm", Metric: "m000", N: 1, Ratio: ptr(2.0)})
	before := testutil.ToFloat64(scheduleSeriesDropped)
	RecordScheduleRecord("ns-cap", "big", rec)
	total := 0
	for _, name := range []string{"vmbench_schedule_ratio", "vmbench_schedule_ratio_low", "vmbench_schedule_ratio_high", "vmbench_schedule_noise"} {
		total += len(series(t, name, map[string]string{"namespace": "ns-cap"}))
	}
	if total != MaxRatioSeriesPerSchedule {
		t.Errorf("ratio series of a record with 400: %d, want the cap %d", total, MaxRatioSeriesPerSchedule)
	}
	if got := testutil.ToFloat64(scheduleSeriesDropped) - before; got != 201 {
		t.Errorf("vmbench_schedule_series_dropped_total grew by %v, want 201 (200 past the cap, 1 duplicate)", got)
	}
	// The metrics kept are whole: every ratio kept has its interval and noise.
	if n := len(series(t, "vmbench_schedule_ratio", map[string]string{"namespace": "ns-cap"})); n != 50 {
		t.Errorf("ratios kept: %d, want 50 whole groups of 4", n)
	}
}

func TestScheduleLabelsAreSanitised(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-label", "s") })
	RecordScheduleRecord("ns-label", "s", history.Record{Metrics: []history.MetricRecord{
		{Benchmark: "b", Platform: "vm", Metric: "bad\nname\xff" + strings.Repeat("x", 100), N: 1, Ratio: ptr(1.0)},
	}})
	got := series(t, "vmbench_schedule_ratio", map[string]string{"namespace": "ns-label"})
	if len(got) != 1 {
		t.Fatalf("series: %d, want 1", len(got))
	}
	if m := labelMap(got[0])["metric"]; m != labelValue(m) || strings.ContainsAny(m, "\n") || len(m) > MaxLabelValueBytes {
		t.Errorf("metric label %q is not sanitised", m)
	}
}

// help is the HELP text of a metric family as registered.
func help(t *testing.T, name string) string {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetHelp()
		}
	}
	t.Fatalf("no family %s", name)
	return ""
}

func sumOf(t *testing.T, name, ns string) float64 {
	t.Helper()
	sum := 0.0
	for _, m := range series(t, name, map[string]string{"namespace": ns}) {
		sum += m.GetGauge().GetValue()
	}
	return sum
}

func TestScheduleArmSeries(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-arm", "daily") })
	RecordScheduleRecord("ns-arm", "daily", history.Record{Baseline: "container", Metrics: []history.MetricRecord{
		{Benchmark: "cpu", Platform: "vm", Metric: "events_per_second", N: 3, MeanLog: ptr(math.Log(800)), VarLog: ptr(0.0004),
			Ratio: ptr(0.8), RatioLow: ptr(0.75), RatioHigh: ptr(0.85)},
		// The baseline: its mean, and its noise, which the ratio series leave out.
		{Benchmark: "cpu", Platform: "container", Metric: "events_per_second", N: 3, MeanLog: ptr(math.Log(1000)), VarLog: ptr(0.0009)},
		// One repetition: a mean, no noise.
		{Benchmark: "mem", Platform: "container", Metric: "bandwidth", N: 1, MeanLog: ptr(math.Log(5))},
		// No logarithm (a value at or below 0): no mean.
		{Benchmark: "mem", Platform: "vm", Metric: "bandwidth", N: 1},
	}})
	// Rounding: exp(log(x)) is x only to a few ulps; compare at the precision the text format shows.
	got := map[string]float64{}
	for _, m := range series(t, "vmbench_schedule_mean", map[string]string{"namespace": "ns-arm"}) {
		l := labelMap(m)
		got[l["benchmark"]+"/"+l["platform"]] = m.GetGauge().GetValue()
	}
	for k, v := range map[string]float64{"cpu/container": 1000, "cpu/vm": 800, "mem/container": 5} {
		if math.Abs(got[k]-v) > 1e-9*v {
			t.Errorf("vmbench_schedule_mean of %s: %v, want %v", k, got[k], v)
		}
	}
	if len(got) != 3 {
		t.Errorf("vmbench_schedule_mean series: %v, want 3", got)
	}
	noise := map[string]float64{}
	for _, m := range series(t, "vmbench_schedule_noise", map[string]string{"namespace": "ns-arm"}) {
		l := labelMap(m)
		noise[l["benchmark"]+"/"+l["platform"]] = m.GetGauge().GetValue()
	}
	if len(noise) != 2 || math.Abs(noise["cpu/container"]-0.03) > 1e-12 || math.Abs(noise["cpu/vm"]-0.02) > 1e-12 {
		t.Errorf("vmbench_schedule_noise: %v, want cpu/container 0.03 and cpu/vm 0.02 (once each)", noise)
	}
}

func TestScheduleArmSeriesTakeWhatTheRatiosLeave(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-armcap", "big") })
	var rec history.Record
	// 49 metrics with ratio, interval and noise: 196 series, 4 left for 49 means.
	for i := range 49 {
		rec.Metrics = append(rec.Metrics, history.MetricRecord{Benchmark: "b", Platform: "vm", Metric: fmt.Sprintf("m%03d", i),
			N: 3, MeanLog: ptr(1), VarLog: ptr(0.01), Ratio: ptr(1.0), RatioLow: ptr(0.9), RatioHigh: ptr(1.1)})
	}
	before := testutil.ToFloat64(scheduleSeriesDropped)
	RecordScheduleRecord("ns-armcap", "big", rec)
	if n := len(series(t, "vmbench_schedule_ratio", map[string]string{"namespace": "ns-armcap"})); n != 49 {
		t.Errorf("ratios kept: %d, want all 49", n)
	}
	if n := len(series(t, "vmbench_schedule_mean", map[string]string{"namespace": "ns-armcap"})); n != 4 {
		t.Errorf("means kept: %d, want the 4 the ratios leave of %d", n, MaxRatioSeriesPerSchedule)
	}
	if got := testutil.ToFloat64(scheduleSeriesDropped) - before; got != 45 {
		t.Errorf("vmbench_schedule_series_dropped_total grew by %v, want 45 means", got)
	}
}

func TestScheduleEventSeries(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-event", "nightly") })
	at := func(sec int64) metav1.Time { return metav1.Time{Time: time.Unix(sec, 0)} }
	sched := &vmbenchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns-event", Name: "nightly"},
		Status: vmbenchv1.BenchmarkScheduleStatus{
			Findings: []vmbenchv1.Finding{
				{ID: "f1", Benchmark: "cpu", Metric: "eps", Platform: "vm", Arm: vmbenchv1.ArmVM, Direction: "down", Regression: true,
					Time: at(1700000000), State: vmbenchv1.FindingUntriaged},
				// Triaged findings are change points too.
				{ID: "f2", Benchmark: "cpu", Metric: "eps", Platform: "vm", Arm: vmbenchv1.ArmRatio, Direction: "up", Regression: false,
					Time: at(1700100000), State: vmbenchv1.FindingExpected},
			},
			LastTrigger: &vmbenchv1.VersionTrigger{Time: at(1699990000), Suite: "nightly-28333166"},
		},
	}
	RecordSchedule(sched)
	want := `
# HELP vmbench_schedule_finding_timestamp_seconds ` + help(t, "vmbench_schedule_finding_timestamp_seconds") + `
# TYPE vmbench_schedule_finding_timestamp_seconds gauge
vmbench_schedule_finding_timestamp_seconds{arm="ratio",benchmark="cpu",direction="up",id="f2",metric="eps",namespace="ns-event",platform="vm",regression="false",schedule="nightly"} 1.7001e+09
vmbench_schedule_finding_timestamp_seconds{arm="vm",benchmark="cpu",direction="down",id="f1",metric="eps",namespace="ns-event",platform="vm",regression="true",schedule="nightly"} 1.7e+09
# HELP vmbench_schedule_version_change_timestamp_seconds ` + help(t, "vmbench_schedule_version_change_timestamp_seconds") + `
# TYPE vmbench_schedule_version_change_timestamp_seconds gauge
vmbench_schedule_version_change_timestamp_seconds{namespace="ns-event",schedule="nightly",suite="nightly-28333166"} 1.69999e+09
`
	names := []string{"vmbench_schedule_finding_timestamp_seconds", "vmbench_schedule_version_change_timestamp_seconds"}
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}

	// Findings past the status's bound and a trigger gone leave no series behind.
	sched.Status.Findings = sched.Status.Findings[1:]
	sched.Status.LastTrigger = nil
	RecordSchedule(sched)
	if got := series(t, "vmbench_schedule_finding_timestamp_seconds", map[string]string{"namespace": "ns-event"}); len(got) != 1 ||
		labelMap(got[0])["id"] != "f2" {
		t.Errorf("finding series after f1 left the status: %v, want only f2", got)
	}
	if n := len(series(t, "vmbench_schedule_version_change_timestamp_seconds", map[string]string{"namespace": "ns-event"})); n != 0 {
		t.Errorf("version change series without a last trigger: %d, want none", n)
	}
}

func TestScheduleEnvironmentChange(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-env", "s") })
	env := func(node, runner, kernel string) []vmbenchv1.RunEnvironment {
		return []vmbenchv1.RunEnvironment{{ID: node + runner + kernel, Platform: vmbenchv1.PlatformContainer, RunnerImage: runner,
			Nodes: []vmbenchv1.NodeEnvironment{{Name: node, KernelVersion: kernel, ContainerRuntimeVersion: "containerd://2.1.4"}}}}
	}
	var records []history.Record
	record := func(suite string, minute int64, phase vmbenchv1.SuitePhase, envs []vmbenchv1.RunEnvironment) {
		records = append(records, history.Record{Suite: suite, Scheduled: time.Unix(minute*60, 0), Phase: phase, Environments: envs})
		RecordScheduleEnvironmentChange("ns-env", "s", records)
	}
	changes := func() map[string]float64 {
		out := map[string]float64{}
		for _, m := range series(t, "vmbench_schedule_environment_change_timestamp_seconds", map[string]string{"namespace": "ns-env"}) {
			out[labelMap(m)["suite"]] = m.GetGauge().GetValue()
		}
		return out
	}
	record("s-1", 1, vmbenchv1.SuiteComplete, env("n1", "runner:a", "6.1"))
	// Another node with the same versions is no change.
	record("s-2", 2, vmbenchv1.SuiteComplete, env("n2", "runner:a", "6.1"))
	if got := changes(); len(got) != 0 {
		t.Fatalf("environment changes after two records on the same versions: %v, want none", got)
	}
	record("s-3", 3, vmbenchv1.SuiteComplete, env("n2", "runner:b", "6.1"))
	if got := changes(); len(got) != 1 || got["s-3"] != 180 {
		t.Fatalf("environment changes after the runner image changed at s-3: %v, want s-3 at 180", got)
	}
	// A record without an environment (a suite that failed early) and a failed suite's record on
	// other versions neither change nor clear it; the next one is compared with the last Complete
	// record that had one.
	record("s-4", 4, vmbenchv1.SuiteFailed, nil)
	record("s-5", 5, vmbenchv1.SuiteFailed, env("n1", "runner:c", "6.1"))
	record("s-6", 6, vmbenchv1.SuiteComplete, env("n1", "runner:b", "6.1"))
	if got := changes(); len(got) != 1 || got["s-3"] != 180 {
		t.Fatalf("environment changes after records with no change: %v, want still s-3 at 180", got)
	}
	// A restart of the manager forgets every series; the history brings the change back.
	ForgetSchedule("ns-env", "s")
	record("s-7", 7, vmbenchv1.SuiteComplete, env("n1", "runner:b", "6.1"))
	if got := changes(); len(got) != 1 || got["s-3"] != 180 {
		t.Fatalf("environment changes after a restart: %v, want still s-3 at 180", got)
	}
	record("s-8", 8, vmbenchv1.SuiteComplete, env("n1", "runner:b", "6.8"))
	if got := changes(); len(got) != 1 || got["s-8"] != 480 {
		t.Fatalf("environment changes after the kernel changed at s-8: %v, want s-8 at 480", got)
	}
	// The history pruned past every change: no series.
	records = records[len(records)-1:]
	RecordScheduleEnvironmentChange("ns-env", "s", records)
	if got := changes(); len(got) != 0 {
		t.Errorf("environment changes with one record left: %v, want none", got)
	}
}

func TestScheduleSensitivitySeries(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-mdc", "s") })
	before := testutil.ToFloat64(scheduleSeriesDropped)
	RecordScheduleSensitivity("ns-mdc", "s", []SeriesSensitivity{
		{Benchmark: "cpu", Metric: "eps", Platform: "vm", Arm: "vm", MinDetectableChange: 0.04},
		{Benchmark: "cpu", Metric: "eps", Platform: "vm", Arm: "ratio", MinDetectableChange: 0.05},
		{Benchmark: "cpu", Metric: "eps", Platform: "container", Arm: "container", MinDetectableChange: math.NaN()},
	})
	want := `
# HELP vmbench_schedule_min_detectable_change ` + help(t, "vmbench_schedule_min_detectable_change") + `
# TYPE vmbench_schedule_min_detectable_change gauge
vmbench_schedule_min_detectable_change{arm="ratio",benchmark="cpu",metric="eps",namespace="ns-mdc",platform="vm",schedule="s"} 0.05
vmbench_schedule_min_detectable_change{arm="vm",benchmark="cpu",metric="eps",namespace="ns-mdc",platform="vm",schedule="s"} 0.04
`
	if err := testutil.GatherAndCompare(registry, strings.NewReader(want), "vmbench_schedule_min_detectable_change"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(scheduleSeriesDropped) - before; got != 1 {
		t.Errorf("vmbench_schedule_series_dropped_total grew by %v, want 1 (the NaN)", got)
	}
	// The next analysis replaces them.
	RecordScheduleSensitivity("ns-mdc", "s", []SeriesSensitivity{{Benchmark: "cpu", Metric: "eps", Platform: "vm", Arm: "vm", MinDetectableChange: 0.03}})
	if got := series(t, "vmbench_schedule_min_detectable_change", map[string]string{"namespace": "ns-mdc"}); len(got) != 1 ||
		got[0].GetGauge().GetValue() != 0.03 {
		t.Errorf("series after the next analysis: %v, want only vm's 0.03", got)
	}
}

// The pinned baseline record's ratio and mean of each platform series, labelled with its suite,
// present from a verdict on and gone when spec.baseline is.
func TestScheduleBaselineSeries(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-base", "nightly") })
	pinned := history.Record{Suite: "nightly-29412345", Baseline: "container", Metrics: []history.MetricRecord{
		{Benchmark: "cpu", Platform: "container", Metric: "eps", N: 3, MeanLog: ptr(math.Log(1000)), VarLog: ptr(0.0004)},
		{Benchmark: "cpu", Platform: "vm", Metric: "eps", N: 3, MeanLog: ptr(math.Log(900)), VarLog: ptr(0.0004),
			Ratio: ptr(0.9), RatioLow: ptr(0.85), RatioHigh: ptr(0.95)},
		// Neither a finite ratio nor a mean: no series.
		{Benchmark: "mem", Platform: "vm", Metric: "bw", N: 1, Ratio: ptr(math.Inf(1))},
	}}
	// The latest record, whose series are not the baseline's.
	RecordScheduleRecord("ns-base", "nightly", history.Record{Suite: "nightly-29500000", Baseline: "container", Metrics: []history.MetricRecord{
		{Benchmark: "cpu", Platform: "vm", Metric: "eps", N: 3, MeanLog: ptr(math.Log(800)), Ratio: ptr(0.8)},
	}})
	for _, name := range []string{"vmbench_schedule_baseline_ratio", "vmbench_schedule_baseline_mean"} {
		if n := len(series(t, name, map[string]string{"namespace": "ns-base"})); n != 0 {
			t.Errorf("%s: %d series before a baseline verdict, want none", name, n)
		}
	}
	RecordScheduleBaseline("ns-base", "nightly", &pinned)
	got := map[string]float64{}
	for _, name := range []string{"vmbench_schedule_baseline_ratio", "vmbench_schedule_baseline_mean"} {
		for _, m := range series(t, name, map[string]string{"namespace": "ns-base"}) {
			l := labelMap(m)
			if l["suite"] != "nightly-29412345" || l["schedule"] != "nightly" || l["metric"] == "" {
				t.Errorf("%s labels %v, want the schedule's series and the pinned suite", name, l)
			}
			got[name+" "+l["benchmark"]+"/"+l["platform"]] = m.GetGauge().GetValue()
		}
	}
	want := map[string]float64{"vmbench_schedule_baseline_ratio cpu/vm": 0.9, "vmbench_schedule_baseline_mean cpu/vm": 900,
		"vmbench_schedule_baseline_mean cpu/container": 1000}
	if len(got) != len(want) {
		t.Errorf("baseline series %v, want %v", got, want)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9*v {
			t.Errorf("%s: %v, want %v (the pinned record's)", k, g, v)
		}
	}
	// A new record keeps them; the latest ratio stays the record's own.
	RecordScheduleRecord("ns-base", "nightly", history.Record{Suite: "nightly-29500060", Baseline: "container", Metrics: []history.MetricRecord{
		{Benchmark: "cpu", Platform: "vm", Metric: "eps", N: 3, MeanLog: ptr(math.Log(700)), Ratio: ptr(0.7)},
	}})
	if n := len(series(t, "vmbench_schedule_baseline_mean", map[string]string{"namespace": "ns-base"})); n != 2 {
		t.Errorf("baseline means after the next record: %d, want 2", n)
	}
	if r := series(t, "vmbench_schedule_ratio", map[string]string{"namespace": "ns-base"}); len(r) != 1 || r[0].GetGauge().GetValue() != 0.7 {
		t.Errorf("latest ratio %v, want 0.7", r)
	}
	// Without spec.baseline (the verdict passes nil), none.
	RecordScheduleBaseline("ns-base", "nightly", nil)
	for _, name := range []string{"vmbench_schedule_baseline_ratio", "vmbench_schedule_baseline_mean"} {
		if n := len(series(t, name, map[string]string{"namespace": "ns-base"})); n != 0 {
			t.Errorf("%s: %d series without a baseline, want none", name, n)
		}
	}
	// A schedule never recorded and without a baseline gets no series at all.
	RecordScheduleBaseline("ns-base", "other", nil)
	if _, ok := schedules.schedules[suiteKey("ns-base", "other")]; ok {
		t.Error("an entry for a schedule without series")
	}
}

// The baseline's series take what the latest record's leave of the schedule's cap, and are cut
// again when a record leaves less.
func TestScheduleBaselineSeriesShareTheCap(t *testing.T) {
	t.Cleanup(func() { ForgetSchedule("ns-basecap", "big") })
	var latest, pinned history.Record
	// 49 metrics with ratio, interval and noise: 196 series, and their means need 49 more: 4 fit.
	for i := range 49 {
		m := history.MetricRecord{Benchmark: "b", Platform: "vm", Metric: fmt.Sprintf("m%03d", i),
			N: 3, MeanLog: ptr(1), VarLog: ptr(0.01), Ratio: ptr(1.0), RatioLow: ptr(0.9), RatioHigh: ptr(1.1)}
		latest.Metrics = append(latest.Metrics, m)
		pinned.Metrics = append(pinned.Metrics, m)
	}
	pinned.Suite = "big-1"
	before := testutil.ToFloat64(scheduleSeriesDropped)
	RecordScheduleBaseline("ns-basecap", "big", &pinned)
	// Alone, the baseline has the whole cap: 49 groups of 2.
	if n := len(series(t, "vmbench_schedule_baseline_ratio", map[string]string{"namespace": "ns-basecap"})); n != 49 {
		t.Errorf("baseline ratios with no record: %d, want 49", n)
	}
	RecordScheduleRecord("ns-basecap", "big", latest)
	total := 0
	for _, name := range []string{"vmbench_schedule_ratio", "vmbench_schedule_ratio_low", "vmbench_schedule_ratio_high",
		"vmbench_schedule_noise", "vmbench_schedule_mean", "vmbench_schedule_baseline_ratio", "vmbench_schedule_baseline_mean"} {
		total += len(series(t, name, map[string]string{"namespace": "ns-basecap"}))
	}
	if total != MaxRatioSeriesPerSchedule {
		t.Errorf("series of the record and the baseline: %d, want the cap %d", total, MaxRatioSeriesPerSchedule)
	}
	if n := len(series(t, "vmbench_schedule_baseline_ratio", map[string]string{"namespace": "ns-basecap"})); n != 0 {
		t.Errorf("baseline ratios once the record fills the cap: %d, want none", n)
	}
	// 45 means and all 98 baseline series dropped.
	if got := testutil.ToFloat64(scheduleSeriesDropped) - before; got != 45+98 {
		t.Errorf("vmbench_schedule_series_dropped_total grew by %v, want 143", got)
	}
	// A smaller record leaves room again: 5 metrics take 25 series.
	RecordScheduleRecord("ns-basecap", "big", history.Record{Metrics: latest.Metrics[:5]})
	if n := len(series(t, "vmbench_schedule_baseline_ratio", map[string]string{"namespace": "ns-basecap"})); n != 49 {
		t.Errorf("baseline ratios after a small record: %d, want 49", n)
	}
}
