package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func secs(v float64) *float64 { return &v }

// startupSuite is the fixture suite with two container and two VM runs that recorded their start.
func startupSuite() *vmbenchv1.BenchmarkSuite {
	s := fixtureSuite([]fixtureMetric{{"cpu", "events", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(90, 0.1)}})
	over := func(cpu, memory string) *vmbenchv1.ResourceOverhead {
		return &vmbenchv1.ResourceOverhead{CPU: resource.MustParse(cpu), Memory: resource.MustParse(memory)}
	}
	s.Status.Runs = []vmbenchv1.RunStatus{
		{Name: "c-1", Platform: "container", StartupSeconds: &vmbenchv1.RunStartup{PodsScheduled: secs(1), SandboxesReady: secs(2), ContainersStarted: secs(10), RunnerReady: secs(14)}},
		// A run that saw no sandbox condition (a cluster without PodReadyToStartContainers).
		{Name: "c-2", Platform: "container", StartupSeconds: &vmbenchv1.RunStartup{PodsScheduled: secs(2), ContainersStarted: secs(12), RunnerReady: secs(17)}},
		{Name: "v-1", Platform: "vm", StartupSeconds: &vmbenchv1.RunStartup{VMIScheduled: secs(5), VMIRunning: secs(15), RunnerReady: secs(60)},
			LauncherOverhead: over("250m", "230Mi")},
		{Name: "v-2", Platform: "vm", StartupSeconds: &vmbenchv1.RunStartup{VMIScheduled: secs(6), VMIRunning: secs(16.5), RunnerReady: secs(70)},
			LauncherOverhead: over("100m", "263Mi")},
	}
	return s
}

func TestStartupPerPlatform(t *testing.T) {
	rep, err := Build(startupSuite())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Startup) != 2 {
		t.Fatalf("startup rows %+v, want one per platform", rep.Startup)
	}
	// container: scheduled (1+2)/2 = 1.5, sandboxes 2 (one run), started (10+12)/2 = 11, runner
	// (14+17)/2 = 15.5. vm: scheduled 5.5, running (15+16.5)/2 = 15.75, runner 65.
	if diff := cmp.Diff(map[string]float64{"podsScheduled": 1.5, "sandboxesReady": 2, "containersStarted": 11, "runnerReady": 15.5},
		rep.Startup[0].Phases); diff != "" || rep.Startup[0].Platform != "container" || rep.Startup[0].Runs != 2 {
		t.Errorf("container row %+v (-want +got phases):\n%s", rep.Startup[0], diff)
	}
	if diff := cmp.Diff(map[string]float64{"vmiScheduled": 5.5, "vmiRunning": 15.75, "runnerReady": 65},
		rep.Startup[1].Phases); diff != "" || rep.Startup[1].Platform != "vm" || rep.Startup[1].Runs != 2 {
		t.Errorf("vm row %+v (-want +got phases):\n%s", rep.Startup[1], diff)
	}
	// The largest per resource over the VM runs: 250m from v-1, 263Mi from v-2.
	if got := rep.Startup[1].ReservedCell(); got != "+250m CPU, +263 MiB" {
		t.Errorf("vm reserved %q, want +250m CPU, +263 MiB", got)
	}
	if got := rep.Startup[0].ReservedCell(); got != "-" {
		t.Errorf("container reserved %q, want -", got)
	}

	var out bytes.Buffer
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"Time to workload (s)", "VMI RUNNING", "RESERVED BEYOND THE GUEST (per VM)", "+250m CPU, +263 MiB"} {
		if !strings.Contains(text, want) {
			t.Errorf("first screen lacks %q:\n%s", want, text)
		}
	}
	// The container row: 2 runs, then the six phases in order (vmi phases absent), then no overhead.
	if !strings.Contains(squeeze(text), "container 2 1.5 2.0 11.0 - - 15.5 -") {
		t.Errorf("first screen lacks the container row:\n%s", text)
	}
	if !strings.Contains(squeeze(text), "vm 2 - - - 5.5 15.8 65.0 +250m CPU, +263 MiB") {
		t.Errorf("first screen lacks the vm row:\n%s", text)
	}

	out.Reset()
	if err := rep.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	if page := out.String(); !strings.Contains(page, "<h2>Time to workload</h2>") || !strings.Contains(page, "<th>vmi running (s)</th>") ||
		!strings.Contains(page, "&#43;250m CPU, &#43;263 MiB") {
		t.Errorf("page lacks the time-to-workload table (html/template writes + as &#43;)")
	}
}

func TestStartupAbsentFromOldStatus(t *testing.T) {
	s := startupSuite()
	for i := range s.Status.Runs {
		s.Status.Runs[i].StartupSeconds, s.Status.Runs[i].LauncherOverhead = nil, nil
	}
	rep, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Startup) != 0 {
		t.Errorf("startup rows %+v from a status without them, want none", rep.Startup)
	}
	var out bytes.Buffer
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Time to workload") {
		t.Errorf("first screen of an old status shows a time-to-workload table:\n%s", out.String())
	}
	out.Reset()
	if err := rep.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "Time to workload") {
		t.Error("page of an old status shows a time-to-workload table")
	}
}

// squeeze turns every run of blanks into one space, so that a tabwriter's row can be matched.
func squeeze(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\t' }), " ")
}
