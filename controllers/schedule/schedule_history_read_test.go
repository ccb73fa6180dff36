package schedule

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/history"
)

// historyReads counts what the history reader asks the API server for.
type historyReads struct {
	fullLists, metadataLists int
	gets                     []string
}

func countingClient(t *testing.T, reads *historyReads, objs ...client.Object) client.Client {
	t.Helper()
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			switch list.(type) {
			case *metav1.PartialObjectMetadataList:
				reads.metadataLists++
			case *corev1.ConfigMapList:
				reads.fullLists++
			}
			return c.List(ctx, list, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				reads.gets = append(reads.gets, key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
}

func historyRecord(i int) history.Record {
	return history.Record{Suite: fmt.Sprintf("nightly-%d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
		Scheduled: time.Date(2026, 11, 1, i, 0, 0, 0, time.UTC), Phase: vmbenchv1.SuiteComplete}
}

func labelledConfigMap(name string, owner *vmbenchv1.BenchmarkSchedule, data string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench",
		Labels: map[string]string{vmbenchv1.LabelHistoryOf: "nightly"}}, Data: map[string]string{historyKey: data}}
	if owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
			Name: owner.Name, UID: owner.UID, Controller: ptr.To(true)}}
	}
	return cm
}

func drainNotes(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// S1: ConfigMaps that carry the history label but are not the schedule's history (no controller,
// another controller, another name) are listed as metadata and never fetched, and one Warning event
// names them, once however often the history is read.
func TestHistoryReaderFetchesOnlyTheSchedulesOwnConfigMaps(t *testing.T) {
	ctx := context.Background()
	sched := testSchedule()
	stranger := &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "other", UID: "other-uid"}}
	big := strings.Repeat("x", 900<<10)
	reads := &historyReads{}
	c := countingClient(t, reads,
		labelledConfigMap("unowned-1", nil, big), labelledConfigMap("nightly-history-5", nil, big),
		labelledConfigMap("nightly-history-6", stranger, big), labelledConfigMap("nightly-history-x", sched, big),
		labelledConfigMap("nightly-history-07", sched, big), labelledConfigMap("nightly-extra", sched, big))
	rec := events.NewFakeRecorder(10)
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: testMasterKey, Recorder: rec}
	for i := 1; i <= 2; i++ {
		if _, err := store.Append(ctx, sched, historyRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	reads.gets = nil
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if names := suiteNames(got); names != "nightly-1,nightly-2" {
		t.Errorf("records %s, want the two appended", names)
	}
	if reads.fullLists != 0 {
		t.Errorf("%d lists of ConfigMaps with their data, want metadata lists only", reads.fullLists)
	}
	for _, name := range reads.gets {
		if name != "nightly-history-0" {
			t.Errorf("fetched %s, which is not the schedule's history", name)
		}
	}
	notes := drainNotes(rec)
	if len(notes) != 1 {
		t.Fatalf("events %q, want one Warning naming the ignored ConfigMaps once over three reads", notes)
	}
	for _, want := range []string{"Warning", vmbenchv1.ReasonHistoryIgnored, "unowned-1", "nightly-history-5", "nightly-history-6",
		"nightly-history-x", "nightly-history-07", "nightly-extra", "6 ConfigMaps"} {
		if !strings.Contains(notes[0], want) {
			t.Errorf("event %q does not say %q", notes[0], want)
		}
	}
	// Another one labelled: told again, with it.
	if err := c.Create(ctx, labelledConfigMap("unowned-2", nil, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := store.List(ctx, sched); err != nil {
		t.Fatal(err)
	}
	if notes := drainNotes(rec); len(notes) != 1 || !strings.Contains(notes[0], "unowned-2") {
		t.Errorf("events after one more labelled ConfigMap %q, want one naming it", notes)
	}
}

// A history read again while its ConfigMaps are unchanged fetches none of them; a changed one is
// fetched again.
func TestHistoryReaderKeepsParsedRecordsWhileTheConfigMapsStay(t *testing.T) {
	ctx := context.Background()
	sched := testSchedule()
	reads := &historyReads{}
	c := countingClient(t, reads)
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: testMasterKey}
	for i := 1; i <= 3; i++ {
		if _, err := store.Append(ctx, sched, historyRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	// A fresh reader fetches once, then reads from what it parsed.
	store = &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: testMasterKey}
	reads.gets = nil
	for range 3 {
		got, err := store.List(ctx, sched)
		if err != nil || len(got) != 3 {
			t.Fatalf("List = %d records, %v", len(got), err)
		}
	}
	if len(reads.gets) != 1 {
		t.Errorf("three reads of an unchanged history fetched %v, want nightly-history-0 once", reads.gets)
	}
	// Someone changes the ConfigMap: fetched again, and what changed does not count.
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "nightly-history-0"}, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data[historyKey] += `{"suite":"forged","uid":"f","scheduled":"2099-01-01T00:00:00Z","phase":"Complete"}` + "\n"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	reads.gets = nil
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if len(reads.gets) != 1 || suiteNames(got) != "nightly-1,nightly-2,nightly-3" {
		t.Errorf("after a change: fetched %v, records %s; want one fetch and the three signed records", reads.gets, suiteNames(got))
	}
}

// S5: lines the manager did not sign, or that were changed, count in nothing; the event says how
// many and where; the manager's next write there drops them. Lines moved out of order are read in
// time order, a copied line once.
func TestHistoryReaderIgnoresLinesTheManagerDidNotSign(t *testing.T) {
	ctx := context.Background()
	sched := testSchedule()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	rec := events.NewFakeRecorder(10)
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: testMasterKey, Recorder: rec}
	for i := 1; i <= 3; i++ {
		if _, err := store.Append(ctx, sched, historyRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "nightly-history-0"}, cm); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(cm.Data[historyKey], "\n"), "\n")
	// Signed under another schedule's key: a line copied from another history.
	otherKey, _ := testMasterKey.HistoryKey("other-uid")
	copied, _ := history.SignLine(otherKey, historyRecord(7))
	forged := `{"suite":"nightly-9","uid":"uid-9","scheduled":"2099-01-01T00:00:00Z","phase":"Complete"}`
	changed := strings.Replace(lines[1], `"phase":"Complete"`, `"phase":"Failed"`, 1)
	cm.Data[historyKey] = strings.Join([]string{lines[2], forged, lines[0], changed, copied, lines[0]}, "\n") + "\n"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if names := suiteNames(got); names != "nightly-1,nightly-3" {
		t.Errorf("records %s, want the signed, unchanged nightly-1 and nightly-3 in time order, each once", names)
	}
	notes := drainNotes(rec)
	if len(notes) != 1 || !strings.Contains(notes[0], "1 lines of ConfigMap nightly-history-0 carry no signature") ||
		!strings.Contains(notes[0], "2 lines of ConfigMap nightly-history-0 fail the signature check") {
		t.Errorf("events %q, want one telling 1 unsigned and 2 failing lines of nightly-history-0", notes)
	}
	// The next record rewrites the ConfigMap with the manager's lines only.
	if _, err := store.Append(ctx, sched, historyRecord(4)); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "bench", Name: "nightly-history-0"}, cm); err != nil {
		t.Fatal(err)
	}
	if data := cm.Data[historyKey]; strings.Contains(data, "nightly-9") || strings.Contains(data, "nightly-7") || strings.Count(data, "\n") != 4 {
		t.Errorf("after the next write the ConfigMap holds %q, want the 4 signed lines only", data)
	}
	// A reader with another master key trusts none of it.
	otherMaster := append(testMasterKey[:0:0], testMasterKey...)
	otherMaster[0] ^= 1
	got, err = (&ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: otherMaster}).List(ctx, sched)
	if err != nil || len(got) != 0 {
		t.Errorf("under another master key: %d records, %v; want none", len(got), err)
	}
	// Without a usable key nothing is read or written, and the error says what to check.
	_, err = (&ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New()}).List(ctx, sched)
	if err == nil || !strings.Contains(err.Error(), "--master-key-secret") {
		t.Errorf("without a key: %v, want an error naming --master-key-secret", err)
	}
}

