package platform

import (
	"time"

	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func budgetsOf(objs []client.Object) []*policyv1.PodDisruptionBudget {
	var out []*policyv1.PodDisruptionBudget
	for _, o := range objs {
		if pdb, ok := o.(*policyv1.PodDisruptionBudget); ok {
			out = append(out, pdb)
		}
	}
	return out
}

// Protects the hold of a drain during a Container or Host run: by default (and with WaitForRun) the
// run has one PodDisruptionBudget named after it that selects every pod of the run, launcher and
// workers, and no pod of another run, with an integer minAvailable of all its members (the only
// form the disruption controller counts for pods of a Job and an MPIJob); with Allow, and for VM
// runs (KubeVirt's own budget), there is none.
func TestRunDisruptionBudget(t *testing.T) {
	for _, tt := range []struct {
		name       string
		platform   vmbenchv1.Platform
		disruption vmbenchv1.DisruptionPolicy
		want       bool
	}{
		{"container, default", containerPlatform, "", true},
		{"container, WaitForRun", containerPlatform, vmbenchv1.DisruptionWaitForRun, true},
		{"host, default", vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}, "", true},
		{"container, Allow", containerPlatform, vmbenchv1.DisruptionAllow, false},
		{"vm, default", vmPlatform, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := testRun(tt.platform)
			run.Suite.Spec.Cluster.Disruption = tt.disruption
			adapter, err := For(tt.platform.Type)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := adapter.Build(run)
			if err != nil {
				t.Fatal(err)
			}
			budgets := budgetsOf(objs)
			if !tt.want {
				if len(budgets) != 0 {
					t.Fatalf("want no PodDisruptionBudget, got %d", len(budgets))
				}
				return
			}
			if len(budgets) != 1 {
				t.Fatalf("want 1 PodDisruptionBudget, got %d", len(budgets))
			}
			pdb := budgets[0]
			if pdb.Name != run.Name || pdb.Namespace != "bench" || pdb.Labels[vmbenchv1.LabelRun] != run.Name {
				t.Errorf("PodDisruptionBudget %s/%s labels %v, want %s/bench with the run's labels", pdb.Namespace, pdb.Name, pdb.Labels, run.Name)
			}
			if pdb.Spec.MaxUnavailable != nil || pdb.Spec.MinAvailable == nil || *pdb.Spec.MinAvailable != intstr.FromInt32(3) {
				t.Errorf("minAvailable %v maxUnavailable %v, want minAvailable 3 (every member of a 3-node run) and no maxUnavailable",
					pdb.Spec.MinAvailable, pdb.Spec.MaxUnavailable)
			}
			var job *mpiv2.MPIJob
			for _, o := range objs {
				if j, ok := o.(*mpiv2.MPIJob); ok {
					job = j
				}
			}
			for role, spec := range job.Spec.MPIReplicaSpecs {
				if !selects(t, pdb.Spec.Selector, spec.Template.Labels) {
					t.Errorf("the budget's selector %v misses the %s pods (labels %v)", pdb.Spec.Selector, role, spec.Template.Labels)
				}
				other := map[string]string{}
				for k, v := range spec.Template.Labels {
					other[k] = v
				}
				other[vmbenchv1.LabelRun] = "demo-container-2"
				if selects(t, pdb.Spec.Selector, other) {
					t.Errorf("the budget's selector %v takes the pods of another run", pdb.Spec.Selector)
				}
			}
			// The migration benchmark's probe worker is the pod a drain is meant to evict, and counted
			// among the healthy it would let the drain take a member.
			if worker := ProbeWorkerPod(run, 1, time.Minute, ""); selects(t, pdb.Spec.Selector, worker.Labels) {
				t.Errorf("the budget's selector %v takes the probe worker (labels %v)", pdb.Spec.Selector, worker.Labels)
			}
		})
	}
}
