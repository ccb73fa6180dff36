// Package disruption reads what an event (a live migration) did to a steady load: from the
// in-guest probe's windows (results.ProbeColumns) and the event's start and end on the wall clock,
// the pause the guest saw, the work it lost and how long until it was back at its rate. It is pure:
// no Kubernetes types, no clock.
package disruption

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/vmbench/vmbench/internal/results"
)

// Window is one window of the probe.
type Window struct {
	// Mono and Wall are the window's start: ms since the probe began (monotonic clock) and the wall
	// clock.
	Mono float64
	Wall time.Time
	// Length is the window's length in ms (monotonic), Work the units done in it, MaxGap the longest
	// ticker gap in it (ms).
	Length, Work, MaxGap float64
	// Dirtied is the bytes the guest's memory writer dirtied in the window (0 without a writer).
	Dirtied float64
	// PeerGap is the longest gap between the reports of a peer outside the guest (a VM run's probe
	// worker) that ended in the window or was still open at its close (ms), where Peer says the
	// probe's table has the column (results.ProbePeerColumn).
	PeerGap float64
	Peer    bool
}

// Rate is the window's work a second.
func (w Window) Rate() float64 { return w.Work / (w.Length / 1000) }

// End is the window's end on the wall clock, as its start plus its monotonic length.
func (w Window) End() time.Time { return w.Wall.Add(ms(w.Length)) }

func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// WindowsOf reads the probe's table (results.ProbeSeries checked it).
func WindowsOf(t results.Table) []Window {
	out := make([]Window, 0, len(t.Rows))
	// By name: the peer column follows the base columns with or without the writer's.
	dirtied := results.ProbeColumnIndex(t, results.ProbeDirtyColumns[results.ProbeDirtied])
	peer := results.ProbeColumnIndex(t, results.ProbePeerColumn)
	for _, r := range t.Rows {
		wall := r[results.ProbeWall]
		out = append(out, Window{Mono: r[results.ProbeMono],
			Wall:   time.UnixMicro(int64(math.Round(wall * 1000))).UTC(),
			Length: r[results.ProbeLength], Work: r[results.ProbeWork], MaxGap: r[results.ProbeMaxGap]})
		if dirtied >= 0 && len(r) > dirtied {
			out[len(out)-1].Dirtied = r[dirtied]
		}
		if peer >= 0 && len(r) > peer {
			out[len(out)-1].PeerGap, out[len(out)-1].Peer = r[peer], true
		}
	}
	return out
}

// Tuning of the analysis, in the units of the probe's windows.
const (
	// Slack widens the event on both sides: KubeVirt's migration timestamps are whole seconds, and
	// the guest's wall clock and the host's agree to well under a second.
	Slack = time.Second
	// BaselineSpan is how much of the probe before the event gives the rate it is measured against;
	// MinBaselineWindows is the least that will do (1 s).
	BaselineSpan       = 10 * time.Second
	MinBaselineWindows = 10
	// AtRate is the share of the baseline rate a window must reach to count as at rate, and
	// BackAtRateWindows how many such windows in a row make the load back at rate (1 s).
	AtRate            = 0.9
	BackAtRateWindows = 10
)

// Effect is what one event did to the load.
type Effect struct {
	// PauseMs is the longest ticker gap in the windows that overlap the event (with Slack): the
	// longest time the guest did not run, to the ticker's resolution (10 ms).
	PauseMs float64
	// ClockStepMs is how far the wall clock jumped ahead of the monotonic clock across the event:
	// a pause that the guest's monotonic clock did not count (its clock stopped with it) shows here.
	ClockStepMs float64
	// BaselineRate is the work a second in the BaselineSpan before the event.
	BaselineRate float64
	// BackgroundGapMs is the longest ticker gap in the same BaselineSpan: how long the guest
	// stalls with no event at all (its scheduler, a busy host, emulation), which PauseMs cannot be
	// told apart from. A pause close to it says the event's own pause is below what the probe can
	// resolve on that machine.
	BackgroundGapMs float64
	// DirtyMiBps is the rate the guest's memory writer dirtied memory at over the same
	// BaselineSpan, in MiB a second: the rate it achieved when the migration started, against the
	// rate it was set to (0 without a writer).
	DirtyMiBps float64
	// LostWork is the work the load fell short of its baseline rate by, from the first window below
	// rate from the event's start on until it was back at rate; DipPercent is that against the work
	// of the same time at the baseline rate.
	LostWork, DipPercent float64
	// RecoverySeconds is the time from the first window below rate (at or after the event's start)
	// until the load was back at rate for good (BackAtRateWindows windows in a row, after the
	// event's pause); 0 when it never fell below rate.
	RecoverySeconds float64
	// BackAt is the start (wall clock) of the first of the windows back at rate for good: the end
	// of the dip; zero when it never fell below rate.
	BackAt time.Time
	// PeerGapMs is the longest time a peer outside the guest lost it across the event: the longest
	// gap between the peer's reports (every 10 ms) that overlaps the event (with Slack), wherever it
	// ended, to the end of the probe: the guest's pause, the new virt-launcher pod's network and the
	// peer's reconnect to it. HasPeer is false where the probe had no peer (no such column), or the
	// peer had not reported before the event.
	PeerGapMs float64
	HasPeer   bool
}

