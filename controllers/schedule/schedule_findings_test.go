package schedule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/history"
)

var findingPlatforms = map[string]vmbenchv1.PlatformType{"container": vmbenchv1.PlatformContainer, "vm": vmbenchv1.PlatformVM}

// synthHistory is a history of runs records: each with a container (baseline) and a vm arm of one
// higher-is-better metric, 5 repetitions of 2% noise each. vmStep and ctrStep multiply each arm's
// level from run `at` on; kernel, when set, is the nodes' kernel from run `at` on.
type synth struct {
	runs, at        int
	vmStep, ctrStep float64
	hash            func(i int) string
	kernel          string
	seed            uint64
}

func synthHistory(s synth) []history.Record {
	rng := rand.New(rand.NewPCG(s.seed, 7))
	const n, sd = 5, 0.02
	arm := func(platform string, level float64) history.MetricRecord {
		mean := math.Log(level) + rng.NormFloat64()*sd/math.Sqrt(n)
		v := sd * sd * (0.5 + rng.Float64())
		return history.MetricRecord{Benchmark: "sysbench-cpu", Platform: platform, Metric: "events", Direction: vmbenchv1.HigherIsBetter,
			N: n, Samples: n, MeanLog: &mean, VarLog: &v}
	}
	var out []history.Record
	for i := range s.runs {
		vm, ctr := 900.0, 1000.0
		kernel := "6.1.0"
		if i >= s.at {
			vm, ctr = vm*s.vmStep, ctr*s.ctrStep
			if s.kernel != "" {
				kernel = s.kernel
			}
		}
		hash := "h1"
		if s.hash != nil {
			hash = s.hash(i)
		}
		at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 24 * time.Hour)
		node := []vmbenchv1.NodeEnvironment{{Name: "node-a", KernelVersion: kernel, OSImage: "Debian 12"}}
		out = append(out, history.Record{Suite: fmt.Sprintf("nightly-%02d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)), Scheduled: at,
			Phase: vmbenchv1.SuiteComplete, Baseline: "container", ParametersHash: hash,
			Environments: []vmbenchv1.RunEnvironment{
				{ID: "c", Platform: vmbenchv1.PlatformContainer, RunnerImage: "runner@sha256:1", Nodes: node},
				{ID: "v", Platform: vmbenchv1.PlatformVM, KubeVirtVersion: "v1.4.0", Nodes: node},
			},
			Metrics: []history.MetricRecord{arm("container", ctr), arm("vm", vm)}})
	}
	return out
}

func TestFindingsVMStepNamesTheVMArmAndTheKernel(t *testing.T) {
	recs := synthHistory(synth{runs: 16, at: 8, vmStep: 0.95, ctrStep: 1, kernel: "6.8.0", seed: 1})
	found, all, err := analyzeHistory(recs, findingPlatforms)
	suspects := suspectsOf(all)
	if err != nil {
		t.Fatal(err)
	}
	// One change, one finding: the ratio moved with the VM arm and is not reported apart.
	if len(found) != 1 {
		t.Fatalf("want 1 finding, got %d: %+v", len(found), found)
	}
	f := found[0]
	if f.Arm != vmbenchv1.ArmVM || f.Platform != "vm" || f.Benchmark != "sysbench-cpu" || f.Metric != "events" {
		t.Errorf("series: got %s/%s/%s/%s", f.Benchmark, f.Metric, f.Platform, f.Arm)
	}
	if f.Before != "nightly-07" || f.After != "nightly-08" {
		t.Errorf("change between %s and %s, want nightly-07 and nightly-08", f.Before, f.After)
	}
	if !f.Regression || f.Direction != "down" || f.State != vmbenchv1.FindingUntriaged {
		t.Errorf("got direction %s regression %v state %s", f.Direction, f.Regression, f.State)
	}
	if f.Ratio < 0.93 || f.Ratio > 0.97 || f.RatioLow > f.Ratio || f.RatioHigh < f.Ratio || f.PValue > 0.001 {
		t.Errorf("ratio %.3f [%.3f, %.3f] p=%g, want about 0.95 and p <= 0.001", f.Ratio, f.RatioLow, f.RatioHigh, f.PValue)
	}
	if !strings.Contains(f.Explanation, "the VM arm (vm) moved: look at KubeVirt, QEMU, virt-launcher") {
		t.Errorf("explanation %q does not name the VM arm", f.Explanation)
	}
	if !slices.Equal(f.EnvironmentChanges, []string{"kernelVersion: 6.1.0 → 6.8.0"}) {
		t.Errorf("environment changes %q, want only the kernel", f.EnvironmentChanges)
	}
	if len(suspects) != 0 {
		t.Errorf("want no suspect, got %d", len(suspects))
	}
	// The ID is stable: the same history gives the same finding.
	again, _, _ := analyzeHistory(recs, findingPlatforms)
	if len(again) != 1 || again[0].ID != f.ID || len(f.ID) != 16 {
		t.Errorf("ID %q is not stable (%+v)", f.ID, again)
	}
}

