package tables

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// fixtureTable is a table read from a real tool output of the parsers' fixtures.
func fixtureTable(t *testing.T, name string) results.Table {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("..", "results", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var table results.Table
	if strings.HasPrefix(name, "iozone") {
		table, err = results.IozoneTable(out)
	} else {
		table, err = results.Iperf3Intervals(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return table
}

func TestKeys(t *testing.T) {
	for _, tt := range []struct{ benchmark, node, variant, want string }{
		{"disk", "node01", "", "disk.node01.csv"},
		{"disk-auto", "master", "shared", "disk-auto.master.shared.csv"},
		{"net", "master-node01", "", "net.master-node01.csv"},
		{"mem", "node02", "bs1K", "mem.node02.bs1K.csv"},
	} {
		key, err := Key(tt.benchmark, tt.node, tt.variant)
		if err != nil || key != tt.want {
			t.Errorf("Key(%q, %q, %q) = %q, %v, want %q", tt.benchmark, tt.node, tt.variant, key, err, tt.want)
			continue
		}
		if msgs := validation.IsConfigMapKey(key); len(msgs) > 0 {
			t.Errorf("%s is no ConfigMap key: %v", key, msgs)
		}
		b, n, v, ok := ParseKey(key)
		if !ok || b != tt.benchmark || n != tt.node || v != tt.variant {
			t.Errorf("ParseKey(%q) = %q, %q, %q, %v", key, b, n, v, ok)
		}
	}
	for _, bad := range [][3]string{{"a.b", "node01", ""}, {"disk", "", ""}, {"disk", "node 1", ""}, {"disk", "node01", "x/y"},
		{"disk", "-node", ""}, {strings.Repeat("a", 64), "n", ""}} {
		if key, err := Key(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Key(%q) = %q, want an error", bad, key)
		}
	}
	for _, bad := range []string{"disk.node01.txt", "disk.csv", "a.b.c.d.csv", "disk..csv", ".node01.csv", "disk.node 1.csv"} {
		if b, n, v, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) = %q, %q, %q, want not ok", bad, b, n, v)
		}
	}
	if MapName("demo-vm-2", 0) != "demo-vm-2-tables" || MapName("demo-vm-2", 2) != "demo-vm-2-tables-3" {
		t.Errorf("MapName: %s, %s", MapName("demo-vm-2", 0), MapName("demo-vm-2", 2))
	}
}

func TestPackKeepsEveryTableWhole(t *testing.T) {
	iozone := fixtureTable(t, "iozone-auto-n64k-g4m-i0i1i2-I-e-R.txt")
	series := fixtureTable(t, "iperf3-tcp-6s-P2-i2.json")
	entries := []Entry{
		{Benchmark: "disk", Node: "master", Variant: "local", Table: iozone},
		{Benchmark: "disk", Node: "master", Variant: "shared", Table: iozone},
		{Benchmark: "net", Node: "master-node01", Table: series},
	}
	maps, lost := Pack(entries)
	if len(lost) != 0 || len(maps) != 1 {
		t.Fatalf("%d maps, lost %+v", len(maps), lost)
	}
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: MapName("demo-vm-1", 0), Labels: Labels("demo", "vm", "demo-vm-1"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "vmbench.io/v1alpha1", Kind: "BenchmarkSuite", Name: "demo", UID: "demo-uid", Controller: ptr.To(true)}}},
		Data: maps[0]}
	stored, problems := Read("demo", "demo-uid", []corev1.ConfigMap{cm})
	if len(problems) != 0 {
		t.Fatal(problems)
	}
	var got []Entry
	for _, s := range stored {
		if s.Run != "demo-vm-1" || s.Platform != "vm" {
			t.Errorf("%+v: run %q, platform %q", s.Entry, s.Run, s.Platform)
		}
		got = append(got, s.Entry)
	}
	if diff := cmp.Diff(entries, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("read back (-packed +read):\n%s", diff)
	}
}

func TestPackSpillsAndCountsWhatDoesNotFit(t *testing.T) {
	table := fixtureTable(t, "iozone-auto-g64M.txt")
	size := len(table.CSV())
	perMap := MapBudget / (size + len("disk.node0000.csv"))
	// Enough tables for every map and 5 more.
	n := perMap*MaxMaps + 5
	var entries []Entry
	for i := range n {
		entries = append(entries, Entry{Benchmark: "disk", Node: fmt.Sprintf("node%04d", i), Table: table})
	}
	maps, lost := Pack(entries)
	if len(maps) != MaxMaps {
		t.Fatalf("%d maps, want %d", len(maps), MaxMaps)
	}
	kept := 0
	for i, m := range maps {
		bytes := 0
		for k, v := range m {
			bytes += len(k) + len(v)
			if msgs := validation.IsConfigMapKey(k); len(msgs) > 0 {
				t.Errorf("map %d: key %q: %v", i, k, msgs)
			}
			if v != string(table.CSV()) {
				t.Errorf("map %d: %s was changed", i, k)
			}
		}
		if bytes > MapBudget {
			t.Errorf("map %d holds %d bytes, more than %d", i, bytes, MapBudget)
		}
		kept += len(m)
	}
	if kept+len(lost) != n || len(lost) != 5 {
		t.Errorf("kept %d, lost %d of %d", kept, len(lost), n)
	}
	for _, l := range lost {
		if l.Cause != "the run's 16 ConfigMaps of 512 KiB are full" {
			t.Errorf("lost %+v", l)
		}
	}
	// The tables keep their order: the lost ones are the last.
	if lost[0].Node != fmt.Sprintf("node%04d", n-5) {
		t.Errorf("first lost %s", lost[0].Node)
	}
}

