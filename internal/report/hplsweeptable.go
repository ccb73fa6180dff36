package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// HPLSweepTable lists the points of one hpcc benchmark that ran several HPL points per execution.
type HPLSweepTable struct {
	Benchmark string
	// Platforms are in report order, the baseline first when it measured the sweep.
	Platforms []string
	Rows      []HPLSweepRow
}

// HPLSweepRow is one point: its parameters and, per platform of the table, its mean Gflop/s over
// the repetitions (nil where the platform has no value) and how many repetitions that is.
type HPLSweepRow struct {
	N, NB, P, Q int
	Means       []*float64
	Counts      []int
}

// sweepTables arranges the suite's sweeps point by point: grid, then N, then NB.
func sweepTables(suite *vmbenchv1.BenchmarkSuite) []HPLSweepTable {
	var out []HPLSweepTable
	for _, sw := range hplSweeps(suite, baselineFirst(suite)) {
		t := HPLSweepTable{Benchmark: sw.Benchmark, Platforms: sw.Platforms}
		for _, g := range sw.Grids {
			for _, n := range sw.Ns {
				for _, nb := range sw.NBs {
					row := HPLSweepRow{N: n, NB: nb, P: g[0], Q: g[1]}
					found := false
					for _, platform := range sw.Platforms {
						var mean *float64
						count := 0
						for _, p := range sw.ByPlatform[platform] {
							if p.N == n && p.NB == nb && p.P == g[0] && p.Q == g[1] {
								mean, count, found = pointer(p.Summary.Mean), p.Summary.N, true
							}
						}
						row.Means = append(row.Means, mean)
						row.Counts = append(row.Counts, count)
					}
					if found {
						t.Rows = append(t.Rows, row)
					}
				}
			}
		}
		out = append(out, t)
	}
	return out
}

// writeSweeps prints every sweep as a compact table after the table of every metric: each point's
// mean per platform and, for every other platform, its ratio to the first (the baseline).
func (r *Report) writeSweeps(w io.Writer) error {
	for _, t := range r.Sweeps {
		fmt.Fprintf(w, "\nHPL sweep %s: Gflop/s per point, mean over repetitions (n); each point is a row above too, HPL_Gflops_N<N>_NB<NB>_P<P>_Q<Q>\n",
			t.Benchmark)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		header := []string{"GRID", "N", "NB"}
		for i, p := range t.Platforms {
			name := strings.ToUpper(p)
			if i == 0 && p == r.Baseline {
				name += " (BASELINE)"
			}
			header = append(header, name)
		}
		for _, p := range t.Platforms[1:] {
			header = append(header, strings.ToUpper(p)+"/"+strings.ToUpper(t.Platforms[0]))
		}
		fmt.Fprintln(tw, strings.Join(header, "\t"))
		for _, row := range t.Rows {
			cells := []string{fmt.Sprintf("%dx%d", row.P, row.Q), fmt.Sprint(row.N), fmt.Sprint(row.NB)}
			for i, m := range row.Means {
				cell := "-"
				if m != nil {
					cell = fmt.Sprintf("%s (n=%d)", FormatValue(*m), row.Counts[i])
				}
				cells = append(cells, cell)
			}
			for _, m := range row.Means[1:] {
				cell := "-"
				if m != nil && row.Means[0] != nil && *row.Means[0] > 0 {
					cell = formatSpeed(*m / *row.Means[0])
				}
				cells = append(cells, cell)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
