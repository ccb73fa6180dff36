package summary

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// Each platform against the baseline: the ratios of their means, and the headline that kubectl get
// shows.

// computeRatios divides every platform's mean by the baseline's, metric by metric; a ratio that is
// not a finite number (a baseline mean next to zero) is left out.
func ComputeRatios(st *vmbenchv1.BenchmarkSuiteStatus, baseline string) []vmbenchv1.PlatformRatios {
	var out []vmbenchv1.PlatformRatios
	for _, base := range st.Results {
		if base.Platform != baseline {
			continue
		}
		for _, other := range st.Results {
			if other.Benchmark != base.Benchmark || other.Platform == baseline {
				continue
			}
			pr := vmbenchv1.PlatformRatios{Benchmark: base.Benchmark, Platform: other.Platform, Emulated: other.Emulated}
			for _, bm := range base.Metrics {
				om := FindMetric(other.Metrics, bm.Name)
				if om == nil || bm.N == 0 || om.N == 0 || bm.Mean == 0 {
					continue
				}
				ratio := om.Mean / bm.Mean
				overhead := (1 - ratio) * 100
				if bm.Direction == vmbenchv1.LowerIsBetter {
					overhead = (ratio - 1) * 100
				}
				// Means of very different magnitudes can give a ratio that status cannot hold.
				if !Finite(ratio, overhead) {
					continue
				}
				pr.Metrics = append(pr.Metrics, vmbenchv1.RatioValue{Metric: bm.Name, Ratio: Round(ratio, 4), OverheadPercent: Round(overhead, 2)})
			}
			if len(pr.Metrics) > 0 {
				out = append(out, pr)
			}
		}
	}
	return out
}

func FindMetric(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

// toolOf maps a benchmark type to the parser that reads its output.
func toolOf(t vmbenchv1.BenchmarkType) results.Tool {
	switch t {
	case vmbenchv1.BenchmarkStressNGCPU, vmbenchv1.BenchmarkStressNGVM:
		return results.StressNG
	}
	return results.Tool(t)
}

// headline is the first benchmark, in spec order, whose headline metric has a ratio. The runner may
// prefix a metric with a block size or target (bs1M_mib_per_second), so a suffix matches too.
func Headline(spec vmbenchv1.BenchmarkSuiteSpec, ratios []vmbenchv1.PlatformRatios) *vmbenchv1.Headline {
	for _, b := range spec.Benchmarks {
		want := results.Headline(toolOf(b.Type))
		for _, pr := range ratios {
			if pr.Benchmark != b.Name {
				continue
			}
			for _, r := range pr.Metrics {
				if r.Metric != want && !strings.HasSuffix(r.Metric, "_"+want) {
					continue
				}
				summary := fmt.Sprintf("%s/%s %s", pr.Platform, spec.Baseline, twoFigures(r.Ratio))
				if pr.Emulated {
					summary += " (emulated)"
				}
				return &vmbenchv1.Headline{Benchmark: b.Name, Metric: r.Metric, Summary: summary}
			}
		}
	}
	return nil
}

// twoFigures writes a ratio with two significant figures, so that an HPL ratio of 0.0031 under
// emulation reads 0.0031, not 0.00, and 0.5 reads 0.50.
func twoFigures(x float64) string {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', 2, 64)
	}
	exp := int(math.Floor(math.Log10(x)))
	decimals := max(0, 1-exp)
	// Rounding may carry into another digit (0.996 to 1.00): one decimal less then.
	if rounded, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', decimals, 64), 64); rounded >= math.Pow(10, float64(exp+1)) && decimals > 0 {
		decimals--
	}
	return strconv.FormatFloat(x, 'f', decimals, 64)
}