func TestFindingsWhichArmMoved(t *testing.T) {
	for _, tc := range []struct {
		name            string
		vmStep, ctrStep float64
		arms            []vmbenchv1.FindingArm
		explanation     string
	}{
		{"container only", 1, 0.95, []vmbenchv1.FindingArm{vmbenchv1.ArmContainer}, "the container arm (container) moved: look at the container runtime"},
		{"both, flat ratio", 0.95, 0.95, []vmbenchv1.FindingArm{vmbenchv1.ArmContainer, vmbenchv1.ArmVM}, "both arms moved and their ratio held"},
		// The VM arm fell 10%, the container arm 5%: the ratio moved too (mutant F2 of the test review).
		{"both, by different amounts", 0.90, 0.95, []vmbenchv1.FindingArm{vmbenchv1.ArmContainer, vmbenchv1.ArmVM},
			"both arms moved, by different amounts: look at the node, kernel and hardware, and at what only one arm runs on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, _, err := analyzeHistory(synthHistory(synth{runs: 16, at: 8, vmStep: tc.vmStep, ctrStep: tc.ctrStep, seed: 2}), findingPlatforms)
			if err != nil {
				t.Fatal(err)
			}
			// The arms that moved at the same run are one finding, which lists them.
			if len(found) != 1 {
				t.Fatalf("%d findings, want 1: %+v", len(found), found)
			}
			var arms []vmbenchv1.FindingArm
			for _, f := range found {
				for _, s := range findingSeriesOf(f) {
					arms = append(arms, s.Arm)
				}
				if int(f.SeriesCount) != len(tc.arms) {
					t.Errorf("seriesCount %d, want %d", f.SeriesCount, len(tc.arms))
				}
				if !strings.Contains(f.Explanation, tc.explanation) {
					t.Errorf("%s: explanation %q, want %q", f.Arm, f.Explanation, tc.explanation)
				}
				if len(f.EnvironmentChanges) != 0 {
					t.Errorf("no environment changed, got %q", f.EnvironmentChanges)
				}
			}
			slices.Sort(arms)
			if !slices.Equal(arms, tc.arms) {
				t.Errorf("findings in arms %v, want %v", arms, tc.arms)
			}
		})
	}
}

func TestFindingsNoneInNoise(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		found, _, err := analyzeHistory(synthHistory(synth{runs: 20, at: 20, vmStep: 1, ctrStep: 1, seed: seed}), findingPlatforms)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 0 {
			t.Errorf("seed %d: pure noise gave findings %+v", seed, found)
		}
	}
}

func TestFindingsANewParametersHashStartsANewSeries(t *testing.T) {
	// The VM arm is 5% lower from run 8 on, exactly when the parameters changed: under the new
	// hash the series is flat, and the old runs do not count. A failed record in between is skipped.
	recs := synthHistory(synth{runs: 16, at: 8, vmStep: 0.95, ctrStep: 1, seed: 1,
		hash: func(i int) string { return map[bool]string{true: "h1", false: "h2"}[i < 8] }})
	recs = slices.Insert(recs, 12, history.Record{Suite: "nightly-failed", Phase: vmbenchv1.SuiteFailed, ParametersHash: "h2"})
	if got := currentSeries(recs); len(got) != 8 || got[0].Suite != "nightly-08" {
		t.Fatalf("current series: %d records from %s, want the 8 complete ones of h2", len(got), got[0].Suite)
	}
	found, _, err := analyzeHistory(recs, findingPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Errorf("a new parameters hash must start a new series, got findings %+v", found)
	}
}

