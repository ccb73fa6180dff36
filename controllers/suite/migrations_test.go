package suite

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Protects issue 32 item 1: each migration KubeVirt writes in a VMI's status is recorded in the run
// with its outcome in KubeVirt's words, updated as it progresses and never recorded twice, and a
// VMI that cannot migrate is named with KubeVirt's reason.
func TestObserveMigrations(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(28 * time.Second))
	vmi := func(name string, ms *kubevirtv1.VirtualMachineInstanceMigrationState, conds ...kubevirtv1.VirtualMachineInstanceCondition) client.Object {
		v := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name}}
		v.Status.MigrationState, v.Status.Conditions = ms, conds
		return v
	}
	state := func(uid string) *kubevirtv1.VirtualMachineInstanceMigrationState {
		return &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: k8stypes.UID("uid-" + uid), SourcePod: "p-" + uid + "-src", TargetPod: "p-" + uid + "-dst",
			SourceNode: "w1", TargetNode: "w2", StartTimestamp: &t0, Mode: kubevirtv1.MigrationPreCopy}
	}
	run := &vmbenchv1.RunStatus{}
	running := state("a")
	observeMigrations(run, []client.Object{vmi("r-master", running)})
	if len(run.Migrations) != 1 || run.Migrations[0].Outcome != vmbenchv1.MigrationRunning {
		t.Fatalf("a running migration: %+v", run.Migrations)
	}
	done := state("a")
	done.Completed, done.EndTimestamp = true, &t1
	done.MigrationPolicyName = ptr.To("vmbench-bench-r-vmcapped-1-0a1b2c3d")
	failed := state("b")
	failed.Completed, failed.Failed, failed.EndTimestamp = true, true, &t1
	failed.FailureReason = "Live migration failed virError(Code=38, Domain=7, Message='Failed to connect socket')"
	aborted := state("c")
	aborted.Completed, aborted.Failed, aborted.AbortRequested, aborted.AbortStatus = true, true, true, kubevirtv1.MigrationAbortSucceeded
	observeMigrations(run, []client.Object{vmi("r-master", done), vmi("r-node01", failed), vmi("r-node02", aborted,
		kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse,
			Reason: "DisksNotLiveMigratable", Message: "cannot migrate VMI: PVC data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"})})
	want := []struct {
		vmi     string
		outcome vmbenchv1.MigrationOutcome
		message string
	}{
		{"r-master", vmbenchv1.MigrationCompleted, ""},
		{"r-node01", vmbenchv1.MigrationFailed, "Live migration failed virError(Code=38, Domain=7, Message='Failed to connect socket')"},
		{"r-node02", vmbenchv1.MigrationAborted, "KubeVirt aborted the migration (abortStatus Succeeded)"},
	}
	if len(run.Migrations) != len(want) {
		t.Fatalf("recorded %d migrations, want %d (the running one updated, not added): %+v", len(run.Migrations), len(want), run.Migrations)
	}
	for i, w := range want {
		m := run.Migrations[i]
		if m.VMI != w.vmi || m.Outcome != w.outcome || m.Message != w.message {
			t.Errorf("migration %d = %s %s %q, want %s %s %q", i, m.VMI, m.Outcome, m.Message, w.vmi, w.outcome, w.message)
		}
	}
	if m := run.Migrations[0]; m.SourceNode != "w1" || m.TargetNode != "w2" || m.Mode != "PreCopy" || !m.StartTime.Equal(&t0) || !m.EndTime.Equal(&t1) {
		t.Errorf("completed migration = %+v, want nodes, mode and times from KubeVirt's state", m)
	}
	// The policy KubeVirt applied (issue 32 item 4), and none where it applied none.
	if p := run.Migrations[0].Policy; p != "vmbench-bench-r-vmcapped-1-0a1b2c3d" {
		t.Errorf("policy of the completed migration = %q, want the migrationPolicyName KubeVirt wrote", p)
	}
	if p := run.Migrations[1].Policy; p != "" {
		t.Errorf("policy of a migration under no policy = %q, want empty", p)
	}
	if !strings.Contains(run.NotMigratable, "VMI r-node02: DisksNotLiveMigratable: cannot migrate VMI: PVC data is not shared") {
		t.Errorf("notMigratable = %q, want VMI r-node02 named with KubeVirt's reason and message", run.NotMigratable)
	}
	if moves := movesOf(run, "r-master"); len(moves) != 1 || moves[0] != (podMove{"p-a-src", "p-a-dst"}) {
		t.Errorf("moves of the master = %v, want the completed one", moves)
	}
	if moves := movesOf(run, "r-node01"); len(moves) != 0 {
		t.Errorf("a failed migration moved nothing, got %v", moves)
	}
	// The bound: the run keeps at most maxRunMigrations.
	for i := range maxRunMigrations + 3 {
		observeMigrations(run, []client.Object{vmi("r-master", state(strings.Repeat("x", i+1)))})
	}
	if len(run.Migrations) != maxRunMigrations {
		t.Errorf("recorded %d migrations, want the bound %d", len(run.Migrations), maxRunMigrations)
	}
}
