package schedule

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/detect"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// analysed is analyzeHistory's analysis of every series of recs.
func analysed(t *testing.T, recs []history.Record) []seriesAnalysis {
	t.Helper()
	_, all, err := analyzeHistory(recs, findingPlatforms)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// The sensitivity exported for the board comes from the analysis that found the changes: one
// detector pass per series and record (S9), and the figure is the detector's own.
func TestSensitivitiesAreTheDetectorsMinimumDetectableChange(t *testing.T) {
	// A 5% step of the VM arm at run 8 of 16: its sensitivity is measured over the runs since.
	recs := synthHistory(synth{runs: 16, at: 8, vmStep: 0.95, ctrStep: 1, seed: 1})
	got := sensitivities(analysed(t, recs))
	want := map[string]bool{"container/container": true, "vm/vm": true, "vm/ratio": true}
	if len(got) != len(want) {
		t.Fatalf("sensitivities %+v, want the container and vm arms and the vm ratio", got)
	}
	series := buildSeries(currentSeries(recs), findingPlatforms)
	for _, s := range got {
		if !want[s.Platform+"/"+s.Arm] {
			t.Errorf("unexpected series %+v", s)
		}
		// From MinHistory runs on, the figure is the detector's own.
		for _, fs := range series {
			if fs.Platform != s.Platform || string(fs.Arm) != s.Arm {
				continue
			}
			a, err := detect.Analyze(fs.Runs, fs.Sense, detect.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if s.MinDetectableChange != a.Noise.MinDetectableChange || !(s.MinDetectableChange > 0) {
				t.Errorf("%s %s: %v, want the detector's %v", s.Platform, s.Arm, s.MinDetectableChange, a.Noise.MinDetectableChange)
			}
			if s.Arm == "vm" {
				if len(a.Changes) == 0 {
					t.Fatalf("the detector found no change of the VM arm: %+v", a)
				}
				// Over all runs, across the step, the spread and the figure would be larger.
				across, err := detect.MinDetectableChange(fs.Runs, detect.DefaultConfig().MinRunsEachSide, detect.DefaultConfig())
				if err != nil {
					t.Fatal(err)
				}
				if s.MinDetectableChange >= across {
					t.Errorf("vm arm: %v since the change, %v across it: want the runs since the change only", s.MinDetectableChange, across)
				}
			}
		}
		// 5 repetitions of 2% noise a run: a few percent, the ratio's larger than an arm's.
		if s.MinDetectableChange < 0.005 || s.MinDetectableChange > 0.2 {
			t.Errorf("%s %s: minimum detectable change %v, not a few percent", s.Platform, s.Arm, s.MinDetectableChange)
		}
	}
}

func TestSensitivitiesBeforeTheDetectorJudges(t *testing.T) {
	// Three runs, as a new schedule has after three days: no verdict yet, but a sensitivity.
	recs := synthHistory(synth{runs: 3, at: 3, vmStep: 1, ctrStep: 1, seed: 4})
	got := sensitivities(analysed(t, recs))
	if len(got) != 3 {
		t.Fatalf("sensitivities of 3 runs: %+v, want 3 series", got)
	}
	for _, s := range got {
		if !(s.MinDetectableChange > 0) || math.IsInf(s.MinDetectableChange, 0) {
			t.Errorf("%+v: want a finite positive minimum detectable change", s)
		}
	}
	// Before MinHistory runs: the detector's computation over all the series' runs.
	for _, fs := range buildSeries(currentSeries(recs), findingPlatforms) {
		want, err := detect.MinDetectableChange(fs.Runs, detect.DefaultConfig().MinRunsEachSide, detect.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range got {
			if s.Platform == fs.Platform && s.Arm == string(fs.Arm) {
				found = true
				if s.MinDetectableChange != want {
					t.Errorf("%s %s: %v, want %v", s.Platform, s.Arm, s.MinDetectableChange, want)
				}
			}
		}
		if !found {
			t.Errorf("no sensitivity of %s", fs.name())
		}
	}
	// One run has no spread to judge by.
	if got := sensitivities(analysed(t, recs[:1])); len(got) != 0 {
		t.Errorf("sensitivities of 1 run: %+v, want none", got)
	}
	if got := sensitivities(analysed(t, []history.Record{})); len(got) != 0 {
		t.Errorf("sensitivities of no record: %+v", got)
	}
}

// A reconcile that analyses the history exports each series' minimum detectable change.
func TestReconcileExportsTheSensitivities(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	metrics.Register(reg)
	scheme := scheme.New()
	sched := testSchedule()
	metrics.ForgetSchedule(sched.Namespace, sched.Name)
	t.Cleanup(func() { metrics.ForgetSchedule(sched.Namespace, sched.Name) })
	sched.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	sched.Spec.Schedule = "0 3 * * *"
	sched.Spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer},
		{Name: "vm", Type: vmbenchv1.PlatformVM}}
	suite := scheduleFinishedSuite(20, vmbenchv1.SuiteComplete, false)
	suite.Namespace, suite.UID, suite.Status.ParametersHash = "bench", "suite-uid", "h1"
	suite.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
		Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sched, suite).WithStatusSubresource(sched).
		WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
	store := &memHistory{records: synthHistory(synth{runs: 6, at: 6, vmStep: 1, ctrStep: 1, seed: 5})}
	r := &ScheduleReconciler{Client: c, Scheme: scheme, Recorder: events.NewFakeRecorder(20), History: store,
		Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC))}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "vmbench_schedule_min_detectable_change" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			if l["namespace"] == "bench" && l["schedule"] == "nightly" {
				got[l["platform"]+"/"+l["arm"]] = m.GetGauge().GetValue()
			}
		}
	}
	for _, want := range []string{"container/container", "vm/vm", "vm/ratio"} {
		if !(got[want] > 0) {
			t.Errorf("vmbench_schedule_min_detectable_change of %s: %v (all: %v), want a positive fraction", want, got[want], got)
		}
	}
}
