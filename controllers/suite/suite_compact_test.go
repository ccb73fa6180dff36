package suite

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

func TestCompactRun(t *testing.T) {
	long := strings.Repeat("e", 300)
	tests := []struct {
		name string
		run  vmbenchv1.RunStatus
		want vmbenchv1.RunStatus
	}{
		{
			name: "a VM run keeps its noisiest node, slowest boot, unpinned nodes, count of migrations and the start of its message",
			run: vmbenchv1.RunStatus{Name: "s-vm-1", Phase: vmbenchv1.RunFailed, Message: long,
				Noise: []vmbenchv1.NodeNoise{{Node: "master", MaxPercent: 3.5, Samples: 4}, {Node: "node01", MaxPercent: 12.25, Samples: 4}},
				CPUs: []vmbenchv1.NodeCPUs{{Node: "master", Allowed: "0-1", Online: 2, Pinned: true},
					{Node: "node01", Allowed: "0-1", Online: 2}, {Node: "node02", Allowed: "0-1", Online: 2}},
				BootSeconds: []vmbenchv1.NodeTiming{{Node: "master", Seconds: 20}, {Node: "node01", Seconds: 31.5}},
				Migrations: []vmbenchv1.RunMigration{{VMI: "s-vm-1-master", Outcome: vmbenchv1.MigrationCompleted},
					{VMI: "s-vm-1-node01", Outcome: vmbenchv1.MigrationAborted}, {VMI: "s-vm-1-node01", Outcome: vmbenchv1.MigrationFailed}}},
			want: vmbenchv1.RunStatus{Name: "s-vm-1", Phase: vmbenchv1.RunFailed, Message: strings.Repeat("e", 253) + "...",
				Compacted: &vmbenchv1.RunSummary{Nodes: 3, MaxNoisePercent: summary.PtrTo(12.25), MaxBootSeconds: summary.PtrTo(31.5),
					Unpinned: []string{"node01", "node02"}, Migrations: 3, MigrationsNotCompleted: 2}},
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
				Compacted: &vmbenchv1.RunSummary{Nodes: 2, MaxNoisePercent: summary.PtrTo(50), Unpinned: []string{"master"}},
				Noise:     []vmbenchv1.NodeNoise{{Node: "node01", MaxPercent: 10}},
				CPUs:      []vmbenchv1.NodeCPUs{{Node: "master"}, {Node: "node01"}}},
			want: vmbenchv1.RunStatus{Name: "s-vm-2", Phase: vmbenchv1.RunSucceeded, Message: "short",
				Compacted: &vmbenchv1.RunSummary{Nodes: 2, MaxNoisePercent: summary.PtrTo(50), Unpinned: []string{"master", "node01"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := tt.run
			summary.CompactRun(&run)
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
			want.Runs[i].Compacted = &vmbenchv1.RunSummary{Nodes: 2, MaxNoisePercent: summary.PtrTo(2), MaxBootSeconds: summary.PtrTo(40),
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
				pad(st, want, summary.StatusBudget)
			case tt.over > 0:
				pad(st, expect(st, tt.dropSamples, tt.compacted[:len(tt.compacted)-1]...), summary.StatusBudget+tt.over)
			case tt.dropSamples:
				// Compacting every run leaves it one byte over; dropping the samples brings it under.
				pad(st, expect(st, false, tt.compacted...), summary.StatusBudget+1)
			default:
				pad(st, expect(st, false, tt.compacted...), summary.StatusBudget)
			}
			want = expect(st, tt.dropSamples, tt.compacted...)
			changed := summary.FitStatus(st)
			if changed != (len(tt.compacted) > 0) {
				t.Errorf("fitStatus() = %t, want %t", changed, len(tt.compacted) > 0)
			}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("status mismatch (-want +got):\n%s", diff)
			}
			if size := jsonSize(t, st); size > summary.StatusBudget {
				t.Errorf("status is %d bytes after fitStatus, budget %d", size, summary.StatusBudget)
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
	w := summary.PinningWarning(spec, st)
	if want := "2 run nodes were not pinned (s-container-1/node01, s-container-2/node02): run s-container-2 node node02 could run on CPUs 0-7 of 8 online"; !strings.Contains(w, want) {
		t.Errorf("warning %q does not say %q", w, want)
	}
	st.Runs[1] = vmbenchv1.RunStatus{Name: "s-container-2", Compacted: &vmbenchv1.RunSummary{Nodes: 2}}
	w = summary.PinningWarning(spec, st)
	if want := "1 run nodes were not pinned (s-container-1/node01): run s-container-1 node node01 was not pinned (its CPU list was compacted)"; !strings.Contains(w, want) {
		t.Errorf("warning %q does not say %q", w, want)
	}
	st.Runs[0].Compacted.Unpinned = nil
	if w := summary.PinningWarning(spec, st); w != "" {
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
		m.N, m.Mean, m.StdDev = summary.Combine(m.N, m.Mean, m.StdDev, v)
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

// jsonSize is the size of v as JSON, as the API server stores it.
func jsonSize(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

type metricStats struct {
	N            int32
	Mean, StdDev float64
	Samples      int
}

// statsOf is every metric's statistics and sample count, by benchmark, platform and metric.
func statsOf(st *vmbenchv1.BenchmarkSuiteStatus) map[string]metricStats {
	out := map[string]metricStats{}
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			out[r.Benchmark+"/"+r.Platform+"/"+m.Name] = metricStats{m.N, m.Mean, m.StdDev, len(m.Samples)}
		}
	}
	return out
}

func TestFitStatus(t *testing.T) {
	// filled is a metric with n samples.
	filled := func(name string, n int) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter}
		for i := 0; i < n; i++ {
			v := 1000 + float64(i*i%37) + 0.125*float64(i)
			m.Samples = append(m.Samples, sample(int32(i/8+1), fmt.Sprintf("node%02d", i%8), v))
			m.N, m.Mean, m.StdDev = summary.Combine(m.N, m.Mean, m.StdDev, v)
		}
		return m
	}
	// The biggest metric sits in the middle, so that neither the first nor the last is picked by luck.
	base := func() *vmbenchv1.BenchmarkSuiteStatus {
		return &vmbenchv1.BenchmarkSuiteStatus{Results: []vmbenchv1.BenchmarkResult{
			{Benchmark: "a", Platform: "container", Metrics: []vmbenchv1.MetricSummary{filled("small", 10), filled("mid", 50)}},
			{Benchmark: "b", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{filled("tiny", 1), filled("big", 100)}},
			{Benchmark: "c", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{filled("mid2", 40)}},
		}}
	}
	// drop removes the samples of the named metrics, as fitStatus does.
	drop := func(st *vmbenchv1.BenchmarkSuiteStatus, names ...string) {
		for i := range st.Results {
			for j := range st.Results[i].Metrics {
				if slices.Contains(names, st.Results[i].Metrics[j].Name) {
					st.Results[i].Metrics[j].Samples = nil
				}
			}
		}
	}
	// padTo pads st with a warning so that, once the named metrics lost their samples, it is target
	// bytes of JSON.
	padTo := func(st *vmbenchv1.BenchmarkSuiteStatus, target int, without ...string) {
		probe := st.DeepCopy()
		drop(probe, without...)
		probe.Warnings = []string{""}
		k := target - jsonSize(t, probe)
		if k < 0 {
			t.Fatalf("status is %d bytes without padding, more than the target %d", target-k, target)
		}
		st.Warnings = []string{strings.Repeat("w", k)}
	}
	tests := []struct {
		name        string
		status      func() *vmbenchv1.BenchmarkSuiteStatus
		wantDropped []string
		// wantOver is true when even the status without any sample is above the budget.
		wantOver bool
	}{
		{name: "a small status is left alone", status: base},
		{name: "exactly at the budget is left alone", status: func() *vmbenchv1.BenchmarkSuiteStatus {
			st := base()
			padTo(st, summary.StatusBudget)
			return st
		}},
		{name: "one byte over drops the biggest metric's samples only", wantDropped: []string{"big"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				padTo(st, summary.StatusBudget+1)
				return st
			}},
		{name: "still over after the biggest drops the next biggest", wantDropped: []string{"big", "mid"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				padTo(st, summary.StatusBudget+1, "big")
				return st
			}},
		{name: "fits once the biggest is gone", wantDropped: []string{"big"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				padTo(st, summary.StatusBudget, "big")
				return st
			}},
		{name: "drops every sample and stops when the statistics alone are too big", wantOver: true,
			wantDropped: []string{"small", "mid", "tiny", "big", "mid2"},
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				st.Warnings = []string{strings.Repeat("w", summary.StatusBudget)}
				return st
			}},
		{name: "too big without any sample drops nothing", wantOver: true,
			status: func() *vmbenchv1.BenchmarkSuiteStatus {
				st := base()
				drop(st, "small", "mid", "tiny", "big", "mid2")
				st.Warnings = []string{strings.Repeat("w", summary.StatusBudget)}
				return st
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := tt.status()
			want := st.DeepCopy()
			drop(want, tt.wantDropped...)
			before := statsOf(st)

			dropped := summary.FitStatus(st)
			if dropped != (len(tt.wantDropped) > 0) {
				t.Errorf("fitStatus() = %t, want %t", dropped, len(tt.wantDropped) > 0)
			}
			if diff := cmp.Diff(want, st); diff != "" {
				t.Errorf("status mismatch (-want +got):\n%s", diff)
			}
			if size := jsonSize(t, st); (size > summary.StatusBudget) != tt.wantOver {
				t.Errorf("status is %d bytes after fitStatus, budget %d", size, summary.StatusBudget)
			}
			// Statistics are never touched.
			after := statsOf(st)
			for k, b := range before {
				a := after[k]
				if a.N != b.N || a.Mean != b.Mean || a.StdDev != b.StdDev {
					t.Errorf("%s statistics changed from %+v to %+v", k, b, a)
				}
			}
		})
	}
}

// The API's maxima the worst case below fills. TestWorstCaseLimitsAreTheCRDs holds them, and the
// controller's own caps on metrics, against the CRD's schema.
const (
	worstCaseBenchmarks  = 12
	worstCasePlatforms   = 4
	worstCaseRepetitions = 30
	worstCaseNodes       = 8
	// worstCaseNameLength is the longest benchmark name: the worst case names each benchmark so.
	worstCaseNameLength = 24
)

// TestWorstCaseLimitsAreTheCRDs reads the maxima from the CRD the chart installs, so that a limit
// raised in a +kubebuilder marker makes the worst case below grow with it, or fails here.
func TestWorstCaseLimitsAreTheCRDs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "vmbench.io_benchmarksuites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		t.Fatal(err)
	}
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	at := func(path ...string) apiextensionsv1.JSONSchemaProps {
		s := *root
		for _, p := range path {
			if p == "[]" {
				s = *s.Items.Schema
				continue
			}
			next, ok := s.Properties[p]
			if !ok {
				t.Fatalf("the CRD's schema has no %v", path)
			}
			s = next
		}
		return s
	}
	intOf := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	floatOf := func(p *float64) int64 {
		if p == nil {
			return -1
		}
		return int64(*p)
	}
	for _, c := range []struct {
		what      string
		crd, want int64
	}{
		{"spec.benchmarks maxItems", intOf(at("spec", "benchmarks").MaxItems), worstCaseBenchmarks},
		{"spec.benchmarks[].name maxLength", intOf(at("spec", "benchmarks", "[]", "name").MaxLength), worstCaseNameLength},
		{"spec.platforms maxItems", intOf(at("spec", "platforms").MaxItems), worstCasePlatforms},
		{"spec.platforms[].name maxLength", intOf(at("spec", "platforms", "[]", "name").MaxLength), vmbenchv1.MaxPlatformNameLength},
		{"spec.repetitions maximum", floatOf(at("spec", "repetitions").Maximum), worstCaseRepetitions},
		{"spec.precision.maxRepetitions maximum", floatOf(at("spec", "precision", "maxRepetitions").Maximum), worstCaseRepetitions},
		{"spec.cluster.nodes maximum", floatOf(at("spec", "cluster", "nodes").Maximum), worstCaseNodes},
		{"status.results[].metrics maxItems", intOf(at("status", "results", "[]", "metrics").MaxItems), summary.MaxMetricsPerEntry},
		{"status.results[].metrics[].name maxLength", intOf(at("status", "results", "[]", "metrics", "[]", "name").MaxLength), summary.MaxMetricName},
		{"status.migrationSummaries maxItems", intOf(at("status", "migrationSummaries").MaxItems), worstCaseBenchmarks * worstCasePlatforms},
		{"status.migrationSummaries[].benchmark maxLength", intOf(at("status", "migrationSummaries", "[]", "benchmark").MaxLength), worstCaseNameLength},
		{"status.migrationSummaries[].platform maxLength", intOf(at("status", "migrationSummaries", "[]", "platform").MaxLength), vmbenchv1.MaxPlatformNameLength},
		{"status.migrationSummaries[].summary maxLength", intOf(at("status", "migrationSummaries", "[]", "summary").MaxLength), vmbenchv1.MaxMigrationSummaryLength},
	} {
		if c.crd != c.want {
			t.Errorf("%s is %d in the CRD, the worst case and the controller use %d", c.what, c.crd, c.want)
		}
	}
}

