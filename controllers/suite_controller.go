// Package controllers holds the BenchmarkSuite controller: it fans a suite out into one run at a time
// (a platform's small cluster running every benchmark once), collects each run's results from the
// runner's log into status, and deletes the run's children once the results are safe.
package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

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
}

// childKinds are the kinds of objects a suite may own; each is listed through the owner index.
func childKinds() []client.ObjectList {
	return []client.ObjectList{&corev1.ConfigMapList{}, &corev1.SecretList{}, &corev1.ServiceList{}, &corev1.PersistentVolumeClaimList{}}
}

// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstances,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=kubevirts,verbs=get;list
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services;persistentvolumeclaims,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

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
	var result ctrl.Result
	var finished []finishedRun
	var err error
	if state.InvalidSpec == nil {
		result, finished, state.TimedOut, err = r.advance(ctx, suite, benchmarks, now)
		if err != nil {
			return ctrl.Result{}, err
		}
	}

	st.Ratios = computeRatios(st, suite.Spec.Baseline)
	st.Headline = headline(suite.Spec, st.Ratios)
	setConditions(st, state)
	st.ObservedGeneration = suite.Generation
	// Warnings are set both before and after fitting, as fitting may add one.
	st.Warnings = warnings(suite.Spec, st, r.VMNetwork)
	if fitStatus(st) {
		st.Warnings = warnings(suite.Spec, st, r.VMNetwork)
	}

	if err := r.Status().Patch(ctx, suite, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsConflict(err) {
			logger.V(1).Info("status conflict, retrying")
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
	}
	r.emitTransitions(orig, suite, finished)
	metrics.RecordSuite(suite)
	// The finished run's results are persisted now, so its children can go; their deletion events
	// bring the suite back to start the next run.
	for _, f := range finished {
		if err := r.deleteRun(ctx, f.Status.Name, f.Children); err != nil {
			return ctrl.Result{}, err
		}
	}
	return result, nil
}

// deleteRun deletes the children of a run whose results are in status.
func (r *SuiteReconciler) deleteRun(ctx context.Context, run string, children []client.Object) error {
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

// advance cleans up finished runs, then collects or starts the active run.
func (r *SuiteReconciler) advance(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, benchmarks []vmbenchv1.Benchmark,
	now time.Time) (ctrl.Result, []finishedRun, bool, error) {
	st := &suite.Status
	children, err := r.listChildren(ctx, suite)
	if err != nil {
		return ctrl.Result{}, nil, false, err
	}
	// Children of runs whose results are in status go (again, should the deletion right after the
	// status write have been lost); the next run waits until they are gone, so that no run shares the
	// cores with the previous one.
	lingering := false
	for _, run := range st.Runs {
		if run.Phase != vmbenchv1.RunSucceeded && run.Phase != vmbenchv1.RunFailed {
			continue
		}
		lingering = lingering || len(children[run.Name]) > 0
		if err := r.deleteRun(ctx, run.Name, children[run.Name]); err != nil {
			return ctrl.Result{}, nil, false, err
		}
	}

	timedOut := st.StartTime != nil && now.After(st.StartTime.Add(suite.Spec.SuiteTimeout()))
	active := activeRun(st)
	if active == nil {
		return ctrl.Result{}, nil, timedOut, nil
	}
	planned := plannedByName(suite, active.Name)
	adapter, err := platform.For(planned.Platform.Type)
	if err != nil {
		return ctrl.Result{}, nil, false, err
	}
	run, err := r.platformRun(ctx, suite, planned, benchmarks)
	if err != nil {
		return ctrl.Result{}, nil, false, err
	}
	run.VMNetwork = platform.VMNetwork(active.Network)

	if active.Phase == vmbenchv1.RunPending {
		if timedOut {
			markNotRun(st, "not started: the suite timed out after "+suite.Spec.SuiteTimeout().String(), now)
			return ctrl.Result{}, nil, true, nil
		}
		if lingering {
			return ctrl.Result{RequeueAfter: settle}, nil, false, nil
		}
		return r.startRun(ctx, suite, active, adapter, run, now)
	}

	if len(children[run.Name]) == 0 {
		// Either the cache has not seen this suite's last write yet (the run already ended and its
		// children were deleted), or someone deleted the children of a running run.
		stale, err := r.staleCache(ctx, suite)
		if err != nil || stale {
			return ctrl.Result{RequeueAfter: settle}, nil, false, err
		}
		// Or the cache has not seen the children of a run that just started.
		exist, err := r.childrenExist(ctx, suite.Namespace, run.Name, adapter.Kinds())
		if err != nil || exist {
			return ctrl.Result{RequeueAfter: settle}, nil, false, err
		}
	}
	outcome := adapter.Observe(run, platform.Children{Objects: children[run.Name]})
	if len(children[run.Name]) == 0 {
		outcome = platform.Outcome{Phase: platform.PhaseFailed, Message: "the run's children were deleted before it finished"}
	}
	deadline := active.StartTime.Add(run.Deadline)
	runTimedOut := now.After(deadline)
	if !outcome.Finished() && !runTimedOut && !timedOut {
		return ctrl.Result{RequeueAfter: deadline.Sub(now)}, nil, false, nil
	}
	report := r.readReport(ctx, suite, adapter.LogSource(run), run.Auth.Token)
	if raw := rawOutputs(suite, run.Name, report); raw != nil {
		if err := r.apply(ctx, suite, raw); err != nil {
			return ctrl.Result{}, nil, false, fmt.Errorf("keeping the raw outputs of run %s: %w", run.Name, err)
		}
	}
	failed := finishRun(st, active, planned.Platform.Type, benchmarks, runCompletion{
		Report: report, Outcome: outcome, TimedOut: runTimedOut || timedOut, Deadline: run.Deadline, Now: now,
		Created: nodeCreationTimes(children[run.Name], suite.Spec.Cluster.NodeCount()),
	})
	if timedOut {
		markNotRun(st, "not started: the suite timed out after "+suite.Spec.SuiteTimeout().String(), now)
	}
	done := finishedRun{Status: *active, PlatformType: planned.Platform.Type, FailedBenchmarks: typesOf(failed, benchmarks),
		Children: children[run.Name]}
	// The next run starts once this status write and the cleanup are done; the cleanup's events say so.
	return ctrl.Result{}, []finishedRun{done}, timedOut, nil
}

// startRun applies a run's children. It first re-reads the suite around the cache: a stale copy that
// still shows an already finished run as pending must never start it a second time.
func (r *SuiteReconciler) startRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	adapter platform.Adapter, run platform.Run, now time.Time) (ctrl.Result, []finishedRun, bool, error) {
	stale, err := r.staleCache(ctx, suite)
	if err != nil || stale {
		return ctrl.Result{RequeueAfter: settle}, nil, false, err
	}
	refuse := func(message string) (ctrl.Result, []finishedRun, bool, error) {
		active.Phase = vmbenchv1.RunFailed
		active.StartTime = &metav1.Time{Time: now}
		active.CompletionTime = active.StartTime
		active.Message = message
		return ctrl.Result{RequeueAfter: settle}, []finishedRun{{Status: *active, PlatformType: run.Platform.Type}}, false, nil
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
			return ctrl.Result{}, nil, false, err
		}
		if r.Emulation == EmulationForbid && kubevirt.emulation {
			return refuse(fmt.Sprintf("%s: KubeVirt on this cluster runs VMs under software emulation (useEmulation: true) and vmbench runs with --emulation=forbid; "+
				"run on nodes with working KVM, or allow emulation (Helm value emulation: allow) to get VM figures marked as emulated", vmbenchv1.ReasonEmulationForbidden))
		}
		run.VMNetwork = r.VMNetwork
		if run.VMNetwork == platform.VMNetworkAuto {
			run.VMNetwork = kubevirt.network
		}
		active.Network = string(run.VMNetwork)
	}
	objs, err := adapter.Build(run)
	if err != nil {
		return ctrl.Result{}, nil, false, fmt.Errorf("building run %s: %w", run.Name, err)
	}
	for _, obj := range objs {
		if err := r.apply(ctx, suite, obj); err != nil {
			return ctrl.Result{}, nil, false, fmt.Errorf("applying %s %s of run %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), run.Name, err)
		}
	}
	active.Phase = vmbenchv1.RunRunning
	active.StartTime = &metav1.Time{Time: now}
	if suite.Status.StartTime == nil {
		suite.Status.StartTime = active.StartTime
	}
	log.FromContext(ctx).Info("run started", "run", run.Name, "platform", run.Platform.Name, "deadline", run.Deadline)
	return ctrl.Result{RequeueAfter: run.Deadline}, nil, false, nil
}

