package detect

import (
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The tests below are random-effects meta-regressions of the run means (log scale):
//
//	mean_i = level(segment of i) + u_i + e_i,   u_i ~ N(0, tau²),   e_i ~ N(0, s_i²)
//
// s_i² is run i's own squared standard error (Variance/N) and tau² the variance between runs on
// the same software, estimated from the data with DerSimonian and Laird's method of moments. Each
// run is weighted by 1/(s_i² + tau²). The standard error of a coefficient is Hartung and Knapp's:
// the weighted residual mean square times the inverse of the weighted cross-product matrix, with
// Student's t on k - p degrees of freedom. When every run has the same weight this is exactly the
// pooled two-sample t-test on the run means, whatever tau² is estimated to be; when runs differ in
// n and variance, the precise ones count more, and a machine whose runs scatter more than their
// own variances say (tau² > 0) widens every interval instead of raising false alarms.

// stepFit is the two-segment model of runs [0, split) and [split, k).
type stepFit struct {
	// Diff is the after-minus-before difference of the weighted means (log scale).
	Diff float64
	// SE is its Hartung-Knapp standard error; DF its degrees of freedom (k - 2).
	SE, DF float64
	// P is the two-sided p-value of Diff = 0.
	P float64
	// Tau2 is the between-run variance estimated with both segments' levels removed.
	Tau2 float64
	// Weights are the random-effects weights 1/(s² + tau²) (all 1 without within-run variances).
	Weights []float64
	// RSS is the weighted residual sum of squares of the step model.
	RSS float64
	// Factor is how much the autocorrelation of the runs widened the variance of Diff (1 for
	// independent runs).
	Factor float64
}

// fitStep tests a step between y[:split] and y[split:]. It needs split >= 1, len(y)-split >= 1
// and len(y) >= 3.
func fitStep(y, s2 []float64, split int) stepFit {
	return fitStepAR(y, s2, split, 0)
}

// fitStepAR is fitStep for runs whose between-run errors are AR(1) with phi (autocorr.go): the
// variance of the step is widened by autocorrelationFactor.
func fitStepAR(y, s2 []float64, split int, phi float64) stepFit {
	f := fitLevels(y, s2, split, make([]float64, len(y)), phi)
	f.P = twoSidedP(f.Diff, f.SE, f.DF)
	return f
}

// fitLevels is fitStepAR without the p-value, its weights written to w (len(y) entries): the
// search over every split of the suspect skips the p-value of a step too small to count.
func fitLevels(y, s2 []float64, split int, w []float64, phi float64) stepFit {
	return fitLevelsWith(y, s2, split, w, phi, dlTau2(y, s2, [][2]int{{0, split}, {split, len(y)}}))
}

// fitLevelsWith is fitLevels with the between-run variance tau2 given.
func fitLevelsWith(y, s2 []float64, split int, w []float64, phi, tau2 float64) stepFit {
	k := len(y)
	groups := [2][2]int{{0, split}, {split, k}}
	fillREWeights(w, s2, tau2)
	var mean, sumW [2]float64
	for g, r := range groups {
		mean[g], sumW[g] = weightedMean(y[r[0]:r[1]], w[r[0]:r[1]])
	}
	rss := 0.0
	for g, r := range groups {
		for i := r[0]; i < r[1]; i++ {
			d := y[i] - mean[g]
			rss += w[i] * d * d
		}
	}
	df := float64(k - 2)
	f := stepFit{Diff: mean[1] - mean[0], DF: df, Tau2: tau2, Weights: w, RSS: rss}
	f.Factor = autocorrelationFactor(w, split, tau2, phi, s2[0] != 0)
	f.SE = math.Sqrt(rss / df * (1/sumW[0] + 1/sumW[1]) * f.Factor)
	if phi > 0 {
		// The residual mean square of correlated runs has fewer degrees of freedom: Bartlett's
		// (1 - phi²)/(1 + phi²) of them.
		f.DF = math.Max(1, df*(1-phi*phi)/(1+phi*phi))
	}
	return f
}

// dlTau2 is DerSimonian and Laird's moment estimate of the between-run variance around the
// groups' own levels: with fixed-effect weights w = 1/s², Q = sum w (y - ybar_group)², and
// tau² = max(0, (Q - (k - groups)) / (sum w - sum_group sum w² / sum_group w)). It is 0 when no run
// has a within-run variance (every s² is 0); the weights are then equal and the Hartung-Knapp
// scale alone carries the spread.
func dlTau2(y, s2 []float64, groups [][2]int) float64 {
	if s2[0] == 0 {
		return 0
	}
	var q, c float64
	for _, r := range groups {
		var sw, sw2, swy float64
		for i := r[0]; i < r[1]; i++ {
			w := 1 / s2[i]
			sw += w
			sw2 += w * w
			swy += w * y[i]
		}
		m := swy / sw
		for i := r[0]; i < r[1]; i++ {
			d := y[i] - m
			q += d * d / s2[i]
		}
		c += sw - sw2/sw
	}
	if c <= 0 {
		return 0
	}
	return math.Max(0, (q-float64(len(y)-len(groups)))/c)
}

func reWeights(s2 []float64, tau2 float64) []float64 {
	w := make([]float64, len(s2))
	fillREWeights(w, s2, tau2)
	return w
}

func fillREWeights(w, s2 []float64, tau2 float64) {
	for i, v := range s2 {
		if v == 0 && tau2 == 0 {
			w[i] = 1
			continue
		}
		w[i] = 1 / (v + tau2)
	}
}

func weightedMean(y, w []float64) (mean, sumW float64) {
	var swy float64
	for i := range y {
		sumW += w[i]
		swy += w[i] * y[i]
	}
	return swy / sumW, sumW
}

// twoSidedP is P(|T| >= |est/se|) for Student's t with df degrees of freedom. A zero standard
// error gives 0 for a non-zero estimate and 1 for a zero one.
func twoSidedP(est, se, df float64) float64 {
	if se == 0 || math.IsNaN(se) {
		if est == 0 {
			return 1
		}
		return 0
	}
	return 2 * distuvT(df).Survival(math.Abs(est/se))
}

func tQuantile(p, df float64) float64 {
	return distuvT(df).Quantile(p)
}

func distuvT(df float64) distuv.StudentsT {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
}

// wls fits y on the columns of x with weights w. It returns the coefficients, the unscaled
// covariance (X'WX)^-1 and the weighted residual sum of squares; ok is false for a singular design.
func wls(x [][]float64, y, w []float64) (beta []float64, cov *mat.Dense, rss float64, ok bool) {
	k, p := len(y), len(x)
	xm := mat.NewDense(k, p, nil)
	for j, col := range x {
		for i, v := range col {
			xm.Set(i, j, v)
		}
	}
	xtwx := mat.NewSymDense(p, nil)
	xtwy := mat.NewVecDense(p, nil)
	for a := range p {
		for b := a; b < p; b++ {
			s := 0.0
			for i := range k {
				s += w[i] * xm.At(i, a) * xm.At(i, b)
			}
			xtwx.SetSym(a, b, s)
		}
		s := 0.0
		for i := range k {
			s += w[i] * xm.At(i, a) * y[i]
		}
		xtwy.SetVec(a, s)
	}
	var chol mat.Cholesky
	if !chol.Factorize(xtwx) {
		return nil, nil, 0, false
	}
	var b mat.VecDense
	if err := chol.SolveVecTo(&b, xtwy); err != nil {
		return nil, nil, 0, false
	}
	var inv mat.SymDense
	if err := chol.InverseTo(&inv); err != nil {
		return nil, nil, 0, false
	}
	beta = make([]float64, p)
	for j := range p {
		beta[j] = b.AtVec(j)
	}
	for i := range k {
		fit := 0.0
		for j := range p {
			fit += xm.At(i, j) * beta[j]
		}
		d := y[i] - fit
		rss += w[i] * d * d
	}
	cov = mat.DenseCopyOf(&inv)
	return beta, cov, rss, true
}

// looksLikeDrift fits a step at split beside a common linear trend (over the run index, with the
// step test's weights) and is true when the trend is significant at trendAlpha while the step is
// not significant at alpha: a slow drift then explains the difference between the two sides, and
// no single run is where it happened. Drift is the baseline verdict's business, not a change
// point's. A real step on a flat series keeps its significance beside the trend, or shows no trend.
func looksLikeDrift(y []float64, split int, f stepFit, alpha, trendAlpha float64) bool {
	k := len(y)
	if k < 4 {
		return false
	}
	ones, idx, step := make([]float64, k), make([]float64, k), make([]float64, k)
	for i := range k {
		ones[i] = 1
		idx[i] = float64(i)
		if i >= split {
			step[i] = 1
		}
	}
	beta, cov, rss, ok := wls([][]float64{ones, idx, step}, y, f.Weights)
	if !ok {
		return false
	}
	df := float64(k - 3)
	scale := rss / df
	pTrend := twoSidedP(beta[1], math.Sqrt(scale*cov.At(1, 1)), df)
	pStep := twoSidedP(beta[2], math.Sqrt(scale*cov.At(2, 2)), df)
	return pTrend <= trendAlpha && pStep > alpha
}

// oneGroup is the random-effects summary of runs that share one level: the between-run variance
// and the typical per-run variance s² + tau² that a future run of the same kind would have.
type oneGroup struct {
	Tau2 float64
	// RunVar is the mean of s_i² + tau² (the Hartung-Knapp scale times the mean of 1/w without
	// within-run variances): the variance of one run's mean around the level.
	RunVar float64
	// WithinSE2 is the mean of the runs' own squared standard errors.
	WithinSE2 float64
}

func summarizeGroup(y, s2 []float64) oneGroup {
	k := len(y)
	g := oneGroup{Tau2: dlTau2(y, s2, [][2]int{{0, k}})}
	w := reWeights(s2, g.Tau2)
	m, _ := weightedMean(y, w)
	rss := 0.0
	for i := range y {
		d := y[i] - m
		rss += w[i] * d * d
		g.WithinSE2 += s2[i]
	}
	g.WithinSE2 /= float64(k)
	q := rss / float64(k-1)
	for i := range y {
		g.RunVar += q / w[i]
	}
	g.RunVar /= float64(k)
	return g
}

// feSums are prefix sums over runs of the fixed-effect weights w = 1/s² and of w², w·y and w·y²
// (y taken from its first value, which keeps the sums of squares small): DerSimonian and Laird's
// tau² of any two adjacent groups then costs a few look-ups (the suspect search tries every split).
type feSums struct {
	origin           float64
	w, w2, wy, wyy   []float64
	withoutVariances bool
}

func newFESums(y, s2 []float64) feSums {
	k := len(y)
	f := feSums{origin: y[0], w: make([]float64, k+1), w2: make([]float64, k+1), wy: make([]float64, k+1), wyy: make([]float64, k+1),
		withoutVariances: s2[0] == 0}
	if f.withoutVariances {
		return f
	}
	for i := range y {
		w, d := 1/s2[i], y[i]-f.origin
		f.w[i+1] = f.w[i] + w
		f.w2[i+1] = f.w2[i] + w*w
		f.wy[i+1] = f.wy[i] + w*d
		f.wyy[i+1] = f.wyy[i] + w*d*d
	}
	return f
}

// tau2 is dlTau2 of the groups [0, split) and [split, k) of the runs the sums are of.
func (f feSums) tau2(split, k int) float64 {
	if f.withoutVariances {
		return 0
	}
	var q, c float64
	for _, r := range [2][2]int{{0, split}, {split, k}} {
		sw := f.w[r[1]] - f.w[r[0]]
		swy := f.wy[r[1]] - f.wy[r[0]]
		q += f.wyy[r[1]] - f.wyy[r[0]] - swy*swy/sw
		c += sw - (f.w2[r[1]]-f.w2[r[0]])/sw
	}
	if c <= 0 {
		return 0
	}
	return math.Max(0, (q-float64(k-2))/c)
}
