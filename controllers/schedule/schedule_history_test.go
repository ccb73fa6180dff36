package schedule

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/platform"
)

// testMasterKey is the master key the history tests sign with.
var testMasterKey = platform.MasterKey(bytes.Repeat([]byte("m"), platform.MasterKeySize))

func testSchedule() *vmbenchv1.BenchmarkSchedule {
	return &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: "sched-uid"}}
}

func historyConfigMaps(t *testing.T, c client.Client) []corev1.ConfigMap {
	t.Helper()
	var list corev1.ConfigMapList
	if err := c.List(context.Background(), &list, client.InNamespace("bench"), client.MatchingLabels{vmbenchv1.LabelHistoryOf: "nightly"}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func suiteNames(recs []history.Record) string {
	var names []string
	for _, r := range recs {
		names = append(names, r.Suite)
	}
	return strings.Join(names, ",")
}

func TestConfigMapHistoryBoundsAndOwnership(t *testing.T) {
	ctx := context.Background()
	scheme := scheme.New()
	// Someone else's ConfigMap with the label: not part of the history, never written.
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-history-7", Namespace: "bench",
		Labels: map[string]string{vmbenchv1.LabelHistoryOf: "nightly"}},
		Data: map[string]string{historyKey: `{"suite":"forged","uid":"x"}` + "\n"}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(foreign).Build()
	// Room for two records a ConfigMap, and four records in all.
	rec := func(i int) history.Record {
		return history.Record{Suite: fmt.Sprintf("nightly-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			Scheduled: time.Date(2026, 11, 1, i, 0, 0, 0, time.UTC), Phase: vmbenchv1.SuiteComplete}
	}
	size := len(mustJSON(t, rec(1))) + 1
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme, Key: testMasterKey, MaxRecords: 4, MaxBytes: 2*size + 1}
	sched := testSchedule()
	for i := 1; i <= 6; i++ {
		n, err := store.Append(ctx, sched, rec(i))
		if err != nil {
			t.Fatal(err)
		}
		if want := min(i, 4); n != want {
			t.Errorf("after %d appends the store counts %d records, want %d", i, n, want)
		}
	}
	// The same suite again: no second record.
	if n, err := store.Append(ctx, sched, rec(6)); err != nil || n != 4 {
		t.Errorf("appending a recorded suite again: %d records, %v", n, err)
	}
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if names := suiteNames(got); names != "nightly-3,nightly-4,nightly-5,nightly-6" {
		t.Errorf("records %s, want the 4 latest, oldest first", names)
	}
	cms := historyConfigMaps(t, c)
	var ours []string
	for _, cm := range cms {
		if cm.Name == foreign.Name {
			if cm.Data[historyKey] != foreign.Data[historyKey] {
				t.Errorf("the foreign ConfigMap was written: %q", cm.Data[historyKey])
			}
			continue
		}
		ours = append(ours, cm.Name)
		if len(cm.Data[historyKey]) > store.MaxBytes {
			t.Errorf("%s holds %d bytes, more than the bound %d", cm.Name, len(cm.Data[historyKey]), store.MaxBytes)
		}
		ref := metav1.GetControllerOf(&cm)
		if ref == nil || ref.Kind != "BenchmarkSchedule" || ref.UID != sched.UID {
			t.Errorf("%s is controlled by %v, not by the schedule", cm.Name, ref)
		}
		if _, ok := cm.Labels[vmbenchv1.LabelSuite]; !ok {
			t.Errorf("%s lacks the label %s that the manager's admission policy requires", cm.Name, vmbenchv1.LabelSuite)
		}
	}
	// Records 1-2 filled history-0, which emptied and went; 3-4 are in history-1, 5-6 in history-2.
	if strings.Join(ours, ",") != "nightly-history-1,nightly-history-2" {
		t.Errorf("history ConfigMaps %v, want nightly-history-1 and -2", ours)
	}
}

func TestConfigMapHistoryRefusesARecordLargerThanAConfigMap(t *testing.T) {
	scheme := scheme.New()
	c := fake.NewClientBuilder().WithScheme(scheme).Build()
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme, Key: testMasterKey, MaxBytes: 64}
	_, err := store.Append(context.Background(), testSchedule(), history.Record{Suite: strings.Repeat("x", 80), UID: "u"})
	if err == nil || !strings.Contains(err.Error(), "more than a history ConfigMap holds") {
		t.Errorf("err %v", err)
	}
}

func mustJSON(t *testing.T, r history.Record) string {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: testMasterKey}
	if _, err := store.Append(context.Background(), testSchedule(), r); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(historyConfigMaps(t, c)[0].Data[historyKey], "\n")
}

