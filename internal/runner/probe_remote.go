package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The container arm of the migration benchmark: the probe's CPU loop runs in a worker pod that the
// manager evicts and replaces, so its work is counted where it survives the eviction, on the run's
// master. The worker (RunProbeWorker) sends "<worker> <units>\n", its cumulative units of work, every
// ProbeReport; the master's receiver keeps the probe's 100 ms windows on its own clock: a window's
// work is the units received in it (each worker's increase, so that a reconnect or a new worker adds
// up and nothing counts twice), its maxGap the longest time between two reports (from any worker).
// An eviction shows as a gap (the worker gone until its replacement reports) and as work lost.

// ProbeReport is how often the worker reports its count: a pause is resolved to it.
const ProbeReport = 10 * time.Millisecond

// probeDial is how often a worker tries to reach its master while it cannot.
const probeDial = 100 * time.Millisecond

// probeStall is how long a worker waits for its master's acknowledgement (since the last one, or
// since it connected) before it drops the connection and dials again: a connection to a VM that
// moved to a new pod and address accepts writes into the kernel's buffer for minutes, and only the
// missing acknowledgements tell. A live master acknowledges within a millisecond; 200 ms leaves room
// for a busy or emulated guest's stalls (its ticker's background gap), and is part of what the peer
// figure measures across a migration.
const probeStall = 200 * time.Millisecond

// probeReceiver accumulates the reports of the probe's workers into windows.
type probeReceiver struct {
	mu     sync.Mutex
	last   map[string]uint64 // the last count of each worker
	work   uint64            // units received in the open window
	seen   time.Time         // the last report's arrival; zero before the first
	maxGap time.Duration     // the longest gap between reports in the open window
}

func newProbeReceiver() *probeReceiver { return &probeReceiver{last: map[string]uint64{}} }

// report takes worker's cumulative count units, received at now.
func (r *probeReceiver) report(worker string, units uint64, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.last[worker]; !ok || units >= prev {
		// A worker's first report counts from 0: its work since it started.
		r.work += units - prev
	}
	r.last[worker] = units
	if !r.seen.IsZero() {
		r.maxGap = max(r.maxGap, now.Sub(r.seen))
	}
	r.seen = now
}

// take closes the open window: its work and longest gap, both reset.
func (r *probeReceiver) take() (work uint64, maxGap time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	work, maxGap = r.work, r.maxGap
	r.work, r.maxGap = 0, 0
	return work, maxGap
}

// takeGap closes the open window's peer gap at now: the longest gap between reports that ended in it,
// or the gap still open at now where longer (a peer that has not reported since). Both are 0 before
// the first report. The window's work is left alone: the in-guest probe counts its own.
func (r *probeReceiver) takeGap(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	gap := r.maxGap
	if !r.seen.IsZero() {
		gap = max(gap, now.Sub(r.seen))
	}
	r.work, r.maxGap = 0, 0
	return gap
}

// reported says whether any report arrived; false for a nil receiver.
func (r *probeReceiver) reported() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.seen.IsZero()
}

// receiverWindows closes a window of rec every ProbeWindow on clock until duration passed, as
// tickWindows does for the in-guest probe.
func receiverWindows(ctx context.Context, clock probeClock, duration time.Duration, rec *probeReceiver) []probeWindow {
	origin := clock.Now()
	rec.take()
	cur := probeWindow{start: origin}
	windows := make([]probeWindow, 0, int(duration/ProbeWindow)+1)
	for ctx.Err() == nil {
		clock.Sleep(ctx, ProbeTick)
		now := clock.Now()
		if now.Sub(cur.start) < ProbeWindow && now.Sub(origin) < duration {
			continue
		}
		cur.duration = now.Sub(cur.start)
		cur.work, cur.maxGap = rec.take()
		windows = append(windows, cur)
		if now.Sub(origin) >= duration {
			break
		}
		cur = probeWindow{start: now}
	}
	return windows
}

// serveProbe reads the reports of every worker that connects to l into rec, stamped with clock,
// until l is closed, and acknowledges each with a newline, by which the worker tells a live
// connection from one that leads nowhere (the VM arm: the VM moved to a new pod and address). A
// connection silent for probeIdle is closed: after a migration, the guest's end of the old one
// never hears from its peer again.
func serveProbe(l net.Listener, clock probeClock, rec *probeReceiver) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { _ = conn.Close() }()
			_ = conn.SetReadDeadline(time.Now().Add(probeIdle))
			lines := bufio.NewScanner(conn)
			for lines.Scan() {
				worker, count, ok := strings.Cut(lines.Text(), " ")
				units, err := strconv.ParseUint(count, 10, 64)
				if !ok || err != nil || worker == "" {
					return
				}
				rec.report(worker, units, clock.Now())
				_ = conn.SetDeadline(time.Now().Add(probeIdle))
				if _, err := conn.Write(probeAck); err != nil {
					return
				}
			}
		}()
	}
}

