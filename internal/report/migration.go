package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
	"github.com/vmbench/vmbench/internal/disruption"
)

// MigrationNotes says which samples were measured while a live migration of a run's VMI ran
// (samples[].migrated) and how the report treats them: they stay in the statistics, as they are what
// a workload on that platform saw, and are counted here so that a reader can weigh them. It also
// names each migration that failed or was aborted, in KubeVirt's words.
//
// With --drop-migrated (dropAsked) it says how many samples were left out (dropped); suite is the
// suite as stored, before DropMigrated.
func MigrationNotes(suite *vmbenchv1.BenchmarkSuite, dropAsked bool, dropped int) []string {
	var notes []string
	if dropAsked {
		notes = append(notes, fmt.Sprintf("--drop-migrated: %d sample(s) measured while a live migration of a run's VMs ran were left out of the statistics", dropped))
	}
	counts := map[string]int{}
	total := 0
	migration := migrationBenchmarks(suite)
	for _, res := range suite.Status.Results {
		if migration[res.Benchmark] {
			continue // each of its samples measures a migration (marked in statuses from before the manager stopped): the migration lines say so
		}
		for _, m := range res.Metrics {
			for _, s := range m.Samples {
				if s.Migrated {
					counts[fmt.Sprintf("%s %s on %s", res.Benchmark, m.Name, res.Platform)]++
					total++
				}
			}
		}
	}
	migrations, notCompleted := 0, []string{}
	for _, run := range suite.Status.Runs {
		for _, m := range run.Migrations {
			migrations++
			if m.Outcome == vmbenchv1.MigrationFailed || m.Outcome == vmbenchv1.MigrationAborted {
				notCompleted = append(notCompleted, fmt.Sprintf("run %s VMI %s: %s: %s", run.Name, m.VMI, m.Outcome, m.Message))
			}
		}
	}
	if total > 0 {
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		const listed = 10
		parts := make([]string, 0, listed+1)
		for _, k := range keys[:min(listed, len(keys))] {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, counts[k]))
		}
		if len(keys) > listed {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-listed))
		}
		treated := "they stay in the statistics, as what a workload saw across the move (--drop-migrated leaves them out), and are counted here"
		if dropAsked {
			treated = "--drop-migrated left them out of the statistics where status kept their samples"
		}
		notes = append(notes, fmt.Sprintf("%d sample(s) were measured while one of %d live migration(s) of a run's VMs ran "+
			"(status.runs[].migrations); %s: %s", total, migrations, treated, strings.Join(parts, ", ")))
	}
	if len(notCompleted) > 0 {
		notes = append(notes, "live migrations that did not complete: "+strings.Join(notCompleted, "; "))
	}
	return notes
}

// migrationBenchmarks are the suite's benchmarks of type migration, by name.
func migrationBenchmarks(suite *vmbenchv1.BenchmarkSuite) map[string]bool {
	out := map[string]bool{}
	for _, b := range suite.Spec.Benchmarks {
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

// migrationFigure summarizes metric name of res, each migration one sample; nil without one.
func migrationFigure(res vmbenchv1.BenchmarkResult, name string) *MigrationFigure {
	m := analysis.FindMetricSummary(res.Metrics, name)
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

// migrationLinesOf gives a line per migration benchmark and VM platform that has results, in the
// order of status.results.
func migrationLinesOf(suite *vmbenchv1.BenchmarkSuite) []MigrationLine {
	migration := migrationBenchmarks(suite)
	emulated := analysis.EmulatedPlatforms(suite)
	var lines []MigrationLine
	for _, res := range suite.Status.Results {
		if !migration[res.Benchmark] {
			continue
		}
		l := MigrationLine{
			Benchmark:   res.Benchmark,
			Platform:    res.Platform,
			Emulated:    res.Emulated || emulated[res.Platform],
			Pause:       migrationFigure(res, disruption.MetricPause),
			Background:  migrationFigure(res, disruption.MetricBackgroundGap),
			Total:       migrationFigure(res, disruption.MetricTotal),
			Dip:         migrationFigure(res, disruption.MetricDip),
			Recovery:    migrationFigure(res, disruption.MetricRecovery),
			NotMeasured: int(res.Failures),
		}
		if m := analysis.FindMetricSummary(res.Metrics, disruption.MetricCompleted); m != nil {
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
		v := trimFloat3(f.Mean) + unit
		if f.Low == nil {
			return v + " [n/a]"
		}
		return v + " " + formatInterval(f.Low, f.High)
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

// MigrationLegend says what the migration lines' figures are, and that the container arm's figure
// (a pod evicted and rescheduled) is not measured.
const MigrationLegend = "migration: means over the live migrations, each migration one sample (over every repetition), " +
	"with their 95% interval (Student t, clipped at 0) in brackets, [n/a] below two; pause: the longest gap of the guest's 10 ms ticker " +
	"during the migration, to be read against the background gap, the longest in the 10 s before it (the guest's stalls without one); " +
	"total: KubeVirt's migration start to end (whole seconds); dip: the work lost against the rate before the migration, " +
	"for the time until back at rate; migrations that did not complete count in N of K and are named in the notes " +
	"(docs/migration.md); pod eviction: not measured (container arm not built)"

// migrationTexts are the first screen's migration lines; each names its benchmark when the suite
// has more than one migration benchmark.
func (r *Report) migrationTexts() []string {
	benchmarks := map[string]bool{}
	for _, l := range r.Migrations {
		benchmarks[l.Benchmark] = true
	}
	out := make([]string, 0, len(r.Migrations))
	for _, l := range r.Migrations {
		out = append(out, l.Text(len(benchmarks) > 1))
	}
	return out
}

// writeMigrations prints the migration lines of the first screen.
func (r *Report) writeMigrations(w io.Writer) {
	for _, t := range r.migrationTexts() {
		fmt.Fprintln(w, t)
	}
}
