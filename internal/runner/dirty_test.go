package runner

import (
	"context"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// writerClock is a fake clock for the memory writer: sleeps pass exactly, and each page touched
// costs perPage of time (the guest's speed at writing).
type writerClock struct {
	now     time.Time
	perPage time.Duration
	windows []int // pages touched per call of touch
}

func (c *writerClock) Now() time.Time { return c.now }

func (c *writerClock) Sleep(_ context.Context, d time.Duration) { c.now = c.now.Add(d) }

func (c *writerClock) touch(pages int) {
	c.windows = append(c.windows, pages)
	c.now = c.now.Add(time.Duration(pages) * c.perPage)
}

// TestWriteDirtyHoldsTheRatePerWindow protects the writer's rate control: at 64Mi a second
// (1,638.4 pages of 4 KiB per 100 ms window) it touches 1,638 or 1,639 pages a window, carrying the
// fraction, 16,384 pages (64 MiB) in the 10 windows of 1 s; and it reports the bytes and the rate.
func TestWriteDirtyHoldsTheRatePerWindow(t *testing.T) {
	c := &writerClock{now: time.Unix(1.8e9, 0)}
	var counters dirtyCounters
	schedule := []vmbenchv1.DirtyRateStep{{From: 0, Bytes: 64 << 20}}
	writeDirty(context.Background(), c, time.Second, schedule, c.touch, &counters)
	if len(c.windows) != 10 {
		t.Fatalf("%d windows written, want 10 in 1 s", len(c.windows))
	}
	total := 0
	for i, p := range c.windows {
		if p != 1638 && p != 1639 {
			t.Errorf("window %d: %d pages, want 1638 or 1639 (64Mi/s × 100 ms / 4 KiB = 1638.4)", i, p)
		}
		total += p
	}
	if total != 16384 {
		t.Errorf("%d pages in 1 s, want 16384 (64 MiB)", total)
	}
	if got := counters.dirtied.Load(); got != 64<<20 {
		t.Errorf("dirtied %d bytes, want %d", got, 64<<20)
	}
	if got := counters.set.Load(); got != 64<<20 {
		t.Errorf("set rate %d, want %d", got, 64<<20)
	}
}

// TestWriteDirtyFallsShortWithoutDebt protects the achieved rate's meaning: a guest that takes
// 200 ms to touch one window's 1,638 pages (about 122 µs a page) gets 5 windows of pages into 1 s,
// not 10, and never more than one window's pages at a time (no catching up that would hide it).
func TestWriteDirtyFallsShortWithoutDebt(t *testing.T) {
	c := &writerClock{now: time.Unix(1.8e9, 0), perPage: 200 * time.Millisecond / 1638}
	var counters dirtyCounters
	writeDirty(context.Background(), c, time.Second, []vmbenchv1.DirtyRateStep{{Bytes: 64 << 20}}, c.touch, &counters)
	if len(c.windows) != 5 {
		t.Errorf("%d windows written in 1 s at 200 ms each, want 5", len(c.windows))
	}
	for i, p := range c.windows {
		if p > 1639 {
			t.Errorf("window %d: %d pages, more than one window's 1639: the writer made up for lost time", i, p)
		}
	}
	if got, want := counters.dirtied.Load(), uint64(64<<20)/2; got > want+2*DirtyPage || got < want-2*DirtyPage*5 {
		t.Errorf("dirtied %d bytes in 1 s, want about half the set rate's %d", got, uint64(64<<20))
	}
}

// TestWriteDirtyFollowsTheSchedule protects the sweep: the rate changes at the schedule's steps,
// 0 for the first 300 ms (no page touched), then 4 MiB a second (102.4 pages a window).
func TestWriteDirtyFollowsTheSchedule(t *testing.T) {
	c := &writerClock{now: time.Unix(1.8e9, 0)}
	var counters dirtyCounters
	schedule := []vmbenchv1.DirtyRateStep{{From: 0, Bytes: 0}, {From: 300 * time.Millisecond, Bytes: 4 << 20}}
	writeDirty(context.Background(), c, time.Second, schedule, c.touch, &counters)
	if len(c.windows) != 7 {
		t.Fatalf("touch called in %d windows, want 7 (none in the 3 windows at rate 0)", len(c.windows))
	}
	// 7 windows × 102.4 pages = 716.8: 716 pages touched, the 0.8 carried.
	if got := counters.dirtied.Load(); got != 716*DirtyPage {
		t.Errorf("dirtied %d bytes, want %d (716 pages)", got, 716*DirtyPage)
	}
}

// TestProbeTableCarriesTheWriter protects the writer's report: with a writer the probe's table has
// the dirtied bytes and the set rate per window, and results.ProbeSeries reads it; without one it
// is the probe's table of before.
func TestProbeTableCarriesTheWriter(t *testing.T) {
	c := &fakeProbeClock{now: time.Unix(1.8e9, 0)}
	var counters dirtyCounters
	counters.set.Store(64 << 20)
	windows := tickDirtyWindows(context.Background(), c, time.Second, func() uint64 {
		counters.dirtied.Add(DirtyPage) // a page each time the ticker reads the work: once a window
		return c.work
	}, &counters)
	tab := probeDirtyTable(windows, true)
	series, err := results.ProbeSeries(tab.CSV())
	if err != nil {
		t.Fatalf("the writer's table does not parse: %v", err)
	}
	if len(series.Columns) != len(results.ProbeDirtyColumns) {
		t.Fatalf("columns %v, want %v", series.Columns, results.ProbeDirtyColumns)
	}
	for i, r := range series.Rows[1:] {
		if r[results.ProbeDirtied] != DirtyPage || r[results.ProbeDirtySet] != 64<<20 {
			t.Errorf("window %d: dirtied %v, set %v; want %d and %d", i+1, r[results.ProbeDirtied], r[results.ProbeDirtySet], DirtyPage, 64<<20)
		}
	}
	if plain := probeTable(windows); len(plain.Columns) != len(results.ProbeColumns) {
		t.Errorf("without a writer the table has columns %v, want %v", plain.Columns, results.ProbeColumns)
	}
}

// TestPageToucherDirtiesEveryPageInTurn protects the writer's pages: one byte per 4 KiB page,
// going round the buffer.
func TestPageToucherDirtiesEveryPageInTurn(t *testing.T) {
	p := newPageToucher(4 * DirtyPage)
	p.touch(6)
	for i, want := range []byte{2, 2, 1, 1} {
		if got := p.buf[i*DirtyPage]; got != want {
			t.Errorf("page %d written %d times, want %d", i, got, want)
		}
		if p.buf[i*DirtyPage+1] != 0 {
			t.Errorf("page %d: a byte other than the first was written", i)
		}
	}
}
