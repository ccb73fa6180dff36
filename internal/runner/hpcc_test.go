package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

func hpccPlan(nodes int, cpu int32, mem int64) runplan.Plan {
	p := runplan.Plan{CPU: cpu, MemoryBytes: mem}
	for i := range nodes {
		p.Nodes = append(p.Nodes, runplan.Node{Name: []string{"master", "node01", "node02", "node03"}[i], Address: []string{"m.svc", "n1.svc", "n2.svc", "n3.svc"}[i]})
	}
	return p
}

func TestPlanHPCC(t *testing.T) {
	grid := func(p, q int32) []vmbenchv1.HPLGrid { return []vmbenchv1.HPLGrid{{P: p, Q: q}} }
	nodes := func(plan runplan.Plan, from int) []runplan.Node { return plan.Nodes[from:] }
	three := hpccPlan(3, 2, 2<<30)
	for _, tc := range []struct {
		name   string
		params vmbenchv1.HPCCParams
		plan   runplan.Plan
		want   HPCCLayout
	}{
		{
			// 80% of 3 x 2 GiB = 5153960755 bytes -> 644245094 doubles -> sqrt 25381.98 -> 25344 (132 x 192).
			name:   "derived N, 6 ranks",
			params: vmbenchv1.HPCCParams{MemoryPercent: 80, NB: 192},
			plan:   three,
			want:   HPCCLayout{Hosts: three.Nodes, RanksPerNode: 2, Ranks: 6, Ns: []int32{25344}, NBs: []int32{192}, Grids: grid(2, 3)},
		},
		{
			// No nb and no blockSizes: 192, as before nb lost its CRD default.
			name:   "default block size",
			params: vmbenchv1.HPCCParams{MemoryPercent: 80},
			plan:   three,
			want:   HPCCLayout{Hosts: three.Nodes, RanksPerNode: 2, Ranks: 6, Ns: []int32{25344}, NBs: []int32{192}, Grids: grid(2, 3)},
		},
		{
			name:   "explicit N and ranks per node, prime rank count",
			params: vmbenchv1.HPCCParams{N: ptr[int32](3000), NB: 96, MemoryPercent: 80, RanksPerNode: ptr[int32](1)},
			plan:   hpccPlan(3, 4, 1<<30),
			want:   HPCCLayout{Hosts: hpccPlan(3, 4, 1<<30).Nodes, RanksPerNode: 1, Ranks: 3, Ns: []int32{3000}, NBs: []int32{96}, Grids: grid(1, 3)},
		},
		{
			name:   "explicit grid",
			params: vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 100, MemoryPercent: 80, P: ptr[int32](1), Q: ptr[int32](8)},
			plan:   hpccPlan(2, 4, 1<<30),
			want:   HPCCLayout{Hosts: hpccPlan(2, 4, 1<<30).Nodes, RanksPerNode: 4, Ranks: 8, Ns: []int32{1000}, NBs: []int32{100}, Grids: grid(1, 8)},
		},
		{
			name:   "square grid, capped N",
			params: vmbenchv1.HPCCParams{MemoryPercent: 90, NB: 256},
			plan:   hpccPlan(4, 4, 1<<40),
			want:   HPCCLayout{Hosts: hpccPlan(4, 4, 1<<40).Nodes, RanksPerNode: 4, Ranks: 16, Ns: []int32{199936}, NBs: []int32{256}, Grids: grid(4, 4)},
		},
		{
			name: "sweep of the studies: 4 Ns, 4 NBs, P=2 Q=3",
			params: vmbenchv1.HPCCParams{MemoryPercent: 80, ProblemSizes: []int32{1024, 2048, 4096, 8192}, BlockSizes: []int32{32, 64, 128, 256},
				Grids: grid(2, 3)},
			plan: three,
			want: HPCCLayout{Hosts: three.Nodes, RanksPerNode: 2, Ranks: 6, Ns: []int32{1024, 2048, 4096, 8192}, NBs: []int32{32, 64, 128, 256},
				Grids: grid(2, 3)},
		},
		{
			// The derived N is a multiple of the largest block size: 25381.98 -> 25344 = 99 x 256.
			name:   "block sizes without N",
			params: vmbenchv1.HPCCParams{MemoryPercent: 80, BlockSizes: []int32{64, 256}},
			plan:   three,
			want:   HPCCLayout{Hosts: three.Nodes, RanksPerNode: 2, Ranks: 6, Ns: []int32{25344}, NBs: []int32{64, 256}, Grids: grid(2, 3)},
		},
		{
			name:   "two grids",
			params: vmbenchv1.HPCCParams{MemoryPercent: 80, N: ptr[int32](2000), Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 6}, {P: 2, Q: 3}}},
			plan:   three,
			want:   HPCCLayout{Hosts: three.Nodes, RanksPerNode: 2, Ranks: 6, Ns: []int32{2000}, NBs: []int32{192}, Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 6}, {P: 2, Q: 3}}},
		},
		{
			// The studies' mpirun -np 2 on the two workers; N from the workers' memory only:
			// 80% of 2 x 2 GiB -> sqrt 20724.4 -> 20544 (107 x 192).
			name:   "workers only",
			params: vmbenchv1.HPCCParams{MemoryPercent: 80, Nodes: vmbenchv1.HPCCWorkers, RanksPerNode: ptr[int32](1)},
			plan:   three,
			want:   HPCCLayout{Hosts: nodes(three, 1), RanksPerNode: 1, Ranks: 2, Ns: []int32{20544}, NBs: []int32{192}, Grids: grid(1, 2)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanHPCC(&tc.params, tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("layout mismatch (-want +got):\n%s", diff)
			}
			if tc.params.ProblemSizeList() == nil {
				n := got.Ns[0]
				if n%slices.Max(got.NBs) != 0 {
					t.Errorf("N %d is not a multiple of the largest NB %d", n, slices.Max(got.NBs))
				}
				if int64(n)*int64(n)*8 > tc.plan.MemoryBytes*int64(len(got.Hosts))*int64(tc.params.MemoryPercent)/100 {
					t.Errorf("N %d does not fit", n)
				}
			}
			if len(got.Points()) != len(got.Ns)*len(got.NBs)*len(got.Grids) {
				t.Errorf("%d points", len(got.Points()))
			}
		})
	}
}

func TestPlanHPCCErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params vmbenchv1.HPCCParams
		plan   runplan.Plan
		want   string
	}{
		{"grid does not match ranks", vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 96, P: ptr[int32](2), Q: ptr[int32](2)}, hpccPlan(3, 2, 1<<30), "process grid 2x2 needs 4 ranks, but the run has 6"},
		{"a grid of a list needs more ranks", vmbenchv1.HPCCParams{N: ptr[int32](1000), Grids: []vmbenchv1.HPLGrid{{P: 2, Q: 3}, {P: 2, Q: 4}}}, hpccPlan(3, 2, 1<<30), "process grid 2x4 needs 8 ranks, but the run has 6 (2 per node on 3 nodes)"},
		{"a grid of a list leaves ranks idle", vmbenchv1.HPCCParams{N: ptr[int32](1000), Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 3}}}, hpccPlan(3, 2, 1<<30), "process grid 1x3 needs 3 ranks, but the run has 6"},
		{"grid counts the workers only", vmbenchv1.HPCCParams{N: ptr[int32](1000), Nodes: vmbenchv1.HPCCWorkers, P: ptr[int32](2), Q: ptr[int32](3)}, hpccPlan(3, 2, 1<<30), "process grid 2x3 needs 6 ranks, but the run has 4 (2 per node on 2 nodes)"},
		{"workers of a one-node run", vmbenchv1.HPCCParams{N: ptr[int32](1000), Nodes: vmbenchv1.HPCCWorkers}, hpccPlan(1, 2, 1<<30), "nodes Workers needs a worker"},
		{"too many points", vmbenchv1.HPCCParams{ProblemSizes: []int32{1000, 2000, 3000}, BlockSizes: []int32{32, 64, 128, 256, 512, 1024}}, hpccPlan(3, 2, 1<<30), "3 problem sizes x 6 block sizes x 1 grids are 18 HPL points, more than 16"},
		{"only p", vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 96, P: ptr[int32](2)}, hpccPlan(3, 2, 1<<30), "set both p and q"},
		{"no memory limit", vmbenchv1.HPCCParams{NB: 96, MemoryPercent: 80}, hpccPlan(3, 2, 0), "set hpcc.problemSize"},
		{"too little memory", vmbenchv1.HPCCParams{NB: 1024, MemoryPercent: 1}, hpccPlan(1, 1, 1<<20), "too little memory"},
		{"too little memory for the largest block", vmbenchv1.HPCCParams{BlockSizes: []int32{8, 1024}, MemoryPercent: 1}, hpccPlan(1, 1, 1<<20), "too little memory for one 1024-wide block"},
		{"no cpu", vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 96}, hpccPlan(1, 0, 1<<30), "ranks per node"},
	} {
		_, err := PlanHPCC(&tc.params, tc.plan)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestHPCCInputMatchesTheVerifiedFiles(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		layout  HPCCLayout
	}{
		// The file that HPCC accepted in the recorded run: N=3000, NB=96 on a 1x2 grid.
		{"hpcc-np2.hpccinf.txt", HPCCLayout{Ns: []int32{3000}, NBs: []int32{96}, Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 2}}}},
		// The sweep HPCC ran point by point: Ns 200 400, NBs 32 64, grids 1x2 and 2x1.
		{"hpcc-sweep-np2.hpccinf.txt", HPCCLayout{Ns: []int32{200, 400}, NBs: []int32{32, 64}, Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 2}, {P: 2, Q: 1}}}},
	} {
		if got := HPCCInput(tc.layout); got != fixture(t, tc.fixture) {
			t.Errorf("hpccinf.txt differs from %s:\n%s", tc.fixture, got)
		}
	}
}

