package suite

import (
	"context"
	"fmt"
	"strings"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
)

// Following a started run until its cluster is up and its benchmarks end, then collecting its results
// into status.

// followTimes are the moments a running run is judged against.
type followTimes struct {
	now, suiteEnd time.Time
	suiteTimedOut bool
	startup       time.Duration
}

// followRun watches a started run: it names what holds its cluster up, fails it when its cluster is
// not up within the startup limit or a child it needs was deleted, and collects it once it ended,
// its deadline passed or the suite timed out.
func (r *SuiteReconciler) followRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	adapter platform.Adapter, run platform.Run, children []client.Object, planned plannedRun, benchmarks []vmbenchv1.Benchmark,
	t followTimes) (step, error) {
	st := &suite.Status
	now := t.now
	outcome := adapter.Observe(run, platform.Children{Objects: children})
	// The platform ended the run itself, not vmbench (a deadline, a member's failure): its runner's
	// container terminates, and the log is not judged before it has (readReport).
	ownEnd := outcome.Finished()
	retired := startedWithSuiteKeys(children, adapter.Kinds())
	if retired {
		outcome = keysRetired(suite, run.Name)
	}
	if outcome.Gone != nil && !outcome.Finished() {
		// The cache may lag behind a run that just started, or behind this suite's own last write.
		stale, err := r.staleCache(ctx, suite)
		if err != nil || stale {
			return step{result: ctrl.Result{RequeueAfter: settle}}, err
		}
		gone, err := r.childGone(ctx, suite.Namespace, *outcome.Gone)
		if err != nil || !gone {
			return step{result: ctrl.Result{RequeueAfter: settle}}, err
		}
		outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: fmt.Sprintf("%s: %s was deleted while the run was running; "+
			"this run's results are lost, later runs go on", failure.ReasonChildDeleted, outcome.Gone)}
	}
	// What the kubelets and virt-handler say of the run's members after they started
	// (member_policy.go): a member that cannot come back fails the run now, not at its deadline.
	var member *conditions.Cause
	if !retired && outcome.Phase != platform.PhaseSucceeded {
		var err error
		if member, err = r.memberTrouble(ctx, suite, run.Name, children, benchmarks); err != nil {
			return step{}, err
		}
		if member != nil && member.Terminal {
			ownEnd = false
			msg := member.String()
			// The MPI Operator's words add to the member's; a failed VMI's would repeat them.
			if outcome.Phase == platform.PhaseFailed && member.Reason != failure.ReasonVMFailed {
				msg += "; " + outcome.Message
			}
			outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: msg}
		}
	}
	pods, err := r.lookAtStartup(ctx, suite, active, planned.Platform.Type, children)
	if err != nil {
		return step{}, err
	}
	if !retired && (outcome.Phase == platform.PhaseRunning || outcome.Phase == platform.PhaseSucceeded) {
		if err := r.recordEnvironment(ctx, suite, active, planned.Platform.Type, children, pods); err != nil {
			return step{}, err
		}
	}
	if planned.Platform.Type == vmbenchv1.PlatformVM {
		recordVMSettings(st, planned.Platform.Name, children)
		observeMigrations(active, children)
		if err := r.nameMigrationTriggers(ctx, suite, run.Name, active); err != nil {
			return step{}, err
		}
	}
	end := after(active.StartTime.Time, run.Deadline)
	startupEnd := after(active.StartTime.Time, t.startup)
	runTimedOut := !now.Before(end)
	if !outcome.Finished() && !runTimedOut && !t.suiteTimedOut {
		if outcome.Phase == platform.PhaseRunning {
			// A drain of a pod's node is named (drain_policy.go); VM runs are KubeVirt's to move.
			var cordonCheck time.Time
			if planned.Platform.Type != vmbenchv1.PlatformVM && !retired {
				if err := r.observeCordons(ctx, suite, active, end); err != nil {
					return step{}, err
				}
				cordonCheck = now.Add(r.cordonPoll())
			}
			if member != nil {
				active.Message = conditions.Truncate(member.String(), 1024)
				return step{waiting: member, result: ctrl.Result{RequeueAfter: requeueAfter(now, end, t.suiteEnd, cordonCheck)}}, nil
			}
			if active.EndTime == nil {
				active.Message = ""
			}
			next, err := r.migrateWhileProbing(ctx, suite, active, adapter, run, children, benchmarks, now)
			if err != nil {
				return step{}, err
			}
			return step{result: ctrl.Result{RequeueAfter: requeueAfter(now, end, t.suiteEnd, next, cordonCheck)}}, nil
		}
		held, err := r.holdUp(ctx, suite, run, children, active.StartTime.Time)
		if err != nil {
			return step{}, err
		}
		if member != nil && (held == nil || !held.Terminal) {
			// A started member's trouble is more specific than the Warning events (BackOff) that
			// holdUp may have found.
			held = member
		}
		switch {
		case held != nil && held.Terminal:
			// Waiting for the startup limit would change nothing.
			outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: held.String()}
		case now.Before(startupEnd):
			if held == nil {
				held = &conditions.Cause{Reason: failure.ReasonStarting, Message: fmt.Sprintf("the run's %s are starting", membersOf(planned.Platform.Type))}
			}
			active.Message = waitingMessage(held, startupEnd)
			return step{waiting: held, result: ctrl.Result{RequeueAfter: requeueAfter(now, now.Add(pollWhileStarting), startupEnd, end, t.suiteEnd)}}, nil
		default:
			msg := fmt.Sprintf("%s: the run's %s did not start within %s", failure.ReasonStartupTimeout, membersOf(planned.Platform.Type), t.startup)
			if held != nil {
				msg += ": " + held.String()
			}
			outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: msg}
		}
	}

	if active.EndTime == nil {
		active.EndTime = &metav1.Time{Time: now}
	}
	if (planned.Platform.Type == vmbenchv1.PlatformContainer || planned.Platform.Type == vmbenchv1.PlatformVM) && active.ProbeStartTime != nil {
		// The migration benchmark's probe workers end with the run (eviction_benchmark.go; a VM
		// run's peer: peer_probe.go).
		if err := r.closeProbeWorkers(ctx, suite, run.Name); err != nil {
			return step{}, err
		}
	}
	unverifiable := r.keyToCollect(active)
	if unverifiable != nil && !retired {
		outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: unverifiable.String()}
	}
	var report summary.RunReport
	if !retired && unverifiable == nil {
		var keys frameKeys
		if keys, err = r.frameKeysOf(suite, run.Name); err != nil {
			return step{}, err
		}
		src := adapter.LogSource(run)
		report, err = r.readReport(ctx, suite, src, children, movesOf(active, src.Owner.Name), keys, ownEnd)
	}
	if err != nil {
		retryEnd := after(active.EndTime.Time, collectRetry)
		if now.Before(retryEnd) {
			held := &conditions.Cause{Reason: failure.ReasonLogUnreadable, Message: fmt.Sprintf("reading the runner's log of run %s failed, retrying until %s: %v",
				run.Name, retryEnd.UTC().Format(time.RFC3339), err)}
			if member != nil && member.Terminal {
				// The member's failure is the cause; the log is read for what was measured before it.
				held = &conditions.Cause{Reason: member.Reason, Message: member.Message + "; " + held.Message}
			}
			active.Message = conditions.Truncate("collecting: "+held.Message, 1024)
			return step{waiting: held, result: ctrl.Result{RequeueAfter: collectBackoff(now.Sub(active.EndTime.Time))}}, nil
		}
		report = summary.RunReport{LogErr: fmt.Errorf("%s: gave up after %s: %w", failure.ReasonLogUnreadable, collectRetry, err)}
	}
	// The results go to status whatever becomes of the raw outputs and tables (keep_outputs.go).
	kept := summary.ResultTables(suite, run.Name, planned.Platform.Name, benchmarks, report)
	// The suite's tables are bounded across its runs (table_budget.go).
	sides, overBudget, err := r.withinTableBudget(ctx, suite, run.Name, sideOutputs(rawOutputs(suite, run.Name, report), kept))
	if err != nil {
		return step{}, err
	}
	outs := r.keepOutputs(ctx, suite, run.Name, sides, now, after(active.EndTime.Time, collectRetry))
	if outs.retry != nil {
		active.Message = conditions.Truncate("collecting: "+outs.retry.Message, 1024)
		return step{waiting: outs.retry, result: ctrl.Result{RequeueAfter: collectBackoff(now.Sub(active.EndTime.Time))}}, nil
	}
	outs.add(overBudget)
	for b, n := range outs.lost {
		kept.Kept[b] -= n
		kept.Lost[b] += n
	}
	active.NotKept = conditions.Truncate(strings.Join(outs.notKept, "; "), 1024)
	for _, l := range kept.Causes {
		log.FromContext(ctx).Info("a result table is not kept", "run", run.Name, "benchmark", l.Benchmark, "node", l.Node, "variant", l.Variant, "cause", l.Cause)
	}
	report = withMigrationResults(report, benchmarks, active, planned.Platform.Type)
	failed := summary.FinishRun(st, active, planned.Platform.Type, benchmarks, summary.RunCompletion{
		Report: report, Outcome: outcome, TimedOut: runTimedOut || t.suiteTimedOut, Deadline: run.Deadline, Now: now,
		Created: nodeCreationTimes(children, suite.Spec.Cluster.NodeCount()), Shape: suite.Spec.Cluster,
		TablesKept: kept.Kept, TablesLost: kept.Lost,
		DedicatedVM:   planned.Platform.Type == vmbenchv1.PlatformVM && planned.Platform.DedicatedCPUsOf(suite.Spec.Cluster),
		SharedStorage: suite.Spec.SharedStorage,
	})
	if t.suiteTimedOut {
		markNotRun(st, suite.Spec.SuiteTimeout(), now)
	}
	done := finishedRun{Status: *active, PlatformType: planned.Platform.Type, FailedBenchmarks: typesOf(failed, benchmarks), Children: children}
	// The next run starts once this status write and the cleanup are done; the cleanup's events say so.
	return step{finished: []finishedRun{done}, timedOut: t.suiteTimedOut}, nil
}

