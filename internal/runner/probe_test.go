package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// fakeProbeClock sleeps exactly as asked, except once, when it stalls: the guest paused.
type fakeProbeClock struct {
	now     time.Time
	sleeps  int
	stallAt int
	stall   time.Duration
	work    uint64
}

func (c *fakeProbeClock) Now() time.Time { return c.now }

func (c *fakeProbeClock) Sleep(_ context.Context, d time.Duration) {
	c.sleeps++
	c.now = c.now.Add(d)
	c.work += 10 // 1,000 units a second while the guest runs
	if c.sleeps == c.stallAt {
		c.now = c.now.Add(c.stall) // paused: time passes, no work
	}
}

// TestTickWindowsSeesAStall protects the probe's ticker: over 2 s with a 500 ms stall on the 55th
// tick, it closes windows of 100 ms with 100 units each; the window of the stall (window 5, from
// 500 ms) has a gap of 510 ms (a tick and the stall), a length of 550 ms and 5 ticks' work; the
// last window is cut at 2 s (50 ms, 50 units).
func TestTickWindowsSeesAStall(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c := &fakeProbeClock{now: start, stallAt: 55, stall: 500 * time.Millisecond}
	windows := tickWindows(context.Background(), c, 2*time.Second, func() uint64 { return c.work })
	if len(windows) != 16 {
		t.Fatalf("%d windows, want 16 (5 before the stall, its own, 9 after it, a last one cut at 2 s)", len(windows))
	}
	var stalled int
	for i, w := range windows {
		if w.maxGap > ProbeTick {
			stalled++
			if i != 5 || w.maxGap != 510*time.Millisecond || w.duration != 550*time.Millisecond || w.work != 50 {
				t.Errorf("window %d: gap %s, length %s, work %d; want window 5 with gap 510ms, length 550ms, work 50", i, w.maxGap, w.duration, w.work)
			}
			continue
		}
		if i == len(windows)-1 {
			if w.duration != 50*time.Millisecond || w.work != 50 {
				t.Errorf("last window: length %s, work %d; want 50ms and 50", w.duration, w.work)
			}
			continue
		}
		if w.duration != ProbeWindow || w.work != 100 {
			t.Errorf("window %d: length %s, work %d; want 100ms and 100", i, w.duration, w.work)
		}
	}
	if stalled != 1 {
		t.Errorf("%d windows with a gap above the tick, want 1", stalled)
	}
	table := probeTable(windows)
	ms, err := results.ParseProbe(table.CSV())
	if err != nil {
		t.Fatalf("the probe's own table does not parse: %v", err)
	}
	for _, m := range ms {
		if m.Name == "max_gap_ms" && m.Value != 510 {
			t.Errorf("max_gap_ms = %v, want 510", m.Value)
		}
	}
	if got := table.Rows[1][results.ProbeWall] - table.Rows[0][results.ProbeWall]; got != 100 {
		t.Errorf("wall clock between windows 0 and 1: %v ms, want 100", got)
	}
}

// TestRunProbeRefusesUnboundedDurations protects the bound on the probe's output size.
func TestRunProbeRefusesUnboundedDurations(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, MaxProbeDuration + time.Second} {
		if _, err := RunProbe(context.Background(), d, nil); err == nil {
			t.Errorf("RunProbe(%s) ran, want an error", d)
		}
	}
}

// TestMigrationBenchmarkRunsTheProbeOnTheMaster protects the migration benchmark's execution: the
// probe announced first (probe-started, with its length: 20 s lead-in + 2 × 30 s), run for that
// long, and its result carrying the whole series as a table.
func TestMigrationBenchmarkRunsTheProbeOnTheMaster(t *testing.T) {
	r, _, msgs := testRunner(t)
	var asked time.Duration
	r.Probe = func(_ context.Context, d time.Duration, _ []vmbenchv1.DirtyRateStep) ([]byte, error) {
		asked = d
		c := &fakeProbeClock{now: time.Unix(1.8e9, 0), stallAt: 30, stall: 200 * time.Millisecond}
		return probeTable(tickWindows(context.Background(), c, time.Second, func() uint64 { return c.work })).CSV(), nil
	}
	b := vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration}.WithDefaults()
	b.Migration.Count, b.Migration.Interval = 2, dur(30*time.Second)
	if err := r.Run(context.Background(), testPlan(t, b)); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var result *runplan.Message
	for i, m := range *msgs {
		kinds = append(kinds, string(m.Kind))
		if m.Kind == runplan.KindProbeStarted && (m.Benchmark != "mig" || m.Node != "master" || m.Seconds != 80) {
			t.Errorf("probe-started %+v, want benchmark mig on master for 80 s", m)
		}
		if m.Kind == runplan.KindResult {
			result = &(*msgs)[i]
		}
	}
	if got := strings.Join(kinds, ","); got != "started,probe-started,result,done" {
		t.Fatalf("messages %s, want started,probe-started,result,done", got)
	}
	if asked != 80*time.Second {
		t.Errorf("probe asked to run %s, want 1m20s", asked)
	}
	if result.Error != "" || result.Table == nil || len(result.Table.Rows) < 8 {
		t.Fatalf("result %+v: want no error and the series as a table", result)
	}
	for _, m := range result.Metrics {
		if m.Name == "max_gap_ms" && m.Value != 210 {
			t.Errorf("max_gap_ms = %v, want 210 (a tick and the 200 ms stall)", m.Value)
		}
	}
}
