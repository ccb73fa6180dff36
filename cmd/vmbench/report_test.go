package main

import (
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/cli"
)

// demoSuiteFile is the suite fixture of package report: container against emulated VMs.
const demoSuiteFile = "../../internal/report/testdata/suite-demo.yaml"

func loadDemo(t *testing.T) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	data, err := os.ReadFile(demoSuiteFile)
	if err != nil {
		t.Fatal(err)
	}
	var s vmbenchv1.BenchmarkSuite
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func writeYAML(t *testing.T, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// slower returns the demo with the container's sysbench-cpu throughput lowered by factor.
func slower(t *testing.T, factor float64) *vmbenchv1.BenchmarkSuite {
	s := loadDemo(t)
	for i := range s.Status.Results {
		res := &s.Status.Results[i]
		if res.Benchmark != "sysbench-cpu" || res.Platform != "container" {
			continue
		}
		m := &res.Metrics[0]
		for k := range m.Samples {
			m.Samples[k].Value *= factor
		}
		m.Mean *= factor
		m.StdDev *= factor
	}
	return s
}

// fakeCluster serves suites to the report command instead of an API server.
func fakeCluster(t *testing.T, suites ...*vmbenchv1.BenchmarkSuite) {
	t.Helper()
	builder := fake.NewClientBuilder().WithScheme(scheme.New())
	for _, s := range suites {
		builder = builder.WithObjects(s)
	}
	c := builder.Build()
	saved := cli.NewClusterReader
	cli.NewClusterReader = func(_, _, namespace string) (*cli.ClusterReader, error) {
		if namespace == "" {
			namespace = "default"
		}
		return &cli.ClusterReader{Client: c, Namespace: namespace}, nil
	}
	t.Cleanup(func() { cli.NewClusterReader = saved })
}

func TestReportFromFile(t *testing.T) {
	r := runCLI("", "report", "-f", demoSuiteFile)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{
		"Suite bench/demo: every platform against baseline \"container\"",
		"events_per_second",
		"vm (emulated)",
		"(emulated): the VMs ran under QEMU software emulation (TCG), not KVM; these figures do not measure VM overhead",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	// The same table from stdin, and with the flags after a JSON file.
	data, err := os.ReadFile(demoSuiteFile)
	if err != nil {
		t.Fatal(err)
	}
	if fromStdin := runCLI(string(data), "report", "-f", "-"); fromStdin.code != 0 || fromStdin.stdout != r.stdout {
		t.Errorf("stdin: exit %d, stderr %q", fromStdin.code, fromStdin.stderr)
	}
	jsonSuite, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	jsonFile := filepath.Join(t.TempDir(), "suite.json")
	if err := os.WriteFile(jsonFile, jsonSuite, 0o600); err != nil {
		t.Fatal(err)
	}
	if fromJSON := runCLI("", "report", "--file="+jsonFile); fromJSON.code != 0 || fromJSON.stdout != r.stdout {
		t.Errorf("JSON file: exit %d, stderr %q", fromJSON.code, fromJSON.stderr)
	}
}

func TestReportArchives(t *testing.T) {
	dir := t.TempDir()
	csvFile, jsonFile, plots := filepath.Join(dir, "rows.csv"), filepath.Join(dir, "rows.json"), filepath.Join(dir, "plots")
	r := runCLI("", "report", "-f", demoSuiteFile, "--csv", csvFile, "--json", jsonFile, "--plots", plots)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	f, err := os.Open(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 112 || records[0][0] != "benchmark" || records[0][1] != "metric" {
		t.Errorf("%d CSV records, header %q", len(records), records[0])
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(data, &rows); err != nil || len(rows) != 111 {
		t.Errorf("JSON: %d rows, %v", len(rows), err)
	}
	for _, name := range []string{"sysbench-cpu-means.png", "hpl-over-n.png", "iozone-read-heatmap.png", "iperf3-samples.png"} {
		path := filepath.Join(plots, name)
		pf, err := os.Open(path)
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := png.Decode(pf); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		_ = pf.Close()
		if !strings.Contains(r.stderr, "vmbench: wrote "+path+"\n") {
			t.Errorf("stderr does not list %s", path)
		}
	}
}

func TestReportFromCluster(t *testing.T) {
	demo := loadDemo(t)
	old := loadDemo(t)
	old.Name = "demo-old"
	worse := slower(t, 0.9)
	worse.Name = "demo-worse"
	fakeCluster(t, demo, old, worse)

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"flags after the name", []string{"report", "demo", "-n", "bench"}, 0, "Suite bench/demo:", ""},
		{"flags before the name", []string{"report", "--namespace=bench", "demo"}, 0, "Suite bench/demo:", ""},
		{"missing suite", []string{"report", "nosuch", "-n", "bench"}, 1, "",
			"vmbench: benchmarksuite \"nosuch\" not found in namespace \"bench\"\n"},
		{"wrong namespace", []string{"report", "demo"}, 1, "",
			"vmbench: benchmarksuite \"demo\" not found in namespace \"default\"\n"},
		{"no regression", []string{"report", "demo", "-n", "bench", "--baseline", "demo-old"}, 0,
			"PASS: no metric of 222 regressed beyond 5%", ""},
		{"regression", []string{"report", "demo-worse", "-n", "bench", "--baseline", "demo-old"}, 3,
			"FAIL: 1 of 222 metrics regressed beyond 5%", ""},
		{"regression within a wider tolerance", []string{"report", "demo-worse", "-n", "bench", "--baseline", "demo-old", "--tolerance", "12"}, 0,
			"PASS: no metric of 222 regressed beyond 12%", ""},
		{"missing baseline suite", []string{"report", "demo", "-n", "bench", "--baseline", "nosuch"}, 1, "",
			"vmbench: baseline suite: benchmarksuite \"nosuch\" not found in namespace \"bench\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI("", tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.wantStdout) || r.stderr != tt.wantStderr {
				t.Errorf("exit %d (want %d)\nstderr %q (want %q)\nstdout:\n%s", r.code, tt.wantCode, r.stderr, tt.wantStderr, r.stdout)
			}
		})
	}
}

