package runner

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// The steady probe of the migration benchmark runs inside the runner, in the guest, with no tool of
// its own: a CPU loop counts units of work, and a ticker wakes every ProbeTick and notes how long
// it actually slept. Every ProbeWindow the probe closes a window with the work done in it, the
// longest ticker gap in it and its start on the monotonic and on the wall clock. A live migration's
// switch-over pauses the guest: the ticker's gap across it is the pause the guest saw, and the work
// of the windows around it is the dip.

// Probe timing: a 10 ms ticker resolves a pause to 10 ms; windows of 100 ms give the work rate ten
// times a second.
const (
	ProbeTick   = 10 * time.Millisecond
	ProbeWindow = 100 * time.Millisecond
	// MaxProbeDuration bounds one probe to 6,000 windows, about 300 KB of CSV in one frame (400 KiB
	// at the widest with the memory writer's two columns, within a tables ConfigMap's 512 KiB).
	MaxProbeDuration = 10 * time.Minute
)

// probeClock is what the probe reads time from and sleeps with; tests replace it.
type probeClock interface {
	// Now is the current time, with Go's monotonic reading (time.Now).
	Now() time.Time
	// Sleep sleeps about d, or returns early when ctx ends.
	Sleep(ctx context.Context, d time.Duration)
}

type systemProbeClock struct{}

func (systemProbeClock) Now() time.Time { return time.Now() }

func (systemProbeClock) Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// probeWindow is one closed window of the probe.
type probeWindow struct {
	start    time.Time // with its monotonic reading
	work     uint64
	maxGap   time.Duration
	duration time.Duration
	// dirtied is the bytes the memory writer dirtied in the window and dirtySet the rate it was
	// set to at the window's end (bytes a second); both 0 without a writer.
	dirtied  uint64
	dirtySet int64
	// peerGap is the longest gap between a peer's reports that ended in the window or was still open
	// at its close (the VM arm's probe worker: peerWindows); 0 without a peer.
	peerGap time.Duration
}

// tickWindows runs the ticker until duration has passed on clock's monotonic reading and returns
// the windows; work reports the units of work done so far. It is the probe without its CPU loop,
// so that a test can drive it with a fake clock and a fake counter.
func tickWindows(ctx context.Context, clock probeClock, duration time.Duration, work func() uint64) []probeWindow {
	return tickDirtyWindows(ctx, clock, duration, work, nil)
}

// tickDirtyWindows is tickWindows that also reads the memory writer's counters (dirty; nil
// without a writer) at each window's close.
func tickDirtyWindows(ctx context.Context, clock probeClock, duration time.Duration, work func() uint64, dirty *dirtyCounters) []probeWindow {
	return tickPeerWindows(ctx, clock, duration, work, dirty, nil)
}

// tickPeerWindows is tickDirtyWindows that also closes, with each window, the peer gap of peer's
// reports (nil without a peer).
func tickPeerWindows(ctx context.Context, clock probeClock, duration time.Duration, work func() uint64, dirty *dirtyCounters, peer *probeReceiver) []probeWindow {
	dirtied := func() uint64 {
		if dirty == nil {
			return 0
		}
		return dirty.dirtied.Load()
	}
	origin := clock.Now()
	last := origin
	cur := probeWindow{start: origin, work: work(), dirtied: dirtied()}
	windows := make([]probeWindow, 0, int(duration/ProbeWindow)+1)
	for ctx.Err() == nil {
		clock.Sleep(ctx, ProbeTick)
		now := clock.Now()
		gap := now.Sub(last)
		last = now
		if gap > cur.maxGap {
			cur.maxGap = gap
		}
		if now.Sub(cur.start) < ProbeWindow && now.Sub(origin) < duration {
			continue
		}
		done, written := work(), dirtied()
		cur.duration, cur.work, cur.dirtied = now.Sub(cur.start), done-cur.work, written-cur.dirtied
		if dirty != nil {
			cur.dirtySet = dirty.set.Load()
		}
		if peer != nil {
			cur.peerGap = peer.takeGap(now)
		}
		windows = append(windows, cur)
		if now.Sub(origin) >= duration {
			break
		}
		cur = probeWindow{start: now, work: done, dirtied: written}
	}
	return windows
}

// probeTable is the windows as the table the runner sends: per window its start on the monotonic
// clock (ms since the probe began) and on the wall clock (Unix ms), its length, the work done and
// the longest ticker gap (ms).
func probeTable(windows []probeWindow) results.Table {
	return probeDirtyTable(windows, false)
}

// probeDirtyTable is probeTable, with the memory writer's columns (results.ProbeDirtyColumns)
// where writer says it ran.
func probeDirtyTable(windows []probeWindow, writer bool) results.Table {
	return probePeerTable(windows, writer, false)
}

