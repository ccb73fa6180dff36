package report

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// The statistics of the report are computed by internal/analysis, which the manager links without
// the report's plots and fonts. These are its names as the report's callers know them.

// Row compares one metric of one platform with the same metric on the baseline platform.
type Row = analysis.Row

// Summary is what the statistics of one metric on one platform are computed from.
type Summary = analysis.Summary

// WelchResult is the outcome of Welch's unequal-variances t-test.
type WelchResult = analysis.WelchResult

// VerdictCounts counts a group's metrics by verdict.
type VerdictCounts = analysis.VerdictCounts

// GroupSummary sums up the metrics of one benchmark, one resource, or all of a platform's.
type GroupSummary = analysis.GroupSummary

// PlatformSummary is every summary of one platform against the baseline.
type PlatformSummary = analysis.PlatformSummary

// The levels, verdicts, notes, kinds and resources of the statistics.
const (
	DefaultTolerance = analysis.DefaultTolerance
	Confidence       = analysis.Confidence
	Alpha            = analysis.Alpha
	Power            = analysis.Power
	Correction       = analysis.Correction

	Slower       = analysis.Slower
	Faster       = analysis.Faster
	Equivalent   = analysis.Equivalent
	Inconclusive = analysis.Inconclusive

	NoIntervalNote  = analysis.NoIntervalNote
	NonPositiveNote = analysis.NonPositiveNote

	KindBenchmark = analysis.KindBenchmark
	KindResource  = analysis.KindResource
	KindOverall   = analysis.KindOverall

	Compute = analysis.Compute
	Memory  = analysis.Memory
	Storage = analysis.Storage
	Network = analysis.Network
)

// Verdicts lists the verdicts in the order of every count.
var Verdicts = analysis.Verdicts

// Resources lists the resources in the order of every summary.
var Resources = analysis.Resources

// Summarize is analysis.Summarize.
func Summarize(m vmbenchv1.MetricSummary) Summary { return analysis.Summarize(m) }

// RepetitionMeans is analysis.RepetitionMeans.
func RepetitionMeans(samples []vmbenchv1.Sample) []float64 { return analysis.RepetitionMeans(samples) }

// MeanStdDev is analysis.MeanStdDev.
func MeanStdDev(values []float64) (mean, sd float64) { return analysis.MeanStdDev(values) }

// CoV is analysis.CoV.
func CoV(s Summary) (float64, bool) { return analysis.CoV(s) }

// CIHalfWidth is analysis.CIHalfWidth.
func CIHalfWidth(s Summary, level float64) (halfWidth float64, ok bool) {
	return analysis.CIHalfWidth(s, level)
}

// Welch is analysis.Welch.
func Welch(a, b Summary) (WelchResult, bool) { return analysis.Welch(a, b) }

// MinDetectableEffect is analysis.MinDetectableEffect.
func MinDetectableEffect(a, b Summary, alpha, power float64) (float64, bool) {
	return analysis.MinDetectableEffect(a, b, alpha, power)
}

// Holm is analysis.Holm.
func Holm(p []float64) []float64 { return analysis.Holm(p) }

// LogSummary is analysis.LogSummary.
func LogSummary(m vmbenchv1.MetricSummary) (Summary, bool) { return analysis.LogSummary(m) }

// RatioInterval is analysis.RatioInterval.
func RatioInterval(base, other Summary, dir vmbenchv1.Direction, level float64) (ratio, lo, hi float64, ok bool) {
	return analysis.RatioInterval(base, other, dir, level)
}

// Judge is analysis.Judge.
func Judge(ratio, lo, hi float64, hasInterval bool, significant *bool, tolerance float64) string {
	return analysis.Judge(ratio, lo, hi, hasInterval, significant, tolerance)
}

// ResourceOf is analysis.ResourceOf.
func ResourceOf(typ vmbenchv1.BenchmarkType, metric string) string {
	return analysis.ResourceOf(typ, metric)
}
