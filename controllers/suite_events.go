package controllers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
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
	// A cause that holds a run up is told once, when it first appears or changes.
	if c := next.waiting; c != nil && c.Reason != ReasonStarting {
		before := meta.FindStatusCondition(orig.Status.Conditions, vmbenchv1.ConditionProgressing)
		if before == nil || before.Reason != c.Reason {
			kind, action := corev1.EventTypeWarning, "Start"
			if next.rejected != nil {
				action = "Apply"
			}
			r.Recorder.Eventf(suite, nil, kind, c.Reason, action, "%s", truncate(c.Message, 1024))
		}
	}
	for _, f := range finished {
		metrics.RunFinished(f.PlatformType, f.Status, f.FailedBenchmarks)
		if f.Status.Phase == vmbenchv1.RunFailed {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, "RunFailed", "Collect", "run %s failed: %s", f.Status.Name, f.Status.Message)
		} else {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, "RunSucceeded", "Collect", "run %s finished %s", f.Status.Name, f.Status.Message)
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
