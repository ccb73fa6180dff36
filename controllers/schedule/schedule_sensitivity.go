package schedule

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// sensitivities is, per analysed series (each platform's arm and its ratio to the baseline, as
// analyzeHistory read them), the smallest change the detector would find once MinRunsEachSide more
// runs follow: the detector's own figure from the same analysis (Analysis.Noise, over the runs
// since the series' last change, or over all its runs before MinHistory). A series of fewer than 2
// runs has none.
func sensitivities(results []seriesAnalysis) []metrics.SeriesSensitivity {
	var out []metrics.SeriesSensitivity
	for _, res := range results {
		s, mdc := res.series, res.analysis.Noise.MinDetectableChange
		if res.analysis.Runs < 2 || !(mdc > 0) {
			continue
		}
		out = append(out, metrics.SeriesSensitivity{Benchmark: s.Benchmark, Metric: s.Metric, Platform: s.Platform,
			Arm: string(s.Arm), MinDetectableChange: mdc})
	}
	return out
}

// suspectsOf is the analysed series whose newest runs suggest a change.
func suspectsOf(results []seriesAnalysis) []seriesAnalysis {
	var out []seriesAnalysis
	for _, res := range results {
		if res.analysis.Suspect != nil {
			out = append(out, res)
		}
	}
	return out
}

// recordSensitivity exports the sensitivities of the schedule's analysed history for its trend board.
func recordSensitivity(sched *vmbenchv1.BenchmarkSchedule, results []seriesAnalysis) {
	metrics.RecordScheduleSensitivity(sched.Namespace, sched.Name, sensitivities(results))
}

// recordEnvironmentChange exports when the latest environment change of the history happened. It
// is read from the whole history at each analysis, so a restart of the manager loses nothing of it.
func recordEnvironmentChange(sched *vmbenchv1.BenchmarkSchedule, records []history.Record) {
	metrics.RecordScheduleEnvironmentChange(sched.Namespace, sched.Name, records)
}
