// Package controllers holds the BenchmarkSuite controller: it fans a suite out into one run at a time
// (a platform's small cluster running every benchmark once), collects each run's results from the
// runner's log into status, and deletes the run's children once the results are safe.
package suite

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/masterkey"
	"github.com/vmbench/vmbench/controllers/runqueue"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/metrics"
	"github.com/vmbench/vmbench/internal/platform"
)

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
	// CordonPoll is how often a running Container or Host run's nodes are read for a cordon
	// (drain_policy.go); 0 means every 30 seconds.
	CordonPoll time.Duration
	// MasterKey derives every run's keys; it comes from a Secret in the manager's own namespace.
	MasterKey platform.MasterKey
	// MasterKeyFault, when set, is why the manager has no usable master key (master_key.go): suites
	// not admitted stay in line, and runs that need the key fail with it.
	MasterKeyFault *masterkey.MasterKeyFault
	// MaxActiveRuns is how many suites may run at once across the namespaces the manager runs;
	// the others wait in line (queue_policy.go). 0 or less: no limit.
	MaxActiveRuns int
	// MaxActiveRunsPerNamespace is how many of those one namespace may hold; 0 or less: no limit.
	MaxActiveRunsPerNamespace int
	// MaxSuiteDuration caps every suite's spec.timeout, counted from its admission; 0: no cap.
	MaxSuiteDuration time.Duration
	// QueueNamespace is the manager's own namespace, where the run queue's Leases are
	// (queue_lease.go).
	QueueNamespace string
	// Namespaces are the namespaces the manager runs suites in, as its cache is restricted to them;
	// empty for every namespace. The queue's uncached reads stay within them.
	Namespaces []string

	// queue is the run queue (queue.go), made from the fields above at its first use.
	queue     *runqueue.Queue
	queueOnce sync.Once
}

// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites/finalizers,verbs=update
// +kubebuilder:rbac:groups=kubeflow.org,resources=mpijobs,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstances,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=kubevirt.io,resources=kubevirts,verbs=get;list
// Children are written by server-side apply (patch), never by update.
// +kubebuilder:rbac:groups="",resources=configmaps;services;persistentvolumeclaims,verbs=get;list;watch;create;patch;delete
// Secrets: create only. Patch and deletecollection return contents, so they would read any Secret;
// a run's Secrets are never read back, and go with the ConfigMap that owns them (run_keys.go).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get
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
			if err := r.collectMigrationPolicies(ctx, req.NamespacedName, nil); err != nil {
				return ctrl.Result{}, err
			}
			return r.releaseAfter(ctx, req.NamespacedName, nil)
		}
		return ctrl.Result{}, err
	}
	if !suite.DeletionTimestamp.IsZero() {
		if err := r.collectMigrationPolicies(ctx, req.NamespacedName, suite); err != nil {
			return ctrl.Result{}, err
		}
		return r.releaseAfter(ctx, req.NamespacedName, suite)
	}
	orig := suite.DeepCopy()
	now := r.Clock.Now()
	benchmarks := DefaultedBenchmarks(suite)
	st := &suite.Status
	syncRuns(st, plannedRuns(suite))

	state := suiteState{Generation: suite.Generation, Now: now, InvalidSpec: validateSpec(suite, benchmarks)}
	var next step
	var queue runqueue.Decision
	keyHold := r.keyHoldsAdmission(suite, state.InvalidSpec)
	if keyHold != nil {
		state.Waiting = keyHold
	}
	// An admin's end or requeue (queue_admin.go), acted on once: the annotation goes after the
	// status write.
	action, endNow := suite.Annotations[AnnotationQueue], false
	if state.InvalidSpec == nil && !runqueue.SuiteEnded(suite) {
		switch action {
		case QueueEnd:
			// It waits for no slot and starts nothing; its slot goes with its pods and VMs.
			if err := r.stopActiveRun(ctx, suite); err != nil {
				return ctrl.Result{}, err
			}
			endNow = endRuns(st, metav1.Time{Time: now})
		case QueueRequeue:
			if err := r.requeue(ctx, suite); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if state.InvalidSpec == nil && keyHold == nil && !endNow {
		var err error
		if queue, err = r.runQueue().Admit(ctx, suite, now); err != nil {
			return ctrl.Result{}, err
		}
		switch {
		case queue.Stale:
			return ctrl.Result{RequeueAfter: settle}, nil
		case queue.Wait != nil:
			// The watch on the suites ahead brings this one back (queueChanged).
			state.Waiting = &conditions.Cause{Reason: vmbenchv1.ReasonWaitingForRun, Message: queue.Wait.Message()}
		case queue.Idle && st.StartTime == nil:
			// Ended before it was admitted: nothing of it ever ran.
		case queue.Admitted:
			// The admission is in status before any child exists, so that children never run
			// outside a slot. The suite comes back to start its run after the write: not on the write's
			// watch event alone, which a suite admitted again after a requeue may not send (its
			// place in the queue looks as it did before the requeue, and its start time may be the same).
			next.result = ctrl.Result{RequeueAfter: settle}
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
	setQueued(st, queue.Wait, state.InvalidSpec, suite.Generation, suite.Spec, r.MaxSuiteDuration)
	setQueuedByKey(st, keyHold, suite.Generation)

	st.Ratios = summary.ComputeRatios(st, suite.Spec.Baseline)
	st.Headline = summary.Headline(suite.Spec, st.Ratios)
	if st.Headline != nil {
		st.Headline.Band = summary.HeadlineBand(suite)
	}
	st.MigrationSummaries = summary.MigrationSummaries(suite)
	setConditions(st, state)
	setPrecisionReached(suite, precision)
	st.ObservedGeneration = suite.Generation
	summary.FitWithWarnings(st, func() []string { return warnings(suite.Spec, st, r.VMNetwork) })

	// A status that this pass left as it was is not written: the suites in line are reconciled each
	// time the line moves, and most of them stay where they were.
	if !equality.Semantic.DeepEqual(orig.Status, suite.Status) {
		if err := r.Status().Patch(ctx, suite, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				logger.V(1).Info("status conflict, retrying")
				return ctrl.Result{Requeue: true}, nil
			}
			r.statusNotWritten(suite, err)
			return ctrl.Result{}, fmt.Errorf("writing status: %w", err)
		}
	}
	if action == QueueEnd || action == QueueRequeue {
		if err := r.forgetQueueAnnotation(ctx, suite); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.emitTransitions(orig, suite, next)
	r.emitQueueTransitions(orig, suite)
	// The suite's series are laid out (3-15 ms for a suite with results, docs/performance.md, "Eighth
	// pass") while the finished run's children are deleted: neither changes the suite.
	// A panic there goes on in the reconcile's own goroutine, where controller-runtime recovers it
	// as before, rather than ending the process.
	recorded := make(chan struct{})
	var recordPanic any
	go func() {
		defer close(recorded)
		defer func() { recordPanic = recover() }()
		metrics.RecordSuite(suite)
	}()
	waitRecorded := func() {
		<-recorded
		if recordPanic != nil {
			panic(recordPanic)
		}
	}
	// The finished run's results are persisted now, so its children can go; their deletion events
	// bring the suite back to start the next run.
	for _, f := range next.finished {
		if err := r.deleteRun(ctx, f.Status.Name, f.Children); err != nil {
			waitRecorded()
			return ctrl.Result{}, err
		}
	}
	waitRecorded()
	// A run's MigrationPolicy is cluster-scoped, so no garbage collector removes it with the run.
	if err := r.collectMigrationPolicies(ctx, req.NamespacedName, suite); err != nil {
		return ctrl.Result{}, err
	}
	if runqueue.SuiteEnded(suite) {
		// Its slot goes once its pods and VMs are gone (queue_lease.go).
		return r.releaseAfter(ctx, req.NamespacedName, suite)
	}
	return next.result, nil
}

// releaseAfter releases the run slot of a suite that ended, is being deleted or is gone, once its
// pods and VMs are gone; until then their deletion events bring it back, and a poll in case one
// was missed.
func (r *SuiteReconciler) releaseAfter(ctx context.Context, key types.NamespacedName, suite *vmbenchv1.BenchmarkSuite) (ctrl.Result, error) {
	held, err := r.runQueue().ReleaseSlots(ctx, key, suite)
	if err != nil || !held {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: drainPoll}, nil
}

// drainPoll is how often a suite whose pods or VMs are being removed is looked at again.
const drainPoll = 15 * time.Second

// SetupWithManager registers the owner index and the watches. Child kinds whose API is missing are
// not watched, so that vmbench starts on a cluster without KubeVirt or the MPI Operator.
func (r *SuiteReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	// Only spec changes of the suite itself matter: the controller requeues after its own status writes;
	b := ctrl.NewControllerManagedBy(mgr).
		// and its annotations, among them an admin's vmbench.io/queue (queue_admin.go).
		For(&vmbenchv1.BenchmarkSuite{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}))).
		Named("benchmarksuite")
	if err := r.MasterKey.Validate(); err != nil && r.MasterKeyFault == nil {
		return err
	}
	if _, err := warmConversions(); err != nil {
		return err
	}
	// ConfigMaps, Services, NetworkPolicies and PodDisruptionBudgets are watched as metadata only (cache_policy.go).
	kinds := cachepolicy.MetadataKinds()
	cm, svc, np, pdb := kinds[0], kinds[1], kinds[2], kinds[3]
	owned := []client.Object{cachepolicy.MetadataObject(cm), cachepolicy.MetadataObject(svc), &corev1.PersistentVolumeClaim{},
		cachepolicy.MetadataObject(np), cachepolicy.MetadataObject(pdb)}
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
		if cachepolicy.IsMetadataKind(obj) {
			b = b.Owns(obj, builder.OnlyMetadata)
		} else {
			b = b.Owns(obj)
		}
	}
	// A suite that is admitted, moves on, ends or is deleted moves the suites in line.
	b = b.Watches(&vmbenchv1.BenchmarkSuite{}, handler.EnqueueRequestsFromMapFunc(r.runQueue().QueueRequests), builder.WithPredicates(runqueue.Changed()))
	// A slot released once the last pods and VMs of a suite are gone moves the suites in line too.
	if r.QueueNamespace == "" {
		return fmt.Errorf("the run queue needs the manager's namespace for its Leases (QueueNamespace)")
	}
	queue := r.runQueue()
	queue.Wake = make(chan event.GenericEvent, 64)
	b = b.WatchesRawSource(source.Channel(queue.Wake, handler.EnqueueRequestsFromMapFunc(queue.QueueRequests)))
	// A run's pods are the MPI Operator's or KubeVirt's, not the suite's, but they carry its labels:
	// what they say (unschedulable, an image that cannot be pulled) brings the suite back at once.
	b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(suiteOfLabels))
	b = r.watchMigrationPolicies(b)
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
