package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The table of runs: how each run went and how long the machinery around its benchmarks took.

// RunRow is one run of the suite.
type RunRow struct {
	Name        string
	Platform    string
	Phase       string
	Accelerator string
	Network     string
	// BootSeconds is per VM, in the run's node order: VMI created to the runner reaching it.
	BootSeconds []vmbenchv1.NodeTiming
	// SlowestBootSeconds is set instead of BootSeconds for a run whose per-node lists were compacted
	// in status: only its slowest VM's boot time is left.
	SlowestBootSeconds   *float64
	OrchestrationSeconds *float64
}

// writeRuns is the table of runs: what each VM run ran on and how long the machinery around the
// benchmarks took (VM boot: VMI created to the runner reaching the VM).
func (r *Report) writeRuns(w io.Writer) error {
	if len(r.Runs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRuns")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLATFORM\tPHASE\tACCELERATOR\tNETWORK\tVM BOOT (s)\tORCHESTRATION (s)")
	for _, run := range r.Runs {
		boot := make([]string, len(run.BootSeconds))
		for i, b := range run.BootSeconds {
			boot[i] = fmt.Sprintf("%s %.0f", b.Node, b.Seconds)
		}
		if run.SlowestBootSeconds != nil {
			boot = append(boot, fmt.Sprintf("slowest %.0f", *run.SlowestBootSeconds))
		}
		orchestration := "-"
		if run.OrchestrationSeconds != nil {
			orchestration = fmt.Sprintf("%.0f", *run.OrchestrationSeconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", run.Name, run.Platform, run.Phase, orDash(run.Accelerator),
			orDash(run.Network), orDash(strings.Join(boot, ", ")), orchestration)
	}
	return tw.Flush()
}
