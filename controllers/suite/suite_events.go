package suite

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/metrics"
)

// emitTransitions records events for what changed, after the status write succeeded.
func (r *SuiteReconciler) emitTransitions(orig, suite *vmbenchv1.BenchmarkSuite, next step) {
	if r.Recorder == nil {
		return
	}
	finished := next.finished
	for _, run := range suite.Status.Runs {
		if run.Phase == vmbenchv1.RunRunning && findRun(orig.Status.Runs, run.Name).Phase != vmbenchv1.RunRunning {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, "RunStarted", "Start", "run %s started on platform %s", run.Name, run.Platform)
		}
	}
	r.emitMigrations(orig, suite)
	// A cause that holds a run up is told once, when it first appears or changes.
	if c := next.waiting; c != nil && c.Reason != failure.ReasonStarting {
		before := meta.FindStatusCondition(orig.Status.Conditions, vmbenchv1.ConditionProgressing)
		if before == nil || before.Reason != c.Reason {
			kind, action := corev1.EventTypeWarning, "Start"
			if next.rejected != nil {
				action = "Apply"
			}
			r.Recorder.Eventf(suite, nil, kind, c.Reason, action, "%s", conditions.Truncate(c.Message, 1024))
		}
	}
	for _, f := range finished {
		metrics.RunFinished(f.PlatformType, f.Status, f.FailedBenchmarks)
		if f.Status.Phase == vmbenchv1.RunFailed {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, "RunFailed", "Collect", "run %s failed: %s", f.Status.Name, f.Status.Message)
		} else {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, "RunSucceeded", "Collect", "run %s finished %s", f.Status.Name, f.Status.Message)
		}
		if f.Status.NotKept != "" {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, ReasonOutputsNotKept, "Collect", "%s",
				conditions.Truncate(fmt.Sprintf("run %s: %s", f.Status.Name, f.Status.NotKept), 1024))
		}
	}
	for _, t := range []string{vmbenchv1.ConditionComplete, vmbenchv1.ConditionFailed} {
		now := meta.FindStatusCondition(suite.Status.Conditions, t)
		before := meta.FindStatusCondition(orig.Status.Conditions, t)
		if now == nil || now.Status != metav1.ConditionTrue || (before != nil && before.Status == metav1.ConditionTrue) {
			continue
		}
		kind := corev1.EventTypeNormal
		if t == vmbenchv1.ConditionFailed {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(suite, nil, kind, "Suite"+t, "Finish", "%s", now.Message)
	}
}

func findRun(runs []vmbenchv1.RunStatus, name string) vmbenchv1.RunStatus {
	for _, r := range runs {
		if r.Name == name {
			return r
		}
	}
	return vmbenchv1.RunStatus{}
}

// ReasonStatusNotWritten is the Warning event of a suite whose status the API server did not take.
const ReasonStatusNotWritten = "StatusNotWritten"

// statusNotWritten says, in a Warning event, why the suite's status could not be written: its
// status is what kubectl describe shows, and it says nothing new until a write succeeds.
func (r *SuiteReconciler) statusNotWritten(suite *vmbenchv1.BenchmarkSuite, err error) {
	if r.Recorder == nil {
		return
	}
	advice := "the manager tries again with backoff; its log has the details"
	switch {
	case strings.Contains(err.Error(), "json: unsupported value"):
		advice = "a value in it cannot be stored (not a finite number): this is a vmbench bug, report it with this message"
	case strings.Contains(err.Error(), "denied request") || strings.Contains(err.Error(), "admission webhook") || apierrors.IsForbidden(err):
		advice = "the manager may not write it: check the manager's RBAC on benchmarksuites/status and the cluster's admission policies"
	case apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err):
		advice = "the API server refuses the status as it is: this is a vmbench bug, report it with this message"
	}
	r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, ReasonStatusNotWritten, "WriteStatus", "%s",
		conditions.Truncate(fmt.Sprintf("the suite's status could not be written, so it shows an earlier state: %s; %s", conditions.OneLineString(err.Error()), advice), 1024))
}

// emitMigrations tells each live migration of a run's VMIs once it ended, and a run's VMIs that
// cannot migrate when that is first seen or changes, in KubeVirt's words; and a run's nodes that
// were cordoned (drain_policy.go) when that is first seen or changes.
func (r *SuiteReconciler) emitMigrations(orig, suite *vmbenchv1.BenchmarkSuite) {
	for _, run := range suite.Status.Runs {
		before := findRun(orig.Status.Runs, run.Name)
		for _, m := range run.Migrations {
			if m.Outcome == vmbenchv1.MigrationRunning {
				continue
			}
			if i := indexOfMigration(before.Migrations, m); i >= 0 && before.Migrations[i].Outcome == m.Outcome {
				continue
			}
			kind, reason := corev1.EventTypeNormal, "VMIMigrated"
			if m.Outcome != vmbenchv1.MigrationCompleted {
				kind, reason = corev1.EventTypeWarning, "VMIMigration"+string(m.Outcome)
			}
			r.Recorder.Eventf(suite, nil, kind, reason, "Follow", "%s", conditions.Truncate("run "+run.Name+": "+describeMigration(m), 1024))
		}
		if run.Disruption != "" && run.Disruption != before.Disruption {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, "NodeDraining", "Follow", "%s", conditions.Truncate("run "+run.Name+": "+run.Disruption, 1024))
		}
		if run.NotMigratable != "" && run.NotMigratable != before.NotMigratable {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, "VMINotLiveMigratable", "Follow", "%s",
				conditions.Truncate("run "+run.Name+": "+run.NotMigratable, 1024))
		}
	}
}
