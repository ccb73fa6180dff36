package runner

import (
	"strings"
	"testing"

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
			plan:   hpccPlan(3, 2, 2<<30),
			want:   HPCCLayout{RanksPerNode: 2, Ranks: 6, N: 25344, NB: 192, P: 2, Q: 3},
		},
		{
			name:   "explicit N and ranks per node, prime rank count",
			params: vmbenchv1.HPCCParams{N: ptr[int32](3000), NB: 96, MemoryPercent: 80, RanksPerNode: ptr[int32](1)},
			plan:   hpccPlan(3, 4, 1<<30),
			want:   HPCCLayout{RanksPerNode: 1, Ranks: 3, N: 3000, NB: 96, P: 1, Q: 3},
		},
		{
			name:   "explicit grid",
			params: vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 100, MemoryPercent: 80, P: ptr[int32](1), Q: ptr[int32](8)},
			plan:   hpccPlan(2, 4, 1<<30),
			want:   HPCCLayout{RanksPerNode: 4, Ranks: 8, N: 1000, NB: 100, P: 1, Q: 8},
		},
		{
			name:   "square grid, capped N",
			params: vmbenchv1.HPCCParams{MemoryPercent: 90, NB: 256},
			plan:   hpccPlan(4, 4, 1<<40),
			want:   HPCCLayout{RanksPerNode: 4, Ranks: 16, N: 199936, NB: 256, P: 4, Q: 4},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PlanHPCC(&tc.params, tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if got.N%got.NB != 0 && tc.params.N == nil {
				t.Errorf("N %d is not a multiple of NB %d", got.N, got.NB)
			}
			if tc.params.N == nil && int64(got.N)*int64(got.N)*8 > tc.plan.MemoryBytes*int64(len(tc.plan.Nodes))*int64(tc.params.MemoryPercent)/100 {
				t.Errorf("N %d does not fit", got.N)
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
		{"only p", vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 96, P: ptr[int32](2)}, hpccPlan(3, 2, 1<<30), "set both p and q"},
		{"no memory limit", vmbenchv1.HPCCParams{NB: 96, MemoryPercent: 80}, hpccPlan(3, 2, 0), "set hpcc.problemSize"},
		{"too little memory", vmbenchv1.HPCCParams{NB: 1024, MemoryPercent: 1}, hpccPlan(1, 1, 1<<20), "too little memory"},
		{"no cpu", vmbenchv1.HPCCParams{N: ptr[int32](1000), NB: 96}, hpccPlan(1, 0, 1<<30), "ranks per node"},
	} {
		_, err := PlanHPCC(&tc.params, tc.plan)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestHPCCInputMatchesTheVerifiedFile(t *testing.T) {
	// The file that HPCC accepted in the recorded run: N=3000, NB=96 on a 1x2 grid.
	want := fixture(t, "hpcc-np2.hpccinf.txt")
	if got := HPCCInput(HPCCLayout{N: 3000, NB: 96, P: 1, Q: 2}); got != want {
		t.Errorf("hpccinf.txt differs from the verified one:\n%s", got)
	}
}

func TestMPIRunArgv(t *testing.T) {
	plan := hpccPlan(3, 2, 1<<30)
	plan.MPIArgs = []string{"--mca", "btl_tcp_port_min_v4", "20000"}
	l := HPCCLayout{RanksPerNode: 2, Ranks: 6}
	want := "mpirun -np 6 --host m.svc:2,n1.svc:2,n2.svc:2 --bind-to none --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 -x LC_ALL=C --mca btl_tcp_port_min_v4 20000 hpcc"
	if got := strings.Join(MPIRunArgv(plan, l, false), " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	wantRoot := "mpirun -np 6 --host m.svc:2,n1.svc:2,n2.svc:2 --bind-to none --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 -x LC_ALL=C --allow-run-as-root --mca btl_tcp_port_min_v4 20000 hpcc"
	if got := strings.Join(MPIRunArgv(plan, l, true), " "); got != wantRoot {
		t.Errorf("as root:\n got %s\nwant %s", got, wantRoot)
	}
}
