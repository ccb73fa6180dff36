// Package report turns a BenchmarkSuite's status into tables, plots and regression checks: every
// other platform against the baseline platform, with 95% confidence intervals over repetitions,
// coefficients of variation, Welch's t-test corrected with Holm-Bonferroni over all comparisons of
// the report, and the minimum effect the suite could have detected.
package report

import (
	"fmt"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// EmulatedNote is the footnote of every output that shows emulated figures.
const EmulatedNote = "(emulated): the VMs ran under QEMU software emulation (TCG), not KVM; these figures do not measure VM overhead"

// Report is one suite's results, arranged for reading.
type Report struct {
	Suite    string
	Baseline string
	// Tolerance is the half-width of the band, as a fraction of 1, inside which a ratio counts as
	// equivalent.
	Tolerance float64
	Rows      []Row
	// Summaries are per platform: each benchmark, each resource and the overall figure.
	Summaries []PlatformSummary
	// Context is the one line that says what was measured on what.
	Context string
	// Comparisons is the size of the family that Holm's correction covers: every row with a test.
	Comparisons int
	// Runs say how each run went: for VMs the accelerator, network, boot times, and for every run
	// the time orchestration took besides the benchmarks.
	Runs []RunRow
	// Startup is, per platform, its runs' time to workload and, for VMs, what Kubernetes reserved per
	// VM beyond its guest; empty for statuses from before vmbench recorded them.
	Startup []PlatformStartup
	// VMSettings are, per VM platform, how its VMs were built; empty for statuses from before vmbench
	// recorded them, unless the spec sets some.
	VMSettings []PlatformVMSettings
	// Notes are facts a reader of the table must know: failed executions, the suite's warnings.
	Notes []string
	// Sweeps are the HPL sweeps of hpcc benchmarks that ran several points per execution.
	Sweeps []HPLSweepTable
	// KVMBands are the VM metrics that have a KVM band, each placed against it.
	KVMBands []KVMBandRow
	// Migrations are, per migration benchmark and VM platform, what its live migrations cost the
	// guest: the first screen's migration lines.
	Migrations []MigrationLine
}

// Options change how Build judges.
type Options struct {
	// Tolerance overrides the suite's spec.report.tolerancePercent (a fraction: 0.05 for 5%).
	Tolerance *float64
}

// Build compares every platform with the suite's baseline platform, benchmark by benchmark, in spec
// order, with the suite's tolerance. It fails when the suite has no results to compare.
func Build(suite *vmbenchv1.BenchmarkSuite) (*Report, error) {
	return BuildWith(suite, Options{})
}

// BuildWith is Build with options.
func BuildWith(suite *vmbenchv1.BenchmarkSuite, opts Options) (*Report, error) {
	tolerance := toleranceOf(suite, opts)
	a, err := analysis.Analyze(suite, tolerance)
	if err != nil {
		return nil, err
	}
	r := &Report{Suite: suiteName(suite), Baseline: a.Baseline, Tolerance: a.Tolerance, Rows: a.Rows,
		Summaries: a.Summaries, Comparisons: a.Comparisons}
	r.VMSettings = vmSettingsOf(suite)
	r.Context = contextLine(suite, r)
	r.Startup = startupOf(suite, platformOrder(suite))
	for _, res := range suite.Status.Results {
		if res.Failures > 0 {
			note := fmt.Sprintf("%s on %s: %d failed execution(s)", res.Benchmark, res.Platform, res.Failures)
			if res.LastError != "" {
				note += "; last error: " + res.LastError
			}
			r.Notes = append(r.Notes, note)
		}
	}
	for _, bench := range concurrentBenchmarks(suite) {
		r.Notes = append(r.Notes, fmt.Sprintf("%s %s: it ran on all nodes of each run at once (concurrency AllNodes), so each node's value "+
			"includes the contention of the other nodes; compare it with runs of the same concurrency only", bench, AllNodesMark))
	}
	r.Notes = append(r.Notes, sharedStorageNotes(suite)...)
	r.Notes = append(r.Notes, suite.Status.Warnings...)
	r.Sweeps = sweepTables(suite)
	r.KVMBands = kvmBandsOf(suite, r.Rows)
	r.Migrations = analysis.MigrationLines(suite)
	for _, run := range suite.Status.Runs {
		row := RunRow{Name: run.Name, Platform: run.Platform, Phase: string(run.Phase),
			Accelerator: string(run.Accelerator), Network: run.Network, BootSeconds: run.BootSeconds,
			OrchestrationSeconds: run.OrchestrationSeconds}
		if run.Compacted != nil && len(run.BootSeconds) == 0 {
			row.SlowestBootSeconds = run.Compacted.MaxBootSeconds
		}
		r.Runs = append(r.Runs, row)
	}
	return r, nil
}

func pointer[T any](v T) *T { return &v }
