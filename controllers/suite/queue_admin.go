package suite

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runqueue"
)

// An admin (or a suite's own tenant: it harms nobody else) ends or requeues a suite with the
// annotation vmbench.io/queue (docs/queue.md):
//
//   - end: every run that has not ended fails, the suite fails with reason EndedByAdmin, and its
//     slot is released once its pods and VMs are gone.
//   - requeue: the suite gives its slot back; its running run is stopped (its children deleted) and
//     goes back to Pending, to start again from scratch; the suite waits in line again. Its Lease,
//     marked requeued, holds the slot until the run's pods and VMs are gone. The namespace's turn
//     stays where its last admission put it, so a requeued suite goes behind the other namespaces
//     that wait: requeueing moves no suite ahead of another tenant's.
//
// Who set the annotation is not knowable from the suite, so the messages name the annotation.

const (
	// AnnotationQueue asks the manager to end or requeue a suite.
	AnnotationQueue = "vmbench.io/queue"
	// QueueEnd and QueueRequeue are its values.
	QueueEnd     = "end"
	QueueRequeue = "requeue"
)

// ReasonEndedByAdmin (Failed=True): the annotation vmbench.io/queue=end ended the suite.
const ReasonEndedByAdmin = "EndedByAdmin"

// endedMessage is the message of the runs that the annotation ended.
const endedMessage = "ended by the annotation " + AnnotationQueue + "=" + QueueEnd + " before it finished"

// endRuns fails every run that has not ended; it says whether there was one.
func endRuns(st *vmbenchv1.BenchmarkSuiteStatus, now metav1.Time) bool {
	ended := false
	for i := range st.Runs {
		if p := st.Runs[i].Phase; p == vmbenchv1.RunPending || p == vmbenchv1.RunRunning {
			st.Runs[i].Phase = vmbenchv1.RunFailed
			st.Runs[i].Message = endedMessage
			st.Runs[i].CompletionTime = &now
			ended = true
		}
	}
	return ended
}

// requeue gives a suite's slot back: its Lease is marked requeued (it holds the slot until the
// suite's pods and VMs are gone, and admits the suite no more), and its running run is stopped and
// goes back to Pending. It is idempotent: a suite requeued already, or never admitted, is left as
// it is.
func (r *SuiteReconciler) requeue(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) error {
	if err := r.runQueue().Requeue(ctx, suite); err != nil {
		return err
	}
	if err := r.stopActiveRun(ctx, suite); err != nil {
		return err
	}
	if active := suite.Status.ActiveRun(); active != nil && (active.Phase == vmbenchv1.RunRunning || active.StartTime != nil) {
		*active = vmbenchv1.RunStatus{Name: active.Name, Platform: active.Platform, Repetition: active.Repetition, Phase: vmbenchv1.RunPending}
	}
	return nil
}

// stopActiveRun deletes the children of the suite's active run, if it has any.
func (r *SuiteReconciler) stopActiveRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) error {
	active := suite.Status.ActiveRun()
	if active == nil {
		return nil
	}
	children, err := r.listChildren(ctx, suite)
	if err != nil {
		return err
	}
	if len(children[active.Name]) == 0 {
		return nil
	}
	return r.deleteRun(ctx, active.Name, children[active.Name])
}

// forgetQueueAnnotation takes the annotation off once it was acted on and the status written.
func (r *SuiteReconciler) forgetQueueAnnotation(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) error {
	if _, ok := suite.Annotations[AnnotationQueue]; !ok {
		return nil
	}
	patch := client.MergeFrom(suite.DeepCopy())
	delete(suite.Annotations, AnnotationQueue)
	if err := r.Patch(ctx, suite, patch); err != nil {
		return fmt.Errorf("removing the annotation %s once acted on: %w", AnnotationQueue, err)
	}
	return nil
}

// endedByAnnotation says whether the annotation ended some run of the suite.
func endedByAnnotation(st *vmbenchv1.BenchmarkSuiteStatus) bool {
	for _, run := range st.Runs {
		if run.Phase == vmbenchv1.RunFailed && run.Message == endedMessage {
			return true
		}
	}
	return false
}

// runQueue is the suites' run queue, made once from the reconciler's settings.
func (r *SuiteReconciler) runQueue() *runqueue.Queue {
	r.queueOnce.Do(func() {
		r.queue = &runqueue.Queue{Client: r.Client, APIReader: r.APIReader, Clock: r.Clock,
			Limits:    runqueue.Limits{Slots: r.MaxActiveRuns, PerNamespace: r.MaxActiveRunsPerNamespace},
			Namespace: r.QueueNamespace, Namespaces: r.Namespaces, Available: r.Available}
	})
	return r.queue
}
