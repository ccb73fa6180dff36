package detect

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// BaselineConfig holds the settings of the verdict against a pinned baseline.
type BaselineConfig struct {
	// Tolerance is how far a metric may fall below the baseline, in its bad direction, before it
	// counts as drifted: a fraction (0.05 for 5%), the report's tolerance.
	Tolerance float64
	// Alpha is the family-wise error rate that Holm's correction holds over the metrics judged
	// together, for each of the two one-sided claims (drifted, holds).
	Alpha float64
	// Window is how many of the newest runs are compared with the baseline.
	Window int
}

// DefaultBaselineConfig is the report's 5% tolerance and alpha 0.05, over the newest 5 runs.
func DefaultBaselineConfig() BaselineConfig {
	return BaselineConfig{Tolerance: 0.05, Alpha: 0.05, Window: 5}
}

func (c BaselineConfig) validate() error {
	var bad []string
	if !(c.Tolerance >= 0 && c.Tolerance < 1) {
		bad = append(bad, fmt.Sprintf("tolerance %v must lie in [0, 1)", c.Tolerance))
	}
	if !(c.Alpha > 0 && c.Alpha < 0.5) {
		bad = append(bad, fmt.Sprintf("alpha %v must lie in (0, 0.5)", c.Alpha))
	}
	if c.Window < 2 {
		bad = append(bad, fmt.Sprintf("window %d must be at least 2 runs", c.Window))
	}
	if len(bad) > 0 {
		return fmt.Errorf("baseline settings: %s", strings.Join(bad, "; "))
	}
	return nil
}

// BaselineMetric is one series to hold against its pinned, approved baseline.
type BaselineMetric struct {
	// Name names the metric in errors and verdicts.
	Name  string
	Sense Sense
	// Baseline is the pinned record: one run, or the few runs approved together.
	Baseline []Run
	// Runs is the series, oldest first; the newest Window runs are judged.
	Runs []Run
}

// BaselineState is the verdict of one metric against its baseline.
type BaselineState string

const (
	// BaselineInsufficient: fewer runs than the window; nothing is judged yet.
	BaselineInsufficient BaselineState = "InsufficientHistory"
	// Holds: the recent runs are shown to be within the tolerance of the baseline (non-inferior).
	Holds BaselineState = "Holds"
	// Drifted: the recent runs are shown to be worse than the baseline by more than the tolerance.
	Drifted BaselineState = "Drifted"
	// BaselineInconclusive: neither can be shown at this noise and window.
	BaselineInconclusive BaselineState = "Inconclusive"
)

// BaselineVerdict is one metric held against its baseline.
type BaselineVerdict struct {
	Name  string        `json:"name"`
	State BaselineState `json:"state"`
	// Ratio is the recent level over the baseline's in the higher-is-better sense (below 1 is
	// worse, as in the report), with the two-sided interval at 1 - 2·Alpha whose bounds are the two
	// one-sided tests.
	Ratio     float64 `json:"ratio"`
	RatioLow  float64 `json:"ratioLow"`
	RatioHigh float64 `json:"ratioHigh"`
	// PDrifted is the one-sided p-value of "worse than 1 - Tolerance", PHolds of "better than
	// 1 - Tolerance"; the Holm values are adjusted over the metrics given together.
	PDrifted     float64 `json:"pDrifted"`
	PDriftedHolm float64 `json:"pDriftedHolm"`
	PHolds       float64 `json:"pHolds"`
	PHoldsHolm   float64 `json:"pHoldsHolm"`
	// Recent and BaselineRuns are the runs on each side of the comparison.
	Recent       int `json:"recent"`
	BaselineRuns int `json:"baselineRuns"`
}

// CompareToBaseline holds the newest Window runs of each metric against its baseline: a
// random-effects test of the two groups (the step test of Analyze, so that the between-run noise
// counts) whose estimate, in the higher-is-better sense, is tested one-sided against the margin
// log(1 - Tolerance) both ways. Drifted when "worse than the tolerance" survives Holm's correction
// over the metrics, Holds when "within the tolerance" does, Inconclusive otherwise. It sees a slow
// drift that no single step shows, since the baseline does not move with the series.
func CompareToBaseline(metrics []BaselineMetric, cfg BaselineConfig) ([]BaselineVerdict, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	out := make([]BaselineVerdict, len(metrics))
	margin := math.Log1p(-cfg.Tolerance)
	var tested []int
	for i, m := range metrics {
		out[i] = BaselineVerdict{Name: m.Name, State: BaselineInsufficient, BaselineRuns: len(m.Baseline)}
		if len(m.Baseline) == 0 {
			return nil, fmt.Errorf("metric %q has no baseline record: pin an approved run as its baseline", m.Name)
		}
		if err := validateRuns(m.Baseline); err != nil {
			return nil, fmt.Errorf("metric %q baseline: %w", m.Name, err)
		}
		if err := validateRuns(m.Runs); err != nil {
			return nil, fmt.Errorf("metric %q: %w", m.Name, err)
		}
		if len(m.Runs) < cfg.Window {
			continue
		}
		recent := m.Runs[len(m.Runs)-cfg.Window:]
		both := append(append([]Run(nil), m.Baseline...), recent...)
		f := fitStep(means(both), squaredStandardErrors(both), len(m.Baseline))
		est := f.Diff
		if m.Sense == LowerIsBetter {
			est = -est
		}
		t := tQuantile(1-cfg.Alpha, f.DF)
		v := &out[i]
		v.Recent = len(recent)
		v.Ratio, v.RatioLow, v.RatioHigh = math.Exp(est), math.Exp(est-t*f.SE), math.Exp(est+t*f.SE)
		v.PDrifted = oneSidedBelow(est, margin, f.SE, f.DF)
		v.PHolds = 1 - v.PDrifted
		if f.SE == 0 {
			v.PHolds = oneSidedBelow(-est, -margin, 0, f.DF)
		}
		tested = append(tested, i)
	}
	pd, ph := make([]float64, len(tested)), make([]float64, len(tested))
	for j, i := range tested {
		pd[j], ph[j] = out[i].PDrifted, out[i].PHolds
	}
	pd, ph = holm(pd), holm(ph)
	for j, i := range tested {
		v := &out[i]
		v.PDriftedHolm, v.PHoldsHolm = pd[j], ph[j]
		switch {
		case v.PDriftedHolm <= cfg.Alpha:
			v.State = Drifted
		case v.PHoldsHolm <= cfg.Alpha:
			v.State = Holds
		default:
			v.State = BaselineInconclusive
		}
	}
	return out, nil
}

// oneSidedBelow is the p-value of "est < margin": P(T <= (est - margin)/se). A zero standard error
// gives 0 when est is below the margin and 1 otherwise.
func oneSidedBelow(est, margin, se, df float64) float64 {
	if se == 0 || math.IsNaN(se) {
		if est < margin {
			return 0
		}
		return 1
	}
	return distuvT(df).CDF((est - margin) / se)
}

// holm adjusts p-values with Holm's step-down procedure: the i-th smallest of m is multiplied by
// m - i + 1, and each adjusted value is at least the one before it (at most 1). It holds the
// probability of any false claim in the family at alpha whatever the dependence between metrics.
func holm(p []float64) []float64 {
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] < p[order[b]] })
	out := make([]float64, len(p))
	running := 0.0
	for rank, i := range order {
		running = math.Max(running, math.Min(1, float64(len(p)-rank)*p[i]))
		out[i] = running
	}
	return out
}
