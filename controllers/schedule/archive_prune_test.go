package schedule

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/metrics"
)

// awaitingArchiveGauge is vmbench_schedule_suites_awaiting_archive of the schedule, and whether it
// is exported.
func awaitingArchiveGauge(t *testing.T, namespace, schedule string) (float64, bool) {
	t.Helper()
	reg := prometheus.NewRegistry()
	metrics.Register(reg)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "vmbench_schedule_suites_awaiting_archive" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["namespace"] == namespace && labels["schedule"] == schedule {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// archivingSchedule is a schedule that keeps one complete suite, with two complete, recorded
// suites of it, the older beyond the limit, in a fake cluster; its reconciler knows that the
// manager archives suites.
func archivingSchedule(t *testing.T) (*ScheduleReconciler, client.Client, *vmbenchv1.BenchmarkSchedule, *events.FakeRecorder, []*vmbenchv1.BenchmarkSuite) {
	t.Helper()
	scheme := scheme.New()
	sched := testSchedule()
	sched.UID = "sched-uid"
	sched.CreationTimestamp = metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	sched.Spec.Schedule = "0 3 * * *"
	sched.Spec.SuccessfulHistoryLimit = ptr.To[int32](1)
	sched.Status.LastScheduleTime = &metav1.Time{Time: time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)}
	var suites []*vmbenchv1.BenchmarkSuite
	objs := []client.Object{sched}
	for i, hour := range []int{18, 19} {
		s := scheduleFinishedSuite(hour, vmbenchv1.SuiteComplete, true)
		s.Namespace, s.UID = sched.Namespace, types.UID([]string{"uid-older", "uid-newer"}[i])
		s.Status.Phase = vmbenchv1.SuiteComplete
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
			Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}
		suites = append(suites, s)
		objs = append(objs, s)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(sched, &vmbenchv1.BenchmarkSuite{}).
		WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
	rec := events.NewFakeRecorder(50)
	r := &ScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec, History: &memHistory{}, Archive: true,
		Clock: clocktesting.NewFakePassiveClock(time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC))}
	return r, c, sched, rec, suites
}

// markArchivedWhole puts on the suite the mark the archive puts once it holds the suite whole.
func markArchivedWhole(t *testing.T, c client.Client, s *vmbenchv1.BenchmarkSuite) {
	t.Helper()
	got := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(got.DeepCopy())
	metav1.SetMetaDataAnnotation(&got.ObjectMeta, vmbenchv1.AnnotationArchived, string(got.UID))
	if err := c.Patch(context.Background(), got, patch); err != nil {
		t.Fatal(err)
	}
}

