package detect

import "math"

// energy holds the pairwise distances |y_i - y_j| of the run means as a two-dimensional prefix sum,
// so that the sum over any block of pairs costs four look-ups.
type energy struct {
	n   int
	cum []float64 // (n+1)², cum[a*(n+1)+b] = sum over i < a, j < b of |y_i - y_j|
}

func newEnergy(y []float64) energy {
	n := len(y)
	e := energy{n: n, cum: make([]float64, (n+1)*(n+1))}
	for i := range n {
		for j := range n {
			e.cum[(i+1)*(n+1)+j+1] = math.Abs(y[i]-y[j]) + e.cum[i*(n+1)+j+1] + e.cum[(i+1)*(n+1)+j] - e.cum[i*(n+1)+j]
		}
	}
	return e
}

// block is the sum of |y_i - y_j| over i in [a0, a1) and j in [b0, b1).
func (e energy) block(a0, a1, b0, b1 int) float64 {
	w := e.n + 1
	return e.cum[a1*w+b1] - e.cum[a0*w+b1] - e.cum[a1*w+b0] + e.cum[a0*w+b0]
}

// meanWithin is the mean distance over the pairs of [a, b); 0 for fewer than two runs.
func (e energy) meanWithin(a, b int) float64 {
	m := b - a
	if m < 2 {
		return 0
	}
	return e.block(a, b, a, b) / float64(m*(m-1))
}

// divergence is Matteson and James's statistic for X = [s, tau) against Y = [tau, kappa), with
// exponent 1 on the distances:
//
//	Q = (a·b/(a+b)) · (2·mean|X-Y| - mean|X-X'| - mean|Y-Y'|),   a = tau - s,  b = kappa - tau.
func (e energy) divergence(s, tau, kappa int) float64 {
	a, b := float64(tau-s), float64(kappa-tau)
	between := e.block(s, tau, tau, kappa) / (a * b)
	return a * b / (a + b) * (2*between - e.meanWithin(s, tau) - e.meanWithin(tau, kappa))
}

// candidate is the split of [s, end) that maximizes the divergence of its two sides, over splits
// that leave at least minSide runs on each side. ok is false when the segment is too short.
func (e energy) candidate(s, end, minSide int) (tau int, ok bool) {
	best := math.Inf(-1)
	for t := s + minSide; t <= end-minSide; t++ {
		if q := e.divergence(s, t, end); q > best {
			best, tau, ok = q, t, true
		}
	}
	return tau, ok
}

// candidatePair is the split tau and the end kappa <= end of the second side that maximize the
// divergence of [s, tau) against [tau, kappa), each side at least minSide runs: the search of
// E-Divisive over both, which finds a step that a later step back (a bump) hides from a split of
// the whole segment.
func (e energy) candidatePair(s, end, minSide int) (tau, kappa int, ok bool) {
	best := math.Inf(-1)
	for t := s + minSide; t <= end-minSide; t++ {
		for k := t + minSide; k <= end; k++ {
			if q := e.divergence(s, t, k); q > best {
				best, tau, kappa, ok = q, t, k, true
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
