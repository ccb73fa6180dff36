package summary

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/bands"
)

// headlineBand is where the headline ratio lies against the band KVM is expected to give, for
// kubectl get's Band column: the ratio of a VM platform's mean to a container baseline's, turned
// into the higher-is-better sense, held against the band of its metric's family with the VM's
// recorded settings. "" when the headline is no VM's ratio to a container's or its metric has no
// band. The report places the ratio's interval; here the ratio alone is placed.
func HeadlineBand(suite *vmbenchv1.BenchmarkSuite) string {
	st := &suite.Status
	h := st.Headline
	if h == nil {
		return ""
	}
	types := map[string]vmbenchv1.PlatformType{}
	for _, p := range suite.Spec.Platforms {
		types[p.Name] = p.Type
	}
	if types[suite.Spec.Baseline] != vmbenchv1.PlatformContainer {
		return ""
	}
	// The headline is the first platform's ratio with its benchmark and metric (headline).
	for _, pr := range st.Ratios {
		if pr.Benchmark != h.Benchmark {
			continue
		}
		for _, r := range pr.Metrics {
			if r.Metric != h.Metric {
				continue
			}
			if types[pr.Platform] != vmbenchv1.PlatformVM || r.Ratio <= 0 {
				return ""
			}
			speed := r.Ratio
			if directionOf(st, suite.Spec.Baseline, h.Benchmark, h.Metric) == vmbenchv1.LowerIsBetter {
				speed = 1 / r.Ratio
			}
			family := bands.MetricOf(benchmarkNamed(suite.Spec, h.Benchmark), h.Metric)
			p, ok := bands.PlaceMetric(family, speed, nil, nil, bands.SettingsOf(suite, pr.Platform, pr.Emulated))
			if !ok {
				return ""
			}
			return string(p.Position)
		}
	}
	return ""
}

func directionOf(st *vmbenchv1.BenchmarkSuiteStatus, platform, benchmark, metric string) vmbenchv1.Direction {
	for _, res := range st.Results {
		if res.Platform == platform && res.Benchmark == benchmark {
			if m := FindMetric(res.Metrics, metric); m != nil {
				return m.Direction
			}
		}
	}
	return vmbenchv1.HigherIsBetter
}

func benchmarkNamed(spec vmbenchv1.BenchmarkSuiteSpec, name string) vmbenchv1.Benchmark {
	for _, b := range spec.Benchmarks {
		if b.Name == name {
			return b
		}
	}
	return vmbenchv1.Benchmark{Name: name}
}
