package report

import (
	"fmt"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/tables"
)

// maxTableProblems bounds the notes about tables that could not be read.
const maxTableProblems = 5

// TableNotes say what the report misses of the suite's whole result tables: tables that status
// counts as kept but that the input does not hold (a suite saved without its ConfigMaps), and
// ConfigMap entries that are no table. Tables lost before they were kept are in status.warnings.
func TableNotes(suite *vmbenchv1.BenchmarkSuite, stored []tables.Stored, problems []string) []string {
	var notes []string
	for i, p := range problems {
		if i == maxTableProblems {
			notes = append(notes, fmt.Sprintf("and %d more entries of the tables ConfigMaps that are no table", len(problems)-i))
			break
		}
		notes = append(notes, "not a table: "+p)
	}
	found := map[[2]string]int32{}
	for _, s := range stored {
		found[[2]string{s.Benchmark, s.Platform}]++
	}
	var missing []string
	counted, read := int32(0), int32(0)
	for _, r := range suite.Status.Results {
		n := found[[2]string{r.Benchmark, r.Platform}]
		counted += r.Tables
		read += n
		if n < r.Tables {
			missing = append(missing, fmt.Sprintf("%s on %s %d of %d", r.Benchmark, r.Platform, n, r.Tables))
		}
	}
	switch {
	case counted > 0 && read == 0:
		notes = append(notes, fmt.Sprintf("status counts %d whole result tables (iozone auto-mode tables, iperf3 time series) kept in ConfigMaps, "+
			"and the input holds none of them, so their plots are missing: %s", counted, tablesHint(suite)))
	case len(missing) > 0:
		notes = append(notes, fmt.Sprintf("the input holds fewer whole result tables than status counts as kept (%v), so their plots are incomplete: %s",
			missing, tablesHint(suite)))
	}
	return notes
}

// tablesHint says how to give the report a suite's tables.
func tablesHint(suite *vmbenchv1.BenchmarkSuite) string {
	ns := ""
	if suite.Namespace != "" {
		ns = " -n " + suite.Namespace
	}
	return fmt.Sprintf("read the suite from the cluster (vmbench report %s%s), or save it with its ConfigMaps: "+
		"{ kubectl get benchmarksuite %s%s -o yaml; echo ---; kubectl get configmap%s -l %s=%s,%s -o yaml; } > suite.yaml",
		suite.Name, ns, suite.Name, ns, ns, vmbenchv1.LabelSuite, suite.Name, vmbenchv1.LabelTablesOf)
}
