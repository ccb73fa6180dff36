package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// PlatformStartup is one platform's time to workload: per phase of its runs' start, the mean over
// the runs that recorded it, and for VM platforms what Kubernetes reserved per VM beyond its guest.
type PlatformStartup struct {
	Platform string
	// Runs counts the runs that recorded any phase.
	Runs int
	// Phases is the mean per phase, in seconds from the run's children being created; a phase no run
	// recorded is absent.
	Phases map[string]float64
	// OverheadCPU and OverheadMemory are the largest virt-launcher overhead over the platform's
	// runs; nil for container platforms and for statuses from before vmbench recorded it.
	OverheadCPU    *resource.Quantity
	OverheadMemory *resource.Quantity
}

// startupOf gathers, per platform in the suite's order, what its runs recorded of their start;
// platforms whose runs recorded nothing (a status from before vmbench recorded it) are left out.
func startupOf(suite *vmbenchv1.BenchmarkSuite, platforms []string) []PlatformStartup {
	var out []PlatformStartup
	for _, platform := range platforms {
		ps := PlatformStartup{Platform: platform, Phases: map[string]float64{}}
		sums, counts := map[string]float64{}, map[string]int{}
		for _, run := range suite.Status.Runs {
			if run.Platform != platform {
				continue
			}
			if phases := run.StartupSeconds.Phases(); len(phases) > 0 {
				ps.Runs++
				for _, p := range phases {
					sums[p.Name] += p.Seconds
					counts[p.Name]++
				}
			}
			if o := run.LauncherOverhead; o != nil {
				if ps.OverheadCPU == nil || o.CPU.Cmp(*ps.OverheadCPU) > 0 {
					ps.OverheadCPU = ptrQuantity(o.CPU)
				}
				if ps.OverheadMemory == nil || o.Memory.Cmp(*ps.OverheadMemory) > 0 {
					ps.OverheadMemory = ptrQuantity(o.Memory)
				}
			}
		}
		for name, n := range counts {
			ps.Phases[name] = sums[name] / float64(n)
		}
		if ps.Runs > 0 || ps.OverheadCPU != nil {
			out = append(out, ps)
		}
	}
	return out
}

func ptrQuantity(q resource.Quantity) *resource.Quantity { return &q }

// PhaseCell is a phase's mean in seconds, or "-" where no run recorded it.
func (ps PlatformStartup) PhaseCell(name string) string {
	v, ok := ps.Phases[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// ReservedCell is what Kubernetes reserved per VM beyond its guest: "+250m CPU, +263 MiB", or "-".
func (ps PlatformStartup) ReservedCell() string {
	if ps.OverheadCPU == nil || ps.OverheadMemory == nil {
		return "-"
	}
	cpu := ps.OverheadCPU.String()
	if ps.OverheadCPU.Sign() >= 0 {
		cpu = "+" + cpu
	}
	return fmt.Sprintf("%s CPU, %+.0f MiB", cpu, ps.OverheadMemory.AsApproximateFloat64()/(1<<20))
}

// StartupLegend explains the time-to-workload table.
const StartupLegend = "TIME TO WORKLOAD: seconds from the run's children being created until the last of its pods or VMs reached each phase, " +
	"mean over the runs that recorded it: pods scheduled, their sandboxes ready (PodReadyToStartContainers; from there to the " +
	"containers' start is mostly the image pull), containers started; VMIs Scheduled and Running (KubeVirt's phase transitions, " +
	"as kube-burner's vmiLatency); runner ready: the runner reached every node, by its own clock, just before the first benchmark. " +
	"RESERVED BEYOND THE GUEST: per VM, the virt-launcher pod's requests minus the guest's, the largest over the runs: " +
	"what a VM costs the node's capacity besides the CPUs and memory its guest gets"

// writeStartup prints the time-to-workload table, one row per platform; nothing when no run
// recorded its start.
func (r *Report) writeStartup(w io.Writer) error {
	if len(r.Startup) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nTime to workload (s)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := []string{"PLATFORM", "RUNS"}
	for _, name := range vmbenchv1.StartupPhaseNames {
		header = append(header, strings.ToUpper(phaseWords(name)))
	}
	header = append(header, "RESERVED BEYOND THE GUEST (per VM)")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, ps := range r.Startup {
		cells := []string{ps.Platform, fmt.Sprint(ps.Runs)}
		for _, name := range vmbenchv1.StartupPhaseNames {
			cells = append(cells, ps.PhaseCell(name))
		}
		cells = append(cells, ps.ReservedCell())
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, StartupLegend)
	return nil
}

// phaseWords spells a phase's name out: podsScheduled -> pods scheduled.
func phaseWords(name string) string {
	var b strings.Builder
	for i, c := range name {
		if i > 0 && c >= 'A' && c <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return strings.ToLower(b.String())
}
