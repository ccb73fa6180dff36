package summary

import (
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The startup timings a run's status keeps, merged from what each look at the run saw.

// observeRunnerReady records when the runner said it had reached every node: the time of its
// started message, by its own clock.
func ObserveRunnerReady(run *vmbenchv1.RunStatus, started time.Time) {
	if run.StartTime == nil || started.IsZero() {
		return
	}
	run.StartupSeconds = MergeStartup(run.StartupSeconds,
		vmbenchv1.RunStartup{RunnerReady: LatestSeconds(run.StartTime.Time, []time.Time{started})})
}

// mergeStartup keeps, per phase, the later of what was recorded and what is seen now; nil when
// neither has any phase.
func MergeStartup(had *vmbenchv1.RunStartup, seen vmbenchv1.RunStartup) *vmbenchv1.RunStartup {
	out := vmbenchv1.RunStartup{}
	if had != nil {
		out = *had
	}
	later := func(a, b *float64) *float64 {
		if a == nil || (b != nil && *b > *a) {
			return b
		}
		return a
	}
	out.PodsScheduled = later(out.PodsScheduled, seen.PodsScheduled)
	out.SandboxesReady = later(out.SandboxesReady, seen.SandboxesReady)
	out.ContainersStarted = later(out.ContainersStarted, seen.ContainersStarted)
	out.VMIScheduled = later(out.VMIScheduled, seen.VMIScheduled)
	out.VMIRunning = later(out.VMIRunning, seen.VMIRunning)
	out.RunnerReady = later(out.RunnerReady, seen.RunnerReady)
	if out == (vmbenchv1.RunStartup{}) {
		return nil
	}
	return &out
}

// latestSeconds is the latest of times, in seconds after since, rounded to a tenth; nil when there
// is none, or when it is before since: a member older than the run is not the run's.
func LatestSeconds(since time.Time, times []time.Time) *float64 {
	var latest time.Time
	for _, t := range times {
		if t.After(latest) {
			latest = t
		}
	}
	if latest.IsZero() || latest.Before(since) {
		return nil
	}
	s := Round(latest.Sub(since).Seconds(), 1)
	return &s
}
