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

// MigrationParamsByName are the parameters (defaults applied) of the benchmarks of type migration
// among benchmarks, by name: the manager's per-migration results and the report's lines read a
// sweep's rates from them.
func MigrationParamsByName(benchmarks []vmbenchv1.Benchmark) map[string]*vmbenchv1.MigrationParams {
	out := map[string]*vmbenchv1.MigrationParams{}
	for _, b := range benchmarks {
		if b.Type == vmbenchv1.BenchmarkMigration {
			out[b.Name] = b.WithDefaults().Migration
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
	// Peer is, for a VM, the longest time a peer outside it (the run's probe worker pod) lost it
	// across each migration (peer_gap_ms); nil where no peer reported.
	Peer *MigrationFigure
	// Completed of Made migrations completed (the flag completed); NotMeasured executions failed
	// (the benchmark's failures: no figure, named in the notes).
	Completed, Made, NotMeasured int
	// Eviction says the line is the container arm's (a Container platform: the probe worker pod
	// evicted and replaced), whose BackAtRate is the time from each eviction to the load back at
	// rate.
	Eviction   bool
	BackAtRate *MigrationFigure

	// In a dirty-rate sweep (migration.dirtyRates), the line is one rate's: DirtyRate as the spec
	// spells it ("64Mi"), SetMiBps the same in MiB a second, Dirtied the rate the guest's writer
	// achieved before each migration (MiB/s), Previous the line of the rate before it in the spec
	// (nil for the first), which the text compares the pause and the total with, and NotConverged
	// KubeVirt's words for the migrations at this rate that did not complete (from
	// status.runs[].migrations). All empty outside a sweep.
	DirtyRate    string
	SetMiBps     float64
	Dirtied      *MigrationFigure
	Previous     *MigrationLine
	NotConverged []string
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
// In a dirty-rate sweep, name is the figure at its rate (disruption.RateMetric).
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
// order of status.results; a benchmark with migration.dirtyRates gives a line per rate with
// results instead, in the spec's order of the rates.
func MigrationLines(suite *vmbenchv1.BenchmarkSuite) []MigrationLine {
	params := MigrationParamsByName(suite.Spec.Benchmarks)
	emulated := EmulatedPlatforms(suite)
	containers := map[string]bool{}
	for _, p := range suite.Spec.Platforms {
		containers[p.Name] = p.Type == vmbenchv1.PlatformContainer
	}
	if len(suite.Spec.Platforms) == 0 {
		containers["container"] = true // the default platform
	}
	var lines []MigrationLine
	for _, res := range suite.Status.Results {
		p, ok := params[res.Benchmark]
		if !ok {
			continue
		}
		base := MigrationLine{Benchmark: res.Benchmark, Platform: res.Platform, Emulated: res.Emulated || emulated[res.Platform],
			NotMeasured: int(res.Failures), Eviction: containers[res.Platform]}
		if len(p.DirtyRates) == 0 {
			lines = append(lines, migrationLineOf(base, res, func(name string) string { return name }))
			continue
		}
		words := notConverged(suite, res.Platform, p)
		var previous *MigrationLine
		for _, q := range p.DirtyRates {
			rate := q.String()
			if FindMetricSummary(res.Metrics, disruption.RateMetric(disruption.MetricCompleted, rate)) == nil {
				continue
			}
			l := base
			l.DirtyRate, l.SetMiBps, l.Previous, l.NotConverged = rate, float64(q.Value())/(1<<20), previous, words[rate]
			l = migrationLineOf(l, res, func(name string) string { return disruption.RateMetric(name, rate) })
			l.Dirtied = MigrationFigureOf(res, disruption.RateMetric(disruption.MetricDirtyRate, rate))
			if previous != nil {
				// The failures of the benchmark are counted once, on its first rate's line.
				l.NotMeasured = 0
			}
			lines = append(lines, l)
			previous = &lines[len(lines)-1]
		}
	}
	// Previous points into lines, which append may have moved: point each at its copy now.
	for i := range lines {
		if lines[i].Previous != nil && i > 0 {
			lines[i].Previous = &lines[i-1]
		}
	}
	return lines
}

// migrationLineOf fills l's figures from res, each figure's metric named by name.
func migrationLineOf(l MigrationLine, res vmbenchv1.BenchmarkResult, name func(string) string) MigrationLine {
	l.Pause = MigrationFigureOf(res, name(disruption.MetricPause))
	l.Background = MigrationFigureOf(res, name(disruption.MetricBackgroundGap))
	l.Total = MigrationFigureOf(res, name(disruption.MetricTotal))
	l.Dip = MigrationFigureOf(res, name(disruption.MetricDip))
	l.Recovery = MigrationFigureOf(res, name(disruption.MetricRecovery))
	l.Peer = MigrationFigureOf(res, name(disruption.MetricPeerGap))
	if l.Eviction {
		l.BackAtRate = MigrationFigureOf(res, disruption.MetricBackAtRate)
	}
	if m := FindMetricSummary(res.Metrics, name(disruption.MetricCompleted)); m != nil {
		// The flags' sum is the completed count, from the mean where status trimmed the samples.
		s := migrationSummary(*m)
		l.Made, l.Completed = s.N, int(math.Round(s.Mean*float64(s.N)))
	}
	return l
}

// maxWords bounds KubeVirt's words quoted per migration in a line, which status bounds to 512.
const maxWords = 120

// MigrationIndex is which of the run's benchmark migrations m is (from 1), for its dirty rate in a
// sweep: the index in its object's name, <run>-mig-<k> (the manager's migrationName), where the run
// recorded it; else position, its place among the migrations of the master VMI that the run
// recorded (a status from before runs[].migrations[].object, or one whose object was not found).
func MigrationIndex(run string, position int, m vmbenchv1.RunMigration) int {
	if n, ok := vmbenchv1.MigrationObjectIndex(run, m.Object); ok {
		return n
	}
	return position
}

// notConverged are, per dirty rate, KubeVirt's words for the migrations of the runs of platform
// that did not complete: migration k of a run's master VMI (in the order status.runs[].migrations
// recorded them) ran at p.DirtyRateAt(k).
func notConverged(suite *vmbenchv1.BenchmarkSuite, platform string, p *vmbenchv1.MigrationParams) map[string][]string {
	out := map[string][]string{}
	for _, run := range suite.Status.Runs {
		if run.Platform != platform {
			continue
		}
		master := run.Name + "-" + vmbenchv1.RoleMaster
		k := 0
		for _, m := range run.Migrations {
			if m.VMI != master || m.StartedElsewhere() {
				continue
			}
			k++
			_, rate, ok := p.DirtyRateAt(MigrationIndex(run.Name, k, m))
			if !ok || m.Outcome == vmbenchv1.MigrationCompleted {
				continue
			}
			w := string(m.Outcome)
			if m.Outcome == vmbenchv1.MigrationRunning {
				w = "timed out (Running when the probe ended)"
			}
			if m.Message != "" {
				w += ": " + m.Message
			}
			if len(w) > maxWords {
				w = w[:maxWords-3] + "..."
			}
			out[rate] = append(out[rate], w)
		}
	}
	return out
}

// growth says how figure cur compares with prev, the same figure at the rate before: "grew" where
// cur's interval lies above prev's, "fell" below it, "no clear change" where they overlap, and the
// means where either has no interval (below two migrations).
func growth(prev, cur *MigrationFigure, unit string) string {
	switch {
	case prev == nil || cur == nil:
		return "n/a"
	case prev.Low == nil || cur.Low == nil:
		return fmt.Sprintf("%s%s → %s%s, no interval", Float3(prev.Mean), unit, Float3(cur.Mean), unit)
	case *cur.Low > *prev.High:
		return "grew"
	case *cur.High < *prev.Low:
		return "fell"
	}
	return "no clear change"
}

// Text is the line as the first screen prints it: "vm: migration: pause 310 ms [285, 335]
// (background gap 30 ms [17.6, 42.4]), peer lost it for 1200 ms [..], total 4 s [1.52, 6.48], dip
// 50% [50, 50] for 0.8 s [0.8, 0.8] (3 of 4 completed, 1 not measured)", without the background gap
// where status has none and without the peer where none reported (peer_gap_ms); named
// names the benchmark, for a suite with more than one migration benchmark. The container arm's line
// is "container: pod eviction: back at rate after 2.1 s [1.5, 2.7], work lost 40% [..] for 1.2 s [..]
// (pause 700 ms [..] (background gap ..), total 1.5 s [..]; 2 of 2 completed)".
func (l MigrationLine) Text(named bool) string {
	name := l.Platform
	if l.Emulated {
		name += " (emulated)"
	}
	what := "migration"
	if named {
		what += " " + l.Benchmark
	}
	if l.DirtyRate != "" {
		what += " at dirty rate " + l.DirtyRate + "/s"
		if l.Dirtied != nil {
			what += fmt.Sprintf(" (achieved %s MiB/s", Float3(l.Dirtied.Mean))
			if l.SetMiBps > 0 && l.Dirtied.Mean < AchievedShare*l.SetMiBps {
				what += ", below the set rate: the guest could not write faster"
			}
			what += ")"
		}
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
	if len(l.NotConverged) > 0 {
		counts += "; did not converge: " + l.NotConverged[0]
		if len(l.NotConverged) > 1 {
			counts += fmt.Sprintf(" (and %d more)", len(l.NotConverged)-1)
		}
	}
	if l.Eviction {
		what = "pod eviction"
		if named {
			what += " " + l.Benchmark
		}
		// total is eviction accepted to replacement Ready, from the pod's condition: whole seconds.
		return fmt.Sprintf("%s: %s: back at rate after %s, work lost %s for %s (pause %s, evicted to Ready %s in whole seconds; %s)", name, what,
			figure(l.BackAtRate, " s"), figure(l.Dip, "%"), figure(l.Recovery, " s"), pause, figure(l.Total, " s"), counts)
	}
	if l.Peer != nil {
		pause += ", peer lost it for " + figure(l.Peer, " ms")
	}
	text := fmt.Sprintf("%s: %s: pause %s, total %s, dip %s for %s (%s)", name, what, pause, figure(l.Total, " s"),
		figure(l.Dip, "%"), figure(l.Recovery, " s"), counts)
	if p := l.Previous; p != nil && l.Completed > 0 {
		text += fmt.Sprintf("; against %s/s: pause %s, total %s", p.DirtyRate, growth(p.Pause, l.Pause, " ms"), growth(p.Total, l.Total, " s"))
	}
	return text
}

// AchievedShare is the share of the set dirty rate below which a line says the guest could not
// write faster.
const AchievedShare = 0.9

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
