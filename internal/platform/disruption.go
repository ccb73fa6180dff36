package platform

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// runDisruptionBudget keeps a node drain from evicting a Container or Host run's pods (the MPI
// launcher and workers) while the run lasts: an eviction mid-run loses the run, and the run is
// bounded by its deadline, so the hold is too. It goes with the run's other children when the run
// ends. minAvailable is every member, an integer, because the pods' controllers (the launcher Job
// and the MPIJob) have no scale subresource: the disruption controller can count such pods only
// against an integer minAvailable (with maxUnavailable it fails to sync, and refuses every eviction
// for that reason instead). VM runs get none: KubeVirt makes its own for a VMI whose
// evictionStrategy is LiveMigrate. It selects the members alone (roles master and node): the
// migration benchmark's probe worker (role probe) is the pod a drain is meant to evict, and counted
// among the healthy it would let a drain take a member.
func runDisruptionBudget(run Run) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1TypeMeta(policyv1.SchemeGroupVersion.String(), "PodDisruptionBudget"),
		ObjectMeta: objectMeta(run, run.Name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr.To(intstr.FromInt32(run.Suite.Spec.Cluster.NodeCount())),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
				vmbenchv1.LabelSuite: run.Suite.Name,
				vmbenchv1.LabelRun:   run.Name,
			}, MatchExpressions: memberRoles()},
		},
	}
}

// memberRoles selects the members of a run's cluster, not its probe worker.
func memberRoles() []metav1.LabelSelectorRequirement {
	return []metav1.LabelSelectorRequirement{{Key: vmbenchv1.LabelRole, Operator: metav1.LabelSelectorOpIn,
		Values: []string{vmbenchv1.RoleMaster, vmbenchv1.RoleNode}}}
}
