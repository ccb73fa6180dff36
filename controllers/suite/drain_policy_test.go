package suite

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Protects the naming of a drain: the message names every cordoned node, says what vmbench does
// under each setting (with the deadline that bounds the hold), and gives back the nodes it names,
// so that a node is named once however often the nodes are read.
func TestDrainMessage(t *testing.T) {
	deadline := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	hold := drainMessage([]string{"worker-b", "worker-a"}, "s-container-1", true, deadline)
	want := "cordoned while the run ran (a node drain): node worker-a, node worker-b; the run's PodDisruptionBudget s-container-1 refuses the eviction " +
		"of its pods until the run ends, at the latest at its deadline 2026-11-29T17:00:00Z, so the drain waits until then (spec.cluster.disruption WaitForRun)"
	if hold != want {
		t.Errorf("WaitForRun:\n got %q\nwant %q", hold, want)
	}
	if diff := cmp.Diff([]string{"worker-a", "worker-b"}, cordonedNodes(hold)); diff != "" {
		t.Errorf("cordonedNodes (-want +got):\n%s", diff)
	}
	allow := drainMessage([]string{"worker-a"}, "s-container-1", false, deadline)
	if !strings.Contains(allow, "node worker-a; spec.cluster.disruption is Allow: the drain evicts the run's pods and the run fails") {
		t.Errorf("Allow: %q", allow)
	}
	if diff := cmp.Diff([]string{"worker-a"}, cordonedNodes(allow)); diff != "" {
		t.Errorf("cordonedNodes (-want +got):\n%s", diff)
	}
	if got := cordonedNodes(""); got != nil {
		t.Errorf("cordonedNodes of nothing = %v", got)
	}
}
