package summary

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func summary(name string, dir vmbenchv1.Direction, n int32, mean float64) vmbenchv1.MetricSummary {
	return vmbenchv1.MetricSummary{Name: name, Unit: "u", Direction: dir, N: n, Mean: mean}
}

func TestComputeRatios(t *testing.T) {
	hi, lo := vmbenchv1.HigherIsBetter, vmbenchv1.LowerIsBetter
	result := func(benchmark, platform string, emulated bool, ms ...vmbenchv1.MetricSummary) vmbenchv1.BenchmarkResult {
		return vmbenchv1.BenchmarkResult{Benchmark: benchmark, Platform: platform, Emulated: emulated, Metrics: ms}
	}
	ratios := func(benchmark, platform string, emulated bool, rs ...vmbenchv1.RatioValue) vmbenchv1.PlatformRatios {
		return vmbenchv1.PlatformRatios{Benchmark: benchmark, Platform: platform, Emulated: emulated, Metrics: rs}
	}
	rv := func(metric string, ratio, overhead float64) vmbenchv1.RatioValue {
		return vmbenchv1.RatioValue{Metric: metric, Ratio: ratio, OverheadPercent: overhead}
	}
	tests := []struct {
		name     string
		baseline string
		results  []vmbenchv1.BenchmarkResult
		want     []vmbenchv1.PlatformRatios
	}{
		{
			name: "platform worse than the baseline has a positive overhead either way", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 200), summary("latency", lo, 3, 2)),
				result("cpu", "vm", false, summary("events", hi, 3, 150), summary("latency", lo, 3, 3)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("events", 0.75, 25), rv("latency", 1.5, 50))},
		},
		{
			name: "platform better than the baseline has a negative overhead either way", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 200), summary("latency", lo, 3, 2)),
				result("cpu", "vm", false, summary("events", hi, 3, 250), summary("latency", lo, 3, 1)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("events", 1.25, -25), rv("latency", 0.5, -50))},
		},
		{
			name: "rounded to 4 and 2 digits", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 1, 3)),
				result("cpu", "vm", false, summary("events", hi, 1, 1)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("events", 0.3333, 66.67))},
		},
		{
			name: "metrics in the baseline's order, whatever the other platform's order", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("a", hi, 1, 10), summary("b", hi, 1, 10), summary("c", hi, 1, 10)),
				result("cpu", "vm", false, summary("c", hi, 1, 30), summary("a", hi, 1, 10), summary("b", hi, 1, 20)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", false, rv("a", 1, 0), rv("b", 2, -100), rv("c", 3, -200))},
		},
		{
			name: "skips a zero baseline, empty metrics and metrics missing on the other platform", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("ping", "container", false, summary("loss", lo, 3, 0), summary("rtt", lo, 3, 1), summary("only-base", lo, 1, 1),
					summary("empty-base", lo, 0, 0), summary("empty-other", lo, 2, 4)),
				result("ping", "vm", false, summary("loss", lo, 3, 5), summary("rtt", lo, 3, 2), summary("only-other", lo, 1, 1),
					summary("empty-base", lo, 2, 3), summary("empty-other", lo, 0, 0)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("ping", "vm", false, rv("rtt", 2, 100))},
		},
		{
			name: "a platform without any ratio has no entry", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 100), summary("loss", lo, 3, 0)),
				result("cpu", "vm", false, summary("events", hi, 0, 0), summary("loss", lo, 3, 1)),
				result("cpu", "kata", false, summary("events", hi, 3, 50)),
				result("cpu", "host", false),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "kata", false, rv("events", 0.5, 50))},
		},
		{
			name: "emulated flag is carried", baseline: "container",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "container", false, summary("events", hi, 3, 100)),
				result("cpu", "vm", true, summary("events", hi, 3, 10)),
			},
			want: []vmbenchv1.PlatformRatios{ratios("cpu", "vm", true, rv("events", 0.1, 90))},
		},
		{
			name: "every other platform against the baseline, benchmark by benchmark, no baseline no ratio", baseline: "host",
			results: []vmbenchv1.BenchmarkResult{
				result("cpu", "vm", false, summary("events", hi, 3, 80)),
				result("cpu", "host", false, summary("events", hi, 3, 100), summary("latency", lo, 3, 1)),
				result("cpu", "container", true, summary("events", hi, 3, 90), summary("latency", lo, 3, 1.1)),
				result("mem", "vm", false, summary("bw", hi, 3, 80)),
				result("mem", "container", false, summary("bw", hi, 3, 90)),
				result("net", "container", false, summary("bw", hi, 3, 90)),
				result("net", "host", false, summary("bw", hi, 3, 45)),
			},
			want: []vmbenchv1.PlatformRatios{
				ratios("cpu", "vm", false, rv("events", 0.8, 20)),
				ratios("cpu", "container", true, rv("events", 0.9, 10), rv("latency", 1.1, 10)),
				ratios("net", "container", false, rv("bw", 2, -100)),
			},
		},
		{name: "nothing measured", baseline: "container"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{Results: tt.results}
			if diff := cmp.Diff(tt.want, ComputeRatios(st, tt.baseline), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("computeRatios() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadline(t *testing.T) {
	spec := vmbenchv1.BenchmarkSuiteSpec{
		Baseline: "container",
		Benchmarks: []vmbenchv1.Benchmark{
			{Name: "linpack", Type: vmbenchv1.BenchmarkHPCC},
			{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory},
			{Name: "stress", Type: vmbenchv1.BenchmarkStressNGCPU},
			{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
		},
	}
	// ratios are the ratios of one benchmark on the "vm" platform.
	ratios := func(benchmark string, emulated bool, rs ...vmbenchv1.RatioValue) vmbenchv1.PlatformRatios {
		return vmbenchv1.PlatformRatios{Benchmark: benchmark, Platform: "vm", Emulated: emulated, Metrics: rs}
	}
	rv := func(metric string, r float64) vmbenchv1.RatioValue {
		return vmbenchv1.RatioValue{Metric: metric, Ratio: r}
	}
	tests := []struct {
		name   string
		ratios []vmbenchv1.PlatformRatios
		want   *vmbenchv1.Headline
	}{
		{name: "no ratios"},
		{
			name:   "first benchmark in spec order, not in ratio order",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false, rv("events_per_second", 0.98)), ratios("linpack", false, rv("HPL_Tflops", 0.5))},
			want:   &vmbenchv1.Headline{Benchmark: "linpack", Metric: "HPL_Tflops", Summary: "vm/container 0.50"},
		},
		{
			name: "a benchmark without its headline metric is passed over",
			ratios: []vmbenchv1.PlatformRatios{ratios("linpack", false, rv("PTRANS_GBs", 0.7), rv("xHPL_Tflops", 0.7)),
				ratios("cpu", false, rv("latency_avg_ms", 1.1), rv("events_per_second", 0.934))},
			want: &vmbenchv1.Headline{Benchmark: "cpu", Metric: "events_per_second", Summary: "vm/container 0.93"},
		},
		{
			name: "the first platform that has the headline metric",
			ratios: []vmbenchv1.PlatformRatios{
				{Benchmark: "cpu", Platform: "kata", Metrics: []vmbenchv1.RatioValue{rv("latency_avg_ms", 1.1)}},
				{Benchmark: "cpu", Platform: "vm2", Emulated: true, Metrics: []vmbenchv1.RatioValue{rv("events_per_second", 0.5)}},
				{Benchmark: "cpu", Platform: "vm3", Metrics: []vmbenchv1.RatioValue{rv("events_per_second", 0.7)}},
			},
			want: &vmbenchv1.Headline{Benchmark: "cpu", Metric: "events_per_second", Summary: "vm2/container 0.50 (emulated)"},
		},
		{
			name:   "suffix after a block size prefix",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false, rv("events_per_second", 1)), ratios("mem", false, rv("bs1M_mib_per_second", 0.876))},
			want:   &vmbenchv1.Headline{Benchmark: "mem", Metric: "bs1M_mib_per_second", Summary: "vm/container 0.88"},
		},
		{
			name:   "stress-ng metrics carry the stressor's name",
			ratios: []vmbenchv1.PlatformRatios{ratios("stress", false, rv("cpu_bogo_ops_per_second_real", 0.91))},
			want:   &vmbenchv1.Headline{Benchmark: "stress", Metric: "cpu_bogo_ops_per_second_real", Summary: "vm/container 0.91"},
		},
		{
			name:   "emulated",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", true, rv("events_per_second", 0.12))},
			want:   &vmbenchv1.Headline{Benchmark: "cpu", Metric: "events_per_second", Summary: "vm/container 0.12 (emulated)"},
		},
		{
			name:   "no headline metric anywhere",
			ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false, rv("latency_avg_ms", 1.1)), ratios("other", false, rv("events_per_second", 1))},
		},
		{name: "an entry without metrics", ratios: []vmbenchv1.PlatformRatios{ratios("cpu", false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Headline(spec, tt.ratios)); diff != "" {
				t.Errorf("headline() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// The headline ratio keeps two significant figures, whatever its size.
func TestTwoFigures(t *testing.T) {
	for x, want := range map[float64]string{
		0.0031: "0.0031", 0.003: "0.0030", 0.5: "0.50", 0.934: "0.93", 0.996: "1.0", 1.23: "1.2", 9.96: "10", 12.3: "12",
		123.4: "123", 0.000123: "0.00012", 0: "0",
	} {
		if got := twoFigures(x); got != want {
			t.Errorf("twoFigures(%g) = %q, want %q", x, got, want)
		}
	}
}
