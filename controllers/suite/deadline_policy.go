package suite

import (
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Every deadline of a suite is computed here, from times the status holds, so that a restarted
// controller arrives at the same moments. The reconcile requeues at the earliest pending one, because
// a wedged child sends no event.

// longestWait caps every deadline: durations near the limits of time.Duration never wrap around.
const longestWait = 100 * 365 * 24 * time.Hour

// collectRetry is how long a run's log is read again after a transient error (a kubelet restart, a
// network blip, the API server throttling) before the run is failed with that error.
const collectRetry = 10 * time.Minute

// pollWhileStarting is how often a run that is not up yet is looked at again: events and pod
// reasons that hold it up arrive without touching the suite's children.
const pollWhileStarting = 15 * time.Second

// after is start+d, saturated instead of overflowing, and never before start.
func after(start time.Time, d time.Duration) time.Time {
	if d < 0 {
		d = 0
	}
	if d > longestWait {
		d = longestWait
	}
	return start.Add(d)
}

// requeueAfter is how long until the earliest of the moments that is still ahead of now; zero times
// are ignored. It is zero when none is ahead, in which case a watch event must bring the suite back.
func requeueAfter(now time.Time, moments ...time.Time) time.Duration {
	var next time.Duration
	for _, m := range moments {
		if m.IsZero() || !m.After(now) {
			continue
		}
		if d := m.Sub(now); next == 0 || d < next {
			next = d
		}
	}
	return next
}

// collectBackoff is the wait before reading a run's log again, growing with the time since the
// first attempt (half of it, between 2 s and a minute), so that a long outage is not hammered.
func collectBackoff(since time.Duration) time.Duration {
	d := since / 2
	if d < 2*time.Second {
		d = 2 * time.Second
	}
	if d > time.Minute {
		d = time.Minute
	}
	return d
}

// effectiveTimeout is the suite's spec.timeout, capped by the admin's maximum suite duration
// (0: no maximum). It is computed on every reconcile, so a spec.timeout raised after admission is
// capped too.
func effectiveTimeout(spec vmbenchv1.BenchmarkSuiteSpec, maxDuration time.Duration) time.Duration {
	t := spec.SuiteTimeout()
	if maxDuration > 0 && t > maxDuration {
		return maxDuration
	}
	return t
}

// settle is how soon a suite is looked at again when no watch event will say that it can go on: after
// a run that never started, or while the cache has not yet caught up with the suite's last write.
const settle = time.Second
