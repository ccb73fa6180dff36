package platform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The run's MigrationPolicy selects the run's VMIs in its namespace alone and carries the platform's
// settings as they are: a selector wider than this would set how other VMs migrate.
func TestMigrationPolicy(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "mig", Namespace: "team-a"}}
	settings := &vmbenchv1.VMMigrationPolicy{BandwidthPerMigration: ptr.To(resource.MustParse("64Mi")),
		CompletionTimeoutPerGiB: ptr.To[int64](40), AllowPostCopy: ptr.To(true)}
	run := Run{Suite: suite, Name: "mig-capped-1",
		Platform: vmbenchv1.Platform{Name: "capped", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{MigrationPolicy: settings}}}

	got := MigrationPolicy(run)
	if got == nil {
		t.Fatal("MigrationPolicy() = nil for a platform with vm.migrationPolicy")
	}
	// The name's hash is fixed by the namespace and the run: sha256("team-a/mig-capped-1")[:4].
	if !strings.HasPrefix(got.Name, "vmbench-team-a-mig-capped-1-") || len(got.Name) != len("vmbench-team-a-mig-capped-1-")+8 {
		t.Errorf("name %q, want vmbench-team-a-mig-capped-1-<8 hex digits>", got.Name)
	}
	if got.Name != MigrationPolicyName("team-a", "mig-capped-1") || got.Name == MigrationPolicyName("team-a-mig", "capped-1") {
		t.Errorf("name %q is not the run's alone: namespace team-a-mig with run capped-1 would take %q", got.Name, MigrationPolicyName("team-a-mig", "capped-1"))
	}
	wantSpec := migrationsv1alpha1.MigrationPolicySpec{
		Selectors: &migrationsv1alpha1.Selectors{
			NamespaceSelector:              migrationsv1alpha1.LabelSelector{"kubernetes.io/metadata.name": "team-a"},
			VirtualMachineInstanceSelector: migrationsv1alpha1.LabelSelector{"vmbench.io/suite": "mig", "vmbench.io/run": "mig-capped-1"},
		},
		BandwidthPerMigration:   ptr.To(resource.MustParse("64Mi")),
		CompletionTimeoutPerGiB: ptr.To[int64](40),
		AllowPostCopy:           ptr.To(true),
	}
	if diff := cmp.Diff(wantSpec, got.Spec); diff != "" {
		t.Errorf("spec (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{"vmbench.io/suite": "mig", "vmbench.io/suite-namespace": "team-a", "vmbench.io/run": "mig-capped-1", "vmbench.io/platform": "capped"}
	if diff := cmp.Diff(wantLabels, got.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	// The policy owns copies: a later change of the suite's spec in memory does not reach it.
	*settings.AllowPostCopy = false
	if !*got.Spec.AllowPostCopy {
		t.Error("the policy shares allowPostCopy with the suite's spec")
	}

	for name, p := range map[string]vmbenchv1.Platform{
		"VM platform without a policy": {Name: "plain", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{DedicatedCPUs: true}},
		"VM platform without settings": {Name: "plain", Type: vmbenchv1.PlatformVM},
		"container platform":           {Name: "c", Type: vmbenchv1.PlatformContainer, VM: &vmbenchv1.VMSettings{MigrationPolicy: settings}},
	} {
		run.Platform = p
		if got := MigrationPolicy(run); got != nil {
			t.Errorf("%s: MigrationPolicy() = %s, want nil", name, got.Name)
		}
	}
}
