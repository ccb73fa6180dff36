package cachepolicy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// What the manager caches is bounded by what it owns, not by what others put in the cluster:
// anyone may add the suite label to an object, and a suite's result ConfigMaps live as long as it.
//
//   - ConfigMaps, Services, NetworkPolicies and PodDisruptionBudgets are cached as metadata only (their names, labels and
//     owners are all the controller reads of them), without annotations.
//   - A suite's result ConfigMaps (raw outputs and tables, up to 8.5 MiB per run) are not watched at
//     all: the manager writes them and never reads them back.
//   - Every cached object, suites included, is cached without its managedFields, which the
//     controller never reads and which can be as large as the object.

// metadataKinds are the child kinds cached as metadata only.
func MetadataKinds() []schema.GroupVersionKind {
	return []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		corev1.SchemeGroupVersion.WithKind("Service"),
		networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
	}
}

// metadataObject is the cache's form of a child kind cached as metadata only.
func MetadataObject(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// metadataList lists a child kind cached as metadata only.
func MetadataList(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadataList {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return list
}

// ChildConfigMapSelector selects the ConfigMaps the manager watches: the suites' children
// (LabelSuite) but not their result ConfigMaps, the raw outputs (labelRawOf) and tables
// (LabelTablesOf) that each finished run leaves.
func ChildConfigMapSelector() labels.Selector {
	return mustParse(fmt.Sprintf("%s,!%s,!%s", vmbenchv1.LabelSuite, vmbenchv1.LabelTablesOf, LabelRawOf))
}

func mustParse(s string) labels.Selector {
	sel, err := labels.Parse(s)
	if err != nil {
		panic(err)
	}
	return sel
}

// StripManagedFields is the cache's transform for every kind: managedFields go before an object
// is stored.
func StripManagedFields() toolscache.TransformFunc {
	return func(in any) (any, error) {
		if obj, err := meta.Accessor(in); err == nil && obj.GetManagedFields() != nil {
			obj.SetManagedFields(nil)
		}
		return in, nil
	}
}

// StripToOwnership is the cache's transform for the kinds cached as metadata only: of the metadata,
// annotations (up to 256 KiB an object, and anyone's to set) and managedFields go too.
func StripToOwnership() toolscache.TransformFunc {
	return func(in any) (any, error) {
		if obj, err := meta.Accessor(in); err == nil {
			obj.SetManagedFields(nil)
			obj.SetAnnotations(nil)
		}
		return in, nil
	}
}

// isMetadataKind says whether the controller sees obj's kind as metadata only.
func IsMetadataKind(obj client.Object) bool {
	_, ok := obj.(*metav1.PartialObjectMetadata)
	return ok
}

// labelRawOf names the run whose raw outputs a ConfigMap holds.
const LabelRawOf = "vmbench.io/raw-outputs-of"
