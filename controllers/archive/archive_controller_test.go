package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/archivemark"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/archive"
)

// memStore is an archive.Store in memory that records its calls, and fails Put of a key while
// putFails says so.
type memStore struct {
	mu       sync.Mutex
	objects  map[string][]byte
	puts     []string
	exists   int
	putFails func(key string) error
}

func newMemStore() *memStore { return &memStore{objects: map[string][]byte{}} }

func (m *memStore) Put(_ context.Context, key string, body []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.putFails != nil {
		if err := m.putFails(key); err != nil {
			return err
		}
	}
	m.puts = append(m.puts, key)
	m.objects[key] = slices.Clone(body)
	return nil
}

func (m *memStore) Exists(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.exists++
	_, ok := m.objects[key]
	return ok, nil
}

func (m *memStore) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[key]
	if !ok {
		return nil, fmt.Errorf("no object %s", key)
	}
	return b, nil
}

func (m *memStore) List(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for k := range m.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func (m *memStore) Location(key string) string { return "mem://" + key }

// completeSuiteWithManagedFields is a Complete suite with managedFields, as the API server returns it.
func completeSuiteWithManagedFields() *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "bench"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms:  []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}},
			Baseline:   "container",
			Benchmarks: []vmbenchv1.Benchmark{{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC}},
		},
	}
	s.UID = "uid-1"
	s.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "vmbench", Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: vmbenchv1.GroupVersion.String(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}}}
	s.Status.Phase = vmbenchv1.SuiteComplete
	s.Status.Progress = "6/6"
	return s
}

