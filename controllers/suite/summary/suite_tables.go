package summary

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/tables"
)

// runTables is what became of the whole result tables of a run (iozone auto-mode tables, iperf3 time
// series): the ConfigMaps that keep them, and per benchmark how many were kept and lost.
type RunTables struct {
	Maps       []*corev1.ConfigMap
	Kept, Lost map[string]int32
	// causes say why each lost table was lost, for the log.
	Causes []tables.Lost
}

// resultTables lays out the tables of a run's results in ConfigMaps that the suite owns (package
// tables has the layout). Like the raw outputs they carry no run label, so the run's cleanup leaves
// them; they go with the suite. Only the tables of results that count in status are kept; an
// execution whose runner could not read its table counts as a lost table.
func ResultTables(suite *vmbenchv1.BenchmarkSuite, run, platformName string, benchmarks []vmbenchv1.Benchmark, report RunReport) RunTables {
	inSpec := map[string]bool{}
	for _, b := range benchmarks {
		inSpec[b.Name] = true
	}
	out := RunTables{Kept: map[string]int32{}, Lost: map[string]int32{}}
	var entries []tables.Entry
	for _, m := range LatestResults(report.Results) {
		if !inSpec[m.Benchmark] || SampleError(m) != "" {
			continue
		}
		switch {
		case m.Table != nil:
			entries = append(entries, tables.Entry{Benchmark: m.Benchmark, Node: m.Node, Variant: m.Variant, Table: *m.Table})
			out.Kept[m.Benchmark]++
		case m.TableError != "":
			out.Lost[m.Benchmark]++
			out.Causes = append(out.Causes, tables.Lost{Benchmark: m.Benchmark, Node: m.Node, Variant: m.Variant,
				Cause: "the runner read no table from the output: " + m.TableError})
		}
	}
	data, lost := tables.Pack(entries)
	for _, l := range lost {
		out.Kept[l.Benchmark]--
		out.Lost[l.Benchmark]++
	}
	out.Causes = append(out.Causes, lost...)
	for i, d := range data {
		out.Maps = append(out.Maps, &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{
				Name: tables.MapName(run, i), Namespace: suite.Namespace,
				Labels: tables.Labels(suite.Name, platformName, run),
			},
			Data: d,
		})
	}
	return out
}

// lostTablesWarning says which benchmarks lost tables, from the counts in status, or "".
func LostTablesWarning(st *vmbenchv1.BenchmarkSuiteStatus) string {
	var parts []string
	for _, r := range st.Results {
		if r.TablesLost > 0 {
			parts = append(parts, fmt.Sprintf("%s on %s %d of %d", r.Benchmark, r.Platform, r.TablesLost, r.Tables+r.TablesLost))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("whole result tables were not kept (%s): the tool's output held none, a run's %d ConfigMaps of %d KiB were full, "+
		"or a ConfigMap could not be written (status.runs[].notKept); their figures in status are complete, the manager's log names each table", strings.Join(parts, ", "), tables.MaxMaps, tables.MapBudget>>10)
}
