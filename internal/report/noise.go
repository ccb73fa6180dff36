package report

import (
	"fmt"
	"sort"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// DefaultNoiseThreshold is the noise, in percent of a node's CPU, above which a sample counts as
// taken on a busy node.
const DefaultNoiseThreshold = 10.0

// NoisyMarker follows the platform of a table row with samples taken under noise.
const NoisyMarker = "!"

// NoiseKey names one metric of one benchmark on one platform.
type NoiseKey struct {
	Benchmark, Platform, Metric string
}

// Noisy counts, per metric, the samples taken while the node's noise (CPU used by others plus steal
// in pods, steal in VMs) was above a threshold.
type Noisy map[NoiseKey]int

// Total is the number of noisy samples.
func (n Noisy) Total() int {
	total := 0
	for _, c := range n {
		total += c
	}
	return total
}

// NoisySamples finds the samples whose recorded noise is above threshold. Samples without a noise
// figure (older runners, a node that could not be sampled) are never counted.
func NoisySamples(suite *vmbenchv1.BenchmarkSuite, threshold float64) Noisy {
	noisy := Noisy{}
	for _, res := range suite.Status.Results {
		for _, m := range res.Metrics {
			for _, s := range m.Samples {
				if s.Noise != nil && *s.Noise > threshold {
					noisy[NoiseKey{res.Benchmark, res.Platform, m.Name}]++
				}
			}
		}
	}
	return noisy
}

// DropNoisy returns a copy of suite without the samples whose noise is above threshold, their
// metrics' statistics taken from the samples left. A metric whose status kept only statistics (its
// samples were trimmed to fit the object) cannot be filtered; it stays whole and is returned in kept.
func DropNoisy(suite *vmbenchv1.BenchmarkSuite, threshold float64) (filtered *vmbenchv1.BenchmarkSuite, dropped int, kept Noisy) {
	return dropSamples(suite, func(_ string, s vmbenchv1.Sample) bool { return s.Noise != nil && *s.Noise > threshold })
}

// DropMigrated returns a copy of suite without the samples measured while a live migration of a
// run's VMI ran (samples[].migrated), as DropNoisy does for noisy ones; kept counts those of metrics
// whose samples were trimmed from status, which stay whole. The migration benchmark's own samples
// stay: each measures a migration, which it overlaps by design (the manager no longer marks them,
// but statuses written before it stopped have them marked).
func DropMigrated(suite *vmbenchv1.BenchmarkSuite) (filtered *vmbenchv1.BenchmarkSuite, dropped int, kept Noisy) {
	migration := analysis.MigrationBenchmarks(suite.Spec.Benchmarks)
	return dropSamples(suite, func(bench string, s vmbenchv1.Sample) bool { return s.Migrated && !migration[bench] })
}

// dropSamples returns a copy of suite without the samples drop says yes to, their metrics'
// statistics taken from the samples left, and how many were dropped; a metric whose status kept only
// statistics stays whole, counted in kept.
func dropSamples(suite *vmbenchv1.BenchmarkSuite, drop func(benchmark string, s vmbenchv1.Sample) bool) (filtered *vmbenchv1.BenchmarkSuite, dropped int, kept Noisy) {
	filtered = suite.DeepCopy()
	kept = Noisy{}
	for ri := range filtered.Status.Results {
		res := &filtered.Status.Results[ri]
		for mi := range res.Metrics {
			m := &res.Metrics[mi]
			var clean []vmbenchv1.Sample
			var values []float64
			for _, s := range m.Samples {
				if drop(res.Benchmark, s) {
					continue
				}
				clean = append(clean, s)
				values = append(values, s.Value)
			}
			removed := len(m.Samples) - len(clean)
			if removed == 0 {
				continue
			}
			if len(m.Samples) != int(m.N) {
				kept[NoiseKey{res.Benchmark, res.Platform, m.Name}] = removed
				continue
			}
			dropped += removed
			m.Samples = clean
			m.N = int32(len(clean))
			m.Mean, m.StdDev = 0, 0
			if len(values) > 0 {
				m.Mean, m.StdDev = MeanStdDev(values)
			}
		}
	}
	return filtered, dropped, kept
}

// MarkNoisy returns a copy of rows in which every row with noisy samples, on the baseline's side or
// the platform's, has NoisyMarker after its platform; for the table only, so that CSV and JSON keep
// plain platform names.
func MarkNoisy(rows []Row, noisy Noisy) []Row {
	out := make([]Row, len(rows))
	copy(out, rows)
	for i := range out {
		r := &out[i]
		if noisy[NoiseKey{r.Benchmark, r.BaselinePlatform, r.Metric}] == 0 && noisy[NoiseKey{r.Benchmark, r.Platform, r.Metric}] == 0 {
			continue
		}
		if r.Platform == "" {
			r.Platform = "-"
		}
		r.Platform += " " + NoisyMarker
	}
	return out
}

// NoiseNotes are the report's notes about noise: what the marker means, which metrics it marks
// and, after --drop-noisy, how many samples were left out.
func NoiseNotes(noisy Noisy, threshold float64, dropped int, dropAsked bool) []string {
	var notes []string
	if dropAsked {
		notes = append(notes, fmt.Sprintf("--drop-noisy: %d sample(s) measured while the node's noise exceeded %g%% were left out of the statistics", dropped, threshold))
	}
	if len(noisy) == 0 {
		return notes
	}
	keys := make([]NoiseKey, 0, len(noisy))
	for k := range noisy {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Benchmark != b.Benchmark {
			return a.Benchmark < b.Benchmark
		}
		if a.Metric != b.Metric {
			return a.Metric < b.Metric
		}
		return a.Platform < b.Platform
	})
	const listed = 10
	parts := make([]string, 0, listed)
	for _, k := range keys[:min(listed, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %s on %s (%d)", k.Benchmark, k.Metric, k.Platform, noisy[k]))
	}
	if len(keys) > listed {
		parts = append(parts, fmt.Sprintf("and %d more", len(keys)-listed))
	}
	what := "rows marked " + NoisyMarker + " include"
	advice := "; rerun on a quieter cluster or report with --drop-noisy"
	if dropAsked {
		what = "rows marked " + NoisyMarker + " still include"
		advice = ", which could not be left out because the status kept only their statistics"
	}
	notes = append(notes, fmt.Sprintf("%s %d sample(s) measured while the node's noise (CPU used by others plus steal in pods, steal in VMs) exceeded %g%%%s: %s",
		what, noisy.Total(), threshold, advice, strings.Join(parts, ", ")))
	return notes
}