func TestReportBaselineFile(t *testing.T) {
	worse := writeYAML(t, slower(t, 0.9))
	better := writeYAML(t, slower(t, 1.1))
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"same suite", []string{"report", "-f", demoSuiteFile, "--baseline-file", demoSuiteFile}, 0, "PASS: no metric of 222 regressed beyond 5%"},
		{"10% slower", []string{"report", "-f", worse, "--baseline-file", demoSuiteFile}, 3, "REGRESSION"},
		{"10% faster", []string{"report", "-f", better, "--baseline-file", demoSuiteFile}, 0, "improved"},
		{"faster baseline, tolerance 0", []string{"report", "-f", demoSuiteFile, "--baseline-file", better, "--tolerance=0"}, 3, "FAIL: 1 of 222"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI("", tt.args...)
			if r.code != tt.wantCode || !strings.Contains(r.stdout, tt.want) || r.stderr != "" {
				t.Errorf("exit %d (want %d), stderr %q, stdout lacks %q?\n%s", r.code, tt.wantCode, r.stderr, tt.want, r.stdout)
			}
		})
	}
}

func TestReportFailures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	configMap := write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n")
	noKind := write("nokind.yaml", "spec:\n  repetitions: 3\n")
	garbage := write("garbage.yaml", "\x00\x01: [unclosed\n")
	noResults := loadDemo(t)
	noResults.Status = vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteRunning, Progress: "1/6"}
	noResultsFile := writeYAML(t, noResults)
	twoSuites := writeYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{loadDemo(t), noResults}})

	tests := []struct {
		name     string
		args     []string
		wantCode int
		// wantStderr is the whole message; where it holds a temporary path, the part naming the
		// cause, in wantPart, is checked instead.
		wantStderr string
		wantPart   string
	}{
		{"not a suite", []string{"report", "-f", configMap}, 1,
			"vmbench: " + configMap + ": not a BenchmarkSuite: kind \"ConfigMap\", apiVersion \"v1\"\n", ""},
		{"no kind", []string{"report", "-f", noKind}, 1,
			"vmbench: " + noKind + ": not a BenchmarkSuite: no kind field (save one with kubectl get benchmarksuite NAME -o yaml)\n", ""},
		{"garbage", []string{"report", "-f", garbage}, 1, "", "garbage.yaml: not YAML or JSON: error converting YAML to JSON"},
		{"missing file", []string{"report", "-f", filepath.Join(dir, "nosuch.yaml")}, 1, "", "nosuch.yaml: no such file or directory\n"},
		{"no results", []string{"report", "-f", noResultsFile}, 1,
			"vmbench: suite bench/demo has no results yet (phase Running, runs finished 1/6)\n", ""},
		{"list needs a name", []string{"report", "-f", twoSuites}, 1,
			"vmbench: " + twoSuites + ": holds 2 suites (demo, demo); name the one to report\n", ""},
		{"name not in file", []string{"report", "-f", demoSuiteFile, "other"}, 1, "", "suite-demo.yaml: holds no suite named \"other\" (it has: demo)\n"},
		{"unreachable cluster", []string{"report", "demo", "--kubeconfig", filepath.Join(dir, "nosuch-kubeconfig")}, 1,
			"", "vmbench: no cluster to read the suite from (use --kubeconfig, KUBECONFIG, or -f to read a file): stat "},
		{"no suite", []string{"report"}, 2, "vmbench: report: name a suite, or read one from a file with -f\nrun 'vmbench report -h' for usage\n", ""},
		{"two suites", []string{"report", "a", "b"}, 2, "vmbench: report: one suite at a time, got a b\nrun 'vmbench report -h' for usage\n", ""},
		{"svg without plots", []string{"report", "-f", demoSuiteFile, "--svg"}, 2, "vmbench: report: --svg needs --plots DIR\nrun 'vmbench report -h' for usage\n", ""},
		{"two baselines", []string{"report", "-f", demoSuiteFile, "--baseline", "x", "--baseline-file", "y"}, 2,
			"vmbench: report: --baseline and --baseline-file are alternatives, give one\nrun 'vmbench report -h' for usage\n", ""},
		{"negative tolerance", []string{"report", "-f", demoSuiteFile, "--baseline-file", demoSuiteFile, "--tolerance", "-1"}, 2,
			"vmbench: report: --tolerance must not be negative, got -1\nrun 'vmbench report -h' for usage\n", ""},
		{"unknown flag", []string{"report", "-f", demoSuiteFile, "--bogus"}, 2,
			"vmbench: report: flag provided but not defined: -bogus\nrun 'vmbench report -h' for usage\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI("", tt.args...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, tt.wantCode, r.stderr)
			}
			if tt.wantPart == "" && r.stderr != tt.wantStderr {
				t.Errorf("stderr %q\nwant   %q", r.stderr, tt.wantStderr)
			}
			if !strings.Contains(r.stderr, tt.wantPart) {
				t.Errorf("stderr %q\nwant a message with %q", r.stderr, tt.wantPart)
			}
			if tt.wantCode == 1 && strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("an error is one line on stderr, got %q", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("nothing belongs on stdout, got %q", r.stdout)
			}
		})
	}
}

