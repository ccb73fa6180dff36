package suite

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runqueue"
	"github.com/vmbench/vmbench/internal/platform"
)

// A VM platform's vm.migrationPolicy (issue 32 item 4, migration settings as platforms) becomes a
// KubeVirt MigrationPolicy while each of its runs lasts: made when the run starts
// (ensureMigrationPolicy, built by platform.MigrationPolicy), selecting that run's VMIs alone, and
// removed once the run is over (collectMigrationPolicies). A MigrationPolicy is cluster-scoped, so
// the suite cannot own it and the garbage collector does not remove it: the manager does, at the
// reconcile that sees the run ended, the suite end or go, and after a restart, when the watch's
// first list brings back the suite of each policy left over.
//
// KubeVirt picks, for each migration, the policy whose selectors match the most of the VMI's and
// its namespace's labels together (every label of a selector must match; on equal counts, more VMI
// labels win). This one matches three: the namespace's name, the suite and the run. KubeVirt writes
// the name of the policy it applied into the VMI's migrationState, which the run's migrations
// record (migrations[].policy): a cluster's policy with more matching labels would show there.

// +kubebuilder:rbac:groups=migrations.kubevirt.io,resources=migrationpolicies,verbs=get;list;watch;create;delete

// migrationPolicyGVK is KubeVirt's MigrationPolicy; a cluster without it runs VM platforms that
// set no vm.migrationPolicy.
var migrationPolicyGVK = platform.MigrationPolicyGVK

// ensureMigrationPolicy makes the run's MigrationPolicy, when its platform sets one, and records its
// name in the run's status. refusal is set when the run cannot have it: the cluster serves no
// MigrationPolicy API, or the API server refuses the policy; the run then fails, as it would run
// with the cluster's migration settings instead of its platform's.
func (r *SuiteReconciler) ensureMigrationPolicy(ctx context.Context, active *vmbenchv1.RunStatus, run platform.Run) (refusal string, err error) {
	policy := platform.MigrationPolicy(run)
	if policy == nil {
		return "", nil
	}
	unavailable := func(why string) string {
		return fmt.Sprintf("%s: platform %s sets vm.migrationPolicy, which vmbench applies through a KubeVirt MigrationPolicy, but %s; "+
			"install or upgrade KubeVirt to one that serves %s (v0.49 or later) and restart vmbench, or remove migrationPolicy from platform %s",
			vmbenchv1.ReasonMigrationPolicyUnavailable, run.Platform.Name, why, migrationPolicyGVK.GroupVersion(), run.Platform.Name)
	}
	if !r.Available[migrationPolicyGVK] {
		return unavailable(fmt.Sprintf("this cluster does not serve the MigrationPolicy API (%s)", migrationPolicyGVK.GroupVersion())), nil
	}
	err = r.Create(ctx, policy)
	switch {
	case err == nil:
		active.MigrationPolicy = policy.Name
		return "", nil
	case apierrors.IsAlreadyExists(err):
		if err := r.keepOrReplace(ctx, policy); err != nil {
			return "", err
		}
		active.MigrationPolicy = policy.Name
		return "", nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return unavailable(fmt.Sprintf("the MigrationPolicy API (%s) is gone from this cluster", migrationPolicyGVK.GroupVersion())), nil
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		return fmt.Sprintf("%s: the API server refused MigrationPolicy %s of platform %s: %v; grant the manager create on migrationpolicies.migrations.kubevirt.io "+
			"(the chart's RBAC does) and admit the run's policy (the chart's admission policy does), or remove migrationPolicy from platform %s",
			vmbenchv1.ReasonMigrationPolicyUnavailable, policy.Name, run.Platform.Name, err, run.Platform.Name), nil
	}
	return "", fmt.Errorf("creating MigrationPolicy %s: %w", policy.Name, err)
}

// keepOrReplace judges the policy of the run's name that exists already: made by an earlier attempt
// of this run's start, it has the run's settings and is kept; left by a deleted suite of the same
// name whose platform said otherwise (and not yet collected), it is deleted, and the error retries
// the start, which creates the run's own.
func (r *SuiteReconciler) keepOrReplace(ctx context.Context, want *migrationsv1alpha1.MigrationPolicy) error {
	had := &migrationsv1alpha1.MigrationPolicy{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(want), had); err != nil {
		return fmt.Errorf("reading MigrationPolicy %s: %w", want.Name, err)
	}
	if equality.Semantic.DeepEqual(had.Spec, want.Spec) {
		return nil
	}
	if err := r.Delete(ctx, had); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("removing MigrationPolicy %s, left with other settings: %w", want.Name, err)
	}
	return fmt.Errorf("MigrationPolicy %s was left with other settings than platform %s's and is being replaced", want.Name, want.Labels[vmbenchv1.LabelPlatform])
}

// collectMigrationPolicies removes the MigrationPolicies of the suite key names whose run is over:
// every one when the suite is gone (suite nil), being deleted or ended; else those of runs that are
// neither pending nor running. It reads the cache, so a reconcile with nothing to remove costs no
// request.
func (r *SuiteReconciler) collectMigrationPolicies(ctx context.Context, key types.NamespacedName, suite *vmbenchv1.BenchmarkSuite) error {
	if !r.Available[migrationPolicyGVK] {
		return nil
	}
	list := &migrationsv1alpha1.MigrationPolicyList{}
	if err := r.List(ctx, list, client.MatchingLabels{vmbenchv1.LabelSuite: key.Name, vmbenchv1.LabelSuiteNamespace: key.Namespace}); err != nil {
		return fmt.Errorf("listing the MigrationPolicies of suite %s: %w", key, err)
	}
	live := map[string]bool{}
	if suite != nil && suite.DeletionTimestamp.IsZero() && !runqueue.SuiteEnded(suite) {
		for _, run := range suite.Status.Runs {
			if run.Phase == vmbenchv1.RunPending || run.Phase == vmbenchv1.RunRunning {
				live[run.Name] = true
			}
		}
	}
	for i := range list.Items {
		policy := &list.Items[i]
		if live[policy.Labels[vmbenchv1.LabelRun]] || !policy.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Delete(ctx, policy); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("removing MigrationPolicy %s of ended run %s: %w", policy.Name, policy.Labels[vmbenchv1.LabelRun], err)
		}
	}
	return nil
}

// watchMigrationPolicies brings back the suite of each MigrationPolicy vmbench made: at the
// manager's start, the watch's first list brings the suites of policies a stopped manager left, so
// that collectMigrationPolicies removes those whose run or suite is over.
func (r *SuiteReconciler) watchMigrationPolicies(b *builder.Builder) *builder.Builder {
	if !r.Available[migrationPolicyGVK] {
		return b
	}
	return b.Watches(&migrationsv1alpha1.MigrationPolicy{}, handler.EnqueueRequestsFromMapFunc(r.suiteOfMigrationPolicy))
}

// suiteOfMigrationPolicy maps a MigrationPolicy vmbench made to its suite. The policies are
// cluster-scoped, so a manager that runs suites in some namespaces only also sees those of another
// vmbench's suites elsewhere: those are not its to judge, and are left alone.
func (r *SuiteReconciler) suiteOfMigrationPolicy(_ context.Context, obj client.Object) []reconcile.Request {
	name, ns := obj.GetLabels()[vmbenchv1.LabelSuite], obj.GetLabels()[vmbenchv1.LabelSuiteNamespace]
	if name == "" || ns == "" || (len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, ns)) {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
