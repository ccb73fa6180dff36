package suite

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/platform"
)

// The container arm of the migration benchmark (issue 32 item 2), on the manager's side: what a
// node drain does to a platform team's single-replica workload. The probe's CPU loop runs in a worker
// pod of the run (<run>-probe-<k>) that reports its work to the runner on the master, which keeps
// the probe's windows (internal/runner). Once the probe started, the manager makes the first worker;
// then Count times, one interval apart, it evicts the current worker through the Eviction API, as
// kubectl drain does, and as soon as the API server accepted (the pod is terminating or gone) makes
// its replacement on another node, as the ReplicaSet controller and a cordon together would. Each
// eviction is recorded in runs[].migrations (mode Eviction): its start is the eviction accepted,
// its end the replacement Ready. evictWhileProbing is the step a running run's reconcile takes; the
// decisions are the pure nextEviction below it.

// +kubebuilder:rbac:groups="",resources=pods,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create

// evictionPoll is how often a running eviction's pods are looked at: the manager does not watch
// pods it did not make through an owned kind.
const evictionPoll = 2 * time.Second

// probeWorkerSlack is how much longer than the probe a worker runs, so that the master's last
// window is not cut short by a worker that stopped first.
const probeWorkerSlack = 5 * time.Second

// evictWhileProbing runs the evictions of a running Container run's migration benchmark: it makes
// the probe's worker pod, evicts it when due, makes its replacement, and records each eviction in
// the run's status. It returns when to look again (zero: nothing more to do).
func (r *SuiteReconciler) evictWhileProbing(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	run platform.Run, params vmbenchv1.MigrationParams, now time.Time) (time.Time, error) {
	probeEnd := active.ProbeStartTime.Add(params.ProbeDuration())
	// The run's message is rebuilt on every pass: a failed eviction stays named while the run lasts.
	defer func() {
		if msg := evictionTrouble(evictionsOf(active), params.Count); msg != "" {
			active.Message = conditions.Truncate(msg, 1024)
		}
	}()
	// A few steps in one pass: an eviction accepted is followed by its replacement at once.
	for range 3 {
		pods, err := r.probeWorkerPods(ctx, suite, run.Name)
		if err != nil {
			return time.Time{}, err
		}
		workers := probeWorkersOf(suite, run.Name, pods)
		// An eviction whose record a failed status write lost is read back from its pods.
		for _, m := range lostEvictions(workers, evictionsOf(active)) {
			if len(active.Migrations) < maxRunMigrations {
				active.Migrations = append(active.Migrations, m)
			}
		}
		step := nextEviction(active.ProbeStartTime.Time, params, workers, evictionsOf(active), now)
		switch step.action {
		case evictionCreateWorker:
			pod := platform.ProbeWorkerPod(run, step.worker, max(probeEnd.Sub(now), 0)+probeWorkerSlack, step.avoidNode)
			if err := ctrl.SetControllerReference(suite, pod, r.Scheme); err != nil {
				return time.Time{}, err
			}
			if err := r.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
				return time.Time{}, fmt.Errorf("creating probe worker %s of run %s: %w", pod.Name, run.Name, err)
			}
			log.FromContext(ctx).Info("made the probe worker", "run", run.Name, "pod", pod.Name, "avoiding", step.avoidNode)
			return now.Add(evictionPoll), nil
		case evictionEvict:
			var w probeWorker
			for _, c := range workers {
				if c.k == step.worker {
					w = c
				}
			}
			m := vmbenchv1.RunMigration{SourcePod: w.name, SourceNode: w.node, Mode: vmbenchv1.MigrationModeEviction,
				Trigger: vmbenchv1.MigrationByBenchmark, Object: w.name, StartTime: &metav1.Time{Time: now}, Outcome: vmbenchv1.MigrationRunning}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: suite.Namespace}}
			err := r.SubResource("eviction").Create(ctx, pod, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: suite.Namespace}})
			if err != nil && !apierrors.IsNotFound(err) {
				refusal, ok := evictionRefusal(err, suite.Namespace, w.name)
				if !ok {
					return time.Time{}, fmt.Errorf("evicting probe worker %s of run %s: %w", w.name, run.Name, err)
				}
				m.Outcome, m.EndTime, m.Message = vmbenchv1.MigrationFailed, m.StartTime, conditions.Truncate(refusal, 512)
			}
			if len(active.Migrations) < maxRunMigrations {
				active.Migrations = append(active.Migrations, m)
			}
			active.MigrationsCreated = int32(min(len(evictionsOf(active)), vmbenchv1.MaxMigrationCount))
			log.FromContext(ctx).Info("evicted the probe worker", "run", run.Name, "pod", w.name, "outcome", m.Outcome)
			if m.Outcome == vmbenchv1.MigrationFailed {
				return now.Add(evictionPoll), nil
			}
		case evictionEnd:
			i := indexOfEviction(active, step.eviction)
			m := &active.Migrations[i]
			m.Outcome, m.EndTime = step.outcome, &metav1.Time{Time: step.at}
			m.TargetPod, m.TargetNode = step.target, step.targetNode
			if step.message != "" {
				m.Message = conditions.Truncate(step.message, 512)
			}
		case evictionWait:
			return step.at, nil
		default:
			return time.Time{}, nil
		}
	}
	return now.Add(evictionPoll), nil
}

