package suite

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// What a run saw of its VMIs' live migrations (issue 32 item 1). KubeVirt keeps only the last
// migration in a VMI's status.migrationState, so each reconcile of a running run copies it into the
// run's status: its source and target, times, mode and outcome in KubeVirt's words. The collection
// reads the master VMI's launcher pods along the recorded moves (launcher_logs.go), and samples
// measured while a migration ran are marked (summary.FinishRun).

// maxRunMigrations is the schema's bound on runs[].migrations. Past it, later migrations are not
// recorded; a VM run reads at most maxLauncherPods launcher pods anyway.
const maxRunMigrations = 16

// observeMigrations records in run every migration its VMIs' status shows, updating one already
// recorded (the same VMI and migration UID) as it progresses, and names the VMIs that KubeVirt says
// cannot migrate.
func observeMigrations(run *vmbenchv1.RunStatus, children []client.Object) {
	var vmis []*kubevirtv1.VirtualMachineInstance
	for _, obj := range children {
		if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok {
			vmis = append(vmis, vmi)
		}
	}
	sort.Slice(vmis, func(i, j int) bool { return vmis[i].Name < vmis[j].Name })
	var blocked []string
	for _, vmi := range vmis {
		if c := vmiCondition(vmi, kubevirtv1.VirtualMachineInstanceIsMigratable); c != nil && c.Status == corev1.ConditionFalse {
			blocked = append(blocked, fmt.Sprintf("VMI %s: %s: %s", vmi.Name, c.Reason, conditions.OneLineString(c.Message)))
		}
		m, ok := migrationOf(vmi)
		if !ok {
			continue
		}
		i := indexOfMigration(run.Migrations, m)
		switch {
		case i >= 0:
			// What started it was read once from its object (migration_trigger.go), not from the VMI.
			m.Trigger, m.Object = run.Migrations[i].Trigger, run.Migrations[i].Object
			run.Migrations[i] = m
		case len(run.Migrations) < maxRunMigrations:
			run.Migrations = append(run.Migrations, m)
		}
	}
	if len(blocked) > 0 {
		run.NotMigratable = conditions.Truncate(strings.Join(blocked, "; ")+
			"; a node drain stops these VMIs instead of moving them, and the run fails; see kubectl describe vmi", 1024)
	} else {
		run.NotMigratable = ""
	}
}

// migrationOf is the VMI's current migration as KubeVirt states it; ok is false when it has none.
func migrationOf(vmi *kubevirtv1.VirtualMachineInstance) (vmbenchv1.RunMigration, bool) {
	ms := vmi.Status.MigrationState
	if ms == nil || (ms.MigrationUID == "" && ms.TargetPod == "") {
		return vmbenchv1.RunMigration{}, false
	}
	m := vmbenchv1.RunMigration{
		VMI: vmi.Name, UID: conditions.Truncate(string(ms.MigrationUID), 64),
		SourceNode: ms.SourceNode, TargetNode: ms.TargetNode, SourcePod: ms.SourcePod, TargetPod: ms.TargetPod,
		StartTime: ms.StartTimestamp, EndTime: ms.EndTimestamp, Mode: conditions.Truncate(string(ms.Mode), 32),
		Outcome: vmbenchv1.MigrationRunning,
	}
	if ms.MigrationPolicyName != nil {
		m.Policy = conditions.Truncate(*ms.MigrationPolicyName, 253)
	}
	reason := conditions.OneLineString(ms.FailureReason)
	switch {
	case ms.AbortStatus == kubevirtv1.MigrationAbortSucceeded:
		m.Outcome = vmbenchv1.MigrationAborted
		m.Message = "KubeVirt aborted the migration (abortStatus Succeeded)"
		if reason != "" {
			m.Message += ": " + reason
		}
	case ms.Failed:
		m.Outcome = vmbenchv1.MigrationFailed
		m.Message = reason
		if m.Message == "" {
			m.Message = "KubeVirt gave no failureReason; see kubectl get vmim and the virt-handler logs of both nodes"
		}
	case ms.Completed:
		m.Outcome = vmbenchv1.MigrationCompleted
	}
	m.Message = conditions.Truncate(m.Message, 512)
	return m, true
}

// indexOfMigration finds m among the recorded migrations: the same VMI and UID, or, for a state
// without a UID, the same target pod.
func indexOfMigration(recorded []vmbenchv1.RunMigration, m vmbenchv1.RunMigration) int {
	for i, r := range recorded {
		if r.VMI == m.VMI && r.UID == m.UID && (m.UID != "" || r.TargetPod == m.TargetPod) {
			return i
		}
	}
	return -1
}

// movesOf are the completed moves of a VMI between launcher pods that the run recorded, in order.
func movesOf(run *vmbenchv1.RunStatus, vmi string) []podMove {
	var moves []podMove
	for _, m := range run.Migrations {
		if m.VMI == vmi && m.Outcome == vmbenchv1.MigrationCompleted && m.TargetPod != "" {
			moves = append(moves, podMove{Source: m.SourcePod, Target: m.TargetPod})
		}
	}
	return moves
}

// describeMigration names a migration for an event.
func describeMigration(m vmbenchv1.RunMigration) string {
	s := fmt.Sprintf("VMI %s migration %s from node %s to node %s (%s)", m.VMI, m.UID, m.SourceNode, m.TargetNode, m.Mode)
	if m.Mode == vmbenchv1.MigrationModeEviction {
		s = fmt.Sprintf("eviction of probe worker %s on node %s, replaced by %s", m.SourcePod, m.SourceNode, m.TargetPod)
		if m.TargetNode != "" {
			s += " on node " + m.TargetNode
		}
	}
	if m.StartTime != nil && m.EndTime != nil {
		s += fmt.Sprintf(" took %s", m.EndTime.Sub(m.StartTime.Time))
	}
	if by := triggerWords(m); by != "" {
		s += ", started by " + by
	}
	s += ": " + string(m.Outcome)
	if m.Message != "" {
		s += ": " + m.Message
	}
	return s
}

func vmiCondition(vmi *kubevirtv1.VirtualMachineInstance, t kubevirtv1.VirtualMachineInstanceConditionType) *kubevirtv1.VirtualMachineInstanceCondition {
	for i := range vmi.Status.Conditions {
		if vmi.Status.Conditions[i].Type == t {
			return &vmi.Status.Conditions[i]
		}
	}
	return nil
}
