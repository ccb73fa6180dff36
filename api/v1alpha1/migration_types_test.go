package v1alpha1

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func migrationSuite(platforms []Platform, b Benchmark) *BenchmarkSuite {
	b.Name, b.Type = "mig", BenchmarkMigration
	baseline := ""
	if len(platforms) > 0 {
		baseline = platforms[0].Name // as the API server requires
	}
	return &BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "demo"},
		Spec: BenchmarkSuiteSpec{Platforms: platforms, Baseline: baseline, Benchmarks: []Benchmark{b}}}
}

// TestMigrationProblem protects the Go checks of the migration benchmark, which stand in for CRD
// rules: VM platforms only (the container arm is not built), the interval, timeout and probe
// bounds, and the block on another type.
func TestMigrationProblem(t *testing.T) {
	vm := []Platform{{Name: "vm", Type: PlatformVM}}
	if err := FirstInvalidValue(migrationSuite(vm, Benchmark{})); err != nil {
		t.Fatalf("defaults on a VM platform: %v", err)
	}
	if p := (Benchmark{Type: BenchmarkMigration}).WithDefaults().Migration; p.ProbeDuration() != 200*time.Second {
		t.Errorf("default probe %s, want 3m20s (20 s lead-in + 3 × 60 s)", p.ProbeDuration())
	}
	for name, tc := range map[string]struct {
		platforms []Platform
		b         Benchmark
		want      string
	}{
		"container":      {[]Platform{{Name: "vm", Type: PlatformVM}, {Name: "pods", Type: PlatformContainer}}, Benchmark{}, "platform pods (spec.platforms[1]) is of type Container: the container arm (a pod evicted and rescheduled) is not built yet"},
		"no platforms":   {nil, Benchmark{}, "is of type Container"},
		"host":           {[]Platform{{Name: "host", Type: PlatformHost}}, Benchmark{}, "is of type Host"},
		"short interval": {vm, Benchmark{Migration: &MigrationParams{Interval: dur(10 * time.Second)}}, "migration.interval: \"10s\" is not between 30s and 5m"},
		"timeout":        {vm, Benchmark{Migration: &MigrationParams{MigrationTimeout: dur(2 * time.Minute)}}, "lower migrationTimeout or raise interval"},
		"long probe":     {vm, Benchmark{Migration: &MigrationParams{Count: 3, Interval: dur(5 * time.Minute), MigrationTimeout: dur(time.Minute)}}, "the probe would run 15m20s"},
		"count":          {vm, Benchmark{Migration: &MigrationParams{Count: 4}}, "migration.count: 4 is not between 1 and 3"},
		"bench timeout":  {vm, Benchmark{Timeout: dur(time.Minute)}, "raise timeout or lower count or interval"},
		"other type":     {vm, Benchmark{}, "migration parameters need type: migration"},
	} {
		t.Run(name, func(t *testing.T) {
			s := migrationSuite(tc.platforms, tc.b)
			if name == "other type" {
				s.Spec.Benchmarks[0].Type, s.Spec.Benchmarks[0].Migration = BenchmarkSysbenchCPU, &MigrationParams{}
			}
			err := FirstInvalidValue(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FirstInvalidValue() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
