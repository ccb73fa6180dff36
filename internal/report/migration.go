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
		treated := "they stay in the statistics, as what a workload saw across the move (--drop-migrated leaves them out), and are counted here"
		if dropAsked {
			treated = "--drop-migrated left them out of the statistics where status kept their samples"
		}
		notes = append(notes, fmt.Sprintf("%d sample(s) were measured while one of %d live migration(s) of a run's VMs ran "+
			"(status.runs[].migrations); %s: %s", total, migrations, treated, strings.Join(parts, ", ")))
	}
	if len(notCompleted) > 0 {
		notes = append(notes, "live migrations that did not complete: "+strings.Join(notCompleted, "; "))
	}
	return notes
}

// MigrationLines gives, per migration benchmark and platform, what its migrations cost the guest:
// "migration mig on vm: pause 310 ± 25 ms, total 4.0 ± 2.5 s, dip 50 ± 0 % for 0.8 ± 0 s (3 of 4
// migration(s) completed, 95% intervals over the 3 measured)". Each migration is one sample, so the
// intervals are over the migrations (t, 95%), not over repetitions; the migrations that did not
// complete are named by MigrationNotes.
func MigrationLines(suite *vmbenchv1.BenchmarkSuite) []string {
	migration := map[string]bool{}
	for _, b := range suite.Spec.Benchmarks {
		migration[b.Name] = b.Type == vmbenchv1.BenchmarkMigration
	}
	var lines []string
	for _, res := range suite.Status.Results {
		if !migration[res.Benchmark] {
			continue
		}
		n := 0
		figure := func(name, unit string) string {
			for _, m := range res.Metrics {
				if m.Name != name || len(m.Samples) == 0 {
					continue
				}
				values := make([]float64, len(m.Samples))
				for i, s := range m.Samples {
					values[i] = s.Value
				}
				n = max(n, len(values))
				mean, sd := MeanStdDev(values)
				if ci, ok := CIHalfWidth(Summary{N: len(values), Mean: mean, StdDev: sd, Samples: len(values), FromSamples: true}, 0.95); ok {
					return FormatMeanCI(mean, ci) + " " + unit
				}
				return FormatValue(mean) + " " + unit + " (no interval)"
			}
			return "n/a"
		}
		line := fmt.Sprintf("migration %s on %s: pause %s, total %s, dip %s for %s", res.Benchmark, res.Platform,
			figure("pause_ms", "ms"), figure("total_seconds", "s"), figure("dip_percent", "%"), figure("recovery_seconds", "s"))
		made, completed := 0, 0
		for _, m := range res.Metrics {
			if m.Name == "completed" {
				for _, s := range m.Samples {
					made++
					if s.Value == 1 {
						completed++
					}
				}
			}
		}
		line += fmt.Sprintf(" (%d of %d migration(s) completed, 95%% intervals over the %d measured", completed, made, n)
		if res.Failures > 0 {
			line += fmt.Sprintf("; %d not measured: %s", res.Failures, res.LastError)
		}
		lines = append(lines, line+")")
	}
	return lines
}
