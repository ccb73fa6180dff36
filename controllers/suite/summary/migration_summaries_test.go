package summary

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
	"github.com/vmbench/vmbench/internal/report"
)

// migrationStatusSuite is a suite whose status holds a migration benchmark's results on an emulated
// VM platform (three migrations, one not completed, one execution not measured) and on a KVM one (one
// migration), next to a CPU benchmark's.
func migrationStatusSuite() *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Name, s.Namespace = "mig", "bench"
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}, {Name: "kvm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Baseline = "vm"
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}, {Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}
	metric := func(name, unit string, v ...float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, Unit: unit, Direction: vmbenchv1.LowerIsBetter, N: int32(len(v))}
		for i, x := range v {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Repetition: int32(i), Node: "master", Value: x})
		}
		m.Mean, m.StdDev = analysis.MeanStdDev(v)
		return m
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "mig", Platform: "vm", Failures: 1, Metrics: []vmbenchv1.MetricSummary{
			metric("completed", "bool", 1, 1, 1, 0),
			metric("pause_ms", "ms", 1027, 303, 805),
			metric("background_gap_ms", "ms", 10, 20, 60),
			metric("total_seconds", "s", 3, 4, 5),
			metric("dip_percent", "%", 50, 50, 50),
			metric("recovery_seconds", "s", 0.8, 0.8, 0.8)}},
		{Benchmark: "mig", Platform: "kvm", Metrics: []vmbenchv1.MetricSummary{
			metric("completed", "bool", 1),
			metric("pause_ms", "ms", 120),
			metric("total_seconds", "s", 6)}},
		{Benchmark: "cpu", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{metric("events_per_second", "ops/s", 1, 2)}},
	}
	s.Status.Runs = []vmbenchv1.RunStatus{{Name: "mig-vm-0", Platform: "vm", Accelerator: vmbenchv1.AcceleratorEmulation},
		{Name: "mig-kvm-0", Platform: "kvm", Accelerator: vmbenchv1.AcceleratorKVM}}
	return s
}

// firstScreen is `vmbench report`'s first screen of suite, by line.
func firstScreen(t *testing.T, suite *vmbenchv1.BenchmarkSuite) map[string]bool {
	t.Helper()
	rep, err := report.Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(out.String(), "\n") {
		lines[l] = true
	}
	return lines
}

// Protects status.migrationSummaries: one entry per migration benchmark and VM platform with
// results, in the order of results, each summary exactly the line `vmbench report` prints on its
// first screen (known answer: the kind e2e's pauses 1027, 303 and 805 ms are 712 ms, 95% Student t
// interval 712 ± 4.303 × 362/√3, clipped at 0 to [0, 1633]), also once status trimmed the samples.
func TestMigrationSummariesAreTheReportsLines(t *testing.T) {
	suite := migrationStatusSuite()
	got := MigrationSummaries(suite)
	want := []vmbenchv1.MigrationSummary{
		{Benchmark: "mig", Platform: "vm", Emulated: true, Summary: "vm (emulated): migration: pause 712 ms [0, 1633] (background gap 30 ms [0, 95.7]), " +
			"total 4 s [1.52, 6.48], dip 50% [50, 50] for 0.8 s [0.8, 0.8] (3 of 4 completed, 1 not measured)"},
		{Benchmark: "mig", Platform: "kvm", Summary: "kvm: migration: pause 120 ms [n/a], total 6 s [n/a], dip n/a for n/a (1 of 1 completed)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("migration summaries (-want +got):\n%s", diff)
	}
	screen := firstScreen(t, suite)
	for i, m := range got {
		t.Logf("status.migrationSummaries[%d]: %s on %s: %s", i, m.Benchmark, m.Platform, m.Summary)
		if !screen[m.Summary] {
			t.Errorf("summary %q is not a line of the report's first screen", m.Summary)
		}
	}

	// FitStatus trims samples after the summaries are set: the count, mean and standard deviation
	// give the same lines.
	trimmed := migrationStatusSuite()
	for i := range trimmed.Status.Results[0].Metrics {
		m := &trimmed.Status.Results[0].Metrics[i]
		m.Samples = nil
	}
	if diff := cmp.Diff(want, MigrationSummaries(trimmed)); diff != "" {
		t.Errorf("with the samples trimmed (-want +got):\n%s", diff)
	}

	// Two migration benchmarks: each line names its benchmark, as the report's do.
	two := migrationStatusSuite()
	two.Spec.Benchmarks = append(two.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "mig2", Type: vmbenchv1.BenchmarkMigration})
	second := two.Status.Results[1]
	second.Benchmark = "mig2"
	two.Status.Results = append(two.Status.Results, second)
	named := MigrationSummaries(two)
	if len(named) != 3 || named[2].Benchmark != "mig2" || named[2].Summary != "kvm: migration mig2: pause 120 ms [n/a], total 6 s [n/a], dip n/a for n/a (1 of 1 completed)" {
		t.Errorf("with two migration benchmarks: %+v", named)
	}
	screen = firstScreen(t, two)
	for _, m := range named {
		if !screen[m.Summary] {
			t.Errorf("summary %q is not a line of the report's first screen", m.Summary)
		}
	}

	// Without a migration benchmark there is no entry.
	plain := migrationStatusSuite()
	plain.Spec.Benchmarks[0].Type = vmbenchv1.BenchmarkSysbenchCPU
	if got := MigrationSummaries(plain); got != nil {
		t.Errorf("without a migration benchmark: %+v, want none", got)
	}
}

