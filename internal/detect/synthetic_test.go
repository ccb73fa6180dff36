package detect

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// noise is how a synthetic run is drawn: each repetition's log value is the run's level plus a
// normal error of sd Within; each run's level is the series' level plus a normal error of sd
// Between (the noise between runs on the same software that a run's own variance cannot see).
// N is the repetitions per run; when MaxN > N, each run draws its own count in [N, MaxN]. Phi is
// the lag-1 autocorrelation of the between-run errors, an AR(1) process of marginal sd Between:
// a machine whose state drifts from run to run and back (clusters that differ day to day).
type noise struct {
	Within, Between float64
	N, MaxN         int
	Phi             float64
}

// series draws one run per entry of levels (log scale) with a generator of the given seed.
func series(seed uint64, levels []float64, nz noise) []Run {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	runs := make([]Run, len(levels))
	var u float64
	for i, level := range levels {
		n := nz.N
		if nz.MaxN > nz.N {
			n += rng.IntN(nz.MaxN - nz.N + 1)
		}
		if i == 0 || nz.Phi == 0 {
			u = nz.Between * rng.NormFloat64()
		} else {
			u = nz.Phi*u + math.Sqrt(1-nz.Phi*nz.Phi)*nz.Between*rng.NormFloat64()
		}
		mu := level + u
		var sum, sum2 float64
		for range n {
			v := mu + nz.Within*rng.NormFloat64()
			sum += v
			sum2 += v * v
		}
		mean := sum / float64(n)
		variance := 0.0
		if n > 1 {
			variance = math.Max(0, (sum2-float64(n)*mean*mean)/float64(n-1))
		}
		runs[i] = Run{ID: fmt.Sprintf("run-%02d", i), N: n, Mean: mean, Variance: variance}
	}
	return runs
}

// stepLevels is k runs at level 0 then m runs at log(1 + change).
func stepLevels(k, m int, change float64) []float64 {
	levels := make([]float64, k+m)
	for i := k; i < k+m; i++ {
		levels[i] = math.Log1p(change)
	}
	return levels
}

// driftLevels is k runs whose level falls by perRun (a fraction) at every run.
func driftLevels(k int, perRun float64) []float64 {
	levels := make([]float64, k)
	for i := range levels {
		levels[i] = float64(i) * math.Log1p(-perRun)
	}
	return levels
}
