package analysis

import (
	"fmt"
	"math"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
)

// The migration benchmark's line per benchmark and VM platform: what `vmbench report` prints on its
// first screen and what the manager writes into status.migrationSummaries, one computation for both.

// MigrationBenchmarks are the benchmarks of type migration among benchmarks, by name.
func MigrationBenchmarks(benchmarks []vmbenchv1.Benchmark) map[string]bool {
	out := map[string]bool{}
	for _, b := range benchmarks {
		if b.Type == vmbenchv1.BenchmarkMigration {
			out[b.Name] = true
		}
	}
	return out
}

// MigrationLine is what one migration benchmark's migrations cost the guest on one VM platform:
// the first screen's line for it.
type MigrationLine struct {
	Benchmark, Platform string
	Emulated            bool
	// Pause, Background (the longest ticker gap before each migration), Total, Dip and Recovery are
	// the figures' means over the migrations, each migration one sample, with their 95% intervals
	// (Student t, as every interval of the report); nil where no migration was measured, or the
	// status predates the figure.
	Pause, Background, Total, Dip, Recovery *MigrationFigure
	// Completed of Made migrations completed (the flag completed); NotMeasured executions failed
	// (the benchmark's failures: no figure, named in the notes).
	Completed, Made, NotMeasured int
}

// MigrationFigure is one figure's mean over the migrations and its 95% interval; Low and High
// are nil below two migrations. Low is at least 0: no figure of a migration is negative, so the part
// of a symmetric interval below 0 holds no possible mean.
type MigrationFigure struct {
	Mean      float64
	Low, High *float64
	N         int
}

// migrationSummary is the statistics of a migration figure over its samples, each migration one:
// from the samples, or, where status trimmed them, from its count, mean and standard deviation over
// every sample, which are exactly those.
func migrationSummary(m vmbenchv1.MetricSummary) Summary {
	if len(m.Samples) == int(m.N) {
		values := make([]float64, len(m.Samples))
		for i, s := range m.Samples {
			values[i] = s.Value
		}
		mean, sd := MeanStdDev(values)
		return Summary{N: len(values), Mean: mean, StdDev: sd, Samples: len(values), FromSamples: true}
	}
	return Summary{N: int(m.N), Mean: m.Mean, StdDev: m.StdDev, Samples: int(m.N)}
}

// MigrationFigureOf summarizes metric name of res, each migration one sample; nil without one.
func MigrationFigureOf(res vmbenchv1.BenchmarkResult, name string) *MigrationFigure {
	m := FindMetricSummary(res.Metrics, name)
	if m == nil || m.N == 0 {
		return nil
	}
	s := migrationSummary(*m)
	f := &MigrationFigure{Mean: s.Mean, N: s.N}
	if ci, ok := CIHalfWidth(s, Confidence); ok {
		f.Low, f.High = pointer(max(s.Mean-ci, 0)), pointer(s.Mean+ci)
	}
	return f
}

// MigrationLines gives a line per migration benchmark and VM platform that has results, in the
// order of status.results.
func MigrationLines(suite *vmbenchv1.BenchmarkSuite) []MigrationLine {
	migration := MigrationBenchmarks(suite.Spec.Benchmarks)
	emulated := EmulatedPlatforms(suite)
	var lines []MigrationLine
	for _, res := range suite.Status.Results {
		if !migration[res.Benchmark] {
			continue
		}
		l := MigrationLine{
			Benchmark:   res.Benchmark,
			Platform:    res.Platform,
			Emulated:    res.Emulated || emulated[res.Platform],
			Pause:       MigrationFigureOf(res, disruption.MetricPause),
			Background:  MigrationFigureOf(res, disruption.MetricBackgroundGap),
			Total:       MigrationFigureOf(res, disruption.MetricTotal),
			Dip:         MigrationFigureOf(res, disruption.MetricDip),
			Recovery:    MigrationFigureOf(res, disruption.MetricRecovery),
			NotMeasured: int(res.Failures),
		}
		if m := FindMetricSummary(res.Metrics, disruption.MetricCompleted); m != nil {
			// The flags' sum is the completed count, from the mean where status trimmed the samples.
			s := migrationSummary(*m)
			l.Made, l.Completed = s.N, int(math.Round(s.Mean*float64(s.N)))
		}
		lines = append(lines, l)
	}
	return lines
}

// Text is the line as the first screen prints it: "vm: migration: pause 310 ms [285, 335]
// (background gap 30 ms [17.6, 42.4]), total 4 s [1.52, 6.48], dip 50% [50, 50] for 0.8 s [0.8, 0.8]
// (3 of 4 completed, 1 not measured)", without the background gap where status has none; named
// names the benchmark, for a suite with more than one migration benchmark.
func (l MigrationLine) Text(named bool) string {
	name := l.Platform
	if l.Emulated {
		name += " (emulated)"
	}
	what := "migration"
	if named {
		what += " " + l.Benchmark
	}
	figure := func(f *MigrationFigure, unit string) string {
		if f == nil {
			return "n/a"
		}
		v := Float3(f.Mean) + unit
		if f.Low == nil {
			return v + " [n/a]"
		}
		return v + " " + FormatInterval(f.Low, f.High)
	}
	counts := fmt.Sprintf("%d of %d completed", l.Completed, l.Made)
	if l.NotMeasured > 0 {
		counts += fmt.Sprintf(", %d not measured", l.NotMeasured)
	}
	pause := figure(l.Pause, " ms")
	if l.Background != nil {
		pause += " (background gap " + figure(l.Background, " ms") + ")"
	}
	return fmt.Sprintf("%s: %s: pause %s, total %s, dip %s for %s (%s)", name, what, pause, figure(l.Total, " s"),
		figure(l.Dip, "%"), figure(l.Recovery, " s"), counts)
}

// MigrationTexts are the lines' texts, in their order; each names its benchmark when the lines
// cover more than one migration benchmark.
func MigrationTexts(lines []MigrationLine) []string {
	benchmarks := map[string]bool{}
	for _, l := range lines {
		benchmarks[l.Benchmark] = true
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, l.Text(len(benchmarks) > 1))
	}
	return out
}

// Float3 prints a figure with three significant digits, and whole above 100: 0.871, 42.5, 712.
func Float3(v float64) string {
	switch {
	case v == 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprint(v)
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// FormatInterval prints [lo, hi] with the precision of Float3, or [n/a] where there is none.
func FormatInterval(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return "[n/a]"
	}
	return fmt.Sprintf("[%s, %s]", Float3(*lo), Float3(*hi))
}
