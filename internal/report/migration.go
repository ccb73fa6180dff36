package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// MigrationNotes says which samples were measured while a live migration of a run's VMI ran
// (samples[].migrated) and how the report treats them: they stay in the statistics, as they are what
// a workload on that platform saw, and are counted here so that a reader can weigh them. It also
// names each migration that vmbench did not start (a node drain's, KubeVirt's workload update's,
// another object's) and each that failed or was aborted, in KubeVirt's words.
//
// With --drop-migrated (dropAsked) it says how many samples were left out (dropped); suite is the
// suite as stored, before DropMigrated.
func MigrationNotes(suite *vmbenchv1.BenchmarkSuite, dropAsked bool, dropped int) []string {
	var notes []string
	if dropAsked {
		notes = append(notes, fmt.Sprintf("--drop-migrated: %d sample(s) measured while a live migration of a run's VMs ran were left out of the statistics", dropped))
	}
	counts := map[string]int{}
	total := 0
	migration := analysis.MigrationBenchmarks(suite.Spec.Benchmarks)
	for _, res := range suite.Status.Results {
		if migration[res.Benchmark] {
			continue // each of its samples measures a migration (marked in statuses from before the manager stopped): the migration lines say so
		}
		for _, m := range res.Metrics {
			for _, s := range m.Samples {
				if s.Migrated {
					counts[fmt.Sprintf("%s %s on %s", res.Benchmark, m.Name, res.Platform)]++
					total++
				}
			}
		}
	}
	migrations, notCompleted, moved := 0, []string{}, []string{}
	for _, run := range suite.Status.Runs {
		if c := run.Compacted; c != nil && c.Migrations > 0 {
			migrations += int(c.Migrations)
			if c.MigrationsNotCompleted > 0 {
				notCompleted = append(notCompleted, fmt.Sprintf("run %s: %d of %d (the run was compacted: see its events)", run.Name, c.MigrationsNotCompleted, c.Migrations))
			}
		}
		for _, m := range run.Migrations {
			migrations++
			who := "VMI " + m.VMI
			if m.Mode == vmbenchv1.MigrationModeEviction {
				who = "eviction of probe worker " + m.SourcePod
			}
			by := ""
			if m.Trigger != "" {
				by = " (" + string(m.Trigger) + ")"
			}
			if m.Outcome == vmbenchv1.MigrationFailed || m.Outcome == vmbenchv1.MigrationAborted {
				notCompleted = append(notCompleted, fmt.Sprintf("run %s %s%s: %s: %s", run.Name, who, by, m.Outcome, m.Message))
			}
			if m.Trigger != "" && m.Trigger != vmbenchv1.MigrationByBenchmark {
				moved = append(moved, fmt.Sprintf("run %s %s from node %s to node %s%s: %s", run.Name, who, m.SourceNode, m.TargetNode, by, m.Outcome))
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
		treated := "they stay in the statistics, as what a workload saw across the move (--drop-migrated leaves them out), and are counted here"
		if dropAsked {
			treated = "--drop-migrated left them out of the statistics where status kept their samples"
		}
		notes = append(notes, fmt.Sprintf("%d sample(s) were measured while one of %d live migration(s) of a run's VMs ran "+
			"(status.runs[].migrations); %s: %s", total, migrations, treated, strings.Join(parts, ", ")))
	}
	if len(moved) > 0 {
		const listed = 10
		if len(moved) > listed {
			moved = append(moved[:listed], fmt.Sprintf("and %d more", len(moved)-listed))
		}
		notes = append(notes, "live migrations vmbench did not start (Evacuation: a node drain; WorkloadUpdate: KubeVirt's upgrade; "+
			"User: another migration object; status.runs[].migrations names each object): "+strings.Join(moved, "; "))
	}
	if len(notCompleted) > 0 {
		notes = append(notes, "live migrations that did not complete: "+strings.Join(notCompleted, "; "))
	}
	return notes
}

// MigrationLine is what one migration benchmark's migrations cost the guest on one VM platform:
// the first screen's line for it. It is computed by internal/analysis, which the manager links to
// write the same lines into status.migrationSummaries.
type MigrationLine = analysis.MigrationLine

// MigrationFigure is one figure's mean over the migrations and its 95% interval.
type MigrationFigure = analysis.MigrationFigure

// MigrationLegend says what the migration lines' figures are, the VM's and the container arm's (a pod
// evicted and rescheduled).
const MigrationLegend = "migration: means over the live migrations, each migration one sample (over every repetition), " +
	"with their 95% interval (Student t, clipped at 0) in brackets, [n/a] below two; pause: the longest gap of the guest's 10 ms ticker " +
	"during the migration, to be read against the background gap, the longest in the 10 s before it (the guest's stalls without one); " +
	"peer lost it: the longest gap in the 10 ms reports of the run's probe worker pod, outside the VM, to the master VM by its Service name " +
	"(the pause, the new pod's network and the reconnect; absent without a peer); " +
	"total: KubeVirt's migration start to end (whole seconds); dip: the work lost against the rate before the migration, " +
	"for the time until back at rate; migrations that did not complete count in N of K and are named in the notes; " +
	"a dirty-rate sweep has a line per rate, with the rate the guest's writer achieved, and compares the pause and total with the rate " +
	"before (grew or fell: the intervals apart) " +
	"(docs/migration.md); pod eviction (a Container platform): the probe worker pod evicted through the Eviction API and replaced " +
	"on another node, each eviction one sample; back at rate: from the eviction accepted until the work is at 90% of its rate again; work lost: " +
	"the dip, for its length; pause: the longest gap of the worker's 10 ms reports at the master; total: the eviction to the replacement Ready"

// migrationTexts are the first screen's migration lines; each names its benchmark when the suite
// has more than one migration benchmark.
func (r *Report) migrationTexts() []string { return analysis.MigrationTexts(r.Migrations) }

// writeMigrations prints the migration lines of the first screen.
func (r *Report) writeMigrations(w io.Writer) {
	for _, t := range r.migrationTexts() {
		fmt.Fprintln(w, t)
	}
}
