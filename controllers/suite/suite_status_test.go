package suite

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
)

func TestSetConditions(t *testing.T) {
	now := finishNow
	earlier := metav1.NewTime(now.Add(-time.Hour))
	r := func(name string, phase vmbenchv1.RunPhase, msg string) vmbenchv1.RunStatus {
		return vmbenchv1.RunStatus{Name: name, Phase: phase, Message: msg}
	}
	type cond struct {
		Type   string
		Status metav1.ConditionStatus
		Reason string
	}
	// conds lists the four conditions, RunsFailed False; withRunsFailed makes it True.
	conds := func(progressing, complete, failed cond) []cond {
		progressing.Type, complete.Type, failed.Type = vmbenchv1.ConditionProgressing, vmbenchv1.ConditionComplete, vmbenchv1.ConditionFailed
		return []cond{progressing, complete, failed, {Type: vmbenchv1.ConditionRunsFailed, Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNoFailure}}
	}
	withRunsFailed := func(c []cond) []cond {
		c[3] = cond{Type: vmbenchv1.ConditionRunsFailed, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunFailed}
		return c
	}
	notDone := cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNotDone}
	noFailure := cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNoFailure}
	finished := cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonFinished}
	failedBy := func(reason string) (cond, cond) {
		return cond{Status: metav1.ConditionFalse, Reason: reason}, cond{Status: metav1.ConditionTrue, Reason: reason}
	}

	tests := []struct {
		name           string
		runs           []vmbenchv1.RunStatus
		startTime      *metav1.Time
		completionTime *metav1.Time
		state          suiteState
		wantConds      []cond
		wantPhase      vmbenchv1.SuitePhase
		wantProgress   string
		wantCompletion *metav1.Time
		// wantMessages are substrings of the Progressing and Failed messages.
		wantProgressingMsg, wantFailedMsg []string
		wantRunsFailedMsg                 string
	}{
		{
			name:         "pending until the first run starts",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunPending, ""), r("s-vm-1", vmbenchv1.RunPending, "")},
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonPending}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuitePending,
			wantProgress: "0/2", wantProgressingMsg: []string{"run s-container-1 (0/2 runs finished)"},
		},
		{
			name:         "running once the suite has a start time, even before a run finished",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunRunning, ""), r("s-vm-1", vmbenchv1.RunPending, "")},
			startTime:    &earlier,
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunning}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "0/2", wantProgressingMsg: []string{"run s-container-1 (0/2 runs finished)"},
		},
		{
			name: "running",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""), r("s-vm-1", vmbenchv1.RunRunning, ""),
				r("s-vm-2", vmbenchv1.RunPending, "")},
			startTime:    &earlier,
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunning}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "1/3", wantProgressingMsg: []string{"run s-vm-1 (1/3 runs finished)"},
		},
		{
			name: "running with failures so far clears an old completion time",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunFailed, "boom"),
				r("s-vm-1", vmbenchv1.RunSucceeded, "benchmarks failed: ping (no result reported)"), r("s-vm-2", vmbenchv1.RunRunning, "")},
			startTime: &earlier, completionTime: &earlier,
			wantConds:    withRunsFailed(conds(cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunning}, notDone, noFailure)),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "2/3", wantProgressingMsg: []string{"run s-vm-2 (2/3 runs finished); 2 failures so far"},
			wantRunsFailedMsg: "1 of 3 runs failed; first: s-container-1: boom",
		},
		{
			name:         "a run held up names its cause",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunRunning, "waiting: ..."), r("s-vm-1", vmbenchv1.RunPending, "")},
			startTime:    &earlier,
			state:        suiteState{Waiting: &conditions.Cause{Reason: failure.ReasonImagePull, Message: "pod s-container-1-worker-0 cannot pull image runner:x"}},
			wantConds:    conds(cond{Status: metav1.ConditionTrue, Reason: failure.ReasonImagePull}, notDone, noFailure),
			wantPhase:    vmbenchv1.SuiteRunning,
			wantProgress: "0/2", wantProgressingMsg: []string{"run s-container-1 is waiting: pod s-container-1-worker-0 cannot pull image runner:x (0/2 runs finished)"},
		},
		{
			name:         "complete",
			runs:         []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""), r("s-vm-1", vmbenchv1.RunSucceeded, "")},
			startTime:    &earlier,
			wantConds:    conds(finished, cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonCompleted}, noFailure),
			wantPhase:    vmbenchv1.SuiteComplete,
			wantProgress: "2/2", wantCompletion: &metav1.Time{Time: now},
		},
		{
			name:      "complete keeps the first completion time",
			runs:      []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, "")},
			startTime: &earlier, completionTime: &earlier,
			wantConds:    conds(finished, cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonCompleted}, noFailure),
			wantPhase:    vmbenchv1.SuiteComplete,
			wantProgress: "1/1", wantCompletion: &earlier,
		},
		{
			name: "failed by a run",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, "benchmarks failed: ping (no result reported)"),
				r("s-vm-1", vmbenchv1.RunFailed, "VMI s-vm-1-master failed")},
			startTime: &earlier,
			wantConds: func() []cond {
				c, f := failedBy(vmbenchv1.ReasonRunFailed)
				return withRunsFailed(conds(finished, c, f))
			}(),
			wantPhase:    vmbenchv1.SuiteFailed,
			wantProgress: "2/2", wantCompletion: &metav1.Time{Time: now},
			wantFailedMsg: []string{"s-vm-1: VMI s-vm-1-master failed; s-container-1: benchmarks failed: ping (no result reported)"},
		},
		{
			name: "failed by a benchmark only",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""),
				r("s-vm-1", vmbenchv1.RunSucceeded, "benchmarks failed: cpu (node01: exit 1)")},
			startTime: &earlier,
			wantConds: func() []cond {
				c, f := failedBy(vmbenchv1.ReasonBenchmarkFailed)
				return conds(finished, c, f)
			}(),
			wantPhase:    vmbenchv1.SuiteFailed,
			wantProgress: "2/2", wantCompletion: &metav1.Time{Time: now},
			wantFailedMsg: []string{"s-vm-1: benchmarks failed: cpu (node01: exit 1)"},
		},
		{
			name: "timed out with a run still active",
			runs: []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunSucceeded, ""), r("s-vm-1", vmbenchv1.RunRunning, ""),
				r("s-vm-2", vmbenchv1.RunFailed, "not started: the suite timed out after 6h0m0s")},
			startTime: &earlier,
			state:     suiteState{TimedOut: true},
			wantConds: func() []cond {
				c, f := failedBy(vmbenchv1.ReasonSuiteTimeout)
				return withRunsFailed(conds(finished, c, f))
			}(),
			wantPhase:    vmbenchv1.SuiteFailed,
			wantProgress: "2/3", wantCompletion: &metav1.Time{Time: now},
			wantFailedMsg: []string{"the suite timed out; s-vm-2: not started: the suite timed out after 6h0m0s"},
		},
		{
			name:  "invalid spec",
			runs:  []vmbenchv1.RunStatus{r("s-container-1", vmbenchv1.RunPending, ""), r("s-vm-1", vmbenchv1.RunPending, "")},
			state: suiteState{InvalidSpec: errors.New("cluster.cpuRequest 3 exceeds cluster.cpu 2: lower cluster.cpuRequest or remove it")},
			wantConds: conds(
				cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonInvalidSpec},
				cond{Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonInvalidSpec},
				cond{Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonInvalidSpec}),
			wantPhase:     vmbenchv1.SuiteFailed,
			wantProgress:  "0/2",
			wantFailedMsg: []string{"cluster.cpuRequest 3 exceeds cluster.cpu 2: lower cluster.cpuRequest or remove it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{Runs: tt.runs, StartTime: tt.startTime, CompletionTime: tt.completionTime}
			state := tt.state
			state.Generation, state.Now = 7, now
			setConditions(st, state)

			var got []cond
			for _, c := range st.Conditions {
				got = append(got, cond{c.Type, c.Status, c.Reason})
				if c.ObservedGeneration != 7 {
					t.Errorf("condition %s has observedGeneration %d, want 7", c.Type, c.ObservedGeneration)
				}
				if c.Message == "" {
					t.Errorf("condition %s has no message", c.Type)
				}
			}
			if diff := cmp.Diff(tt.wantConds, got); diff != "" {
				t.Errorf("conditions mismatch (-want +got):\n%s", diff)
			}
			if st.Phase != tt.wantPhase || st.Progress != tt.wantProgress {
				t.Errorf("phase, progress = %s, %q; want %s, %q", st.Phase, st.Progress, tt.wantPhase, tt.wantProgress)
			}
			if diff := cmp.Diff(tt.wantCompletion, st.CompletionTime); diff != "" {
				t.Errorf("completion time mismatch (-want +got):\n%s", diff)
			}
			for _, want := range tt.wantProgressingMsg {
				if msg := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionProgressing).Message; !strings.Contains(msg, want) {
					t.Errorf("Progressing message = %q, want it to contain %q", msg, want)
				}
			}
			if msg := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionRunsFailed).Message; tt.wantRunsFailedMsg != "" && msg != tt.wantRunsFailedMsg {
				t.Errorf("RunsFailed message = %q, want %q", msg, tt.wantRunsFailedMsg)
			}
			for _, want := range tt.wantFailedMsg {
				if msg := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionFailed).Message; !strings.Contains(msg, want) {
					t.Errorf("Failed message = %q, want it to contain %q", msg, want)
				}
			}
			if meta.IsStatusConditionTrue(st.Conditions, vmbenchv1.ConditionComplete) && meta.IsStatusConditionTrue(st.Conditions, vmbenchv1.ConditionFailed) {
				t.Error("Complete and Failed are both True")
			}
		})
	}
}