// tableMap is a ConfigMap of a run's tables, controlled by the suite of uid.
func tableMap(name, suite string, uid types.UID, labels map[string]string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", Labels: labels,
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "vmbench", Operation: metav1.ManagedFieldsOperationApply,
			APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{}}`)}}}},
		Data: map[string]string{"net.master-node01.csv": "t,bps\n0,1e9\n"}}
	if uid != "" {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSuite", Name: suite, UID: uid,
			Controller: ptr.To(true)}}
	}
	return cm
}

// archiveWorld is a fake cluster with a finished suite, two of its table ConfigMaps, its raw
// outputs, and a ConfigMap that has the suite's labels but another controller. Every write to the
// cluster but the archive's mark on the suite fails the test: the archive only reads.
func archiveWorld(t *testing.T, suite *vmbenchv1.BenchmarkSuite) client.Client {
	t.Helper()
	return archiveWorldWith(t, suite, interceptor.Funcs{})
}

// onlyArchiveMark says whether a patch changes nothing but the archive's annotations (and the
// resourceVersion it is made against).
func onlyArchiveMark(t *testing.T, obj client.Object, patch client.Patch) bool {
	t.Helper()
	data, err := patch.Data(obj)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &body); err != nil || len(body) != 1 || body["metadata"] == nil {
		return false
	}
	for k, v := range body["metadata"] {
		switch k {
		case "resourceVersion":
		case "annotations":
			var annotations map[string]string
			if err := json.Unmarshal(v, &annotations); err != nil {
				return false
			}
			for a := range annotations {
				if a != vmbenchv1.AnnotationArchived && a != vmbenchv1.AnnotationArchiveIncomplete {
					return false
				}
			}
		default:
			return false
		}
	}
	_, isSuite := obj.(*vmbenchv1.BenchmarkSuite)
	return isSuite
}

// archiveWorldWith is archiveWorld whose Get of a ConfigMap goes through getConfigMap when set.
func archiveWorldWith(t *testing.T, suite *vmbenchv1.BenchmarkSuite, extra interceptor.Funcs) client.Client {
	t.Helper()
	tables := func(run string) map[string]string {
		return map[string]string{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelTablesOf: run, vmbenchv1.LabelPlatform: strings.Split(run, "-")[1]}
	}
	objs := []client.Object{suite,
		tableMap("demo-vm-1-tables", suite.Name, suite.UID, tables("demo-vm-1")),
		tableMap("demo-container-1-tables", suite.Name, suite.UID, tables("demo-container-1")),
		tableMap("demo-container-1-raw", suite.Name, suite.UID, map[string]string{vmbenchv1.LabelSuite: suite.Name, cachepolicy.LabelRawOf: "demo-container-1"}),
		tableMap("forged-tables", suite.Name, "someone-else", tables("demo-container-2")),
	}
	refuse := func(what string) error {
		t.Errorf("the archive wrote to the cluster: %s", what)
		return errors.New("the archive must not write")
	}
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		// The API server returns managedFields, which the fake client drops.
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if extra.Get != nil {
				if err := extra.Get(ctx, c, key, obj, opts...); err != nil {
					return err
				}
			}
			if err := c.Get(ctx, key, obj, opts...); err != nil {
				return err
			}
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "vmbench", Operation: metav1.ManagedFieldsOperationApply}})
			return nil
		},
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
			return refuse("create")
		},
		Update: func(context.Context, client.WithWatch, client.Object, ...client.UpdateOption) error {
			return refuse("update")
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if !onlyArchiveMark(t, obj, patch) {
				return refuse("patch")
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(context.Context, client.WithWatch, client.Object, ...client.DeleteOption) error {
			return refuse("delete")
		},
		SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
			return refuse("status update")
		},
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return refuse("status patch")
		},
	}).Build()
}

func archiveReconciler(c client.Client, store archive.Store) (*ArchiveReconciler, *events.FakeRecorder) {
	rec := events.NewFakeRecorder(10)
	return &ArchiveReconciler{Client: c, APIReader: c, Store: store, Prefix: "vmbench/prod", Recorder: rec}, rec
}

func reconcileSuite(t *testing.T, r *ArchiveReconciler, s *vmbenchv1.BenchmarkSuite) error {
	t.Helper()
	_, err := r.Reconcile(t.Context(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}})
	return err
}

var _ archive.Store = (*memStore)(nil)

func drain(rec *events.FakeRecorder) []string {
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

func TestArchiveWritesTheSuitesTablesThenTheSuite(t *testing.T) {
	suite := completeSuiteWithManagedFields()
	c := archiveWorld(t, suite)
	store := newMemStore()
	r, rec := archiveReconciler(c, store)
	if err := reconcileSuite(t, r, suite); err != nil {
		t.Fatal(err)
	}
	dir := "vmbench/prod/bench/demo/uid-1"
	want := []string{dir + "/tables/demo-container-1-tables.json", dir + "/tables/demo-vm-1-tables.json", dir + "/suite.json"}
	if diff := cmp.Diff(want, store.puts); diff != "" {
		t.Errorf("the suite's own tables first, suite.json last; no raw outputs, nothing of another controller (-want +got):\n%s", diff)
	}
	var got vmbenchv1.BenchmarkSuite
	if err := json.Unmarshal(store.objects[dir+"/suite.json"], &got); err != nil {
		t.Fatal(err)
	}
	if got.Kind != "BenchmarkSuite" || got.APIVersion != vmbenchv1.GroupVersion.String() || got.ManagedFields != nil {
		t.Errorf("suite.json has kind %q, apiVersion %q, managedFields %v; want the kind and no managedFields", got.Kind, got.APIVersion, got.ManagedFields)
	}
	if got.Status.Phase != vmbenchv1.SuiteComplete || got.Status.Progress != "6/6" || got.UID != suite.UID || !cmp.Equal(got.Spec, suite.Spec) {
		t.Errorf("suite.json is not the suite with its status: %+v", got)
	}
	var table corev1.ConfigMap
	if err := json.Unmarshal(store.objects[dir+"/tables/demo-vm-1-tables.json"], &table); err != nil {
		t.Fatal(err)
	}
	if table.Kind != "ConfigMap" || table.Data["net.master-node01.csv"] != "t,bps\n0,1e9\n" || table.ManagedFields != nil {
		t.Errorf("table %+v, want the ConfigMap with its data and no managedFields", table)
	}
	events := drain(rec)
	if len(events) != 1 || !strings.HasPrefix(events[0], "Normal Archived results archived to mem://"+dir+"/: suite.json and 2 result-table ConfigMaps") {
		t.Errorf("events %q, want one Archived naming the location", events)
	}

	// Known to be archived: no question to the store, nothing written, no event.
	if err := reconcileSuite(t, r, suite); err != nil {
		t.Fatal(err)
	}
	if store.exists != 1 || len(store.puts) != 3 || len(drain(rec)) != 0 {
		t.Errorf("a second reconcile asked the store %d times, wrote %d objects; want 1 and 3", store.exists, len(store.puts))
	}
	marked := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(suite), marked); err != nil {
		t.Fatal(err)
	}
	if marked.Annotations[vmbenchv1.AnnotationArchived] != string(suite.UID) || marked.Annotations[vmbenchv1.AnnotationArchiveIncomplete] != "" {
		t.Errorf("the suite is not marked archived whole: %v", marked.Annotations)
	}
	// After a restart the mark says it is archived: the store is not asked, nothing is written.
	r2, rec2 := archiveReconciler(c, store)
	if err := reconcileSuite(t, r2, suite); err != nil {
		t.Fatal(err)
	}
	if store.exists != 1 || len(store.puts) != 3 || len(drain(rec2)) != 0 {
		t.Errorf("after a restart: asked %d times, wrote %d objects; want 1 and 3", store.exists, len(store.puts))
	}
}

// A restart between the archive's writes and its mark: the next pass finds suite.json (HEAD),
// writes nothing again, and marks the suite as suite.json says, whole here.
func TestArchiveMarksASuiteWrittenBeforeARestart(t *testing.T) {
	suite := completeSuiteWithManagedFields()
	store := newMemStore()
	r, _ := archiveReconciler(archiveWorld(t, suite), store)
	if err := reconcileSuite(t, r, suite); err != nil {
		t.Fatal(err)
	}
	written := len(store.puts)
	// The same store, a cluster whose suite never got the mark.
	c := archiveWorld(t, suite)
	r2, rec2 := archiveReconciler(c, store)
	if err := reconcileSuite(t, r2, suite); err != nil {
		t.Fatal(err)
	}
	if len(store.puts) != written {
		t.Errorf("wrote %v again", store.puts[written:])
	}
	got := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(suite), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[vmbenchv1.AnnotationArchived] != string(suite.UID) {
		t.Errorf("not marked archived whole: %v", got.Annotations)
	}
	if evs := drain(rec2); len(evs) != 0 {
		t.Errorf("events %q, want none: nothing was written", evs)
	}
}

// S8: a table ConfigMap deleted between the listing and its read leaves an archive that is not
// whole: suite.json names the missing table, the suite is marked incomplete and never archived
// whole, and a Warning says what to do. After a restart, the mark follows what suite.json says.
func TestArchiveWithAVanishedTableIsNeverMarkedWhole(t *testing.T) {
	suite := completeSuiteWithManagedFields()
	vanish := interceptor.Funcs{Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
		if _, ok := obj.(*corev1.ConfigMap); ok && key.Name == "demo-vm-1-tables" {
			return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
		}
		return nil
	}}
	store := newMemStore()
	c := archiveWorldWith(t, suite, vanish)
	r, rec := archiveReconciler(c, store)
	if err := reconcileSuite(t, r, suite); err != nil {
		t.Fatal(err)
	}
	dir := "vmbench/prod/bench/demo/uid-1"
	var archivedSuite vmbenchv1.BenchmarkSuite
	if err := json.Unmarshal(store.objects[dir+"/suite.json"], &archivedSuite); err != nil {
		t.Fatal(err)
	}
	wantNote := "uid-1: result tables were deleted before they could be archived: demo-vm-1-tables"
	if archivedSuite.Annotations[vmbenchv1.AnnotationArchiveIncomplete] != wantNote {
		t.Errorf("suite.json's annotations %v, want %s=%q", archivedSuite.Annotations, vmbenchv1.AnnotationArchiveIncomplete, wantNote)
	}
	got := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(suite), got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[vmbenchv1.AnnotationArchived] != "" || got.Annotations[vmbenchv1.AnnotationArchiveIncomplete] != wantNote || archivemark.Whole(got) {
		t.Errorf("the suite's annotations %v: want it marked incomplete, never archived whole", got.Annotations)
	}
	evs := drain(rec)
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning ArchiveIncomplete results archived to mem://"+dir+"/: suite.json and 1 result-table ConfigMaps; "+
		"the archive is incomplete: result tables were deleted before they could be archived (demo-vm-1-tables; suite.json names them") {
		t.Errorf("events %q, want one ArchiveIncomplete naming the table", evs)
	}

	// A restart before the mark: what suite.json says is what the suite is marked with.
	c2 := archiveWorld(t, suite)
	r2, _ := archiveReconciler(c2, store)
	if err := reconcileSuite(t, r2, suite); err != nil {
		t.Fatal(err)
	}
	if err := c2.Get(t.Context(), client.ObjectKeyFromObject(suite), got); err != nil {
		t.Fatal(err)
	}
	if archivemark.Whole(got) || got.Annotations[vmbenchv1.AnnotationArchiveIncomplete] != wantNote {
		t.Errorf("after a restart the suite's annotations are %v, want the incomplete mark again", got.Annotations)
	}
}

// A table ConfigMap deleted before the listing leaves nothing to miss there: the tables the
// suite's status counts, per benchmark and platform, are what the archive must hold to be whole.
func TestArchiveCountsTheTablesStatusCounts(t *testing.T) {
	for _, tc := range []struct {
		name           string
		container, vm  int32
		wantIncomplete string
	}{
		{name: "every table counted is archived", container: 1, vm: 1},
		{name: "a ConfigMap of the container run's tables was deleted before the listing", container: 2, vm: 1,
			wantIncomplete: "uid-1: result tables were deleted before they could be archived: net on container: 1 of the 2 tables in status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suite := completeSuiteWithManagedFields()
			suite.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "net", Platform: "container", Tables: tc.container},
				{Benchmark: "net", Platform: "vm", Tables: tc.vm}}
			c := archiveWorld(t, suite)
			r, _ := archiveReconciler(c, newMemStore())
			if err := reconcileSuite(t, r, suite); err != nil {
				t.Fatal(err)
			}
			got := &vmbenchv1.BenchmarkSuite{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(suite), got); err != nil {
				t.Fatal(err)
			}
			if archivemark.Whole(got) != (tc.wantIncomplete == "") || got.Annotations[vmbenchv1.AnnotationArchiveIncomplete] != tc.wantIncomplete {
				t.Errorf("annotations %v: want whole %v, incomplete %q", got.Annotations, tc.wantIncomplete == "", tc.wantIncomplete)
			}
		})
	}
}

// S8: a finished suite deleted before the archive could write it (the store was down) is said to
// be lost, in the log and in a Warning event on it.
func TestArchiveWarnsOfASuiteDeletedBeforeItWasArchived(t *testing.T) {
	suite := completeSuiteWithManagedFields()
	store := newMemStore()
	down := errors.New("connection refused")
	store.putFails = func(string) error { return down }
	c := archiveWorld(t, suite)
	r, rec := archiveReconciler(c, store)
	if err := reconcileSuite(t, r, suite); !errors.Is(err, down) {
		t.Fatalf("reconcile: %v", err)
	}
	drain(rec)
	// Deleted as the cache sees it (the fake client refuses the archive's deletes).
	r.Client = fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	if err := reconcileSuite(t, r, suite); err != nil {
		t.Fatal(err)
	}
	evs := drain(rec)
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning DeletedBeforeArchive suite demo (uid uid-1) was deleted before the archive held it") {
		t.Errorf("events %q, want one DeletedBeforeArchive", evs)
	}
	// Said once.
	if err := reconcileSuite(t, r, suite); err != nil || len(drain(rec)) != 0 {
		t.Errorf("a second reconcile of the deleted suite: %v, or a second event", err)
	}

	// Gone from the API server while the cache still has it: the same.
	store.putFails = nil
	r2, rec2 := archiveReconciler(c, store)
	r2.APIReader = fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	if err := reconcileSuite(t, r2, suite); err != nil {
		t.Fatal(err)
	}
	if evs := drain(rec2); len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning DeletedBeforeArchive") {
		t.Errorf("events %q, want one DeletedBeforeArchive", evs)
	}
	if len(store.puts) != 0 {
		t.Errorf("wrote %v for a suite that is gone", store.puts)
	}
}

// A store that fails halfway leaves no suite.json, so that a partial archive never looks whole;
// the next try writes it all.
func TestArchiveFailureIsAnEventAndLeavesNoSuiteJSON(t *testing.T) {
	suite := completeSuiteWithManagedFields()
	store := newMemStore()
	cause := errors.New("S3 PutObject of s3://b/k at http://127.0.0.1:1 failed: no answer: connection refused; the endpoint is unreachable")
	store.putFails = func(key string) error {
		if strings.HasSuffix(key, "demo-vm-1-tables.json") {
			return cause
		}
		return nil
	}
	r, rec := archiveReconciler(archiveWorld(t, suite), store)
	err := reconcileSuite(t, r, suite)
	if !errors.Is(err, cause) {
		t.Fatalf("reconcile returned %v, want the store's error (the workqueue backs off)", err)
	}
	if _, ok := store.objects["vmbench/prod/bench/demo/uid-1/suite.json"]; ok {
		t.Error("suite.json was written although a table was not")
	}
	events := drain(rec)
	if len(events) != 1 || !strings.HasPrefix(events[0], "Warning ArchiveFailed the suite's results are not archived yet") ||
		!strings.Contains(events[0], cause.Error()) {
		t.Errorf("events %q, want one ArchiveFailed with the cause", events)
	}
	store.putFails = nil
	if err := reconcileSuite(t, r, suite); err != nil {
		t.Fatal(err)
	}
	if _, ok := store.objects["vmbench/prod/bench/demo/uid-1/suite.json"]; !ok {
		t.Error("the retry did not write suite.json")
	}
	if events := drain(rec); len(events) != 1 || !strings.HasPrefix(events[0], "Normal Archived") {
		t.Errorf("events after the retry %q, want Archived", events)
	}
}

func TestArchiveWaitsForTheSuiteToFinish(t *testing.T) {
	for _, tc := range []struct {
		name  string
		phase vmbenchv1.SuitePhase
		cond  *metav1.Condition
		want  bool
	}{
		{name: "pending", phase: vmbenchv1.SuitePending},
		{name: "running", phase: vmbenchv1.SuiteRunning},
		{name: "complete", phase: vmbenchv1.SuiteComplete, want: true},
		{name: "failed runs", phase: vmbenchv1.SuiteFailed, want: true,
			cond: &metav1.Condition{Type: vmbenchv1.ConditionFailed, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonRunFailed}},
		{name: "invalid spec: nothing ran, and it may yet be fixed and run", phase: vmbenchv1.SuiteFailed,
			cond: &metav1.Condition{Type: vmbenchv1.ConditionFailed, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonInvalidSpec}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suite := completeSuiteWithManagedFields()
			suite.Status.Phase = tc.phase
			if tc.cond != nil {
				suite.Status.Conditions = []metav1.Condition{*tc.cond}
			}
			if got := archivemark.Archivable(suite); got != tc.want {
				t.Errorf("archivable = %v, want %v", got, tc.want)
			}
			store := newMemStore()
			r, _ := archiveReconciler(archiveWorld(t, suite), store)
			if err := reconcileSuite(t, r, suite); err != nil {
				t.Fatal(err)
			}
			if archived := len(store.puts) > 0; archived != tc.want {
				t.Errorf("archived: %v, want %v (%v)", archived, tc.want, store.puts)
			}
		})
	}
}
