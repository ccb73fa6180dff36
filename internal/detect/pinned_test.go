package detect

import (
	"math"
	"testing"
)

// The minimum detectable change of the two documented designs, pinned to figures computed apart
// from the package with the closed form expm1((t⁻¹(1−α/(4·splits), k−2) + t⁻¹(power, k−2))·sd·
// √(1/a+1/b)): 2.970% for the noisy machine (sd √(0.01²+0.02²/5), 15+15 runs, 25 splits) and
// 1.916% for precise runs (sd 0.02/√20, 6+6 runs, 7 splits). The board shows this figure
// (vmbench_schedule_min_detectable_change) and a suspect's confirmation runs are sized with it;
// without the power term it would read 2.54% and 1.69% (mutant D1 of the test review).
func TestMinimumDetectableChangeIsPinned(t *testing.T) {
	cfg := DefaultConfig()
	for _, tc := range []struct {
		name          string
		nz            noise
		before, after int
		wantPercent   float64
	}{
		{"noisy machine, 15+15", noisyMachine, 15, 15, 2.970},
		{"precise runs, 6+6", preciseRuns, 6, 6, 1.916},
	} {
		got := theoreticalMDC(t, tc.nz, tc.before, tc.after, cfg) * 100
		if math.Abs(got-tc.wantPercent) > 0.0005 {
			t.Errorf("%s: minimum detectable change %.4f%%, want %.3f%%", tc.name, got, tc.wantPercent)
		}
	}
}

// A step exactly as large as the minimum detectable change is found with the promised power: in
// 0.8 ± 3 binomial standard errors of 200 series (143 to 177), on both sides, so that a figure too
// small (power not reached) or too large (power exceeded) fails. The minimum change is set to 0,
// since these steps are below the default 3%.
//
//	go test ./internal/detect -run Calibration -v
func TestMinimumDetectableChangeCalibration(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MinChange = 0
	for _, tc := range []struct {
		name          string
		nz            noise
		before, after int
		seed          uint64
	}{
		{"noisy machine, 15+15", noisyMachine, 15, 15, 11000},
		{"precise runs, 6+6", preciseRuns, 6, 6, 12000},
	} {
		mdc := theoreticalMDC(t, tc.nz, tc.before, tc.after, cfg)
		found := 0
		for seed := range uint64(200) {
			a := analyze(t, series(tc.seed+seed, stepLevels(tc.before, tc.after, mdc), tc.nz), cfg)
			if c := changeNear(a.Changes, tc.before); c != nil && c.Direction == Up {
				found++
			}
		}
		sd := 3 * math.Sqrt(cfg.Power*(1-cfg.Power)/200)
		t.Logf("%s: a step of the minimum detectable change %.3f%% found in %d/200", tc.name, mdc*100, found)
		if f := float64(found) / 200; f < cfg.Power-sd || f > cfg.Power+sd {
			t.Errorf("%s: a step of the minimum detectable change found in %d/200, want %.0f%% ± %.1f%%", tc.name, found, cfg.Power*100, sd*100)
		}
	}
}

