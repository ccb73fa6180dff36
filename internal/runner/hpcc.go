package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// HPCCLayout is the size and process grid of one HPCC run across all nodes.
type HPCCLayout struct {
	// RanksPerNode and Ranks are the MPI ranks on each node and in total.
	RanksPerNode int32
	Ranks        int32
	// N is the HPL problem size, NB its block size, P x Q the process grid.
	N, NB, P, Q int32
}

// PlanHPCC sizes HPCC for plan. A derived N fills MemoryPercent of the memory of all nodes, taken
// from the plan's limits rather than /proc/meminfo, which shows the host's memory in a pod.
func PlanHPCC(p *vmbenchv1.HPCCParams, plan runplan.Plan) (HPCCLayout, error) {
	l := HPCCLayout{NB: or(p.NB, 192), RanksPerNode: plan.CPU}
	if p.RanksPerNode != nil {
		l.RanksPerNode = *p.RanksPerNode
	}
	if l.RanksPerNode < 1 {
		return l, fmt.Errorf("hpcc: %d ranks per node; set hpcc.ranksPerNode or the plan's cpu", l.RanksPerNode)
	}
	l.Ranks = l.RanksPerNode * int32(len(plan.Nodes))

	switch {
	case p.N != nil:
		l.N = *p.N
	default:
		if plan.MemoryBytes <= 0 {
			return l, errors.New("hpcc: cannot derive N without the plan's memory limit; set hpcc.problemSize")
		}
		sizing := vmbenchv1.HPCCParams{NB: l.NB, MemoryPercent: or(p.MemoryPercent, 80)}
		l.N = sizing.DerivedN(int32(len(plan.Nodes)), plan.MemoryBytes)
		if l.N < l.NB {
			return l, fmt.Errorf("hpcc: %d%% of %d nodes x %d bytes is too little memory for one %d-wide block; set hpcc.problemSize",
				sizing.MemoryPercent, len(plan.Nodes), plan.MemoryBytes, l.NB)
		}
	}

	switch {
	case p.P != nil && p.Q != nil:
		l.P, l.Q = *p.P, *p.Q
		if l.P*l.Q != l.Ranks {
			return l, fmt.Errorf("hpcc: process grid %dx%d needs %d ranks, but the run has %d (%d per node on %d nodes)",
				l.P, l.Q, l.P*l.Q, l.Ranks, l.RanksPerNode, len(plan.Nodes))
		}
	case p.P != nil || p.Q != nil:
		return l, errors.New("hpcc: set both p and q, or neither")
	default:
		l.P, l.Q = squarestGrid(l.Ranks)
	}
	return l, nil
}

// squarestGrid factors ranks into P x Q with P <= Q as close as possible: HPL runs best on nearly
// square grids that are slightly wider than tall.
func squarestGrid(ranks int32) (p, q int32) {
	for p = int32(math.Sqrt(float64(ranks))); p > 1; p-- {
		if ranks%p == 0 {
			break
		}
	}
	return p, ranks / p
}

// HPCCInput is hpccinf.txt for l. HPCC reads its lines by position, so the layout, including the
// text after the values, follows the HPL.dat that HPCC ships.
func HPCCInput(l HPCCLayout) string {
	return fmt.Sprintf(`HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
%-12d Ns
1            # of NBs
%-12d NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
%-12d Ps
%-12d Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
`, l.N, l.NB, l.P, l.Q)
}

// MPIRunArgv starts HPCC on every node with l.RanksPerNode slots each. Ranks on one node talk through
// shared memory (vader) and across nodes through TCP, as on the hand-built VirtualBox clusters, in
// pods and VMs alike; vader's single-copy path is off because it depends on ptrace permissions
// that differ between pods and VMs. No binding because the ranks share the node with the runner and
// sshd, and one OpenBLAS thread per rank so that ranks do not oversubscribe the CPUs. asRoot adds the
// flag Open MPI requires as root.
func MPIRunArgv(plan runplan.Plan, l HPCCLayout, asRoot bool) []string {
	hosts := make([]string, len(plan.Nodes))
	for i, n := range plan.Nodes {
		hosts[i] = n.Address + ":" + strconv.Itoa(int(l.RanksPerNode))
	}
	argv := []string{"mpirun",
		"-np", strconv.Itoa(int(l.Ranks)),
		"--host", strings.Join(hosts, ","),
		"--bind-to", "none",
		"--mca", "btl", "self,vader,tcp",
		"--mca", "btl_vader_single_copy_mechanism", "none",
		"-x", "OPENBLAS_NUM_THREADS=1",
		"-x", "LC_ALL=C"}
	if asRoot {
		argv = append(argv, "--allow-run-as-root")
	}
	argv = append(argv, plan.MPIArgs...)
	return append(argv, "hpcc")
}

// hpcc runs one HPCC across all nodes from a fresh directory on the master, where rank 0 reads
// hpccinf.txt and writes hpccoutf.txt.
func (r *Runner) hpcc(plan runplan.Plan, p *vmbenchv1.HPCCParams) execution {
	master := plan.Nodes[0]
	layout, err := PlanHPCC(p, plan)
	if err != nil {
		return failed(master.Name, err)
	}
	return execution{label: master.Name, tool: results.HPCC,
		run: func(ctx context.Context) ([]byte, []byte, error) {
			root := scratchDir(plan)
			if err := os.MkdirAll(root, 0o755); err != nil {
				return nil, nil, err
			}
			dir, err := os.MkdirTemp(root, "hpcc-")
			if err != nil {
				return nil, nil, err
			}
			defer func() { _ = os.RemoveAll(dir) }()
			if err := os.WriteFile(filepath.Join(dir, "hpccinf.txt"), []byte(HPCCInput(layout)), 0o644); err != nil {
				return nil, nil, err
			}
			r.progressf("hpcc: N=%d NB=%d P=%d Q=%d, %d ranks", layout.N, layout.NB, layout.P, layout.Q, layout.Ranks)
			_, raw, runErr := r.tool(ctx, master, Command{Argv: MPIRunArgv(plan, layout, r.asRoot()), Dir: dir})
			out, readErr := os.ReadFile(filepath.Join(dir, "hpccoutf.txt"))
			raw = append(raw, out...)
			switch {
			case runErr != nil:
				return nil, raw, runErr
			case readErr != nil:
				return nil, raw, fmt.Errorf("hpcc wrote no results: %w", readErr)
			}
			return out, raw, nil
		}}
}
