package suite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runner"
	"github.com/vmbench/vmbench/internal/runplan"
	"github.com/vmbench/vmbench/internal/tables"
)

// parsedFixture parses a real tool output of the parsers' fixtures as the runner does.
func parsedFixture(t *testing.T, name string) ([]results.Metric, results.Table) {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("..", "..", "internal", "results", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(name, "iozone") {
		ms, table, err := results.ParseIozoneAuto(out)
		if err != nil {
			t.Fatal(err)
		}
		return ms, *table
	}
	ms, err := results.ParseIperf3(out)
	if err != nil {
		t.Fatal(err)
	}
	series, err := results.Iperf3Intervals(out)
	if err != nil {
		t.Fatal(err)
	}
	return ms, series
}

func tablesSuite() *vmbenchv1.BenchmarkSuite {
	return testSuite(
		vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "4m",
			Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}},
		vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3},
		vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
	)
}

func TestResultTables(t *testing.T) {
	suite := tablesSuite()
	ioMetrics, ioTable := parsedFixture(t, "iozone-auto-n64k-g4m-i0i1i2-I-e-R.txt")
	netMetrics, series := parsedFixture(t, "iperf3-tcp-6s-P2-i2.json")
	withTable := func(m runplan.Message, table results.Table) runplan.Message {
		m.Table = &table
		return m
	}
	io := func(node, variant string) runplan.Message {
		m := withTable(resultMsg("disk", node, ioMetrics...), ioTable)
		m.Variant = variant
		return m
	}
	noSeries := resultMsg("net", "node01-node02", netMetrics...)
	noSeries.TableError = "iperf3: report has no intervals"
	broken := withTable(resultMsg("net", "master-node02", netMetrics...), series)
	broken.Error = "iperf3 failed (exit status 1)"
	report := summary.RunReport{Results: []runplan.Message{
		io("master", "local"), io("master", "shared"), io("node01", "local"),
		withTable(resultMsg("net", "master-node01", netMetrics...), series),
		noSeries, broken,
		resultMsg("cpu", "master", metric("events_per_second", 100)),
		// A benchmark the spec does not have counts nowhere.
		withTable(resultMsg("gone", "master", netMetrics...), series),
	}}
	got := summary.ResultTables(suite, "demo-vm-2", "vm", DefaultedBenchmarks(suite), report)

	if diff := cmp.Diff(map[string]int32{"disk": 3, "net": 1}, got.Kept); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int32{"net": 1}, got.Lost); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
	if len(got.Causes) != 1 || got.Causes[0].Cause != "the runner read no table from the output: iperf3: report has no intervals" {
		t.Errorf("causes %+v", got.Causes)
	}
	if len(got.Maps) != 1 {
		t.Fatalf("%d ConfigMaps, want 1", len(got.Maps))
	}
	cm := got.Maps[0]
	if cm.Name != "demo-vm-2-tables" || cm.Namespace != "bench" {
		t.Errorf("ConfigMap %s/%s", cm.Namespace, cm.Name)
	}
	if diff := cmp.Diff(map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelPlatform: "vm", vmbenchv1.LabelTablesOf: "demo-vm-2"}, cm.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if _, ok := cm.Labels[vmbenchv1.LabelRun]; ok {
		t.Error("a tables ConfigMap must outlive the run's cleanup, which deletes by the run label")
	}
	var keys []string
	size := 0
	for k, v := range cm.Data {
		keys = append(keys, k)
		size += len(k) + len(v)
		if msgs := validation.IsConfigMapKey(k); len(msgs) > 0 {
			t.Errorf("key %q: %v", k, msgs)
		}
	}
	if diff := cmp.Diff([]string{"disk.master.local.csv", "disk.master.shared.csv", "disk.node01.local.csv", "net.master-node01.csv"}, keys,
		cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if size > tables.MapBudget {
		t.Errorf("%d bytes in one ConfigMap", size)
	}
	// What the report reads back is every table, unchanged.
	back, err := results.ParseTableCSV([]byte(cm.Data["disk.node01.local.csv"]))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ioTable, back, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("iozone table (-sent +kept):\n%s", diff)
	}
	if cm.Data["net.master-node01.csv"] != string(series.CSV()) {
		t.Errorf("iperf3 series: %q", cm.Data["net.master-node01.csv"])
	}
}

