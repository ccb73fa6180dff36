package runner

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// HPCCLayout is the size and process grids of one HPCC run across the nodes taking part.
type HPCCLayout struct {
	// Hosts are the nodes HPCC runs on, in rank order: Hosts[0] runs rank 0, which reads
	// hpccinf.txt from and writes hpccoutf.txt to its working directory.
	Hosts []runplan.Node
	// RanksPerNode and Ranks are the MPI ranks on each node and in total.
	RanksPerNode int32
	Ranks        int32
	// Ns are HPL's problem sizes, NBs its block sizes and Grids its process grids: HPL runs every
	// combination, grids outermost, then problem sizes, then block sizes.
	Ns, NBs []int32
	Grids   []vmbenchv1.HPLGrid
}

// Points is the HPL runs of the layout, in the order HPL runs them.
func (l HPCCLayout) Points() []results.HPLPoint {
	var out []results.HPLPoint
	for _, g := range l.Grids {
		for _, n := range l.Ns {
			for _, nb := range l.NBs {
				out = append(out, results.HPLPoint{N: int(n), NB: int(nb), P: int(g.P), Q: int(g.Q)})
			}
		}
	}
	return out
}

// PlanHPCC sizes HPCC for plan. A derived N fills MemoryPercent of the memory of the nodes taking
// part, taken from the plan's limits rather than /proc/meminfo, which shows the host's memory in a
// pod.
func PlanHPCC(p *vmbenchv1.HPCCParams, plan runplan.Plan) (HPCCLayout, error) {
	l := HPCCLayout{Hosts: plan.Nodes, NBs: p.BlockSizeList(), RanksPerNode: plan.CPU}
	if p.Nodes == vmbenchv1.HPCCWorkers {
		if len(plan.Nodes) < 2 {
			return l, errors.New("hpcc: nodes Workers needs a worker, and the run has only the master; set spec.cluster.nodes to 2 or more, or hpcc.nodes to All")
		}
		l.Hosts = plan.Nodes[1:]
	}
	if p.RanksPerNode != nil {
		l.RanksPerNode = *p.RanksPerNode
	}
	if l.RanksPerNode < 1 {
		return l, fmt.Errorf("hpcc: %d ranks per node; set hpcc.ranksPerNode or the plan's cpu", l.RanksPerNode)
	}
	hosts := int32(len(l.Hosts))
	l.Ranks = l.RanksPerNode * hosts

	l.Ns = p.ProblemSizeList()
	if l.Ns == nil {
		if plan.MemoryBytes <= 0 {
			return l, errors.New("hpcc: cannot derive N without the plan's memory limit; set hpcc.problemSize")
		}
		n := p.SizingN(hosts, plan.MemoryBytes)
		if nb := slices.Max(l.NBs); n < nb {
			return l, fmt.Errorf("hpcc: %d%% of %d nodes x %d bytes is too little memory for one %d-wide block; set hpcc.problemSize",
				cmp.Or(p.MemoryPercent, 80), hosts, plan.MemoryBytes, nb)
		}
		l.Ns = []int32{n}
	}

	if (p.P == nil) != (p.Q == nil) {
		return l, errors.New("hpcc: set both p and q, or neither")
	}
	l.Grids = p.GridList()
	if l.Grids == nil {
		gp, gq := squarestGrid(l.Ranks)
		l.Grids = []vmbenchv1.HPLGrid{{P: gp, Q: gq}}
	}
	// HPCC refuses an hpccinf.txt with a grid larger than the run and silently runs its built-in
	// defaults instead; a smaller grid leaves ranks idle.
	for _, g := range l.Grids {
		if g.P*g.Q != l.Ranks {
			return l, fmt.Errorf("hpcc: process grid %dx%d needs %d ranks, but the run has %d (%d per node on %d nodes)",
				g.P, g.Q, g.P*g.Q, l.Ranks, l.RanksPerNode, hosts)
		}
	}
	if points := len(l.Ns) * len(l.NBs) * len(l.Grids); points > vmbenchv1.MaxHPLPoints {
		return l, fmt.Errorf("hpcc: %d problem sizes x %d block sizes x %d grids are %d HPL points, more than %d; shorten a list",
			len(l.Ns), len(l.NBs), len(l.Grids), points, vmbenchv1.MaxHPLPoints)
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
// text after the values, follows the HPL.dat that HPCC ships; a list's values are separated by
// spaces on one line, as HPL reads them.
func HPCCInput(l HPCCLayout) string {
	ps := make([]int32, len(l.Grids))
	qs := make([]int32, len(l.Grids))
	for i, g := range l.Grids {
		ps[i], qs[i] = g.P, g.Q
	}
	return fmt.Sprintf(`HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
%-12d # of problems sizes (N)
%-12s Ns
%-12d # of NBs
%-12s NBs
0            PMAP process mapping (0=Row-,1=Column-major)
%-12d # of process grids (P x Q)
%-12s Ps
%-12s Qs
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
`, len(l.Ns), joinInts(l.Ns), len(l.NBs), joinInts(l.NBs), len(l.Grids), joinInts(ps), joinInts(qs))
}

func joinInts(v []int32) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, " ")
}

