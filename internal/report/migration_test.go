package report

import (
	"bytes"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
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
	// A drain moved the master and KubeVirt's upgrade failed to move a worker: both named, the
	// benchmark's own migration not (its line says it).
	s.Status.Runs[0].Migrations = []vmbenchv1.RunMigration{
		{VMI: "s-vm-1-master", SourceNode: "w1", TargetNode: "w2", Outcome: vmbenchv1.MigrationCompleted, Trigger: vmbenchv1.MigrationByEvacuation},
		{VMI: "s-vm-1-node01", SourceNode: "w2", TargetNode: "w1", Outcome: vmbenchv1.MigrationFailed, Trigger: vmbenchv1.MigrationByWorkloadUpdate, Message: "virError(Code=38)"},
		{VMI: "s-vm-1-master", SourceNode: "w2", TargetNode: "w1", Outcome: vmbenchv1.MigrationCompleted, Trigger: vmbenchv1.MigrationByBenchmark}}
	notes = MigrationNotes(s, false, 0)
	if len(notes) != 3 || !strings.HasSuffix(notes[1], ": run s-vm-1 VMI s-vm-1-master from node w1 to node w2 (Evacuation): Completed; "+
		"run s-vm-1 VMI s-vm-1-node01 from node w2 to node w1 (WorkloadUpdate): Failed") ||
		notes[2] != "live migrations that did not complete: run s-vm-1 VMI s-vm-1-node01 (WorkloadUpdate): Failed: virError(Code=38)" {
		t.Errorf("notes with triggers = %q", notes)
	}
	// A compacted run keeps the counts only.
	s.Status.Runs = append(s.Status.Runs, vmbenchv1.RunStatus{Name: "s-vm-2", Compacted: &vmbenchv1.RunSummary{Migrations: 4, MigrationsNotCompleted: 1}})
	notes = MigrationNotes(s, false, 0)
	if len(notes) != 3 || !strings.HasPrefix(notes[0], "2 sample(s) were measured while one of 7 live migration(s)") ||
		!strings.HasSuffix(notes[2], "; run s-vm-2: 1 of 4 (the run was compacted: see its events)") {
		t.Errorf("notes with a compacted run = %q", notes)
	}
	// A Container run's refused eviction is named by its probe worker, not by a VMI it has none of.
	s.Status.Runs = []vmbenchv1.RunStatus{{Name: "s-pods-1", Migrations: []vmbenchv1.RunMigration{{Mode: vmbenchv1.MigrationModeEviction,
		SourcePod: "s-pods-1-probe-1", Outcome: vmbenchv1.MigrationFailed, Trigger: vmbenchv1.MigrationByBenchmark, Message: "refused by team-budget"}}}}
	notes = MigrationNotes(s, false, 0)
	if want := "live migrations that did not complete: run s-pods-1 eviction of probe worker s-pods-1-probe-1 (Benchmark): Failed: refused by team-budget"; len(notes) != 2 || notes[1] != want {
		t.Errorf("notes of a refused eviction = %q, want the second %q", notes, want)
	}
	if got := MigrationNotes(&vmbenchv1.BenchmarkSuite{}, false, 0); len(got) != 0 {
		t.Errorf("a suite without migrations: notes %q, want none", got)
	}
}

// migrationSuite has a migration benchmark "mig" on two VM platforms, vm (emulated: 4 migrations,
// 3 measured, 1 not completed, and 1 execution that could not be measured) and kvm (1 migration),
// and a cpu benchmark whose first sample on vm overlapped a migration.
func migrationSuite() *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Name, s.Namespace = "mig", "bench"
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}, {Name: "kvm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Baseline = "vm"
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}, {Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}
	metric := func(name, unit string, dir vmbenchv1.Direction, v ...float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, Unit: unit, Direction: dir, N: int32(len(v))}
		for i, x := range v {
			// Marked as a manager marked them before it stopped: each overlaps the migration it measures.
			m.Samples = append(m.Samples, vmbenchv1.Sample{Repetition: int32(i / 2), Node: "master", Value: x, Migrated: true})
		}
		m.Mean, m.StdDev = MeanStdDev(v)
		return m
	}
	lower, higher := vmbenchv1.LowerIsBetter, vmbenchv1.HigherIsBetter
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "mig", Platform: "vm", Failures: 1, LastError: "run s-vm-0, master migration5: the probe ran less than a second before", Metrics: []vmbenchv1.MetricSummary{
			metric("completed", "bool", higher, 1, 1, 1, 0),
			metric("pause_ms", "ms", lower, 300, 310, 320),
			metric("background_gap_ms", "ms", lower, 10, 20, 60),
			metric("total_seconds", "s", lower, 3, 4, 5),
			metric("dip_percent", "%", lower, 50, 50, 50),
			metric("recovery_seconds", "s", lower, 0.8, 0.8, 0.8)}},
		{Benchmark: "mig", Platform: "kvm", Metrics: []vmbenchv1.MetricSummary{
			metric("completed", "bool", higher, 1),
			metric("pause_ms", "ms", lower, 120),
			metric("total_seconds", "s", lower, 6)}},
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{{Name: "events_per_second", Unit: "ops/s", Direction: higher, N: 2, Mean: 1.5, StdDev: 0.7071,
			Samples: []vmbenchv1.Sample{{Node: "master", Value: 1, Migrated: true}, {Repetition: 1, Node: "master", Value: 2}}}}},
	}
	s.Status.Runs = []vmbenchv1.RunStatus{{Name: "mig-vm-0", Platform: "vm", Accelerator: vmbenchv1.AcceleratorEmulation},
		{Name: "mig-kvm-0", Platform: "kvm", Accelerator: vmbenchv1.AcceleratorKVM}}
	return s
}

