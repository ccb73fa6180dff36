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
	notes := MigrationNotes(s, false, 0)
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
	if got := MigrationNotes(&vmbenchv1.BenchmarkSuite{}, false, 0); len(got) != 0 {
		t.Errorf("a suite without migrations: notes %q, want none", got)
	}
}

// Protects the migration benchmark's report line: the figures' means with 95% intervals over the
// migrations (3 samples: pause 300, 310, 320 ms gives 310 ± 25 ms with t(2) = 4.303), how many of
// the migrations completed, and the one that could not be measured.
func TestMigrationLines(t *testing.T) {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}, {Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}
	samples := func(v ...float64) []vmbenchv1.Sample {
		out := make([]vmbenchv1.Sample, len(v))
		for i, x := range v {
			out[i] = vmbenchv1.Sample{Node: "master", Value: x}
		}
		return out
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "mig", Platform: "vm", Failures: 1, LastError: "run s-vm-0, master migration5: the probe ran less than a second before", Metrics: []vmbenchv1.MetricSummary{
			{Name: "completed", Samples: samples(1, 1, 1, 0)},
			{Name: "pause_ms", Samples: samples(300, 310, 320)},
			{Name: "total_seconds", Samples: samples(3, 4, 5)},
			{Name: "dip_percent", Samples: samples(50, 50, 50)},
			{Name: "recovery_seconds", Samples: samples(0.8, 0.8, 0.8)}}},
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{Name: "events_per_second", Samples: samples(1, 2)}}},
	}
	lines := MigrationLines(s)
	want := "migration mig on vm: pause 310 ± 25 ms, total 4.0 ± 2.5 s, dip 50 ± 0 % for 0.8 ± 0 s (3 of 4 migration(s) completed, 95% intervals over the 3 measured; 1 not measured: run s-vm-0, master migration5: the probe ran less than a second before)"
	if len(lines) != 1 || lines[0] != want {
		t.Errorf("lines = %q, want [%q]", lines, want)
	}
}

// Protects --drop-migrated: the migrated samples leave the statistics (values 1, 2, 3 with 1 and 3
// migrated leave mean 2 of one sample), a metric whose samples were trimmed from status stays whole
// and is counted apart, the stored suite is not changed, and the note says how many were left out.
func TestDropMigrated(t *testing.T) {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{
		{Name: "events_per_second", N: 3, Mean: 2, StdDev: 1, Samples: []vmbenchv1.Sample{{Value: 1, Migrated: true}, {Value: 2}, {Value: 3, Migrated: true}}},
		{Name: "latency", N: 5, Mean: 4, Samples: []vmbenchv1.Sample{{Value: 4, Migrated: true}}},
	}}}
	filtered, dropped, kept := DropMigrated(s)
	m := filtered.Status.Results[0].Metrics[0]
	if dropped != 2 || m.N != 1 || m.Mean != 2 || m.StdDev != 0 || len(m.Samples) != 1 || m.Samples[0].Value != 2 {
		t.Errorf("dropped %d, metric %+v: want 2 dropped and one sample of 2", dropped, m)
	}
	if trimmed := filtered.Status.Results[0].Metrics[1]; trimmed.N != 5 || kept[NoiseKey{"cpu", "vm", "latency"}] != 1 {
		t.Errorf("a trimmed metric: %+v, kept %v: want it whole and counted", trimmed, kept)
	}
	if s.Status.Results[0].Metrics[0].N != 3 {
		t.Error("the stored suite was changed")
	}
	notes := MigrationNotes(s, true, dropped)
	if len(notes) != 2 || notes[0] != "--drop-migrated: 2 sample(s) measured while a live migration of a run's VMs ran were left out of the statistics" ||
		!strings.Contains(notes[1], "--drop-migrated left them out") || strings.Contains(notes[1], "stay in the statistics") {
		t.Errorf("notes after --drop-migrated = %q", notes)
	}
}
