package report

import (
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Protects what `vmbench report` says of migrated samples: counted per metric, kept in the
// statistics, and the migrations that did not complete named in KubeVirt's words.
func TestMigrationNotes(t *testing.T) {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{Name: "events_per_second",
		Samples: []vmbenchv1.Sample{{Value: 1, Migrated: true}, {Value: 2}, {Value: 3, Migrated: true}}}}}}
	s.Status.Runs = []vmbenchv1.RunStatus{{Name: "s-vm-1", Migrations: []vmbenchv1.RunMigration{
		{VMI: "s-vm-1-master", Outcome: vmbenchv1.MigrationCompleted},
		{VMI: "s-vm-1-master", Outcome: vmbenchv1.MigrationFailed, Message: "virError(Code=38)"}}}}
	notes := MigrationNotes(s)
	if len(notes) != 2 {
		t.Fatalf("notes = %q, want two", notes)
	}
	if !strings.HasPrefix(notes[0], "2 sample(s) were measured while one of 2 live migration(s)") || !strings.Contains(notes[0], "stay in the statistics") ||
		!strings.HasSuffix(notes[0], "cpu events_per_second on vm (2)") {
		t.Errorf("note = %q", notes[0])
	}
	if notes[1] != "live migrations that did not complete: run s-vm-1 VMI s-vm-1-master: Failed: virError(Code=38)" {
		t.Errorf("note = %q", notes[1])
	}
	if got := MigrationNotes(&vmbenchv1.BenchmarkSuite{}); len(got) != 0 {
		t.Errorf("a suite without migrations: notes %q, want none", got)
	}
}
