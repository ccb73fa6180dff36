package detect

import (
	"math"
	"slices"
)

// energy finds E-Divisive's candidates over the run means y. It needs sums of the distances
// |y_i - y_j| over the pairs of a range of runs. It keeps no table of them (a table of n² costs
// 8 MB and most of the time of an analysis at 1,000 runs) but builds what one search needs in that
// search: the sums over the ranges that start or end at the segment's ends in O(L log L), with a
// Fenwick tree over the ranks of the values, and for the pairs of a split and an end the sums over
// every range inside the segment in O(L²) time and O(L) memory.
type energy struct {
	y []float64
	// order is the runs by value; rank is scratch space, as are the slices below it, reused by
	// every search of the series.
	order, rank []int
	cnt         []int
	sum         []float64
	front, back []float64
	row         []float64
	// inv[m] is 1/m.
	inv []float64
	// The segment that front and back are of: a pair search follows the split search of the same
	// segment.
	lastS, lastEnd int
}

func newEnergy(y []float64) *energy {
	n := len(y)
	e := &energy{y: y, order: make([]int, n), rank: make([]int, n), cnt: make([]int, n+1), sum: make([]float64, n+1),
		front: make([]float64, n+1), back: make([]float64, n+1), row: make([]float64, n), inv: make([]float64, n+1), lastEnd: -1}
	for m := 1; m <= n; m++ {
		e.inv[m] = 1 / float64(m)
	}
	for i := range e.order {
		e.order[i] = i
	}
	slices.SortFunc(e.order, func(a, b int) int {
		switch {
		case y[a] < y[b]:
			return -1
		case y[a] > y[b]:
			return 1
		}
		return a - b
	})
	return e
}

// ends fills front[j] with the sum of |y_i - y_l| over the pairs i < l of [s, s+j) and back[j]
// with that of [end-j, end), for j in [0, end-s].
func (e *energy) ends(s, end int) {
	if s == e.lastS && end == e.lastEnd {
		return
	}
	e.lastS, e.lastEnd = s, end
	L := end - s
	r := 0
	for _, i := range e.order {
		if i >= s && i < end {
			r++
			e.rank[i-s] = r
		}
	}
	e.accumulate(e.front, s, 1, s, L)
	e.accumulate(e.back, end-1, -1, s, L)
}

// accumulate inserts the L runs from, from+step, ... in turn and writes to out[j+1] the sum of the
// distances over the pairs of the first j+1 of them: each run adds its distances to the runs
// inserted before it, which the Fenwick tree gives from the count and sum of those below its rank.
func (e *energy) accumulate(out []float64, from, step, s, L int) {
	clear(e.cnt[:L+1])
	clear(e.sum[:L+1])
	var total, acc float64
	out[0] = 0
	for j := range L {
		i := from + j*step
		v, r := e.y[i], e.rank[i-s]
		below, sumBelow := 0, 0.0
		for p := r; p > 0; p -= p & -p {
			below += e.cnt[p]
			sumBelow += e.sum[p]
		}
		acc += v*float64(below) - sumBelow + (total - sumBelow) - v*float64(j-below)
		out[j+1] = acc
		total += v
		for p := r; p <= L; p += p & -p {
			e.cnt[p]++
			e.sum[p] += v
		}
	}
}

// divergence is Matteson and James's statistic for X = [s, tau) against Y = [tau, kappa), with
// exponent 1 on the distances,
//
//	Q = (a·b/(a+b)) · (2·mean|X-Y| - mean|X-X'| - mean|Y-Y'|),   a = tau - s,  b = kappa - tau,
//
// from the sums of the distances over the pairs of X (wx), of Y (wy) and of X and Y together (wxy).
// Both sides have at least two runs.
func divergence(a, b int, wx, wy, wxy float64) float64 {
	fa, fb := float64(a), float64(b)
	between := wxy - wx - wy
	return (2*between - fb/(fa-1)*2*wx - fa/(fb-1)*2*wy) / (fa + fb)
}

// candidate is the split of [s, end) that maximizes the divergence of its two sides, over splits
// that leave at least minSide runs on each side. ok is false when the segment is too short.
func (e *energy) candidate(s, end, minSide int) (tau int, ok bool) {
	if end-s < 2*minSide {
		return 0, false
	}
	e.ends(s, end)
	L := end - s
	best := math.Inf(-1)
	for t := s + minSide; t <= end-minSide; t++ {
		a, b := t-s, end-t
		if q := divergence(a, b, e.front[a], e.back[b], e.front[L]); q > best {
			best, tau, ok = q, t, true
		}
	}
	return tau, ok
}

// candidatePair is the split tau and the end kappa <= end of the second side that maximize the
// divergence of [s, tau) against [tau, kappa), each side at least minSide runs: the search of
// E-Divisive over both, which finds a step that a later step back (a bump) hides from a split of
// the whole segment. The splits are visited from the last to the first; row[k] holds the distances
// of run k to the runs from the split to it, so that the sums over [tau, kappa) for every kappa
// follow by one pass.
func (e *energy) candidatePair(s, end, minSide int) (tau, kappa int, ok bool) {
	if end-s < 2*minSide {
		return 0, 0, false
	}
	e.ends(s, end)
	row := e.row[s:end]
	clear(row)
	best := math.Inf(-1)
	for t := end - 1; t >= s+minSide; t-- {
		yt := e.y[t]
		a := t - s
		wx := e.front[a]
		// The divergence of divergence(), with the divisions looked up.
		fa, wx2 := float64(a), 2*wx*e.inv[a-1]
		var wy float64
		k := t + 1
		if t > end-minSide {
			k = end
		}
		for ; k < t+minSide-1 && k < end; k++ {
			row[k-s] += math.Abs(e.y[k] - yt)
			wy += row[k-s]
		}
		for ; k < end; k++ {
			row[k-s] += math.Abs(e.y[k] - yt)
			wy += row[k-s]
			b := k + 1 - t
			fb := float64(b)
			q := (2*(e.front[k+1-s]-wx-wy) - fb*wx2 - fa*2*wy*e.inv[b-1]) * e.inv[a+b]
			if q > best || (q == best && t < tau) {
				best, tau, kappa, ok = q, t, k+1, true
			}
		}
		if t > end-minSide {
			// Only the distances to run t are needed from a split too late for a second side.
			for k := t + 1; k < end; k++ {
				row[k-s] += math.Abs(e.y[k] - yt)
			}
		}
	}
	return tau, kappa, ok
}

// splitCounts are the number of splits candidate chooses from and of pairs candidatePair chooses
// from in a segment of length runs: the factors of the Bonferroni correction.
func splitCounts(length, minSide int) (splits, pairs int) {
	splits = length - 2*minSide + 1
	if splits < 1 {
		return 0, 0
	}
	return splits, splits * (splits + 1) / 2
}
