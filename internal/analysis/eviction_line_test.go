package analysis

import (
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestEvictionLine protects the container arm's first-screen line (known answer): on a Container
// platform the migration benchmark's line is a pod eviction's, "back at rate after" the mean of
// back_at_rate_seconds (2, 3 s: 2.5 s, the 95% Student t interval 2.5 ± 12.71 × 0.5 clipped at 0 to
// [0, 8.85]), the work lost (dip 40, 60%: [0, 177]) for recovery_seconds (1 s both: [1, 1]), then the
// pause and total; a VM platform of the same benchmark keeps its migration line.
func TestEvictionLine(t *testing.T) {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}, {Name: "pods", Type: vmbenchv1.PlatformContainer}}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}}
	metric := func(name string, v ...float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, N: int32(len(v))}
		for _, x := range v {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Node: "master", Value: x})
		}
		m.Mean, m.StdDev = MeanStdDev(v)
		return m
	}
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "mig", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{metric("completed", 1), metric("pause_ms", 300), metric("total_seconds", 4)}},
		{Benchmark: "mig", Platform: "pods", Metrics: []vmbenchv1.MetricSummary{
			metric("completed", 1, 1), metric("pause_ms", 700, 900), metric("total_seconds", 1, 2),
			metric("dip_percent", 40, 60), metric("recovery_seconds", 1, 1), metric("back_at_rate_seconds", 2, 3)}},
	}
	texts := MigrationTexts(MigrationLines(s))
	want := []string{
		"vm: migration: pause 300 ms [n/a], total 4 s [n/a], dip n/a for n/a (1 of 1 completed)",
		"pods: pod eviction: back at rate after 2.5 s [0, 8.85], work lost 50% [0, 177] for 1 s [1, 1] (pause 800 ms [0, 2071], evicted to Ready 1.5 s [0, 7.85] in whole seconds; 2 of 2 completed)",
	}
	if len(texts) != len(want) {
		t.Fatalf("lines %q, want %q", texts, want)
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, texts[i], want[i])
		}
	}
}