// S1: a history beyond the read bound is refused with the bound and what to delete, and the bytes
// the manager keeps stay within its own bound, the oldest records going first.
func TestHistoryByteBounds(t *testing.T) {
	ctx := context.Background()
	sched := testSchedule()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	line := len(mustJSON(t, historyRecord(1))) + 1
	store := &ConfigMapHistory{Client: c, Reader: c, Scheme: scheme.New(), Key: testMasterKey, MaxBytes: 2 * line, MaxKeptBytes: 5 * line,
		MaxReadBytes: 8 * line}
	for i := 1; i <= 9; i++ {
		if _, err := store.Append(ctx, sched, historyRecord(i)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := store.List(ctx, sched)
	if err != nil {
		t.Fatal(err)
	}
	if names := suiteNames(got); names != "nightly-5,nightly-6,nightly-7,nightly-8,nightly-9" {
		t.Errorf("records %s, want the 5 newest that fit %d bytes", names, 5*line)
	}
	// Someone fills a ConfigMap the schedule controls past the read bound.
	if err := c.Create(ctx, labelledConfigMap("nightly-history-40", sched, strings.Repeat("y", 4*line))); err != nil {
		t.Fatal(err)
	}
	_, err = store.List(ctx, sched)
	if err == nil || !strings.Contains(err.Error(), "nightly-history-40") || !strings.Contains(err.Error(), "delete the ConfigMaps") {
		t.Errorf("a history over the read bound: %v, want it refused naming nightly-history-40 and what to delete", err)
	}
	if _, err := store.Append(ctx, sched, historyRecord(10)); err == nil {
		t.Error("a history over the read bound was appended to")
	}
}

// The shipped bounds: a schedule's kept history is a ConfigMap under what the reader reads.
func TestHistoryBoundsShipped(t *testing.T) {
	if MaxHistoryReadBytes != 16<<20 || MaxHistoryKeptBytes+MaxHistoryBytes != MaxHistoryReadBytes || historyCacheBytes > 32<<20 {
		t.Errorf("read %d, kept %d, per ConfigMap %d, cache %d", MaxHistoryReadBytes, MaxHistoryKeptBytes, MaxHistoryBytes, historyCacheBytes)
	}
}

// S5: the scheduled-at annotation counts only within the minute the suite's name encodes.
func TestScheduledAtTrustsTheNameOverTheAnnotation(t *testing.T) {
	at := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, annotation string
		want             time.Time
	}{
		{scheduledSuiteName("nightly", at), "2026-11-20T03:00:30Z", at.Add(30 * time.Second)},
		{scheduledSuiteName("nightly", at), "2099-01-01T00:00:00Z", at},
		{scheduledSuiteName("nightly", at), "garbage", at},
		{"by-hand", "2026-11-20T05:00:00Z", at.Add(2 * time.Hour)},
		{"by-hand", "", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		s := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: tc.name, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
			Annotations: map[string]string{vmbenchv1.AnnotationScheduledAt: tc.annotation}}}
		if got := scheduledAt(s); !got.Equal(tc.want) {
			t.Errorf("%s with %q: %v, want %v", tc.name, tc.annotation, got, tc.want)
		}
	}
}