// evictionRefusal says why the API server refused the eviction of pod, where it did so for a
// reason the run cannot wait out (a PodDisruptionBudget, 429, with the budget named in its cause);
// ok is false for any other error, which is retried.
func evictionRefusal(err error, namespace, pod string) (string, bool) {
	var status apierrors.APIStatus
	if !apierrors.IsTooManyRequests(err) || !errors.As(err, &status) {
		return "", false
	}
	msg := status.Status().Message
	var budgets []string
	if d := status.Status().Details; d != nil {
		for _, c := range d.Causes {
			if c.Type == policyv1.DisruptionBudgetCause {
				budgets = append(budgets, c.Message)
			}
		}
	}
	if len(budgets) > 0 {
		msg += " " + strings.Join(budgets, "; ")
	}
	return fmt.Sprintf("the API server refused the eviction of probe worker %s: %s; a PodDisruptionBudget of namespace %s selects it "+
		"(kubectl get pdb -n %s): make it select no pod labelled vmbench.io/role=probe, or let it allow a disruption", pod, msg, namespace, namespace), true
}

// evictionTrouble names the last of evictions that failed, as "eviction i of count: <why>"; empty
// when none did.
func evictionTrouble(evictions []vmbenchv1.RunMigration, count int32) string {
	for i := len(evictions) - 1; i >= 0; i-- {
		if evictions[i].Outcome == vmbenchv1.MigrationFailed {
			return fmt.Sprintf("eviction %d of %d: %s", i+1, count, evictions[i].Message)
		}
	}
	return ""
}

// closeProbeWorkers deletes a finished run's probe workers: they are not among the children the
// run's cleanup lists (pods are not an owned kind), and outlive the probe by a few seconds only.
func (r *SuiteReconciler) closeProbeWorkers(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string) error {
	pods, err := r.probeWorkerPods(ctx, suite, run)
	if err != nil {
		return err
	}
	for i := range pods {
		p := &pods[i]
		if !metav1.IsControlledBy(p, suite) || p.DeletionTimestamp != nil {
			continue
		}
		if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting probe worker %s of finished run %s: %w", p.Name, run, err)
		}
	}
	return nil
}

// probeWorkerPods lists the run's probe worker pods, uncached (pods are not an owned kind): the
// Container arm's evicted workers and the VM arm's peer.
func (r *SuiteReconciler) probeWorkerPods(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string) ([]corev1.Pod, error) {
	pods := &corev1.PodList{}
	if err := r.APIReader.List(ctx, pods, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelRun: run, vmbenchv1.LabelRole: vmbenchv1.RoleProbe}); err != nil {
		return nil, fmt.Errorf("listing the probe workers of run %s: %w", run, err)
	}
	return pods.Items, nil
}

// probeWorker is what the manager sees of one of the run's probe worker pods.
type probeWorker struct {
	name string
	k    int
	node string
	// gone: terminating (an eviction accepted) or ended.
	gone    bool
	ready   bool
	readyAt time.Time
	// created is when the pod was made; evictedAt when the API server accepted its eviction (its
	// deletionTimestamp less its grace period), zero while it is not terminating.
	created, evictedAt time.Time
	// unschedulable is the scheduler's reason and message while the pod cannot be placed.
	unschedulable string
}

