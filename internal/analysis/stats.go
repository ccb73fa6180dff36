package analysis

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/interp"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

const (
	// Confidence is the level of every confidence interval in the report.
	Confidence = 0.95
	// Alpha is the family-wise error rate that Holm's correction holds over all the comparisons of
	// one report.
	Alpha = 0.05
	// Power is the probability of detecting a difference of the minimum detectable effect.
	Power = 0.8
	// Correction names the multiple-comparison correction in tables and legends.
	Correction = "Holm-Bonferroni"
)

// Summary is what the statistics of one metric on one platform are computed from.
//
// The unit of every statistic is the repetition: the nodes (or node pairs) of one run measure at
// the same time, on the same cluster, under the same disturbance, so they are not independent
// repetitions. Each repetition's values are averaged first; N counts repetitions, and the mean,
// standard deviation, interval and test are over the repetition means.
type Summary struct {
	// N is the number of repetitions; the number of samples when FromSamples is false.
	N      int
	Mean   float64
	StdDev float64
	// Samples is how many values were measured: every node of every repetition.
	Samples int
	// FromSamples is false when the status had dropped per-sample detail. N, Mean and StdDev are
	// then the status's running statistics over every sample, which cannot be grouped by
	// repetition again: each sample counts as a unit, which overstates the evidence when a run has
	// several nodes.
	FromSamples bool
}

// Summarize averages each repetition's samples and summarizes the repetition means. When the
// samples no longer cover every measurement (the controller trims them to fit the object's size
// budget, keeping exact running statistics) it falls back to those statistics, per sample.
func Summarize(m vmbenchv1.MetricSummary) Summary {
	if len(m.Samples) > 0 && len(m.Samples) == int(m.N) {
		means := RepetitionMeans(m.Samples)
		mean, sd := MeanStdDev(means)
		return Summary{N: len(means), Mean: mean, StdDev: sd, Samples: len(m.Samples), FromSamples: true}
	}
	return Summary{N: int(m.N), Mean: m.Mean, StdDev: m.StdDev, Samples: int(m.N)}
}

// RepetitionMeans is the mean of each repetition's samples, in repetition order.
func RepetitionMeans(samples []vmbenchv1.Sample) []float64 {
	byRep := map[int32][]float64{}
	var reps []int32
	for _, s := range samples {
		if _, ok := byRep[s.Repetition]; !ok {
			reps = append(reps, s.Repetition)
		}
		byRep[s.Repetition] = append(byRep[s.Repetition], s.Value)
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i] < reps[j] })
	means := make([]float64, len(reps))
	for i, r := range reps {
		means[i] = stat.Mean(byRep[r], nil)
	}
	return means
}

// MeanStdDev is the mean and the sample standard deviation of values; the deviation of one value
// is 0.
func MeanStdDev(values []float64) (mean, sd float64) {
	mean, sd = stat.MeanStdDev(values, nil)
	if len(values) < 2 {
		sd = 0
	}
	return mean, sd
}

// CoV is the coefficient of variation, standard deviation over the absolute mean, as a fraction.
// ok is false below two units or at a mean of zero.
func CoV(s Summary) (float64, bool) {
	if s.N < 2 || s.Mean == 0 {
		return 0, false
	}
	return s.StdDev / math.Abs(s.Mean), true
}

// CIHalfWidth is the half-width of the two-sided Student t confidence interval of the mean at the
// given level. ok is false below two values, where no interval exists.
func CIHalfWidth(s Summary, level float64) (halfWidth float64, ok bool) {
	if s.N < 2 {
		return 0, false
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(s.N - 1)}.Quantile(1 - (1-level)/2)
	return t * stat.StdErr(s.StdDev, float64(s.N)), true
}

// WelchResult is the outcome of Welch's unequal-variances t-test.
type WelchResult struct {
	// T is the statistic of b minus a.
	T float64
	// DF is the Welch–Satterthwaite degrees of freedom.
	DF float64
	// P is the two-sided p-value, uncorrected.
	P float64
}

