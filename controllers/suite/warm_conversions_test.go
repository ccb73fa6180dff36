package suite

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/vmbench/vmbench/internal/platform"
)

// TestWarmConversionsReachEveryKindApplied: what the manager converts at start covers every kind a
// run's start converts (apply): each adapter's workload, and the Service, NetworkPolicy, disruption
// budget, plan and shared claim around it. A kind left out would have its first conversion paid by
// the first run's start again.
func TestWarmConversionsReachEveryKindApplied(t *testing.T) {
	kinds, err := warmConversions()
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupVersionKind{
		{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Service"}, {Version: "v1", Kind: "PersistentVolumeClaim"},
		{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}, {Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	}
	for _, adapter := range []platform.Adapter{platform.MPIJobAdapter{}, platform.VMIAdapter{}} {
		want = append(want, adapter.Kinds()...)
	}
	for _, gvk := range want {
		if !slices.Contains(kinds, gvk) {
			t.Errorf("warmConversions converts no %s; it converted %v", gvk, kinds)
		}
	}
	for _, gvk := range kinds {
		if gvk.Kind == "Secret" {
			t.Errorf("warmConversions converts a Secret, which apply never does (createSecret)")
		}
	}
}
