package schedule

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// drifting is synthHistory's history with the VM arm scaled by (1 + perRun)^i at run i: a slow
// drift with no step.
func drifting(runs int, perRun float64, seed uint64) []history.Record {
	recs := synthHistory(synth{runs: runs, at: runs, vmStep: 1, ctrStep: 1, seed: seed})
	for i := range recs {
		for j := range recs[i].Metrics {
			if m := &recs[i].Metrics[j]; m.Platform == "vm" {
				v := *m.MeanLog + float64(i)*math.Log1p(perRun)
				m.MeanLog = &v
			}
		}
	}
	return recs
}

// A drift of 0.5% a run over 24 runs is no change point, but the newest runs are worse than the
// pinned first record by more than 5%: Drifted, naming the VM arm and its ratio.
func TestBaselineCatchesASlowDriftThatChangePointsDoNot(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		recs := drifting(24, -0.005, seed)
		found, _, err := analyzeHistory(recs, findingPlatforms)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 0 {
			t.Errorf("seed %d: %d change-point findings in a slow drift, want none: %+v", seed, len(found), found)
		}
		j, err := judgeBaselineRecords(recs, findingPlatforms, "nightly-00", 5)
		if err != nil {
			t.Fatal(err)
		}
		if j.status.Verdict != vmbenchv1.BaselineDrifted || j.reason != vmbenchv1.ReasonBaselineDrifted || len(j.status.Series) == 0 {
			t.Fatalf("seed %d: verdict %s (%s), series %+v; want Drifted", seed, j.status.Verdict, j.message, j.status.Series)
		}
		first := j.status.Series[0]
		if first.Platform != "vm" || first.Verdict != vmbenchv1.BaselineDrifted || first.Ratio > 0.95 || first.RatioHigh >= 0.95 {
			t.Errorf("seed %d: first series %+v, want the VM arm or its ratio drifted below 0.95", seed, first)
		}
		for _, s := range j.status.Series {
			if s.Platform == "container" && s.Verdict == vmbenchv1.BaselineDrifted {
				t.Errorf("seed %d: the flat container arm drifted: %+v", seed, s)
			}
		}
		if !strings.Contains(j.message, "vm") || !strings.Contains(j.message, "re-pin the baseline by setting spec.baseline.suite") {
			t.Errorf("seed %d: message %q does not name the series and what to do", seed, j.message)
		}
	}
}

func TestBaselineFlatHistoryIsWithin(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		recs := drifting(24, 0, seed)
		j, err := judgeBaselineRecords(recs, findingPlatforms, "nightly-00", 5)
		if err != nil {
			t.Fatal(err)
		}
		if j.status.Verdict != vmbenchv1.BaselineWithin || len(j.status.Series) != 0 || j.status.Runs != 5 {
			t.Errorf("seed %d: verdict %s (%s), series %+v; want Within over 5 runs", seed, j.status.Verdict, j.message, j.status.Series)
		}
	}
}

func TestBaselineWithoutAVerdict(t *testing.T) {
	recs := drifting(10, 0, 1)
	for _, tc := range []struct {
		name    string
		recs    []history.Record
		suite   string
		reason  string
		message string
	}{
		{"unknown record", recs, "nightly-77", vmbenchv1.ReasonBaselineNotFound, "is not a complete record of the history"},
		{"too few runs since", recs, "nightly-06", vmbenchv1.ReasonBaselineInsufficient, "3 complete run(s) since the baseline record nightly-06, 5 needed"},
		{"new parameters", func() []history.Record {
			r := drifting(10, 0, 1)
			r[9].ParametersHash = "h2"
			return r
		}(), "nightly-00", vmbenchv1.ReasonBaselineInsufficient, "pin a record of the new parameters"},
		{"failed record", func() []history.Record {
			r := drifting(10, 0, 1)
			r[0].Phase = vmbenchv1.SuiteFailed
			return r
		}(), "nightly-00", vmbenchv1.ReasonBaselineNotFound, "is not a complete record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, err := judgeBaselineRecords(tc.recs, findingPlatforms, tc.suite, 5)
			if err != nil {
				t.Fatal(err)
			}
			if j.status.Verdict != vmbenchv1.BaselineInsufficient || j.reason != tc.reason || !strings.Contains(j.message, tc.message) {
				t.Errorf("verdict %s, reason %s, message %q; want Insufficient, %s, %q", j.status.Verdict, j.reason, j.message, tc.reason, tc.message)
			}
		})
	}
}

func TestBaselineTolerance(t *testing.T) {
	spec := vmbenchv1.BenchmarkScheduleSpec{Baseline: &vmbenchv1.ScheduleBaseline{Suite: "x"}}
	if got := baselineTolerancePercent(spec); got != 5 {
		t.Errorf("default tolerance %v, want 5", got)
	}
	spec.SuiteTemplate.Spec.Report = &vmbenchv1.ReportSpec{TolerancePercent: ptr.To(3.0)}
	if got := baselineTolerancePercent(spec); got != 3 {
		t.Errorf("tolerance %v, want the report's 3", got)
	}
	spec.Baseline.TolerancePercent = ptr.To(8.0)
	if got := baselineTolerancePercent(spec); got != 8 {
		t.Errorf("tolerance %v, want spec.baseline's 8", got)
	}
}