// probePeerTable is probeDirtyTable, with the peer column (results.ProbePeerColumn) last where peer
// says a peer reported.
func probePeerTable(windows []probeWindow, writer, peer bool) results.Table {
	t := results.Table{Columns: results.ProbeColumns}
	if writer {
		t.Columns = results.ProbeDirtyColumns
	}
	if peer {
		t.Columns = append(append([]string{}, t.Columns...), results.ProbePeerColumn)
	}
	if len(windows) == 0 {
		return t
	}
	origin := windows[0].start
	for _, w := range windows {
		row := []float64{
			float64(w.start.Sub(origin).Microseconds()) / 1000,
			float64(w.start.UnixMicro()) / 1000,
			float64(w.duration.Microseconds()) / 1000,
			float64(w.work),
			float64(w.maxGap.Microseconds()) / 1000,
		}
		if writer {
			row = append(row, float64(w.dirtied), float64(w.dirtySet))
		}
		if peer {
			row = append(row, float64(w.peerGap.Microseconds())/1000)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// RunProbe runs the steady probe for duration: a CPU loop on one goroutine (one vCPU busy) and the
// ticker on another, and, with a dirty-rate schedule, the memory writer on a third; and returns the
// probe's CSV output, which results.ParseProbe reads.
func RunProbe(ctx context.Context, duration time.Duration, schedule []vmbenchv1.DirtyRateStep) ([]byte, error) {
	return RunProbeWithPeer(ctx, duration, schedule, "")
}

// RunProbeWithPeer is RunProbe that also listens on peerAddr (empty: not at all) for the reports of
// a peer outside the guest (the VM arm's probe worker, RunProbeWorker) and adds the peer column to
// the table. The peer is extra evidence: where the port cannot be listened on or no peer reports,
// the table simply has no peer column.
func RunProbeWithPeer(ctx context.Context, duration time.Duration, schedule []vmbenchv1.DirtyRateStep, peerAddr string) ([]byte, error) {
	if duration <= 0 || duration > MaxProbeDuration {
		return nil, fmt.Errorf("probe: duration %s is not between 0 and %s", duration, MaxProbeDuration)
	}
	var units atomic.Uint64
	stop := make(chan struct{})
	go cpuLoop(stop, &units)
	var dirty *dirtyCounters
	writerDone := make(chan struct{})
	if len(schedule) > 0 {
		dirty = &dirtyCounters{}
		pages := newPageToucher(vmbenchv1.DirtyWorkingSet)
		writerCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			defer close(writerDone)
			writeDirty(writerCtx, systemProbeClock{}, duration, schedule, pages.touch, dirty)
		}()
		defer func() { cancel(); <-writerDone }()
	}
	var peer *probeReceiver
	if peerAddr != "" {
		if l, err := net.Listen("tcp", peerAddr); err == nil {
			peer = newProbeReceiver()
			go serveProbe(l, systemProbeClock{}, peer)
			defer func() { _ = l.Close() }()
		}
	}
	windows := tickPeerWindows(ctx, systemProbeClock{}, duration, units.Load, dirty, peer)
	close(stop)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("probe: stopped after %d windows: %w", len(windows), err)
	}
	return probePeerTable(windows, dirty != nil, peer.reported()).CSV(), nil
}

// cpuLoop is the probe's load: it counts units of work into units until stop is closed.
func cpuLoop(stop <-chan struct{}, units *atomic.Uint64) {
	x := uint64(88172645463325252)
	for {
		select {
		case <-stop:
			return
		default:
		}
		// One unit is a fixed amount of arithmetic, small enough that the count moves many
		// times a window.
		for range 4096 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
		if x == 0 {
			runtime.Gosched()
		}
		units.Add(1)
	}
}

// probe is the migration benchmark's one execution: the probe on the master, in the runner's own
// process, announced first (KindProbeStarted) so that the controller can start migrating; on a
// Container platform the receiver of the probe worker's reports instead (ReceiveProbe).
func (r *Runner) probe(plan runplan.Plan, b vmbenchv1.Benchmark) execution {
	d := b.Migration.ProbeDuration()
	master := plan.Nodes[0].Name
	return execution{label: master, tool: results.Probe, parse: parseProbe,
		run: func(ctx context.Context) ([]byte, []byte, error) {
			started := func() error {
				return r.emit(plan.Run, runplan.Message{Kind: runplan.KindProbeStarted, Benchmark: b.Name, Node: master, Seconds: d.Seconds()})
			}
			if plan.PlatformType == vmbenchv1.PlatformContainer {
				// The container arm: the load runs in the worker pod the manager evicts, and
				// reports here (probe_remote.go).
				receive := r.ReceiveProbe
				if receive == nil {
					receive = ReceiveProbe
				}
				out, err := receive(ctx, fmt.Sprintf(":%d", runplan.ProbeReportPort), d, started)
				return out, out, err
			}
			if err := started(); err != nil {
				return nil, nil, err
			}
			run := r.Probe
			if run == nil {
				run = RunProbe
				if plan.PlatformType == vmbenchv1.PlatformVM {
					// The VM arm's peer: the manager's probe worker pod reports here from outside
					// the VM, by the master's Service name, which follows the VM to its new pod.
					run = func(ctx context.Context, d time.Duration, s []vmbenchv1.DirtyRateStep) ([]byte, error) {
						return RunProbeWithPeer(ctx, d, s, fmt.Sprintf(":%d", runplan.ProbeReportPort))
					}
				}
			}
			out, err := run(ctx, d, b.Migration.DirtyRateSchedule())
			return out, out, err
		}}
}

// parseProbe keeps the probe's whole series beside its whole-run figures: the controller reads
// each migration's effect from the series.
func parseProbe(out []byte) (parsed, error) {
	ms, err := results.ParseProbe(out)
	if err != nil {
		return parsed{}, err
	}
	series, err := results.ProbeSeries(out)
	if err != nil {
		return parsed{metrics: ms, tableErr: err}, nil
	}
	return parsed{metrics: ms, table: &series}, nil
}
