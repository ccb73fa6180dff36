package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// resultsFixture reads a real tool output from the parsers' fixtures.
func resultsFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "results", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestIozoneAutoSendsItsTable(t *testing.T) {
	r, exec, msgs := testRunner(t)
	output := resultsFixture(t, "iozone-auto-n64k-g4m-i0i1i2-I-e-R.txt")
	exec.respond = func(_ string, argv []string) (reply, bool) {
		if argv[0] != "iozone" {
			return reply{}, false
		}
		return reply{stdout: output}, true
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{
		Auto: true, MinFileSize: "64k", MaxFileSize: "4m", DirectIO: true, Targets: []vmbenchv1.StorageTarget{"Local", "Shared"}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	wantTable, err := results.IozoneTable([]byte(output))
	if err != nil {
		t.Fatal(err)
	}
	var seen int
	for _, m := range *msgs {
		if m.Kind != runplan.KindResult {
			continue
		}
		seen++
		if m.Error != "" || m.TableError != "" {
			t.Fatalf("%s %s: error %q, table error %q", m.Node, m.Variant, m.Error, m.TableError)
		}
		if m.Table == nil {
			t.Fatalf("%s %s: no table", m.Node, m.Variant)
		}
		if diff := cmp.Diff(wantTable, *m.Table, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("%s %s: table (-want +got):\n%s", m.Node, m.Variant, diff)
		}
		// Status gets one figure per test, prefixed with the target when there are two.
		var names []string
		for _, metric := range m.Metrics {
			names = append(names, metric.Name)
		}
		want := []string{"write_4096k_4096k", "rewrite_4096k_4096k", "read_4096k_4096k", "reread_4096k_4096k", "random_read_4096k_4096k", "random_write_4096k_4096k"}
		for i := range want {
			want[i] = m.Variant + "_" + want[i]
		}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("%s %s: metrics (-want +got):\n%s", m.Node, m.Variant, diff)
		}
	}
	if seen != 6 {
		t.Errorf("%d results, want 3 nodes × 2 targets", seen)
	}
	var iozone []string
	for _, c := range exec.commands() {
		if strings.Contains(c, "iozone -a") {
			iozone = append(iozone, c)
		}
	}
	if len(iozone) != 6 || !strings.HasPrefix(iozone[0], "master: iozone -a -n 64k -g 4m -i 0 -i 1 -i 2 -I -e -R -f ") {
		t.Errorf("iozone commands: %q", iozone)
	}
}

func TestIozoneSingleSizeSendsNoTable(t *testing.T) {
	r, _, msgs := testRunner(t)
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "256M", RecordSize: "64k"}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	for _, m := range *msgs {
		if m.Kind == runplan.KindResult && (m.Table != nil || m.TableError != "" || !hasMetric(m, "write")) {
			t.Errorf("%s: table %v, table error %q, metrics %v", m.Node, m.Table, m.TableError, m.Metrics)
		}
	}
}

func TestIperf3SendsItsTimeSeries(t *testing.T) {
	r, exec, msgs := testRunner(t)
	output := resultsFixture(t, "iperf3-tcp-6s-P2-i2.json")
	// The same report without its intervals: the figures stay, the series is reported missing.
	var report map[string]any
	if err := json.Unmarshal([]byte(output), &report); err != nil {
		t.Fatal(err)
	}
	report["intervals"] = []any{}
	noIntervals, err := json.Marshal(report)
	if err != nil {
		t.Fatal(err)
	}
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] != "iperf3" {
			return reply{}, false
		}
		if node == "node01" {
			return reply{stdout: string(noIntervals)}, true
		}
		return reply{stdout: output}, true
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{
		Pairs: []vmbenchv1.NodePair{"master-node", "node-node"}, Duration: dur(6 * time.Second), Parallel: 2}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	series, err := results.Iperf3Intervals([]byte(output))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]runplan.Message{}
	for _, m := range *msgs {
		if m.Kind == runplan.KindResult {
			got[m.Node] = m
		}
	}
	for _, pair := range []string{"master-node01", "master-node02"} {
		m := got[pair]
		if m.Error != "" || m.Table == nil || m.TableError != "" || !hasMetric(m, "bits_per_second") {
			t.Fatalf("%s: %+v", pair, m)
		}
		if diff := cmp.Diff(series, *m.Table); diff != "" {
			t.Errorf("%s: series (-want +got):\n%s", pair, diff)
		}
	}
	m := got["node01-node02"]
	if m.Error != "" || m.Table != nil || m.TableError != "iperf3: report has no intervals" || !hasMetric(m, "bits_per_second") {
		t.Errorf("node01-node02 without intervals: error %q, table %v, table error %q, metrics %v", m.Error, m.Table, m.TableError, m.Metrics)
	}
	if !strings.Contains(strings.Join(exec.commands(), "\n"), "iperf3 -c 10.0.0.2 -p 5201 -t 6 -i 1 -P 2 -J") {
		t.Errorf("commands: %q", exec.commands())
	}
}

// A message with a table survives the JSON of the frames, the table as CSV text.
func TestMessageCarriesItsTableAsCSV(t *testing.T) {
	table, err := results.Iperf3Intervals([]byte(resultsFixture(t, "iperf3-tcp-6s-P2-i2.json")))
	if err != nil {
		t.Fatal(err)
	}
	in := runplan.Message{Kind: runplan.KindResult, Run: "r", Benchmark: "net", Node: "master-node01", Table: &table}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"table":"start_s,end_s,bits_per_s\n0,2.001,26844274295\n`) {
		t.Errorf("JSON: %s", raw)
	}
	var out runplan.Message
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("(-in +out):\n%s", diff)
	}
}