// probeWorkersOf are the run's probe workers that the suite controls, in order of k.
func probeWorkersOf(suite *vmbenchv1.BenchmarkSuite, run string, pods []corev1.Pod) []probeWorker {
	var out []probeWorker
	for i := range pods {
		p := &pods[i]
		k, ok := platform.ProbeWorkerIndex(run, p.Name)
		if !ok || !metav1.IsControlledBy(p, suite) {
			continue
		}
		w := probeWorker{name: p.Name, k: k, node: p.Spec.NodeName,
			gone: p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed}
		w.created = p.CreationTimestamp.Time
		if d := p.DeletionTimestamp; d != nil {
			w.evictedAt = d.Time
			if g := p.DeletionGracePeriodSeconds; g != nil {
				w.evictedAt = d.Add(-time.Duration(*g) * time.Second)
			}
		}
		for _, c := range p.Status.Conditions {
			switch {
			case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
				w.ready, w.readyAt = true, c.LastTransitionTime.Time
			case c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable:
				w.unschedulable = c.Reason + ": " + conditions.OneLineString(c.Message)
			}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

// lostEvictions are the evictions the run's pods show but its status does not record: a
// replacement <run>-probe-<k> (k > 1) is made only after worker k-1 was evicted, so one without a
// record of worker k-1's eviction says that the status write after it failed. Each is recorded as
// running from when the API server accepted it (the evicted pod's deletionTimestamp less its grace
// period), or, with that pod gone, from when its replacement was made.
func lostEvictions(workers []probeWorker, evictions []vmbenchv1.RunMigration) []vmbenchv1.RunMigration {
	recorded := map[string]bool{}
	for _, e := range evictions {
		recorded[e.SourcePod] = true
	}
	byK := map[int]probeWorker{}
	for _, w := range workers {
		byK[w.k] = w
	}
	var out []vmbenchv1.RunMigration
	for _, w := range workers {
		if w.k < 2 {
			continue
		}
		source, seen := byK[w.k-1]
		name := strings.TrimSuffix(w.name, fmt.Sprintf("-%d", w.k)) + fmt.Sprintf("-%d", w.k-1)
		if recorded[name] {
			continue
		}
		start := w.created
		if seen && !source.evictedAt.IsZero() {
			start = source.evictedAt
		}
		out = append(out, vmbenchv1.RunMigration{SourcePod: name, SourceNode: source.node, Mode: vmbenchv1.MigrationModeEviction,
			Trigger: vmbenchv1.MigrationByBenchmark, Object: name, StartTime: &metav1.Time{Time: start}, Outcome: vmbenchv1.MigrationRunning})
	}
	return out
}

// evictionsOf are the run's recorded evictions, in order.
func evictionsOf(active *vmbenchv1.RunStatus) []vmbenchv1.RunMigration {
	var out []vmbenchv1.RunMigration
	for _, m := range active.Migrations {
		if m.Mode == vmbenchv1.MigrationModeEviction {
			out = append(out, m)
		}
	}
	return out
}

// indexOfEviction is the index in active.Migrations of eviction n (from 1).
func indexOfEviction(active *vmbenchv1.RunStatus, n int) int {
	for i, m := range active.Migrations {
		if m.Mode == vmbenchv1.MigrationModeEviction {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}

// evictionAction is what the run's evictions need next.
type evictionAction int

const (
	// evictionWait: nothing to do before at.
	evictionWait evictionAction = iota
	// evictionCreateWorker: create probe worker `worker`, off avoidNode where set.
	evictionCreateWorker
	// evictionEvict: evict probe worker `worker`, the current one.
	evictionEvict
	// evictionEnd: eviction `eviction` ended at `at` with outcome (the replacement target on
	// targetNode Ready, or not Ready in time, with message).
	evictionEnd
	// evictionsDone: nothing more to do before the run ends.
	evictionsDone
)

// evictionStep is the decision of nextEviction.
type evictionStep struct {
	action     evictionAction
	worker     int
	avoidNode  string
	eviction   int
	outcome    vmbenchv1.MigrationOutcome
	target     string
	targetNode string
	message    string
	at         time.Time
}

// nextEviction decides the run's next step from the probe's start, the benchmark's parameters
// (defaults applied), the run's probe workers (in order of k), its evictions recorded so far and now.
// The first worker is made as soon as the probe started. Eviction i is due at probeStart + lead-in +
// (i-1) × interval, as migration i of a VM is, once the current worker has been Ready for the span
// the dip's baseline is measured over (11 s) and no eviction is running; an eviction ends when its replacement is Ready, or fails once migrationTimeout passed
// without (with the scheduler's reason where it could not place the replacement). None starts
// once less than half an interval of probe is left, as its recovery could not be measured.
func nextEviction(probeStart time.Time, p vmbenchv1.MigrationParams, workers []probeWorker, evictions []vmbenchv1.RunMigration, now time.Time) evictionStep {
	timeout := p.MigrationTimeout.Duration()
	byName := map[string]probeWorker{}
	for _, w := range workers {
		byName[w.name] = w
	}
	if n := len(evictions); n > 0 && evictions[n-1].Outcome == vmbenchv1.MigrationRunning {
		e := evictions[n-1]
		source := byName[e.SourcePod]
		replacement, k := replacementOf(e.SourcePod)
		w, made := byName[replacement]
		deadline := e.StartTime.Add(timeout)
		switch {
		case made && w.ready:
			return evictionStep{action: evictionEnd, eviction: n, outcome: vmbenchv1.MigrationCompleted, target: w.name, targetNode: w.node, at: w.readyAt}
		case !now.Before(deadline):
			msg := fmt.Sprintf("the replacement %s of the evicted probe worker %s was not Ready within migrationTimeout %s", replacement, e.SourcePod, timeout)
			switch {
			case made && w.unschedulable != "":
				msg += fmt.Sprintf(": the scheduler cannot place it off node %s (%s); the container arm needs two schedulable nodes that fit the probe worker (it asks for cluster.cpuRequest, at most 1 CPU, and 64Mi): lower cluster.cpuRequest, add a node or free one", e.SourceNode, w.unschedulable)
			case !made:
				msg += ": it was not made (the evicted pod is still there)"
			}
			return evictionStep{action: evictionEnd, eviction: n, outcome: vmbenchv1.MigrationFailed, target: replacement, at: now, message: msg}
		case !made && (source.gone || source.name == ""):
			return evictionStep{action: evictionCreateWorker, worker: k + 1, avoidNode: e.SourceNode}
		}
		return evictionStep{action: evictionWait, at: earliest(now.Add(evictionPoll), deadline)}
	}
	var current *probeWorker
	for i := range workers {
		if !workers[i].gone {
			current = &workers[i]
		}
	}
	if current == nil {
		if len(workers) == 0 && len(evictions) == 0 {
			return evictionStep{action: evictionCreateWorker, worker: 1}
		}
		return evictionStep{action: evictionsDone}
	}
	next := len(evictions) + 1
	if next > int(p.Count) {
		return evictionStep{action: evictionsDone}
	}
	due, late := migrationDue(probeStart, p, next, now)
	if late {
		return evictionStep{action: evictionsDone}
	}
	if now.Before(due) {
		return evictionStep{action: evictionWait, at: due}
	}
	if !current.ready {
		return evictionStep{action: evictionWait, at: now.Add(evictionPoll)}
	}
	// The dip is measured against the rate of the span before the eviction: the worker must have
	// reported for that long (a replacement, or a first worker that was slow to start).
	if settled := current.readyAt.Add(disruption.BaselineSpan + disruption.Slack); now.Before(settled) {
		return evictionStep{action: evictionWait, at: settled}
	}
	return evictionStep{action: evictionEvict, worker: current.k}
}

// replacementOf is the name of the probe worker that replaces the worker name (<run>-probe-<k>),
// and k.
func replacementOf(name string) (string, int) {
	i := strings.LastIndex(name, "-probe-")
	if i < 0 {
		return "", 0
	}
	run := name[:i]
	k, _ := platform.ProbeWorkerIndex(run, name)
	return platform.ProbeWorkerName(run, k+1), k
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