// nodeGets counts node GETs.
type nodeGets struct {
	client.Reader
	names []string
}

func (n *nodeGets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Node); ok {
		n.names = append(n.names, key.Name)
	}
	return n.Reader.Get(ctx, key, obj, opts...)
}

// S5: a record naming more nodes than a suite can run on makes one poll read at most 32 of them,
// each once, and says so.
func TestVersionTriggerReadsAtMost32Nodes(t *testing.T) {
	r, c, rec, _, req, _ := triggerFixture(t)
	store := r.History.(*memHistory)
	var nodes []vmbenchv1.NodeEnvironment
	for i := range 5000 {
		nodes = append(nodes, triggerNode(fmt.Sprintf("made-up-%d", i), "6.1"), triggerNode("n1", "6.1"))
	}
	store.records[0].Environments = []vmbenchv1.RunEnvironment{{Platform: vmbenchv1.PlatformContainer, Nodes: nodes}}
	gets := &nodeGets{Reader: c}
	r.APIReader = gets
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, n := range gets.names {
		if seen[n] {
			t.Errorf("node %s read twice in one poll", n)
		}
		seen[n] = true
	}
	if len(gets.names) != maxTriggerNodes {
		t.Errorf("one poll read %d nodes, want %d", len(gets.names), maxTriggerNodes)
	}
	notes := strings.Join(drainNotes(rec), "\n")
	if !strings.Contains(notes, fmt.Sprintf("names %d nodes more than the 32 one poll reads", 5001-maxTriggerNodes)) {
		t.Errorf("events %q, want one saying how many nodes were not read", notes)
	}
}

// S5: the recorded mark counts only when the history holds the suite; a suite marked before its
// record was written is recorded, one older than the whole history is not recorded again.
func TestRecordFinishedChecksTheMarkAgainstTheHistory(t *testing.T) {
	ctx := context.Background()
	scheme := scheme.New()
	sched := testSchedule()
	own := func(s *vmbenchv1.BenchmarkSuite, uid string) *vmbenchv1.BenchmarkSuite {
		s.Namespace, s.UID = "bench", types.UID(uid)
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
			Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}
		return s
	}
	inHistory := own(scheduleFinishedSuite(5, vmbenchv1.SuiteComplete, true), "in-history")
	markedEarly := own(scheduleFinishedSuite(6, vmbenchv1.SuiteComplete, true), "marked-early")
	pruned := own(scheduleFinishedSuite(1, vmbenchv1.SuiteComplete, true), "pruned")
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sched, inHistory, markedEarly, pruned).Build()
	store := &memHistory{records: []history.Record{{Suite: inHistory.Name, UID: inHistory.UID, Scheduled: scheduledAt(inHistory),
		Phase: vmbenchv1.SuiteComplete}}}
	r := &ScheduleReconciler{Client: c, Scheme: scheme, History: store}
	appended, err := r.recordFinished(ctx, sched, []*vmbenchv1.BenchmarkSuite{inHistory, markedEarly, pruned})
	if err != nil {
		t.Fatal(err)
	}
	if got := suiteNames(store.records); !appended || got != inHistory.Name+","+markedEarly.Name {
		t.Errorf("appended %v, history %s; want %s added after %s, and %s (older than the history) not", appended, got,
			markedEarly.Name, inHistory.Name, pruned.Name)
	}
}
