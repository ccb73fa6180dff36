package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The verdicts of one metric, one platform against the baseline.
const (
	// Slower: Welch's test survives Holm's correction and the platform is worse.
	Slower = "slower"
	// Faster: Welch's test survives Holm's correction and the platform is better.
	Faster = "faster"
	// Equivalent: the whole 95% interval of the ratio lies inside the tolerance band.
	Equivalent = "equivalent"
	// Inconclusive: neither, including every metric without an interval.
	Inconclusive = "inconclusive"
)

// Verdicts lists the verdicts in the order of every count.
var Verdicts = []string{Slower, Equivalent, Faster, Inconclusive}

// NoIntervalNote is the footnote of a ratio without an interval, in benchstat's words.
const NoIntervalNote = "need >= 2 repetitions per side for an interval"

// NonPositiveNote is the footnote of a metric with a value at or below 0, whose logarithm does not exist.
const NonPositiveNote = "a value <= 0: no ratio on the log scale"

// logRatio is a ratio on the natural-log scale in the higher-is-better sense: Est = log(ratio), with
// the standard error and degrees of freedom of its interval. SE is NaN when there is no interval; DF
// is NaN when SE is 0 (no spread on either side).
type logRatio struct {
	Est, SE, DF float64
}

func (l logRatio) hasInterval() bool { return !math.IsNaN(l.SE) }

// bounds is the two-sided interval at level on the log scale; a zero standard error gives the point.
func (l logRatio) bounds(level float64) (lo, hi float64) {
	if l.SE == 0 {
		return l.Est, l.Est
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: l.DF}.Quantile(1 - (1-level)/2)
	return l.Est - t*l.SE, l.Est + t*l.SE
}

// LogSummary summarizes the natural logarithms of a metric's repetition means, as Summarize does
// the means themselves. ok is false when a value is at or below 0. When the status dropped the
// per-sample detail, the delta method stands in: log of the mean, and standard deviation over mean.
func LogSummary(m vmbenchv1.MetricSummary) (Summary, bool) {
	if len(m.Samples) > 0 && len(m.Samples) == int(m.N) {
		means := RepetitionMeans(m.Samples)
		logs := make([]float64, len(means))
		for i, v := range means {
			if v <= 0 {
				return Summary{}, false
			}
			logs[i] = math.Log(v)
		}
		mean, sd := MeanStdDev(logs)
		return Summary{N: len(logs), Mean: mean, StdDev: sd, Samples: len(m.Samples), FromSamples: true}, true
	}
	if m.Mean <= 0 {
		return Summary{}, false
	}
	return Summary{N: int(m.N), Mean: math.Log(m.Mean), StdDev: m.StdDev / m.Mean, Samples: int(m.N)}, true
}

// ratioOfLogs is the ratio of other to base in the higher-is-better sense of dir, from the two
// sides' log summaries, with Welch's standard error and degrees of freedom when both sides have 2
// repetitions.
func ratioOfLogs(base, other Summary, dir vmbenchv1.Direction) logRatio {
	est := other.Mean - base.Mean
	if dir == vmbenchv1.LowerIsBetter {
		est = -est
	}
	if base.N < 2 || other.N < 2 {
		return logRatio{Est: est, SE: math.NaN(), DF: math.NaN()}
	}
	se2, df := welchSE2DF(base, other)
	return logRatio{Est: est, SE: math.Sqrt(se2), DF: df}
}

// RatioInterval is the ratio of other to base in the higher-is-better sense of dir and its interval
// at level, from the log summaries of both sides. ok is false below 2 repetitions on a side.
func RatioInterval(base, other Summary, dir vmbenchv1.Direction, level float64) (ratio, lo, hi float64, ok bool) {
	l := ratioOfLogs(base, other, dir)
	if !l.hasInterval() {
		return math.Exp(l.Est), 0, 0, false
	}
	a, b := l.bounds(level)
	return math.Exp(l.Est), math.Exp(a), math.Exp(b), true
}

// Judge is the verdict of one metric: equivalent when the interval [lo, hi] of the ratio lies inside
// [1 - tolerance, 1 + tolerance]; otherwise slower or faster when the Holm-adjusted test is
// significant, by the side of 1 the ratio is on; otherwise inconclusive. hasInterval false (too few
// repetitions) and significant nil (no test) can only be inconclusive.
func Judge(ratio, lo, hi float64, hasInterval bool, significant *bool, tolerance float64) string {
	switch {
	case hasInterval && lo >= 1-tolerance && hi <= 1+tolerance:
		return Equivalent
	case significant != nil && *significant && ratio < 1:
		return Slower
	case significant != nil && *significant && ratio > 1:
		return Faster
	}
	return Inconclusive
}

// judgeRows fills every row's ratio in the higher-is-better sense, its interval and its verdict.
// It runs after correct, whose Holm-adjusted significance it needs.
func judgeRows(rows []Row, tolerance float64) {
	for i := range rows {
		row := &rows[i]
		if row.log == nil {
			if row.Platform != "" && row.BaselineMean != nil {
				row.Verdict = Inconclusive
				row.RatioNote = NonPositiveNote
			}
			continue
		}
		l := *row.log
		row.SpeedRatio = pointer(math.Exp(l.Est))
		if !l.hasInterval() {
			row.RatioNote = NoIntervalNote
		} else {
			lo, hi := l.bounds(Confidence)
			row.SpeedRatioLow, row.SpeedRatioHigh = pointer(math.Exp(lo)), pointer(math.Exp(hi))
		}
		var lo, hi float64
		if row.SpeedRatioLow != nil {
			lo, hi = *row.SpeedRatioLow, *row.SpeedRatioHigh
		}
		row.Verdict = Judge(*row.SpeedRatio, lo, hi, l.hasInterval(), row.Significant, tolerance)
	}
}
