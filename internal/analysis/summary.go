package analysis

import (
	"math"

	"github.com/vmbench/vmbench/internal/results"
)

// The kinds of GroupSummary.
const (
	KindBenchmark = "benchmark"
	KindResource  = "resource"
	KindOverall   = "overall"
)

// VerdictCounts counts a group's metrics by verdict.
type VerdictCounts struct {
	Slower       int `json:"slower"`
	Equivalent   int `json:"equivalent"`
	Faster       int `json:"faster"`
	Inconclusive int `json:"inconclusive"`
}

func (c *VerdictCounts) add(verdict string) {
	switch verdict {
	case Slower:
		c.Slower++
	case Equivalent:
		c.Equivalent++
	case Faster:
		c.Faster++
	case Inconclusive:
		c.Inconclusive++
	}
}

// Total is the number of metrics counted.
func (c VerdictCounts) Total() int { return c.Slower + c.Equivalent + c.Faster + c.Inconclusive }

// GroupSummary sums up the metrics of one benchmark, one resource, or all of a platform's.
type GroupSummary struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	// Ratio is the geometric mean of the metrics' ratios (higher-is-better sense), each benchmark
	// weighing the same however many metrics it has; Low and High bound its 95% interval, which
	// treats the metrics as independent. Nil when no metric has a ratio, or (the bounds) when one
	// has no interval.
	Ratio *float64 `json:"ratio"`
	Low   *float64 `json:"low"`
	High  *float64 `json:"high"`
	// IntervalNote says why the interval is missing.
	IntervalNote string `json:"intervalNote,omitempty"`
	// Metrics is how many metrics the geometric mean covers; Excluded how many it leaves out: the
	// tool's own CPU and memory usage, values at or below 0, and the points of HPL sweeps.
	Metrics  int `json:"metrics"`
	Excluded int `json:"excluded"`
	// Counts are the verdicts of every metric of the group, excluded ones included.
	Counts VerdictCounts `json:"counts"`
	// Worst is the metric of the geometric mean with the lowest ratio.
	Worst *Row `json:"worst,omitempty"`

	log *logRatio
}

// NoInterval says that the group has a ratio but no interval for it (footnote ¹ of the first
// screen): some metric in it lacks 2 repetitions a side.
func (g GroupSummary) NoInterval() bool { return g.Ratio != nil && g.Low == nil }

// Groups are the platform's summary rows in the order of the first screen: benchmarks, resources,
// overall.
func (ps PlatformSummary) Groups() []GroupSummary {
	return append(append(append([]GroupSummary{}, ps.Benchmarks...), ps.Resources...), ps.Overall)
}

// PlatformSummary is every summary of one platform against the baseline.
type PlatformSummary struct {
	Platform   string         `json:"platform"`
	Emulated   bool           `json:"emulated"`
	Overall    GroupSummary   `json:"overall"`
	Benchmarks []GroupSummary `json:"benchmarks"`
	Resources  []GroupSummary `json:"resources"`
}

// combine is the mean of parts on the log scale (their geometric mean), with the standard error of
// a mean of independent estimates, sqrt(sum se²)/k, and the Welch–Satterthwaite degrees of freedom
// of that sum, (sum se²)² / sum(se⁴/df). Without every part's interval there is none.
func combine(parts []logRatio) logRatio {
	k := float64(len(parts))
	var est, v, denom float64
	interval := true
	for _, p := range parts {
		est += p.Est / k
		if !p.hasInterval() {
			interval = false
			continue
		}
		pv := p.SE * p.SE
		v += pv
		if pv > 0 {
			denom += pv * pv / p.DF
		}
	}
	switch {
	case !interval:
		return logRatio{Est: est, SE: math.NaN(), DF: math.NaN()}
	case v == 0:
		return logRatio{Est: est, SE: 0, DF: math.NaN()}
	}
	return logRatio{Est: est, SE: math.Sqrt(v) / k, DF: v * v / denom}
}

// summarize builds the summaries of every platform with rows, in platform order.
func summarize(rows []Row, platforms []string) []PlatformSummary {
	var out []PlatformSummary
	for _, platform := range platforms {
		var mine []Row
		for _, row := range rows {
			if row.Platform == platform {
				mine = append(mine, row)
			}
		}
		if len(mine) == 0 {
			continue
		}
		ps := PlatformSummary{Platform: platform}
		var benchmarks []string
		for _, row := range mine {
			benchmarks = AppendNew(benchmarks, row.Benchmark)
			ps.Emulated = ps.Emulated || row.Emulated
		}
		var benchLogs []logRatio
		for _, bench := range benchmarks {
			g := group(KindBenchmark, bench, mine, func(r Row) bool { return r.Benchmark == bench })
			ps.Benchmarks = append(ps.Benchmarks, g)
			if g.log != nil {
				benchLogs = append(benchLogs, *g.log)
			}
		}
		for _, res := range Resources {
			// Each benchmark's metrics of this resource are one part: HPCC's STREAM figures weigh as
			// much in memory as sysbench-memory's, not 8 times as much.
			var parts []logRatio
			for _, bench := range benchmarks {
				g := group(KindBenchmark, bench, mine, func(r Row) bool { return r.Benchmark == bench && r.Resource == res })
				if g.log != nil {
					parts = append(parts, *g.log)
				}
			}
			g := group(KindResource, res, mine, func(r Row) bool { return r.Resource == res })
			if g.Counts.Total() == 0 {
				continue
			}
			g.setRatio(parts)
			ps.Resources = append(ps.Resources, g)
		}
		ps.Overall = group(KindOverall, "overall", mine, func(Row) bool { return true })
		ps.Overall.setRatio(benchLogs)
		out = append(out, ps)
	}
	return out
}

// group counts the verdicts of the rows that match and takes the geometric mean of their ratios.
func group(kind, name string, rows []Row, match func(Row) bool) GroupSummary {
	g := GroupSummary{Kind: kind, Name: name}
	var parts []logRatio
	for i, row := range rows {
		if !match(row) {
			continue
		}
		g.Counts.add(row.Verdict)
		// An HPL sweep's points stay out too: HPL_Tflops, the fastest point, stands for HPL, so that
		// an hpcc benchmark weighs the same with a sweep as without.
		// Flags and netperf's figures about its own interval are no speed either.
		if row.log == nil || usageMetrics[row.Metric] || results.IsHPLPointMetric(row.Metric) || results.IsFlag(row.Unit) ||
			results.IsConfidenceMetric(row.Metric) {
			g.Excluded++
			continue
		}
		parts = append(parts, *row.log)
		if g.Worst == nil || *row.SpeedRatio < *g.Worst.SpeedRatio {
			g.Worst = &rows[i]
		}
	}
	g.Metrics = len(parts)
	g.setRatio(parts)
	return g
}

// setRatio sets the geometric mean of parts and its interval.
func (g *GroupSummary) setRatio(parts []logRatio) {
	g.Ratio, g.Low, g.High, g.log, g.IntervalNote = nil, nil, nil, nil, ""
	if len(parts) == 0 {
		return
	}
	l := combine(parts)
	g.log = &l
	g.Ratio = pointer(math.Exp(l.Est))
	if !l.hasInterval() {
		g.IntervalNote = NoIntervalNote
		return
	}
	lo, hi := l.bounds(Confidence)
	g.Low, g.High = pointer(math.Exp(lo)), pointer(math.Exp(hi))
}
