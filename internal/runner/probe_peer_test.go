package runner

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/results"
)

// peerFeed is a fake clock for the in-guest probe with a peer: the guest's loop does 10 units a
// tick (10 ms) throughout, and the peer (the VM arm's probe worker) reports at every tick except
// for outage from outageAt, as while the VM moves to a new pod and the worker reconnects to it.
type peerFeed struct {
	now, start       time.Time
	outageAt, outage time.Duration
	work             uint64
	peer             *probeReceiver
}

func (f *peerFeed) Now() time.Time { return f.now }

func (f *peerFeed) Sleep(_ context.Context, d time.Duration) {
	f.now = f.now.Add(d)
	f.work += 10
	since := f.now.Sub(f.start)
	if since < f.outageAt || since >= f.outageAt+f.outage {
		f.peer.report("probe-1", uint64(since.Milliseconds()), f.now)
	}
}

// TestInGuestProbeGainsThePeerColumn protects the VM arm's peer figure: over 20 s of the in-guest
// probe, a peer that reports every 10 ms but stops for 500 ms from 12 s gives the table the peer
// column last (ProbeSeries reads it, beside ProbeColumns), the window in which the peer came back
// shows a gap of 510 ms (the outage and one report period), the 4 windows before it the gap
// still open at their close (110 to 410 ms), every other window 10 ms; and internal/disruption reads
// a peer gap of 510 ms for a migration from 12 s to 12.5 s, from the same windows.
func TestInGuestProbeGainsThePeerColumn(t *testing.T) {
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	peer := newProbeReceiver()
	f := &peerFeed{now: start, start: start, outageAt: 12 * time.Second, outage: 500 * time.Millisecond, peer: peer}
	windows := tickPeerWindows(context.Background(), f, 20*time.Second, func() uint64 { return f.work }, nil, peer)
	if !peer.reported() {
		t.Fatal("the receiver says no peer reported")
	}
	series, err := results.ProbeSeries(probePeerTable(windows, false, true).CSV())
	if err != nil {
		t.Fatal(err)
	}
	col := results.ProbeColumnIndex(series, results.ProbePeerColumn)
	if col != len(results.ProbeColumns) {
		t.Fatalf("columns %v, want %v and %s last", series.Columns, results.ProbeColumns, results.ProbePeerColumn)
	}
	var longest, open []float64
	for _, r := range series.Rows {
		switch g := r[col]; {
		case g == 510:
			longest = append(longest, r[results.ProbeMono])
		case g > 10:
			open = append(open, g)
		}
	}
	// The last report before the outage is at 11.99 s, the first after it at 12.5 s, the tick that
	// closes the window from 12.4 s.
	if len(longest) != 1 || longest[0] != 12400 {
		t.Errorf("windows with a peer gap of 510 ms start at %v ms, want one at 12400", longest)
	}
	if len(open) != 4 {
		// The windows from 12.0 s to 12.3 s close with the gap open: 110, 210, 310 and 410 ms.
		t.Errorf("windows with an open peer gap: %v, want 4 (110 to 410 ms)", open)
	}
	for _, g := range open {
		if g >= 510 {
			t.Errorf("an open peer gap of %v ms, want below the whole gap of 510", g)
		}
	}
	e, err := disruption.Analyse(disruption.WindowsOf(series), start.Add(12*time.Second), start.Add(12*time.Second+500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if !e.HasPeer || e.PeerGapMs != 510 {
		t.Errorf("peer gap %v ms (peer %v), want 510 ms", e.PeerGapMs, e.HasPeer)
	}
}

// TestInGuestProbeWithoutAPeerHasNoPeerColumn protects the VM arm's probe from a missing peer: a
// probe no peer reported to is not a failure; its table is the old one, without the peer column,
// and its windows have no peer figure.
func TestInGuestProbeWithoutAPeerHasNoPeerColumn(t *testing.T) {
	start := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	peer := newProbeReceiver()
	c := &fakeProbeClock{now: start}
	windows := tickPeerWindows(context.Background(), c, 2*time.Second, func() uint64 { return c.work }, nil, peer)
	series, err := results.ProbeSeries(probePeerTable(windows, false, peer.reported()).CSV())
	if err != nil {
		t.Fatal(err)
	}
	if len(series.Columns) != len(results.ProbeColumns) {
		t.Errorf("columns %v, want %v", series.Columns, results.ProbeColumns)
	}
	for _, w := range disruption.WindowsOf(series) {
		if w.Peer {
			t.Fatal("a window has a peer figure without a peer")
		}
	}
}

// TestProbeWorkerDropsAConnectionThatIsNotAcknowledged protects the VM arm's reconnect: after a
// live migration the worker's connection leads to the old pod's address, where writes still go into
// the kernel's buffer but nobody answers. A master that reads the reports of its first connection
// and never acknowledges them must see the worker connect again (within probeStall and a dial; the
// test allows 5 s), and reports on the second connection.
func TestProbeWorkerDropsAConnectionThatIsNotAcknowledged(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- RunProbeWorker(ctx, l.Addr().String(), "probe-1", time.Minute) }()

	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = first.Close() }()
	go func() {
		// Read, never acknowledge: a connection that leads nowhere.
		buf := make([]byte, 1024)
		for {
			if _, err := first.Read(buf); err != nil {
				return
			}
		}
	}()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	select {
	case c := <-accepted:
		defer func() { _ = c.Close() }()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		if n, err := c.Read(buf); err != nil || n == 0 {
			t.Errorf("no report on the second connection: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the worker kept a connection its master never acknowledged for 5 s, want a new one within about 300 ms")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("worker: %v", err)
	}
}