// memberTrouble lists the run's pods (cached) and names what went wrong with a member after it
// started (memberCause).
func (r *SuiteReconciler) memberTrouble(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string, children []client.Object,
	benchmarks []vmbenchv1.Benchmark) (*conditions.Cause, error) {
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run}); err != nil {
		return nil, fmt.Errorf("listing the pods of run %s: %w", run, err)
	}
	o := failure.MemberObservation{Run: run, Pods: pods.Items, Owners: map[types.UID]bool{}, Benchmarks: benchmarks}
	for _, obj := range children {
		o.Owners[obj.GetUID()] = true
		if _, ok := obj.(*mpiv2.MPIJob); ok {
			o.Since = obj.GetCreationTimestamp().Time
		}
		if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok {
			o.VMIs = append(o.VMIs, vmi)
		}
	}
	return failure.MemberCause(o), nil
}

// membersOf names what a platform's cluster is made of, for messages.
func membersOf(t vmbenchv1.PlatformType) string {
	if t == vmbenchv1.PlatformVM {
		return "VMs"
	}
	return "pods"
}

// childGone asks the API server, around the cache, whether a child no longer exists.
func (r *SuiteReconciler) childGone(ctx context.Context, namespace string, ref platform.ChildRef) (bool, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(ref.GVK)
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

func typesOf(names []string, benchmarks []vmbenchv1.Benchmark) []vmbenchv1.BenchmarkType {
	var out []vmbenchv1.BenchmarkType
	for _, b := range benchmarks {
		for _, n := range names {
			if b.Name == n {
				out = append(out, b.Type)
			}
		}
	}
	return out
}

// nodeCreationTimes maps each node of a run to the creation time of what runs it: its VMI, or for
// pods (which are the MPI Operator's children, not ours) the MPIJob.
func nodeCreationTimes(objs []client.Object, nodes int32) map[string]time.Time {
	out := map[string]time.Time{}
	for _, obj := range objs {
		switch obj.GetObjectKind().GroupVersionKind().Kind {
		case "VirtualMachineInstance":
			out[obj.GetLabels()[vmbenchv1.LabelNode]] = obj.GetCreationTimestamp().Time
		case "MPIJob":
			for _, n := range platform.NodeNames(nodes) {
				out[n] = obj.GetCreationTimestamp().Time
			}
		}
	}
	return out
}
