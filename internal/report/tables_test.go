package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/tables"
)

var keepPlots = flag.String("plots", "", "also write the plots of the table tests into this directory, to look at them")

// toolOutput reads a real tool output from the parsers' fixtures.
func toolOutput(t *testing.T, name string) []byte {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("..", "results", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// tablesDemo is demoSuite with iozone in auto mode up to 4M, and the whole tables its runs kept,
// from real outputs of this machine's iozone and iperf3: the container's iozone ran through the
// page cache, the VM's with -I; every iperf3 series ran over loopback, 10 s ones for the container,
// 5 s ones for the VM. They show the plots, not a comparison.
func tablesDemo(t *testing.T) (*vmbenchv1.BenchmarkSuite, []tables.Stored) {
	t.Helper()
	suite := demoSuite()
	for i := range suite.Spec.Benchmarks {
		if b := &suite.Spec.Benchmarks[i]; b.Name == "iozone" {
			b.Iozone = &vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "4m"}
		}
	}
	iozone := map[string]string{"container": "iozone-auto-n64k-g4m-i0i1i2-e-R.txt", "vm": "iozone-auto-n64k-g4m-i0i1i2-I-e-R.txt"}
	// Each pair and repetition takes the next of a platform's outputs, so that the pairs differ.
	iperf3 := map[string][]string{
		"container": {"iperf3-tcp-10s.json", "iperf3-tcp-10s-reverse.json", "iperf3-tcp-10s-b3G.json", "iperf3-tcp-10s-P2-b1G.json",
			"iperf3-udp-10s-b500M.json"},
		"vm": {"iperf3-tcp-5s.json", "iperf3-tcp-5s-reverse.json", "iperf3-tcp-5s-get-server-output.json", "iperf3-udp-1G-5s.json"},
	}
	var stored []tables.Stored
	for _, run := range suite.Status.Runs {
		ms, table, err := results.ParseIozoneAuto(toolOutput(t, iozone[run.Platform]))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range demoNodes {
			stored = append(stored, tables.Stored{Run: run.Name, Platform: run.Platform, Entry: tables.Entry{Benchmark: "iozone", Node: n, Table: *table}})
		}
		for i, pair := range demoPairs {
			outputs := iperf3[run.Platform]
			series, err := results.Iperf3Intervals(toolOutput(t, outputs[(i+int(run.Repetition))%len(outputs)]))
			if err != nil {
				t.Fatal(err)
			}
			stored = append(stored, tables.Stored{Run: run.Name, Platform: run.Platform, Entry: tables.Entry{Benchmark: "iperf3", Node: pair, Table: series}})
		}
		// Status keeps the headline cells of auto mode, and counts the tables.
		for i := range suite.Status.Results {
			res := &suite.Status.Results[i]
			if res.Platform != run.Platform {
				continue
			}
			switch res.Benchmark {
			case "iozone":
				if run.Repetition == 1 {
					res.Metrics = nil
					for _, m := range ms {
						var samples []vmbenchv1.Sample
						for rep := int32(1); rep <= 3; rep++ {
							for _, n := range demoNodes {
								samples = append(samples, vmbenchv1.Sample{Repetition: rep, Node: n, Value: m.Value})
							}
						}
						res.Metrics = append(res.Metrics, summary(m.Name, m.Unit, vmbenchv1.Direction(m.Direction), samples))
					}
				}
				res.Tables += int32(len(demoNodes))
			case "iperf3":
				res.Tables += int32(len(demoPairs))
			}
		}
	}
	return suite, stored
}

func TestWritePlotsFromTables(t *testing.T) {
	suite, stored := tablesDemo(t)
	dir := t.TempDir()
	if *keepPlots != "" {
		dir = *keepPlots
	}
	out, err := WritePlots(suite, PlotOptions{Dir: dir, SVG: true, Tables: stored})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range out.Files {
		if strings.Contains(f, "heatmap") || strings.Contains(f, "over-time") {
			names = append(names, filepath.Base(f))
		}
	}
	var want []string
	for _, base := range []string{"iozone-write-heatmap", "iozone-rewrite-heatmap", "iozone-read-heatmap", "iozone-reread-heatmap",
		"iozone-random-read-heatmap", "iozone-random-write-heatmap", "iperf3-over-time"} {
		want = append(want, base+".png", base+".svg")
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for _, n := range out.Notes {
		if strings.Contains(n, "heatmap") || strings.Contains(n, "time series") {
			t.Errorf("note %q", n)
		}
	}
	for _, f := range out.Files {
		if strings.HasSuffix(f, ".png") && (strings.Contains(f, "heatmap") || strings.Contains(f, "over-time")) {
			checkPNG(t, f)
		}
	}
	for file, texts := range map[string][]string{
		// 3 repetitions × 3 nodes of each platform; the table's sizes from 64k to 4M.
		"iozone-write-heatmap.svg": {"write [MiB/s]", "mean of 9 tables", "vm (emulated)", "4M", "64k", "grey: not measured", "one colour scale"},
		"iperf3-over-time.svg": {"bandwidth over time per node pair", "pair (sender-receiver)", "master-node01", "node01-node02",
			"bold: mean of 3 repetitions, faint: each", "bandwidth [Gbit/s]", "time since the start of the measurement [s]", "vm (emulated)"},
	} {
		svg, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			if !bytes.Contains(svg, []byte(svgEscape(text))) {
				t.Errorf("%s lacks %q", file, text)
			}
		}
	}
}

// The heatmap's cells are the means of the tables: the one real table repeated gives back its own
// values.
func TestIozoneTableCellsAreTheTablesMeans(t *testing.T) {
	suite, stored := tablesDemo(t)
	pl := &figures{suite: suite, opts: PlotOptions{Tables: stored}, out: &PlotOutput{}, platforms: baselineFirst(suite)}
	cells, order := pl.iozoneTableCells("iozone")
	if diff := cmp.Diff([]string{"write", "rewrite", "read", "reread", "random_read", "random_write"}, order); diff != "" {
		t.Errorf("tests (-want +got):\n%s", diff)
	}
	// Rows of the fixtures, copied by hand: 2048k file, 64k records.
	if got := cells["write"].cells["container"][[2]int{2048, 64}]; got != 235077 {
		t.Errorf("container write 2048k/64k = %v", got)
	}
	if got := cells["random_write"].cells["vm"][[2]int{2048, 64}]; got != 453898 {
		t.Errorf("vm random write 2048k/64k = %v", got)
	}
	if n := cells["read"].counts["vm"]; n != 9 {
		t.Errorf("vm read from %d tables, want 9", n)
	}
	if _, ok := cells["write"].cells["container"][[2]int{64, 128}]; ok {
		t.Error("a record larger than its file is not measured")
	}
	// Two different tables of one platform average cell by cell.
	two := []tables.Stored{stored[0], stored[0]}
	two[1].Table = results.Table{Columns: stored[0].Table.Columns, Rows: [][]float64{{2048, 64, 1, 1, 1, 1, 1, 1}}}
	pl.opts.Tables = two
	cells, _ = pl.iozoneTableCells("iozone")
	if got := cells["write"].cells["container"][[2]int{2048, 64}]; got != (235077+1)/2.0 {
		t.Errorf("mean of two tables = %v", got)
	}
	if got := cells["write"].cells["container"][[2]int{64, 4}]; got != 189331 {
		t.Errorf("a cell of one table only = %v", got)
	}
}

func TestTableNotes(t *testing.T) {
	suite, stored := tablesDemo(t)
	if notes := TableNotes(suite, stored, nil); len(notes) != 0 {
		t.Errorf("every table read: notes %q", notes)
	}
	hint := "read the suite from the cluster (vmbench report demo -n bench), or save it with its ConfigMaps: " +
		"{ kubectl get benchmarksuite demo -n bench -o yaml; echo ---; kubectl get configmap -n bench -l vmbench.io/suite=demo,vmbench.io/tables-of -o yaml; } > suite.yaml"
	want := []string{"status counts 48 whole result tables (iozone auto-mode tables, iperf3 time series) kept in ConfigMaps, " +
		"and the input holds none of them, so their plots are missing: " + hint}
	if diff := cmp.Diff(want, TableNotes(suite, nil, nil)); diff != "" {
		t.Errorf("no table read (-want +got):\n%s", diff)
	}
	var noVM []tables.Stored
	for _, s := range stored {
		if s.Platform != "vm" || s.Benchmark != "iperf3" {
			noVM = append(noVM, s)
		}
	}
	problems := []string{"a", "b", "c", "d", "e", "f", "g"}
	notes := TableNotes(suite, noVM, problems)
	if len(notes) != 7 || notes[0] != "not a table: a" || notes[5] != "and 2 more entries of the tables ConfigMaps that are no table" ||
		!strings.HasPrefix(notes[6], "the input holds fewer whole result tables than status counts as kept ([iperf3 on vm 0 of 15])") {
		t.Errorf("notes %q", notes)
	}
	// Without tables the plots say why they are missing; only iozone's and iperf3's are of interest.
	suite.Spec.Benchmarks = slices.DeleteFunc(suite.Spec.Benchmarks, func(b vmbenchv1.Benchmark) bool {
		return b.Name != "iozone" && b.Name != "iperf3"
	})
	suite.Status.Results = slices.DeleteFunc(suite.Status.Results, func(r vmbenchv1.BenchmarkResult) bool {
		return r.Benchmark != "iozone" && r.Benchmark != "iperf3"
	})
	out, err := WritePlots(suite, PlotOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{
		"iozone: iozone heatmap skipped, status counts 18 tables kept in ConfigMaps, and none was read: " + hint,
		"iperf3: iperf3 time series skipped, status counts 30 series kept in ConfigMaps, and none was read: " + hint,
	} {
		if !slices.Contains(out.Notes, n) {
			t.Errorf("notes %q lack %q", out.Notes, n)
		}
	}
}
