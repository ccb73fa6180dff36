package suite

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/platform"
)

// One step of an admitted suite: clean up the runs that ended, then start, follow or collect the
// active run (run_start.go, run_follow.go).

// deleteRun deletes the children of a run whose results are in status. The run's Secrets are not
// among them: the manager may not delete Secrets; the garbage collector deletes them with the
// ConfigMap that owns them (runSecretsOwner), which is one of the children. Children left over
// afterwards say that the cleanup was cut short, and bring it back.
//
// The deletions go at once: one after the other they were most of the round trips of the reconcile
// that ends a run (docs/performance.md, "Fourth pass"). The error is the first child's, in order.
func (r *SuiteReconciler) deleteRun(ctx context.Context, run string, children []client.Object) error {
	errs := make([]error, len(children))
	atOnce(len(children), func(i int) {
		obj := children[i]
		if err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			errs[i] = fmt.Errorf("deleting %s of finished run %s: %w", obj.GetName(), run, err)
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// finishedRun is a run that this reconcile collected, with the children it had.
type finishedRun struct {
	Status           vmbenchv1.RunStatus
	PlatformType     vmbenchv1.PlatformType
	FailedBenchmarks []vmbenchv1.BenchmarkType
	Children         []client.Object
}

// step is what one reconcile decided for a suite, besides the changes to its status.
type step struct {
	result   ctrl.Result
	finished []finishedRun
	timedOut bool
	// waiting is what holds the active run up, for the Progressing condition; nil when it goes on.
	waiting *conditions.Cause
	// rejected is set when the API server refused a child: a Warning event says so.
	rejected *conditions.Cause
}

// advance cleans up finished runs, then starts, follows or collects the active run of an admitted
// suite. The suite's clock starts at its admission (queue_policy.go), so that a suite whose children
// are refused still times out.
func (r *SuiteReconciler) advance(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, benchmarks []vmbenchv1.Benchmark,
	now time.Time) (step, error) {
	st := &suite.Status
	suiteEnd := after(st.StartTime.Time, effectiveTimeout(suite.Spec, r.MaxSuiteDuration))
	timedOut := !now.Before(suiteEnd)
	children, err := r.listChildren(ctx, suite)
	if err != nil {
		return step{}, err
	}
	// Children of runs whose results are in status go (again, should the deletion right after the
	// status write have been lost); the next run waits until they are gone, so that no run shares the
	// cores with the previous one.
	lingering := false
	for _, run := range st.Runs {
		if (run.Phase != vmbenchv1.RunSucceeded && run.Phase != vmbenchv1.RunFailed) || len(children[run.Name]) == 0 {
			continue
		}
		lingering = true
		if err := r.deleteRun(ctx, run.Name, children[run.Name]); err != nil {
			return step{}, err
		}
	}

	active := st.ActiveRun()
	if active == nil {
		return step{timedOut: timedOut}, nil
	}
	planned := plannedByName(suite, active.Name)
	adapter, err := platform.For(planned.Platform.Type)
	if err != nil {
		return step{}, err
	}
	startup := r.startupLimit(planned.Platform.Type)
	run, err := r.platformRun(suite, planned, benchmarks)
	if err != nil {
		return step{}, err
	}
	run.VMNetwork = platform.VMNetwork(active.Network)

	if active.Phase == vmbenchv1.RunPending {
		switch {
		case timedOut:
			// Children that a refused start left behind go with the next reconcile's cleanup.
			markNotRun(st, effectiveTimeout(suite.Spec, r.MaxSuiteDuration), now)
			return step{timedOut: true, result: ctrl.Result{RequeueAfter: settle}}, nil
		case lingering:
			return step{result: ctrl.Result{RequeueAfter: settle}}, nil
		}
		return r.startRun(ctx, suite, active, adapter, run, now, suiteEnd, startup)
	}
	if active.StartTime == nil {
		// A status restored or edited by hand: the run's clock starts again rather than never.
		active.StartTime = &metav1.Time{Time: now}
	}
	return r.followRun(ctx, suite, active, adapter, run, children[run.Name], planned, benchmarks, followTimes{
		now: now, suiteEnd: suiteEnd, suiteTimedOut: timedOut, startup: startup,
	})
}

// staleCache reports whether the API server holds a newer suite than the cache gave this reconcile.
func (r *SuiteReconciler) staleCache(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) (bool, error) {
	fresh := &vmbenchv1.BenchmarkSuite{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(suite), fresh); err != nil {
		return false, err
	}
	return fresh.ResourceVersion != suite.ResourceVersion, nil
}

// markNotRun fails every run that never started when the suite timed out after timeout.
func markNotRun(st *vmbenchv1.BenchmarkSuiteStatus, timeout time.Duration, now time.Time) {
	msg := "not started: the suite timed out after " + timeout.String()
	for i := range st.Runs {
		if st.Runs[i].Phase == vmbenchv1.RunPending {
			st.Runs[i].Phase = vmbenchv1.RunFailed
			st.Runs[i].Message = msg
			st.Runs[i].CompletionTime = &metav1.Time{Time: now}
		}
	}
}
