package report

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// dirtySweepSuite has a migration benchmark swept over dirty rates 0, 64Mi and 256Mi (count 3) on one
// emulated VM platform, two repetitions: at 0 both migrations completed (pause 300 and 320 ms,
// total 3 and 5 s), at 64Mi both completed with a longer pause (900 and 920 ms, total 4 and 6 s)
// while the writer achieved 39 and 41 MiB/s of the 64 set, at 256Mi neither completed (one still
// Running when the probe ended, one Failed in KubeVirt's words).
func dirtySweepSuite() *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Name, s.Namespace = "sweep", "bench"
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{Count: 3,
		DirtyRates: []resource.Quantity{resource.MustParse("0"), resource.MustParse("64Mi"), resource.MustParse("256Mi")}}}}
	metric := func(name, unit string, dir vmbenchv1.Direction, v ...float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, Unit: unit, Direction: dir, N: int32(len(v))}
		for i, x := range v {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Repetition: int32(i), Node: "master", Value: x})
		}
		m.Mean, m.StdDev = MeanStdDev(v)
		return m
	}
	lower, higher := vmbenchv1.LowerIsBetter, vmbenchv1.HigherIsBetter
	s.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "mig", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{
		metric("completed_at_0", "bool", higher, 1, 1),
		metric("pause_ms_at_0", "ms", lower, 300, 320),
		metric("total_seconds_at_0", "s", lower, 3, 5),
		metric("dirtied_mib_per_s_at_0", "MiB/s", lower, 0, 0),
		metric("completed_at_64Mi", "bool", higher, 1, 1),
		metric("pause_ms_at_64Mi", "ms", lower, 900, 920),
		metric("total_seconds_at_64Mi", "s", lower, 4, 6),
		metric("dirtied_mib_per_s_at_64Mi", "MiB/s", lower, 39, 41),
		metric("completed_at_256Mi", "bool", higher, 0, 0),
		metric("dirtied_mib_per_s_at_256Mi", "MiB/s", lower, 250, 262),
	}}}
	done := func(vmi string) vmbenchv1.RunMigration {
		return vmbenchv1.RunMigration{VMI: vmi, Outcome: vmbenchv1.MigrationCompleted}
	}
	s.Status.Runs = []vmbenchv1.RunStatus{
		{Name: "sweep-vm-0", Platform: "vm", Accelerator: vmbenchv1.AcceleratorEmulation, Migrations: []vmbenchv1.RunMigration{
			done("sweep-vm-0-master"), done("sweep-vm-0-node01"), done("sweep-vm-0-master"),
			{VMI: "sweep-vm-0-master", Outcome: vmbenchv1.MigrationRunning}}},
		{Name: "sweep-vm-1", Platform: "vm", Accelerator: vmbenchv1.AcceleratorEmulation, Migrations: []vmbenchv1.RunMigration{
			done("sweep-vm-1-master"), done("sweep-vm-1-master"),
			{VMI: "sweep-vm-1-master", Outcome: vmbenchv1.MigrationFailed, Message: "Live migration failed: migration did not converge"}}},
	}
	return s
}

// Protects the sweep's first screen (known answer): a line per rate in the spec's order. Pause
// 300, 320 ms is 310 ± 12.706 × 10 = [183, 437]; 900, 920 is [783, 1037], above it: "grew"; total
// 3, 5 s is [0, 16.7] (clipped) and 4, 6 s [0, 17.7], overlapping: "no clear change". The writer's
// 40 MiB/s of 64 is below 90% of it and said so; 256 of 256 is not. At 256Mi no migration
// completed, and the line gives KubeVirt's words (timed out first, in run order) and how many more,
// without a comparison it has no figures for; the migration of another VMI (node01) is not counted
// as the sweep's second migration.
func TestFirstScreenDirtyRateSweep(t *testing.T) {
	rep, err := Build(dirtySweepSuite())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"vm (emulated): migration at dirty rate 0/s (achieved 0 MiB/s): pause 310 ms [183, 437], total 4 s [0, 16.7], dip n/a for n/a (2 of 2 completed)",
		"vm (emulated): migration at dirty rate 64Mi/s (achieved 40 MiB/s, below the set rate: the guest could not write faster): pause 910 ms [783, 1037], total 5 s [0, 17.7], dip n/a for n/a (2 of 2 completed); against 0/s: pause grew, total no clear change",
		"vm (emulated): migration at dirty rate 256Mi/s (achieved 256 MiB/s): pause n/a, total n/a, dip n/a for n/a (0 of 2 completed; did not converge: timed out (Running when the probe ended) (and 1 more))",
	}
	screen := out.String()
	last := -1
	for _, w := range want {
		i := strings.Index(screen, w+"\n")
		if i < 0 {
			t.Errorf("the first screen lacks the line\n%s\nin:\n%s", w, screen)
			continue
		}
		if i < last {
			t.Errorf("line %q out of the spec's order of rates", w)
		}
		last = i
	}
	lines := analysis.MigrationLines(dirtySweepSuite())
	if len(lines) != 3 || lines[2].NotConverged[1] != "Failed: Live migration failed: migration did not converge" {
		t.Errorf("lines %+v: want 3, the last with KubeVirt's words for the failed migration", lines)
	}
}

// Protects the other comparisons of the sweep's lines: intervals apart downwards is "fell", and
// figures of one migration each compare by their means, saying there is no interval.
func TestDirtyRateSweepComparisons(t *testing.T) {
	s := dirtySweepSuite()
	r := &s.Status.Results[0]
	r.Metrics = r.Metrics[:8]
	for i := range r.Metrics {
		m := &r.Metrics[i]
		if strings.HasPrefix(m.Name, "pause_ms_at_64Mi") {
			m.Samples = []vmbenchv1.Sample{{Value: 10}, {Value: 12}}
			m.Mean, m.StdDev = MeanStdDev([]float64{10, 12})
		}
		if strings.HasPrefix(m.Name, "total_seconds") {
			m.Samples, m.N = m.Samples[:1], 1
			m.Mean = m.Samples[0].Value
		}
	}
	lines := analysis.MigrationTexts(analysis.MigrationLines(s))
	if len(lines) != 2 || !strings.HasSuffix(lines[1], "; against 0/s: pause fell, total 3 s → 4 s, no interval") {
		t.Errorf("lines %q: want the 64Mi line to end in \"; against 0/s: pause fell, total 3 s → 4 s, no interval\"", lines)
	}
}
