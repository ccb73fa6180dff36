package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