func TestRatioSeriesStandardError(t *testing.T) {
	mp, vp, mb, vb := 1.0, 0.04, 1.5, 0.01
	recs := []history.Record{{Suite: "s", Phase: vmbenchv1.SuiteComplete, Baseline: "container", Metrics: []history.MetricRecord{
		{Benchmark: "b", Metric: "m", Platform: "container", N: 5, MeanLog: &mb, VarLog: &vb},
		{Benchmark: "b", Metric: "m", Platform: "vm", N: 3, MeanLog: &mp, VarLog: &vp},
	}}}
	var ratio *findingSeries
	for _, s := range buildSeries(recs, findingPlatforms) {
		if s.Ratio {
			ratio = s
		}
	}
	if ratio == nil || ratio.Arm != vmbenchv1.ArmRatio || ratio.Platform != "vm" || len(ratio.Runs) != 1 {
		t.Fatalf("want one ratio series of vm, got %+v", ratio)
	}
	r := ratio.Runs[0]
	if math.Abs(r.Mean-(mp-mb)) > 1e-12 || r.N != 3 {
		t.Errorf("ratio run mean %v n %d, want %v and 3", r.Mean, r.N, mp-mb)
	}
	if want := vp/3 + vb/5; math.Abs(r.Variance/float64(r.N)-want) > 1e-12 {
		t.Errorf("squared standard error %v, want %v", r.Variance/float64(r.N), want)
	}
}

func TestMergeFindingsKeepsStatesAndTheNewest(t *testing.T) {
	var recs []history.Record
	var found []vmbenchv1.Finding
	for i := range 40 {
		recs = append(recs, history.Record{Suite: fmt.Sprintf("s-%02d", i)})
		found = append(found, vmbenchv1.Finding{ID: fmt.Sprintf("id-%02d", i), Benchmark: "b", Metric: fmt.Sprint(i), After: recs[i].Suite,
			Time: metav1.NewTime(time.Unix(int64(i), 0)), State: vmbenchv1.FindingUntriaged})
	}
	have := []vmbenchv1.Finding{found[39]}
	have[0].State = vmbenchv1.FindingExpected
	out, added := mergeFindings(have, found, recs)
	if len(out) != MaxFindings || out[0].ID != "id-08" || out[MaxFindings-1].ID != "id-39" {
		t.Fatalf("kept %d findings from %s to %s, want the newest %d", len(out), out[0].ID, out[len(out)-1].ID, MaxFindings)
	}
	// Of the 39 new ones, only the 31 the status keeps are added: the others would name findings
	// (in events and the confirmation round) that the status does not hold.
	if out[MaxFindings-1].State != vmbenchv1.FindingExpected || len(added) != MaxFindings-1 || added[0].ID != "id-08" {
		t.Errorf("state %s, %d added; want the known finding's state kept and the %d new ones kept", out[MaxFindings-1].State, len(added), MaxFindings-1)
	}
	// The same change found one run later (its split moved as more runs came) is not new.
	moved := found[39]
	moved.ID, moved.Metric, moved.After = "other", "39", "s-38"
	if _, added := mergeFindings(out, []vmbenchv1.Finding{moved}, recs); len(added) != 0 {
		t.Errorf("a change one run away was added again: %+v", added)
	}
}

func TestRegressedHonoursTriage(t *testing.T) {
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		triage []vmbenchv1.FindingTriage
		want   metav1.ConditionStatus
	}{
		{"untriaged", nil, metav1.ConditionTrue},
		{"acknowledged", []vmbenchv1.FindingTriage{{ID: "bad", State: vmbenchv1.FindingAcknowledged, Reason: "known",
			Expires: &metav1.Time{Time: now.Add(time.Hour)}}}, metav1.ConditionFalse},
		{"acknowledged, expired", []vmbenchv1.FindingTriage{{ID: "bad", State: vmbenchv1.FindingAcknowledged,
			Expires: &metav1.Time{Time: now.Add(-time.Hour)}}}, metav1.ConditionTrue},
		{"invalid", []vmbenchv1.FindingTriage{{ID: "bad", State: vmbenchv1.FindingInvalid}}, metav1.ConditionFalse},
		{"expected", []vmbenchv1.FindingTriage{{ID: "bad", State: vmbenchv1.FindingExpected}}, metav1.ConditionFalse},
		{"another finding", []vmbenchv1.FindingTriage{{ID: "good", State: vmbenchv1.FindingInvalid}}, metav1.ConditionTrue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sched := testSchedule()
			sched.Spec.Triage = tc.triage
			sched.Status.Findings = []vmbenchv1.Finding{
				{ID: "good", Ratio: 1.2, Direction: "up", State: vmbenchv1.FindingUntriaged},
				{ID: "bad", Benchmark: "b", Metric: "m", Platform: "vm", Arm: vmbenchv1.ArmVM, Ratio: 0.9, Direction: "down", Regression: true,
					Before: "s-1", After: "s-2", State: vmbenchv1.FindingUntriaged},
			}
			setChangeSuspected(sched, nil)
			next := triageFindings(sched, now)
			c := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionRegressed)
			if c == nil || c.Status != tc.want {
				t.Fatalf("Regressed %+v, want %s", c, tc.want)
			}
			if tc.want == metav1.ConditionTrue && (!strings.Contains(c.Message, "finding bad") || !strings.Contains(c.Message, "spec.triage")) {
				t.Errorf("message %q does not name the finding and what to do", c.Message)
			}
			if tc.name == "acknowledged" && next != time.Hour {
				t.Errorf("requeue in %v, want at the expiry in 1h", next)
			}
		})
	}
}

