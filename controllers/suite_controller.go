// Package controllers holds the BenchmarkSuite controller: it fans a suite out into one run at a time
// (a platform's small cluster running every benchmark once), collects each run's results from the
// runner's log into status, and deletes the run's children once the results are safe.
package controllers

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/metrics"
	"github.com/vmbench/vmbench/internal/platform"
)

// FieldManager is the one server-side apply field manager of vmbench.
const FieldManager = "vmbench"

// settle is how soon a suite is looked at again when no watch event will say that it can go on: after
// a run that never started, or while the cache has not yet caught up with the suite's last write.
const settle = time.Second

// ownerIndex indexes children by the name of the BenchmarkSuite that controls them.
const ownerIndex = ".metadata.controller.benchmarksuite"

// SuiteReconciler reconciles BenchmarkSuites.
type SuiteReconciler struct {
	client.Client
	// APIReader reads around the cache: before a run starts, and for the pods whose logs are read.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  events.EventRecorder
	Clock     clock.PassiveClock
	Logs      LogReader
	Images    platform.Images
	// VMNetwork is the VM interface binding; VMNetworkAuto asks the cluster's KubeVirt CR when a VM
	// run starts.
	VMNetwork platform.VMNetwork
	// Emulation says whether VM runs may use software emulation.
	Emulation EmulationPolicy
	// ContainerStartup and VMStartup are how long a run's cluster may take to come up, on top of its
	// benchmarks' timeouts.
	ContainerStartup time.Duration
	VMStartup        time.Duration
	// Available lists the child kinds whose APIs are installed; runs on a platform whose kind is
	// missing fail with a message that names what to install.
	Available map[schema.GroupVersionKind]bool
	// NetworkPolicy gives every container and VM run a NetworkPolicy that admits connections to its
	// pods only from its own pods.
	NetworkPolicy bool
	// MasterKey derives every run's keys; it comes from a Secret in the manager's own namespace.
	MasterKey platform.MasterKey
	// MaxActiveRuns is how many suites may run at once across the namespaces the manager runs;
	// the others wait in line (queue_policy.go). 0 or less: no limit.
	MaxActiveRuns int
	// Namespaces are the namespaces the manager runs suites in, as its cache is restricted to them;
	// empty for every namespace. The queue's uncached reads stay within them.
	Namespaces []string

	// admissionMu serializes admissions to the run queue.
	admissionMu sync.Mutex
}

// childKinds are the kinds of objects a suite may own; each is listed through the owner index.
// Secrets are not among them: the manager creates a run's Secrets and never reads them back (see
// run_keys.go); the run's cleanup deletes them by label, and garbage collection with the suite.
func childKinds() []client.ObjectList {
	return []client.ObjectList{&corev1.ConfigMapList{}, &corev1.ServiceList{}, &corev1.PersistentVolumeClaimList{},
		&networkingv1.NetworkPolicyList{}}
}

// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites/finalizers,verbs=update
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstances,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=kubevirts,verbs=get;list
// +kubebuilder:rbac:groups="",resources=configmaps;services;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;patch;deletecollection
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=list
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// The launcher Job that controls the pod whose log is read, to check that the run's MPIJob controls it.
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get
// The suite's namespace, whose Pod Security level must admit KubeVirt's virt-launcher pods.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// The metrics endpoint asks the API server who a scraper is and whether it may read /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Reconcile moves one suite forward: it starts the next run, or collects the running one, and
// writes the status once.
func (r *SuiteReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	suite := &vmbenchv1.BenchmarkSuite{}
	if err := r.Get(ctx, req.NamespacedName, suite); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetSuite(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if !suite.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	orig := suite.DeepCopy()
	now := r.Clock.Now()
	benchmarks := DefaultedBenchmarks(suite)
	st := &suite.Status
	syncRuns(st, plannedRuns(suite))

	state := suiteState{Generation: suite.Generation, Now: now, InvalidSpec: validateSpec(suite, benchmarks)}
	var next step
	var queue queueDecision
	if state.InvalidSpec == nil {
		var err error
		if queue, err = r.admit(ctx, suite, now); err != nil {
			return ctrl.Result{}, err
		}
		defer queue.done()
		switch {
		case queue.Stale:
			return ctrl.Result{RequeueAfter: settle}, nil
		case queue.Wait != nil:
			// The watch on the suites ahead brings this one back (queueChanged).
			state.Waiting = &cause{Reason: vmbenchv1.ReasonWaitingForRun, Message: queue.Wait.message()}
		case queue.Admitted && r.MaxActiveRuns > 0:
			// The admission is in status before any child exists, so that children never run
			// outside a slot; the watch event of this write brings the suite back to start its run.
		default:
			if next, err = r.advance(ctx, suite, benchmarks, now); err != nil {
				return ctrl.Result{}, err
			}
			state.TimedOut, state.Waiting = next.timedOut, next.waiting
		}
	}
	var precision precisionJudgement
	if state.InvalidSpec == nil {
		// After the run's results are in status and before the conditions: a suite whose target is
		// not reached gets its next repetition's runs instead of ending.
		precision = applyPrecision(suite)
	}
	setQueued(st, queue.Wait, state.InvalidSpec, suite.Generation)

	st.Ratios = computeRatios(st, suite.Spec.Baseline)
	st.Headline = headline(suite.Spec, st.Ratios)
	setConditions(st, state)
	setPrecisionReached(suite, precision)
	st.ObservedGeneration = suite.Generation
	fitWithWarnings(st, func() []string { return warnings(suite.Spec, st, r.VMNetwork) })

	// A status that this pass left as it was is not written: the suites in line are reconciled each
	// time the line moves, and most of them stay where they were.
	if !equality.Semantic.DeepEqual(orig.Status, suite.Status) {
		if err := r.Status().Patch(ctx, suite, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				logger.V(1).Info("status conflict, retrying")
				return ctrl.Result{Requeue: true}, nil
			}
			return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
		}
	}
	r.emitTransitions(orig, suite, next)
	r.emitQueueTransitions(orig, suite)
	metrics.RecordSuite(suite)
	// The finished run's results are persisted now, so its children can go; their deletion events
	// bring the suite back to start the next run.
	for _, f := range next.finished {
		if err := r.deleteRun(ctx, suite, f.Status.Name, f.Children); err != nil {
			return ctrl.Result{}, err
		}
	}
	return next.result, nil
}

