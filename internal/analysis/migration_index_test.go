package analysis

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestMigrationIndex protects which rate of a dirty-rate sweep a recorded migration counts for:
// the k of its object <run>-mig-<k>, so that a drain's migration recorded between two of the
// benchmark's does not shift the rates; its place among the master's where the object is unknown
// or not the benchmark's.
func TestMigrationIndex(t *testing.T) {
	for _, tc := range []struct {
		object string
		want   int
	}{
		{"r-vm-0-mig-3", 3},
		{"", 2},                         // a status from before runs[].migrations[].object
		{"kubevirt-evacuation-x7k2", 2}, // a drain's
		{"r-vm-0-mig-0", 2},
		{"r-vm-0-mig-03", 2},
		{"r-vm-1-mig-1", 2}, // another run's name
		{"r-vm-0-mig-1x", 2},
	} {
		if got := MigrationIndex("r-vm-0", 2, vmbenchv1.RunMigration{Object: tc.object}); got != tc.want {
			t.Errorf("MigrationIndex(object %q, position 2) = %d, want %d", tc.object, got, tc.want)
		}
	}
}

// A sweep's line names, for each rate, only the benchmark's own migrations that did not complete:
// a drain's failed migration of the master (RunMigration.StartedElsewhere) is not counted at the
// rate of its place, as the manager does not count it as a sample either.
func TestNotConvergedLeavesOutMigrationsStartedElsewhere(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{}
	suite.Status.Runs = []vmbenchv1.RunStatus{{Name: "r-vm-0", Platform: "vm", Migrations: []vmbenchv1.RunMigration{
		{VMI: "r-vm-0-master", Object: "r-vm-0-mig-1", Trigger: vmbenchv1.MigrationByBenchmark, Outcome: vmbenchv1.MigrationCompleted},
		{VMI: "r-vm-0-master", Object: "kubevirt-evacuation-x7k2", Trigger: vmbenchv1.MigrationByEvacuation, Outcome: vmbenchv1.MigrationFailed,
			Message: "the drain's"},
		{VMI: "r-vm-0-master", Object: "r-vm-0-mig-2", Trigger: vmbenchv1.MigrationByBenchmark, Outcome: vmbenchv1.MigrationAborted,
			Message: "the benchmark's"},
	}}}
	p := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{Count: 2,
		DirtyRates: []resource.Quantity{resource.MustParse("0"), resource.MustParse("64Mi")}}}.WithDefaults().Migration
	words := notConverged(suite, "vm", p)
	if len(words["0"]) != 0 || len(words["64Mi"]) != 1 || words["64Mi"][0] != "Aborted: the benchmark's" {
		t.Errorf("words %q, want only the benchmark's aborted migration at 64Mi", words)
	}
}