// Protects the first screen's migration lines (known answer): pause 300, 310, 320 ms is 310 ms with
// the 95% Student t interval 310 ± 4.303 × 10/√3 = [285, 335]; total 3, 4, 5 s is [1.52, 6.48]; the
// background gap 10, 20, 60 ms is 30 ± 65.7 ms, clipped at 0 to [0, 95.7], and stands beside the
// pause; a platform whose status has no background gap (kvm) has no such part; a figure of one
// migration has no interval; the completed flags give "3 of 4", also where status
// trimmed the samples; the emulated platform
// is marked as its headline is; the lines stand under the headlines, before the context line; and
// no pod-eviction figure is made up: the legend says it is not measured.
func TestFirstScreenMigrationLines(t *testing.T) {
	rep, err := Build(migrationSuite())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	screen := out.String()
	want := []string{
		"vm (emulated): migration: pause 310 ms [285, 335] (background gap 30 ms [0, 95.7]), total 4 s [1.52, 6.48], dip 50% [50, 50] for 0.8 s [0.8, 0.8] (3 of 4 completed, 1 not measured)",
		"kvm: migration: pause 120 ms [n/a], total 6 s [n/a], dip n/a for n/a (1 of 1 completed)",
	}
	lines := strings.Split(screen, "\n")
	at := map[string]int{}
	for i, l := range lines {
		at[l] = i + 1
		if strings.HasPrefix(l, "context: ") {
			at["context"] = i + 1
		}
	}
	for _, w := range want {
		if at[w] == 0 {
			t.Errorf("the first screen lacks the line\n%s\nin:\n%s", w, screen)
		} else if at[w] <= 2 || at[w] > at["context"] {
			t.Errorf("line %q at %d, want it between the headlines and the context line (%d)", w, at[w], at["context"])
		}
	}
	if !strings.Contains(screen, "\n"+MigrationLegend+"\n") || !strings.Contains(MigrationLegend, "pod eviction (a Container platform): the probe worker pod evicted") {
		t.Errorf("the first screen lacks the migration legend, which says what a pod eviction's figures are:\n%s", screen)
	}
	if strings.Contains(screen, "back at rate after") {
		t.Errorf("the first screen gives a pod eviction figure for a suite without a Container platform:\n%s", screen)
	}

	// Status trimmed the samples to fit its size: the count, mean and standard deviation over every
	// migration give the same line.
	trimmed := migrationSuite()
	for i := range trimmed.Status.Results[0].Metrics {
		m := &trimmed.Status.Results[0].Metrics[i]
		m.Samples = m.Samples[:1]
	}
	rep, err = Build(trimmed)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Migrations[0].Text(false); got != want[0] {
		t.Errorf("with trimmed samples: %q, want %q", got, want[0])
	}

	// The kind e2e's pauses, 1027, 303 and 805 ms: 712 ± 921 ms, clipped at 0.
	kind := MigrationLine{Platform: "vm", Pause: analysis.MigrationFigureOf(vmbenchv1.BenchmarkResult{Metrics: []vmbenchv1.MetricSummary{
		{Name: "pause_ms", N: 3, Samples: []vmbenchv1.Sample{{Value: 1027}, {Value: 303}, {Value: 805}}}}}, "pause_ms")}
	if got := kind.Text(false); !strings.HasPrefix(got, "vm: migration: pause 712 ms [0, 1633], total n/a") {
		t.Errorf("kind's pauses: %q, want pause 712 ms [0, 1633]", got)
	}

	// Two migration benchmarks: each line names its benchmark.
	two := migrationSuite()
	two.Spec.Benchmarks = append(two.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "mig2", Type: vmbenchv1.BenchmarkMigration})
	second := two.Status.Results[1]
	second.Benchmark = "mig2"
	two.Status.Results = append(two.Status.Results, second)
	rep, err = Build(two)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Migrations[2].Text(true); got != "kvm: migration mig2: pause 120 ms [n/a], total 6 s [n/a], dip n/a for n/a (1 of 1 completed)" {
		t.Errorf("with two migration benchmarks: %q", got)
	}

	// A suite without a migration benchmark has no line and no legend.
	plain := migrationSuite()
	plain.Spec.Benchmarks[0].Type = vmbenchv1.BenchmarkSysbenchCPU
	rep, err = Build(plain)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	if len(rep.Migrations) != 0 || strings.Contains(out.String(), "migration") {
		t.Errorf("a suite without a migration benchmark: %+v\n%s", rep.Migrations, out.String())
	}
}

// Protects the migration benchmark's samples from the migrated-sample treatment: each overlaps the
// migration it measures by design, so the migration note does not count them and --drop-migrated
// keeps them (it still drops the cpu sample that a migration disturbed), also in a status written
// before the manager stopped marking them, as migrationSuite's is.
func TestMigrationBenchmarkSamplesAreNotMigratedSamples(t *testing.T) {
	s := migrationSuite()
	notes := MigrationNotes(s, false, 0)
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "1 sample(s) were measured while") || strings.Contains(notes[0], "mig ") {
		t.Errorf("notes = %q, want the one cpu sample counted", notes)
	}
	filtered, dropped, _ := DropMigrated(s)
	if dropped != 1 {
		t.Errorf("--drop-migrated dropped %d samples, want the cpu one", dropped)
	}
	if got := filtered.Status.Results[0].Metrics[1]; got.N != 3 || len(got.Samples) != 3 {
		t.Errorf("--drop-migrated changed the migration benchmark's pause: %+v", got)
	}
	rep, err := Build(filtered)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Migrations) != 2 || rep.Migrations[0].Pause == nil || rep.Migrations[0].Pause.N != 3 {
		t.Errorf("after --drop-migrated: %+v", rep.Migrations)
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
