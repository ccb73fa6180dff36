package suite

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/runplan"
)

func noiseOf(node string, busy, steal float64, others *float64) *runplan.Noise {
	return &runplan.Noise{Node: node, BusyPercent: busy, StealPercent: steal, OthersPercent: others, CPUs: 8}
}

func pct(v float64) *float64 { return &v }

// The runner's frames carry the noise of each execution; the run's status keeps it per node, and
// every sample keeps its own.
func TestFinishRunStoresNoiseFromFrames(t *testing.T) {
	suite := keyedSuite()
	keys := mustFrameKeys(t, suite, "demo-vm-2")
	msgs := runOf("demo-vm-2")
	for i := range msgs {
		if msgs[i].Kind != runplan.KindResult {
			continue
		}
		switch msgs[i].Node {
		case "master":
			msgs[i].Noise = noiseOf("master", 60, 1, pct(12))
		case "node01":
			msgs[i].Noise = noiseOf("node01", 50, 3, pct(2))
		case "master-node01":
			// ping is sampled on its sending side.
			msgs[i].Noise = noiseOf("master", 30, 5, pct(4))
		}
	}
	report := decodeReport(bytes.NewReader(runnerOutput(t, keys.tokens["demo-vm-2"], msgs...)), keys)
	if report.FrameErr != nil || len(report.Results) != 3 {
		t.Fatalf("decoded %d results, frame error %v", len(report.Results), report.FrameErr)
	}
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-vm-2", Platform: "container", Repetition: 2, StartTime: &metav1.Time{Time: finishStart}}
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, finishBenchmarks(), summary.RunCompletion{
		Report: report, Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	want := []vmbenchv1.NodeNoise{
		{Node: "master", OthersPercent: pct(8), StealPercent: 3, MaxPercent: 13, Samples: 2},
		{Node: "node01", OthersPercent: pct(2), StealPercent: 3, MaxPercent: 5, Samples: 1},
	}
	if diff := cmp.Diff(want, run.Noise); diff != "" {
		t.Errorf("run noise (-want +got):\n%s", diff)
	}
	noiseBySample := map[string]float64{}
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			for _, s := range m.Samples {
				if s.Noise == nil {
					t.Fatalf("%s %s on %s: no noise", r.Benchmark, m.Name, s.Node)
				}
				noiseBySample[s.Node] = *s.Noise
			}
		}
	}
	if diff := cmp.Diff(map[string]float64{"master": 13, "node01": 5, "master-node01": 9}, noiseBySample); diff != "" {
		t.Errorf("sample noise (-want +got):\n%s", diff)
	}
}

func TestNodeNoiseOfVMs(t *testing.T) {
	got := summary.NodeNoise([]runplan.Message{
		{Kind: runplan.KindResult, Node: "master", Noise: noiseOf("master", 90, 4, nil)},
		{Kind: runplan.KindResult, Node: "master", Variant: "bs1K", Noise: noiseOf("master", 90, 10, nil)},
		{Kind: runplan.KindResult, Node: "node01"}, // not sampled
	})
	want := []vmbenchv1.NodeNoise{{Node: "master", StealPercent: 7, MaxPercent: 10, Samples: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNodeCPUsAndPinningWarning(t *testing.T) {
	shape := vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, DedicatedCPUs: true}
	sets := map[string]runplan.CPUSet{
		"master": {Allowed: "2-3", Online: 8}, // pinned by the static CPU manager
		"node01": {Allowed: "0-7", Online: 8}, // the shared pool: the kubelet ignored the request
		"node02": {Allowed: "0-1", Online: 2}, // as many CPUs as the node has: nothing to tell it from the pool
	}
	got := summary.NodeCPUs(sets, vmbenchv1.PlatformContainer, shape, false)
	want := []vmbenchv1.NodeCPUs{
		{Node: "master", Allowed: "2-3", Online: 8, Pinned: true},
		{Node: "node01", Allowed: "0-7", Online: 8},
		{Node: "node02", Allowed: "0-1", Online: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if summary.Pinned(runplan.CPUSet{Allowed: "2-4", Online: 8}, 2) || summary.Pinned(runplan.CPUSet{Allowed: "x", Online: 8}, 2) {
		t.Error("three CPUs, or an unreadable list, taken for two pinned CPUs")
	}

	spec := vmbenchv1.BenchmarkSuiteSpec{Cluster: shape}
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{{Name: "demo-container-1", CPUs: got}}}
	w := summary.PinningWarning(spec, st)
	for _, part := range []string{"2 run nodes", "demo-container-1/node01", "demo-container-1/node02", "CPUs 0-7 of 8 online", "--cpu-manager-policy=static", "CPUManager"} {
		if !strings.Contains(w, part) {
			t.Errorf("warning %q does not say %q", w, part)
		}
	}
	if !contains(warnings(spec, st, platform.VMNetworkBridge), w) {
		t.Errorf("the suite's warnings lack %q", w)
	}
	spec.Cluster.DedicatedCPUs = false
	if w := summary.PinningWarning(spec, st); w != "" {
		t.Errorf("not asked for, yet warned: %q", w)
	}

	// A VM guest sees only its vCPUs; its pinning is KubeVirt's dedicatedCpuPlacement.
	vm := summary.NodeCPUs(map[string]runplan.CPUSet{"master": {Allowed: "0-1", Online: 2}}, vmbenchv1.PlatformVM, shape, true)
	if len(vm) != 1 || !vm[0].Pinned {
		t.Errorf("VM with dedicatedCPUs: %+v", vm)
	}
	shape.DedicatedCPUs = false
	if vm := summary.NodeCPUs(map[string]runplan.CPUSet{"master": {Allowed: "0-1", Online: 2}}, vmbenchv1.PlatformVM, shape, false); vm[0].Pinned {
		t.Errorf("VM without dedicatedCPUs counted as pinned: %+v", vm)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