// finishedSuite is a suite of the schedule that ended in phase at the scheduled time hour.
func scheduleFinishedSuite(hour int, phase vmbenchv1.SuitePhase, recorded bool) *vmbenchv1.BenchmarkSuite {
	at := time.Date(2026, 11, 1, hour, 0, 0, 0, time.UTC)
	s := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{
		Name:        scheduledSuiteName("nightly", at),
		Annotations: map[string]string{vmbenchv1.AnnotationScheduledAt: at.Format(time.RFC3339)},
	}}
	if recorded {
		s.Annotations[vmbenchv1.AnnotationRecorded] = "true"
	}
	cond := vmbenchv1.ConditionComplete
	if phase == vmbenchv1.SuiteFailed {
		cond = vmbenchv1.ConditionFailed
	}
	meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: cond, Status: metav1.ConditionTrue, Reason: "x"})
	return s
}

func TestPruneFinishedKeepsTheNewestPerOutcome(t *testing.T) {
	finished := []*vmbenchv1.BenchmarkSuite{
		scheduleFinishedSuite(1, vmbenchv1.SuiteComplete, true), scheduleFinishedSuite(5, vmbenchv1.SuiteComplete, true),
		scheduleFinishedSuite(3, vmbenchv1.SuiteComplete, true), scheduleFinishedSuite(2, vmbenchv1.SuiteFailed, true),
		scheduleFinishedSuite(4, vmbenchv1.SuiteFailed, true), scheduleFinishedSuite(0, vmbenchv1.SuiteComplete, false),
	}
	name := func(h int) string { return scheduledSuiteName("nightly", time.Date(2026, 11, 1, h, 0, 0, 0, time.UTC)) }
	for _, tc := range []struct {
		name             string
		success, failure *int32
		want             []string
	}{
		// Defaults 3 and 1. The unrecorded suite of hour 0 is kept, and counted, until its record is written.
		{name: "defaults", want: []string{name(2)}},
		{name: "keep one of each", success: ptr.To[int32](1), failure: ptr.To[int32](1), want: []string{name(3), name(1), name(2)}},
		{name: "keep none", success: ptr.To[int32](0), failure: ptr.To[int32](0), want: []string{name(5), name(3), name(1), name(4), name(2)}},
		{name: "keep all", success: ptr.To[int32](10), failure: ptr.To[int32](10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pruneFinished(vmbenchv1.BenchmarkScheduleSpec{SuccessfulHistoryLimit: tc.success, FailedHistoryLimit: tc.failure}, finished)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("deletes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRecordOfAFinishedSuite(t *testing.T) {
	samples := func(values ...float64) []vmbenchv1.Sample {
		var out []vmbenchv1.Sample
		for i, v := range values {
			// Two nodes per repetition: the repetition mean is the unit.
			out = append(out, vmbenchv1.Sample{Repetition: int32(i + 1), Node: "master", Value: v - 1},
				vmbenchv1.Sample{Repetition: int32(i + 1), Node: "node01", Value: v + 1})
		}
		return out
	}
	metric := func(dir vmbenchv1.Direction, values ...float64) vmbenchv1.MetricSummary {
		return vmbenchv1.MetricSummary{Name: "m", Unit: "u", Direction: dir, Samples: samples(values...), N: int32(2 * len(values))}
	}
	s := scheduleFinishedSuite(2, vmbenchv1.SuiteComplete, false)
	s.UID = "suite-uid"
	s.Spec.Baseline = "container"
	s.Status.CompletionTime = &metav1.Time{Time: time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)}
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "cpu", Platform: "container", Metrics: []vmbenchv1.MetricSummary{metric(vmbenchv1.HigherIsBetter, 100, 100*math.E)}},
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{metric(vmbenchv1.HigherIsBetter, 50, 50*math.E)}},
		{Benchmark: "lat", Platform: "container", Metrics: []vmbenchv1.MetricSummary{metric(vmbenchv1.LowerIsBetter, 10)}},
		{Benchmark: "lat", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{metric(vmbenchv1.LowerIsBetter, 20)}},
	}
	s.Status.ParametersHash = "0123456789abcdef"
	s.Status.Environments = []vmbenchv1.RunEnvironment{{ID: "e1", Platform: vmbenchv1.PlatformContainer,
		Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.1"}}}}
	rec := recordOf(s, vmbenchv1.SuiteComplete)
	if rec.ParametersHash != "0123456789abcdef" || len(rec.Environments) != 1 || rec.Environments[0].Nodes[0].KernelVersion != "6.1" {
		t.Errorf("record keeps parameters hash %q and environments %+v, want the suite's", rec.ParametersHash, rec.Environments)
	}
	if rec.Suite != s.Name || rec.UID != "suite-uid" || rec.Phase != vmbenchv1.SuiteComplete ||
		!rec.Scheduled.Equal(time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)) || !rec.Finished.Equal(s.Status.CompletionTime.Time) {
		t.Errorf("record header %+v", rec)
	}
	if len(rec.Metrics) != 4 {
		t.Fatalf("%d metric records, want 4", len(rec.Metrics))
	}
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-9 }
	// Repetition means 100 and 100e: logs ln 100 and ln 100 + 1, mean ln 100 + 0.5, variance 0.5.
	c := rec.Metrics[0]
	if c.N != 2 || c.Samples != 4 || !near(c.MeanLog, math.Log(100)+0.5) || !near(c.VarLog, 0.5) || c.Ratio != nil {
		t.Errorf("container cpu %+v", c)
	}
	// The VM at half the container: ratio 0.5, with an interval around it.
	v := rec.Metrics[1]
	if !near(v.Ratio, 0.5) || v.RatioLow == nil || v.RatioHigh == nil || *v.RatioLow >= 0.5 || *v.RatioHigh <= 0.5 {
		t.Errorf("vm cpu %+v", v)
	}
	// Twice the latency is half as good; one repetition: a ratio without an interval.
	l := rec.Metrics[3]
	if !near(l.Ratio, 0.5) || l.RatioLow != nil || l.N != 1 {
		t.Errorf("vm lat %+v", l)
	}
}

