package analysis

import vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"

// What the analysis reads of a suite: its name, its baseline, the order of its benchmarks, platforms and
// metrics, and the results of each.

// HasMetrics says whether any result of the suite has a metric with a value.
func HasMetrics(suite *vmbenchv1.BenchmarkSuite) bool {
	for _, res := range suite.Status.Results {
		for _, m := range res.Metrics {
			if m.N > 0 {
				return true
			}
		}
	}
	return false
}

// SuiteName is namespace/name, or the name alone outside a namespace.
func SuiteName(suite *vmbenchv1.BenchmarkSuite) string {
	if suite.Namespace != "" {
		return suite.Namespace + "/" + suite.Name
	}
	return suite.Name
}

// BaselineOf is spec.baseline, defaulted like the API server does; a suite whose baseline has no
// results at all is compared against its first platform with results.
func BaselineOf(suite *vmbenchv1.BenchmarkSuite) string {
	baseline := suite.Spec.Baseline
	if baseline == "" {
		baseline = "container"
	}
	for _, res := range suite.Status.Results {
		if res.Platform == baseline {
			return baseline
		}
	}
	for _, p := range PlatformOrder(suite) {
		for _, res := range suite.Status.Results {
			if res.Platform == p {
				return p
			}
		}
	}
	return baseline
}

// EmulatedPlatforms are the platforms with at least one run under software emulation.
func EmulatedPlatforms(suite *vmbenchv1.BenchmarkSuite) map[string]bool {
	out := map[string]bool{}
	for _, run := range suite.Status.Runs {
		if run.Accelerator == vmbenchv1.AcceleratorEmulation {
			out[run.Platform] = true
		}
	}
	for _, res := range suite.Status.Results {
		if res.Emulated {
			out[res.Platform] = true
		}
	}
	return out
}

// BenchmarkOrder is spec order, then benchmarks that only status knows.
func BenchmarkOrder(suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, b := range suite.Spec.Benchmarks {
		names = AppendNew(names, b.Name)
	}
	for _, res := range suite.Status.Results {
		names = AppendNew(names, res.Benchmark)
	}
	return names
}

// PlatformOrder is spec order, then platforms that only status knows.
func PlatformOrder(suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, p := range suite.Spec.Platforms {
		names = AppendNew(names, p.Name)
	}
	for _, res := range suite.Status.Results {
		names = AppendNew(names, res.Platform)
	}
	return names
}

// AppendNew appends x unless list holds it already, so that list keeps the order of first sight.
func AppendNew[T comparable](list []T, x T) []T {
	for _, y := range list {
		if y == x {
			return list
		}
	}
	return append(list, x)
}

// FindResult is bench's result on platform, nil when there is none.
func FindResult(suite *vmbenchv1.BenchmarkSuite, bench, platform string) *vmbenchv1.BenchmarkResult {
	for i := range suite.Status.Results {
		res := &suite.Status.Results[i]
		if res.Benchmark == bench && res.Platform == platform {
			return res
		}
	}
	return nil
}

// otherResults are bench's results on every platform but the baseline, in platform order.
func otherResults(suite *vmbenchv1.BenchmarkSuite, bench, baseline string) []vmbenchv1.BenchmarkResult {
	var out []vmbenchv1.BenchmarkResult
	for _, p := range PlatformOrder(suite) {
		if p == baseline {
			continue
		}
		if res := FindResult(suite, bench, p); res != nil {
			out = append(out, *res)
		}
	}
	return out
}

// metricOrder is the baseline's order, then metrics that only other platforms measured.
func metricOrder(base *vmbenchv1.BenchmarkResult, others []vmbenchv1.BenchmarkResult) []string {
	var names []string
	if base != nil {
		for _, m := range base.Metrics {
			names = AppendNew(names, m.Name)
		}
	}
	for _, o := range others {
		for _, m := range o.Metrics {
			names = AppendNew(names, m.Name)
		}
	}
	return names
}

// FindMetricSummary is the metric called name, nil when there is none.
func FindMetricSummary(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}