func TestReportListFile(t *testing.T) {
	other := loadDemo(t)
	other.Name = "other"
	list := writeYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{loadDemo(t), other}})
	r := runCLI("", "report", "other", "-f", list)
	if r.code != 0 || !strings.Contains(r.stdout, "Suite bench/other:") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestReportHelp(t *testing.T) {
	r := runCLI("", "report", "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "usage: vmbench report <suite>") || !strings.Contains(r.stdout, "kubectl-vmbench") {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
	saved := os.Args[0]
	os.Args[0] = "/usr/local/bin/kubectl-vmbench"
	defer func() { os.Args[0] = saved }()
	r = runCLI("", "report", "--help")
	if !strings.Contains(r.stdout, "usage: kubectl vmbench report <suite>") {
		t.Errorf("as a kubectl plugin, usage should say kubectl vmbench: %q", r.stdout)
	}
	if top := runCLI("", "help"); !strings.Contains(top.stdout, "vmbench report (<suite> [-n namespace]") {
		t.Errorf("help does not list report: %q", top.stdout)
	}
}

// TestReportNoise marks the rows of samples taken under noise, and drops them on request.
func TestReportNoise(t *testing.T) {
	s := loadDemo(t)
	noisyValues := 0
	for i := range s.Status.Results {
		res := &s.Status.Results[i]
		if res.Benchmark != "sysbench-cpu" || res.Platform != "container" {
			continue
		}
		for k := range res.Metrics[0].Samples {
			noise := 1.5
			if k == 0 {
				noise = 25
				noisyValues++
			}
			res.Metrics[0].Samples[k].Noise = &noise
		}
	}
	if noisyValues != 1 {
		t.Fatal("the demo has no container sysbench-cpu samples")
	}
	file := writeYAML(t, s)

	r := runCLI("", "report", "-f", file)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"vm ! (emulated)", "rows marked ! include 1 sample(s)", "exceeded 10%", "sysbench-cpu events_per_second on container (1)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if high := runCLI("", "report", "-f", file, "--noise-threshold", "30"); high.code != 0 || strings.Contains(high.stdout, "rows marked !") {
		t.Errorf("threshold 30: exit %d, stdout:\n%s", high.code, high.stdout)
	}
	dropped := runCLI("", "report", "-f", file, "--drop-noisy")
	if dropped.code != 0 || !strings.Contains(dropped.stdout, "--drop-noisy: 1 sample(s)") || strings.Contains(dropped.stdout, "rows marked !") {
		t.Errorf("--drop-noisy: exit %d, stdout:\n%s", dropped.code, dropped.stdout)
	}
	if dropped.stdout == r.stdout {
		t.Error("--drop-noisy left the table as it was")
	}
	if bad := runCLI("", "report", "-f", file, "--noise-threshold", "-1"); bad.code != exitUsage || !strings.Contains(bad.stderr, "--noise-threshold") {
		t.Errorf("negative threshold: exit %d, stderr %q", bad.code, bad.stderr)
	}
}

func TestReportHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "report.html")
	r := runCLI("", "report", "-f", demoSuiteFile, "--html", page, "--tolerance", "2")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `<svg class="plot"`, "Understanding this report", "within ±2%"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if !strings.Contains(r.stdout, "tolerance ±2%") {
		t.Errorf("--tolerance 2 not in the context line")
	}
}

// TestReportDropMigrated: a sample measured during a live migration is counted in a note and kept,
// and --drop-migrated leaves it out of the table's statistics and says so.
func TestReportDropMigrated(t *testing.T) {
	s := loadDemo(t)
	marked := false
	for i := range s.Status.Results {
		res := &s.Status.Results[i]
		if res.Benchmark != "sysbench-cpu" || res.Platform != "vm" || len(res.Metrics[0].Samples) < 2 {
			continue
		}
		res.Metrics[0].Samples[0].Migrated = true
		marked = true
	}
	if !marked {
		t.Fatal("the demo has no VM sysbench-cpu samples")
	}
	file := writeYAML(t, s)
	kept := runCLI("", "report", "-f", file)
	if kept.code != 0 || !strings.Contains(kept.stdout, "1 sample(s) were measured while one of") || !strings.Contains(kept.stdout, "--drop-migrated leaves them out") {
		t.Errorf("without the flag: exit %d, stdout:\n%s", kept.code, kept.stdout)
	}
	dropped := runCLI("", "report", "-f", file, "--drop-migrated")
	if dropped.code != 0 || !strings.Contains(dropped.stdout, "--drop-migrated: 1 sample(s)") {
		t.Errorf("--drop-migrated: exit %d, stdout:\n%s", dropped.code, dropped.stdout)
	}
	if dropped.stdout == kept.stdout {
		t.Error("--drop-migrated left the report as it was")
	}
}

