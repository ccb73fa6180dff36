package suite

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/vmbench/vmbench/internal/platform"
)

// EmulationPolicy says whether VM runs may use software emulation, whose figures say nothing about
// VM overhead.
type EmulationPolicy string

const (
	// EmulationAllow runs VMs under emulation where KVM is unusable and marks their figures emulated.
	EmulationAllow EmulationPolicy = "allow"
	// EmulationForbid fails VM runs on a cluster whose KubeVirt uses software emulation.
	EmulationForbid EmulationPolicy = "forbid"
)

// kubeVirtConfig is what the cluster's KubeVirt CR tells VM runs.
type kubeVirtConfig struct {
	network   platform.VMNetwork
	emulation bool
	launcher  platform.VirtLauncher
	// features are what VM platforms' vm settings may need of KubeVirt.
	features platform.KubeVirtFeatures
}

// kubeVirtConfig reads the KubeVirt CRs around the cache (it is read once per VM run, and vmbench
// watches nothing else of KubeVirt's configuration).
func (r *SuiteReconciler) kubeVirtConfig(ctx context.Context) (kubeVirtConfig, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(platform.KubeVirtListGVK)
	if err := r.APIReader.List(ctx, list); err != nil {
		return kubeVirtConfig{}, fmt.Errorf("reading KubeVirt's configuration: %w", err)
	}
	cfg := kubeVirtConfig{network: platform.ClusterVMNetwork(list.Items), launcher: platform.ClusterVirtLauncher(list.Items),
		features: platform.ClusterKubeVirtFeatures(list.Items)}
	for _, kv := range list.Items {
		if on, _, _ := unstructured.NestedBool(kv.Object, "spec", "configuration", "developerConfiguration", "useEmulation"); on {
			cfg.emulation = true
		}
	}
	return cfg, nil
}