// With hpcc.nodes Workers, only the workers are in mpirun's host list; mpirun still runs on the
// master.
func TestMPIRunArgv(t *testing.T) {
	plan := hpccPlan(3, 2, 1<<30)
	plan.MPIArgs = []string{"--mca", "btl_tcp_port_min_v4", "20000"}
	l := HPCCLayout{Hosts: plan.Nodes, RanksPerNode: 2, Ranks: 6}
	want := "mpirun -np 6 --host m.svc:2,n1.svc:2,n2.svc:2 --bind-to none --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 -x LC_ALL=C --mca btl_tcp_port_min_v4 20000 hpcc"
	if got := strings.Join(MPIRunArgv(plan, l, false), " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	wantRoot := "mpirun -np 6 --host m.svc:2,n1.svc:2,n2.svc:2 --bind-to none --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 -x LC_ALL=C --allow-run-as-root --mca btl_tcp_port_min_v4 20000 hpcc"
	if got := strings.Join(MPIRunArgv(plan, l, true), " "); got != wantRoot {
		t.Errorf("as root:\n got %s\nwant %s", got, wantRoot)
	}
	workers, err := PlanHPCC(&vmbenchv1.HPCCParams{N: ptr[int32](1000), Nodes: vmbenchv1.HPCCWorkers}, plan)
	if err != nil {
		t.Fatal(err)
	}
	wantWorkers := "mpirun -np 4 --host n1.svc:2,n2.svc:2 --bind-to none --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 -x LC_ALL=C --mca btl_tcp_port_min_v4 20000 hpcc"
	if got := strings.Join(MPIRunArgv(plan, workers, false), " "); got != wantWorkers {
		t.Errorf("workers:\n got %s\nwant %s", got, wantWorkers)
	}
}

// runHPCC runs one hpcc benchmark with params on the 3-node test plan, mpirun answering with
// hpccoutf.txt, and returns the benchmark's result.
func runHPCC(t *testing.T, params vmbenchv1.HPCCParams, hpccoutf string) (runplan.Message, *fakeExec) {
	t.Helper()
	r, exec, msgs := testRunner(t)
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "hpl", Type: vmbenchv1.BenchmarkHPCC, HPCC: &params})
	exec.respond = func(node string, argv []string) (reply, bool) {
		switch {
		case argv[0] == "mpirun":
			if params.Nodes == vmbenchv1.HPCCWorkers {
				return reply{stdout: "mpirun console\n"}, true
			}
			return reply{stdout: "mpirun console\n", files: map[string]string{"hpccoutf.txt": hpccoutf}}, true
		case argv[0] == "cat" && strings.HasSuffix(argv[1], "/hpccoutf.txt"):
			return reply{stdout: hpccoutf}, true
		}
		return reply{}, false
	}
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var results []runplan.Message
	for _, m := range *msgs {
		if m.Kind == runplan.KindResult {
			results = append(results, m)
		}
	}
	if len(results) != 1 {
		t.Fatalf("%d results, want 1: %+v", len(results), results)
	}
	return results[0], exec
}

// A sweep is one HPCC execution; its result holds HPCC's figures and one metric per point.
func TestHPCCSweepRunsOnce(t *testing.T) {
	params := vmbenchv1.HPCCParams{ProblemSizes: []int32{200, 400}, BlockSizes: []int32{32, 64},
		Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 6}, {P: 6, Q: 1}}}
	// The recorded sweep ran on 2 ranks (grids 1x2 and 2x1); the test plan has 6, so the output is
	// rewritten to the grids asked for, as HPCC would have printed them.
	out := fixture(t, "hpcc-sweep-np2.txt")
	out = strings.ReplaceAll(out, "     1     2      ", "     1     6      ")
	out = strings.ReplaceAll(out, "     2     1      ", "     6     1      ")
	res, exec := runHPCC(t, params, out)
	if res.Error != "" || res.Node != "master" {
		t.Fatalf("result on %s: %s", res.Node, res.Error)
	}
	if !hasMetric(res, "HPL_Tflops") || !hasMetric(res, "HPL_Gflops_N400_NB64_P6_Q1") || !hasMetric(res, "HPL_Gflops_N200_NB32_P1_Q6") {
		t.Errorf("metrics %v", res.Metrics)
	}
	var mpiruns int
	for _, c := range exec.commands() {
		if strings.Contains(c, "mpirun") {
			mpiruns++
		}
	}
	if mpiruns != 1 {
		t.Errorf("%d mpirun calls, want 1: %v", mpiruns, exec.commands())
	}
}

