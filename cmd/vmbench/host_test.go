package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// savedSuite is a suite as `kubectl get -o yaml` saves it after a run: sysbench-cpu measured on
// containers and on emulated VMs.
const savedSuite = `apiVersion: vmbench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: quick, namespace: bench}
spec:
  repetitions: 1
  cluster: {nodes: 3, cpu: 1, memory: 1Gi}
  platforms: [{name: container, type: Container}, {name: vm, type: VM}]
  baseline: container
  benchmarks:
    - {name: cpu, type: sysbench-cpu, sysbenchCPU: {duration: 5s}}
status:
  results:
    - benchmark: cpu
      platform: container
      metrics: [{name: events_per_second, unit: events/s, direction: HigherIsBetter, count: 3, mean: 600}]
    - benchmark: cpu
      platform: vm
      emulated: true
      metrics: [{name: events_per_second, unit: events/s, direction: HigherIsBetter, count: 3, mean: 150}]
`

// fakeHost replaces the runner with one that reports value for every node, or fails on the nodes
// in failOn, and records the plans it was given.
func fakeHost(t *testing.T, value float64, failOn ...string) *[]runplan.Plan {
	t.Helper()
	var plans []runplan.Plan
	orig := hostRunner
	hostRunner = func(_ context.Context, plan runplan.Plan, emit func(runplan.Message) error, _ io.Writer) error {
		plans = append(plans, plan)
		for _, n := range plan.Nodes {
			msg := runplan.Message{Kind: runplan.KindResult, Benchmark: "cpu", Node: n.Name,
				Metrics: []results.Metric{{Name: "events_per_second", Value: value, Unit: "events/s", Direction: results.HigherIsBetter}}}
			for _, f := range failOn {
				if f == n.Name {
					msg.Metrics, msg.Error = nil, "sysbench failed (exit status 1)"
				}
			}
			if err := emit(msg); err != nil {
				return err
			}
		}
		return emit(runplan.Message{Kind: runplan.KindDone})
	}
	t.Cleanup(func() { hostRunner = orig })
	return &plans
}

func writeSuite(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHostComparesEveryPlatformWithThisMachine(t *testing.T) {
	plans := fakeHost(t, 750)
	scratch := t.TempDir()
	jsonFile := filepath.Join(t.TempDir(), "host.json")
	r := runCLI("", "host", "-f", writeSuite(t, savedSuite), "--dir", scratch, "--repetitions", "2", "--json", jsonFile)
	if r.code != exitOK {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}

	if len(*plans) != 2 {
		t.Fatalf("%d runs, want one per repetition (2)", len(*plans))
	}
	p := (*plans)[1]
	if p.Run != "quick-host-2" || p.Repetition != 2 || p.PlatformType != vmbenchv1.PlatformHost || p.CPU != 1 {
		t.Errorf("plan: run %q repetition %d type %q cpu %d", p.Run, p.Repetition, p.PlatformType, p.CPU)
	}
	if len(p.Nodes) != 3 || p.Nodes[0].Name != "master" || p.Nodes[2].Name != "node02" {
		t.Errorf("nodes %+v, want master, node01, node02", p.Nodes)
	}
	for _, n := range p.Nodes {
		if n.Address != "localhost" {
			t.Errorf("node %s at %q: every node is this machine", n.Name, n.Address)
		}
	}
	if p.LocalDir != filepath.Join(scratch, "quick-host-2") || p.SharedDir != "" {
		t.Errorf("local dir %q, shared dir %q", p.LocalDir, p.SharedDir)
	}
	if b := p.Benchmarks[0]; b.SysbenchCPU == nil || b.SysbenchCPU.MaxPrime != 20000 {
		t.Errorf("benchmark without its defaults: %+v", b.SysbenchCPU)
	}

	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || lines[2] != report.EmulatedNote {
		t.Fatalf("want a header, one row and the note on emulated VMs:\n%s", r.stdout)
	}
	header, row := strings.Fields(lines[0]), strings.Fields(lines[1])
	wantHeader := []string{"BENCHMARK", "METRIC", "UNIT", "HOST", "MEAN", "±", "SD", "container", "container/HOST", "vm", "(emulated)", "vm", "(emulated)/HOST"}
	if strings.Join(header, " ") != strings.Join(wantHeader, " ") {
		t.Errorf("header %q", lines[0])
	}
	// Six samples of 750 (three nodes, two repetitions); containers 600/750, VMs 150/750.
	wantRow := []string{"cpu", "events_per_second", "events/s", "750", "±", "0", "(n=6)", "600", "(n=3)", "0.800", "150", "(n=3)", "0.200"}
	if strings.Join(row, " ") != strings.Join(wantRow, " ") {
		t.Errorf("row %q, want %q", lines[1], strings.Join(wantRow, " "))
	}

	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var samples []hostSample
	if err := json.Unmarshal(raw, &samples); err != nil {
		t.Fatal(err)
	}
	if len(samples) != 6 || samples[5] != (hostSample{Benchmark: "cpu", Metric: "events_per_second", Unit: "events/s",
		Direction: "HigherIsBetter", Repetition: 2, Node: "node02", Value: 750}) {
		t.Errorf("samples %+v", samples)
	}
}

func TestHostReportsFailedExecutionsAndExitsNonZero(t *testing.T) {
	fakeHost(t, 700, "node01")
	r := runCLI("", "host", "-f", writeSuite(t, savedSuite), "--dir", t.TempDir())
	if r.code != exitError {
		t.Fatalf("exit %d, want %d: a failed execution is a failure", r.code, exitError)
	}
	if !strings.Contains(r.stderr, "cpu on node01 (repetition 1): sysbench failed (exit status 1)") {
		t.Errorf("stderr does not name the failure: %q", r.stderr)
	}
	if !strings.Contains(r.stdout, "700 ± 0 (n=2)") {
		t.Errorf("the good samples are not shown:\n%s", r.stdout)
	}
}

func TestHostRefusesBadInput(t *testing.T) {
	fakeHost(t, 1)
	noBenchmarks := writeSuite(t, "apiVersion: vmbench.io/v1alpha1\nkind: BenchmarkSuite\nmetadata: {name: empty}\nspec: {}\n")
	for _, tt := range []struct {
		args     []string
		code     int
		inStderr string
	}{
		{[]string{"host"}, exitUsage, "host needs -f SUITE"},
		{[]string{"host", "-f", noBenchmarks, "extra"}, exitUsage, "no other arguments"},
		{[]string{"host", "-f", noBenchmarks, "--repetitions", "-1"}, exitUsage, "--repetitions must not be negative"},
		{[]string{"host", "-f", noBenchmarks}, exitError, "suite empty has no benchmarks: list some under spec.benchmarks"},
		{[]string{"host", "-f", filepath.Join(t.TempDir(), "missing.yaml")}, exitError, "no such file"},
	} {
		r := runCLI("", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.inStderr) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tt.args, r.code, r.stderr, tt.code, tt.inStderr)
		}
	}
}

