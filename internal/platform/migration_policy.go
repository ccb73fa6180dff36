package platform

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// A VM platform's vm.migrationPolicy as a KubeVirt MigrationPolicy for one run. The suite
// reconciler makes it when the run starts and removes it when the run is over
// (controllers/suite/migration_policy.go); the manager's children admission policy
// (config/admission/manager_children.yaml) admits this shape alone.

// MigrationPolicyGVK is KubeVirt's MigrationPolicy, cluster-scoped.
var MigrationPolicyGVK = migrationsv1alpha1.SchemeGroupVersion.WithKind("MigrationPolicy")

// MigrationPolicyPrefix starts the name of every MigrationPolicy vmbench makes; the children
// admission policy allows the manager no other.
const MigrationPolicyPrefix = "vmbench-"

// MigrationPolicyName is the policy of run in namespace: vmbench-<namespace>-<run>-<hash>, the hash
// being 8 hex digits of SHA-256 over "<namespace>/<run>". Without it two pairs could meet where the
// parts are cut at a '-' (namespace a with run b-x-p-1, namespace a-b with run x-p-1). A namespace
// and a run name have at most 63 characters each, so the name stays below 145 of the 253 a
// cluster-scoped object may have.
func MigrationPolicyName(namespace, run string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + run))
	return MigrationPolicyPrefix + namespace + "-" + run + "-" + hex.EncodeToString(sum[:4])
}

// MigrationPolicy is the KubeVirt MigrationPolicy of a run whose platform sets vm.migrationPolicy, nil for any
// other. Its selectors are the run's VMIs' labels and their namespace's name.
func MigrationPolicy(run Run) *migrationsv1alpha1.MigrationPolicy {
	vm := run.Platform.VM
	if run.Platform.Type != vmbenchv1.PlatformVM || vm == nil || vm.MigrationPolicy == nil {
		return nil
	}
	mp := vm.MigrationPolicy
	ns := run.Suite.Namespace
	policy := &migrationsv1alpha1.MigrationPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: MigrationPolicyGVK.GroupVersion().String(), Kind: MigrationPolicyGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: MigrationPolicyName(ns, run.Name),
			Labels: map[string]string{
				vmbenchv1.LabelSuite:          run.Suite.Name,
				vmbenchv1.LabelSuiteNamespace: ns,
				vmbenchv1.LabelRun:            run.Name,
				vmbenchv1.LabelPlatform:       run.Platform.Name,
			},
		},
		Spec: migrationsv1alpha1.MigrationPolicySpec{
			Selectors: &migrationsv1alpha1.Selectors{
				NamespaceSelector: migrationsv1alpha1.LabelSelector{corev1.LabelMetadataName: ns},
				VirtualMachineInstanceSelector: migrationsv1alpha1.LabelSelector{
					vmbenchv1.LabelSuite: run.Suite.Name,
					vmbenchv1.LabelRun:   run.Name,
				},
			},
			AllowAutoConverge:       copyOf(mp.AllowAutoConverge),
			CompletionTimeoutPerGiB: copyOf(mp.CompletionTimeoutPerGiB),
			AllowPostCopy:           copyOf(mp.AllowPostCopy),
		},
	}
	if mp.BandwidthPerMigration != nil {
		b := mp.BandwidthPerMigration.DeepCopy()
		policy.Spec.BandwidthPerMigration = &b
	}
	return policy
}

func copyOf[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
