package controllers

import (
	"context"
	"errors"
	"fmt"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
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
	"github.com/vmbench/vmbench/internal/platform"
)

// optionalKinds are child kinds that come with another operator and may be missing from a cluster.
func optionalKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		mpiv2.SchemeGroupVersion.WithKind("MPIJob"),
		kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"),
	}
}

// AvailableKinds asks the API server which optional child kinds it serves.
func AvailableKinds(mapper meta.RESTMapper) map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for _, gvk := range optionalKinds() {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		out[gvk] = err == nil
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
	return r.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
}

// applyChild applies one child of a run, unless an object of that name belongs to another suite
// (an earlier suite of the same name whose children are still being deleted, say): acting on it
// would adopt it. A refusal that will not heal by retrying (any 4xx but conflict and throttling)
// comes back as a cause, not an error, so that it reaches the suite's status and events.
func (r *SuiteReconciler) applyChild(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, obj client.Object) (*cause, error) {
	kind := obj.GetObjectKind().GroupVersionKind()
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(kind)
	err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(obj), existing)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, err
	default:
		if owner := metav1.GetControllerOf(existing); owner == nil || owner.UID != suite.UID {
			return &cause{Reason: ReasonChildOfAnotherSuite, Message: fmt.Sprintf("%s %s exists and is not this suite's (%s); "+
				"vmbench waits until it is deleted, or delete it yourself", kind.Kind, obj.GetName(), controllerOf(existing))}, nil
		}
		if existing.GetDeletionTimestamp() != nil {
			return &cause{Reason: ReasonChildOfAnotherSuite, Message: fmt.Sprintf("%s %s is still being deleted; vmbench waits until it is gone",
				kind.Kind, obj.GetName())}, nil
		}
	}
	err = r.apply(ctx, suite, obj)
	if err == nil || !refusedForGood(err) {
		return nil, err
	}
	return &cause{Reason: ReasonChildRejected, Message: fmt.Sprintf("the API server refused %s %s: %s", kind.Kind, obj.GetName(), oneLineString(err.Error()))}, nil
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

func authSecretName(suite *vmbenchv1.BenchmarkSuite) string { return suite.Name + "-auth" }

// ensureAuth reads the suite's auth Secret, creating it with fresh keys the first time. A Secret of
// that name that is not the suite's is a cause to wait for (an earlier suite's, being deleted). It is created,
// not applied: applying would replace the keys with new random ones. The cache holds it (it carries
// the suite label); only a miss is checked around the cache, so that a Secret the cache has not seen
// yet is never replaced by new keys.
func (r *SuiteReconciler) ensureAuth(ctx context.Context, suite *vmbenchv1.BenchmarkSuite) (platform.Auth, *cause, error) {
	key := client.ObjectKey{Namespace: suite.Namespace, Name: authSecretName(suite)}
	secret := &corev1.Secret{}
	err := r.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		err = r.APIReader.Get(ctx, key, secret)
	}
	if err == nil {
		if !metav1.IsControlledBy(secret, suite) {
			return platform.Auth{}, &cause{Reason: ReasonChildOfAnotherSuite, Message: fmt.Sprintf("Secret %s exists and is not this suite's (%s); "+
				"vmbench waits until it is deleted, or delete it yourself", key.Name, controllerOf(secret))}, nil
		}
		auth, err := platform.AuthFromData(secret.Data)
		return auth, nil, err
	}
	if !apierrors.IsNotFound(err) {
		return platform.Auth{}, nil, err
	}
	auth, err := platform.NewAuth()
	if err != nil {
		return platform.Auth{}, nil, err
	}
	secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{vmbenchv1.LabelSuite: suite.Name}},
		Type:       corev1.SecretTypeOpaque,
		Data:       auth.Data(),
	}
	if err := ctrl.SetControllerReference(suite, secret, r.Scheme); err != nil {
		return platform.Auth{}, nil, err
	}
	if err := r.Create(ctx, secret); err != nil {
		return platform.Auth{}, nil, fmt.Errorf("creating the auth secret: %w", err)
	}
	return auth, nil, nil
}