func TestSetConditionsUpdatesExistingConditions(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{{Name: "s-container-1", Phase: vmbenchv1.RunRunning}}}
	setConditions(st, suiteState{Generation: 1, Now: finishNow})
	st.Runs[0].Phase = vmbenchv1.RunSucceeded
	setConditions(st, suiteState{Generation: 2, Now: finishNow})
	if len(st.Conditions) != 4 {
		t.Fatalf("got %d conditions, want 4: %+v", len(st.Conditions), st.Conditions)
	}
	if c := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionComplete); c.Status != metav1.ConditionTrue || c.ObservedGeneration != 2 {
		t.Errorf("Complete = %s at generation %d, want True at 2", c.Status, c.ObservedGeneration)
	}
}

func TestWarnings(t *testing.T) {
	const (
		trimmedWarning    = "some metrics keep only their statistics, not every sample, so that the status stays small"
		requestsWarning   = "cluster requests are below limits: pods and VMs are not in Guaranteed QoS, so neighbours can take their CPU"
		emulationWarning  = "VMs ran under software emulation (no usable KVM): VM figures do not measure VM overhead"
		masqueradeWarning = "VMs use masquerade networking: every guest is 10.0.2.2, so MPI across VMs cannot work on this cluster"
	)
	emulated := []vmbenchv1.RunStatus{
		{Name: "s-vm-1", Accelerator: vmbenchv1.AcceleratorKVM},
		{Name: "s-vm-2", Accelerator: vmbenchv1.AcceleratorEmulation},
		{Name: "s-vm-3", Accelerator: vmbenchv1.AcceleratorEmulation},
	}
	// withSamples is a result whose metric counted n samples and keeps kept of them.
	withSamples := func(n, kept int) []vmbenchv1.BenchmarkResult {
		m := vmbenchv1.MetricSummary{Name: "events", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: int32(n), Mean: 1}
		for i := 0; i < kept; i++ {
			m.Samples = append(m.Samples, sample(int32(i+1), "master", 1))
		}
		other := vmbenchv1.MetricSummary{Name: "other", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 1, Mean: 1,
			Samples: []vmbenchv1.Sample{sample(1, "master", 1)}}
		return []vmbenchv1.BenchmarkResult{
			{Benchmark: "cpu", Platform: "container", Metrics: []vmbenchv1.MetricSummary{other}},
			{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{other, m}},
		}
	}
	tests := []struct {
		name    string
		edit    func(*vmbenchv1.BenchmarkSuiteSpec)
		runs    []vmbenchv1.RunStatus
		results []vmbenchv1.BenchmarkResult
		network platform.VMNetwork
		want    []string
	}{
		{name: "fair comparison", network: platform.VMNetworkBridge,
			runs: []vmbenchv1.RunStatus{{Name: "s-vm-1", Accelerator: vmbenchv1.AcceleratorKVM}}},
		{name: "passt is fine", network: platform.VMNetworkPasst},
		{name: "cpu request lowered", network: platform.VMNetworkBridge, want: []string{requestsWarning},
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) { s.Cluster.CPURequest = quantity("500m") }},
		{name: "memory request lowered", network: platform.VMNetworkBridge, want: []string{requestsWarning},
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) { s.Cluster.MemoryRequest = quantity("1Gi") }},
		{name: "requests equal to the limits are Guaranteed", network: platform.VMNetworkBridge,
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) {
				s.Cluster.CPURequest, s.Cluster.MemoryRequest = quantity("2000m"), quantity("2048Mi")
			}},
		{name: "every sample kept", network: platform.VMNetworkBridge, results: withSamples(3, 3)},
		{name: "samples capped per metric", network: platform.VMNetworkBridge, results: withSamples(summary.SamplesPerMetric+1, summary.SamplesPerMetric),
			want: []string{trimmedWarning}},
		{name: "samples dropped to fit the status", network: platform.VMNetworkBridge, results: withSamples(7, 0),
			want: []string{trimmedWarning}},
		{name: "emulation is named once", network: platform.VMNetworkBridge, runs: emulated, want: []string{emulationWarning}},
		{name: "masquerade with VMs", network: platform.VMNetworkMasquerade, want: []string{masqueradeWarning}},
		{name: "auto found masquerade for a run", network: platform.VMNetworkAuto, want: []string{masqueradeWarning},
			runs: []vmbenchv1.RunStatus{{Name: "s-vm-1", Network: "masquerade"}}},
		{name: "auto found passt", network: platform.VMNetworkAuto, runs: []vmbenchv1.RunStatus{{Name: "s-vm-1", Network: "passt"}}},
		{name: "masquerade without VMs", network: platform.VMNetworkMasquerade,
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) {
				s.Platforms = []vmbenchv1.Platform{containerPlatform, hostPlatform}
			}},
		{name: "everything", network: platform.VMNetworkMasquerade, runs: emulated, results: withSamples(5, 0),
			edit: func(s *vmbenchv1.BenchmarkSuiteSpec) {
				s.Cluster.CPURequest = quantity("1")
				s.Platforms = append(s.Platforms, vmbenchv1.Platform{Name: "vm2", Type: vmbenchv1.PlatformVM})
			},
			want: []string{trimmedWarning, requestsWarning, emulationWarning, masqueradeWarning}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSuite().Spec
			if tt.edit != nil {
				tt.edit(&spec)
			}
			got := warnings(spec, &vmbenchv1.BenchmarkSuiteStatus{Runs: tt.runs, Results: tt.results}, tt.network)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("warnings() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
