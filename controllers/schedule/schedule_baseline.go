package schedule

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/detect"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// spec.baseline: after each record (and when spec.baseline changes), every series of the records
// since the pinned one, under its parameters hash, is held against it with the detector's
// non-inferiority verdict (the newest runs of the window against the baseline run, Holm over all
// series); the verdict goes to status.baseline and the condition Drifted.

// maxBaselineSeries bounds status.baseline.series.
const maxBaselineSeries = 16

// defaultBaselineTolerancePercent is the tolerance when neither spec.baseline nor the suite
// template's report sets one: the report's default.
const defaultBaselineTolerancePercent = 5.0

// baselineTolerancePercent is spec.baseline.tolerancePercent, else the suite template's
// spec.report.tolerancePercent, else 5.
func baselineTolerancePercent(spec vmbenchv1.BenchmarkScheduleSpec) float64 {
	switch {
	case spec.Baseline != nil && spec.Baseline.TolerancePercent != nil:
		return *spec.Baseline.TolerancePercent
	case spec.SuiteTemplate.Spec.Report != nil && spec.SuiteTemplate.Spec.Report.TolerancePercent != nil:
		return *spec.SuiteTemplate.Spec.Report.TolerancePercent
	}
	return defaultBaselineTolerancePercent
}

// baselineStale says whether status.baseline does not answer spec.baseline as it is now: a new or
// changed pin, or one removed.
func baselineStale(sched *vmbenchv1.BenchmarkSchedule) bool {
	spec, st := sched.Spec.Baseline, sched.Status.Baseline
	if spec == nil {
		return st != nil || meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionDrifted) != nil
	}
	return st == nil || st.Suite != spec.Suite || st.TolerancePercent != baselineTolerancePercent(sched.Spec)
}

// baselineJudgement is the verdict and the condition's reason and message.
type baselineJudgement struct {
	status          vmbenchv1.BaselineStatus
	reason, message string
	// pinned is the baseline record, nil when it is no complete record of the history.
	pinned *history.Record
}

// judgeBaselineRecords holds the records since the pinned one against it. It is pure: records in the
// history's order, the platforms' types from the suite template.
func judgeBaselineRecords(records []history.Record, platforms map[string]vmbenchv1.PlatformType, suite string,
	tolerancePercent float64) (baselineJudgement, error) {
	cfg := detect.DefaultBaselineConfig()
	cfg.Tolerance = tolerancePercent / 100
	j := baselineJudgement{status: vmbenchv1.BaselineStatus{Suite: suite, Verdict: vmbenchv1.BaselineInsufficient,
		TolerancePercent: tolerancePercent}}
	pinned := -1
	for i, r := range records {
		if r.Suite == suite {
			pinned = i
		}
	}
	if pinned < 0 || records[pinned].Phase != vmbenchv1.SuiteComplete {
		j.reason = vmbenchv1.ReasonBaselineNotFound
		j.message = fmt.Sprintf("spec.baseline.suite %s is not a complete record of the history (%d records): set it to the suite of a "+
			"complete record, as `vmbench history` lists them", suite, len(records))
		return j, nil
	}
	base := records[pinned]
	j.pinned = &base
	since := []history.Record{base}
	newestHash := base.ParametersHash
	for _, r := range records[pinned+1:] {
		if r.Phase != vmbenchv1.SuiteComplete {
			continue
		}
		newestHash = r.ParametersHash
		if r.ParametersHash == base.ParametersHash {
			since = append(since, r)
		}
	}
	if newestHash != base.ParametersHash {
		j.reason = vmbenchv1.ReasonBaselineInsufficient
		j.message = fmt.Sprintf("the suite's parameters changed since the baseline record %s (parameters hash %s, now %s), so its runs "+
			"are not comparable with it: pin a record of the new parameters in spec.baseline.suite", suite, base.ParametersHash, newestHash)
		return j, nil
	}
	if len(since)-1 < cfg.Window {
		j.reason = vmbenchv1.ReasonBaselineInsufficient
		j.message = fmt.Sprintf("%d complete run(s) since the baseline record %s, %d needed for a verdict; nothing to do", len(since)-1,
			suite, cfg.Window)
		return j, nil
	}
	j.status.Runs = int32(cfg.Window)
	var metrics []detect.BaselineMetric
	var series []*findingSeries
	for _, s := range buildSeries(since, platforms) {
		// Only series the baseline record has, with a full window after it.
		if s.Record[0] != 0 || len(s.Runs)-1 < cfg.Window {
			continue
		}
		series = append(series, s)
		metrics = append(metrics, detect.BaselineMetric{Name: s.name(), Sense: s.Sense, Baseline: s.Runs[:1], Runs: s.Runs[1:]})
	}
	if len(metrics) == 0 {
		j.reason = vmbenchv1.ReasonBaselineInsufficient
		j.message = fmt.Sprintf("no series of the baseline record %s has %d runs since it: check that the suite still measures "+
			"what the baseline measured", suite, cfg.Window)
		return j, nil
	}
	verdicts, err := detect.CompareToBaseline(metrics, cfg)
	if err != nil {
		return j, err
	}
	var out []vmbenchv1.BaselineSeries
	within := 0
	for i, v := range verdicts {
		s := series[i]
		// JSON holds no NaN or infinity: a bound that is not finite is left at 0.
		bs := vmbenchv1.BaselineSeries{Benchmark: s.Benchmark, Metric: s.Metric, Platform: s.Platform, Arm: s.Arm,
			Ratio: finiteOr0(v.Ratio), RatioLow: finiteOr0(v.RatioLow), RatioHigh: finiteOr0(v.RatioHigh)}
		switch v.State {
		case detect.Drifted:
			bs.Verdict, bs.PValue = vmbenchv1.BaselineDrifted, finiteOr0(v.PDriftedHolm)
		case detect.Holds:
			within++
			continue
		default:
			bs.Verdict, bs.PValue = vmbenchv1.BaselineInconclusive, finiteOr0(v.PHoldsHolm)
		}
		out = append(out, bs)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if (out[a].Verdict == vmbenchv1.BaselineDrifted) != (out[b].Verdict == vmbenchv1.BaselineDrifted) {
			return out[a].Verdict == vmbenchv1.BaselineDrifted
		}
		return out[a].Ratio < out[b].Ratio
	})
	drifted := 0
	for _, s := range out {
		if s.Verdict == vmbenchv1.BaselineDrifted {
			drifted++
		}
	}
	if len(out) > maxBaselineSeries {
		out = out[:maxBaselineSeries]
	}
	j.status.Series = out
	switch {
	case drifted > 0:
		j.status.Verdict, j.reason = vmbenchv1.BaselineDrifted, vmbenchv1.ReasonBaselineDrifted
		var named []string
		for _, s := range out[:min(drifted, 3)] {
			named = append(named, fmt.Sprintf("%s %s on %s (%s) at %.3f of the baseline (90%% interval %.3f-%.3f)",
				s.Benchmark, s.Metric, s.Platform, s.Arm, s.Ratio, s.RatioLow, s.RatioHigh))
		}
		j.message = fmt.Sprintf("%d of %d series of the newest %d runs are worse than the baseline record %s by more than the %g%% "+
			"tolerance (Holm-adjusted, alpha %g): %s. A slow drift that no single step shows: look for what changed over these runs "+
			"with `vmbench history`; if the new level is accepted, re-pin the baseline by setting spec.baseline.suite to a recent "+
			"complete record (the history is kept)", drifted, len(metrics), cfg.Window, suite, tolerancePercent, cfg.Alpha, strings.Join(named, "; "))
	case within == len(metrics):
		j.status.Verdict, j.reason = vmbenchv1.BaselineWithin, vmbenchv1.ReasonBaselineWithin
		j.message = fmt.Sprintf("all %d series of the newest %d runs are within %g%% of the baseline record %s", len(metrics), cfg.Window,
			tolerancePercent, suite)
	default:
		j.status.Verdict, j.reason = vmbenchv1.BaselineInconclusive, vmbenchv1.ReasonBaselineInconclusive
		j.message = fmt.Sprintf("no series drifted from the baseline record %s, but %d of %d could not be shown within %g%% at their "+
			"noise (the first: %s %s on %s (%s) at %.3f): more runs or repetitions narrow it; nothing to do yet", suite, len(metrics)-within,
			len(metrics), tolerancePercent, out[0].Benchmark, out[0].Metric, out[0].Platform, out[0].Arm, out[0].Ratio)
	}
	return j, nil
}