// Protects the status write from a line longer than the schema's 512 characters: figures of
// hundreds of digits (a guest that reports 1e300 ms) are cut to the limit, ending in "...", with
// the report's line as the prefix.
func TestMigrationSummaryIsCutToTheSchema(t *testing.T) {
	suite := migrationStatusSuite()
	for i := range suite.Status.Results[0].Metrics {
		m := &suite.Status.Results[0].Metrics[i]
		if m.Name == "completed" {
			continue
		}
		for j := range m.Samples {
			m.Samples[j].Value = math.MaxFloat64 / 4
		}
		m.Mean = math.MaxFloat64 / 4
	}
	long := report.MigrationLine{}
	for _, l := range analysis.MigrationLines(suite) {
		if l.Platform == "vm" {
			long = l
		}
	}
	line := long.Text(false)
	if len(line) <= vmbenchv1.MaxMigrationSummaryLength {
		t.Fatalf("the line is %d characters, want a case above %d", len(line), vmbenchv1.MaxMigrationSummaryLength)
	}
	got := MigrationSummaries(suite)[0].Summary
	if len(got) != vmbenchv1.MaxMigrationSummaryLength || !strings.HasSuffix(got, "...") || !strings.HasPrefix(line, strings.TrimSuffix(got, "...")) {
		t.Errorf("a %d-character line became %q (%d characters), want its first %d characters and \"...\"",
			len(line), got, len(got), vmbenchv1.MaxMigrationSummaryLength-3)
	}
}

// TestMigrationSummariesPerDirtyRate protects status.migrationSummaries of a dirty-rate sweep: one
// entry per rate with results, in the spec's order, each naming its rate and with the report's
// line for it; a rate without results (128Mi) has none.
func TestMigrationSummariesPerDirtyRate(t *testing.T) {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{Count: 3,
		DirtyRates: []resource.Quantity{resource.MustParse("256Mi"), resource.MustParse("128Mi"), resource.MustParse("0")}}}}
	flag := func(name string, v float64) vmbenchv1.MetricSummary {
		return vmbenchv1.MetricSummary{Name: name, Unit: "bool", N: 1, Mean: v, Samples: []vmbenchv1.Sample{{Value: v}}}
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "mig", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{
		flag("completed_at_0", 1), flag("completed_at_256Mi", 0)}}}
	got := MigrationSummaries(s)
	if len(got) != 2 || got[0].DirtyRate != "256Mi" || got[1].DirtyRate != "0" ||
		!strings.HasPrefix(got[0].Summary, "vm: migration at dirty rate 256Mi/s: ") || !strings.HasSuffix(got[0].Summary, "(0 of 1 completed)") ||
		!strings.HasPrefix(got[1].Summary, "vm: migration at dirty rate 0/s: ") {
		t.Errorf("summaries %+v: want 256Mi (0 of 1 completed), then 0", got)
	}
}
