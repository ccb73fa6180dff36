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
// A dirty-rate sweep gives a line per rate (DirtyRate set). The list keeps the schema's first
// maxMigrationSummaries lines, which only a suite of more than 16 swept benchmarks and platforms
// would exceed; the report prints them all.
//
// A line longer than the schema's MaxMigrationSummaryLength, which only figures of hundreds of
// digits make, is cut to it and ends in "...": the status write must not fail over one line.
func MigrationSummaries(suite *vmbenchv1.BenchmarkSuite) []vmbenchv1.MigrationSummary {
	lines := analysis.MigrationLines(suite)
	if len(lines) == 0 {
		return nil
	}
	texts := analysis.MigrationTexts(lines)
	out := make([]vmbenchv1.MigrationSummary, min(len(lines), maxMigrationSummaries))
	for i := range out {
		l := lines[i]
		out[i] = vmbenchv1.MigrationSummary{Benchmark: l.Benchmark, Platform: l.Platform, Emulated: l.Emulated, DirtyRate: l.DirtyRate,
			Summary: conditions.Truncate(texts[i], vmbenchv1.MaxMigrationSummaryLength)}
	}
	return out
}

// maxMigrationSummaries is the schema's MaxItems of status.migrationSummaries.
const maxMigrationSummaries = 48
