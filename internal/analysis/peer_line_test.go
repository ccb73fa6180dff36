package analysis

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
)

// TestPeerInTheMigrationLine protects the VM arm's peer figure on the first screen (known answer):
// peer_gap_ms of 900, 1,100 and 1,300 ms over three migrations is 1,100 ms with the 95% Student t
// interval 1,100 ± 4.303 × 200/√3 = [603, 1597], after the pause; in a dirty-rate sweep each rate's
// line reads its own (peer_gap_ms_at_64Mi: 400, 600 ms is 500 ± 12.71 × 141.4/√2, clipped at 0 to
// [0, 1771]); a platform whose status has no peer figure has no peer part.
func TestPeerInTheMigrationLine(t *testing.T) {
	metric := func(name string, v ...float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, N: int32(len(v))}
		for _, x := range v {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Node: "master", Value: x})
		}
		m.Mean, m.StdDev = MeanStdDev(v)
		return m
	}
	s := &vmbenchv1.BenchmarkSuite{}
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}, {Name: "kvm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}}
	s.Status.Results = []vmbenchv1.BenchmarkResult{
		{Benchmark: "mig", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{metric("completed", 1, 1, 1), metric("pause_ms", 300, 300, 300),
			metric("total_seconds", 4, 4, 4), metric(disruption.MetricPeerGap, 900, 1100, 1300)}},
		{Benchmark: "mig", Platform: "kvm", Metrics: []vmbenchv1.MetricSummary{metric("completed", 1), metric("pause_ms", 120), metric("total_seconds", 6)}},
	}
	texts := MigrationTexts(MigrationLines(s))
	want := []string{
		"vm: migration: pause 300 ms [300, 300], peer lost it for 1100 ms [603, 1597], total 4 s [4, 4], dip n/a for n/a (3 of 3 completed)",
		"kvm: migration: pause 120 ms [n/a], total 6 s [n/a], dip n/a for n/a (1 of 1 completed)",
	}
	if len(texts) != len(want) {
		t.Fatalf("lines %q, want %q", texts, want)
	}
	for i := range want {
		if texts[i] != want[i] {
			t.Errorf("line %d:\n%s\nwant\n%s", i+1, texts[i], want[i])
		}
	}

	// A sweep: the rate's own peer figure.
	sweep := s.DeepCopy()
	sweep.Spec.Platforms = sweep.Spec.Platforms[:1]
	sweep.Spec.Benchmarks[0].Migration = &vmbenchv1.MigrationParams{DirtyRates: []resource.Quantity{resource.MustParse("64Mi")}}
	sweep.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "mig", Platform: "vm", Metrics: []vmbenchv1.MetricSummary{
		metric(disruption.RateMetric("completed", "64Mi"), 1, 1), metric(disruption.RateMetric("pause_ms", "64Mi"), 200, 200),
		metric(disruption.RateMetric(disruption.MetricPeerGap, "64Mi"), 400, 600)}}}
	lines := MigrationTexts(MigrationLines(sweep))
	if len(lines) != 1 || !strings.Contains(lines[0], "at dirty rate 64Mi/s") || !strings.Contains(lines[0], ", peer lost it for 500 ms [0, 1771], total") {
		t.Errorf("sweep lines %q, want one at 64Mi with the peer lost it for 500 ms [0, 1771]", lines)
	}
}