// The p-values of changes and suspects carry the correction for the choice of split as literal
// factors (mutant D2 halved it and no test noticed): the 5% step of a 30-run series is the split
// of the whole series, 25 splits of 3 runs or more each side, so 2·25; the suspect at run 20 of
// 21 runs is corrected for the 16 splits of those runs, 2·16; a bump, for the pairs (2·325).
func TestCorrectionFactorsArePinned(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		a := analyze(t, series(seed, stepLevels(15, 15, -0.05), noisyMachine), DefaultConfig())
		if len(a.Changes) != 1 {
			t.Fatalf("seed %d: changes %+v, want one", seed, a.Changes)
		}
		c := a.Changes[0]
		if c.Before+c.After != 30 || !close(c.PValue, math.Min(1, 50*c.RawPValue), 1e-12) {
			t.Errorf("seed %d: p %v raw %v over %d+%d runs, want p = 50 × raw over the 30 runs", seed, c.PValue, c.RawPValue, c.Before, c.After)
		}
	}
	// The bump of TestFindsTwoChanges: no split of the 30 runs is significant, the pair search's
	// step at run 10 is, corrected for the 325 pairs of a split and an end (2·325); the step back
	// at run 20 is the split of the 20 runs after it, 15 splits (2·15).
	levels := append(append(make([]float64, 10), stepLevels(0, 10, 0.08)...), make([]float64, 10)...)
	bump := analyze(t, series(41, levels, noisyMachine), DefaultConfig())
	if len(bump.Changes) != 2 || !close(bump.Changes[0].PValue, math.Min(1, 650*bump.Changes[0].RawPValue), 1e-12) ||
		!close(bump.Changes[1].PValue, math.Min(1, 30*bump.Changes[1].RawPValue), 1e-12) {
		t.Errorf("bump: changes %+v, want p = 650 × raw at run 10 and 30 × raw at run 20", bump.Changes)
	}
	runs := series(21, stepLevels(20, 3, -0.06), preciseRuns)
	a := analyze(t, runs[:21], DefaultConfig())
	if a.Suspect == nil || !close(a.Suspect.PValue, math.Min(1, 32*a.Suspect.RawPValue), 1e-12) {
		t.Errorf("suspect %+v, want p = 32 × raw (16 splits of 21 runs)", a.Suspect)
	}
}

// Step intervals cover the true step at their confidence: over 400 series with a 5% drop on the
// noisy machine, the 95% interval of the step found at run 15 (±1) holds 0.95 in 92-97% of them
// (docs/change-detection.md). A narrower interval (too low a quantile) or a much wider one fails.
//
//	go test ./internal/detect -run Coverage -v
func TestStepIntervalCoverage(t *testing.T) {
	found, covered := 0, 0
	for seed := range uint64(400) {
		a := analyze(t, series(13000+seed, stepLevels(15, 15, -0.05), noisyMachine), DefaultConfig())
		if c := changeNear(a.Changes, 15); c != nil {
			found++
			if c.RatioLow <= 0.95 && 0.95 <= c.RatioHigh {
				covered++
			}
		}
	}
	f := float64(covered) / float64(found)
	t.Logf("95%% step intervals: %d of %d found steps cover 0.95 (%.1f%%)", covered, found, 100*f)
	if found < 360 || f < 0.92 || f > 0.97 {
		t.Errorf("coverage %d/%d = %.3f, want 0.92-0.97 of at least 360 found steps", covered, found, f)
	}
}

// The baseline verdict's interval is the two-sided 1 − 2·alpha interval (90% at the default alpha
// 0.05), whose bounds are the two one-sided tests (mutant D4 computed it at 1 − alpha/2 unseen).
// Three baseline runs at log levels 0, 0.01, 0.02 and three recent runs at 0.05, 0.06, 0.07, each
// of 5 repetitions of variance 5e-4: equal weights and no between-run variance (Q = 4 = k − 2), so
// the pooled t-test: se = √(1e-4 · (1/3 + 1/3)) = 0.0081650, t(0.95, 4) = 2.1318468, the interval
// exp(0.05 ∓ 0.0174065) = [1.0331305, 1.0697302] (computed by hand).
func TestBaselineIntervalIsPinned(t *testing.T) {
	mk := func(means ...float64) []Run {
		out := make([]Run, len(means))
		for i, m := range means {
			out[i] = Run{N: 5, Mean: m, Variance: 5e-4}
		}
		return out
	}
	cfg := DefaultBaselineConfig()
	cfg.Window = 3
	v, err := CompareToBaseline([]BaselineMetric{{Name: "m", Baseline: mk(0, 0.01, 0.02), Runs: mk(0.05, 0.06, 0.07)}}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !close(v[0].Ratio, math.Exp(0.05), 1e-9) || !close(v[0].RatioLow, 1.0331305, 1e-6) || !close(v[0].RatioHigh, 1.0697302, 1e-6) {
		t.Errorf("ratio %v [%v, %v], want %v [1.0331305, 1.0697302]", v[0].Ratio, v[0].RatioLow, v[0].RatioHigh, math.Exp(0.05))
	}
}