func TestPackLosesWhatItCannotWrite(t *testing.T) {
	series := fixtureTable(t, "iperf3-tcp-5s.json")
	// The series repeated until its CSV is larger than a map.
	huge := results.Table{Columns: series.Columns}
	rowBytes := len(series.CSV()) - len("start_s,end_s,bits_per_s\n")
	for range MapBudget/rowBytes + 1 {
		huge.Rows = append(huge.Rows, series.Rows...)
	}
	maps, lost := Pack([]Entry{
		{Benchmark: "net", Node: "master-node01", Table: series},
		{Benchmark: "net", Node: "master-node01", Table: series},
		{Benchmark: "net", Node: "pair.with.dots", Table: series},
		{Benchmark: "net", Node: "master-node02", Table: results.Table{Columns: []string{"a"}}},
		{Benchmark: "net", Node: "node01-node02", Table: huge},
	})
	if len(maps) != 1 || len(maps[0]) != 1 || maps[0]["net.master-node01.csv"] == "" {
		t.Errorf("maps %v", maps)
	}
	var causes []string
	for _, l := range lost {
		causes = append(causes, l.Node+": "+l.Cause)
	}
	want := []string{
		"master-node01: a second table of the same execution",
		`pair.with.dots: no ConfigMap key: "pair.with.dots" is not a name of letters, digits, '-' and '_' that a ConfigMap key can hold`,
		"master-node02: table: 0 rows, want 1 to 100000",
		fmt.Sprintf("node01-node02: %d bytes of CSV, more than the 512 KiB a ConfigMap holds here", len("net.node01-node02.csv")+len(huge.CSV())),
	}
	if diff := cmp.Diff(want, causes); diff != "" {
		t.Errorf("lost (-want +got):\n%s", diff)
	}
}

func TestReadTakesTheSuitesTablesOnly(t *testing.T) {
	series := string(fixtureTable(t, "iperf3-tcp-5s.json").CSV())
	controller := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "vmbench.io/v1alpha1", Kind: kind, Name: name, UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	demo := controller("BenchmarkSuite", "demo", "demo-uid")
	cms := []corev1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-raw", Labels: map[string]string{vmbenchv1.LabelSuite: "demo", "vmbench.io/raw-outputs-of": "demo-container-1"},
			OwnerReferences: demo}, Data: map[string]string{"net.master-node01.txt": "raw"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "other-container-1-tables", Labels: Labels("other", "container", "other-container-1"),
			OwnerReferences: controller("BenchmarkSuite", "other", "other-uid")}, Data: map[string]string{"net.master-node01.csv": series}},
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-tables-2", Labels: Labels("demo", "container", "demo-container-1"), OwnerReferences: demo},
			Data: map[string]string{"net.node01-node02.csv": series, "notes.txt": "x", "net.master-node02.csv": "start_s\nx\n"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-tables", Labels: Labels("demo", "container", "demo-container-1"), OwnerReferences: demo},
			Data: map[string]string{"net.master-node01.csv": series}},
		// Look-alikes: the suite's labels, and a controller that is not the suite (an earlier suite of
		// the same name, or anyone who may create ConfigMaps), or none.
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-2-tables", Labels: Labels("demo", "container", "demo-container-2"),
			OwnerReferences: controller("BenchmarkSuite", "demo", "earlier-demo-uid")}, Data: map[string]string{"net.master-node01.csv": series}},
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-3-tables", Labels: Labels("demo", "container", "demo-container-3")},
			Data: map[string]string{"net.master-node01.csv": series}},
		{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-4-tables", Labels: Labels("demo", "container", "demo-container-4"),
			OwnerReferences: controller("Deployment", "demo", "demo-uid")}, Data: map[string]string{"net.master-node01.csv": series}},
	}
	stored, problems := Read("demo", "demo-uid", cms)
	var got []string
	for _, s := range stored {
		got = append(got, s.Run+" "+s.Platform+" "+s.Benchmark+" "+s.Node)
	}
	if diff := cmp.Diff([]string{"demo-container-1 container net master-node01", "demo-container-1 container net node01-node02"}, got); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
	notTheSuites := "its tables are not used, as anyone who may create ConfigMaps in the namespace could have made it"
	wantProblems := []string{
		`ConfigMap demo-container-1-tables-2, key net.master-node02.csv: table: row 1, column start_s: "x" is not a number`,
		`ConfigMap demo-container-1-tables-2: key "notes.txt" is not <benchmark>.<node>[.<variant>].csv`,
		"ConfigMap demo-container-2-tables has the labels of suite demo's tables but is not controlled by it " +
			"(its controller is BenchmarkSuite demo, uid earlier-demo-uid): " + notTheSuites,
		"ConfigMap demo-container-3-tables has the labels of suite demo's tables but is not controlled by it (it has no controller): " + notTheSuites,
		"ConfigMap demo-container-4-tables has the labels of suite demo's tables but is not controlled by it " +
			"(its controller is Deployment demo, uid demo-uid): " + notTheSuites,
	}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	// A suite without a UID (a file written by hand) proves no ConfigMap its own.
	if stored, _ := Read("demo", "", cms); len(stored) != 0 {
		t.Errorf("read %d tables for a suite without a UID", len(stored))
	}
}