// The record of the largest suite the API admits (status.results of 48 benchmark-platform pairs, 48
// metrics each, 30 repetitions, the longest names) fits in one history ConfigMap, so that no
// finished suite is left unrecorded for its size.
func TestLargestRecordFitsAConfigMap(t *testing.T) {
	s := scheduleFinishedSuite(1, vmbenchv1.SuiteComplete, false)
	s.Spec.Baseline = "container"
	for b := range 12 {
		for _, p := range []string{"container", "vm", "kata", "platformname"} {
			var ms []vmbenchv1.MetricSummary
			for m := range 48 {
				var samples []vmbenchv1.Sample
				for r := int32(1); r <= 30; r++ {
					samples = append(samples, vmbenchv1.Sample{Repetition: r, Node: "master", Value: 1000.123456789 + float64(r)*float64(m+1)})
				}
				ms = append(ms, vmbenchv1.MetricSummary{Name: fmt.Sprintf("%s%02d", strings.Repeat("m", 62), m), Unit: strings.Repeat("u", 16),
					Direction: vmbenchv1.LowerIsBetter, Samples: samples, N: 30})
			}
			s.Status.Results = append(s.Status.Results, vmbenchv1.BenchmarkResult{Benchmark: fmt.Sprintf("%s%02d", strings.Repeat("b", 22), b), Platform: p, Metrics: ms})
		}
	}
	// Four environments at their longest, as status.environments holds at most.
	for i := range 4 {
		env := vmbenchv1.RunEnvironment{ID: fmt.Sprintf("%012d", i), Platform: vmbenchv1.PlatformVM, KubeVirtVersion: strings.Repeat("k", 64),
			LauncherImage: strings.Repeat("l", 512), RunnerImage: strings.Repeat("r", 512), Message: strings.Repeat("m", 256),
			LauncherImageRef: strings.Repeat("L", 512), RunnerImageRef: strings.Repeat("R", 512), MachineType: strings.Repeat("t", 64)}
		for n := range 8 {
			env.Nodes = append(env.Nodes, vmbenchv1.NodeEnvironment{Name: fmt.Sprintf("%0253d", n), KernelVersion: strings.Repeat("k", 64),
				OSImage: strings.Repeat("o", 128), ContainerRuntimeVersion: strings.Repeat("c", 64), KubeletVersion: strings.Repeat("v", 32),
				Architecture: strings.Repeat("a", 16), CPUModel: strings.Repeat("m", 64)})
		}
		s.Status.Environments = append(s.Status.Environments, env)
	}
	s.Status.ParametersHash = strings.Repeat("p", 16)
	size := len(mustJSON(t, recordOf(s, vmbenchv1.SuiteComplete)))
	t.Logf("the largest record takes %d bytes", size)
	if size+1 > MaxHistoryBytes {
		t.Errorf("the largest record takes %d bytes, more than a history ConfigMap holds (%d)", size, MaxHistoryBytes)
	}
}