// TestHostRunsTheRealRunner runs `vmbench host` with the real runner on this machine: the suite's
// nodes become local roles, the runner runs sysbench in each node's scratch directory and parses
// its output. The sysbench on PATH is a stub that prints a real output of sysbench 1.0.20 (a
// fixture of the parsers) and records how it was called, so the figures are known.
func TestHostRunsTheRealRunner(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	fixture, err := filepath.Abs(filepath.Join(fixtures, "sysbench-cpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\necho \"$*\" >> '" + calls + "'\nexec cat '" + fixture + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "sysbench"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	suite := writeSuite(t, `apiVersion: vmbench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: local}
spec:
  repetitions: 1
  cluster: {nodes: 2, cpu: 1, memory: 1Gi}
  benchmarks:
    - {name: cpu, type: sysbench-cpu, sysbenchCPU: {duration: 3s}}
`)
	jsonFile := filepath.Join(t.TempDir(), "host.json")
	r := runCLI("", "host", "-f", suite, "--dir", t.TempDir(), "--json", jsonFile)
	if r.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// sysbench ran once per node (master and node01), with the suite's parameters and defaults.
	raw, err := os.ReadFile(calls)
	if err != nil {
		t.Fatalf("sysbench was not run: %v", err)
	}
	if got, want := string(raw), strings.Repeat("cpu --cpu-max-prime=20000 --threads=1 --time=3 run\n", 2); got != want {
		t.Errorf("sysbench calls:\n%s\nwant:\n%s", got, want)
	}

	// The fixture's figures, from both nodes: 218.59 events/s, latency min 1.20, avg 9.10, max
	// 121.39, 95th percentile 33.12 ms.
	wantRows := []string{
		"BENCHMARK METRIC UNIT HOST MEAN ± SD",
		"cpu events_per_second events/s 218.6 ± 0 (n=2)",
		"cpu latency_min_ms ms 1.2 ± 0 (n=2)",
		"cpu latency_avg_ms ms 9.1 ± 0 (n=2)",
		"cpu latency_max_ms ms 121.4 ± 0 (n=2)",
		"cpu latency_p95_ms ms 33.12 ± 0 (n=2)",
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	if strings.Join(rows, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("table:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(wantRows, "\n"))
	}

	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var samples []hostSample
	if err := json.Unmarshal(data, &samples); err != nil {
		t.Fatal(err)
	}
	var want []hostSample
	for _, m := range []struct {
		name, unit, direction string
		value                 float64
	}{
		{"events_per_second", "events/s", "HigherIsBetter", 218.59},
		{"latency_min_ms", "ms", "LowerIsBetter", 1.20},
		{"latency_avg_ms", "ms", "LowerIsBetter", 9.10},
		{"latency_max_ms", "ms", "LowerIsBetter", 121.39},
		{"latency_p95_ms", "ms", "LowerIsBetter", 33.12},
	} {
		for _, node := range []string{"master", "node01"} {
			want = append(want, hostSample{Benchmark: "cpu", Metric: m.name, Unit: m.unit, Direction: m.direction,
				Repetition: 1, Node: node, Value: m.value})
		}
	}
	sortSamples := func(s []hostSample) {
		slices.SortFunc(s, func(a, b hostSample) int {
			return strings.Compare(a.Metric+" "+a.Node, b.Metric+" "+b.Node)
		})
	}
	sortSamples(samples)
	sortSamples(want)
	if diff := cmp.Diff(want, samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
}
