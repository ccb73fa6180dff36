package suite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubevirtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// optionalKinds are child kinds that come with another operator and may be missing from a cluster.
func optionalKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		mpiv2.SchemeGroupVersion.WithKind("MPIJob"),
		kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"),
	}
}

// optionalKindProviders say what serves each optional child kind.
var optionalKindProviders = map[schema.GroupVersionKind]string{
	mpiv2.SchemeGroupVersion.WithKind("MPIJob"):                      "the MPI Operator (its v2beta1 API)",
	kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"): "KubeVirt",
}

// AvailableKinds asks the API server which optional child kinds it serves, and whether it serves
// KubeVirt's MigrationPolicy (migration_policy.go). Only a kind the server says it does not know is
// unavailable; any other error (the server not answering) is returned, so that a passing fault
// never disables a platform until the next restart.
func AvailableKinds(mapper meta.RESTMapper) (map[schema.GroupVersionKind]bool, error) {
	out := map[schema.GroupVersionKind]bool{}
	for _, gvk := range append(optionalKinds(), migrationPolicyGVK) {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil && !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("asking the API server whether it serves %s %s: %w", gvk.GroupVersion(), gvk.Kind, err)
		}
		out[gvk] = err == nil
	}
	return out, nil
}

// UnavailablePlatforms says, for each optional child kind the cluster does not serve, which platform
// types cannot run for want of it and what to install; empty when every platform type can run.
func UnavailablePlatforms(available map[schema.GroupVersionKind]bool) []string {
	var out []string
	for _, gvk := range optionalKinds() {
		if available[gvk] {
			continue
		}
		var types []string
		for _, t := range []vmbenchv1.PlatformType{vmbenchv1.PlatformContainer, vmbenchv1.PlatformVM, vmbenchv1.PlatformHost} {
			if adapter, err := platform.For(t); err == nil && slices.Contains(adapter.Kinds(), gvk) {
				types = append(types, string(t))
			}
		}
		out = append(out, fmt.Sprintf("platforms of type %s are unavailable: the %s API (%s) is not served; install %s and restart vmbench",
			strings.Join(types, " and "), gvk.Kind, gvk.GroupVersion(), optionalKindProviders[gvk]))
	}
	return out
}