func exists(t *testing.T, c client.Client, s *vmbenchv1.BenchmarkSuite) bool {
	t.Helper()
	err := c.Get(context.Background(), client.ObjectKeyFromObject(s), &vmbenchv1.BenchmarkSuite{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

// S8: with the store down, a schedule deletes no suite before its archive is written, and its
// condition, a Warning event and the gauge say which it keeps; once the store is back, the archive
// writes the suite whole, marks it, and the schedule deletes it then.
func TestScheduleDeletesASuiteOnlyOnceItIsArchivedWhole(t *testing.T) {
	r, c, sched, rec, suites := archivingSchedule(t)
	older, newer := suites[0], suites[1]
	// The store is down: the archive marks no suite (archive_controller_test.go shows that it marks
	// a suite only once suite.json and its tables are written).

	got := reconcileSchedule(t, r, c, sched)
	if !exists(t, c, older) {
		t.Fatal("the schedule deleted a suite the archive does not hold")
	}
	cond := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionAwaitingArchive)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != vmbenchv1.ReasonAwaitingArchive ||
		!strings.Contains(cond.Message, "1 finished suites beyond the history limits are kept until the archive holds them whole: "+older.Name+".") ||
		!strings.Contains(cond.Message, "ArchiveFailed events") || strings.Contains(cond.Message, newer.Name) {
		t.Errorf("condition %+v, want AwaitingArchive True naming %s alone", cond, older.Name)
	}
	evs := drainNotes(rec)
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning AwaitingArchive 1 finished suites beyond the history limits are kept") ||
		!strings.Contains(evs[0], older.Name) {
		t.Errorf("events %q, want one Warning naming %s", evs, older.Name)
	}
	if v, ok := awaitingArchiveGauge(t, sched.Namespace, sched.Name); !ok || v != 1 {
		t.Errorf("vmbench_schedule_suites_awaiting_archive = %v (exported %v), want 1", v, ok)
	}
	// Nothing changed: the condition stays, and no second event.
	sched = reconcileSchedule(t, r, c, got)
	if evs := drainNotes(rec); len(evs) != 0 || !exists(t, c, older) {
		t.Errorf("a second reconcile with the store still down: events %q, suite kept %v", evs, exists(t, c, older))
	}

	// The store is back: the archive writes both suites whole and marks them, as it does.
	for _, s := range suites {
		markArchivedWhole(t, c, s)
	}
	got = reconcileSchedule(t, r, c, sched)
	if exists(t, c, older) {
		t.Error("the suite archived whole is still kept beyond the history limit")
	}
	if !exists(t, c, newer) {
		t.Error("the suite within the history limit was deleted")
	}
	cond = meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionAwaitingArchive)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != vmbenchv1.ReasonNothingAwaitsArchive {
		t.Errorf("condition %+v, want AwaitingArchive False", cond)
	}
	if v, ok := awaitingArchiveGauge(t, sched.Namespace, sched.Name); !ok || v != 0 {
		t.Errorf("vmbench_schedule_suites_awaiting_archive = %v (exported %v), want 0", v, ok)
	}
	if evs := drainNotes(rec); len(evs) != 1 || !strings.HasPrefix(evs[0], "Normal HistoryLimit deleted suite "+older.Name) {
		t.Errorf("events %q, want the deletion", evs)
	}
}

// Without an archive, suites beyond the limit go at once, and the schedule has no AwaitingArchive
// condition nor series.
func TestScheduleWithoutArchiveDeletesAtOnce(t *testing.T) {
	r, c, sched, _, suites := archivingSchedule(t)
	metrics.RecordScheduleAwaitingArchive(sched.Namespace, sched.Name, 3)
	r.Archive = false
	got := reconcileSchedule(t, r, c, sched)
	if exists(t, c, suites[0]) {
		t.Error("without an archive the suite beyond the limit is kept")
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionAwaitingArchive); cond != nil {
		t.Errorf("condition %+v without an archive", cond)
	}
	if v, ok := awaitingArchiveGauge(t, sched.Namespace, sched.Name); ok {
		t.Errorf("vmbench_schedule_suites_awaiting_archive = %v without an archive, want no series", v)
	}
}

// A suite whose archive is incomplete (a table deleted before it was copied) is kept, and the
// condition says why and what to do; a suite that is not to be archived (its spec was invalid, it
// ran nothing) is not waited for.
func TestScheduleKeepsAnIncompleteArchiveAndWaitsForNoUnarchivable(t *testing.T) {
	r, c, sched, _, suites := archivingSchedule(t)
	older := suites[0]
	patch := func(s *vmbenchv1.BenchmarkSuite, change func(*vmbenchv1.BenchmarkSuite)) {
		t.Helper()
		got := &vmbenchv1.BenchmarkSuite{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(s), got); err != nil {
			t.Fatal(err)
		}
		change(got)
		status := got.Status.DeepCopy()
		if err := c.Update(context.Background(), got); err != nil {
			t.Fatal(err)
		}
		got.Status = *status
		if err := c.Status().Update(context.Background(), got); err != nil {
			t.Fatal(err)
		}
	}
	patch(older, func(s *vmbenchv1.BenchmarkSuite) {
		s.Annotations[vmbenchv1.AnnotationArchiveIncomplete] = string(s.UID) + ": result tables were deleted before they could be archived: x-tables"
	})
	got := reconcileSchedule(t, r, c, sched)
	cond := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionAwaitingArchive)
	if !exists(t, c, older) || cond == nil || cond.Status != metav1.ConditionTrue ||
		!strings.Contains(cond.Message, "1 suites are kept as their archive is incomplete") || !strings.Contains(cond.Message, older.Name+". Delete them by hand") {
		t.Errorf("an incomplete archive: kept %v, condition %+v", exists(t, c, older), cond)
	}

	patch(older, func(s *vmbenchv1.BenchmarkSuite) {
		delete(s.Annotations, vmbenchv1.AnnotationArchiveIncomplete)
		s.Status.Phase = vmbenchv1.SuiteFailed
		s.Status.Conditions = []metav1.Condition{{Type: vmbenchv1.ConditionFailed, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonInvalidSpec,
			LastTransitionTime: metav1.Now()}}
	})
	fresh := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(sched), fresh); err != nil {
		t.Fatal(err)
	}
	fresh.Spec.FailedHistoryLimit = ptr.To[int32](0)
	if err := c.Update(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	got = reconcileSchedule(t, r, c, sched)
	if exists(t, c, older) {
		t.Error("a suite that is not to be archived (invalid spec, nothing ran) is kept for the archive")
	}
	if cond := meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionAwaitingArchive); cond == nil || cond.Status != metav1.ConditionFalse {
		t.Errorf("condition %+v, want False", cond)
	}
}