// deleteRun deletes the children of a run whose results are in status. Its Secrets go first and by
// label, as the manager does not cache them: children left over afterwards say that the cleanup
// was cut short, and bring it back.
func (r *SuiteReconciler) deleteRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string, children []client.Object) error {
	err := r.DeleteAllOf(ctx, &corev1.Secret{}, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run})
	if err != nil {
		return fmt.Errorf("deleting the Secrets of finished run %s: %w", run, err)
	}
	for _, obj := range children {
		if err := r.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s of finished run %s: %w", obj.GetName(), run, err)
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

// syncRuns makes status list every planned run in order, keeping what is known of each.
func syncRuns(st *vmbenchv1.BenchmarkSuiteStatus, planned []plannedRun) {
	known := make(map[string]vmbenchv1.RunStatus, len(st.Runs))
	for _, r := range st.Runs {
		known[r.Name] = r
	}
	runs := make([]vmbenchv1.RunStatus, 0, len(planned))
	for _, p := range planned {
		r, ok := known[p.Name]
		if !ok {
			r = vmbenchv1.RunStatus{Name: p.Name, Platform: p.Platform.Name, Repetition: p.Repetition, Phase: vmbenchv1.RunPending}
		}
		runs = append(runs, r)
	}
	st.Runs = runs
}

// step is what one reconcile decided for a suite, besides the changes to its status.
type step struct {
	result   ctrl.Result
	finished []finishedRun
	timedOut bool
	// waiting is what holds the active run up, for the Progressing condition; nil when it goes on.
	waiting *cause
	// rejected is set when the API server refused a child: a Warning event says so.
	rejected *cause
}

// advance cleans up finished runs, then starts, follows or collects the active run of an admitted
// suite. The suite's clock starts at its admission (queue_policy.go), so that a suite whose children
// are refused still times out.
func (r *SuiteReconciler) advance(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, benchmarks []vmbenchv1.Benchmark,
	now time.Time) (step, error) {
	st := &suite.Status
	suiteEnd := after(st.StartTime.Time, suite.Spec.SuiteTimeout())
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
		if err := r.deleteRun(ctx, suite, run.Name, children[run.Name]); err != nil {
			return step{}, err
		}
	}

	active := activeRun(st)
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
			markNotRun(st, "not started: the suite timed out after "+suite.Spec.SuiteTimeout().String(), now)
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
			"this run's results are lost, later runs go on", ReasonChildDeleted, outcome.Gone)}
	}
	if err := r.lookAtStartup(ctx, suite, active, planned.Platform.Type, children); err != nil {
		return step{}, err
	}
	if planned.Platform.Type == vmbenchv1.PlatformVM {
		recordVMSettings(st, planned.Platform.Name, children)
	}
	end := after(active.StartTime.Time, run.Deadline)
	startupEnd := after(active.StartTime.Time, t.startup)
	runTimedOut := !now.Before(end)
	if !outcome.Finished() && !runTimedOut && !t.suiteTimedOut {
		if outcome.Phase == platform.PhaseRunning {
			if active.EndTime == nil {
				active.Message = ""
			}
			return step{result: ctrl.Result{RequeueAfter: requeueAfter(now, end, t.suiteEnd)}}, nil
		}
		held, err := r.holdUp(ctx, suite, run, children, active.StartTime.Time)
		if err != nil {
			return step{}, err
		}
		switch {
		case held != nil && held.Terminal:
			// Waiting for the startup limit would change nothing.
			outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: held.String()}
		case now.Before(startupEnd):
			if held == nil {
				held = &cause{Reason: ReasonStarting, Message: fmt.Sprintf("the run's %s are starting", membersOf(planned.Platform.Type))}
			}
			active.Message = truncate(fmt.Sprintf("waiting: %s; the run fails if it has not started by %s", held,
				startupEnd.UTC().Format(time.RFC3339)), 1024)
			return step{waiting: held, result: ctrl.Result{RequeueAfter: requeueAfter(now, now.Add(pollWhileStarting), startupEnd, end, t.suiteEnd)}}, nil
		default:
			msg := fmt.Sprintf("%s: the run's %s did not start within %s", ReasonStartupTimeout, membersOf(planned.Platform.Type), t.startup)
			if held != nil {
				msg += ": " + held.String()
			}
			outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: msg}
		}
	}

	if active.EndTime == nil {
		active.EndTime = &metav1.Time{Time: now}
	}
	keys, err := r.frameKeysOf(suite, run.Name)
	if err != nil {
		return step{}, err
	}
	var report runReport
	if !retired {
		report, err = r.readReport(ctx, suite, adapter.LogSource(run), children, keys)
	}
	if err != nil {
		retryEnd := after(active.EndTime.Time, collectRetry)
		if now.Before(retryEnd) {
			held := &cause{Reason: ReasonLogUnreadable, Message: fmt.Sprintf("reading the runner's log of run %s failed, retrying until %s: %v",
				run.Name, retryEnd.UTC().Format(time.RFC3339), err)}
			active.Message = truncate("collecting: "+held.Message, 1024)
			return step{waiting: held, result: ctrl.Result{RequeueAfter: collectBackoff(now.Sub(active.EndTime.Time))}}, nil
		}
		report = runReport{LogErr: fmt.Errorf("%s: gave up after %s: %w", ReasonLogUnreadable, collectRetry, err)}
	}
	if raw := rawOutputs(suite, run.Name, report); raw != nil {
		if err := r.apply(ctx, suite, raw); err != nil {
			return step{}, fmt.Errorf("keeping the raw outputs of run %s: %w", run.Name, err)
		}
	}
	kept := resultTables(suite, run.Name, planned.Platform.Name, benchmarks, report)
	for _, cm := range kept.maps {
		if err := r.apply(ctx, suite, cm); err != nil {
			return step{}, fmt.Errorf("keeping the result tables of run %s: %w", run.Name, err)
		}
	}
	for _, l := range kept.causes {
		log.FromContext(ctx).Info("a result table is not kept", "run", run.Name, "benchmark", l.Benchmark, "node", l.Node, "variant", l.Variant, "cause", l.Cause)
	}
	failed := finishRun(st, active, planned.Platform.Type, benchmarks, runCompletion{
		Report: report, Outcome: outcome, TimedOut: runTimedOut || t.suiteTimedOut, Deadline: run.Deadline, Now: now,
		Created: nodeCreationTimes(children, suite.Spec.Cluster.NodeCount()), Shape: suite.Spec.Cluster,
		TablesKept: kept.kept, TablesLost: kept.lost,
		DedicatedVM:   planned.Platform.Type == vmbenchv1.PlatformVM && planned.Platform.DedicatedCPUsOf(suite.Spec.Cluster),
		SharedStorage: suite.Spec.SharedStorage,
	})
	if t.suiteTimedOut {
		markNotRun(st, "not started: the suite timed out after "+suite.Spec.SuiteTimeout().String(), now)
	}
	done := finishedRun{Status: *active, PlatformType: planned.Platform.Type, FailedBenchmarks: typesOf(failed, benchmarks), Children: children}
	// The next run starts once this status write and the cleanup are done; the cleanup's events say so.
	return step{finished: []finishedRun{done}, timedOut: t.suiteTimedOut}, nil
}