// Welch compares the means of a and b without assuming equal variances. ok is false when either side
// has fewer than two values. When both sides have no spread at all, the test degenerates: equal
// means give p = 1, different means p = 0 (every value differs from every other side's value).
func Welch(a, b Summary) (WelchResult, bool) {
	if a.N < 2 || b.N < 2 {
		return WelchResult{}, false
	}
	se2, df := welchSE2DF(a, b)
	diff := b.Mean - a.Mean
	if se2 == 0 {
		if diff == 0 {
			return WelchResult{T: 0, DF: math.NaN(), P: 1}, true
		}
		return WelchResult{T: math.Copysign(math.Inf(1), diff), DF: math.NaN(), P: 0}, true
	}
	t := diff / math.Sqrt(se2)
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return WelchResult{T: t, DF: df, P: math.Min(p, 1)}, true
}

// welchSE2DF is the squared standard error of the difference of the means and its
// Welch–Satterthwaite degrees of freedom (NaN when both sides have no spread).
func welchSE2DF(a, b Summary) (se2, df float64) {
	va := a.StdDev * a.StdDev / float64(a.N)
	vb := b.StdDev * b.StdDev / float64(b.N)
	se2 = va + vb
	if se2 == 0 {
		return 0, math.NaN()
	}
	return se2, se2 * se2 / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
}

