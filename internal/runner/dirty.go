package runner

import (
	"context"
	"sync/atomic"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The memory writer of the migration benchmark's dirty-rate sweep (migration.dirtyRates): beside
// the probe's CPU loop and ticker, a goroutine dirties a fixed buffer (vmbenchv1.DirtyWorkingSet)
// at a set rate, so that a live migration has pages to send again while it runs. Touching one byte
// of a 4 KiB page dirties the whole page for the hypervisor's dirty log, so the writer writes one
// byte a page: a rate of 64Mi a second is 16,384 pages a second, which even a guest under QEMU's
// emulation reaches. The rate is held per ProbeWindow: at the start of each window the writer
// touches the pages due in it (with the fraction carried to the next), then sleeps until the
// window's end; a window whose pages took longer than the window is not made up for later, so the
// bytes dirtied per window (the probe's dirtied_bytes column) show the rate the guest achieved.

// DirtyPage is the size of the page the writer dirties with each byte it writes.
const DirtyPage = 4096

// dirtyCounters are what the writer reports to the probe's ticker: the bytes dirtied so far and
// the rate it is set to now.
type dirtyCounters struct {
	dirtied atomic.Uint64
	set     atomic.Int64
}

// rateAt is the schedule's rate at the probe's time elapsed: its last step that has begun.
func rateAt(schedule []vmbenchv1.DirtyRateStep, elapsed time.Duration) int64 {
	var rate int64
	for _, s := range schedule {
		if elapsed >= s.From {
			rate = s.Bytes
		}
	}
	return rate
}

// writeDirty runs the writer until duration has passed on clock or ctx ends: each ProbeWindow it
// calls touch with the pages due at the schedule's rate then, counts them in c, and sleeps out the
// rest of the window. touch dirties that many pages of the working set, the next ones round it.
func writeDirty(ctx context.Context, clock probeClock, duration time.Duration, schedule []vmbenchv1.DirtyRateStep, touch func(pages int), c *dirtyCounters) {
	origin := clock.Now()
	start := origin
	var carry float64
	for ctx.Err() == nil {
		elapsed := start.Sub(origin)
		if elapsed >= duration {
			return
		}
		rate := rateAt(schedule, elapsed)
		c.set.Store(rate)
		due := float64(rate)*ProbeWindow.Seconds()/DirtyPage + carry
		pages := int(due)
		carry = due - float64(pages)
		if pages > 0 {
			touch(pages)
			c.dirtied.Add(uint64(pages) * DirtyPage)
		}
		end := start.Add(ProbeWindow)
		now := clock.Now()
		if now.Before(end) {
			clock.Sleep(ctx, end.Sub(now))
			start = end
			continue
		}
		// The pages took the whole window or longer: the guest cannot keep the rate; the next
		// window starts now, with no debt, so the bytes per window say what it managed.
		start = now
	}
}

// pageToucher dirties a buffer of size bytes one byte a DirtyPage, going round it.
type pageToucher struct {
	buf  []byte
	next int
}

func newPageToucher(size int) *pageToucher { return &pageToucher{buf: make([]byte, size)} }

func (p *pageToucher) touch(pages int) {
	n := len(p.buf) / DirtyPage
	for range pages {
		p.buf[p.next*DirtyPage]++
		p.next++
		if p.next == n {
			p.next = 0
		}
	}
}
