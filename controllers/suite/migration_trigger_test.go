package suite

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// Protects issue 32 item 1 ("a drain during a VM run named"): each migration of a run's VMIs says
// what started it, read once from its migration object: vmbench's own (labelled with the run and
// controlled by the suite), a node drain (KubeVirt's evacuation annotation, which wins over the
// workload update's as in KubeVirt's metrics), KubeVirt's workload update, anyone else's, or
// Unknown when the object is gone; named migrations are never looked up again, and a later reading
// of the VMI's migration state keeps the name.
func TestMigrationTriggersAreNamed(t *testing.T) {
	ctx := context.Background()
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "suite-uid"}}
	vmim := func(name, uid string, labels, annotations map[string]string, controlled bool) client.Object {
		// KubeVirt labels every migration object with its VMI's name.
		if labels == nil {
			labels = map[string]string{}
		}
		if _, ok := labels[kubevirtv1.MigrationSelectorLabel]; !ok {
			labels[kubevirtv1.MigrationSelectorLabel] = "r-master"
		}
		m := &kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID(uid),
			Labels: labels, Annotations: annotations}}
		if controlled {
			m.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSuite", Name: "s",
				UID: "suite-uid", Controller: ptr.To(true)}}
		}
		return m
	}
	objs := []client.Object{
		vmim("r-mig-1", "u-bench", map[string]string{vmbenchv1.LabelRun: "r"}, nil, true),
		vmim("kubevirt-evacuation-abcde", "u-drain", nil, map[string]string{kubevirtv1.EvacuationMigrationAnnotation: "w1"}, false),
		vmim("kubevirt-workload-update-xyz", "u-update", nil, map[string]string{kubevirtv1.WorkloadUpdateMigrationAnnotation: ""}, false),
		vmim("both", "u-both", nil, map[string]string{kubevirtv1.WorkloadUpdateMigrationAnnotation: "", kubevirtv1.EvacuationMigrationAnnotation: "w2"}, false),
		vmim("by-hand", "u-user", nil, nil, false),
		// Labelled with the run but not the suite's: not vmbench's own.
		vmim("forged", "u-forged", map[string]string{vmbenchv1.LabelRun: "r"}, nil, false),
		// Labelled with the run and controlled by another suite of that name (deleted and made again):
		// not this suite's own.
		&kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "older", Namespace: "ns", UID: "u-older",
			Labels: map[string]string{vmbenchv1.LabelRun: "r", kubevirtv1.MigrationSelectorLabel: "r-master"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSuite", Name: "s",
				UID: "an-older-suite", Controller: ptr.To(true)}}}},
		// Another VMI's migration is not read: the run's u-other stays Unknown.
		vmim("elsewhere", "u-other", map[string]string{kubevirtv1.MigrationSelectorLabel: "another-vmi"}, nil, false),
	}
	lists := 0
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists++
			return c.List(ctx, list, opts...)
		}}).Build()
	r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}
	run := &vmbenchv1.RunStatus{}
	for _, uid := range []string{"u-bench", "u-drain", "u-update", "u-both", "u-user", "u-forged", "u-older", "u-gone", "u-other"} {
		run.Migrations = append(run.Migrations, vmbenchv1.RunMigration{VMI: "r-master", UID: uid, SourceNode: "w1", TargetNode: "w2",
			Outcome: vmbenchv1.MigrationCompleted})
	}
	if err := r.nameMigrationTriggers(ctx, suite, "r", run); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"u-bench":  {"Benchmark", "r-mig-1"},
		"u-drain":  {"Evacuation", "kubevirt-evacuation-abcde"},
		"u-update": {"WorkloadUpdate", "kubevirt-workload-update-xyz"},
		"u-both":   {"Evacuation", "both"},
		"u-user":   {"User", "by-hand"},
		"u-forged": {"User", "forged"},
		"u-older":  {"User", "older"},
		"u-gone":   {"Unknown", ""},
		"u-other":  {"Unknown", ""},
	}
	for _, m := range run.Migrations {
		if got := [2]string{string(m.Trigger), m.Object}; got != want[m.UID] {
			t.Errorf("migration %s: trigger and object %v, want %v", m.UID, got, want[m.UID])
		}
	}
	if lists != 1 {
		t.Fatalf("%d lists to name 9 migrations, want 1", lists)
	}
	drain := run.Migrations[1]
	if d := describeMigration(drain); !strings.Contains(d, "started by a drain of node w1 (KubeVirt's evacuation), kubevirt-evacuation-abcde: Completed") {
		t.Errorf("the event of a drain's migration: %q", d)
	}

	// Named: no list again, even after the VMI's state is read anew.
	state := &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: "u-drain", SourceNode: "w1", TargetNode: "w2", Completed: true}
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "r-master"}}
	vmi.Status.MigrationState = state
	observeMigrations(run, []client.Object{vmi})
	if err := r.nameMigrationTriggers(ctx, suite, "r", run); err != nil {
		t.Fatal(err)
	}
	if lists != 1 || run.Migrations[1].Trigger != vmbenchv1.MigrationByEvacuation || run.Migrations[1].Object != "kubevirt-evacuation-abcde" {
		t.Fatalf("after the VMI was read again: %d lists, %+v", lists, run.Migrations[1])
	}
	// A new migration is looked up once more.
	run.Migrations = append(run.Migrations, vmbenchv1.RunMigration{VMI: "r-master", UID: "u-user", Outcome: vmbenchv1.MigrationRunning})
	if err := r.nameMigrationTriggers(ctx, suite, "r", run); err != nil || lists != 2 || run.Migrations[9].Trigger != vmbenchv1.MigrationByUser {
		t.Fatalf("a new migration: %v, %d lists, %+v", err, lists, run.Migrations[9])
	}
}