// memHistory is a HistoryStore in memory.
type memHistory struct {
	records []history.Record
	listErr error
}

func (m *memHistory) Append(_ context.Context, _ *vmbenchv1.BenchmarkSchedule, rec history.Record) (int, error) {
	m.records = append(m.records, rec)
	return len(m.records), nil
}

func (m *memHistory) List(context.Context, *vmbenchv1.BenchmarkSchedule) ([]history.Record, error) {
	return m.records, m.listErr
}

func TestReconcileReportsAFindingOnceAfterARecord(t *testing.T) {
	ctx := context.Background()
	scheme := scheme.New()
	sched := testSchedule()
	sched.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	sched.Spec.Schedule = "0 3 * * *"
	// Without confirmation runs, a finding alerts at once (schedule_confirm_test.go has them).
	sched.Spec.Confirmation = &vmbenchv1.ScheduleConfirmation{Runs: ptr.To[int32](0)}
	sched.Spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer},
		{Name: "vm", Type: vmbenchv1.PlatformVM}}
	suite := scheduleFinishedSuite(20, vmbenchv1.SuiteComplete, false)
	suite.Namespace, suite.UID, suite.Status.ParametersHash = "bench", "suite-uid", "h1"
	suite.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
		Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sched, suite).WithStatusSubresource(sched).
		WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
	store := &memHistory{records: synthHistory(synth{runs: 16, at: 8, vmStep: 0.95, ctrStep: 1, kernel: "6.8.0", seed: 1})}
	rec := events.NewFakeRecorder(20)
	r := &ScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec, History: store,
		Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))}
	// The first analysis fails: the record stays, and the next reconcile analyses again.
	store.listErr = errors.New("the API server is away")
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}); err == nil ||
		!strings.Contains(err.Error(), "the API server is away") {
		t.Fatalf("want the analysis error, got %v", err)
	}
	store.listErr = nil
	for range 2 {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}); err != nil {
			t.Fatal(err)
		}
	}
	got := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(sched), got); err != nil {
		t.Fatal(err)
	}
	if len(store.records) != 17 || len(got.Status.Findings) != 1 || got.Status.Findings[0].After != "nightly-08" {
		t.Fatalf("%d records, findings %+v; want the suite recorded and one finding after nightly-08", len(store.records), got.Status.Findings)
	}
	c1 := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionRegressed)
	if c1 == nil || c1.Status != metav1.ConditionTrue || !strings.Contains(c1.Message, got.Status.Findings[0].ID) {
		t.Errorf("Regressed %+v, want True naming the finding", c1)
	}
	if c2 := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionChangeSuspected); c2 == nil || c2.Status != metav1.ConditionFalse {
		t.Errorf("ChangeSuspected %+v, want False", c2)
	}
	n := 0
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.Contains(e, vmbenchv1.ReasonChangeFound) {
			n++
			if !strings.Contains(e, "Warning") || !strings.Contains(e, "kernelVersion: 6.1.0 → 6.8.0") {
				t.Errorf("event %q is not a Warning naming the kernel change", e)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d ChangeFound events over three reconciles, want 1", n)
	}
}

