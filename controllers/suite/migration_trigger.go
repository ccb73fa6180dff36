package suite

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// What started each live migration of a run's VMIs (issue 32 item 1: a drain during a VM run is
// named). KubeVirt's migration state in the VMI says where the VMI went, not why; the
// VirtualMachineInstanceMigration does: the evacuation controller marks the migrations of a node
// being drained, the workload updater those after KubeVirt's own upgrade, and vmbench labels its
// own. The manager reads the migration objects of the run's VMIs (their metadata only, uncached)
// once for each migration it has not yet named, while KubeVirt still keeps the object.

// nameMigrationTriggers sets the trigger and object of each recorded migration of run that has none
// yet. A migration whose object is gone is Unknown, and is not looked for again.
func (r *SuiteReconciler) nameMigrationTriggers(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string, active *vmbenchv1.RunStatus) error {
	var vmis []string
	for _, m := range active.Migrations {
		if m.Trigger == "" && !slices.Contains(vmis, m.VMI) {
			vmis = append(vmis, m.VMI)
		}
	}
	if len(vmis) == 0 {
		return nil
	}
	// KubeVirt labels every migration object with its VMI's name (kubevirt.io/vmi-name), so the
	// read is bounded by the migrations of the run's own VMIs that KubeVirt keeps.
	selector, err := labels.NewRequirement(kubevirtv1.MigrationSelectorLabel, selection.In, vmis)
	if err != nil {
		return fmt.Errorf("selecting the live migrations of run %s: %w", run, err)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstanceMigrationList"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(suite.Namespace), client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*selector)}); err != nil {
		return fmt.Errorf("listing the live migrations in namespace %s to name what started those of run %s: %w", suite.Namespace, run, err)
	}
	byUID := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
	for i := range list.Items {
		byUID[string(list.Items[i].UID)] = &list.Items[i]
	}
	for i := range active.Migrations {
		m := &active.Migrations[i]
		if m.Trigger != "" {
			continue
		}
		obj, ok := byUID[m.UID]
		if !ok || m.UID == "" {
			m.Trigger = vmbenchv1.MigrationByUnknown
			continue
		}
		m.Trigger, m.Object = migrationTrigger(obj, suite, run), obj.Name
	}
	return nil
}

// migrationTrigger reads what started a migration from its object: vmbench's own first (labelled
// with the run and controlled by the suite, as madeMigrations counts them), then KubeVirt's
// annotations, an evacuation before a workload update (as KubeVirt's metrics do).
func migrationTrigger(obj *metav1.PartialObjectMetadata, suite *vmbenchv1.BenchmarkSuite, run string) vmbenchv1.MigrationTrigger {
	if obj.Labels[vmbenchv1.LabelRun] == run && metav1.IsControlledBy(obj, suite) {
		return vmbenchv1.MigrationByBenchmark
	}
	if _, ok := obj.Annotations[kubevirtv1.EvacuationMigrationAnnotation]; ok {
		return vmbenchv1.MigrationByEvacuation
	}
	if _, ok := obj.Annotations[kubevirtv1.WorkloadUpdateMigrationAnnotation]; ok {
		return vmbenchv1.MigrationByWorkloadUpdate
	}
	return vmbenchv1.MigrationByUser
}

// triggerWords says what started a migration, for events and the report.
func triggerWords(m vmbenchv1.RunMigration) string {
	var s string
	switch m.Trigger {
	case vmbenchv1.MigrationByBenchmark:
		s = "vmbench's migration benchmark"
	case vmbenchv1.MigrationByEvacuation:
		s = "a drain of node " + m.SourceNode + " (KubeVirt's evacuation)"
	case vmbenchv1.MigrationByWorkloadUpdate:
		s = "KubeVirt's workload update (its virt-launcher upgraded)"
	case vmbenchv1.MigrationByUser:
		s = "a migration object not made by vmbench or KubeVirt"
	case vmbenchv1.MigrationByUnknown:
		return "an unknown cause (its migration object was gone when the manager looked)"
	default:
		return ""
	}
	if m.Object != "" {
		s += ", " + m.Object
	}
	return s
}
