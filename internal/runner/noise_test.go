package runner

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

func TestParseProcStat(t *testing.T) {
	got, err := ParseProcStat([]byte(fixture(t, "noise/proc-stat-before.txt")))
	if err != nil {
		t.Fatal(err)
	}
	// user 1000 + system 500 + softirq 100; steal 50; idle 8000 and iowait 100 on top.
	want := CPUTimes{Busy: 1600, Steal: 50, Total: 9750, CPUs: 2}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// A real /proc/stat of the machine the fixture was taken on parses too.
	real, err := ParseProcStat([]byte(fixture(t, "noise/proc-stat-real.txt")))
	if err != nil || real.CPUs < 1 || real.Total <= real.Busy {
		t.Errorf("real /proc/stat: %+v, %v", real, err)
	}
}

func TestParseProcStatRejectsGarbage(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"no aggregate": "cpu0 1 2 3 4 5 6 7 8 0 0\n",
		"short":        "cpu  1 2 3 4\n",
		"not a number": "cpu  1 2 x 4 5 6 7 8 0 0\n",
		"negative":     "cpu  1 2 -3 4 5 6 7 8 0 0\n",
	} {
		if _, err := ParseProcStat([]byte(in)); err == nil || !strings.Contains(err.Error(), "/proc/stat") {
			t.Errorf("%s: error %v, want one that names /proc/stat", name, err)
		}
	}
}

func TestParseCgroupUsage(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
	}{
		{"noise/cgroup-v2/before/cpu.stat", time.Second},
		{"noise/cgroup-v2/after/cpu.stat", 5 * time.Second},
		{"noise/cgroup-v1/before/cpuacct/cpuacct.usage", time.Second},
		{"noise/cgroup-v1/after/cpuacct/cpuacct.usage", 5 * time.Second},
	} {
		got, err := ParseCgroupUsage(tc.file, []byte(fixture(t, tc.file)))
		if err != nil || got != tc.want {
			t.Errorf("%s: got %v, %v; want %v", tc.file, got, err, tc.want)
		}
	}
	for file, in := range map[string]string{
		"/sys/fs/cgroup/cpu.stat":              "user_usec 5\n",
		"/sys/fs/cgroup/cpuacct/cpuacct.usage": "many\n",
		"/sys/fs/cgroup/memory.current":        "5\n",
	} {
		if _, err := ParseCgroupUsage(file, []byte(in)); err == nil || !strings.Contains(err.Error(), file) {
			t.Errorf("%s %q: error %v, want one that names the file", file, in, err)
		}
	}
}

// TestSnapshotScript runs the snapshot's shell script on fixture directories laid out as cgroup v2,
// both cgroup v1 layouts, and no readable cgroup at all, and computes the noise between two.
func TestSnapshotScript(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	snap := func(dir, when string, own bool) noiseSnapshot {
		t.Helper()
		script := snapshotScript(filepath.Join("testdata", "noise", "proc-stat-"+when+".txt"), filepath.Join("testdata", "noise", dir, when), own)
		out, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		s, err := parseSnapshot(out)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		return s
	}
	for _, dir := range []string{"cgroup-v2", "cgroup-v1", "cgroup-v1-combined"} {
		n, ok := noiseBetween(snap(dir, "before", true), snap(dir, "after", true))
		if !ok {
			t.Fatalf("%s: no noise", dir)
		}
		// Over 2000 ticks: busy 1100 (55%), steal 100 (5%); the container used 4 s = 400 ticks, so
		// others used 700 ticks (35%).
		if n.BusyPercent != 55 || n.StealPercent != 5 || n.OthersPercent == nil || *n.OthersPercent != 35 || n.CPUs != 2 {
			t.Errorf("%s: got %+v (others %v)", dir, n, n.OthersPercent)
		}
		if n.Level() != 40 {
			t.Errorf("%s: level %v, want others + steal = 40", dir, n.Level())
		}
	}
	n, ok := noiseBetween(snap("none", "before", true), snap("none", "after", true))
	if !ok || n.OthersPercent != nil || n.BusyPercent != 55 || n.Level() != 5 {
		t.Errorf("without a cgroup file: got %+v, %v; want busy and steal only, level = steal", n, ok)
	}
	// A VM does not read its cgroup even where one is readable.
	if s := snap("cgroup-v2", "before", false); s.hasOwn {
		t.Errorf("own=false read the cgroup: %+v", s)
	}
}

