package disruption

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vmbench/vmbench/internal/results"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// series builds a probe table of 100 ms windows at 1,000 units a second from t0 for total, with a
// pause of pause at pauseAt (one window that long, with that gap and no work) and after it the
// given rates (units a second, one per window) before the rate is back.
func series(total, pauseAt, pause time.Duration, after []float64) results.Table {
	t := results.Table{Columns: results.ProbeColumns}
	mono := 0.0
	for elapsed := time.Duration(0); elapsed < total; {
		length, work, gap := 100.0, 100.0, 10.2
		if elapsed == pauseAt && pause > 0 {
			length, work, gap = float64(pause.Milliseconds()), 0, float64(pause.Milliseconds())
		} else if elapsed > pauseAt && len(after) > 0 {
			work, after = after[0]/10, after[1:]
		}
		t.Rows = append(t.Rows, []float64{mono, float64(t0.UnixMilli()) + mono, length, work, gap})
		mono += length
		elapsed += ms(length)
	}
	return t
}

// TestAnalyseKnownPauseAndDip protects the figures of a migration from 20 s to 23 s: a 300 ms
// pause at 22 s, then 5 windows at 500 units/s and 5 at 800 units/s. Pause 300 ms; the dip starts
// at the pause's window and lasts 1.3 s (0.3 + 0.5 + 0.5); lost work 300 + 250 + 100 = 650 units
// against 1,300 expected: 50%.
func TestAnalyseKnownPauseAndDip(t *testing.T) {
	after := []float64{500, 500, 500, 500, 500, 800, 800, 800, 800, 800}
	tab := series(40*time.Second, 22*time.Second, 300*time.Millisecond, after)
	e, err := Analyse(WindowsOf(tab), t0.Add(20*time.Second), t0.Add(23*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v ± %v", name, got, want, tol)
		}
	}
	check("PauseMs", e.PauseMs, 300, 0)
	check("BaselineRate", e.BaselineRate, 1000, 1e-9)
	check("LostWork", e.LostWork, 650, 1e-6)
	check("DipPercent", e.DipPercent, 50, 1e-6)
	check("RecoverySeconds", e.RecoverySeconds, 1.3, 1e-3)
	check("ClockStepMs", e.ClockStepMs, 0, 1e-3)
}