func TestResultTablesSpillAndCountWhatDoesNotFit(t *testing.T) {
	suite := tablesSuite()
	ms, table := parsedFixture(t, "iozone-auto-n64k-g4m-i0i1i2-e-R.txt")
	perMap := tables.MapBudget / (len(table.CSV()) + len("disk.node0000.local.csv"))
	n := perMap*tables.MaxMaps + 3
	var msgs []runplan.Message
	for i := range n {
		m := resultMsg("disk", fmt.Sprintf("node%04d", i), ms...)
		m.Variant, m.Table = "local", &table
		msgs = append(msgs, m)
	}
	got := summary.ResultTables(suite, "demo-container-1", "container", DefaultedBenchmarks(suite), summary.RunReport{Results: msgs})
	if len(got.Maps) != tables.MaxMaps || got.Maps[1].Name != "demo-container-1-tables-2" || got.Maps[15].Name != "demo-container-1-tables-16" {
		t.Fatalf("%d ConfigMaps", len(got.Maps))
	}
	if got.Kept["disk"] != int32(n-3) || got.Lost["disk"] != 3 {
		t.Errorf("kept %d, lost %d of %d", got.Kept["disk"], got.Lost["disk"], n)
	}

	// finishRun counts them in status, and the warning says so.
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, DefaultedBenchmarks(suite), summary.RunCompletion{
		Report: summary.RunReport{Results: msgs, Done: &runplan.Message{Kind: runplan.KindDone}}, Now: finishNow,
		TablesKept: got.Kept, TablesLost: got.Lost,
	})
	res := summary.ResultFor(st, "disk", "container")
	if res.Tables != int32(n-3) || res.TablesLost != 3 {
		t.Errorf("status counts %d kept, %d lost", res.Tables, res.TablesLost)
	}
	want := fmt.Sprintf("whole result tables were not kept (disk on container 3 of %d): the tool's output held none, "+
		"a run's 16 ConfigMaps of 512 KiB were full, or a ConfigMap could not be written (status.runs[].notKept); their figures in status are complete, the manager's log names each table", n)
	if w := warnings(suite.Spec, st, ""); !contains(w, want) {
		t.Errorf("warnings %q lack %q", w, want)
	}
	if w := summary.LostTablesWarning(&vmbenchv1.BenchmarkSuiteStatus{Results: []vmbenchv1.BenchmarkResult{{Benchmark: "disk", Platform: "vm", Tables: 9}}}); w != "" {
		t.Errorf("nothing lost, warning %q", w)
	}
}

// A table travels through the runner's frames and comes out of the log as it was sent.
func TestTablesSurviveTheLog(t *testing.T) {
	ms, table := parsedFixture(t, "iozone-auto-g64M.txt")
	keys := frameKeys{run: "demo-vm-1", tokens: map[string][]byte{"demo-vm-1": []byte("token")}}
	m := resultMsg("disk", "node01", ms...)
	m.Run, m.Table = "demo-vm-1", &table
	log := runnerOutput(t, keys.tokens["demo-vm-1"], runplan.Message{Kind: runplan.KindStarted, Run: "demo-vm-1"}, m)
	report := decodeReport(bytes.NewReader(log), keys)
	if report.FrameErr != nil || len(report.Results) != 1 || report.Results[0].Table == nil {
		t.Fatalf("report %+v", report)
	}
	if diff := cmp.Diff(table, *report.Results[0].Table, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("(-sent +read):\n%s", diff)
	}
}

// At every API maximum (12 benchmarks, 8 nodes, so 20 pairs, iperf3 for 1 h in 600 intervals, or
// iozone up to 16G on two targets), with every number as wide as it gets, a run's tables fit in
// its ConfigMaps: nothing is lost within the API's bounds.
func TestWorstCaseTablesFit(t *testing.T) {
	const benchmarks, nodes = 12, 8
	series := results.Table{Columns: []string{results.Iperf3StartColumn, results.Iperf3EndColumn, results.Iperf3BandwidthColumn}}
	for i := range runner.MaxIperf3Intervals {
		series.Rows = append(series.Rows, []float64{float64(i)*6 + 0.123, float64(i+1)*6 + 0.123, 123456789012})
	}
	iozone := results.Table{Columns: []string{results.IozoneFileColumn, results.IozoneRecordColumn, "write_KiB_per_s", "rewrite_KiB_per_s",
		"read_KiB_per_s", "reread_KiB_per_s", "random_read_KiB_per_s", "random_write_KiB_per_s"}}
	for file := 64; file <= 16<<20; file *= 2 {
		for rec := 4; rec <= min(file, 16<<10); rec *= 2 {
			if file >= 32<<10 && rec < 64 {
				continue
			}
			iozone.Rows = append(iozone.Rows, []float64{float64(file), float64(rec), 123456789, 123456789, 123456789, 123456789, 123456789, 123456789})
		}
	}
	if len(iozone.Rows) != 171 {
		t.Fatalf("%d iozone rows, want 171", len(iozone.Rows))
	}
	var pairs []string
	for i := 1; i < nodes; i++ {
		pairs = append(pairs, fmt.Sprintf("master-node%02d", i), fmt.Sprintf("node%02d-master", i))
		if i+1 < nodes {
			pairs = append(pairs, fmt.Sprintf("node%02d-node%02d", i, i+1))
		}
	}
	for _, kind := range []string{"iperf3", "iozone"} {
		var entries []tables.Entry
		for b := range benchmarks {
			name := fmt.Sprintf("benchmark-%02d-%s", b, strings.Repeat("x", 11))
			if kind == "iperf3" {
				for _, p := range pairs {
					entries = append(entries, tables.Entry{Benchmark: name, Node: p, Table: series})
				}
				continue
			}
			for n := range nodes {
				for _, target := range []string{"local", "shared"} {
					entries = append(entries, tables.Entry{Benchmark: name, Node: fmt.Sprintf("node%02d", n), Variant: target, Table: iozone})
				}
			}
		}
		maps, lost := tables.Pack(entries)
		total := 0
		for _, m := range maps {
			for k, v := range m {
				total += len(k) + len(v)
			}
		}
		if len(lost) > 0 {
			t.Errorf("%s: %d of %d tables lost", kind, len(lost), len(entries))
		}
		t.Logf("%s: %d tables of %d bytes each at most, %d KiB in %d ConfigMaps", kind, len(entries), len(entries[0].Table.CSV()), total>>10, len(maps))
	}
}