// MPIRunArgv starts HPCC on the layout's hosts with l.RanksPerNode slots each; mpirun itself runs on
// the master, which with hpcc.nodes Workers is not among them. Ranks on one node talk through
// shared memory (vader) and across nodes through TCP, as on the hand-built VirtualBox clusters, in
// pods and VMs alike; vader's single-copy path is off because it depends on ptrace permissions
// that differ between pods and VMs. No binding because the ranks share the node with the runner and
// sshd, and one OpenBLAS thread per rank so that ranks do not oversubscribe the CPUs. asRoot adds the
// flag Open MPI requires as root.
func MPIRunArgv(plan runplan.Plan, l HPCCLayout, asRoot bool) []string {
	hosts := make([]string, len(l.Hosts))
	for i, n := range l.Hosts {
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

// hpcc runs one HPCC across the nodes taking part. mpirun runs on the master from a fresh directory,
// whose path rank 0 finds on its own node too (Open MPI starts remote ranks in mpirun's working
// directory when it exists there): rank 0 reads hpccinf.txt from it and writes hpccoutf.txt to it.
// With hpcc.nodes Workers rank 0 is on the first worker, so the directory is made, filled and read
// there over the executor. The result's node is rank 0's.
func (r *Runner) hpcc(plan runplan.Plan, p *vmbenchv1.HPCCParams) execution {
	master := plan.Nodes[0]
	layout, err := PlanHPCC(p, plan)
	if err != nil {
		return failed(master.Name, err)
	}
	rank0 := layout.Hosts[0]
	remote := rank0.Name != master.Name
	return execution{label: rank0.Name, tool: results.HPCC,
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
			input := HPCCInput(layout)
			if remote {
				defer r.removeDir(ctx, rank0, dir)
				if _, raw, err := r.tool(ctx, rank0, Command{Argv: writeFileArgv(dir, "hpccinf.txt", input)}); err != nil {
					return nil, raw, fmt.Errorf("writing hpccinf.txt on %s: %w", rank0.Name, err)
				}
			} else if err := os.WriteFile(filepath.Join(dir, "hpccinf.txt"), []byte(input), 0o644); err != nil {
				return nil, nil, err
			}
			r.progressf("hpcc: %s on %d ranks of %s", describeHPCC(layout), layout.Ranks, hostNames(layout.Hosts))
			_, raw, runErr := r.tool(ctx, master, Command{Argv: MPIRunArgv(plan, layout, r.asRoot()), Dir: dir})
			var out []byte
			var readErr error
			if remote {
				out, _, readErr = r.tool(ctx, rank0, Command{Argv: []string{"cat", filepath.Join(dir, "hpccoutf.txt")}})
			} else {
				out, readErr = os.ReadFile(filepath.Join(dir, "hpccoutf.txt"))
			}
			raw = append(raw, out...)
			switch {
			case runErr != nil:
				return nil, raw, runErr
			case readErr != nil:
				return nil, raw, fmt.Errorf("hpcc wrote no results on %s: %w", rank0.Name, readErr)
			}
			if err := checkHPLPoints(layout, out); err != nil {
				return nil, raw, err
			}
			return out, raw, nil
		}}
}

// checkHPLPoints compares the HPL runs in HPCC's output with the ones asked for. HPCC does not fail
// on an hpccinf.txt that HPL refuses (a grid needing more ranks than the run has, a value out of
// range): it prints HPL's error to stderr and runs its built-in defaults instead (NB=80, the squarest
// grid, N from the memory), with Success=1. Those figures answer another question.
func checkHPLPoints(l HPCCLayout, out []byte) error {
	got, err := results.HPLPoints(out)
	if err != nil {
		return nil // the parser reports an output without an HPL section
	}
	want := l.Points()
	key := func(p results.HPLPoint) results.HPLPoint { return results.HPLPoint{N: p.N, NB: p.NB, P: p.P, Q: p.Q} }
	same := len(got) == len(want)
	for i := 0; same && i < len(got); i++ {
		same = key(got[i]) == want[i]
	}
	if same {
		return nil
	}
	ran := make([]string, len(got))
	for i, p := range got {
		ran[i] = p.String()
	}
	return fmt.Errorf("hpcc ran HPL at %s instead of the %d point(s) of hpccinf.txt (%s): HPL refused the input and HPCC fell back to its built-in defaults; see HPL's error in the output",
		strings.Join(ran, ", "), len(want), describeHPCC(l))
}

// describeHPCC lists a layout's values for people: N=1024,2048 NB=64 grids 2x3.
func describeHPCC(l HPCCLayout) string {
	grids := make([]string, len(l.Grids))
	for i, g := range l.Grids {
		grids[i] = fmt.Sprintf("%dx%d", g.P, g.Q)
	}
	return fmt.Sprintf("N=%s NB=%s grid %s", strings.ReplaceAll(joinInts(l.Ns), " ", ","),
		strings.ReplaceAll(joinInts(l.NBs), " ", ","), strings.Join(grids, ","))
}

func hostNames(nodes []runplan.Node) string {
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return strings.Join(names, ",")
}

// writeFileArgv writes content to dir/name on a node, making dir first.
func writeFileArgv(dir, name, content string) []string {
	return []string{"sh", "-c", `mkdir -p "$1" && printf '%s' "$2" > "$1/$3"`, "sh", dir, content, name}
}

// removeDir deletes dir on n, with time of its own: after a timeout ctx is already over.
func (r *Runner) removeDir(ctx context.Context, n runplan.Node, dir string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, stderr, err := r.Exec.Run(cctx, n, Command{Argv: []string{"rm", "-rf", dir}}); err != nil {
		r.progressf("removing %s on %s: %v %s", dir, n.Name, err, bytes.TrimSpace(stderr))
	}
}
