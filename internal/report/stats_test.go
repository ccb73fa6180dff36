package report

import (
	"math"
	"math/rand/v2"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The expected values below were computed independently of gonum: means and standard deviations by
// hand (or Python's statistics module), Student t quantiles from printed tables (t(0.975; 1) = 12.706,
// t(0.975; 4) = 2.776, t(0.975; 8) = 2.306), and Welch p-values by integrating the t density with
// Simpson's rule (200000 intervals) in a 30-line Python script.

func summaryOf(values ...float64) Summary {
	m := vmbenchv1.MetricSummary{N: int32(len(values))}
	for i, v := range values {
		m.Samples = append(m.Samples, vmbenchv1.Sample{Repetition: int32(i + 1), Node: "master", Value: v})
	}
	return Summarize(m)
}

func near(got, want, relTol float64) bool {
	if want == 0 {
		return math.Abs(got) < relTol
	}
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

func TestCIHalfWidth(t *testing.T) {
	tests := []struct {
		name   string
		s      Summary
		want   float64
		wantOK bool
	}{
		// mean 3, s = sqrt(2.5) = 1.58114; 2.776 * 1.58114 / sqrt(5) = 1.9632.
		{"1..5", summaryOf(1, 2, 3, 4, 5), 1.96324, true},
		// Two values 1 and 3: s = sqrt(2), so the half-width is t(0.975; 1) = 12.706 itself.
		{"n=2", summaryOf(1, 3), 12.7062, true},
		// The demo's sysbench-cpu events/s on the container: mean 1003.89, s = 6.35697;
		// 2.306 * 6.35697 / 3 = 4.8864.
		{"sysbench container", summaryOf(sysbenchEventsContainer...), 4.8864, true},
		{"sysbench vm", summaryOf(sysbenchEventsVM...), 0.991684, true},
		// Trimmed samples: the same interval from count, mean and stddev only.
		{"statistics only", Summary{N: 9, Mean: 1003.89, StdDev: 6.35697}, 4.8864, true},
		{"one value", summaryOf(42), 0, false},
		{"nothing", Summary{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CIHalfWidth(tt.s, Confidence)
			if ok != tt.wantOK || (ok && !near(got, tt.want, 1e-4)) {
				t.Errorf("CIHalfWidth = %.6g, %v; want %.6g, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func sample(rep int32, node string, v float64) vmbenchv1.Sample {
	return vmbenchv1.Sample{Repetition: rep, Node: node, Value: v}
}

func TestSummarize(t *testing.T) {
	full := vmbenchv1.MetricSummary{N: 3, Mean: -1, StdDev: -1, Samples: []vmbenchv1.Sample{sample(1, "master", 1), sample(2, "master", 2), sample(3, "master", 6)}}
	// Two nodes in three repetitions: the repetition means are 12, 21 and 15 (mean 16, squared
	// deviations 16 + 25 + 1 = 42, s = sqrt(42/2) = 4.58258), so n is 3, not 6; listed out of order.
	twoNodes := vmbenchv1.MetricSummary{N: 6, Samples: []vmbenchv1.Sample{
		sample(2, "node01", 22), sample(1, "master", 10), sample(3, "master", 15),
		sample(1, "node01", 14), sample(2, "master", 20), sample(3, "node01", 15)}}
	// A repetition in which one node failed keeps its other node's value: means 11, 30, 20.
	// Mean 61/3 = 20.3333; deviations -9.3333, 9.6667, -0.3333; s = sqrt(180.6667/2) = 9.50438.
	uneven := vmbenchv1.MetricSummary{N: 5, Samples: []vmbenchv1.Sample{
		sample(1, "master", 10), sample(1, "node01", 12), sample(2, "master", 30), sample(3, "master", 19), sample(3, "node01", 21)}}
	// One repetition on three nodes: one unit, no spread.
	oneRep := vmbenchv1.MetricSummary{N: 3, Samples: []vmbenchv1.Sample{sample(1, "master", 1), sample(1, "node01", 2), sample(1, "node02", 6)}}
	trimmed := vmbenchv1.MetricSummary{N: 5, Mean: 4.5, StdDev: 1.25, Samples: []vmbenchv1.Sample{sample(1, "master", 1), sample(1, "node01", 2)}}
	dropped := vmbenchv1.MetricSummary{N: 9, Mean: 7, StdDev: 0.5}
	single := vmbenchv1.MetricSummary{N: 1, Mean: 8, Samples: []vmbenchv1.Sample{sample(1, "master", 8)}}
	tests := []struct {
		name string
		m    vmbenchv1.MetricSummary
		want Summary
	}{
		// The samples win over the stored figures when they are complete: mean 3, s = sqrt(7) = 2.64575.
		{"one node per repetition", full, Summary{N: 3, Mean: 3, StdDev: 2.6457513, Samples: 3, FromSamples: true}},
		{"two nodes in three repetitions", twoNodes, Summary{N: 3, Mean: 16, StdDev: 4.5825757, Samples: 6, FromSamples: true}},
		{"a node missing in one repetition", uneven, Summary{N: 3, Mean: 20.333333, StdDev: 9.5043850, Samples: 5, FromSamples: true}},
		{"one repetition", oneRep, Summary{N: 1, Mean: 3, StdDev: 0, Samples: 3, FromSamples: true}},
		{"samples capped", trimmed, Summary{N: 5, Mean: 4.5, StdDev: 1.25, Samples: 5}},
		{"samples dropped", dropped, Summary{N: 9, Mean: 7, StdDev: 0.5, Samples: 9}},
		{"one sample", single, Summary{N: 1, Mean: 8, StdDev: 0, Samples: 1, FromSamples: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.m)
			if got.N != tt.want.N || got.Samples != tt.want.Samples || got.FromSamples != tt.want.FromSamples ||
				!near(got.Mean, tt.want.Mean, 1e-7) || !near(got.StdDev, tt.want.StdDev, 1e-7) {
				t.Errorf("Summarize = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCoV(t *testing.T) {
	tests := []struct {
		name   string
		s      Summary
		want   float64
		wantOK bool
	}{
		// The repetition means 12, 21, 15 of TestSummarize: 4.58258 / 16.
		{"two nodes in three repetitions", Summary{N: 3, Mean: 16, StdDev: 4.5825757}, 0.28641098, true},
		// 1..5: s = sqrt(2.5) = 1.58114 over mean 3.
		{"1..5", summaryOf(1, 2, 3, 4, 5), 0.52704628, true},
		// A negative mean (a change, say) divides by its size.
		{"negative mean", summaryOf(-1, -2, -3, -4, -5), 0.52704628, true},
		{"no spread", summaryOf(7, 7, 7), 0, true},
		{"mean zero", summaryOf(-1, 1), 0, false},
		{"one repetition", Summary{N: 1, Mean: 5, Samples: 3, FromSamples: true}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CoV(tt.s)
			if ok != tt.wantOK || !near(got, tt.want, 1e-6) {
				t.Errorf("CoV = %.8g, %v; want %.8g, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestHolm(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		p    []float64
		want []float64
	}{
		// Holm's procedure by hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 gives 0.02, 0.03,
		// 0.06, 0.04, and the last is raised to the 0.06 before it. At 0.05 the two smallest are
		// rejected, as the textbook step-down stops at 0.03 > 0.05/2.
		{"four tests", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		// R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") is 0.05 0.08 0.09 0.09 0.09.
		{"R's p.adjust", []float64{0.01, 0.02, 0.03, 0.04, 0.05}, []float64{0.05, 0.08, 0.09, 0.09, 0.09}},
		// Adjusted values are capped at 1.
		{"capped", []float64{0.5, 0.6, 0.01}, []float64{1, 1, 0.03}},
		// Entries without a test do not count in m = 2: 0.02 * 2 = 0.04, then 0.03.
		{"no test", []float64{nan, 0.03, 0.02, nan}, []float64{nan, 0.04, 0.04, nan}},
		// Ties keep the same value.
		{"ties", []float64{0.01, 0.01}, []float64{0.02, 0.02}},
		{"one test", []float64{0.03}, []float64{0.03}},
		{"empty", nil, []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Holm(tt.p)
			if len(got) != len(tt.want) {
				t.Fatalf("Holm = %v, want %v", got, tt.want)
			}
			for i := range got {
				if math.IsNaN(got[i]) != math.IsNaN(tt.want[i]) || (!math.IsNaN(got[i]) && !near(got[i], tt.want[i], 1e-12)) {
					t.Errorf("Holm = %v, want %v", got, tt.want)
					break
				}
			}
		})
	}
}

func TestWelch(t *testing.T) {
	tests := []struct {
		name     string
		a, b     Summary
		wantOK   bool
		t, df, p float64
	}{
		// Equal variances 2.5, n = 5 each: t = 2 / sqrt(0.5 + 0.5) = 2, df = 1 / (2 * 0.25 / 4) = 8.
		// A t table puts p between 0.05 (t = 2.306) and 0.10 (t = 1.860); integration gives 0.080516.
		{"equal variances", summaryOf(1, 2, 3, 4, 5), summaryOf(3, 4, 5, 6, 7), true, 2, 8, 0.0805162},
		// Unequal variances 2.5 (n = 5) and 56 (n = 6): t = 17 / sqrt(0.5 + 9.3333) = 5.42124,
		// df = 9.8333^2 / (0.25/4 + 87.111/5) = 5.53022, p = 0.0021139.
		{"unequal variances", summaryOf(1, 2, 3, 4, 5), summaryOf(10, 14, 18, 22, 26, 30), true, 5.42124, 5.53022, 0.00211392},
		// The demo's sysbench-cpu latency_max_ms: wide spread on both sides, not significant.
		{"sysbench latency_max", summaryOf(sysbenchLatMaxContainer...), summaryOf(sysbenchLatMaxVM...), true, 0.561976, 15.9278, 0.581955},
		{"from statistics only", Summary{N: 5, Mean: 3, StdDev: math.Sqrt(2.5)}, Summary{N: 5, Mean: 5, StdDev: math.Sqrt(2.5)}, true, 2, 8, 0.0805162},
		{"one value on a side", summaryOf(1, 2, 3), summaryOf(4), false, 0, 0, 0},
		{"no spread, same mean", summaryOf(2, 2, 2), summaryOf(2, 2), true, 0, math.NaN(), 1},
		{"no spread, different means", summaryOf(2, 2, 2), summaryOf(3, 3), true, math.Inf(1), math.NaN(), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Welch(tt.a, tt.b)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			sameDF := near(got.DF, tt.df, 1e-5) || (math.IsNaN(got.DF) && math.IsNaN(tt.df))
			sameT := near(got.T, tt.t, 1e-5) || (math.IsInf(got.T, 1) && math.IsInf(tt.t, 1))
			if !sameT || !sameDF || !near(got.P, tt.p, 1e-4) {
				t.Errorf("Welch = %+v, want t %.6g df %.6g p %.6g", got, tt.t, tt.df, tt.p)
			}
		})
	}
}

func TestWelchHugeDifference(t *testing.T) {
	// Container against emulated VM events/s: t = -420.04 on 8.66 degrees of freedom; the p-value is
	// far below anything a table lists.
	got, ok := Welch(summaryOf(sysbenchEventsContainer...), summaryOf(sysbenchEventsVM...))
	if !ok || !near(got.T, -420.042, 1e-5) || !near(got.DF, 8.65789, 1e-5) || got.P > 1e-10 {
		t.Errorf("Welch = %+v, want t -420.042, df 8.65789, p < 1e-10", got)
	}
}

// welchPower estimates by simulation how often Welch's test at level alpha rejects when the true
// difference is d and the true standard deviations are sa and sb: normal samples of na and nb
// values, the test as the report runs it. It shares nothing with MinDetectableEffect's integral.
func welchPower(na, nb int, sa, sb, d, alpha float64, trials int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 7))
	a, b := make([]float64, na), make([]float64, nb)
	rejected := 0
	for range trials {
		for i := range a {
			a[i] = sa * rng.NormFloat64()
		}
		for i := range b {
			b[i] = d + sb*rng.NormFloat64()
		}
		if w, ok := Welch(summaryOf(a...), summaryOf(b...)); ok && w.P < alpha {
			rejected++
		}
	}
	return float64(rejected) / float64(trials)
}

func TestMinDetectableEffectHasItsPower(t *testing.T) {
	// 50000 trials estimate a power of 0.8 with a standard error of 0.0018: 0.01 is 5.6 of them.
	const trials = 50000
	tests := []struct {
		name   string
		na, nb int
		sa, sb float64
		alpha  float64
	}{
		{"3 repetitions a side", 3, 3, 1, 1, 0.05},
		{"unequal n and spread", 4, 6, 2, 5, 0.05},
		{"Holm's first step of 10 tests", 5, 5, 1, 1, 0.005},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mde, ok := MinDetectableEffect(Summary{N: tt.na, Mean: 10, StdDev: tt.sa}, Summary{N: tt.nb, Mean: 3, StdDev: tt.sb}, tt.alpha, Power)
			if !ok {
				t.Fatal("no MDE")
			}
			if got := welchPower(tt.na, tt.nb, tt.sa, tt.sb, mde, tt.alpha, trials, uint64(i)); math.Abs(got-Power) > 0.01 {
				t.Errorf("MDE %.4g: Welch's test rejects %.4f of the time, want %g", mde, got, Power)
			}
		})
	}
}

func TestMinDetectableEffectShortcutIsOptimistic(t *testing.T) {
	// The shortcut (t(0.975; 4) + t(0.80; 4)) * sqrt(1/3 + 1/3) from a printed t table:
	// (2.776 + 0.941) * 0.816497 = 3.03492. Welch's test detects that difference much less often
	// than 0.8, which is why MinDetectableEffect integrates the test's own power; its MDE is larger.
	const shortcut = 3.03492
	if got := welchPower(3, 3, 1, 1, shortcut, 0.05, 50000, 42); got > 0.75 {
		t.Errorf("at the shortcut's MDE Welch's test rejects %.4f of the time, expected well below 0.8", got)
	}
	mde, _ := MinDetectableEffect(summaryOf(0, 1, 2), summaryOf(5, 6, 7), 0.05, Power)
	if mde <= shortcut {
		t.Errorf("MDE = %.5g, want above the shortcut's %.5g", mde, shortcut)
	}
}

func TestMinDetectableEffect(t *testing.T) {
	many := func(sd float64) Summary { return Summary{N: 1000, Mean: 50, StdDev: sd} }
	tests := []struct {
		name   string
		a, b   Summary
		alpha  float64
		want   float64
		tol    float64
		wantOK bool
	}{
		// With 1000 repetitions a side Welch's df is all but fixed at 1998 and the textbook formula
		// (t(1 - alpha/2; 1998) + t(0.80; 1998)) * sqrt(2/1000) holds. The t quantiles come from the
		// normal ones (Python's statistics.NormalDist) by the Cornish–Fisher expansion
		// t = z + (z³ + z)/(4ν) + (5z⁵ + 16z³ + 3z)/(96ν²) (Abramowitz and Stegun 26.7.5):
		// z(0.975) = 1.959964 gives 1.961152, z(0.80) = 0.841621 gives 0.841801, and
		// (1.961152 + 0.841801) * 0.0447214 = 0.125352.
		{"large n", many(1), many(1), 0.05, 0.125352, 3e-4, true},
		// The MDE scales with the spread: twice the standard deviation, twice the effect.
		{"large n, twice the spread", many(2), many(2), 0.05, 0.250704, 3e-4, true},
		// Bonferroni's level of 80 tests: z(1 - 0.05/160) = 3.420527 gives t = 3.425970, and
		// (3.425970 + 0.841801) * 0.0447214 = 0.190861.
		{"large n, alpha 0.05/80", many(1), many(1), 0.05 / 80, 0.190861, 3e-4, true},
		{"no spread", summaryOf(2, 2, 2), summaryOf(3, 3), 0.05, 0, 1e-12, true},
		{"one repetition on a side", summaryOf(1, 2, 3), summaryOf(4), 0.05, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := MinDetectableEffect(tt.a, tt.b, tt.alpha, Power)
			if ok != tt.wantOK || (ok && !near(got, tt.want, tt.tol)) {
				t.Errorf("MinDetectableEffect = %.6g, %v; want %.6g, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
