package detect

import (
	"math"
	"slices"
)

// Runs of one series are not always independent: a cluster's state (its other tenants, its
// firmware, its placement) drifts from day to day and back, so a run is more like the run before
// it than like a run a month earlier. The step test's variance assumes independent runs and is then
// too small. The detector models the between-run errors u_i as an AR(1) process, corr(u_i, u_j) =
// phi^|i-j|, estimates phi once per series, and widens the variance of each step by the ratio of
// its variance under that correlation to its variance without (autocorrelationFactor).
//
// phi is estimated from the residuals of the run means around the levels of the segments the search
// found (residualAutocorrelation): an analysis first searches as if the runs were independent,
// estimates phi around the steps it found, and searches again with it while the estimate grows (at
// most three times). Each false step of the first search absorbs some of a wander and lowers the
// estimate, so the estimate grows as the false steps go. A real step is a boundary of the segments
// and does not count as correlation.

// minRunsForAutocorrelation is the shortest series whose phi is estimated; a shorter one is taken
// as independent (its estimate would be mostly noise).
const minRunsForAutocorrelation = 20

// autocorrelationZ is the one-sided 95% normal quantile: the lag-1 autocorrelation of the residuals
// must exceed autocorrelationZ/√k to count.
const autocorrelationZ = 1.645

// maxAutocorrelation bounds phi: at 0.9 a run carries a tenth of an independent run's information
// about a level, and the factor is already 19 for a long segment.
const maxAutocorrelation = 0.9

// autocorrelationFactor is the variance of the step estimate (the difference of the weighted means
// of y[:split] and y[split:], weights w) when the between-run errors, of variance tau2 (or, without
// within-run variances, the whole error), are AR(1) with phi, over its variance when they are
// independent; at least 1.
func autocorrelationFactor(w []float64, split int, tau2, phi float64, withinKnown bool) float64 {
	if phi <= 0 {
		return 1
	}
	var w0, w1 float64
	for i, v := range w {
		if i < split {
			w0 += v
		} else {
			w1 += v
		}
	}
	shared := tau2
	if !withinKnown {
		shared = 1 / w[0]
	}
	// c_i is run i's coefficient in the step estimate; the independent variance is sum c_i²/w_i
	// and the correlation adds 2·shared·sum_{i<j} c_i c_j phi^(j-i), summed by the recursion
	// acc_j = phi·(acc_{j-1} + c_{j-1}).
	var indep, cross, acc, prev float64
	for i, v := range w {
		c := v / w1
		if i < split {
			c = -v / w0
		}
		if i > 0 {
			acc = phi * (acc + prev)
		}
		indep += c * c / v
		cross += c * acc
		prev = c
	}
	return math.Max(1, (indep+2*shared*cross)/indep)
}

// autocorrelationUpper is how many standard errors of the estimate Config.AutocorrelationUpperBound
// adds to phi: the allowance is then the autocorrelation the series cannot rule out at one standard
// error (sqrt((1-phi²)/k)) rather than the estimate. The estimate around the steps of a short series
// runs low: a false step in a wander takes the wander with it, and each segment's mean absorbs part
// of the rest; a low phi in the step test gives false changes.
const autocorrelationUpper = 1.0

// residualAutocorrelation is phi as the detector allows for it, estimated from the residuals of the
// run means around the levels of the segments that the steps at bounds delimit
// (lag1Autocorrelation): 0 for a series shorter than minRunsForAutocorrelation, without between-run
// variance, or whose residuals show no lag-1 autocorrelation that independent runs would exceed in
// only 5% of series; otherwise the estimate, in [0, maxAutocorrelation].
//
// upper is Config.AutocorrelationUpperBound: the residuals around the series' single mean then
// count as evidence too, since the steps found before the allowance may be false ones that absorbed
// the wander they stand for (around them the residuals look independent), and the allowance is the
// estimate (at least 0) plus autocorrelationUpper standard errors. A real step also makes the
// single mean's residuals correlate and so gives independent runs an allowance: that is the power it
// costs them.
func residualAutocorrelation(y, s2 []float64, bounds []int, upper bool) float64 {
	k := len(y)
	if k < minRunsForAutocorrelation {
		return 0
	}
	phi, z, ok := lag1Autocorrelation(y, s2, bounds)
	if !ok {
		return 0
	}
	if z < autocorrelationZ {
		if !upper || len(bounds) == 0 {
			return 0
		}
		if _, zAll, okAll := lag1Autocorrelation(y, s2, nil); !okAll || zAll < autocorrelationZ {
			return 0
		}
	}
	phi = math.Max(0, math.Min(maxAutocorrelation, phi))
	if upper {
		phi = math.Min(maxAutocorrelation, phi+autocorrelationUpper*math.Sqrt((1-phi*phi)/float64(k)))
	}
	return phi
}

// lag1Autocorrelation is the lag-1 autocovariance of the residuals of the run means around the
// levels of the segments that the steps at bounds delimit, over the pairs inside a segment and
// bias-corrected for the segments' means, divided by the between-run variance (the residuals'
// variance less the runs' own squared standard errors): the estimate of phi. z is the lag-1
// autocorrelation of the residuals (over their whole variance) times √k, about standard normal for
// independent runs. ok is false without pairs or between-run variance.
func lag1Autocorrelation(y, s2 []float64, bounds []int) (phi, z float64, ok bool) {
	k := len(y)
	cuts := append(append([]int{0}, bounds...), k)
	slices.Sort(cuts)
	var ss, lag, within float64
	pairs, groups := 0, 0
	for g := 0; g+1 < len(cuts); g++ {
		a, b := cuts[g], cuts[g+1]
		if b <= a {
			continue
		}
		groups++
		var m float64
		for i := a; i < b; i++ {
			m += y[i]
		}
		m /= float64(b - a)
		for i := a; i < b; i++ {
			ss += (y[i] - m) * (y[i] - m)
			within += s2[i]
			if i > a {
				lag += (y[i] - m) * (y[i-1] - m)
				pairs++
			}
		}
	}
	if pairs == 0 || k <= groups {
		return 0, 0, false
	}
	total := ss / float64(k-groups)
	tau2 := total - within/float64(k)
	if tau2 <= 0 {
		return 0, 0, false
	}
	// Around its own mean a segment's residuals correlate by about -1/length at lag 1.
	r := lag/float64(pairs) + total*float64(groups)/float64(k)
	return r / tau2, r / total * math.Sqrt(float64(k)), true
}