// membersOf names what a platform's cluster is made of, for messages.
func membersOf(t vmbenchv1.PlatformType) string {
	if t == vmbenchv1.PlatformVM {
		return "VMs"
	}
	return "pods"
}

// startupLimit is how long a platform's cluster may take to come up.
func (r *SuiteReconciler) startupLimit(t vmbenchv1.PlatformType) time.Duration {
	if t == vmbenchv1.PlatformVM {
		return r.VMStartup
	}
	return r.ContainerStartup
}

// startRun applies a run's children. It first re-reads the suite around the cache: a stale copy that
// still shows an already finished run as pending must never start it a second time. The run's clock
// starts with the first attempt, so that children the API server keeps refusing fail the run at its
// startup limit, with the refusal as the cause.
func (r *SuiteReconciler) startRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	adapter platform.Adapter, run platform.Run, now, suiteEnd time.Time, startup time.Duration) (step, error) {
	stale, err := r.staleCache(ctx, suite)
	if err != nil || stale {
		return step{result: ctrl.Result{RequeueAfter: settle}}, err
	}
	if active.StartTime == nil {
		active.StartTime = &metav1.Time{Time: now}
	}
	refuse := func(message string) (step, error) {
		active.Phase = vmbenchv1.RunFailed
		active.CompletionTime = &metav1.Time{Time: now}
		active.Message = truncate(message, 1024)
		return step{result: ctrl.Result{RequeueAfter: settle}, finished: []finishedRun{{Status: *active, PlatformType: run.Platform.Type}}}, nil
	}
	for _, gvk := range adapter.Kinds() {
		if !r.Available[gvk] {
			return refuse(fmt.Sprintf("%s: the %s API (%s) is not installed in this cluster; install it and restart vmbench, or remove platform %s",
				vmbenchv1.ReasonPlatformMissing, gvk.Kind, gvk.GroupVersion(), run.Platform.Name))
		}
	}
	if run.Platform.Type == vmbenchv1.PlatformVM {
		kubevirt, err := r.kubeVirtConfig(ctx)
		if err != nil {
			return step{}, err
		}
		if r.Emulation == EmulationForbid && kubevirt.emulation {
			return refuse(fmt.Sprintf("%s: KubeVirt on this cluster runs VMs under software emulation (useEmulation: true) and vmbench runs with --emulation=forbid; "+
				"run on nodes with working KVM, or allow emulation (Helm value emulation: allow) to get VM figures marked as emulated", vmbenchv1.ReasonEmulationForbidden))
		}
		held, err := r.vmNamespaceCheck(ctx, suite.Namespace, kubevirt.launcher)
		if err != nil {
			return step{}, err
		}
		if held != nil {
			return refuse(held.String())
		}
		run.VMNetwork = r.VMNetwork
		if run.VMNetwork == platform.VMNetworkAuto {
			run.VMNetwork = kubevirt.network
		}
		run.VMNetwork = platform.RunVMNetwork(run.Platform, run.VMNetwork)
		if msg := platform.UnsupportedVMSettings(run.Platform, kubevirt.features); msg != "" {
			return refuse(vmbenchv1.ReasonVMSettingUnsupported + ": " + msg)
		}
		active.Network = string(run.VMNetwork)
	}
	objs, err := adapter.Build(run)
	if err != nil {
		return step{}, fmt.Errorf("building run %s: %w", run.Name, err)
	}
	markPerRunKeys(objs)
	// The run's Secret first: its pods need it, and it is the one child that the manager cannot read.
	objs = append([]client.Object{runAuthSecret(run)}, objs...)
	held, err := r.applyChildren(ctx, suite, objs)
	if err != nil {
		return step{}, fmt.Errorf("run %s: %w", run.Name, err)
	}
	if held != nil {
		return r.waitToStart(active, run.Platform.Type, held, now, suiteEnd, startup)
	}
	active.Phase = vmbenchv1.RunRunning
	active.Message = ""
	log.FromContext(ctx).Info("run started", "run", run.Name, "platform", run.Platform.Name, "deadline", run.Deadline)
	return step{result: ctrl.Result{RequeueAfter: requeueAfter(now, now.Add(pollWhileStarting), after(now, startup), suiteEnd)}}, nil
}

