package main

import (
	"strings"
	"testing"
	"time"
)

// Protects --min-schedule-interval: 5m by default, as docs/schedules.md says, and refused outside
// 1m..1h, where the schedule controller's check of a day's start times no longer holds.
// parseFlags sets the process's logger for good (other tests read the manager's log), so this test
// runs in a process of its own, as TestPprofIsOffByDefault does.
func TestMinScheduleIntervalFlag(t *testing.T) {
	if !inOwnProcess(t) {
		return
	}
	if o := parseFlagsFrom(t); o.minScheduleInterval != 5*time.Minute {
		t.Errorf("--min-schedule-interval defaults to %s, want 5m", o.minScheduleInterval)
	}
	for _, tc := range []struct {
		d  time.Duration
		ok bool
	}{
		{time.Minute, true}, {5 * time.Minute, true}, {time.Hour, true},
		{0, false}, {30 * time.Second, false}, {2 * time.Hour, false},
	} {
		o := validOptions()
		o.minScheduleInterval = tc.d
		err := o.validate()
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "--min-schedule-interval") {
			t.Errorf("--min-schedule-interval=%s: %v, want accepted %v (a refusal naming the flag)", tc.d, err, tc.ok)
		}
	}
}
