package schedule

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

// oldLine is a record as a vmbench older than signed records wrote it: one plain JSON object.
func oldLine(t *testing.T, i int) string {
	t.Helper()
	b, err := json.Marshal(historyRecord(i))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// adoptFixture is a schedule reconciled with the ConfigMap history, whose status says it has
// records already (records, as an older manager wrote it), and whose ConfigMap nightly-history-0
// holds data.
func adoptFixture(t *testing.T, records int32, data string) (*ScheduleReconciler, client.Client, *ConfigMapHistory,
	*events.FakeRecorder, ctrl.Request) {
	t.Helper()
	ctx := context.Background()
	r, c, sched, _, rec := boundsReconciler(t, nil)
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: r.Scheme, Key: testMasterKey, Recorder: rec}
	r.History = store
	if err := c.Get(ctx, client.ObjectKeyFromObject(sched), sched); err != nil {
		t.Fatal(err)
	}
	sched.Status.Records = records
	if err := c.Status().Update(ctx, sched); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, labelledConfigMap("nightly-history-0", sched, data)); err != nil {
		t.Fatal(err)
	}
	return r, c, store, rec, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}
}

func historyData(t *testing.T, c client.Client, name string) string {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "bench", Name: name}, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data[historyKey]
}

func reconcileAdopting(t *testing.T, r *ScheduleReconciler, req ctrl.Request) *vmbenchv1.BenchmarkSchedule {
	t.Helper()
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	sched := &vmbenchv1.BenchmarkSchedule{}
	if err := r.Get(context.Background(), req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	return sched
}

// Upgrade from unsigned records ("nothing is lost"): the first reconcile adopts the schedule's
// unsigned records, once: they count in the history, are written back signed, one HistoryAdopted
// event says how many, and status.historySignedAt is set. A line with a bad signature, a line
// that is no record, and unsigned lines of a ConfigMap the schedule does not control are not
// adopted; nor is an unsigned line written after the adoption (the once-only guard).
func TestScheduleAdoptsUnsignedHistoryOnce(t *testing.T) {
	ctx := context.Background()
	otherKey, _ := testMasterKey.HistoryKey("other-uid")
	badSig, _ := history.SignLine(otherKey, historyRecord(7))
	data := strings.Join([]string{oldLine(t, 1), badSig, oldLine(t, 2), "not a record", `{"phase":"Complete"}`, oldLine(t, 3)}, "\n") + "\n"
	r, c, store, rec, req := adoptFixture(t, 3, data)
	stray := oldLine(t, 8) + "\n"
	if err := c.Create(ctx, labelledConfigMap("nightly-history-1", nil, stray)); err != nil {
		t.Fatal(err)
	}

	sched := reconcileAdopting(t, r, req)
	if sched.Status.HistorySignedAt == nil {
		t.Errorf("status.historySignedAt unset after the adopting reconcile")
	}
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if names := suiteNames(got); names != "nightly-1,nightly-2,nightly-3" {
		t.Errorf("records after adoption %s, want the three unsigned records nightly-1..3 (and not the badly signed nightly-7)", names)
	}
	key, _ := testMasterKey.HistoryKey(sched.UID)
	lines := strings.Split(strings.TrimSuffix(historyData(t, c, "nightly-history-0"), "\n"), "\n")
	if len(lines) != 3 {
		t.Errorf("nightly-history-0 holds %d lines after adoption, want the 3 adopted records: %q", len(lines), lines)
	}
	for _, l := range lines {
		if _, err := history.VerifyLine(key, l); err != nil {
			t.Errorf("line %q after adoption: %v, want it signed with the schedule's key", l, err)
		}
	}
	if d := historyData(t, c, "nightly-history-1"); d != stray {
		t.Errorf("the ConfigMap the schedule does not control was changed to %q", d)
	}
	var adopted []string
	for _, e := range drainNotes(rec) {
		if strings.Contains(e, vmbenchv1.ReasonHistoryAdopted) {
			adopted = append(adopted, e)
		}
	}
	if len(adopted) != 1 || !strings.HasPrefix(adopted[0], "Normal") || !strings.Contains(adopted[0], "signed 3 records") {
		t.Errorf("adoption events %q, want one Normal %s saying 3 records were signed", adopted, vmbenchv1.ReasonHistoryAdopted)
	}

	// A line added unsigned after the adoption (the admission policy refuses it; here it got in)
	// is ignored, never adopted, however often the schedule is reconciled.
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "nightly-history-0"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data[historyKey] += oldLine(t, 4) + "\n"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		sched = reconcileAdopting(t, r, req)
	}
	got, err = store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if names := suiteNames(got); names != "nightly-1,nightly-2,nightly-3" {
		t.Errorf("records %s, want the unsigned nightly-4 written after the adoption not to count", names)
	}
	if d := historyData(t, c, "nightly-history-0"); strings.Count(d, `"sig"`) != 3 {
		t.Errorf("nightly-history-0 holds %q, want the unsigned nightly-4 left unsigned", d)
	}
	n := eventsByReason(rec)
	if n[vmbenchv1.ReasonHistoryAdopted] != 0 || n[vmbenchv1.ReasonHistoryIgnored] != 1 {
		t.Errorf("events %v after the adoption, want no %s and one %s naming the unsigned line", n,
			vmbenchv1.ReasonHistoryAdopted, vmbenchv1.ReasonHistoryIgnored)
	}
}

// A schedule without records (one this version created) adopts nothing: unsigned lines already
// there when it is first reconciled count in nothing, and status.historySignedAt is set at once.
func TestNewScheduleAdoptsNothing(t *testing.T) {
	ctx := context.Background()
	r, c, store, rec, req := adoptFixture(t, 0, oldLine(t, 1)+"\n"+oldLine(t, 2)+"\n")
	sched := reconcileAdopting(t, r, req)
	if sched.Status.HistorySignedAt == nil {
		t.Errorf("status.historySignedAt unset after the first reconcile of a schedule without records")
	}
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("records %s, want none: a schedule without records has no history to adopt", suiteNames(got))
	}
	if d := historyData(t, c, "nightly-history-0"); strings.Contains(d, `"sig"`) {
		t.Errorf("nightly-history-0 holds %q, want its unsigned lines left unsigned", d)
	}
	if n := eventsByReason(rec); n[vmbenchv1.ReasonHistoryAdopted] != 0 {
		t.Errorf("events %v, want no %s", n, vmbenchv1.ReasonHistoryAdopted)
	}
}
