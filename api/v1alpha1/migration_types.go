package v1alpha1

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MigrationParams configure the migration benchmark: while the in-guest probe (a steady CPU loop
// counted every 100 ms and a 10 ms ticker) runs on the master VM, vmbench live-migrates that VM
// Count times, one migration after the other, and measures each: KubeVirt's total time, the pause
// the guest saw, the dip in its work and the time until it was back at rate. VM platforms only.
type MigrationParams struct {
	// Count is how many times the VM is migrated, one after the other: the samples the intervals
	// are computed over (and over repetitions: raise spec.repetitions for more). At most 9, as the
	// runner's frames are read from the VM's launcher pods, its first and one per completed migration,
	// and the manager reads at most 10 launcher pods of a VMI.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=9
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

	// DirtyRates make the run a sweep over the guest's dirty rate: a memory writer in the guest
	// dirties a fixed working set of DirtyWorkingSet (256Mi) at a set rate in bytes a second
	// (touching one byte of each 4 KiB page counts the page, so "64Mi" is 16,384 pages a second),
	// and migration k of a run (from 1) runs at dirtyRates[(k-1) mod len]: with ["0", "64Mi",
	// "256Mi"] and count 3, the first migration at 0, the second at 64Mi, the third at 256Mi. Count
	// must be a multiple of the list's length, so that every rate gets as many migrations; raise
	// spec.repetitions for more samples per rate. The writer switches to a migration's rate
	// DirtyRateLeadIn (15s) before the migration is due, so that the 10 s the dip is measured
	// against are at that rate. Each figure is kept per rate (pause_ms_at_64Mi, ...), with the rate the
	// writer achieved. At most 3 rates, each between 0 and 1Gi a second; the nodes need at least
	// 1Gi of memory (the working set is a quarter of it). Empty: no writer, as before.
	// +optional
	// +kubebuilder:validation:MaxItems=3
	// +listType=atomic
	DirtyRates []resource.Quantity `json:"dirtyRates,omitempty"`
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
	MaxMigrationProbe     = 10 * time.Minute
	DefaultMigrationCount = 3
	// MaxMigrationCount bounds count: the manager reads the frames of a VM run from its master VMI's
	// first launcher pod and one per migration (MaxMigrationCount + 1 pods), within one log read; the
	// probe at count 9 and the longest interval 5m would pass MaxMigrationProbe, which bounds it too.
	MaxMigrationCount                 = 9
	DefaultMigrationInterval Duration = "60s"
	DefaultMigrationTimeout  Duration = "50s"
	// MaxDirtyRates bounds the sweep: each rate's 9 figures (peer_gap_ms among them) make 27 status
	// metrics with 3 rates, within a benchmark's 48.
	MaxDirtyRates = 3
	// MaxDirtyRate is the highest rate the writer is asked for (bytes a second): four passes over
	// its working set a second, far more than a migration over a 1 or 10 Gbps link converges at.
	MaxDirtyRate = 1 << 30
	// DirtyWorkingSet is the memory writer's buffer: fixed, so that the rates of two suites dirty
	// the same pages and compare; a quarter of the 1Gi quick VMs, so the guest keeps room for its
	// runner and page cache. MinDirtyMemory is the node memory that needs.
	DirtyWorkingSet = 256 << 20
	MinDirtyMemory  = 4 * DirtyWorkingSet
	// DirtyRateLeadIn is how long before a migration is due the writer switches to its rate: more
	// than the 10 s before a migration the dip's baseline is measured over and the 1 s of slack.
	DirtyRateLeadIn = 15 * time.Second
)

// DirtyRateAt is the dirty rate (bytes a second) of migration k (from 1) of p, and its spelling
// as given ("64Mi"); ok is false without dirtyRates.
func (p MigrationParams) DirtyRateAt(k int) (bytes int64, name string, ok bool) {
	if len(p.DirtyRates) == 0 || k < 1 {
		return 0, "", false
	}
	q := p.DirtyRates[(k-1)%len(p.DirtyRates)]
	return q.Value(), q.String(), true
}

// DirtyRateStep is one step of the writer's schedule: from From (the probe's time since its start)
// on, Bytes a second.
type DirtyRateStep struct {
	From  time.Duration
	Bytes int64
}

// DirtyRateSchedule is the writer's schedule for p (defaults applied), one step per migration k:
// from the probe's start for the first, from DirtyRateLeadIn before migration k is due
// (MigrationLeadIn + (k-1) × interval) for the others, at DirtyRateAt(k). nil without dirtyRates.
func (p MigrationParams) DirtyRateSchedule() []DirtyRateStep {
	if len(p.DirtyRates) == 0 {
		return nil
	}
	out := make([]DirtyRateStep, 0, max(p.Count, 1))
	for k := 1; k <= int(max(p.Count, 1)); k++ {
		bytes, _, _ := p.DirtyRateAt(k)
		from := MigrationLeadIn + time.Duration(k-1)*p.Interval.Duration() - DirtyRateLeadIn
		if k == 1 {
			from = 0
		}
		out = append(out, DirtyRateStep{From: from, Bytes: bytes})
	}
	return out
}

// ProbeDuration is how long the probe runs for p (defaults applied): the lead-in, then an interval
// per migration, the last one for the recovery after the last migration.
func (p MigrationParams) ProbeDuration() time.Duration {
	return MigrationLeadIn + time.Duration(max(p.Count, 1))*p.Interval.Duration()
}

// migrationProblem says what is wrong with a migration benchmark at path, on the suite's
// platforms. The CRD checks only Count's range; the rest is here, so that no CEL rule runs on every
// write of a suite.
func migrationProblem(path string, b Benchmark, platforms []Platform, cluster ClusterShape) error {
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
		// A VM is live-migrated; on Container the probe's worker pod is evicted and replaced on
		// another node (the container arm). A Host pod shares its node's network, which the worker's
		// pods may not (the manager's children policy), and a drain of a Host node is an admin's.
		if p.Type == PlatformHost {
			return fmt.Errorf("%s: type migration live-migrates a VM (platforms of type VM) or evicts a pod (type Container), and platform %s (spec.platforms[%d]) is of type Host, whose pods share their node's network: run this benchmark on VM and Container platforms only",
				path, p.Name, i)
		}
	}
	p := b.WithDefaults().Migration
	if p.Count < 1 || p.Count > MaxMigrationCount {
		return fmt.Errorf("%s.migration.count: %d is not between 1 and %d (the manager reads the frames of at most %d launcher pods of a VM, its first and one per migration): set it in that range, and raise spec.repetitions for more samples",
			path, p.Count, MaxMigrationCount, MaxMigrationCount+1)
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
	if err := dirtyRatesProblem(path, *p, cluster); err != nil {
		return err
	}
	for i, pl := range platforms {
		if len(p.DirtyRates) > 0 && pl.Type == PlatformContainer {
			return fmt.Errorf("%s.migration.dirtyRates: a dirty-rate sweep sets how fast a VM's memory changes while it is live-migrated, and platform %s (spec.platforms[%d]) is of type Container, whose pod is evicted and restarted, not moved: remove dirtyRates, or run the sweep in a suite whose platforms are all of type VM",
				path, pl.Name, i)
		}
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

// dirtyRatesProblem says what is wrong with the dirty-rate sweep of p (defaults applied).
func dirtyRatesProblem(path string, p MigrationParams, cluster ClusterShape) error {
	n := len(p.DirtyRates)
	if n == 0 {
		return nil
	}
	if n > MaxDirtyRates {
		return fmt.Errorf("%s.migration.dirtyRates: %d rates, at most %d (each rate's 9 figures are status metrics of the benchmark, which keeps at most 48): drop rates, or split the sweep into two migration benchmarks",
			path, n, MaxDirtyRates)
	}
	seen := map[int64]int{}
	for i, q := range p.DirtyRates {
		v := q.Value()
		if q.Sign() < 0 || v > MaxDirtyRate || q.MilliValue() != v*1000 {
			return fmt.Errorf("%s.migration.dirtyRates[%d]: %s is not a whole number of bytes a second between 0 and 1Gi: write rates such as \"0\", \"64Mi\" or \"256Mi\"",
				path, i, q.String())
		}
		if j, dup := seen[v]; dup {
			return fmt.Errorf("%s.migration.dirtyRates[%d]: %s is the same rate as dirtyRates[%d]: give each rate once, and raise spec.repetitions for more samples of it",
				path, i, q.String(), j)
		}
		seen[v] = i
	}
	if int(p.Count)%n != 0 {
		return fmt.Errorf("%s.migration.count: %d is not a multiple of the %d dirty rates (migration k runs at dirtyRates[(k-1) mod %d], so every rate needs as many migrations): set count to %d, and raise spec.repetitions for more samples per rate",
			path, p.Count, n, n, min((int(p.Count)+n-1)/n*n, n*(MaxMigrationCount/n)))
	}
	if mem := cluster.MemoryLimit(); mem.Value() < MinDirtyMemory {
		return fmt.Errorf("%s.migration.dirtyRates: the memory writer dirties a working set of 256Mi, a quarter of the node memory it needs at least (1Gi), and cluster.memory is %s: raise cluster.memory to 1Gi or more, or remove dirtyRates",
			path, mem.String())
	}
	return nil
}

// MigrationObjectName is the name of a run's i-th migration object (from 1) of the migration
// benchmark: deterministic, so that a retried reconcile never migrates twice, and read back by
// MigrationObjectIndex.
func MigrationObjectName(run string, i int) string { return run + "-mig-" + strconv.Itoa(i) }

// MigrationObjectIndex is i where name is MigrationObjectName(run, i); ok is false for any other name.
func MigrationObjectIndex(run, name string) (i int, ok bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, run+"-mig-"))
	if err != nil || n < 1 || MigrationObjectName(run, n) != name {
		return 0, false
	}
	return n, true
}
