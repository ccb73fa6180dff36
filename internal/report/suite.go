package report

import vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"

// What the report reads of a suite: its name, its baseline, the order of its benchmarks, platforms and
// metrics, and the results of each.

func hasMetrics(suite *vmbenchv1.BenchmarkSuite) bool {
	for _, res := range suite.Status.Results {
		for _, m := range res.Metrics {
			if m.N > 0 {
				return true
			}
		}
	}
	return false
}

func suiteName(suite *vmbenchv1.BenchmarkSuite) string {
	if suite.Namespace != "" {
		return suite.Namespace + "/" + suite.Name
	}
	return suite.Name
}

// baselineOf is spec.baseline, defaulted like the API server does; a suite whose baseline has no
// results at all is compared against its first platform with results.
func baselineOf(suite *vmbenchv1.BenchmarkSuite) string {
	baseline := suite.Spec.Baseline
	if baseline == "" {
		baseline = "container"
	}
	for _, res := range suite.Status.Results {
		if res.Platform == baseline {
			return baseline
		}
	}
	for _, p := range platformOrder(suite) {
		for _, res := range suite.Status.Results {
			if res.Platform == p {
				return p
			}
		}
	}
	return baseline
}

// AllNodesMark follows the name of a benchmark that ran on all nodes at once.
const AllNodesMark = "(all nodes at once)"

// concurrentBenchmarks are the benchmarks with results measured on all nodes at once, in report
// order.
func concurrentBenchmarks(suite *vmbenchv1.BenchmarkSuite) []string {
	concurrent := map[string]bool{}
	for _, res := range suite.Status.Results {
		concurrent[res.Benchmark] = concurrent[res.Benchmark] || res.Concurrent
	}
	var out []string
	for _, b := range benchmarkOrder(suite) {
		if concurrent[b] {
			out = append(out, b)
		}
	}
	return out
}

// emulatedPlatforms are the platforms with at least one run under software emulation.
func emulatedPlatforms(suite *vmbenchv1.BenchmarkSuite) map[string]bool {
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

// benchmarkOrder is spec order, then benchmarks that only status knows.
func benchmarkOrder(suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, b := range suite.Spec.Benchmarks {
		names = appendNew(names, b.Name)
	}
	for _, res := range suite.Status.Results {
		names = appendNew(names, res.Benchmark)
	}
	return names
}

// platformOrder is spec order, then platforms that only status knows.
func platformOrder(suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, p := range suite.Spec.Platforms {
		names = appendNew(names, p.Name)
	}
	for _, res := range suite.Status.Results {
		names = appendNew(names, res.Platform)
	}
	return names
}

// appendNew appends x unless list holds it already, so that list keeps the order of first sight.
func appendNew[T comparable](list []T, x T) []T {
	for _, y := range list {
		if y == x {
			return list
		}
	}
	return append(list, x)
}

func findResult(suite *vmbenchv1.BenchmarkSuite, bench, platform string) *vmbenchv1.BenchmarkResult {
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
	for _, p := range platformOrder(suite) {
		if p == baseline {
			continue
		}
		if res := findResult(suite, bench, p); res != nil {
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
			names = appendNew(names, m.Name)
		}
	}
	for _, o := range others {
		for _, m := range o.Metrics {
			names = appendNew(names, m.Name)
		}
	}
	return names
}

func findMetricSummary(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}
