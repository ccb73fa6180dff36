package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/cli"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/tables"
)

// withTables is the demo suite with its iperf3 time series kept, one per run and pair, from a real
// iperf3 run, as the controller keeps them: the suite, and its tables ConfigMaps.
func withTables(t *testing.T) (*vmbenchv1.BenchmarkSuite, []corev1.ConfigMap) {
	t.Helper()
	out, err := os.ReadFile(filepath.Join(fixtures, "iperf3-tcp-10s.json"))
	if err != nil {
		t.Fatal(err)
	}
	series, err := results.Iperf3Intervals(out)
	if err != nil {
		t.Fatal(err)
	}
	suite := loadDemo(t)
	if suite.UID == "" {
		suite.UID = "demo-uid"
	}
	owner := []metav1.OwnerReference{*metav1.NewControllerRef(suite, vmbenchv1.GroupVersion.WithKind("BenchmarkSuite"))}
	var cms []corev1.ConfigMap
	for _, run := range suite.Status.Runs {
		var entries []tables.Entry
		for _, pair := range []string{"master-node01", "master-node02", "node01-master", "node02-master", "node01-node02"} {
			entries = append(entries, tables.Entry{Benchmark: "iperf3", Node: pair, Table: series})
		}
		maps, lost := tables.Pack(entries)
		if len(lost) > 0 || len(maps) != 1 {
			t.Fatalf("%d maps, lost %v", len(maps), lost)
		}
		cms = append(cms, corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: tables.MapName(run.Name, 0), Namespace: suite.Namespace, Labels: tables.Labels(suite.Name, run.Platform, run.Name),
				OwnerReferences: owner},
			Data: maps[0],
		})
		for i := range suite.Status.Results {
			if r := &suite.Status.Results[i]; r.Benchmark == "iperf3" && r.Platform == run.Platform {
				r.Tables += int32(len(entries))
			}
		}
	}
	// The raw outputs have the suite's label too; they are no tables.
	cms = append(cms, corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-raw", Namespace: suite.Namespace,
			Labels: map[string]string{vmbenchv1.LabelSuite: suite.Name, "vmbench.io/raw-outputs-of": "demo-container-1"}},
		Data: map[string]string{"iperf3.master-node01.txt": "raw"},
	})
	return suite, cms
}

func writeDocuments(t *testing.T, name string, docs ...any) string {
	t.Helper()
	var parts []string
	for _, d := range docs {
		data, err := yaml.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, string(data))
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.Join(parts, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const missingTablesNote = "status counts 30 whole result tables (iozone auto-mode tables, iperf3 time series) kept in ConfigMaps, " +
	"and the input holds none of them, so their plots are missing"

// `vmbench report -f` reads the suite's tables from a v1 List (kubectl get benchmarksuite,configmap
// -o yaml) and from YAML documents one after the other, and plots them; a plain suite file still
// works, and says what it lacks.
func TestReportReadsTablesFromAFile(t *testing.T) {
	suite, cms := withTables(t)
	items := []any{suite}
	for i := range cms {
		items = append(items, &cms[i])
	}
	list := writeDocuments(t, "list.yaml", map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	cmList := map[string]any{"apiVersion": "v1", "kind": "List", "items": items[1:]}
	documents := writeDocuments(t, "documents.yaml", suite, cmList)
	plain := writeDocuments(t, "suite.yaml", suite)

	plots := filepath.Join(t.TempDir(), "plots")
	r := runCLI("", "report", "-f", list, "--plots", plots)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "vmbench: wrote "+filepath.Join(plots, "iperf3-over-time.png")+"\n") {
		t.Errorf("no time series plot: %s", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, "whole result tables") || strings.Contains(r.stderr, "time series skipped") {
		t.Errorf("a note about missing tables:\n%s\n%s", r.stdout, r.stderr)
	}
	// The report's notes say whether the tables were read; the plots are the same as above.
	if r := runCLI("", "report", "-f", documents); r.code != 0 || strings.Contains(r.stdout, "whole result tables") {
		t.Errorf("YAML documents: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runCLI("", "report", "-f", plain); r.code != 0 || !strings.Contains(r.stdout, missingTablesNote) {
		t.Errorf("plain suite: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestReportReadsTablesFromTheCluster(t *testing.T) {
	suite, cms := withTables(t)
	other := cms[0].DeepCopy()
	other.Name = "other-container-1-tables"
	other.Labels = tables.Labels("other", "container", "other-container-1")
	// A look-alike with the suite's labels, made by someone else: its forged series is not plotted.
	forged := cms[0].DeepCopy()
	forged.Name = "demo-container-9-tables"
	forged.Labels = tables.Labels("demo", "container", "demo-container-9")
	forged.OwnerReferences = nil
	objs := []client.Object{suite, other, forged}
	for i := range cms {
		objs = append(objs, &cms[i])
	}
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	saved := cli.NewClusterReader
	cli.NewClusterReader = func(_, _, namespace string) (*cli.ClusterReader, error) {
		return &cli.ClusterReader{Client: c, Namespace: namespace}, nil
	}
	t.Cleanup(func() { cli.NewClusterReader = saved })

	read, err := (&cli.ClusterReader{Client: c, Namespace: "bench"}).Tables(t.Context(), "demo")
	if err != nil {
		t.Fatal(err)
	}
	// Labels select the suite's tables ConfigMaps and the look-alike; tables.Read keeps the suite's.
	if len(read) != len(suite.Status.Runs)+1 {
		t.Errorf("read %d ConfigMaps, want the %d tables ConfigMaps of the suite and the look-alike", len(read), len(suite.Status.Runs))
	}
	r := runCLI("", "report", "demo", "-n", "bench")
	if r.code != 0 || strings.Contains(r.stdout, "whole result tables") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if want := "ConfigMap demo-container-9-tables has the labels of suite demo's tables but is not controlled by it (it has no controller)"; !strings.Contains(r.stdout, want) {
		t.Errorf("the report does not say %q:\n%s", want, r.stdout)
	}
	// Without the tables, the report says so.
	if err := c.Delete(t.Context(), &cms[0]); err != nil {
		t.Fatal(err)
	}
	if r := runCLI("", "report", "demo", "-n", "bench"); r.code != 0 || !strings.Contains(r.stdout, "the input holds fewer whole result tables than status counts as kept") {
		t.Errorf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