func TestNoiseBetweenNeedsAdvancingCounters(t *testing.T) {
	a := noiseSnapshot{cpu: CPUTimes{Busy: 100, Steal: 0, Total: 1000}}
	if _, ok := noiseBetween(a, a); ok {
		t.Error("no time passed, yet a noise figure came out")
	}
	rebooted := noiseSnapshot{cpu: CPUTimes{Busy: 10, Total: 50}}
	if _, ok := noiseBetween(a, rebooted); ok {
		t.Error("counters went back, yet a noise figure came out")
	}
	// The container's usage read a little past the node's busy time is nobody else's CPU.
	before := noiseSnapshot{cpu: CPUTimes{Busy: 0, Total: 0}, hasOwn: true}
	after := noiseSnapshot{cpu: CPUTimes{Busy: 100, Total: 200}, own: 1100 * time.Millisecond, hasOwn: true}
	n, ok := noiseBetween(before, after)
	if !ok || n.OthersPercent == nil || *n.OthersPercent != 0 {
		t.Errorf("got %+v, %v; want others clamped at 0", n, ok)
	}
}

func TestNoiseNode(t *testing.T) {
	plan := testPlan(t)
	for label, want := range map[string]string{
		"node01": "node01", "node02-master": "node02", "master-node01": "master", "master": "master", "node-node": "master",
	} {
		if got := noiseNode(plan, label).Name; got != want {
			t.Errorf("%s: sampled on %s, want %s", label, got, want)
		}
	}
}

// TestRunSamplesNoise checks that every execution is bracketed by two samples on its own node and
// that its result carries the noise between them.
func TestRunSamplesNoise(t *testing.T) {
	for _, tc := range []struct {
		platform vmbenchv1.PlatformType
		others   bool
	}{{vmbenchv1.PlatformContainer, true}, {vmbenchv1.PlatformVM, false}} {
		t.Run(string(tc.platform), func(t *testing.T) {
			r, exec, msgs := testRunner(t)
			r.SampleNoise = true
			plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}, Timeout: dur(time.Minute)})
			plan.PlatformType = tc.platform
			samples := map[string]int{}
			exec.respond = func(node string, argv []string) (reply, bool) {
				if argv[0] != "sh" {
					return reply{}, false
				}
				when := "before"
				if samples[node]%2 == 1 {
					when = "after"
				}
				samples[node]++
				out := fixture(t, "noise/proc-stat-"+when+".txt")
				if strings.Contains(argv[2], cgroupMarker) {
					out += cgroupMarker + "/sys/fs/cgroup/cpu.stat\n" + fixture(t, "noise/cgroup-v2/"+when+"/cpu.stat")
				}
				return reply{stdout: out}, true
			}
			if err := r.Run(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			for _, n := range plan.Nodes {
				if samples[n.Name] != 2 {
					t.Errorf("%s sampled %d times, want 2", n.Name, samples[n.Name])
				}
			}
			results := 0
			for _, m := range *msgs {
				if m.Kind != runplan.KindResult {
					continue
				}
				results++
				if m.Noise == nil || m.Noise.BusyPercent != 55 || m.Noise.StealPercent != 5 {
					t.Fatalf("%s: noise %+v", m.Node, m.Noise)
				}
				if (m.Noise.OthersPercent != nil) != tc.others {
					t.Errorf("%s: others %v, want measured=%v", m.Node, m.Noise.OthersPercent, tc.others)
				}
			}
			if results != 3 {
				t.Errorf("%d results, want 3", results)
			}
		})
	}
}

// TestRunWithoutNoiseWhenSamplingFails checks that a node whose counters cannot be read still
// reports its measurement, only without noise.
func TestRunWithoutNoiseWhenSamplingFails(t *testing.T) {
	r, exec, msgs := testRunner(t)
	r.SampleNoise = true
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "sh" {
			return reply{stdout: "garbage"}, true
		}
		return reply{}, false
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}, Timeout: dur(time.Minute)})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	for _, m := range *msgs {
		if m.Kind == runplan.KindResult && (m.Noise != nil || m.Error != "" || len(m.Metrics) == 0) {
			t.Errorf("%s: noise %+v, error %q, %d metrics", m.Node, m.Noise, m.Error, len(m.Metrics))
		}
	}
}
