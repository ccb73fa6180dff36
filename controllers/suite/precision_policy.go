package suite

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/analysis"
)

// plannedRepetitions is how many repetitions of every platform the suite plans now: spec.repetitions,
// or with spec.precision the number that status.precision has grown to, never above the cap.
func plannedRepetitions(suite *vmbenchv1.BenchmarkSuite) int32 {
	reps := suite.Spec.Repetitions
	p := suite.Spec.Precision
	if p == nil || suite.Status.Precision == nil {
		return reps
	}
	return max(reps, min(suite.Status.Precision.Repetitions, p.MaxRepetitions))
}

// metricPrecision is one named metric of one platform against the target.
type metricPrecision struct {
	Platform string
	// Name is "<benchmark>/<metric>", or the name from spec.precision.metrics when nothing matched it.
	Name string
	// HalfWidthPercent is valid when Known.
	HalfWidthPercent float64
	Known            bool
	// Why says why the half-width is not known.
	Why string
}

func (m metricPrecision) String() string {
	if !m.Known {
		return fmt.Sprintf("%s %s (%s)", m.Platform, m.Name, m.Why)
	}
	return fmt.Sprintf("%s %s ±%s%%", m.Platform, m.Name, percent(m.HalfWidthPercent))
}

// precisionJudgement is where every platform stands against the target.
type precisionJudgement struct {
	Platforms []vmbenchv1.PlatformPrecision
	// Above are the metrics whose half-width is known and above the target.
	Above []metricPrecision
	// Unknown are the metrics without a half-width: no results, fewer than two repetitions, or a
	// mean of 0 with spread. More repetitions do not help the first and last.
	Unknown []metricPrecision
}

func (j precisionJudgement) reached() bool { return len(j.Above) == 0 && len(j.Unknown) == 0 }

// halfWidthPercent is the 95% confidence half-width of a metric's mean in percent of its absolute
// mean, with the report's statistics: the repetition is the unit. A metric without spread has 0,
// whatever its mean; a mean of 0 with spread has no relative half-width.
func halfWidthPercent(m vmbenchv1.MetricSummary) (float64, string) {
	s := analysis.Summarize(m)
	hw, ok := analysis.CIHalfWidth(s, analysis.Confidence)
	switch {
	case !ok:
		return 0, fmt.Sprintf("%d repetition(s), an interval needs 2", s.N)
	case hw == 0:
		return 0, ""
	case s.Mean == 0:
		return 0, "mean 0: no relative interval"
	}
	if rel := 100 * hw / math.Abs(s.Mean); summary.Finite(rel) {
		return rel, ""
	}
	return 0, "mean next to 0: no relative interval"
}

// judgePrecision measures every metric that spec.precision names on every platform, from the results
// in status.
func judgePrecision(suite *vmbenchv1.BenchmarkSuite) precisionJudgement {
	var j precisionJudgement
	target := suite.Spec.Precision.HalfWidthPercent
	for _, p := range suite.Spec.Platforms {
		pp := vmbenchv1.PlatformPrecision{Platform: p.Name, Reached: true}
		for _, r := range suite.Status.Runs {
			if r.Platform == p.Name && r.Phase == vmbenchv1.RunSucceeded {
				pp.Repetitions++
			}
		}
		var worst *metricPrecision
		for _, m := range namedMetrics(suite, p.Name) {
			switch {
			case !m.Known:
				j.Unknown = append(j.Unknown, m)
			case m.HalfWidthPercent > target:
				j.Above = append(j.Above, m)
			}
			if worst == nil || worse(m, *worst) {
				w := m
				worst = &w
			}
		}
		if worst != nil {
			pp.Metric = worst.Name
			pp.Reached = worst.Known && worst.HalfWidthPercent <= target
			if worst.Known {
				v := summary.Round(worst.HalfWidthPercent, 4)
				pp.HalfWidthPercent = &v
			}
		}
		j.Platforms = append(j.Platforms, pp)
	}
	return j
}

// worse orders metrics from the furthest from the target: unknown first, then the widest.
func worse(a, b metricPrecision) bool {
	if a.Known != b.Known {
		return !a.Known
	}
	return a.HalfWidthPercent > b.HalfWidthPercent
}

// namedMetrics are the metrics of one platform that spec.precision names: every metric of a named
// benchmark, or the one named "<benchmark>/<metric>". A name that matches no result is reported
// unknown, so that a misspelt metric name shows up in the condition.
func namedMetrics(suite *vmbenchv1.BenchmarkSuite, platformName string) []metricPrecision {
	var out []metricPrecision
	for _, name := range suite.Spec.Precision.Metrics {
		benchmark, metric, one := strings.Cut(name, "/")
		found := false
		for _, r := range suite.Status.Results {
			if r.Platform != platformName || r.Benchmark != benchmark {
				continue
			}
			for _, m := range r.Metrics {
				if one && m.Name != metric {
					continue
				}
				found = true
				hw, why := halfWidthPercent(m)
				out = append(out, metricPrecision{Platform: platformName, Name: benchmark + "/" + m.Name,
					HalfWidthPercent: hw, Known: why == "", Why: why})
			}
		}
		if !found {
			out = append(out, metricPrecision{Platform: platformName, Name: name, Why: "no results"})
		}
	}
	return out
}