// The reconcile sets status.baseline and Drifted, says it once, re-judges when the pin changes and
// removes both when spec.baseline goes.
func TestJudgeBaselineSetsTheConditionAndFollowsThePin(t *testing.T) {
	sched := testSchedule()
	sched.Spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer},
		{Name: "vm", Type: vmbenchv1.PlatformVM}}
	sched.Spec.Baseline = &vmbenchv1.ScheduleBaseline{Suite: "nightly-00"}
	r := &ScheduleReconciler{History: &memHistory{records: drifting(24, -0.005, 1)}}
	if !baselineStale(sched) {
		t.Fatal("a new pin is not stale")
	}
	evs, err := r.judgeBaseline(context.Background(), sched)
	if err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionDrifted)
	if c == nil || c.Status != metav1.ConditionTrue || len(evs) != 1 || sched.Status.Baseline.Verdict != vmbenchv1.BaselineDrifted {
		t.Fatalf("Drifted %+v, events %v, status %+v; want True with one event", c, evs, sched.Status.Baseline)
	}
	if baselineStale(sched) {
		t.Error("stale right after the verdict")
	}
	if evs, _ := r.judgeBaseline(context.Background(), sched); len(evs) != 0 {
		t.Errorf("events %v on a second verdict alike, want none", evs)
	}
	// Re-pinned on a recent record: too few runs since it for a verdict, and Drifted is False.
	sched.Spec.Baseline.Suite = "nightly-20"
	if !baselineStale(sched) {
		t.Fatal("a new pin is not stale")
	}
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionDrifted); c.Status != metav1.ConditionFalse ||
		c.Reason != vmbenchv1.ReasonBaselineInsufficient || sched.Status.Baseline.Suite != "nightly-20" {
		t.Errorf("Drifted %+v, status %+v after re-pinning; want False, insufficient, on nightly-20", c, sched.Status.Baseline)
	}
	sched.Spec.Baseline = nil
	if !baselineStale(sched) {
		t.Fatal("a removed pin is not stale")
	}
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	if sched.Status.Baseline != nil || meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionDrifted) != nil {
		t.Errorf("status %+v, conditions %+v without spec.baseline; want neither", sched.Status.Baseline, sched.Status.Conditions)
	}
}

// Each verdict exports the pinned record's ratios and means for the trend board's baseline line,
// from the records the verdict read: re-pinning moves them, a pin that is no record and a removed
// pin remove them.
func TestJudgeBaselineExportsThePinnedRecord(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.Register(reg)
	sched := testSchedule()
	sched.Namespace = "bench-baseline-line"
	t.Cleanup(func() { metrics.ForgetSchedule(sched.Namespace, sched.Name) })
	sched.Spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer},
		{Name: "vm", Type: vmbenchv1.PlatformVM}}
	recs := drifting(24, -0.005, 1)
	// The records' VM ratios, as the suite's report computed them.
	for i := range recs {
		for j := range recs[i].Metrics {
			if m := &recs[i].Metrics[j]; m.Platform == "vm" {
				m.Ratio = ptr.To(0.9 - float64(i)/1000)
			}
		}
	}
	r := &ScheduleReconciler{History: &memHistory{records: recs}}
	// exported maps "<gauge> <platform> <suite>" to its value.
	exported := func() map[string]float64 {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "vmbench_schedule_baseline_ratio" && f.GetName() != "vmbench_schedule_baseline_mean" {
				continue
			}
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if l["namespace"] == sched.Namespace && l["schedule"] == sched.Name {
					out[f.GetName()+" "+l["platform"]+" "+l["suite"]] = m.GetGauge().GetValue()
				}
			}
		}
		return out
	}
	want := func(i int) map[string]float64 {
		out := map[string]float64{"vmbench_schedule_baseline_ratio vm " + recs[i].Suite: *recs[i].Metrics[1].Ratio}
		for _, m := range recs[i].Metrics {
			out["vmbench_schedule_baseline_mean "+m.Platform+" "+recs[i].Suite] = math.Exp(*m.MeanLog)
		}
		return out
	}
	check := func(step string, want map[string]float64) {
		t.Helper()
		got := exported()
		if len(got) != len(want) {
			t.Errorf("%s: baseline series %v, want %v", step, got, want)
			return
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-9*v {
				t.Errorf("%s: %s = %v, want %v", step, k, g, v)
			}
		}
	}

	sched.Spec.Baseline = &vmbenchv1.ScheduleBaseline{Suite: "nightly-00"}
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	check("pinned on nightly-00", want(0))
	// Too few runs since it for a verdict: the line is the pinned record's all the same.
	sched.Spec.Baseline.Suite = "nightly-20"
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	check("re-pinned on nightly-20", want(20))
	sched.Spec.Baseline.Suite = "nightly-77"
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	check("pinned on a suite the history does not hold", nil)
	sched.Spec.Baseline.Suite = "nightly-00"
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	sched.Spec.Baseline = nil
	if _, err := r.judgeBaseline(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	check("without spec.baseline", nil)
}

func TestFiniteOr0KeepsTheStatusWritable(t *testing.T) {
	for in, want := range map[float64]float64{0.93: 0.93, math.Inf(1): 0, math.Inf(-1): 0, math.NaN(): 0} {
		if got := finiteOr0(in); got != want {
			t.Errorf("finiteOr0(%v) = %v, want %v", in, got, want)
		}
	}
}