// waitToStart records what keeps a pending run from being created, and fails the run once its
// startup limit has passed.
func (r *SuiteReconciler) waitToStart(active *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType, held *cause,
	now, suiteEnd time.Time, startup time.Duration) (step, error) {
	if active.StartTime == nil {
		active.StartTime = &metav1.Time{Time: now}
	}
	startupEnd := after(active.StartTime.Time, startup)
	if !now.Before(startupEnd) {
		active.Phase = vmbenchv1.RunFailed
		active.CompletionTime = &metav1.Time{Time: now}
		active.Message = truncate(fmt.Sprintf("%s: the run's children could not be created within %s: %s", ReasonStartupTimeout, startup, held), 1024)
		return step{result: ctrl.Result{RequeueAfter: settle}, finished: []finishedRun{{Status: *active, PlatformType: platformType}}}, nil
	}
	active.Message = truncate(fmt.Sprintf("waiting: %s; the run fails if it has not started by %s", held, startupEnd.UTC().Format(time.RFC3339)), 1024)
	st := step{waiting: held, result: ctrl.Result{RequeueAfter: requeueAfter(now, now.Add(pollWhileStarting), startupEnd, suiteEnd)}}
	if held.Reason == ReasonChildRejected {
		st.rejected = held
	}
	return st, nil
}

