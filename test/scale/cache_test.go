//go:build scale

package scale

import (
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
)

// cacheOptions are cmd/manager's cache settings (newManager), in one namespace: vmbench's own
// objects only; ConfigMaps, Services and NetworkPolicies metadata-only and without the result
// ConfigMaps; no managedFields anywhere.
func cacheOptions(b *testing.B, ns string) cache.Options {
	suiteLabel, err := labels.NewRequirement(vmbenchv1.LabelSuite, selection.Exists, nil)
	if err != nil {
		b.Fatal(err)
	}
	owned := cache.ByObject{Label: labels.NewSelector().Add(*suiteLabel)}
	metadataOnly := cache.ByObject{Label: owned.Label, Transform: cachepolicy.StripToOwnership()}
	return cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, DefaultTransform: cachepolicy.StripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Label: cachepolicy.ChildConfigMapSelector(), Transform: cachepolicy.StripToOwnership()},
			&corev1.Service{}:   metadataOnly, &corev1.PersistentVolumeClaim{}: owned,
			&networkingv1.NetworkPolicy{}: metadataOnly, &corev1.Pod{}: owned, &mpiv2.MPIJob{}: owned, &kubevirtv1.VirtualMachineInstance{}: owned,
		}}
}
