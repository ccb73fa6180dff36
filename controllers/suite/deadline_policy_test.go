package suite

import (
	"math"
	"testing"
	"time"
)

func TestAfterSaturates(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	if got := after(start, time.Hour); !got.Equal(start.Add(time.Hour)) {
		t.Errorf("after(1h) = %s", got)
	}
	if got := after(start, -time.Hour); !got.Equal(start) {
		t.Errorf("a negative duration gives %s, want the start", got)
	}
	if got := after(start, time.Duration(math.MaxInt64)); !got.After(start) || !got.Equal(start.Add(longestWait)) {
		t.Errorf("the longest duration gives %s, want start + %s", got, longestWait)
	}
}

func TestRequeueAfterIsTheEarliestPendingMoment(t *testing.T) {
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		moments []time.Time
		want    time.Duration
	}{
		{"none", nil, 0},
		{"only past and zero moments", []time.Time{now.Add(-time.Minute), now, {}}, 0},
		{"suite timeout before the run deadline", []time.Time{now.Add(4 * time.Hour), now.Add(55 * time.Minute)}, 55 * time.Minute},
		{"startup first", []time.Time{now.Add(time.Hour), now.Add(10 * time.Minute), now.Add(-time.Hour)}, 10 * time.Minute},
	}
	for _, tt := range tests {
		if got := requeueAfter(now, tt.moments...); got != tt.want {
			t.Errorf("%s: requeueAfter = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestCollectBackoffGrowsAndIsBounded(t *testing.T) {
	prev := time.Duration(0)
	for _, since := range []time.Duration{0, time.Second, 10 * time.Second, time.Minute, 10 * time.Minute} {
		got := collectBackoff(since)
		if got < 2*time.Second || got > time.Minute || got < prev {
			t.Errorf("collectBackoff(%s) = %s", since, got)
		}
		prev = got
	}
}