// nextRepetitions is how many repetitions to plan: one more than now when every planned run
// succeeded without a failed benchmark, some named metric's half-width is above the target, and the
// cap is not reached; else as many as now. A suite with failures ends as it is: more runs would not
// make it succeed.
func nextRepetitions(suite *vmbenchv1.BenchmarkSuite, j precisionJudgement) int32 {
	planned := plannedRepetitions(suite)
	if len(suite.Status.Runs) != int(planned)*len(suite.Spec.Platforms) || planned >= suite.Spec.Precision.MaxRepetitions {
		return planned
	}
	for _, r := range suite.Status.Runs {
		if r.Phase != vmbenchv1.RunSucceeded || r.Message != "" {
			return planned
		}
	}
	if len(j.Above) == 0 {
		return planned
	}
	return planned + 1
}

// applyPrecision grows the planned repetitions when the target is not reached yet, lists the new
// runs, and records each platform's precision. Without spec.precision it clears status.precision.
func applyPrecision(suite *vmbenchv1.BenchmarkSuite) precisionJudgement {
	st := &suite.Status
	if suite.Spec.Precision == nil {
		st.Precision = nil
		return precisionJudgement{}
	}
	j := judgePrecision(suite)
	st.Precision = &vmbenchv1.PrecisionStatus{Repetitions: nextRepetitions(suite, j), Platforms: j.Platforms}
	syncRuns(st, plannedRuns(suite))
	return j
}

// setPrecisionReached sets the PrecisionReached condition of a suite with spec.precision, after
// setConditions has set the phase: Unknown while runs go on, True or False once the suite ended.
func setPrecisionReached(suite *vmbenchv1.BenchmarkSuite, j precisionJudgement) {
	st := &suite.Status
	p := suite.Spec.Precision
	if p == nil {
		meta.RemoveStatusCondition(&st.Conditions, vmbenchv1.ConditionPrecisionReached)
		return
	}
	set := func(status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: vmbenchv1.ConditionPrecisionReached,
			Status: status, Reason: reason, Message: conditions.Truncate(msg, 1024), ObservedGeneration: suite.Generation})
	}
	target := "±" + percent(p.HalfWidthPercent) + "%"
	reps := plannedRepetitions(suite)
	ended := st.Phase == vmbenchv1.SuiteComplete || st.Phase == vmbenchv1.SuiteFailed
	switch {
	case !ended:
		set(metav1.ConditionUnknown, vmbenchv1.ReasonMeasuring, fmt.Sprintf("repetition %d of at most %d planned; target %s; %s",
			reps, p.MaxRepetitions, target, worstSoFar(j)))
	case j.reached():
		set(metav1.ConditionTrue, vmbenchv1.ReasonTargetReached, fmt.Sprintf("every named metric is within %s after %d repetitions; %s",
			target, reps, worstSoFar(j)))
	case len(j.Above) > 0 && st.Phase == vmbenchv1.SuiteComplete && reps >= p.MaxRepetitions:
		set(metav1.ConditionFalse, vmbenchv1.ReasonMaxRepetitionsReached, fmt.Sprintf(
			"after %d repetitions (spec.precision.maxRepetitions) these metrics are above the %s target: %s; "+
				"the results are valid, only less precise: raise maxRepetitions or loosen halfWidthPercent in a new suite, "+
				"or set cluster.dedicatedCPUs to cut the spread", reps, target, joinMetrics(append(j.Above, j.Unknown...))))
	default:
		msg := "the suite ended with failures before the target could be judged"
		if st.Phase == vmbenchv1.SuiteComplete {
			msg = "the suite ended with metrics that more repetitions cannot make precise"
		}
		if m := append(j.Unknown, j.Above...); len(m) > 0 {
			msg += ": " + joinMetrics(m)
		}
		set(metav1.ConditionFalse, vmbenchv1.ReasonPrecisionNotMeasured, msg+
			"; check the names in spec.precision.metrics against status.results, and the RunsFailed and Failed conditions")
	}
}

// worstSoFar names each platform's metric furthest from the target.
func worstSoFar(j precisionJudgement) string {
	var parts []string
	for _, p := range j.Platforms {
		switch {
		case p.Metric == "":
		case p.HalfWidthPercent == nil:
			parts = append(parts, fmt.Sprintf("%s %s unknown", p.Platform, p.Metric))
		default:
			parts = append(parts, fmt.Sprintf("%s %s ±%s%%", p.Platform, p.Metric, percent(*p.HalfWidthPercent)))
		}
	}
	if len(parts) == 0 {
		return "no results yet"
	}
	return "widest: " + strings.Join(parts, ", ")
}

func joinMetrics(ms []metricPrecision) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = m.String()
	}
	return strings.Join(parts, ", ")
}

// percent prints a percentage with at most two decimals.
func percent(x float64) string {
	return fmt.Sprintf("%.3g", summary.Round(x, 2))
}

// precisionProblem applies spec.precision's cross-field rules in Go, as the CRD states them.
func precisionProblem(suite *vmbenchv1.BenchmarkSuite) error {
	p := suite.Spec.Precision
	if p == nil {
		return nil
	}
	switch {
	case suite.Spec.Repetitions < 2:
		return fmt.Errorf("spec.precision needs spec.repetitions of 2 or more: one repetition has no confidence interval")
	case p.MaxRepetitions < suite.Spec.Repetitions:
		return fmt.Errorf("spec.precision.maxRepetitions %d is below spec.repetitions %d: raise maxRepetitions", p.MaxRepetitions, suite.Spec.Repetitions)
	}
	for _, name := range p.Metrics {
		benchmark, _, _ := strings.Cut(name, "/")
		found := false
		for _, b := range suite.Spec.Benchmarks {
			found = found || b.Name == benchmark
		}
		if !found {
			return fmt.Errorf("spec.precision.metrics: %q names no benchmark of spec.benchmarks: name a benchmark, or <benchmark>/<metric>", name)
		}
	}
	return nil
}