// TestAnalyseAPauseTheMonotonicClockMissed protects ClockStepMs: the guest's monotonic clock
// stopped for the pause (no gap seen), its wall clock jumped 400 ms.
func TestAnalyseAPauseTheMonotonicClockMissed(t *testing.T) {
	tab := series(30*time.Second, time.Hour, 0, nil)
	for i := range tab.Rows {
		if tab.Rows[i][results.ProbeMono] >= 21000 {
			tab.Rows[i][results.ProbeWall] += 400
		}
	}
	e, err := Analyse(WindowsOf(tab), t0.Add(20*time.Second), t0.Add(22*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(e.ClockStepMs-400) > 1e-3 || e.PauseMs > 10.2 || e.DipPercent != 0 || e.RecoverySeconds != 0 {
		t.Errorf("effect %+v, want a clock step of 400 ms, no pause above the tick, no dip", e)
	}
}

// TestAnalyseRefusesWhatItCannotMeasure protects the errors: no baseline before the migration, and
// a load still below rate when the probe ended.
func TestAnalyseRefusesWhatItCannotMeasure(t *testing.T) {
	tab := series(10*time.Second, 500*time.Millisecond, 200*time.Millisecond, nil)
	if _, err := Analyse(WindowsOf(tab), t0.Add(time.Second), t0.Add(2*time.Second)); !errors.Is(err, ErrNoBaseline) {
		t.Errorf("migration 1 s into the probe: %v, want ErrNoBaseline", err)
	}
	slow := make([]float64, 100)
	for i := range slow {
		slow[i] = 100
	}
	tab = series(15*time.Second, 12*time.Second, 200*time.Millisecond, slow)
	_, err := Analyse(WindowsOf(tab), t0.Add(11*time.Second), t0.Add(12*time.Second))
	if err == nil || !strings.Contains(err.Error(), "raise interval") {
		t.Errorf("load never back at rate: %v, want the error that says to raise interval", err)
	}
	if _, err := Analyse(WindowsOf(tab), t0.Add(time.Hour), t0.Add(time.Hour+time.Second)); err == nil {
		t.Error("migration after the probe ended: no error")
	}
}

// TestAnalyseBackgroundGap protects BackgroundGapMs, the guest's own stalls that a pause cannot
// be told apart from: the longest ticker gap in the 10 s of windows before the migration's widened
// start (19 s here, so 9 s to 19 s), not one before them (5 s) nor one during the migration.
func TestAnalyseBackgroundGap(t *testing.T) {
	tab := series(40*time.Second, 22*time.Second, 300*time.Millisecond, nil)
	gapAt := func(at time.Duration, gap float64) {
		for _, r := range tab.Rows {
			if r[results.ProbeMono] == float64(at.Milliseconds()) {
				r[results.ProbeMaxGap] = gap
				return
			}
		}
		t.Fatalf("no window starts at %s", at)
	}
	gapAt(5*time.Second, 95)          // before the baseline span
	gapAt(12*time.Second, 60)         // in it
	gapAt(18*time.Second, 40)         // in it, shorter
	gapAt(19500*time.Millisecond, 80) // in the widened migration: part of the pause's search
	e, err := Analyse(WindowsOf(tab), t0.Add(20*time.Second), t0.Add(23*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if e.BackgroundGapMs != 60 {
		t.Errorf("BackgroundGapMs = %v, want 60 (the longest gap from 9 s to 19 s)", e.BackgroundGapMs)
	}
	if e.PauseMs != 300 {
		t.Errorf("PauseMs = %v, want 300", e.PauseMs)
	}
}

// TestAnalyseReadsTheWritersAchievedRate protects DirtyMiBps: with the writer's columns, windows
// that dirty 3.2 MiB each (32 MiB a second) before a migration at 20 s give 32 MiB/s, whatever the
// windows during and after it dirtied.
func TestAnalyseReadsTheWritersAchievedRate(t *testing.T) {
	tab := series(40*time.Second, 22*time.Second, 300*time.Millisecond, nil)
	tab.Columns = results.ProbeDirtyColumns
	for i, r := range tab.Rows {
		dirtied := 3.2 * (1 << 20)
		if r[results.ProbeMono] >= 19000 {
			dirtied = 0
		}
		tab.Rows[i] = append(r, dirtied, 64<<20)
	}
	e, err := Analyse(WindowsOf(tab), t0.Add(20*time.Second), t0.Add(23*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(e.DirtyMiBps-32) > 1e-9 {
		t.Errorf("DirtyMiBps = %v, want 32", e.DirtyMiBps)
	}
}

// TestRateMetricRoundTrips protects the sweep's metric names: each figure at a rate is named
// figure_at_rate and read back; plain figures and other names are not rate metrics.
func TestRateMetricRoundTrips(t *testing.T) {
	for _, f := range Figures {
		name := RateMetric(f, "64Mi")
		got, rate, ok := ParseRateMetric(name)
		if !ok || got != f || rate != "64Mi" {
			t.Errorf("ParseRateMetric(%q) = %q, %q, %v; want %q, 64Mi", name, got, rate, ok, f)
		}
	}
	if RateMetric(MetricPause, "0") != "pause_ms_at_0" {
		t.Errorf("RateMetric(pause_ms, 0) = %q, want pause_ms_at_0", RateMetric(MetricPause, "0"))
	}
	for _, name := range []string{MetricPause, "pause_ms_at_", "work_at_64Mi", "HPL_Gflops_N2048_NB64_P2_Q3"} {
		if _, _, ok := ParseRateMetric(name); ok {
			t.Errorf("ParseRateMetric(%q) ok, want not a rate metric", name)
		}
	}
}

// TestAnalyseReadsThePeersLongestLoss protects PeerGapMs (the VM arm's peer figure): with the peer
// column after ProbeColumns and a migration from 20 s to 23 s, the peer's reports stop at 22.1 s
// and resume at 24.5 s, after the event and its second of slack: the windows from 22.2 s show the
// gap open at their close (100 ms more each) and the one ending at 24.6 s the whole 2,400 ms, which
// is the figure; a 200 ms gap at 10 s (before the event) and a 900 ms gap from 29.1 s (after it)
// are not; a peer whose first report came after the event has no figure. The column's place after
// the base columns is read by name: Dirtied stays 0.
func TestAnalyseReadsThePeersLongestLoss(t *testing.T) {
	tab := series(40*time.Second, 22*time.Second, 300*time.Millisecond, nil)
	tab.Columns = append(append([]string{}, results.ProbeColumns...), results.ProbePeerColumn)
	for i, r := range tab.Rows {
		end := r[results.ProbeMono] + r[results.ProbeLength]
		gap := 10.0
		switch {
		case end == 10100:
			gap = 200
		case end > 22100 && end < 24500:
			gap = end - 22100 // open at the window's close
		case end >= 24500 && end < 24600+1:
			gap = 2400
		case end == 30000:
			gap = 900
		}
		tab.Rows[i] = append(r, gap)
	}
	if _, err := results.ProbeSeries(tab.CSV()); err != nil {
		t.Fatalf("the probe's table with the peer column: %v", err)
	}
	windows := WindowsOf(tab)
	e, err := Analyse(windows, t0.Add(20*time.Second), t0.Add(23*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !e.HasPeer || e.PeerGapMs != 2400 {
		t.Errorf("PeerGapMs = %v (peer %v), want 2400", e.PeerGapMs, e.HasPeer)
	}
	for _, w := range windows {
		if w.Dirtied != 0 {
			t.Fatalf("window at %v ms: Dirtied %v, want 0 (the peer column is not the writer's)", w.Mono, w.Dirtied)
		}
	}

	// A peer that first reported after the event (its column 0 until then) lost nothing of it.
	late := results.Table{Columns: tab.Columns}
	for _, r := range tab.Rows {
		r = append([]float64{}, r...)
		if r[results.ProbeMono] < 25_000 {
			r[len(r)-1] = 0
		}
		late.Rows = append(late.Rows, r)
	}
	if e, err := Analyse(WindowsOf(late), t0.Add(20*time.Second), t0.Add(23*time.Second)); err != nil || e.HasPeer {
		t.Errorf("a peer that came after the event: PeerGapMs %v (peer %v, %v), want none", e.PeerGapMs, e.HasPeer, err)
	}

	// Without the column (an older probe, or no peer): no peer figure, the rest as before.
	e, err = Analyse(WindowsOf(series(40*time.Second, 22*time.Second, 300*time.Millisecond, nil)), t0.Add(20*time.Second), t0.Add(23*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if e.HasPeer || e.PeerGapMs != 0 || e.PauseMs != 300 {
		t.Errorf("without a peer column: PeerGapMs %v (peer %v), pause %v; want none and a pause of 300", e.PeerGapMs, e.HasPeer, e.PauseMs)
	}
}
