package controllers

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/detect"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// sensitivities is, per series of the records' current history (each platform's arm and its ratio
// to the baseline, as the detector reads them), the smallest change the detector would find once
// MinRunsEachSide more runs follow: the detector's own figure (Analysis.Noise, over the runs since
// the series' last change) from MinHistory runs on, and before that the same computation over all
// the series' runs, from 2 runs on. A series the detector cannot read has none.
func sensitivities(records []history.Record, platforms map[string]vmbenchv1.PlatformType) []metrics.SeriesSensitivity {
	cfg := detect.DefaultConfig()
	var out []metrics.SeriesSensitivity
	for _, s := range buildSeries(currentSeries(records), platforms) {
		a, err := detect.Analyze(s.Runs, s.Sense, cfg)
		if err != nil {
			continue
		}
		mdc := a.Noise.MinDetectableChange
		if a.State == detect.InsufficientHistory {
			if mdc, err = detect.MinDetectableChange(s.Runs, cfg.MinRunsEachSide, cfg); err != nil {
				continue
			}
		}
		out = append(out, metrics.SeriesSensitivity{Benchmark: s.Benchmark, Metric: s.Metric, Platform: s.Platform,
			Arm: string(s.Arm), MinDetectableChange: mdc})
	}
	return out
}

// recordSensitivity exports the sensitivities of the schedule's history for its trend board.
func recordSensitivity(sched *vmbenchv1.BenchmarkSchedule, records []history.Record) {
	metrics.RecordScheduleSensitivity(sched.Namespace, sched.Name, sensitivities(records, templatePlatforms(sched)))
}

// recordEnvironmentChange exports when the latest environment change of the history happened. It
// is read from the whole history at each analysis, so a restart of the manager loses nothing of it.
func recordEnvironmentChange(sched *vmbenchv1.BenchmarkSchedule, records []history.Record) {
	metrics.RecordScheduleEnvironmentChange(sched.Namespace, sched.Name, records)
}