// With hpcc.nodes Workers, rank 0 runs on node01: hpccinf.txt is written there, mpirun on the master
// lists only the workers, hpccoutf.txt is read back from node01 and the directory removed there.
func TestHPCCOnWorkers(t *testing.T) {
	params := vmbenchv1.HPCCParams{ProblemSizes: []int32{200, 400}, BlockSizes: []int32{32, 64},
		Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 2}, {P: 2, Q: 1}}, Nodes: vmbenchv1.HPCCWorkers, RanksPerNode: ptr[int32](1)}
	res, exec := runHPCC(t, params, fixture(t, "hpcc-sweep-np2.txt"))
	if res.Error != "" {
		t.Fatalf("error: %s", res.Error)
	}
	if res.Node != "node01" {
		t.Errorf("result on %s, want node01, where rank 0 ran", res.Node)
	}
	if !hasMetric(res, "HPL_Gflops_N400_NB64_P2_Q1") {
		t.Errorf("metrics %v", res.Metrics)
	}
	exec.mu.Lock()
	calls := append([]call(nil), exec.calls...)
	exec.mu.Unlock()
	var hpcc []call
	for _, c := range calls {
		if c.argv != "true" && !strings.HasPrefix(c.argv, "systemd-detect-virt") {
			hpcc = append(hpcc, c)
		}
	}
	if len(hpcc) != 4 {
		t.Fatalf("commands %v, want write, mpirun, cat, rm", hpcc)
	}
	write, mpirun, cat, rm := hpcc[0], hpcc[1], hpcc[2], hpcc[3]
	dir := mpirun.dir
	wantInput := HPCCInput(HPCCLayout{Ns: []int32{200, 400}, NBs: []int32{32, 64}, Grids: params.Grids})
	if write.node != "node01" || !strings.HasPrefix(write.argv, "sh -c ") || !strings.Contains(write.argv, " sh "+dir+" "+wantInput+" hpccinf.txt") {
		t.Errorf("write = %s", write)
	}
	if wantInput != fixture(t, "hpcc-sweep-np2.hpccinf.txt") {
		t.Errorf("the input differs from the one HPCC ran")
	}
	if mpirun.node != "master" || !strings.HasPrefix(mpirun.argv, "mpirun -np 2 --host 10.0.0.2:1,10.0.0.3:1 ") {
		t.Errorf("mpirun = %s", mpirun)
	}
	if cat.node != "node01" || cat.argv != "cat "+dir+"/hpccoutf.txt" {
		t.Errorf("cat = %s", cat)
	}
	if rm.node != "node01" || rm.argv != "rm -rf "+dir {
		t.Errorf("rm = %s", rm)
	}
}

// HPCC that refused hpccinf.txt and ran its built-in defaults reports Success=1; the runner tells
// the user instead of keeping figures of another problem.
func TestHPCCFallbackToDefaultsIsAnError(t *testing.T) {
	params := vmbenchv1.HPCCParams{ProblemSizes: []int32{200, 400}, BlockSizes: []int32{32, 64}}
	res, _ := runHPCC(t, params, fixture(t, "hpcc-sweep-np2-grid2x2-fallback.txt"))
	want := "hpcc ran HPL at N=3520 NB=80 P=1 Q=2 instead of the 4 point(s) of hpccinf.txt (N=200,400 NB=32,64 grid 2x3): HPL refused the input and HPCC fell back to its built-in defaults"
	if !strings.HasPrefix(res.Error, want) {
		t.Errorf("error %q, want it to start with %q", res.Error, want)
	}
	if len(res.Metrics) != 0 {
		t.Errorf("metrics kept: %v", res.Metrics)
	}
}

// hpccinf.txt reaches rank 0's node through ssh as one shell command line: run that line in a real
// shell, as sshd would, and the file holds exactly what HPCC is to read.
func TestWriteFileArgvThroughTheRemoteShell(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "hpcc-x")
	input := HPCCInput(HPCCLayout{Ns: []int32{200, 400}, NBs: []int32{32, 64}, Grids: []vmbenchv1.HPLGrid{{P: 1, Q: 2}, {P: 2, Q: 1}}})
	line := RemoteCommand(context.Background(), Command{Argv: writeFileArgv(dir, "hpccinf.txt", input)})
	if out, err := exec.Command("sh", "-c", line).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "hpccinf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != fixture(t, "hpcc-sweep-np2.hpccinf.txt") {
		t.Errorf("the remote shell wrote:\n%s", got)
	}
}
