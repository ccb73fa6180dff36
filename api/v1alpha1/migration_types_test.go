package v1alpha1

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
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
// rules: VM and Container platforms (a VM migrated, a pod evicted), not Host, the interval, timeout
// and probe bounds, no dirty-rate sweep on Container, and the block on another type.
func TestMigrationProblem(t *testing.T) {
	vm := []Platform{{Name: "vm", Type: PlatformVM}}
	if err := FirstInvalidValue(migrationSuite(vm, Benchmark{})); err != nil {
		t.Fatalf("defaults on a VM platform: %v", err)
	}
	both := []Platform{{Name: "vm", Type: PlatformVM}, {Name: "pods", Type: PlatformContainer}}
	if err := FirstInvalidValue(migrationSuite(both, Benchmark{})); err != nil {
		t.Fatalf("defaults on a VM and a Container platform (the container arm): %v", err)
	}
	if err := FirstInvalidValue(migrationSuite(nil, Benchmark{})); err != nil {
		t.Fatalf("defaults on the default Container platform: %v", err)
	}
	if p := (Benchmark{Type: BenchmarkMigration}).WithDefaults().Migration; p.ProbeDuration() != 200*time.Second {
		t.Errorf("default probe %s, want 3m20s (20 s lead-in + 3 × 60 s)", p.ProbeDuration())
	}
	for name, tc := range map[string]struct {
		platforms []Platform
		b         Benchmark
		want      string
	}{
		"container sweep": {both, Benchmark{Migration: &MigrationParams{DirtyRates: []resource.Quantity{resource.MustParse("64Mi")}}},
			"platform pods (spec.platforms[1]) is of type Container, whose pod is evicted and restarted, not moved: remove dirtyRates"},
		"host":           {[]Platform{{Name: "vm", Type: PlatformVM}, {Name: "host", Type: PlatformHost}}, Benchmark{}, "platform host (spec.platforms[1]) is of type Host"},
		"short interval": {vm, Benchmark{Migration: &MigrationParams{Interval: dur(10 * time.Second)}}, "migration.interval: \"10s\" is not between 30s and 5m"},
		"timeout":        {vm, Benchmark{Migration: &MigrationParams{MigrationTimeout: dur(2 * time.Minute)}}, "lower migrationTimeout or raise interval"},
		"long probe":     {vm, Benchmark{Migration: &MigrationParams{Count: 3, Interval: dur(5 * time.Minute), MigrationTimeout: dur(time.Minute)}}, "the probe would run 15m20s"},
		"count":          {vm, Benchmark{Migration: &MigrationParams{Count: 10}}, "migration.count: 10 is not between 1 and 9"},
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

// TestDirtyRatesProblem protects the Go checks of the dirty-rate sweep, each refusal with what to
// change: at most 3 rates, each a whole number of bytes a second from 0 to 1Gi, none twice, count a
// multiple of the list, and nodes with room for the writer's working set.
func TestDirtyRatesProblem(t *testing.T) {
	vm := []Platform{{Name: "vm", Type: PlatformVM}}
	rates := func(s ...string) []resource.Quantity {
		out := make([]resource.Quantity, len(s))
		for i, v := range s {
			out[i] = resource.MustParse(v)
		}
		return out
	}
	ok := migrationSuite(vm, Benchmark{Migration: &MigrationParams{Count: 3, DirtyRates: rates("0", "64Mi", "256Mi")}})
	if err := FirstInvalidValue(ok); err != nil {
		t.Fatalf("three rates, count 3: %v", err)
	}
	one := migrationSuite(vm, Benchmark{Migration: &MigrationParams{DirtyRates: rates("64Mi")}})
	if err := FirstInvalidValue(one); err != nil {
		t.Fatalf("one rate, default count 3: %v", err)
	}
	for name, tc := range map[string]struct {
		p      MigrationParams
		memory string
		want   string
	}{
		"four rates":              {MigrationParams{Count: 3, DirtyRates: rates("0", "1Mi", "2Mi", "3Mi")}, "", "migration.dirtyRates: 4 rates, at most 3"},
		"negative":                {MigrationParams{Count: 1, DirtyRates: rates("-1Mi")}, "", `dirtyRates[0]: -1Mi is not a whole number of bytes a second between 0 and 1Gi: write rates such as "0", "64Mi"`},
		"too high":                {MigrationParams{Count: 1, DirtyRates: rates("2Gi")}, "", "dirtyRates[0]: 2Gi is not a whole number"},
		"fraction":                {MigrationParams{Count: 1, DirtyRates: rates("500m")}, "", "dirtyRates[0]: 500m is not a whole number"},
		"twice":                   {MigrationParams{Count: 2, DirtyRates: rates("64Mi", "67108864")}, "", "dirtyRates[1]: 67108864 is the same rate as dirtyRates[0]"},
		"not a multiple of two":   {MigrationParams{Count: 3, DirtyRates: rates("0", "64Mi")}, "", "migration.count: 3 is not a multiple of the 2 dirty rates (migration k runs at dirtyRates[(k-1) mod 2], so every rate needs as many migrations): set count to 4"},
		"not a multiple of three": {MigrationParams{Count: 2, DirtyRates: rates("0", "64Mi", "128Mi")}, "", "set count to 3"},
		"small nodes":             {MigrationParams{Count: 1, DirtyRates: rates("64Mi")}, "512Mi", "and cluster.memory is 512Mi: raise cluster.memory to 1Gi or more, or remove dirtyRates"},
	} {
		t.Run(name, func(t *testing.T) {
			p := tc.p
			s := migrationSuite(vm, Benchmark{Migration: &p})
			if tc.memory != "" {
				m := resource.MustParse(tc.memory)
				s.Spec.Cluster.Memory = &m
			}
			err := FirstInvalidValue(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FirstInvalidValue() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestDirtyRateSchedule protects the writer's schedule: migration k at dirtyRates[(k-1) mod n],
// the first rate from the probe's start, each next one 15 s before its migration is due
// (20 s lead-in + (k-1) × 60 s).
func TestDirtyRateSchedule(t *testing.T) {
	p := (Benchmark{Type: BenchmarkMigration, Migration: &MigrationParams{Count: 3,
		DirtyRates: []resource.Quantity{resource.MustParse("0"), resource.MustParse("64Mi"), resource.MustParse("256Mi")}}}).WithDefaults().Migration
	got := p.DirtyRateSchedule()
	want := []DirtyRateStep{{0, 0}, {65 * time.Second, 64 << 20}, {125 * time.Second, 256 << 20}}
	if len(got) != len(want) {
		t.Fatalf("schedule %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, name, ok := p.DirtyRateAt(2); !ok || name != "64Mi" {
		t.Errorf("DirtyRateAt(2) = %q, %v; want 64Mi", name, ok)
	}
	if s := (MigrationParams{Count: 3}).DirtyRateSchedule(); s != nil {
		t.Errorf("without dirtyRates the schedule is %v, want none (no writer)", s)
	}
}