// staleCache reports whether the API server holds a newer suite than the cache gave this reconcile.
func (r *SuiteReconciler) staleCache(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) (bool, error) {
	fresh := &vmbenchv1.BenchmarkSuite{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(suite), fresh); err != nil {
		return false, err
	}
	return fresh.ResourceVersion != suite.ResourceVersion, nil
}

// childrenExist asks the API server, around the cache, whether a run has children of the given kinds.
func (r *SuiteReconciler) childrenExist(ctx context.Context, namespace, run string, kinds []schema.GroupVersionKind) (bool, error) {
	for _, gvk := range kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.APIReader.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{vmbenchv1.LabelRun: run}, client.Limit(1)); err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// platformRun gathers what an adapter needs for a run.
func (r *SuiteReconciler) platformRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, planned plannedRun,
	benchmarks []vmbenchv1.Benchmark) (platform.Run, error) {
	auth, err := r.ensureAuth(ctx, suite)
	if err != nil {
		return platform.Run{}, err
	}
	startup := r.ContainerStartup
	if planned.Platform.Type == vmbenchv1.PlatformVM {
		startup = r.VMStartup
	}
	return platform.Run{
		Suite: suite, Name: planned.Name, Platform: planned.Platform, Repetition: planned.Repetition,
		Benchmarks: benchmarks, AuthSecret: authSecretName(suite), Auth: auth, Images: r.Images,
		Deadline:  runDeadline(startup, benchmarks, suite.Spec.Cluster.NodeCount()),
		VMNetwork: r.VMNetwork,
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
func (r *SuiteReconciler) emitTransitions(orig, suite *vmbenchv1.BenchmarkSuite, finished []finishedRun) {
	if r.Recorder == nil {
		return
	}
	for _, run := range suite.Status.Runs {
		if run.Phase == vmbenchv1.RunRunning && findRun(orig.Status.Runs, run.Name).Phase != vmbenchv1.RunRunning {
			r.Recorder.Eventf(suite, nil, corev1.EventTypeNormal, "RunStarted", "Start", "run %s started on platform %s", run.Name, run.Platform)
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
	owned := []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{}}
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
	return b.Complete(r)
}

func indexOwner(obj client.Object) []string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.APIVersion != vmbenchv1.GroupVersion.String() || owner.Kind != "BenchmarkSuite" {
		return nil
	}
	return []string{owner.Name}
}