// probeAck is the master's acknowledgement of a report; probeIdle how long it keeps a connection
// that sends none.
var probeAck = []byte{'\n'}

const probeIdle = 5 * time.Second

// ReceiveProbe is the master's side of the container arm: it listens on addr, calls started once it
// does (the probe-started message, which makes the manager create the worker), and returns the
// probe's CSV (results.ParseProbe reads it) after duration.
func ReceiveProbe(ctx context.Context, addr string, duration time.Duration, started func() error) ([]byte, error) {
	if duration <= 0 || duration > MaxProbeDuration {
		return nil, fmt.Errorf("probe: duration %s is not between 0 and %s", duration, MaxProbeDuration)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("probe: listening for the probe worker on %s: %w", addr, err)
	}
	defer func() { _ = l.Close() }()
	rec := newProbeReceiver()
	go serveProbe(l, systemProbeClock{}, rec)
	if err := started(); err != nil {
		return nil, err
	}
	windows := receiverWindows(ctx, systemProbeClock{}, duration, rec)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("probe: stopped after %d windows: %w", len(windows), err)
	}
	var total uint64
	for _, w := range windows {
		total += w.work
	}
	if total == 0 {
		return nil, fmt.Errorf("probe: no probe worker reported to %s in %s: see the run's probe worker pods (kubectl get pods -l vmbench.io/role=probe)",
			addr, duration)
	}
	return probeTable(windows).CSV(), nil
}

// RunProbeWorker is the worker's side: the probe's CPU loop, its count sent to master every
// ProbeReport as worker, reconnecting while it cannot reach it, for duration.
func RunProbeWorker(ctx context.Context, master, worker string, duration time.Duration) error {
	return runProbeWorker(ctx, master, worker, duration, true)
}

// RunProbePeer is RunProbeWorker without the CPU loop (its count stays 0): the in-guest probe's peer
// of a VM run, which only tells by its reports' gaps how long it lost the VM, and should not load
// the node it shares with VMs.
func RunProbePeer(ctx context.Context, master, worker string, duration time.Duration) error {
	return runProbeWorker(ctx, master, worker, duration, false)
}

func runProbeWorker(ctx context.Context, master, worker string, duration time.Duration, load bool) error {
	if duration <= 0 || duration > MaxProbeDuration+time.Minute {
		return fmt.Errorf("probe worker: duration %s is not between 0 and %s", duration, MaxProbeDuration+time.Minute)
	}
	ctx, cancel := context.WithTimeout(ctx, duration)
	defer cancel()
	var units atomic.Uint64
	stop := make(chan struct{})
	defer close(stop)
	if load {
		go cpuLoop(stop, &units)
	}
	var conn *ackedConn
	defer func() {
		if conn != nil {
			conn.close()
		}
	}()
	tick := time.NewTicker(ProbeReport)
	defer tick.Stop()
	var lastErr error
	sent := false
	for {
		select {
		case <-ctx.Done():
			if !sent && lastErr != nil {
				return fmt.Errorf("probe worker: never reached the master %s: %w", master, lastErr)
			}
			return nil
		case <-tick.C:
		}
		if conn != nil && conn.stalled(time.Now()) {
			lastErr = fmt.Errorf("no acknowledgement from %s in %s", master, probeStall)
			conn.close()
			conn = nil
		}
		if conn == nil {
			d := net.Dialer{Timeout: probeDial}
			c, err := d.DialContext(ctx, "tcp", master)
			if err != nil {
				lastErr = err
				continue
			}
			conn = newAckedConn(c)
		}
		_ = conn.c.SetWriteDeadline(time.Now().Add(probeDial))
		if _, err := io.WriteString(conn.c, worker+" "+strconv.FormatUint(units.Load(), 10)+"\n"); err != nil {
			lastErr = err
			conn.close()
			conn = nil
			continue
		}
		sent = true
	}
}

// ackedConn is a worker's connection to its master and when the master last acknowledged a report
// on it (or the connection was made).
type ackedConn struct {
	c     net.Conn
	acked atomic.Int64 // Unix ns
}

func newAckedConn(c net.Conn) *ackedConn {
	a := &ackedConn{c: c}
	a.acked.Store(time.Now().UnixNano())
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				a.acked.Store(time.Now().UnixNano())
			}
			if err != nil {
				return
			}
		}
	}()
	return a
}

// stalled says the master has not acknowledged for probeStall at now.
func (a *ackedConn) stalled(now time.Time) bool {
	return now.Sub(time.Unix(0, a.acked.Load())) > probeStall
}

func (a *ackedConn) close() { _ = a.c.Close() }

// errNoWorkerName is returned when the worker has no name to report under.
var errNoWorkerName = errors.New("probe worker: no name (the pod's hostname) to report under")