// listChildren returns the suite's children by run name, found through the owner index.
func (r *SuiteReconciler) listChildren(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) (map[string][]client.Object, error) {
	lists := childKinds()
	if r.Available[mpiv2.SchemeGroupVersion.WithKind("MPIJob")] {
		lists = append(lists, &mpiv2.MPIJobList{})
	}
	if r.Available[kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")] {
		lists = append(lists, &kubevirtv1.VirtualMachineInstanceList{})
	}
	out := map[string][]client.Object{}
	for _, list := range lists {
		if err := r.List(ctx, list, client.InNamespace(suite.Namespace), client.MatchingFields{ownerIndex: suite.Name}); err != nil {
			return nil, fmt.Errorf("listing children %T: %w", list, err)
		}
		gvk, err := r.listItemGVK(list)
		if err != nil {
			return nil, err
		}
		err = meta.EachListItem(list, func(o runtime.Object) error {
			obj := o.(client.Object)
			// The cache's objects have no TypeMeta; adapters look at Kind.
			obj.GetObjectKind().SetGroupVersionKind(gvk)
			// The index keys on the suite's name: an earlier suite of the same name may still own some.
			if owner := metav1.GetControllerOf(obj); owner == nil || owner.UID != suite.UID {
				return nil
			}
			if run := obj.GetLabels()[vmbenchv1.LabelRun]; run != "" {
				out[run] = append(out[run], obj)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *SuiteReconciler) listItemGVK(list client.ObjectList) (schema.GroupVersionKind, error) {
	if pom, ok := list.(*metav1.PartialObjectMetadataList); ok {
		gvk := pom.GroupVersionKind()
		gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
		return gvk, nil
	}
	gvk, err := r.GroupVersionKindFor(list)
	if err != nil {
		return schema.GroupVersionKind{}, err
	}
	gvk.Kind = gvk.Kind[:len(gvk.Kind)-len("List")]
	return gvk, nil
}

// apply server-side applies a child that the suite controls, with vmbench's one field manager.
func (r *SuiteReconciler) apply(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, obj client.Object) error {
	if err := ctrl.SetControllerReference(suite, obj, r.Scheme); err != nil {
		return err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: content}
	// Only fields vmbench owns: never status, never server-set metadata.
	delete(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(vmbenchv1.FieldManager), client.ForceOwnership)
}

// applyChildren applies the children of a run, unless an object of one of their names belongs to
// another suite (an earlier suite of the same name whose children are still being deleted, say):
// acting on it would adopt it. Who holds each name was read before (owners, read while the start
// read the suite); Secrets, which the manager may not read, are only created, with names that no
// other object's Secrets can have (createSecret). A refusal that will not heal by retrying (any 4xx
// but conflict and throttling) comes back as a cause, not an error, so that it reaches the suite's
// status and events.
//
// The children are applied in two waves, each at once: first what the workload needs (its Secrets,
// plan, Service, claim, NetworkPolicy and disruption budget), then the workload, the kinds its
// adapter makes (the MPIJob, the VMIs), so that no pod starts before what guards or feeds it. One
// after the other they were the most of the round trips of the slowest reconcile of a burst
// (docs/performance.md, "Fourth pass"). The answer is the one applying them one after the other in
// order gave: the first child's cause or error, in order; a later wave is not applied after an
// earlier one failed.
func (r *SuiteReconciler) applyChildren(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, objs []client.Object,
	workload []schema.GroupVersionKind, owners *childOwners) (*conditions.Cause, error) {
	if held, err := owners.answer(ctx, objs); held != nil || err != nil {
		return held, err
	}
	var needs, makes []client.Object
	for _, obj := range objs {
		if slices.Contains(workload, obj.GetObjectKind().GroupVersionKind()) {
			makes = append(makes, obj)
		} else {
			needs = append(needs, obj)
		}
	}
	for _, wave := range [][]client.Object{needs, makes} {
		held := make([]*conditions.Cause, len(wave))
		errs := make([]error, len(wave))
		atOnce(len(wave), func(i int) { held[i], errs[i] = r.applyChild(ctx, suite, wave[i]) })
		for i := range wave {
			if held[i] != nil || errs[i] != nil {
				return held[i], errs[i]
			}
		}
	}
	return nil, nil
}

// atOnce calls do for each of 0 to n-1, childrenAtOnce at a time, and returns once every call has.
func atOnce(n int, do func(i int)) {
	var g errgroup.Group
	g.SetLimit(childrenAtOnce)
	for i := range n {
		g.Go(func() error {
			do(i)
			return nil
		})
	}
	_ = g.Wait()
}

// childrenAtOnce bounds the requests about one run's children in flight at once: a VM run of 8
// nodes has 11 children besides its VMIs, and up to 4 reconciles go on at once.
const childrenAtOnce = 8

// applyChild creates a Secret, or applies any other child, and says whether the API server refused
// it for good.
func (r *SuiteReconciler) applyChild(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, obj client.Object) (*conditions.Cause, error) {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if secret, ok := obj.(*corev1.Secret); ok {
		held, err := r.createSecret(ctx, secret)
		return held, wrapApply(err, kind, obj)
	}
	err := r.apply(ctx, suite, obj)
	if err != nil && refusedForGood(err) {
		return &conditions.Cause{Reason: failure.ReasonChildRejected, Message: fmt.Sprintf("the API server refused %s %s: %s", kind, obj.GetName(), conditions.OneLineString(err.Error()))}, nil
	}
	return nil, wrapApply(err, kind, obj)
}

func wrapApply(err error, kind string, obj client.Object) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("applying %s %s: %w", kind, obj.GetName(), err)
}

// childOwners is the answer of checkOwners for the children of a run about to start, read in the
// background while the start reads the suite (readChildOwners), and taken where the check stands,
// after the start's refusals (answer).
type childOwners struct {
	r     *SuiteReconciler
	suite *vmbenchv1.BenchmarkSuite
	// read names the children whose owners are read in ahead; both nil when none were.
	read  []childKey
	ahead *readAhead[*conditions.Cause]
}

// childKey is a child's kind and name.
type childKey struct {
	kind schema.GroupVersionKind
	name string
}

// readChildOwners starts checkOwners on the children the run will have. Their names do not depend
// on the ConfigMap that owns the run's Secrets, which may not exist yet and which only the Secrets'
// names derive from: a build without it names them. A run that this build fails reads nothing now
// (its start fails at its build, after the refusals, as before).
func (r *SuiteReconciler) readChildOwners(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, adapter platform.Adapter, run platform.Run) *childOwners {
	o := &childOwners{r: r, suite: suite}
	run.SecretsOwner, run.AuthSecret = "", ""
	objs, err := adapter.Build(run)
	if err != nil {
		return o
	}
	o.read = childKeys(objs)
	o.ahead = startRead(func() (*conditions.Cause, error) { return r.checkOwners(ctx, suite, objs) })
	return o
}

// answer waits for the reads and answers for objs, the run's children as they are applied. Children
// other than those read (a build that failed, or names that came out different) are read now.
func (o *childOwners) answer(ctx context.Context, objs []client.Object) (*conditions.Cause, error) {
	if o.ahead != nil {
		held, err := o.ahead.answer()
		if slices.Equal(o.read, childKeys(objs)) {
			return held, err
		}
	}
	return o.r.checkOwners(ctx, o.suite, objs)
}

// wait waits for the reads, so that none outlives the start.
func (o *childOwners) wait() {
	if o.ahead != nil {
		_, _ = o.ahead.answer()
	}
}

// childKeys names the children checkOwners reads: every one but the Secrets.
func childKeys(objs []client.Object) []childKey {
	keys := []childKey{}
	for _, obj := range objs {
		if _, ok := obj.(*corev1.Secret); !ok {
			keys = append(keys, childKey{kind: obj.GetObjectKind().GroupVersionKind(), name: obj.GetName()})
		}
	}
	return keys
}

// checkOwners checks every child but the Secrets with checkOwner, the reads at once (a run's start
// is the slowest reconcile of a burst, docs/performance.md, "Fourth pass"), and answers as the checks
// one after the other would: the first child's cause or error, in order.
func (r *SuiteReconciler) checkOwners(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, objs []client.Object) (*conditions.Cause, error) {
	held := make([]*conditions.Cause, len(objs))
	errs := make([]error, len(objs))
	atOnce(len(objs), func(i int) {
		if _, ok := objs[i].(*corev1.Secret); !ok {
			held[i], errs[i] = r.checkOwner(ctx, suite, objs[i])
		}
	})
	for i := range objs {
		if held[i] != nil || errs[i] != nil {
			return held[i], errs[i]
		}
	}
	return nil, nil
}

// checkOwner reads a child around the cache and says whether it is another suite's, or still
// being deleted.
func (r *SuiteReconciler) checkOwner(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, obj client.Object) (*conditions.Cause, error) {
	kind := obj.GetObjectKind().GroupVersionKind()
	existing, err := r.readMeta(ctx, obj)
	if existing == nil || err != nil {
		return nil, err
	}
	return ownedHere(suite, existing, kind.Kind), nil
}

// ownedHere says whether an existing child is another suite's, or still being deleted: a cause to
// wait for.
func ownedHere(suite *vmbenchv1.BenchmarkSuite, existing client.Object, kind string) *conditions.Cause {
	if owner := metav1.GetControllerOf(existing); owner == nil || owner.UID != suite.UID {
		return &conditions.Cause{Reason: failure.ReasonChildOfAnotherSuite, Message: fmt.Sprintf("%s %s exists and is not this suite's (%s); "+
			"vmbench waits until it is deleted, or delete it yourself", kind, existing.GetName(), controllerOf(existing))}
	}
	if existing.GetDeletionTimestamp() != nil {
		return &conditions.Cause{Reason: failure.ReasonChildOfAnotherSuite, Message: fmt.Sprintf("%s %s is still being deleted; vmbench waits until it is gone",
			kind, existing.GetName())}
	}
	return nil
}

// readMeta reads the metadata of the object of obj's kind and name around the cache: the object
// itself, which may be large, is not needed to know whose it is. It is nil when there is none.
func (r *SuiteReconciler) readMeta(ctx context.Context, obj client.Object) (*metav1.PartialObjectMetadata, error) {
	kind := obj.GetObjectKind().GroupVersionKind()
	existing := &metav1.PartialObjectMetadata{}
	existing.SetGroupVersionKind(kind)
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), existing)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading %s %s: %w", kind.Kind, obj.GetName(), err)
	}
	return existing, nil
}