// staleCache reports whether the API server holds a newer suite than the cache gave this reconcile.
func (r *SuiteReconciler) staleCache(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) (bool, error) {
	fresh := &vmbenchv1.BenchmarkSuite{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(suite), fresh); err != nil {
		return false, err
	}
	return fresh.ResourceVersion != suite.ResourceVersion, nil
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

// platformRun gathers what an adapter needs for a run.
func (r *SuiteReconciler) platformRun(suite *vmbenchv1.BenchmarkSuite, planned plannedRun, benchmarks []vmbenchv1.Benchmark) (platform.Run, error) {
	auth, err := r.runAuth(suite, planned)
	if err != nil {
		return platform.Run{}, fmt.Errorf("deriving the keys of run %s: %w", planned.Name, err)
	}
	startup := r.startupLimit(planned.Platform.Type)
	return platform.Run{
		Suite: suite, Name: planned.Name, Platform: planned.Platform, Repetition: planned.Repetition,
		Benchmarks: benchmarks, AuthSecret: runAuthSecretName(planned.Name), Auth: auth, Images: r.Images,
		Deadline:  runDeadline(startup, benchmarks, suite.Spec.Cluster.NodeCount()),
		VMNetwork: r.VMNetwork, NetworkPolicy: r.NetworkPolicy,
	}, nil
}

func activeRun(st *vmbenchv1.BenchmarkSuiteStatus) *vmbenchv1.RunStatus {
	for i := range st.Runs {
		if p := st.Runs[i].Phase; p == vmbenchv1.RunPending || p == vmbenchv1.RunRunning {
			return &st.Runs[i]
		}
	}
	return nil
}

func plannedByName(suite *vmbenchv1.BenchmarkSuite, name string) plannedRun {
	for _, p := range plannedRuns(suite) {
		if p.Name == name {
			return p
		}
	}
	return plannedRun{}
}

// markNotRun fails every run that never started, with the reason.
func markNotRun(st *vmbenchv1.BenchmarkSuiteStatus, msg string, now time.Time) {
	for i := range st.Runs {
		if st.Runs[i].Phase == vmbenchv1.RunPending {
			st.Runs[i].Phase = vmbenchv1.RunFailed
			st.Runs[i].Message = msg
			st.Runs[i].CompletionTime = &metav1.Time{Time: now}
		}
	}
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

// SetupWithManager registers the owner index and the watches. Child kinds whose API is missing are
// not watched, so that vmbench starts on a cluster without KubeVirt or the MPI Operator.
func (r *SuiteReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	// Only spec changes of the suite itself matter: the controller requeues after its own status writes.
	b := ctrl.NewControllerManagedBy(mgr).
		For(&vmbenchv1.BenchmarkSuite{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Named("benchmarksuite")
	if err := r.MasterKey.Validate(); err != nil {
		return err
	}
	owned := []client.Object{&corev1.ConfigMap{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{}, &networkingv1.NetworkPolicy{}}
	for _, gvk := range optionalKinds() {
		if !r.Available[gvk] {
			continue
		}
		obj, err := r.Scheme.New(gvk)
		if err != nil {
			return err
		}
		owned = append(owned, obj.(client.Object))
	}
	for _, obj := range owned {
		if err := mgr.GetFieldIndexer().IndexField(ctx, obj, ownerIndex, indexOwner); err != nil {
			return fmt.Errorf("indexing %T by owner: %w", obj, err)
		}
		b = b.Owns(obj)
	}
	// A suite that is admitted, moves on, ends or is deleted moves the suites in line.
	b = b.Watches(&vmbenchv1.BenchmarkSuite{}, handler.EnqueueRequestsFromMapFunc(r.queueRequests), builder.WithPredicates(queueChanged()))
	// A run's pods are the MPI Operator's or KubeVirt's, not the suite's, but they carry its labels:
	// what they say (unschedulable, an image that cannot be pulled) brings the suite back at once.
	b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(suiteOfLabels))
	// Several suites go on at once; one reconcile is bounded, so that a stalled API call or log
	// stream cannot hold every suite.
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: 4, ReconciliationTimeout: reconcileTimeout}).Complete(r)
}

// reconcileTimeout bounds one reconcile; the log read inside it has its own, shorter bound.
const reconcileTimeout = 5 * time.Minute

// suiteOfLabels maps an object that carries a suite's label to that suite.
func suiteOfLabels(_ context.Context, obj client.Object) []reconcile.Request {
	name := obj.GetLabels()[vmbenchv1.LabelSuite]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: name}}}
}

func indexOwner(obj client.Object) []string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.APIVersion != vmbenchv1.GroupVersion.String() || owner.Kind != "BenchmarkSuite" {
		return nil
	}
	return []string{owner.Name}
}
