package report

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

const (
	// Confidence is the level of every confidence interval in the report.
	Confidence = 0.95
	// Alpha is the significance level of Welch's test.
	Alpha = 0.05
)

// Summary is what the statistics of one metric on one platform are computed from.
type Summary struct {
	N      int
	Mean   float64
	StdDev float64
	// FromSamples is false when the status had dropped per-sample detail, so that N, Mean and
	// StdDev come from the status's running statistics.
	FromSamples bool
}

// Summarize prefers the samples; the controller trims them (to fit the object's size budget) but keeps
// exact running statistics, which are used when the samples no longer cover every measurement.
func Summarize(m vmbenchv1.MetricSummary) Summary {
	if len(m.Samples) > 0 && len(m.Samples) == int(m.N) {
		values := make([]float64, len(m.Samples))
		for i, s := range m.Samples {
			values[i] = s.Value
		}
		mean, sd := MeanStdDev(values)
		return Summary{N: len(values), Mean: mean, StdDev: sd, FromSamples: true}
	}
	return Summary{N: int(m.N), Mean: m.Mean, StdDev: m.StdDev}
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
	// P is the two-sided p-value.
	P float64
}

// Significant reports whether the difference is significant at level Alpha.
func (w WelchResult) Significant() bool { return w.P < Alpha }

// Welch compares the means of a and b without assuming equal variances. ok is false when either side
// has fewer than two values. When both sides have no spread at all, the test degenerates: equal
// means give p = 1, different means p = 0 (every value differs from every other side's value).
func Welch(a, b Summary) (WelchResult, bool) {
	if a.N < 2 || b.N < 2 {
		return WelchResult{}, false
	}
	va := a.StdDev * a.StdDev / float64(a.N)
	vb := b.StdDev * b.StdDev / float64(b.N)
	diff := b.Mean - a.Mean
	if va+vb == 0 {
		if diff == 0 {
			return WelchResult{T: 0, DF: math.NaN(), P: 1}, true
		}
		return WelchResult{T: math.Copysign(math.Inf(1), diff), DF: math.NaN(), P: 0}, true
	}
	t := diff / math.Sqrt(va+vb)
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return WelchResult{T: t, DF: df, P: math.Min(p, 1)}, true
}