// TestWorstCaseStatusSize fills a suite's status at every API maximum, as the reconciler does, and
// checks that fitStatus brings it within its budget and the object stays well below etcd's limit of
// 1.5 MiB, without losing any statistic: runs are compacted oldest first, then samples are dropped.
//
// It does so twice: as the API's maxima can be reached together, and with status.migrationSummaries
// at its longest besides (48 lines of 512 characters), which no suite reaches with the rest: a
// migration benchmark's result holds its handful of figures, not the 47 metrics of HPCC and an HPL
// sweep that each result here holds, and it needs every platform to be a VM. The second holds the
// budget, the object's size and the API server's schema against the field; only the first can show
// that samples still fit (with the summaries, the statistics alone take 99.1% of the budget).
func TestWorstCaseStatusSize(t *testing.T) {
	t.Run("every maximum together", func(t *testing.T) { worstCaseStatusSize(t, false) })
	t.Run("with the migration summaries at their longest", func(t *testing.T) { worstCaseStatusSize(t, true) })
}

func worstCaseStatusSize(t *testing.T, migrationSummaries bool) {
	const (
		maxBenchmarks  = worstCaseBenchmarks
		maxPlatforms   = worstCasePlatforms
		maxRepetitions = worstCaseRepetitions
		maxNodes       = worstCaseNodes
		// HPCC's 31 figures and an HPL sweep of the most points the API admits. At the cap of 48
		// the statistics alone take 99.4% of the budget and no sample fits.
		metricsPerRes = 31 + vmbenchv1.MaxHPLPoints
		objectLimit   = 1 << 20
	)
	rng := rand.New(rand.NewPCG(1, 2))
	suite := testSuite()
	suite.Name = strings.Repeat("s", vmbenchv1.MaxSuiteNameLength)
	suite.Spec.Repetitions = maxRepetitions
	suite.Spec.Cluster.Nodes = maxNodes
	suite.Spec.Cluster.CPURequest = quantity("1")
	suite.Spec.Platforms = nil
	for i := 0; i < maxPlatforms; i++ {
		typ := vmbenchv1.PlatformVM
		if i == 0 {
			typ = vmbenchv1.PlatformContainer
		}
		name := fmt.Sprintf("platform%04d", i)
		if len(name) != vmbenchv1.MaxPlatformNameLength {
			t.Fatalf("platform name %q is not %d characters", name, vmbenchv1.MaxPlatformNameLength)
		}
		p := vmbenchv1.Platform{Name: name, Type: typ}
		if typ == vmbenchv1.PlatformVM {
			// Every setting the requests below allow, at its longest value.
			p.VM = &vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingBridge, DiskBus: vmbenchv1.VMDiskBusVirtio,
				DiskCache: vmbenchv1.VMDiskCacheWritethrough, Hugepages: vmbenchv1.VMHugepages1Gi, IOThreads: vmbenchv1.VMIOThreadsShared, DedicatedIOThread: true,
				CPUModel: strings.Repeat("m", 64), NetworkMultiqueue: true, EvictionStrategy: "LiveMigrateIfPossible"}
		}
		suite.Spec.Platforms = append(suite.Spec.Platforms, p)
	}
	suite.Spec.Baseline = suite.Spec.Platforms[0].Name
	suite.Spec.Placement = vmbenchv1.Placement{NodeSelector: map[string]vmbenchv1.LabelValue{"vmbench.io/pool": "bench"},
		Tolerations: []vmbenchv1.Toleration{{Key: "vmbench.io/dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}}
	suite.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs-client", Size: quantity("4Gi")}
	suite.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 0.5, MaxRepetitions: maxRepetitions}
	types := []vmbenchv1.BenchmarkType{vmbenchv1.BenchmarkSysbenchCPU, vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkFio,
		vmbenchv1.BenchmarkPing, vmbenchv1.BenchmarkHPCC, vmbenchv1.BenchmarkSysbenchMemory, vmbenchv1.BenchmarkStressNGCPU,
		vmbenchv1.BenchmarkStressNGVM, vmbenchv1.BenchmarkIozone}
	suite.Spec.Benchmarks = nil
	for i := 0; i < maxBenchmarks; i++ {
		name := fmt.Sprintf("benchmark-%02d-%s", i, strings.Repeat("x", worstCaseNameLength-13)) // the API maximum
		b := vmbenchv1.Benchmark{Name: name, Type: types[i%len(types)]}
		if b.Type == vmbenchv1.BenchmarkIozone {
			// Every target: each run records what backed the Shared one.
			b.Iozone = &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageRootFS, vmbenchv1.StorageShared}}
		}
		suite.Spec.Benchmarks = append(suite.Spec.Benchmarks, b)
		suite.Spec.Precision.Metrics = append(suite.Spec.Precision.Metrics, name)
	}
	// kubectl apply keeps the applied spec in an annotation, and the API server stores the defaults.
	applied, err := json.Marshal(suite)
	if err != nil {
		t.Fatal(err)
	}
	suite.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}
	benchmarks := DefaultedBenchmarks(suite)
	suite.Spec.Benchmarks = benchmarks
	if err := validateSpec(suite, benchmarks); err != nil {
		t.Fatalf("the worst-case spec is invalid: %v", err)
	}

	// Network benchmarks report per pair of nodes, the others per node.
	nodes := platform.NodeNames(maxNodes)
	var pairs []string
	for _, n := range nodes[1:] {
		pairs = append(pairs, "master-"+n, n+"-master")
	}
	for i := 1; i+1 < len(nodes); i++ {
		pairs = append(pairs, nodes[i]+"-"+nodes[i+1])
	}
	metricNames := make([]string, metricsPerRes)
	for i := range metricNames {
		metricNames[i] = fmt.Sprintf("%s_%02d", strings.Repeat("m", summary.MaxMetricName-3), i) // the API maximum
	}

	// Every execution keeps a table, and loses one too, so that both counts and the warning that
	// names every benchmark on every platform take their room.
	tablesOfEveryExecution := map[string]int32{}
	for _, b := range benchmarks {
		tablesOfEveryExecution[b.Name] = int32(len(pairs))
	}

	st := &suite.Status
	syncRuns(st, plannedRuns(suite))
	if len(st.Runs) != maxPlatforms*maxRepetitions {
		t.Fatalf("planned %d runs, want %d", len(st.Runs), maxPlatforms*maxRepetitions)
	}
	longMessage := strings.Repeat("e", 2000)
	for i := range st.Runs {
		run := &st.Runs[i]
		run.StartTime = &metav1.Time{Time: finishStart}
		// What the run's start recorded while it went on: every phase, and the launcher's overhead.
		phase := 123.456789
		run.StartupSeconds = &vmbenchv1.RunStartup{PodsScheduled: &phase, SandboxesReady: &phase, ContainersStarted: &phase,
			VMIScheduled: &phase, VMIRunning: &phase, RunnerReady: &phase}
		run.LauncherOverhead = &vmbenchv1.ResourceOverhead{CPU: *quantity("1234567m"), Memory: *quantity("123456789Ki")}
		run.Network = string(platform.VMNetworkMasquerade)
		ready := map[string]time.Time{}
		created := map[string]time.Time{}
		cpuSets := map[string]runplan.CPUSet{}
		for _, n := range nodes {
			cpuSets[n] = runplan.CPUSet{Allowed: strings.Repeat("0-1,", 40), Online: 256}
			created[n] = finishStart
			ready[n] = finishStart.Add(time.Duration(rng.Int64N(int64(time.Minute))))
		}
		var msgs []runplan.Message
		for bi, b := range benchmarks {
			where := nodes
			if b.Type == vmbenchv1.BenchmarkIperf3 || b.Type == vmbenchv1.BenchmarkPing {
				where = pairs
			}
			for _, node := range where {
				ms := make([]results.Metric, metricsPerRes)
				for mi, name := range metricNames {
					dir := results.HigherIsBetter
					if (bi+mi)%3 == 0 {
						dir = results.LowerIsBetter
					}
					ms[mi] = results.Metric{Name: name, Value: 1 + rng.Float64()*1e6, Unit: strings.Repeat("u", 16), Direction: dir}
				}
				m := resultMsg(b.Name, node, ms...)
				sampled, _, _ := strings.Cut(node, "-")
				m.Noise = &runplan.Noise{Node: sampled, BusyPercent: 99.9, StealPercent: 10.123456789, OthersPercent: pct(33.333333333), CPUs: 64}
				msgs = append(msgs, m)
			}
		}
		// As many live migrations as a run records, every field at its longest: a drain and
		// KubeVirt's upgrade moved the VMs again and again, and half failed.
		for k := 0; k < maxRunMigrations; k++ {
			outcome := vmbenchv1.MigrationCompleted
			if k%2 == 1 {
				outcome = vmbenchv1.MigrationFailed
			}
			run.Migrations = append(run.Migrations, vmbenchv1.RunMigration{VMI: strings.Repeat("v", 63), UID: strings.Repeat("u", 64),
				SourceNode: strings.Repeat("s", 253), TargetNode: strings.Repeat("t", 253), SourcePod: strings.Repeat("p", 253),
				TargetPod: strings.Repeat("q", 253), StartTime: &metav1.Time{Time: finishStart}, EndTime: &metav1.Time{Time: finishStart},
				Mode: strings.Repeat("m", 32), Outcome: outcome, Trigger: vmbenchv1.MigrationByWorkloadUpdate, Object: strings.Repeat("o", 253),
				Policy: strings.Repeat("y", 253), Message: strings.Repeat("e", 512)})
		}
		summary.FinishRun(st, run, vmbenchv1.PlatformVM, benchmarks, summary.RunCompletion{
			Report: summary.RunReport{
				Started: &runplan.Message{Kind: runplan.KindStarted, NodesReady: ready, Virtualization: "qemu", CPUSets: cpuSets,
					SharedServer: strings.Repeat("v", 100), SharedMount: strings.Repeat("m", 300)},
				Results: msgs,
				Done:    &runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: 123.456789},
			},
			Outcome: platform.Outcome{Phase: platform.PhaseFailed, Message: longMessage},
			Now:     finishNow, Created: created,
			TablesKept: tablesOfEveryExecution, TablesLost: tablesOfEveryExecution,
		})
	}
	st.StartTime = &metav1.Time{Time: finishStart}
	st.Ratios = summary.ComputeRatios(st, suite.Spec.Baseline)
	for _, p := range suite.Spec.Platforms[1:] {
		st.VMSettings = append(st.VMSettings, vmbenchv1.VMSettingsStatus{Platform: p.Name, Run: strings.Repeat("r", 63),
			NetworkBinding: strings.Repeat("n", 32), DiskBus: strings.Repeat("b", 16), DiskCache: strings.Repeat("c", 16), DedicatedCPUs: true,
			IsolateEmulatorThread: true, Hugepages: strings.Repeat("h", 8), IOThreads: strings.Repeat("i", 16), DedicatedIOThread: true,
			QOSClass: strings.Repeat("q", 16), CPUModel: strings.Repeat("c", 64), NetworkMultiqueue: true, EvictionStrategy: strings.Repeat("e", 24)})
	}
	vmSettings := slices.Clone(st.VMSettings)
	// Every run ran on another environment, each at its longest: the list keeps the last four.
	st.ParametersHash = strings.Repeat("p", 16)
	for i := range st.Runs {
		env := vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformContainer, KubeVirtVersion: strings.Repeat("k", 64),
			LauncherImage: strings.Repeat("l", 512), RunnerImage: strings.Repeat("r", 512), Message: strings.Repeat("m", 256),
			LauncherImageRef: strings.Repeat("L", 512), RunnerImageRef: strings.Repeat("R", 512), MachineType: strings.Repeat("t", 64)}
		for n := 0; n < maxEnvironmentNodes; n++ {
			env.Nodes = append(env.Nodes, vmbenchv1.NodeEnvironment{Name: fmt.Sprintf("%0253d", n*1000+i), KernelVersion: strings.Repeat("k", 64),
				OSImage: strings.Repeat("o", 128), ContainerRuntimeVersion: strings.Repeat("c", 64), KubeletVersion: strings.Repeat("v", 32),
				Architecture: strings.Repeat("a", 16), CPUModel: strings.Repeat("m", 64)})
		}
		st.Runs[i].Environment = keepEnvironment(st, env)
	}
	if len(st.Environments) != maxEnvironments {
		t.Fatalf("%d environments kept, want %d", len(st.Environments), maxEnvironments)
	}

	if len(st.Results) != maxBenchmarks*maxPlatforms {
		t.Fatalf("built %d results, want %d", len(st.Results), maxBenchmarks*maxPlatforms)
	}
	for _, r := range st.Results {
		if len(r.Metrics) != metricsPerRes {
			t.Fatalf("result %s/%s has %d metrics, want %d", r.Benchmark, r.Platform, len(r.Metrics), metricsPerRes)
		}
	}
	if len(st.SharedStorage) != maxPlatforms {
		t.Fatalf("%d platforms recorded what backed their Shared target, want %d", len(st.SharedStorage), maxPlatforms)
	}
	for _, s := range st.SharedStorage {
		if len(s.BackedBy) != summary.MaxSharedStorage {
			t.Fatalf("platform %s records %d bytes of what backed its Shared target, want the schema's maximum of %d", s.Platform, len(s.BackedBy), summary.MaxSharedStorage)
		}
	}
	if len(st.Ratios) != maxBenchmarks*(maxPlatforms-1) {
		t.Fatalf("built %d platform ratios, want %d", len(st.Ratios), maxBenchmarks*(maxPlatforms-1))
	}
	for _, pr := range st.Ratios {
		if len(pr.Metrics) != metricsPerRes {
			t.Fatalf("ratios %s/%s have %d metrics, want %d", pr.Benchmark, pr.Platform, len(pr.Metrics), metricsPerRes)
		}
	}
	for _, r := range st.Runs {
		if r.StartupSeconds == nil || r.StartupSeconds.RunnerReady == nil || len(r.StartupSeconds.Phases()) != 6 {
			t.Fatalf("run %s recorded startup %+v, want every phase", r.Name, r.StartupSeconds)
		}
		if len(r.Message) != 1024 || len(r.BootSeconds) != maxNodes || len(r.Noise) != maxNodes || len(r.CPUs) != maxNodes {
			t.Fatalf("run %s has a message of %d bytes, %d boot times, %d noise and %d CPU figures, want 1024 and %d of each",
				r.Name, len(r.Message), len(r.BootSeconds), len(r.Noise), len(r.CPUs), maxNodes)
		}
	}

	// The reconciler judges precision before it fits the status.
	precision := applyPrecision(suite)
	if len(st.Runs) != maxPlatforms*maxRepetitions || st.Precision == nil {
		t.Fatalf("after applyPrecision: %d runs and precision %v, want %d runs and a precision status", len(st.Runs), st.Precision, maxPlatforms*maxRepetitions)
	}

	before := statsOf(st)
	runsBefore := slices.Clone(st.Runs)
	sizeBefore, samplesBefore := jsonSize(t, st), 0
	sectionsBefore := fmt.Sprintf("results %d, ratios %d, runs %d", jsonSize(t, st.Results), jsonSize(t, st.Ratios), jsonSize(t, st.Runs))
	for _, s := range before {
		samplesBefore += s.Samples
		if s.N != maxRepetitions*maxNodes && s.N != maxRepetitions*int32(len(pairs)) {
			t.Fatalf("a metric counted %d samples, want %d or %d", s.N, maxRepetitions*maxNodes, maxRepetitions*len(pairs))
		}
	}
	// The rest of status is set before fitting, as in Reconcile, and the warnings again after it.
	st.Headline = summary.Headline(suite.Spec, st.Ratios)
	if st.Headline == nil {
		// Every run failed, so no ratio is the headline: it takes its room all the same.
		st.Headline = &vmbenchv1.Headline{Benchmark: strings.Repeat("b", worstCaseNameLength), Metric: strings.Repeat("m", summary.MaxMetricName),
			Summary: strings.Repeat("s", 128), Band: strings.Repeat("w", 16)}
	}
	if st.MigrationSummaries = summary.MigrationSummaries(suite); st.MigrationSummaries != nil {
		t.Fatalf("the worst case's benchmarks gave migration summaries %v: it has no migration benchmark", st.MigrationSummaries)
	}
	if migrationSummaries {
		// Every benchmark a migration benchmark on every platform, each line at the schema's longest.
		for _, b := range benchmarks {
			for _, p := range suite.Spec.Platforms {
				st.MigrationSummaries = append(st.MigrationSummaries, vmbenchv1.MigrationSummary{Benchmark: b.Name, Platform: p.Name, Emulated: true,
					Summary: strings.Repeat("m", vmbenchv1.MaxMigrationSummaryLength)})
			}
		}
		if len(st.MigrationSummaries) != maxBenchmarks*maxPlatforms {
			t.Fatalf("built %d migration summaries, want %d", len(st.MigrationSummaries), maxBenchmarks*maxPlatforms)
		}
	}
	migrationSummariesBefore := slices.Clone(st.MigrationSummaries)
	setConditions(st, suiteState{Generation: 1, Now: finishNow})
	setPrecisionReached(suite, precision)
	start := time.Now()
	summary.FitWithWarnings(st, func() []string { return warnings(suite.Spec, st, platform.VMNetworkMasquerade) })
	elapsed := time.Since(start)
	sizeAfter := jsonSize(t, st)

	if sizeAfter > summary.StatusBudget {
		t.Errorf("status is %d bytes after fitStatus, more than the budget of %d", sizeAfter, summary.StatusBudget)
	}
	if diff := cmp.Diff(vmSettings, st.VMSettings); diff != "" {
		t.Errorf("fitStatus changed the VM settings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(migrationSummariesBefore, st.MigrationSummaries); diff != "" {
		t.Errorf("fitStatus changed the migration summaries (-want +got):\n%s", diff)
	}
	after := statsOf(st)
	samplesAfter, kept := 0, 0
	smallestDropped, largestKept := math.MaxInt, 0
	for k, b := range before {
		a := after[k]
		if a.N != b.N || a.Mean != b.Mean || a.StdDev != b.StdDev {
			t.Errorf("%s statistics changed from (n %d, mean %g, stddev %g) to (n %d, mean %g, stddev %g)",
				k, b.N, b.Mean, b.StdDev, a.N, a.Mean, a.StdDev)
		}
		switch a.Samples {
		case 0:
			smallestDropped = min(smallestDropped, b.Samples)
		case b.Samples:
			kept++
			largestKept = max(largestKept, b.Samples)
		default:
			t.Errorf("%s keeps %d of its %d samples, want all or none", k, a.Samples, b.Samples)
		}
		samplesAfter += a.Samples
	}
	// At every API maximum some samples still fit: the statistics alone leave room under the budget.
	if kept == 0 && !migrationSummaries {
		t.Errorf("no metric kept its samples: the status without any sample is too close to the budget of %d", summary.StatusBudget)
	}
	// The biggest go first: no metric that kept its samples had more than one that lost them.
	if largestKept > smallestDropped {
		t.Errorf("a metric with %d samples kept them while one with %d lost them", largestKept, smallestDropped)
	}
	// Runs are compacted before any sample is dropped, oldest first: the compacted runs are a prefix,
	// and here, with samples dropped, every run. Each keeps its summary and the rest of its fields.
	compacted := 0
	for i, r := range st.Runs {
		if r.Compacted == nil {
			t.Errorf("run %s was not compacted, though samples were dropped", r.Name)
			continue
		}
		compacted++
		want := runsBefore[i]
		want.Noise, want.CPUs, want.BootSeconds, want.Migrations = nil, nil, nil, nil
		want.Message = want.Message[:summary.MaxCompactedMessage-3] + "..."
		want.Compacted = &vmbenchv1.RunSummary{Nodes: maxNodes, MaxNoisePercent: summary.PtrTo(maxNoise(runsBefore[i].Noise)),
			MaxBootSeconds: summary.PtrTo(maxBoot(runsBefore[i].BootSeconds)), Unpinned: nodes,
			Migrations: maxRunMigrations, MigrationsNotCompleted: maxRunMigrations / 2}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("compacted run %s mismatch (-want +got):\n%s", r.Name, diff)
		}
	}

	if len(st.Warnings) < 2 || !strings.Contains(st.Warnings[0], "keep only their statistics") ||
		!strings.Contains(st.Warnings[1], fmt.Sprintf("%d of %d runs keep only a summary", compacted, len(st.Runs))) {
		t.Errorf("warnings %q do not say that samples were dropped and runs compacted", st.Warnings)
	}
	bare := st.DeepCopy()
	for i := range bare.Results {
		for j := range bare.Results[i].Metrics {
			bare.Results[i].Metrics[j].Samples = nil
		}
	}
	floor := jsonSize(t, bare)
	total := jsonSize(t, suite)
	t.Logf("status without any sample: %d bytes, %.1f%% of the budget", floor, 100*float64(floor)/summary.StatusBudget)
	t.Logf("status before fitStatus: %d bytes (%.2f MiB; %s), %d samples; after: %d bytes (%.2f MiB), %d samples in %d of %d metrics, %d of %d runs compacted, in %s",
		sizeBefore, float64(sizeBefore)/(1<<20), sectionsBefore, samplesBefore, sizeAfter, float64(sizeAfter)/(1<<20), samplesAfter, kept, len(before),
		compacted, len(st.Runs), elapsed)
	t.Logf("final status %d bytes (results %d, ratios %d, runs %d, conditions %d, warnings %d, VM settings %d, migration summaries %d); whole suite %d bytes (%.2f MiB), spec %d, annotation %d",
		jsonSize(t, st), jsonSize(t, st.Results), jsonSize(t, st.Ratios), jsonSize(t, st.Runs), jsonSize(t, st.Conditions), jsonSize(t, st.Warnings), jsonSize(t, st.VMSettings),
		jsonSize(t, st.MigrationSummaries),
		total, float64(total)/(1<<20), jsonSize(t, suite.Spec), len(applied))
	if total >= objectLimit {
		t.Errorf("worst-case suite is %d bytes, want less than %d (etcd refuses objects above 1.5 MiB)", total, objectLimit)
	}
	storeOnAPIServer(t, suite)
}

func maxNoise(ns []vmbenchv1.NodeNoise) float64 {
	m := 0.0
	for _, n := range ns {
		m = max(m, n.MaxPercent)
	}
	return m
}

func maxBoot(bs []vmbenchv1.NodeTiming) float64 {
	m := 0.0
	for _, b := range bs {
		m = max(m, b.Seconds)
	}
	return m
}
