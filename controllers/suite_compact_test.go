package controllers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

func TestCompactRun(t *testing.T) {
	long := strings.Repeat("e", 300)
	tests := []struct {
		name string
		run  vmbenchv1.RunStatus
		want vmbenchv1.RunStatus
	}{
		{
			name: "a VM run keeps its noisiest node, slowest boot, unpinned nodes and the start of its message",
			run: vmbenchv1.RunStatus{Name: "s-vm-1", Phase: vmbenchv1.RunFailed, Message: long,
				Noise: []vmbenchv1.NodeNoise{{Node: "master", MaxPercent: 3.5, Samples: 4}, {Node: "node01", MaxPercent: 12.25, Samples: 4}},
				CPUs: []vmbenchv1.NodeCPUs{{Node: "master", Allowed: "0-1", Online: 2, Pinned: true},
					{Node: "node01", Allowed: "0-1", Online: 2}, {Node: "node02", Allowed: "0-1", Online: 2}},
				BootSeconds: []vmbenchv1.NodeTiming{{Node: "master", Seconds: 20}, {Node: "node01", Seconds: 31.5}}},
			want: vmbenchv1.RunStatus{Name: "s-vm-1", Phase: vmbenchv1.RunFailed, Message: strings.Repeat("e", 253) + "...",
				Compacted: &vmbenchv1.RunSummary{Nodes: 3, MaxNoisePercent: ptrTo(12.25), MaxBootSeconds: ptrTo(31.5),
					Unpinned: []string{"node01", "node02"}}},
		},
		{
			name: "a pinned container run without noise keeps only its node count",
			run: vmbenchv1.RunStatus{Name: "s-container-1", Phase: vmbenchv1.RunSucceeded,
				CPUs: []vmbenchv1.NodeCPUs{{Node: "master", Allowed: "2-3", Online: 8, Pinned: true}, {Node: "node01", Allowed: "2-3", Online: 8, Pinned: true}}},
			want: vmbenchv1.RunStatus{Name: "s-container-1", Phase: vmbenchv1.RunSucceeded, Compacted: &vmbenchv1.RunSummary{Nodes: 2}},
		},
		{
			name: "a summary already there is merged into",
			run: vmbenchv1.RunStatus{Name: "s-vm-2", Phase: vmbenchv1.RunSucceeded, Message: "short",
				Compacted: &vmbenchv1.RunSummary{Nodes: 2, MaxNoisePercent: ptrTo(50), Unpinned: []string{"master"}},
				Noise:     []vmbenchv1.NodeNoise{{Node: "node01", MaxPercent: 10}},
				CPUs:      []vmbenchv1.NodeCPUs{{Node: "master"}, {Node: "node01"}}},
			want: vmbenchv1.RunStatus{Name: "s-vm-2", Phase: vmbenchv1.RunSucceeded, Message: "short",
				Compacted: &vmbenchv1.RunSummary{Nodes: 2, MaxNoisePercent: ptrTo(50), Unpinned: []string{"master", "node01"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := tt.run
			compactRun(&run)
			if diff := cmp.Diff(tt.want, run); diff != "" {
				t.Errorf("compactRun mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// fitStatus compacts finished runs oldest first, only as many as the budget needs, and drops
// samples only when every finished run is compacted.
func TestFitStatusCompactsOldestRunsFirst(t *testing.T) {
	done := &metav1.Time{Time: finishNow}
	withLists := func(name string) vmbenchv1.RunStatus {
		return vmbenchv1.RunStatus{Name: name, Platform: "vm", Phase: vmbenchv1.RunFailed, CompletionTime: done,
			Message: strings.Repeat("m", 1024),
			Noise:   []vmbenchv1.NodeNoise{{Node: "master", MaxPercent: 1}, {Node: "node01", MaxPercent: 2}},
			CPUs: []vmbenchv1.NodeCPUs{{Node: "master", Allowed: strings.Repeat("0,", 30), Online: 64},
				{Node: "node01", Allowed: strings.Repeat("0,", 30), Online: 64}},
			BootSeconds: []vmbenchv1.NodeTiming{{Node: "master", Seconds: 30}, {Node: "node01", Seconds: 40}}}
	}
	base := func() *vmbenchv1.BenchmarkSuiteStatus {
		running := withLists("s-vm-5") // a running run never has its lists yet; these show it is left alone
		running.CompletionTime, running.Phase = nil, vmbenchv1.RunRunning
		return &vmbenchv1.BenchmarkSuiteStatus{
			Runs: []vmbenchv1.RunStatus{withLists("s-vm-1"), withLists("s-vm-2"),
				{Name: "s-vm-3", Platform: "vm", Phase: vmbenchv1.RunFailed, CompletionTime: done, Message: "never started"},
				withLists("s-vm-4"), running},
			Results: []vmbenchv1.BenchmarkResult{{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{filledMetric("e", 50)}}},
		}
	}
	// expect is st once the named runs are compacted and, with samples, the samples dropped.
	expect := func(st *vmbenchv1.BenchmarkSuiteStatus, dropSamples bool, runs ...int) *vmbenchv1.BenchmarkSuiteStatus {
		want := st.DeepCopy()
		for _, i := range runs {
			want.Runs[i].Noise, want.Runs[i].CPUs, want.Runs[i].BootSeconds = nil, nil, nil
			want.Runs[i].Message = strings.Repeat("m", 253) + "..."
			want.Runs[i].Compacted = &vmbenchv1.RunSummary{Nodes: 2, MaxNoisePercent: ptrTo(2), MaxBootSeconds: ptrTo(40),
				Unpinned: []string{"master", "node01"}}
		}
		if dropSamples {
			want.Results[0].Metrics[0].Samples = nil
		}
		return want
	}
	// pad adds a warning so that the status is target bytes once it looks like want.
	pad := func(st, want *vmbenchv1.BenchmarkSuiteStatus, target int) {
		probe := want.DeepCopy()
		probe.Warnings = []string{""}
		k := target - jsonSize(t, probe)
		if k < 0 {
			t.Fatalf("status is %d bytes without padding, more than the target %d", target-k, target)
		}
		st.Warnings = []string{strings.Repeat("w", k)}
	}
	tests := []struct {
		name        string
		compacted   []int
		dropSamples bool
		// over is how many bytes above the budget the status is once it looks as wanted.
		over int
	}{
		{name: "a status within its budget is left alone", over: -1},
		{name: "the oldest run is compacted first, and enough", compacted: []int{0}},
		{name: "one byte more compacts the next finished run with lists, past one without", compacted: []int{0, 1}, over: 1},
		{name: "samples go only once every finished run is compacted", compacted: []int{0, 1, 3}, dropSamples: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := base()
			// The wanted status for padding is one step short where over is 1: it pads the state
			// before the last wanted compaction one byte over the budget.
			var want *vmbenchv1.BenchmarkSuiteStatus
			switch {
			case tt.over < 0:
				want = st.DeepCopy()
				pad(st, want, statusBudget)
			case tt.over > 0:
				pad(st, expect(st, tt.dropSamples, tt.compacted[:len(tt.compacted)-1]...), statusBudget+tt.over)
			case tt.dropSamples:
				// Compacting every run leaves it one byte over; dropping the samples brings it under.
				pad(st, expect(st, false, tt.compacted...), statusBudget+1)
			default:
				pad(st, expect(st, false, tt.compacted...), statusBudget)
			}
			want = expect(st, tt.dropSamples, tt.compacted...)
			changed := fitStatus(st)
			if changed != (len(tt.compacted) > 0) {
				t.Errorf("fitStatus() = %t, want %t", changed, len(tt.compacted) > 0)
			}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("status mismatch (-want +got):\n%s", diff)
			}
			if size := jsonSize(t, st); size > statusBudget {
				t.Errorf("status is %d bytes after fitStatus, budget %d", size, statusBudget)
			}
			w := warnings(vmbenchv1.BenchmarkSuiteSpec{}, st, "")
			saysCompacted := slicesContainsSubstring(w, "runs keep only a summary of their per-node noise")
			if saysCompacted != (len(tt.compacted) > 0) {
				t.Errorf("warnings %q: saying runs were compacted is %t, want %t", w, saysCompacted, len(tt.compacted) > 0)
			}
			if len(tt.compacted) > 0 && !slicesContainsSubstring(w, fmt.Sprintf("%d of 5 runs", len(tt.compacted))) {
				t.Errorf("warnings %q do not count %d of 5 runs", w, len(tt.compacted))
			}
		})
	}
}

// A compacted run still counts in the pinning warning, with the CPU list of a run that has one.
func TestPinningWarningCountsCompactedRuns(t *testing.T) {
	spec := vmbenchv1.BenchmarkSuiteSpec{Cluster: vmbenchv1.ClusterShape{DedicatedCPUs: true}}
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{
		{Name: "s-container-1", Compacted: &vmbenchv1.RunSummary{Nodes: 2, Unpinned: []string{"node01"}}},
		{Name: "s-container-2", CPUs: []vmbenchv1.NodeCPUs{{Node: "master", Allowed: "2-3", Online: 8, Pinned: true},
			{Node: "node02", Allowed: "0-7", Online: 8}}},
	}}
	w := pinningWarning(spec, st)
	if want := "2 run nodes were not pinned (s-container-1/node01, s-container-2/node02): run s-container-2 node node02 could run on CPUs 0-7 of 8 online"; !strings.Contains(w, want) {
		t.Errorf("warning %q does not say %q", w, want)
	}
	st.Runs[1] = vmbenchv1.RunStatus{Name: "s-container-2", Compacted: &vmbenchv1.RunSummary{Nodes: 2}}
	w = pinningWarning(spec, st)
	if want := "1 run nodes were not pinned (s-container-1/node01): run s-container-1 node node01 was not pinned (its CPU list was compacted)"; !strings.Contains(w, want) {
		t.Errorf("warning %q does not say %q", w, want)
	}
	st.Runs[0].Compacted.Unpinned = nil
	if w := pinningWarning(spec, st); w != "" {
		t.Errorf("every compacted node was pinned, yet warned: %q", w)
	}
	if w := warnings(spec, st, platform.VMNetworkBridge); !slicesContainsSubstring(w, "2 of 2 runs keep only a summary") {
		t.Errorf("warnings %q do not say that 2 of 2 runs were compacted", w)
	}
}

// filledMetric is a metric with n samples and their statistics.
func filledMetric(name string, n int) vmbenchv1.MetricSummary {
	m := vmbenchv1.MetricSummary{Name: name, Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter}
	for i := 0; i < n; i++ {
		v := 1000 + float64(i*i%37) + 0.125*float64(i)
		m.Samples = append(m.Samples, sample(int32(i/8+1), fmt.Sprintf("node%02d", i%8), v))
		m.N, m.Mean, m.StdDev = combine(m.N, m.Mean, m.StdDev, v)
	}
	return m
}

func slicesContainsSubstring(list []string, part string) bool {
	for _, s := range list {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}