// MinDetectableEffect is the smallest difference of the means that Welch's two-sided test at level
// alpha detects with probability power, when the observed standard deviations are the true ones and
// each side has its observed number of repetitions. ok is false below two repetitions on a side;
// with no spread on either side every difference is detected and the effect is 0.
//
// The power is that of the test the report runs, computed under normality rather than by the
// shortcut (t(1 - alpha/2; df) + t(power; df)) * SE, which treats Welch's degrees of freedom and
// standard error as known: with 3 repetitions a side the test reaches only about 0.69 at that
// effect, not 0.8. The mean difference D and the two sample variances are independent, with
// D ~ N(d, SE²), SE² = σa²/na + σb²/nb, and (n-1)·s²/σ² chi-squared with n-1 degrees of freedom.
// Given the variances, the test rejects when |D| > c·SÊ, c = t(1 - alpha/2; df̂), SÊ and df̂ the
// estimated standard error and Welch–Satterthwaite df. So, with δ = d/SE and k = c·SÊ/SE,
//
//	power(δ) = E[ Φ̄(k - δ) + Φ(-k - δ) ]
//
// over the two chi-squared variables, integrated over their quantiles (u_a, u_b in (0, 1)) with a
// Gauss–Legendre rule in each; power rises with δ, which bisection solves for. MDE = δ·SE.
func MinDetectableEffect(a, b Summary, alpha, power float64) (float64, bool) {
	if a.N < 2 || b.N < 2 {
		return 0, false
	}
	se2, _ := welchSE2DF(a, b)
	if se2 == 0 {
		return 0, true
	}
	k, w := welchRejectionBounds(a, b, alpha)
	z := distuv.UnitNormal
	powerAt := func(delta float64) float64 {
		sum := 0.0
		for i := range k {
			sum += w[i] * (z.Survival(k[i]-delta) + z.CDF(-k[i]-delta))
		}
		return sum
	}
	lo, hi := 0.0, 4.0
	for powerAt(hi) < power {
		lo, hi = hi, 2*hi
	}
	for hi-lo > 1e-7*hi {
		mid := (lo + hi) / 2
		if powerAt(mid) < power {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2 * math.Sqrt(se2), true
}

// powerNodes is the Gauss–Legendre rule's size per variance: the MDE stays within 0.1% of its value
// with 256 nodes, from 2 repetitions a side and alpha down to 0.05/80.
const powerNodes = 32

// welchRejectionBounds are the nodes k = c·SÊ/SE and weights of the integral in
// MinDetectableEffect.
func welchRejectionBounds(a, b Summary, alpha float64) (k, w []float64) {
	u, uw := make([]float64, powerNodes), make([]float64, powerNodes)
	quad.Legendre{}.FixedLocations(u, uw, 0, 1)
	va, vb := a.StdDev*a.StdDev/float64(a.N), b.StdDev*b.StdDev/float64(b.N)
	se := math.Sqrt(va + vb)
	// ratios are s²/σ² at each node: chi-squared quantiles over their degrees of freedom.
	ratios := func(n int) []float64 {
		chi := distuv.ChiSquared{K: float64(n - 1)}
		out := make([]float64, len(u))
		for i := range u {
			out[i] = chi.Quantile(u[i]) / float64(n-1)
		}
		return out
	}
	ra, rb := ratios(a.N), ratios(b.N)
	// Welch's df lies between the smaller side's n - 1 and na + nb - 2.
	crit := newCriticalValues(float64(min(a.N, b.N)-1), float64(a.N+b.N-2), alpha)
	for i := range u {
		for j := range u {
			sa := Summary{N: a.N, StdDev: a.StdDev * math.Sqrt(ra[i])}
			sb := Summary{N: b.N, StdDev: b.StdDev * math.Sqrt(rb[j])}
			se2hat, df := welchSE2DF(sa, sb)
			k = append(k, crit.at(df)*math.Sqrt(se2hat)/se)
			w = append(w, uw[i]*uw[j])
		}
	}
	return k, w
}

// criticalValues is t(1 - alpha/2; df) over a range of df, interpolated so that the 1024 nodes of
// one MDE need 24 quantiles rather than 1024 (each costs an inverse incomplete beta function). The
// logarithm of the quantile is nearly linear in 1/df (the quantile grows like alpha^(-1/df) as df
// shrinks), so a spline over 1/df stays within 2e-4 of the quantile (relative), and within 1e-5
// where df starts at 2 or alpha is 0.05/80 or more.
type criticalValues struct {
	alpha  float64
	spline *interp.AkimaSpline
}

const criticalGrid = 24

func newCriticalValues(lo, hi, alpha float64) criticalValues {
	c := criticalValues{alpha: alpha}
	if hi-lo < 1e-9*hi {
		return c
	}
	xs, ys := make([]float64, criticalGrid), make([]float64, criticalGrid)
	for i := range xs {
		xs[i] = 1/hi + (1/lo-1/hi)*float64(i)/float64(criticalGrid-1)
		ys[i] = math.Log(c.quantile(1 / xs[i]))
	}
	spline := &interp.AkimaSpline{}
	if err := spline.Fit(xs, ys); err != nil {
		return c // the grid above is strictly increasing; compute every value directly otherwise
	}
	c.spline = spline
	return c
}

func (c criticalValues) quantile(df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - c.alpha/2)
}

func (c criticalValues) at(df float64) float64 {
	if c.spline == nil {
		return c.quantile(df)
	}
	return math.Exp(c.spline.Predict(1 / df))
}

// Holm adjusts p-values for the number of comparisons with Holm's step-down procedure: sorted
// ascending, the i-th smallest of m is multiplied by m - i + 1, and each adjusted value is at least
// the one before it (and at most 1). Rejecting where the adjusted value is below alpha holds the
// probability of any false rejection in the family at alpha, whatever the dependence between the
// tests. NaN entries are no comparison: they stay NaN and do not count in m.
func Holm(p []float64) []float64 {
	out := make([]float64, len(p))
	var order []int
	for i, v := range p {
		out[i] = math.NaN()
		if !math.IsNaN(v) {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return p[order[i]] < p[order[j]] })
	m := len(order)
	running := 0.0
	for rank, i := range order {
		running = math.Max(running, math.Min(1, float64(m-rank)*p[i]))
		out[i] = running
	}
	return out
}
