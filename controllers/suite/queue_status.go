package suite

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/runqueue"
)

// What a suite says of its place in the run queue: the Queued condition and its events.

// setQueued sets the Queued condition and the queue position, on every reconcile.
func setQueued(st *vmbenchv1.BenchmarkSuiteStatus, wait *runqueue.Admission, invalidSpec error, generation int64, spec vmbenchv1.BenchmarkSuiteSpec,
	maxDuration time.Duration) {
	c := metav1.Condition{Type: vmbenchv1.ConditionQueued, Status: metav1.ConditionFalse, ObservedGeneration: generation}
	st.QueuePosition = 0
	switch {
	case wait != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, vmbenchv1.ReasonWaitingForRun, conditions.Truncate(wait.Message(), 1024)
		st.QueuePosition = int32(wait.Position)
	case st.StartTime != nil:
		c.Reason = vmbenchv1.ReasonAdmitted
		c.Message = fmt.Sprintf("admitted at %s; spec.timeout counts from then", st.StartTime.UTC().Format(time.RFC3339))
		if timeout := effectiveTimeout(spec, maxDuration); timeout < spec.SuiteTimeout() {
			c.Message = fmt.Sprintf("admitted at %s; the suite ends at %s at the latest: spec.timeout %s is above the cluster's maximum suite duration %s "+
				"(the manager's --max-suite-duration, Helm value maxSuiteDuration), so the maximum applies; set spec.timeout to %s or less, "+
				"or split the suite, or ask the cluster's admin",
				st.StartTime.UTC().Format(time.RFC3339), after(st.StartTime.Time, timeout).UTC().Format(time.RFC3339),
				spec.SuiteTimeout(), maxDuration, maxDuration)
		}
	case invalidSpec != nil:
		c.Reason, c.Message = vmbenchv1.ReasonInvalidSpec, "the spec is invalid, so the suite does not wait for a run slot"
	case endedByAnnotation(st):
		c.Reason, c.Message = ReasonEndedByAdmin, "the suite was ended by the annotation "+AnnotationQueue+"="+QueueEnd+" before it was admitted"
	default:
		// Not reached: a valid suite is either waiting or admitted.
		c.Reason, c.Message = vmbenchv1.ReasonPending, "not admitted yet"
	}
	meta.SetStatusCondition(&st.Conditions, c)
}

// emitQueueTransitions records an event when a suite starts to wait and when it is admitted, after
// the status write succeeded. The messages are the Queued condition's, which name no other
// namespace's suites.
func (r *SuiteReconciler) emitQueueTransitions(orig, suite *vmbenchv1.BenchmarkSuite) {
	if r.Recorder == nil {
		return
	}
	now := meta.FindStatusCondition(suite.Status.Conditions, vmbenchv1.ConditionQueued)
	before := meta.FindStatusCondition(orig.Status.Conditions, vmbenchv1.ConditionQueued)
	if now == nil || (before != nil && before.Reason == now.Reason) {
		return
	}
	switch now.Reason {
	case vmbenchv1.ReasonWaitingForRun:
		r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, vmbenchv1.ConditionQueued, "Queue", "%s", now.Message)
	case vmbenchv1.ReasonAdmitted:
		r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, vmbenchv1.ReasonAdmitted, "Queue", "%s", now.Message)
	}
}
