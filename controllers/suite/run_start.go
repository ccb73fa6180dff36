package suite

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// Starting a run: the checks its platform needs, then its children, or what keeps them from being
// created until the run's startup limit.

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
//
// A run's start is the slowest reconcile of a burst, and its time is its round trips one after the
// other (docs/performance.md, "Fourth pass"): what it decides on is read at the same time as the
// suite (readBeforeStart), and each answer taken in its place below; TestRunStartRoundTrips pins
// the rounds.
func (r *SuiteReconciler) startRun(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	adapter platform.Adapter, run platform.Run, now, suiteEnd time.Time, startup time.Duration) (step, error) {
	reads := r.readBeforeStart(ctx, suite, adapter, run)
	defer reads.wait()
	stale, err := r.staleCache(ctx, suite)
	if err != nil || stale {
		return step{result: ctrl.Result{RequeueAfter: settle}}, err
	}
	if active.StartTime == nil {
		active.StartTime = &metav1.Time{Time: now}
	}
	refuse := func(message string) (step, error) {
		return failToStart(active, run.Platform.Type, message, now), nil
	}
	if held := r.keyToStart(active); held != nil {
		return refuse(held.String())
	}
	for _, gvk := range adapter.Kinds() {
		if !r.Available[gvk] {
			return refuse(fmt.Sprintf("%s: the %s API (%s) is not installed in this cluster; install it and restart vmbench, or remove platform %s",
				vmbenchv1.ReasonPlatformMissing, gvk.Kind, gvk.GroupVersion(), run.Platform.Name))
		}
	}
	// The admission policy judged the suite once; the namespace's permission is checked at every run.
	if held, err := r.privilegedRefusal(ctx, suite, run.Platform); err != nil || held != nil {
		if err != nil {
			return step{}, err
		}
		return refuse(held.String())
	}
	if run.Platform.Type == vmbenchv1.PlatformVM {
		kubevirt, err := reads.kubeVirt.answer()
		if err != nil {
			return step{}, err
		}
		if r.Emulation == EmulationForbid && kubevirt.emulation {
			return refuse(fmt.Sprintf("%s: KubeVirt on this cluster runs VMs under software emulation (useEmulation: true) and vmbench runs with --emulation=forbid; "+
				"run on nodes with working KVM, or allow emulation (Helm value emulation: allow) to get VM figures marked as emulated", vmbenchv1.ReasonEmulationForbidden))
		}
		ns, readErr := reads.namespace.answer()
		held, err := vmNamespaceCheck(ctx, suite.Namespace, ns, readErr, kubevirt.launcher)
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
		if msg, err := r.ensureMigrationPolicy(ctx, active, run); err != nil || msg != "" {
			if err != nil {
				return step{}, err
			}
			return refuse(msg)
		}
	}
	// The ConfigMap that owns the run's Secrets comes first: their names derive from its UID.
	owner, held, err := r.ensureSecretsOwner(ctx, suite, run)
	if err != nil {
		return step{}, fmt.Errorf("run %s: %w", run.Name, err)
	}
	if held != nil {
		return r.waitToStart(active, run.Platform.Type, held, now, suiteEnd, startup)
	}
	run.SecretsOwner = owner
	run.AuthSecret = runAuthSecretName(run)
	objs, err := adapter.Build(run)
	if err != nil {
		return step{}, fmt.Errorf("building run %s: %w", run.Name, err)
	}
	markPerRunKeys(objs)
	// The run's Secret first: its pods need it, and it is the one child that the manager cannot read.
	objs = append([]client.Object{runAuthSecret(run)}, objs...)
	ownSecrets(objs, run)
	held, err = r.applyChildren(ctx, suite, objs, adapter.Kinds(), reads.owners)
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

// startReads are the reads a run's start decides on besides the suite, made at once with it: who
// holds each child's name and, for a VM run, KubeVirt's configuration and the suite's namespace.
type startReads struct {
	owners    *childOwners
	kubeVirt  *readAhead[kubeVirtConfig]
	namespace *readAhead[*corev1.Namespace]
}

// readBeforeStart starts the reads of a run's start in the background.
func (r *SuiteReconciler) readBeforeStart(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, adapter platform.Adapter, run platform.Run) startReads {
	reads := startReads{owners: r.readChildOwners(ctx, suite, adapter, run)}
	if run.Platform.Type == vmbenchv1.PlatformVM {
		reads.kubeVirt = startRead(func() (kubeVirtConfig, error) { return r.kubeVirtConfig(ctx) })
		reads.namespace = startRead(func() (*corev1.Namespace, error) { return r.readNamespace(ctx, suite.Namespace) })
	}
	return reads
}

// wait waits for every read, so that none outlives the start.
func (s startReads) wait() {
	s.owners.wait()
	if s.kubeVirt != nil {
		_, _ = s.kubeVirt.answer()
		_, _ = s.namespace.answer()
	}
}

// readAhead is a read made in the background; answer waits for it.
type readAhead[T any] struct {
	done  chan struct{}
	value T
	err   error
}

// startRead starts read in the background.
func startRead[T any](read func() (T, error)) *readAhead[T] {
	a := &readAhead[T]{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.value, a.err = read()
	}()
	return a
}

func (a *readAhead[T]) answer() (T, error) {
	<-a.done
	return a.value, a.err
}

// waitToStart records what keeps a pending run from being created, and fails the run once its
// startup limit has passed.
func (r *SuiteReconciler) waitToStart(active *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType, held *conditions.Cause,
	now, suiteEnd time.Time, startup time.Duration) (step, error) {
	if active.StartTime == nil {
		active.StartTime = &metav1.Time{Time: now}
	}
	startupEnd := after(active.StartTime.Time, startup)
	if !now.Before(startupEnd) {
		return failToStart(active, platformType, fmt.Sprintf("%s: the run's children could not be created within %s: %s",
			failure.ReasonStartupTimeout, startup, held), now), nil
	}
	active.Message = waitingMessage(held, startupEnd)
	st := step{waiting: held, result: ctrl.Result{RequeueAfter: requeueAfter(now, now.Add(pollWhileStarting), startupEnd, suiteEnd)}}
	if held.Reason == failure.ReasonChildRejected {
		st.rejected = held
	}
	return st, nil
}

// platformRun gathers what an adapter needs for a run.
func (r *SuiteReconciler) platformRun(suite *vmbenchv1.BenchmarkSuite, planned plannedRun, benchmarks []vmbenchv1.Benchmark) (platform.Run, error) {
	auth, err := r.runAuth(suite, planned)
	// Without a usable master key a run has no keys: it is not started (keyToStart) and not
	// collected (keyToCollect), so nothing reads them.
	if err != nil && r.masterKeyCause() == nil {
		return platform.Run{}, fmt.Errorf("deriving the keys of run %s: %w", planned.Name, err)
	}
	startup := r.startupLimit(planned.Platform.Type)
	return platform.Run{
		Suite: suite, Name: planned.Name, Platform: planned.Platform, Repetition: planned.Repetition,
		Benchmarks: benchmarks, Auth: auth, Images: r.Images,
		Deadline:  runDeadline(startup, benchmarks, suite.Spec.Cluster.NodeCount()),
		VMNetwork: r.VMNetwork, NetworkPolicy: r.NetworkPolicy,
	}, nil
}

// failToStart fails a run that never started with its cause; the step hands it to the cleanup.
func failToStart(active *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType, message string, now time.Time) step {
	active.Phase = vmbenchv1.RunFailed
	active.CompletionTime = &metav1.Time{Time: now}
	active.Message = conditions.Truncate(message, 1024)
	return step{result: ctrl.Result{RequeueAfter: settle}, finished: []finishedRun{{Status: *active, PlatformType: platformType}}}
}

// waitingMessage is a starting run's message while held holds it up: what, and until when.
func waitingMessage(held *conditions.Cause, startupEnd time.Time) string {
	return conditions.Truncate(fmt.Sprintf("waiting: %s; the run fails if it has not started by %s", held, startupEnd.UTC().Format(time.RFC3339)), 1024)
}