// refusedForGood reports whether an API error will come back on a retry: a 4xx that is not a
// conflict or throttling (webhook denials, quota, invalid objects, Forbidden).
func refusedForGood(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	code := status.Status().Code
	return code >= 400 && code < 500 && code != 409 && code != 429 && code != 408
}

func controllerOf(obj client.Object) string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil {
		return "it has no controller"
	}
	return fmt.Sprintf("its controller is %s %s, uid %s", owner.Kind, owner.Name, owner.UID)
}

// ownerIndex indexes children by the name of the BenchmarkSuite that controls them.
const ownerIndex = ".metadata.controller.benchmarksuite"

// childKinds are the kinds of objects a suite may own; each is listed through the owner index.
// Secrets are not among them: the manager creates a run's Secrets and never reads them back (see
// run_keys.go); the garbage collector deletes them with the run's ConfigMap that owns them.
func childKinds() []client.ObjectList {
	// ConfigMaps, Services, NetworkPolicies and PodDisruptionBudgets are cached as metadata only (cache_policy.go).
	kinds := cachepolicy.MetadataKinds()
	cm, svc, np, pdb := kinds[0], kinds[1], kinds[2], kinds[3]
	return []client.ObjectList{cachepolicy.MetadataList(cm), cachepolicy.MetadataList(svc), &corev1.PersistentVolumeClaimList{},
		cachepolicy.MetadataList(np), cachepolicy.MetadataList(pdb)}
}
