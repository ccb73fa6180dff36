package analysis

import (
	"testing"

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
