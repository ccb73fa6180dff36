package integration

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// hplSuite is a suite of one hpcc benchmark with params, on the default cluster: 3 nodes of 2 CPUs,
// 6 MPI ranks (4 with hpcc.nodes Workers).
func hplSuite(h *harness, params vmbenchv1.HPCCParams) *vmbenchv1.BenchmarkSuite {
	return h.suite("hpl", 1, vmbenchv1.Benchmark{Name: "hpl", Type: vmbenchv1.BenchmarkHPCC, HPCC: &params})
}

// The API server refuses an HPL sweep that HPCC would not run as written, and says what to change;
// each refused spec has an accepted twin that differs only where the rule looks.
func TestHPLSweepAdmission(t *testing.T) {
	h := newHarness(t)
	grids := func(pq ...int32) []vmbenchv1.HPLGrid {
		var out []vmbenchv1.HPLGrid
		for i := 0; i+1 < len(pq); i += 2 {
			out = append(out, vmbenchv1.HPLGrid{P: pq[i], Q: pq[i+1]})
		}
		return out
	}
	cases := []struct {
		name      string
		bad, good vmbenchv1.HPCCParams
		cluster   int32
		want      string
	}{
		{
			name: "problemSize beside problemSizes",
			bad:  vmbenchv1.HPCCParams{N: ptr.To[int32](1000), ProblemSizes: []int32{1000, 2000}},
			good: vmbenchv1.HPCCParams{ProblemSizes: []int32{1000, 2000}},
			want: "spec.benchmarks[0].hpcc: Invalid value: set hpcc.problemSize or hpcc.problemSizes, not both: move the single size into problemSizes",
		},
		{
			name: "nb beside blockSizes",
			bad:  vmbenchv1.HPCCParams{NB: 64, BlockSizes: []int32{32, 64}},
			good: vmbenchv1.HPCCParams{NB: 64},
			want: "set hpcc.nb or hpcc.blockSizes, not both: move the single block size into blockSizes",
		},
		{
			name: "p and q beside grids",
			bad:  vmbenchv1.HPCCParams{P: ptr.To[int32](2), Q: ptr.To[int32](3), Grids: grids(1, 6)},
			good: vmbenchv1.HPCCParams{Grids: grids(1, 6, 2, 3)},
			want: "set hpcc.p and hpcc.q or hpcc.grids, not both: move the single grid into grids",
		},
		{
			name: "17 points",
			bad:  vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 2048, 4096}, BlockSizes: []int32{32, 64, 128}, Grids: grids(1, 6, 2, 3)},
			good: vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 2048, 4096, 8192}, BlockSizes: []int32{32, 64, 128, 256}, Grids: grids(2, 3)},
			want: "problemSizes x blockSizes x grids may give at most 16 points, one status metric each: shorten a list, or split the sweep into two hpcc benchmarks",
		},
		{
			name: "a grid needing more ranks than the run has",
			bad:  vmbenchv1.HPCCParams{Grids: grids(2, 3, 2, 4)},
			good: vmbenchv1.HPCCParams{Grids: grids(2, 3, 3, 2)},
			want: "every hpcc.grids entry's p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers)",
		},
		{
			name: "a grid leaving ranks idle",
			bad:  vmbenchv1.HPCCParams{Grids: grids(1, 3)},
			good: vmbenchv1.HPCCParams{Grids: grids(1, 3), RanksPerNode: ptr.To[int32](1)},
			want: "every hpcc.grids entry's p*q must equal the number of MPI ranks",
		},
		{
			name: "grids of all nodes with workers only",
			bad:  vmbenchv1.HPCCParams{Grids: grids(2, 3), Nodes: vmbenchv1.HPCCWorkers},
			good: vmbenchv1.HPCCParams{Grids: grids(2, 2, 1, 4), Nodes: vmbenchv1.HPCCWorkers},
			want: "every hpcc.grids entry's p*q must equal the number of MPI ranks",
		},
		{
			name: "p and q of all nodes with workers only",
			bad:  vmbenchv1.HPCCParams{P: ptr.To[int32](2), Q: ptr.To[int32](3), Nodes: vmbenchv1.HPCCWorkers},
			good: vmbenchv1.HPCCParams{P: ptr.To[int32](2), Q: ptr.To[int32](2), Nodes: vmbenchv1.HPCCWorkers},
			want: "hpcc p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers)",
		},
		{
			name:    "workers of a one-node cluster",
			bad:     vmbenchv1.HPCCParams{Nodes: vmbenchv1.HPCCWorkers},
			good:    vmbenchv1.HPCCParams{Nodes: vmbenchv1.HPCCAllNodes},
			cluster: 1,
			want:    "hpcc.nodes Workers runs HPCC on every node but the master, and a cluster of 1 node has no other: set spec.cluster.nodes to 2 or more, or set hpcc.nodes to All",
		},
		{
			name: "the same grid twice",
			bad:  vmbenchv1.HPCCParams{Grids: grids(2, 3, 2, 3)},
			good: vmbenchv1.HPCCParams{Grids: grids(2, 3, 6, 1)},
			want: "spec.benchmarks[0].hpcc.grids[1]: Duplicate value",
		},
		{
			name: "the same problem size twice",
			bad:  vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 1024}},
			good: vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 2048}},
			want: "spec.benchmarks[0].hpcc.problemSizes[1]: Duplicate value",
		},
		{
			name: "a problem size below HPL's useful range",
			bad:  vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 50}},
			good: vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 100}},
			want: "spec.benchmarks[0].hpcc.problemSizes[1]: Invalid value: 50: spec.benchmarks[0].hpcc.problemSizes[1] in body should be greater than or equal to 100",
		},
		{
			name: "a block size above 1024",
			bad:  vmbenchv1.HPCCParams{BlockSizes: []int32{2048}},
			good: vmbenchv1.HPCCParams{BlockSizes: []int32{1024}},
			want: "spec.benchmarks[0].hpcc.blockSizes[0] in body should be less than or equal to 1024",
		},
		{
			name: "nodes that are neither All nor Workers",
			bad:  vmbenchv1.HPCCParams{Nodes: "Master"},
			good: vmbenchv1.HPCCParams{Nodes: vmbenchv1.HPCCWorkers},
			want: `spec.benchmarks[0].hpcc.nodes: Unsupported value: "Master": supported values: "All", "Workers"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			bad, good := hplSuite(h, tc.bad), hplSuite(h, tc.good)
			bad.Spec.Cluster.Nodes, good.Spec.Cluster.Nodes = tc.cluster, tc.cluster
			err := k8s.Create(h.ctx, bad, client.DryRunAll)
			g.Expect(err).To(HaveOccurred(), "the API server accepted the bad spec")
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
			g.Expect(k8s.Create(h.ctx, good, client.DryRunAll)).To(Succeed(), "the valid twin")
		})
	}
}

// A sweep is stored as written, with nodes defaulted to All and no nb added beside blockSizes.
func TestHPLSweepDefaults(t *testing.T) {
	h := newHarness(t)
	s := hplSuite(h, vmbenchv1.HPCCParams{ProblemSizes: []int32{1024, 2048}, BlockSizes: []int32{32, 64}})
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	stored := h.get("hpl").Spec.Benchmarks[0].HPCC
	h.g.Expect(stored.Nodes).To(Equal(vmbenchv1.HPCCAllNodes))
	h.g.Expect(stored.NB).To(BeZero())
	h.g.Expect(stored.BlockSizeList()).To(Equal([]int32{32, 64}))
	h.g.Expect(stored.MemoryPercent).To(Equal(int32(80)))
}