// judgeBaseline reads the history and sets status.baseline, the condition Drifted and the pinned
// record's gauges from spec.baseline; without spec.baseline it removes them. It returns an event when Drifted turns
// True.
func (r *ScheduleReconciler) judgeBaseline(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule) ([]scheduleEvent, error) {
	st := &sched.Status
	if sched.Spec.Baseline == nil {
		st.Baseline = nil
		meta.RemoveStatusCondition(&st.Conditions, vmbenchv1.ConditionDrifted)
		metrics.RecordScheduleBaseline(sched.Namespace, sched.Name, nil)
		return nil, nil
	}
	records, err := r.History.List(ctx, sched)
	if err != nil {
		return nil, fmt.Errorf("reading the history of schedule %s to compare it with its baseline: %w", sched.Name, err)
	}
	j, err := judgeBaselineRecords(records, templatePlatforms(sched), sched.Spec.Baseline.Suite, baselineTolerancePercent(sched.Spec))
	if err != nil {
		return nil, fmt.Errorf("comparing the history of schedule %s with its baseline: %w", sched.Name, err)
	}
	st.Baseline = &j.status
	// The trend board's baseline line: the pinned record's values.
	metrics.RecordScheduleBaseline(sched.Namespace, sched.Name, j.pinned)
	return setDrifted(sched, j), nil
}

// setDrifted sets the condition Drifted from a judgement, and returns an event when it turns True.
func setDrifted(sched *vmbenchv1.BenchmarkSchedule, j baselineJudgement) []scheduleEvent {
	was := meta.IsStatusConditionTrue(sched.Status.Conditions, vmbenchv1.ConditionDrifted)
	c := metav1.Condition{Type: vmbenchv1.ConditionDrifted, Status: metav1.ConditionFalse, Reason: j.reason,
		Message: conditions.Truncate(j.message, 1024), ObservedGeneration: sched.Generation}
	if j.status.Verdict == vmbenchv1.BaselineDrifted {
		c.Status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
	if c.Status == metav1.ConditionTrue && !was {
		return []scheduleEvent{{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonBaselineDrifted, action: "CompareBaseline", note: c.Message}}
	}
	return nil
}

func finiteOr0(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