func TestChangeSuspectedNamesTheSeries(t *testing.T) {
	// A 6% step in the VM arm two runs before the end: too few runs after it for a change.
	recs := synthHistory(synth{runs: 14, at: 12, vmStep: 0.94, ctrStep: 1, seed: 3})
	found, all, err := analyzeHistory(recs, findingPlatforms)
	suspects := suspectsOf(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 || len(suspects) == 0 {
		t.Fatalf("want a suspect and no finding, got %d findings and %d suspects", len(found), len(suspects))
	}
	sched := testSchedule()
	setChangeSuspected(sched, suspects)
	c := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionChangeSuspected)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "sysbench-cpu events on vm") ||
		!strings.Contains(c.Message, "from suite nightly-12") || !strings.Contains(c.Message, "more scheduled runs will confirm or clear it") {
		t.Errorf("ChangeSuspected %+v, want True naming the vm series, the suite and what comes next", c)
	}
	setChangeSuspected(sched, nil)
	if c := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionChangeSuspected); c.Status != metav1.ConditionFalse {
		t.Errorf("ChangeSuspected stays %s without a suspect", c.Status)
	}
}

// Regressed names the worst untriaged regression, not the first or the smallest (mutant F1 of the
// test review): two regressions of ratios 0.9 and 0.8 and a larger improvement give the 0.8 one.
func TestRegressedNamesTheWorstRegression(t *testing.T) {
	sched := testSchedule()
	sched.Status.Findings = []vmbenchv1.Finding{
		{ID: "up", Benchmark: "b", Metric: "m", Platform: "vm", Arm: vmbenchv1.ArmVM, Ratio: 1.5, Direction: "up", State: vmbenchv1.FindingUntriaged},
		{ID: "tenth", Benchmark: "b", Metric: "m1", Platform: "vm", Arm: vmbenchv1.ArmVM, Ratio: 0.9, Direction: "down", Regression: true,
			State: vmbenchv1.FindingUntriaged},
		{ID: "fifth", Benchmark: "b", Metric: "m2", Platform: "vm", Arm: vmbenchv1.ArmVM, Ratio: 0.8, Direction: "down", Regression: true,
			State: vmbenchv1.FindingUntriaged},
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}} {
		s := sched.DeepCopy()
		s.Status.Findings = []vmbenchv1.Finding{sched.Status.Findings[order[0]], sched.Status.Findings[order[1]], sched.Status.Findings[order[2]]}
		setRegressed(s)
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionRegressed)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "2 untriaged regression(s); the worst: b m2") ||
			!strings.Contains(c.Message, "{id: fifth") {
			t.Errorf("order %v: Regressed %+v, want True naming 2 regressions and the 0.8 one (fifth) as the worst", order, c)
		}
	}
}

// A finding in the status that a later analysis finds with more series grows its list, its own
// series first, and keeps its ID and state (a finding made before grouping, of one series).
func TestMergeFindingsGrowsTheSeriesList(t *testing.T) {
	recs := []history.Record{{Suite: "s0"}, {Suite: "s1"}, {Suite: "s2"}}
	old := vmbenchv1.Finding{ID: "old", Benchmark: "b", Metric: "m2", Platform: "vm", Arm: vmbenchv1.ArmVM, After: "s1", Direction: "down",
		Regression: true, Ratio: 0.95, State: vmbenchv1.FindingExpected}
	group := summarize([]vmbenchv1.Finding{
		{ID: "m1", Benchmark: "b", Metric: "m1", Platform: "vm", Arm: vmbenchv1.ArmVM, After: "s1", Direction: "down", Regression: true, Ratio: 0.9},
		{ID: "m2", Benchmark: "b", Metric: "m2", Platform: "vm", Arm: vmbenchv1.ArmVM, After: "s2", Direction: "down", Regression: true, Ratio: 0.95},
		{ID: "m3", Benchmark: "b", Metric: "m3", Platform: "vm", Arm: vmbenchv1.ArmVM, After: "s1", Direction: "down", Regression: true, Ratio: 0.97},
	})
	out, added := mergeFindings([]vmbenchv1.Finding{old}, []vmbenchv1.Finding{group}, recs)
	if len(out) != 1 || len(added) != 0 {
		t.Fatalf("%d findings, %d added; want the old one only", len(out), len(added))
	}
	f := out[0]
	if f.ID != "old" || f.State != vmbenchv1.FindingExpected || f.SeriesCount != 3 || len(f.Series) != 3 || f.Series[0].Metric != "m2" ||
		f.Series[1].Metric != "m1" || f.Series[2].Metric != "m3" {
		t.Errorf("finding %+v; want id old, Expected, 3 series listed m2 (its own), m1, m3", f)
	}
}
