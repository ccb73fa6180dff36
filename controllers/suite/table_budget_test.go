package suite

import (
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/tables"
)

// N11: the tables a suite keeps are bounded across its runs (suiteTableBudget, 8 MiB). Without the
// bound every run's tables ConfigMaps are written, however many runs came before.
func TestSuiteTablesStayWithinTheSuitesBudget(t *testing.T) {
	suite := testSuite()
	suite.UID = "suite-uid"
	owner := *metav1.NewControllerRef(suite, vmbenchv1.GroupVersion.WithKind("BenchmarkSuite"))
	const key = "net.master-node01.csv"
	// stored is a tables ConfigMap already in the cluster, of run, with its size annotation (none if kib < 0).
	stored := func(name, run string, kib int, controlled bool) client.Object {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: suite.Namespace, Labels: tables.Labels(suite.Name, "container", run)}}
		if kib >= 0 {
			cm.Annotations = map[string]string{tables.AnnotationBytes: strconv.Itoa(kib << 10)}
		}
		if controlled {
			cm.OwnerReferences = []metav1.OwnerReference{owner}
		}
		return cm
	}
	var objs []client.Object
	for i := range 14 { // 14 × 500 KiB of earlier runs
		objs = append(objs, stored("demo-container-"+strconv.Itoa(i+1)+"-tables", "demo-container-"+strconv.Itoa(i+1), 500, true))
	}
	objs = append(objs,
		stored("demo-vm-1-tables", "demo-vm-1", -1, true),                  // written before the annotation: counts as 512 KiB
		stored("lookalike-tables", "demo-vm-2", 512, false),                // not the suite's: not counted
		stored("demo-container-20-tables", "demo-container-20", 512, true)) // the run's own, from an earlier try: not counted
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}

	// The run's own tables: 400 KiB fits (7512 + 400 of 8192 KiB), 400 KiB more does not, 200 KiB does.
	mapOf := func(name string, kib int) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: suite.Namespace},
			Data: map[string]string{key: strings.Repeat("x", kib<<10-len(key))}}
	}
	raw := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-20-raw"}, Data: map[string]string{"x.txt": "x"}}
	outs := sideOutputs(raw, summary.RunTables{Maps: []*corev1.ConfigMap{
		mapOf("demo-container-20-tables", 400), mapOf("demo-container-20-tables-2", 400), mapOf("demo-container-20-tables-3", 200)}})

	kept, over, err := r.withinTableBudget(t.Context(), suite, "demo-container-20", outs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range kept {
		names = append(names, o.cm.Name)
	}
	if got := strings.Join(names, ","); got != "demo-container-20-raw,demo-container-20-tables,demo-container-20-tables-3" {
		t.Errorf("kept %s; want the raw outputs and the tables that fit in 8 MiB less the 7512 KiB of earlier runs", got)
	}
	for _, o := range kept[1:] {
		if want := strconv.Itoa(tableBytes(o.cm)); o.cm.Annotations[tables.AnnotationBytes] != want {
			t.Errorf("%s: annotation %q, want its size %s", o.cm.Name, o.cm.Annotations[tables.AnnotationBytes], want)
		}
	}
	if over.lost["net"] != 1 || len(over.notKept) != 1 {
		t.Fatalf("left out %+v; want one message and net's 1 table lost", over)
	}
	for _, want := range []string{"ConfigMaps [demo-container-20-tables-2] (the run's result tables, 1 tables) were not written",
		"suite demo keeps at most 8 MiB of tables across its runs, and its earlier runs keep 7512 KiB",
		"delete suites whose tables are no longer needed"} {
		if !strings.Contains(over.notKept[0], want) {
			t.Errorf("notKept %q does not say %q", over.notKept[0], want)
		}
	}

	// What is left out joins what keepOutputs could not write, first.
	res := keptOutputs{notKept: []string{"quota"}, lost: map[string]int32{"net": 2}}
	res.add(over)
	if res.lost["net"] != 3 || len(res.notKept) != 2 || res.notKept[1] != "quota" {
		t.Errorf("merged %+v", res)
	}

	// A run without tables asks the API server nothing.
	none := &SuiteReconciler{}
	if kept, _, err := none.withinTableBudget(t.Context(), suite, "demo-container-21", sideOutputs(raw, summary.RunTables{})); err != nil || len(kept) != 1 {
		t.Errorf("no tables: %v, %v", kept, err)
	}
}
