// Package detect finds changes in a series of benchmark runs: steps over the history (change
// points), runs that suggest a step not yet confirmed (suspects), and drift away from a pinned
// baseline. Each run enters as its own summary of the logarithms of its repetition means (n, mean,
// variance), so that every test weighs a run by its own precision and by the noise between runs.
// The package knows nothing of Kubernetes; docs/change-detection.md explains the method.
package detect

import (
	"fmt"
	"math"
	"time"
)

// Run is one finished run of a series: the summary of the natural logarithms of its repetition
// means for one metric (or of the per-repetition VM/container log-ratios).
type Run struct {
	// ID names the run (the suite's name, for example) in findings.
	ID string `json:"id"`
	// Time is when the run finished; informational, the order of the slice is the series' order.
	Time time.Time `json:"time"`
	// N is the number of repetitions; at least 1.
	N int `json:"n"`
	// Mean is the mean of the logarithms.
	Mean float64 `json:"mean"`
	// Variance is the sample variance (n-1 denominator) of the logarithms; ignored when N is 1.
	Variance float64 `json:"variance"`
}

// Sense says which way a metric improves.
type Sense int

const (
	// HigherIsBetter is a throughput, a bandwidth, an operation rate.
	HigherIsBetter Sense = iota
	// LowerIsBetter is a latency, a duration.
	LowerIsBetter
)

// varianceFloor keeps a weight finite for a run whose repetitions were identical: a relative
// standard error of 1e-6 is below any measurement's precision.
const varianceFloor = 1e-12

// validateRuns names the first run that cannot enter a test and what to change.
func validateRuns(runs []Run) error {
	for i, r := range runs {
		switch {
		case r.N < 1:
			return fmt.Errorf("run %d (%q) has n=%d: a run needs at least 1 repetition; drop the run from the series", i, r.ID, r.N)
		case math.IsNaN(r.Mean) || math.IsInf(r.Mean, 0):
			return fmt.Errorf("run %d (%q) has mean %v: the mean of the logarithms must be finite (values at or below 0 have no logarithm); drop the run from the series", i, r.ID, r.Mean)
		case r.N >= 2 && (math.IsNaN(r.Variance) || math.IsInf(r.Variance, 0) || r.Variance < 0):
			return fmt.Errorf("run %d (%q) has variance %v: the variance of the logarithms must be finite and not negative", i, r.ID, r.Variance)
		}
	}
	return nil
}

// priorDF is the weight, in degrees of freedom, of the series' pooled within-run variance in each
// run's moderated variance (Smyth's empirical-Bayes moderation, with a fixed prior). A variance from
// 2 to 5 repetitions is too noisy to weigh runs by: with each run's raw variance, 5-8% of
// synthetic series without change alarmed at a nominal 5%, with 10 prior degrees of freedom 1.4-2.2%
// (docs/change-detection.md).
const priorDF = 10

// squaredStandardErrors is each run's squared standard error of its mean: its moderated variance
// (its own, with N-1 degrees of freedom, averaged with the variance pooled over the series' runs,
// with priorDF) divided by its N. A run of one repetition, which has no variance of its own, gets
// the pooled variance. When no run has a variance, every entry is 0 and the tests fall back to the
// spread of the run means alone.
func squaredStandardErrors(runs []Run) []float64 {
	var pooled, df float64
	for _, r := range runs {
		if r.N >= 2 {
			pooled += float64(r.N-1) * r.Variance
			df += float64(r.N - 1)
		}
	}
	if df > 0 {
		pooled /= df
	}
	s2 := make([]float64, len(runs))
	for i, r := range runs {
		v := pooled
		if r.N >= 2 {
			v = (priorDF*pooled + float64(r.N-1)*r.Variance) / (priorDF + float64(r.N-1))
		}
		if df > 0 {
			s2[i] = math.Max(v/float64(r.N), varianceFloor)
		}
	}
	return s2
}

func means(runs []Run) []float64 {
	y := make([]float64, len(runs))
	for i, r := range runs {
		y[i] = r.Mean
	}
	return y
}
