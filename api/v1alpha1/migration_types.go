package v1alpha1

import (
	"fmt"
	"time"
)

// MigrationParams configure the migration benchmark: while the in-guest probe (a steady CPU loop
// counted every 100 ms and a 10 ms ticker) runs on the master VM, vmbench live-migrates that VM
// Count times, one migration after the other, and measures each: KubeVirt's total time, the pause
// the guest saw, the dip in its work and the time until it was back at rate. VM platforms only.
type MigrationParams struct {
	// Count is how many times the VM is migrated, one after the other: the samples the intervals
	// are computed over (and over repetitions: raise spec.repetitions for more). At most 3, as the
	// runner's frames are read from the VM's launcher pods, its first and one per completed migration,
	// and the manager reads at most 4 launcher pods of a VMI.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3
	Count int32 `json:"count,omitempty"`

	// Interval is the time from the start of one migration to the start of the next (and from the
	// probe's start to the first migration's, less the lead-in the probe needs for its rate): long
	// enough for a migration and the load's recovery after it. Between 30s and 5m; the probe runs
	// MigrationLeadIn + count × interval, at most 10m.
	// +optional
	// +kubebuilder:default="60s"
	Interval *Duration `json:"interval,omitempty"`

	// MigrationTimeout bounds each migration: one that has not Succeeded or Failed by then is
	// deleted (which aborts it) and counted as timed out. Between 10s and 10m, at most interval.
	// +optional
	// +kubebuilder:default="50s"
	MigrationTimeout *Duration `json:"migrationTimeout,omitempty"`
}

// Bounds and fixed times of the migration benchmark.
const (
	MinMigrationInterval = 30 * time.Second
	MaxMigrationInterval = 5 * time.Minute
	MinMigrationTimeout  = 10 * time.Second
	MaxMigrationTimeout  = 10 * time.Minute
	// MigrationLeadIn is the probe's time before the first migration: its rate is measured over
	// the 10 s before a migration starts, and the first windows are the loop warming up.
	MigrationLeadIn = 20 * time.Second
	// MaxMigrationProbe is the longest the probe may run (6,000 windows of 100 ms in one frame).
	MaxMigrationProbe                 = 10 * time.Minute
	DefaultMigrationCount             = 3
	MaxMigrationCount                 = 3
	DefaultMigrationInterval Duration = "60s"
	DefaultMigrationTimeout  Duration = "50s"
)

// ProbeDuration is how long the probe runs for p (defaults applied): the lead-in, then an interval
// per migration, the last one for the recovery after the last migration.
func (p MigrationParams) ProbeDuration() time.Duration {
	return MigrationLeadIn + time.Duration(max(p.Count, 1))*p.Interval.Duration()
}

// migrationProblem says what is wrong with a migration benchmark at path, on the suite's
// platforms. The CRD checks only Count's range; the rest is here, so that no CEL rule runs on every
// write of a suite.
func migrationProblem(path string, b Benchmark, platforms []Platform) error {
	if b.Migration != nil && b.Type != BenchmarkMigration {
		return fmt.Errorf("%s.migration: migration parameters need type: migration; remove them or set type to migration", path)
	}
	if b.Type != BenchmarkMigration {
		return nil
	}
	if len(platforms) == 0 {
		platforms = []Platform{{Name: "container", Type: PlatformContainer}}
	}
	for i, p := range platforms {
		if p.Type != PlatformVM {
			return fmt.Errorf("%s: type migration live-migrates a VM, and platform %s (spec.platforms[%d]) is of type %s: the container arm (a pod evicted and rescheduled) is not built yet; run this benchmark in a suite whose platforms are all of type VM",
				path, p.Name, i, p.Type)
		}
	}
	p := b.WithDefaults().Migration
	if p.Count < 1 || p.Count > MaxMigrationCount {
		return fmt.Errorf("%s.migration.count: %d is not between 1 and %d (the manager reads the frames of at most 4 launcher pods of a VM, its first and one per migration): set it in that range, and raise spec.repetitions for more samples",
			path, p.Count, MaxMigrationCount)
	}
	if err := durationProblem(path+".migration.interval", *p.Interval, MinMigrationInterval, MaxMigrationInterval); err != nil {
		return err
	}
	if err := durationProblem(path+".migration.migrationTimeout", *p.MigrationTimeout, MinMigrationTimeout, MaxMigrationTimeout); err != nil {
		return err
	}
	if p.MigrationTimeout.Duration() > p.Interval.Duration() {
		return fmt.Errorf("%s.migration.migrationTimeout: %s is longer than interval %s, and the next migration starts one interval after this one: lower migrationTimeout or raise interval",
			path, string(*p.MigrationTimeout), string(*p.Interval))
	}
	if d := p.ProbeDuration(); d > MaxMigrationProbe {
		return fmt.Errorf("%s.migration: the probe would run %s (%s lead-in and %d × interval %s), more than %s: lower count or interval",
			path, shortDuration(d), shortDuration(MigrationLeadIn), p.Count, string(*p.Interval), shortDuration(MaxMigrationProbe))
	}
	timeout := 30 * time.Minute
	if b.Timeout != nil {
		timeout = b.Timeout.Duration()
	}
	if d := p.ProbeDuration(); d >= timeout {
		return fmt.Errorf("%s.timeout: the probe runs %s, not less than the benchmark's timeout %s: raise timeout or lower count or interval",
			path, shortDuration(d), shortDuration(timeout))
	}
	return nil
}
