package report

import (
	"fmt"
	"sort"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// MigrationNotes says which samples were measured while a live migration of a run's VMI ran
// (samples[].migrated) and how the report treats them: they stay in the statistics, as they are what
// a workload on that platform saw, and are counted here so that a reader can weigh them. It also
// names each migration that failed or was aborted, in KubeVirt's words.
func MigrationNotes(suite *vmbenchv1.BenchmarkSuite) []string {
	var notes []string
	counts := map[string]int{}
	total := 0
	for _, res := range suite.Status.Results {
		for _, m := range res.Metrics {
			for _, s := range m.Samples {
				if s.Migrated {
					counts[fmt.Sprintf("%s %s on %s", res.Benchmark, m.Name, res.Platform)]++
					total++
				}
			}
		}
	}
	migrations, notCompleted := 0, []string{}
	for _, run := range suite.Status.Runs {
		for _, m := range run.Migrations {
			migrations++
			if m.Outcome == vmbenchv1.MigrationFailed || m.Outcome == vmbenchv1.MigrationAborted {
				notCompleted = append(notCompleted, fmt.Sprintf("run %s VMI %s: %s: %s", run.Name, m.VMI, m.Outcome, m.Message))
			}
		}
	}
	if total > 0 {
		keys := make([]string, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		const listed = 10
		parts := make([]string, 0, listed+1)
		for _, k := range keys[:min(listed, len(keys))] {
			parts = append(parts, fmt.Sprintf("%s (%d)", k, counts[k]))
		}
		if len(keys) > listed {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-listed))
		}
		notes = append(notes, fmt.Sprintf("%d sample(s) were measured while one of %d live migration(s) of a run's VMs ran "+
			"(status.runs[].migrations); they stay in the statistics, as what a workload saw across the move, and are counted here: %s",
			total, migrations, strings.Join(parts, ", ")))
	}
	if len(notCompleted) > 0 {
		notes = append(notes, "live migrations that did not complete: "+strings.Join(notCompleted, "; "))
	}
	return notes
}
