package runner

import (
	"context"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/runplan"
)

// workerFeed is a fake clock for the receiver that plays the worker: at every tick (10 ms) a worker
// reports its count (1,000 units a second since it started), except from outageAt for outage, when
// the first worker is gone (evicted) and then a second one (its replacement) reports from 0.
type workerFeed struct {
	now, start       time.Time
	outageAt, outage time.Duration
	rec              *probeReceiver
}

func (f *workerFeed) Now() time.Time { return f.now }

func (f *workerFeed) Sleep(_ context.Context, d time.Duration) {
	f.now = f.now.Add(d)
	since := f.now.Sub(f.start)
	switch {
	case since < f.outageAt:
		f.rec.report("probe-1", uint64(since.Milliseconds()), f.now)
	case since >= f.outageAt+f.outage:
		f.rec.report("probe-2", uint64((since - f.outageAt - f.outage).Milliseconds()), f.now)
	}
}

// TestReceiverSeesAnEvictedWorker protects the master's windows of the container arm: a worker
// that reports every 10 ms, gone for 700 ms (evicted) and replaced by one that counts from 0, gives
// over 20 s windows of 100 units a 100 ms, one window with the gap of 710 ms (the outage and a
// report period), 700 units less in all (none counted twice across the two workers); and
// internal/disruption reads from them a pause of 710 ms, work lost of 700 units (bounds in the test)
// and a recovery within a second of the outage's start.
func TestReceiverSeesAnEvictedWorker(t *testing.T) {
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	rec := newProbeReceiver()
	f := &workerFeed{now: start, start: start, outageAt: 12 * time.Second, outage: 700 * time.Millisecond, rec: rec}
	windows := receiverWindows(context.Background(), f, 20*time.Second, rec)
	if len(windows) != 200 {
		t.Fatalf("%d windows, want 200 of 100 ms over 20 s", len(windows))
	}
	var total uint64
	var gaps []time.Duration
	for _, w := range windows {
		total += w.work
		if w.maxGap > ProbeReport {
			gaps = append(gaps, w.maxGap)
		}
	}
	if total != 20000-700-10 {
		// 10 units of the tick at which the replacement starts from 0 are not counted: it reports
		// 0 then, its work since it started.
		t.Errorf("work %d in all, want %d (20 s at 1,000 a second less the 700 ms outage and the replacement's first tick)", total, 20000-700-10)
	}
	if len(gaps) != 1 || gaps[0] != 710*time.Millisecond {
		t.Errorf("gaps above the report period: %v, want one of 710ms", gaps)
	}

	e, err := disruption.Analyse(disruption.WindowsOf(probeTable(windows)), start.Add(12*time.Second), start.Add(12*time.Second+700*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if e.PauseMs != 710 {
		t.Errorf("pause %.0f ms, want 710 (the outage and one report period)", e.PauseMs)
	}
	if math.Abs(e.LostWork-710) > 20 {
		t.Errorf("work lost %.0f units, want 710 ± 20 (700 ms at 1,000 a second, and the replacement's first tick)", e.LostWork)
	}
	if e.RecoverySeconds <= 0 || e.RecoverySeconds > 1 {
		t.Errorf("back at rate after %.2f s, want within a second of the outage", e.RecoverySeconds)
	}
	if e.BackgroundGapMs != 10 {
		t.Errorf("background gap %.0f ms, want 10 (the report period)", e.BackgroundGapMs)
	}
}

// TestReceiverCountsAReconnectOnce protects the count across a reconnect of the same worker: its
// cumulative count goes on, so only its increase counts; a count that goes back (a worker of the
// same name restarted) counts from 0.
func TestReceiverCountsAReconnectOnce(t *testing.T) {
	rec := newProbeReceiver()
	at := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	rec.report("w", 100, at)
	rec.report("w", 150, at.Add(10*time.Millisecond))
	rec.report("w", 170, at.Add(300*time.Millisecond)) // reconnected
	rec.report("w", 5, at.Add(310*time.Millisecond))   // restarted
	work, gap := rec.take()
	if work != 170 || gap != 290*time.Millisecond {
		t.Errorf("work %d, gap %s; want 170 and 290ms", work, gap)
	}
	if work, gap := rec.take(); work != 0 || gap != 0 {
		t.Errorf("after take: %d, %s; want a fresh window", work, gap)
	}
}

// TestProbeWorkerReportsOverTCP protects the worker and the receiver's wire: the worker's lines
// reach a listener as "<worker> <count>" with a count that grows.
func TestProbeWorkerReportsOverTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	rec := newProbeReceiver()
	go serveProbe(l, systemProbeClock{}, rec)
	if err := RunProbeWorker(context.Background(), l.Addr().String(), "probe-1", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.last["probe-1"] == 0 || rec.work != rec.last["probe-1"] {
		t.Errorf("received %v, work %d; want a growing count from probe-1 counted once", rec.last, rec.work)
	}
	if err := RunProbeWorker(context.Background(), "127.0.0.1:1", "probe-1", 150*time.Millisecond); err == nil ||
		!strings.Contains(err.Error(), "never reached the master 127.0.0.1:1") {
		t.Errorf("a worker that never reached its master: %v", err)
	}
}

// TestMigrationBenchmarkOnAContainerReceivesTheWorker protects the container arm's execution on the
// master: it listens on the probe port, announces the probe only once listening (the manager then
// makes the worker), and its result carries the receiver's series; the in-guest probe does not run.
func TestMigrationBenchmarkOnAContainerReceivesTheWorker(t *testing.T) {
	r, _, msgs := testRunner(t)
	r.Probe = func(context.Context, time.Duration, []vmbenchv1.DirtyRateStep) ([]byte, error) {
		t.Error("the in-guest probe ran on a Container platform")
		return nil, nil
	}
	var addr string
	r.ReceiveProbe = func(_ context.Context, a string, d time.Duration, started func() error) ([]byte, error) {
		addr = a
		if len(*msgs) != 1 {
			t.Errorf("%d messages before the receiver listens, want the run's start alone", len(*msgs))
		}
		if err := started(); err != nil {
			return nil, err
		}
		start := time.Unix(1.8e9, 0)
		rec := newProbeReceiver()
		f := &workerFeed{now: start, start: start, outageAt: 500 * time.Millisecond, outage: 200 * time.Millisecond, rec: rec}
		return probeTable(receiverWindows(context.Background(), f, 2*time.Second, rec)).CSV(), nil
	}
	b := vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration}.WithDefaults()
	b.Migration.Count, b.Migration.Interval = 2, dur(30*time.Second)
	plan := testPlan(t, b)
	plan.PlatformType = vmbenchv1.PlatformContainer
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if addr != ":12868" {
		t.Errorf("the receiver listens on %q, want :12868 (runplan.ProbeReportPort)", addr)
	}
	var kinds []string
	for _, m := range *msgs {
		kinds = append(kinds, string(m.Kind))
		if m.Kind == runplan.KindResult {
			if m.Error != "" || m.Table == nil {
				t.Fatalf("result %+v: want the receiver's series", m)
			}
			for _, metric := range m.Metrics {
				if metric.Name == "max_gap_ms" && metric.Value != 210 {
					t.Errorf("max_gap_ms = %v, want 210 (the 200 ms outage and a report period)", metric.Value)
				}
			}
		}
	}
	if got := strings.Join(kinds, ","); got != "started,probe-started,result,done" {
		t.Fatalf("messages %s, want started,probe-started,result,done", got)
	}
}
