package detect

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time this process has used: on a loaded machine the figure to compare, since
// the wall time includes the waits for a core.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSeries is count series of runs runs on the noisy machine, each with a 5% step at a third
// of its length and a 4% step back at two thirds: a history with work for the search.
func benchSeries(count, runs int) [][]Run {
	out := make([][]Run, count)
	for i := range out {
		levels := make([]float64, runs)
		for j := range levels {
			switch {
			case j >= 2*runs/3:
				levels[j] = 0.01
			case j >= runs/3:
				levels[j] = 0.05
			}
		}
		out[i] = series(uint64(9000+i), levels, noisyMachine)
	}
	return out
}

// BenchmarkAnalyze100x1000 is one analysis of 100 series of 1,000 runs each (docs/performance.md):
//
//	go test ./internal/detect -run '^$' -bench Analyze100x1000 -benchtime 5x
func BenchmarkAnalyze100x1000(b *testing.B) {
	benchmark100x1000(b, DefaultConfig())
}

// BenchmarkAnalyze100x1000UpperBound is BenchmarkAnalyze100x1000 with
// Config.AutocorrelationUpperBound, whose steps make the series be searched again.
func BenchmarkAnalyze100x1000UpperBound(b *testing.B) {
	cfg := DefaultConfig()
	cfg.AutocorrelationUpperBound = true
	benchmark100x1000(b, cfg)
}

func benchmark100x1000(b *testing.B, cfg Config) {
	all := benchSeries(100, 1000)
	b.ResetTimer()
	start := cpuTime(b)
	defer func() { b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e9, "cpu-s/op") }()
	for range b.N {
		for _, runs := range all {
			if _, err := Analyze(runs, HigherIsBetter, cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkAnalyzeLargestHistory is the largest history a schedule keeps: 4032 series (12
// benchmarks, 4 platforms, 48 metrics, arms and ratios) of 200 runs.
//
//	go test ./internal/detect -run '^$' -bench AnalyzeLargestHistory -benchtime 3x
func BenchmarkAnalyzeLargestHistory(b *testing.B) {
	all := benchSeries(4032, 200)
	cfg := DefaultConfig()
	b.ResetTimer()
	start := cpuTime(b)
	defer func() { b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N)/1e9, "cpu-s/op") }()
	for range b.N {
		for _, runs := range all {
			if _, err := Analyze(runs, HigherIsBetter, cfg); err != nil {
				b.Fatal(err)
			}
		}
	}
}
