package report

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// What the report reads of a suite: its name, its baseline, the order of its benchmarks, platforms and
// metrics, and the results of each. internal/analysis reads them for the statistics; these are its
// helpers under the report's names.

func hasMetrics(suite *vmbenchv1.BenchmarkSuite) bool { return analysis.HasMetrics(suite) }

func suiteName(suite *vmbenchv1.BenchmarkSuite) string { return analysis.SuiteName(suite) }

func baselineOf(suite *vmbenchv1.BenchmarkSuite) string { return analysis.BaselineOf(suite) }

func emulatedPlatforms(suite *vmbenchv1.BenchmarkSuite) map[string]bool {
	return analysis.EmulatedPlatforms(suite)
}

func benchmarkOrder(suite *vmbenchv1.BenchmarkSuite) []string { return analysis.BenchmarkOrder(suite) }

func platformOrder(suite *vmbenchv1.BenchmarkSuite) []string { return analysis.PlatformOrder(suite) }

func appendNew[T comparable](list []T, x T) []T { return analysis.AppendNew(list, x) }

func findResult(suite *vmbenchv1.BenchmarkSuite, bench, platform string) *vmbenchv1.BenchmarkResult {
	return analysis.FindResult(suite, bench, platform)
}

func findMetricSummary(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	return analysis.FindMetricSummary(ms, name)
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
