package summary

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/analysis"
)

// MigrationSummaries are the lines `vmbench report` prints on its first screen for the suite's
// migration benchmarks, one per benchmark and VM platform with results, for
// status.migrationSummaries: the same computation (analysis.MigrationLines), so that status and the
// report give the same figures and intervals. nil without a migration benchmark's results.
//
// A line longer than the schema's MaxMigrationSummaryLength, which only figures of hundreds of
// digits make, is cut to it and ends in "...": the status write must not fail over one line.
func MigrationSummaries(suite *vmbenchv1.BenchmarkSuite) []vmbenchv1.MigrationSummary {
	lines := analysis.MigrationLines(suite)
	if len(lines) == 0 {
		return nil
	}
	texts := analysis.MigrationTexts(lines)
	out := make([]vmbenchv1.MigrationSummary, len(lines))
	for i, l := range lines {
		out[i] = vmbenchv1.MigrationSummary{Benchmark: l.Benchmark, Platform: l.Platform, Emulated: l.Emulated,
			Summary: conditions.Truncate(texts[i], vmbenchv1.MaxMigrationSummaryLength)}
	}
	return out
}