// ErrNoBaseline is returned when the probe did not run long enough before the event.
var ErrNoBaseline = errors.New("the probe ran less than a second before the migration started, so there is no rate to measure the dip against")

// Analyse measures the effect of the event from start to end (wall clock) on windows.
func Analyse(windows []Window, start, end time.Time) (Effect, error) {
	if end.Before(start) {
		return Effect{}, fmt.Errorf("the migration ends (%s) before it starts (%s)", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	from, to := start.Add(-Slack), end.Add(Slack)
	var e Effect
	var base, baseLen float64
	var baseN int
	pauseAt := -1
	for i, w := range windows {
		switch {
		case !w.End().After(from):
			if w.End().After(from.Add(-BaselineSpan)) {
				base += w.Work
				baseLen += w.Length
				baseN++
				e.BackgroundGapMs = math.Max(e.BackgroundGapMs, w.MaxGap)
			}
		case w.Wall.Before(to):
			if w.MaxGap > e.PauseMs {
				e.PauseMs, pauseAt = w.MaxGap, i
			}
			if i > 0 {
				prev := windows[i-1]
				step := float64(w.Wall.Sub(prev.Wall).Microseconds())/1000 - (w.Mono - prev.Mono)
				e.ClockStepMs = math.Max(e.ClockStepMs, step)
			}
		}
	}
	if baseN < MinBaselineWindows || baseLen <= 0 {
		return Effect{}, ErrNoBaseline
	}
	if pauseAt < 0 {
		return Effect{}, fmt.Errorf("the probe has no window during the migration (%s to %s): it ended before, or started after",
			start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	e.PeerGapMs, e.HasPeer = peerGap(windows, from, to)
	e.BaselineRate = base / (baseLen / 1000)
	e.DirtyMiBps, _ = DirtyRateBefore(windows, start)
	atRate := func(w Window) bool { return w.Rate() >= AtRate*e.BaselineRate }

	// The dip starts at the first window below rate from the event's (widened) start on; it ends
	// where BackAtRateWindows windows in a row are at rate, none before the pause's window.
	first := -1
	for i, w := range windows {
		if w.End().After(from) && !atRate(w) {
			first = i
			break
		}
	}
	if first < 0 || !windows[first].Wall.Before(to) {
		return e, nil
	}
	back, run := -1, 0
	for i := max(first, pauseAt); i < len(windows); i++ {
		if i == pauseAt || !atRate(windows[i]) {
			run = 0
			continue
		}
		run++
		if run == BackAtRateWindows {
			back = i - BackAtRateWindows + 1
			break
		}
	}
	if back < 0 {
		return Effect{}, fmt.Errorf("the load was not back at %.0f%% of its rate for %d windows in a row before the probe ended: run the probe longer after the last migration (raise interval)",
			AtRate*100, BackAtRateWindows)
	}
	var expected float64
	for _, w := range windows[first:back] {
		want := e.BaselineRate * w.Length / 1000
		e.LostWork += want - w.Work
		expected += want
	}
	e.LostWork = math.Max(e.LostWork, 0)
	e.DipPercent = 100 * e.LostWork / expected
	e.RecoverySeconds = windows[back].Wall.Sub(windows[first].Wall).Seconds()
	e.BackAt = windows[back].Wall
	return e, nil
}

// peerGap is the longest peer gap that overlaps from..to: a window's PeerGap ended in it (or was
// open at its close), so it began PeerGap before the window's end at the latest, and overlaps where
// the window ends after from and the gap began before to. A gap that began in the event and ended
// seconds later, once the peer reconnected, counts whole. ok is false without a peer column, and
// where the peer had not reported before from (a window's PeerGap is 0 until its first report): a
// peer that was not there yet did not lose anything.
func peerGap(windows []Window, from, to time.Time) (gap float64, ok bool) {
	for _, w := range windows {
		if !w.Peer {
			continue
		}
		if w.PeerGap > 0 && w.End().Before(from) {
			ok = true
		}
		if w.End().After(from) && w.End().Add(-ms(w.PeerGap)).Before(to) {
			gap = math.Max(gap, w.PeerGap)
		}
	}
	return gap, ok
}

// DirtyRateBefore is the rate the guest's memory writer dirtied memory at over the BaselineSpan
// before start (widened by Slack), the windows the baseline rate is measured over, in MiB a second:
// Effect.DirtyMiBps, and the figure of a migration that did not complete, whose effect is not
// analysed. ok is false where the probe has no window there.
func DirtyRateBefore(windows []Window, start time.Time) (mibps float64, ok bool) {
	from := start.Add(-Slack)
	var dirtied, length float64
	for _, w := range windows {
		if !w.End().After(from) && w.End().After(from.Add(-BaselineSpan)) {
			dirtied += w.Dirtied
			length += w.Length
		}
	}
	if length <= 0 {
		return 0, false
	}
	return dirtied / (1 << 20) / (length / 1000), true
}

// Names of the migration benchmark's figures in a suite's results, one sample per migration:
// the manager writes them, and the report, the suite board and the schedule history read them.
// Every one is lower-is-better but MetricCompleted, a flag (1 completed, 0 did not).
const (
	MetricCompleted = "completed"
	MetricTotal     = "total_seconds"
	MetricPause     = "pause_ms"
	// MetricBackgroundGap is the longest ticker gap in the BaselineSpan before the migration: what
	// the guest's pauses are without one, against which MetricPause is read.
	MetricBackgroundGap = "background_gap_ms"
	MetricClockStep     = "clock_step_ms"
	MetricDip           = "dip_percent"
	MetricRecovery      = "recovery_seconds"
	// MetricBackAtRate is, for a pod's eviction (the container arm), the time from the eviction
	// accepted until the load was back at rate (Effect.BackAt): what a drain cost a single-replica
	// workload end to end. Not in Figures: no dirty-rate sweep runs on a Container platform.
	MetricBackAtRate = "back_at_rate_seconds"
	// MetricDirtyRate is, in a dirty-rate sweep, the rate the guest's memory writer achieved in
	// the BaselineSpan before the migration (MiB a second), read against the rate it was set to.
	// Lower-is-better like the others only nominally (it is the load, not an outcome): a
	// higher-is-better figure of 0, which a rate of 0 gives, would be taken for a broken result.
	MetricDirtyRate = "dirtied_mib_per_s"
	// MetricPeerGap is, for a VM's live migration, the longest time a peer outside the VM (the run's
	// probe worker pod, reporting every 10 ms over TCP to the master VM by its Service name) lost
	// it: Effect.PeerGapMs. Absent where no peer reported.
	MetricPeerGap = "peer_gap_ms"
)

// Figures are the migration benchmark's figure names, in the order the manager writes them.
var Figures = []string{MetricCompleted, MetricTotal, MetricPause, MetricBackgroundGap, MetricClockStep, MetricDip, MetricRecovery, MetricDirtyRate, MetricPeerGap}

// rateInfix joins a figure's name and its dirty rate in a sweep's metric name.
const rateInfix = "_at_"

// RateMetric is the name of figure at dirty rate (as the spec spells it) in a dirty-rate sweep,
// such as pause_ms_at_64Mi: one status metric per figure and rate, as an HPL sweep keeps one per
// point, so that each rate's samples give its own interval.
func RateMetric(figure, rate string) string { return figure + rateInfix + rate }

// ParseRateMetric recovers the figure and the rate from a name RateMetric made; ok is false for
// any other name.
func ParseRateMetric(name string) (figure, rate string, ok bool) {
	for _, f := range Figures {
		if r, found := strings.CutPrefix(name, f+rateInfix); found && r != "" {
			return f, r, true
		}
	}
	return "", "", false
}