// Protects where `vmbench report` puts the migration benchmark's answer: its line on the first
// screen (before the table of every metric), once, with the emulated platform marked and no pod
// eviction figure; --drop-migrated keeps the migration benchmark's own samples, which overlap the
// migration they measure by design (marked here as a manager marked them before it stopped).
func TestReportMigrationFirstScreen(t *testing.T) {
	s := &vmbenchv1.BenchmarkSuite{}
	s.APIVersion, s.Kind = vmbenchv1.GroupVersion.String(), "BenchmarkSuite"
	s.Name, s.Namespace = "mig", "bench"
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}}
	metric := func(name, unit string, dir vmbenchv1.Direction, v ...float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, Unit: unit, Direction: dir, N: int32(len(v))}
		for _, x := range v {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Node: "master", Value: x, Migrated: true})
			m.Mean += x / float64(len(v))
		}
		return m
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "mig", Platform: "vm", Emulated: true, Metrics: []vmbenchv1.MetricSummary{
		metric("completed", "bool", vmbenchv1.HigherIsBetter, 1, 1, 1),
		metric("pause_ms", "ms", vmbenchv1.LowerIsBetter, 300, 310, 320),
		metric("total_seconds", "s", vmbenchv1.LowerIsBetter, 3, 4, 5),
		metric("dip_percent", "%", vmbenchv1.LowerIsBetter, 40, 50, 60),
		metric("recovery_seconds", "s", vmbenchv1.LowerIsBetter, 1, 1, 1)}}}
	file := writeYAML(t, s)
	const line = "vm (emulated): migration: pause 310 ms [285, 335], total 4 s [1.52, 6.48], dip 50% [25.2, 74.8] for 1 s [1, 1] (3 of 3 completed)"
	for _, args := range [][]string{{"report", "-f", file}, {"report", "-f", file, "--drop-migrated"}} {
		r := runCLI("", args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		first, _, ok := strings.Cut(r.stdout, "\nEvery metric:")
		if !ok || !strings.Contains(first, "\n"+line+"\n") || strings.Count(r.stdout, "migration: pause") != 1 {
			t.Errorf("%v: the migration line is not on the first screen once:\n%s", args, r.stdout)
		}
		if !strings.Contains(first, "pod eviction (a Container platform): the probe worker pod evicted") || strings.Contains(r.stdout, "back at rate after") {
			t.Errorf("%v: the first screen should say what a pod eviction's figures are, and give none for a suite without a Container platform:\n%s", args, first)
		}
		if strings.Contains(r.stdout, "sample(s) were measured while") || strings.Contains(r.stdout, "--drop-migrated: 3") {
			t.Errorf("%v: the migration benchmark's own samples were treated as disturbed by a migration:\n%s", args, r.stdout)
		}
	}
	// The HTML page shows the line under the headlines, and the legend.
	page := filepath.Join(t.TempDir(), "report.html")
	if r := runCLI("", "report", "-f", file, "--html", page); r.code != 0 {
		t.Fatalf("--html: exit %d, stderr %q", r.code, r.stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `<p class="headline">`+line+`</p>`) || !strings.Contains(string(data), "pod eviction (a Container platform): the probe worker pod evicted") {
		t.Errorf("the HTML page lacks the migration line or its legend")
	}
}
