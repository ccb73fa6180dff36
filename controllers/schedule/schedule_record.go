package schedule

import (
	"math"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
	"github.com/vmbench/vmbench/internal/history"
)

// suiteFinished reports whether a suite ended, and how.
func suiteFinished(s *vmbenchv1.BenchmarkSuite) (vmbenchv1.SuitePhase, bool) {
	switch {
	case meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete):
		return vmbenchv1.SuiteComplete, true
	case meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionFailed):
		return vmbenchv1.SuiteFailed, true
	}
	return "", false
}

// finishedAt is when a finished suite ended: its completion time, or the time its final condition
// became true.
func finishedAt(s *vmbenchv1.BenchmarkSuite) time.Time {
	if s.Status.CompletionTime != nil {
		return s.Status.CompletionTime.Time
	}
	for _, t := range []string{vmbenchv1.ConditionComplete, vmbenchv1.ConditionFailed} {
		if c := meta.FindStatusCondition(s.Status.Conditions, t); c != nil && c.Status == "True" {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// scheduledAt is the time a schedule started a suite for. Namespace editors may change the
// annotation, so it counts only within the minute the suite's name encodes (scheduledSuiteName);
// otherwise the name's minute does, and the creation time when the name encodes none.
func scheduledAt(s *vmbenchv1.BenchmarkSuite) time.Time {
	named, ok := suiteTime(s.Name)
	if t, err := time.Parse(time.RFC3339, s.Annotations[vmbenchv1.AnnotationScheduledAt]); err == nil &&
		(!ok || t.Truncate(time.Minute).Equal(named)) {
		return t
	}
	if ok {
		return named
	}
	return s.CreationTimestamp.Time
}

// recordOf makes the record of a finished suite from its status.
func recordOf(s *vmbenchv1.BenchmarkSuite, phase vmbenchv1.SuitePhase) history.Record {
	rec := history.Record{Suite: s.Name, UID: s.UID, Scheduled: scheduledAt(s).UTC(), Phase: phase, Baseline: s.Spec.Baseline,
		ParametersHash: s.Status.ParametersHash, Environments: s.Status.Environments}
	if t := finishedAt(s); !t.IsZero() {
		rec.Finished = t.UTC()
	}
	type key struct{ benchmark, metric string }
	base := map[key]analysis.Summary{}
	for _, r := range s.Status.Results {
		if r.Platform != s.Spec.Baseline {
			continue
		}
		for _, m := range r.Metrics {
			if ls, ok := analysis.LogSummary(m); ok {
				base[key{r.Benchmark, m.Name}] = ls
			}
		}
	}
	for _, r := range s.Status.Results {
		for _, m := range r.Metrics {
			sum := analysis.Summarize(m)
			mr := history.MetricRecord{Benchmark: r.Benchmark, Platform: r.Platform, Metric: m.Name, Unit: m.Unit,
				Direction: m.Direction, N: sum.N, Samples: sum.Samples}
			ls, ok := analysis.LogSummary(m)
			if ok {
				mr.MeanLog, mr.VarLog = finitePtr(ls.Mean), finitePtr(ls.StdDev*ls.StdDev)
			}
			if b, has := base[key{r.Benchmark, m.Name}]; ok && has && r.Platform != s.Spec.Baseline {
				ratio, lo, hi, interval := analysis.RatioInterval(b, ls, m.Direction, analysis.Confidence)
				mr.Ratio = finitePtr(ratio)
				if interval {
					mr.RatioLow, mr.RatioHigh = finitePtr(lo), finitePtr(hi)
				}
			}
			rec.Metrics = append(rec.Metrics, mr)
		}
	}
	return rec
}

// finitePtr is a pointer to x, or nil when x is not a finite number, which JSON cannot hold.
func finitePtr(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}
