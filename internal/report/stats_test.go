package report

import (
	"math"
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

func TestSummarize(t *testing.T) {
	full := vmbenchv1.MetricSummary{N: 3, Mean: -1, StdDev: -1, Samples: []vmbenchv1.Sample{{Value: 1}, {Value: 2}, {Value: 6}}}
	trimmed := vmbenchv1.MetricSummary{N: 5, Mean: 4.5, StdDev: 1.25, Samples: []vmbenchv1.Sample{{Value: 1}, {Value: 2}}}
	dropped := vmbenchv1.MetricSummary{N: 9, Mean: 7, StdDev: 0.5}
	single := vmbenchv1.MetricSummary{N: 1, Mean: 8, Samples: []vmbenchv1.Sample{{Value: 8}}}
	tests := []struct {
		name string
		m    vmbenchv1.MetricSummary
		want Summary
	}{
		// The samples win over the stored figures when they are complete: mean 3, s = sqrt(7) = 2.64575.
		{"complete samples", full, Summary{N: 3, Mean: 3, StdDev: 2.6457513, FromSamples: true}},
		{"samples capped", trimmed, Summary{N: 5, Mean: 4.5, StdDev: 1.25}},
		{"samples dropped", dropped, Summary{N: 9, Mean: 7, StdDev: 0.5}},
		{"one sample", single, Summary{N: 1, Mean: 8, StdDev: 0, FromSamples: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summarize(tt.m)
			if got.N != tt.want.N || got.FromSamples != tt.want.FromSamples || !near(got.Mean, tt.want.Mean, 1e-9) ||
				!near(got.StdDev, tt.want.StdDev, 1e-7) {
				t.Errorf("Summarize = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestWelch(t *testing.T) {
	tests := []struct {
		name        string
		a, b        Summary
		wantOK      bool
		t, df, p    float64
		significant bool
	}{
		// Equal variances 2.5, n = 5 each: t = 2 / sqrt(0.5 + 0.5) = 2, df = 1 / (2 * 0.25 / 4) = 8.
		// A t table puts p between 0.05 (t = 2.306) and 0.10 (t = 1.860); integration gives 0.080516.
		{"equal variances", summaryOf(1, 2, 3, 4, 5), summaryOf(3, 4, 5, 6, 7), true, 2, 8, 0.0805162, false},
		// Unequal variances 2.5 (n = 5) and 56 (n = 6): t = 17 / sqrt(0.5 + 9.3333) = 5.42124,
		// df = 9.8333^2 / (0.25/4 + 87.111/5) = 5.53022, p = 0.0021139.
		{"unequal variances", summaryOf(1, 2, 3, 4, 5), summaryOf(10, 14, 18, 22, 26, 30), true, 5.42124, 5.53022, 0.00211392, true},
		// The demo's sysbench-cpu latency_max_ms: wide spread on both sides, not significant.
		{"sysbench latency_max", summaryOf(sysbenchLatMaxContainer...), summaryOf(sysbenchLatMaxVM...), true, 0.561976, 15.9278, 0.581955, false},
		{"from statistics only", Summary{N: 5, Mean: 3, StdDev: math.Sqrt(2.5)}, Summary{N: 5, Mean: 5, StdDev: math.Sqrt(2.5)}, true, 2, 8, 0.0805162, false},
		{"one value on a side", summaryOf(1, 2, 3), summaryOf(4), false, 0, 0, 0, false},
		{"no spread, same mean", summaryOf(2, 2, 2), summaryOf(2, 2), true, 0, math.NaN(), 1, false},
		{"no spread, different means", summaryOf(2, 2, 2), summaryOf(3, 3), true, math.Inf(1), math.NaN(), 0, true},
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
			if !sameT || !sameDF || !near(got.P, tt.p, 1e-4) || got.Significant() != tt.significant {
				t.Errorf("Welch = %+v (significant %v), want t %.6g df %.6g p %.6g (significant %v)",
					got, got.Significant(), tt.t, tt.df, tt.p, tt.significant)
			}
		})
	}
}

func TestWelchHugeDifference(t *testing.T) {
	// Container against emulated VM events/s: t = -420.04 on 8.66 degrees of freedom; the p-value is
	// far below anything a table lists.
	got, ok := Welch(summaryOf(sysbenchEventsContainer...), summaryOf(sysbenchEventsVM...))
	if !ok || !near(got.T, -420.042, 1e-5) || !near(got.DF, 8.65789, 1e-5) || got.P > 1e-10 || !got.Significant() {
		t.Errorf("Welch = %+v, want t -420.042, df 8.65789, p < 1e-10", got)
	}
}
