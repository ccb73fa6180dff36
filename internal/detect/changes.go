package detect

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Config holds the change-point settings. DefaultConfig gives the documented defaults.
type Config struct {
	// Alpha is the largest p-value, corrected for the choice among the splits of the segment, at
	// which a step is a change: the bound on the probability of any change in a series without one.
	Alpha float64
	// MinChange is the smallest step reported, as a fraction of the level before it on the ratio
	// scale: a step counts when |log(after/before)| >= log(1 + MinChange).
	MinChange float64
	// MinRunsEachSide is the fewest runs on each side of a change.
	MinRunsEachSide int
	// MinHistory is the fewest runs in a series before any verdict.
	MinHistory int
	// SuspectAlpha is the p-value, multiplied by the number of splits tried since the last change,
	// at or below which a step of at least MinChange that is not a change yet (too few runs after
	// it, or not significant at Alpha) is a suspect worth confirmation runs.
	SuspectAlpha float64
	// TrendAlpha is the p-value at or below which a linear trend fitted beside a significant step
	// counts as drift: when the step itself is then no longer significant at Alpha, the segment
	// is drifting rather than stepping, and it is neither reported nor split further.
	TrendAlpha float64
	// Confidence is the level of every reported interval.
	Confidence float64
	// Power is the probability of detecting a step of the minimum detectable change.
	Power float64
	// MaxConfirmationRuns caps the confirmation runs a suspect asks for.
	MaxConfirmationRuns int
	// AutocorrelationUpperBound makes the allowance for autocorrelated runs cautious: the
	// autocorrelation of the whole series around its single mean counts as evidence of it too, and
	// the allowance is the estimate plus one standard error. On short histories whose runs
	// correlate strongly it brings false changes near Alpha (at phi 0.6 on a very noisy machine, from
	// about 4% to 0.8% of 30-run series); on independent runs it costs power, since a real step also
	// makes the whole series correlate: a step of the minimum detectable change over 15+15 runs is
	// found in 45% of series instead of 75%, so Noise.MinDetectableChange no longer keeps its power
	// on short histories. Off by default (docs/change-detection.md, "Correlated runs").
	AutocorrelationUpperBound bool
}

// DefaultConfig is p <= 0.001, a 3% minimum change, 3 runs on each side, no verdict before 5 runs,
// suspects at a corrected p <= 0.05, drift judged at a trend p <= 0.05, 95% intervals, 80% power,
// at most 5 confirmation runs, and the allowance for autocorrelated runs at its estimate.
func DefaultConfig() Config {
	return Config{Alpha: 0.001, MinChange: 0.03, MinRunsEachSide: 3, MinHistory: 5, SuspectAlpha: 0.05,
		TrendAlpha: 0.05, Confidence: 0.95, Power: 0.8, MaxConfirmationRuns: 5}
}

func (c Config) validate() error {
	var bad []string
	if !(c.Alpha > 0 && c.Alpha < 1) {
		bad = append(bad, fmt.Sprintf("alpha %v must lie in (0, 1)", c.Alpha))
	}
	if !(c.SuspectAlpha > 0 && c.SuspectAlpha < 1) {
		bad = append(bad, fmt.Sprintf("suspect alpha %v must lie in (0, 1)", c.SuspectAlpha))
	}
	if !(c.TrendAlpha > 0 && c.TrendAlpha < 1) {
		bad = append(bad, fmt.Sprintf("trend alpha %v must lie in (0, 1)", c.TrendAlpha))
	}
	if !(c.MinChange >= 0) || math.IsInf(c.MinChange, 0) {
		bad = append(bad, fmt.Sprintf("minimum change %v must be finite and not negative", c.MinChange))
	}
	if c.MinRunsEachSide < 2 {
		bad = append(bad, fmt.Sprintf("minimum runs on each side %d must be at least 2 (a side of one run has no spread)", c.MinRunsEachSide))
	}
	if c.MinHistory < 3 {
		bad = append(bad, fmt.Sprintf("minimum history %d must be at least 3 runs", c.MinHistory))
	}
	if !(c.Confidence > 0 && c.Confidence < 1) {
		bad = append(bad, fmt.Sprintf("confidence %v must lie in (0, 1)", c.Confidence))
	}
	if !(c.Power > 0 && c.Power < 1) {
		bad = append(bad, fmt.Sprintf("power %v must lie in (0, 1)", c.Power))
	}
	if c.MaxConfirmationRuns < 1 {
		bad = append(bad, fmt.Sprintf("maximum confirmation runs %d must be at least 1", c.MaxConfirmationRuns))
	}
	if len(bad) > 0 {
		return fmt.Errorf("detector settings: %s", strings.Join(bad, "; "))
	}
	return nil
}

// State is the series' verdict as a whole.
type State string

const (
	// InsufficientHistory: fewer runs than MinHistory; nothing is judged yet.
	InsufficientHistory State = "InsufficientHistory"
	// Stable: no change and no suspect.
	Stable State = "Stable"
	// Suspected: no change since the last one (or ever), but the newest runs suggest a step:
	// queue the suspect's confirmation runs.
	Suspected State = "Suspected"
	// Changed: at least one change in the history (and no suspect after the last one).
	Changed State = "Changed"
)

// Direction is which way the run means moved.
type Direction string

const (
	Up   Direction = "up"
	Down Direction = "down"
)

// Step is a difference in level between the runs before a run and the runs from it on.
type Step struct {
	// Index is the first run after the step (0-based, in the slice given to Analyze).
	Index int `json:"index"`
	// RunID is that run's ID.
	RunID string `json:"runID"`
	// Time is that run's Time.
	Time time.Time `json:"time"`
	// Direction is which way the mean moved; Regression says whether that is worse for the
	// metric's Sense.
	Direction  Direction `json:"direction"`
	Regression bool      `json:"regression"`
	// Ratio is the geometric-mean level after over the level before (1.05 for +5%), with its
	// interval at Config.Confidence.
	Ratio     float64 `json:"ratio"`
	RatioLow  float64 `json:"ratioLow"`
	RatioHigh float64 `json:"ratioHigh"`
	// PValue is the two-sided p-value corrected for the choice of the split (Bonferroni: times
	// twice the number of splits of the segment, or of pairs of a split and an end, at most 1);
	// RawPValue is the p-value of this split alone.
	PValue    float64 `json:"pValue"`
	RawPValue float64 `json:"rawPValue"`
	// Before and After are the runs on each side in the test: from the start of the segment (the
	// previous change, or the first run) to the end of the second side.
	Before int `json:"before"`
	After  int `json:"after"`
}

// Suspect is a step that is big enough but not yet a change.
type Suspect struct {
	Step
	// Reasons say what the step still lacks, in words for a condition message: too few runs
	// after it, too high a p-value, or (rarely) the significance at a split the search did not
	// choose.
	Reasons []string `json:"reasons"`
	// ConfirmationRuns is how many more runs would settle it: enough for MinRunsEachSide after
	// the step and, at the observed size, for Config.Power to reach significance; at most
	// Config.MaxConfirmationRuns.
	ConfirmationRuns int `json:"confirmationRuns"`
}

// Noise describes the runs since the last change, for boards.
type Noise struct {
	// Runs is how many runs it is computed from.
	Runs int `json:"runs"`
	// RunSD is the standard deviation of one run's mean around the level (log scale; about the
	// coefficient of variation of a run): the runs' own standard errors and the between-run
	// spread together.
	RunSD float64 `json:"runSD"`
	// BetweenSD is the between-run standard deviation beyond the runs' own standard errors
	// (square root of the DerSimonian-Laird tau²).
	BetweenSD float64 `json:"betweenSD"`
	// WithinSE is the root mean square of the runs' own standard errors.
	WithinSE float64 `json:"withinSE"`
	// MinDetectableChange is the smallest step (fraction, 0.02 for 2%) that would be found with
	// Config.Power once MinRunsEachSide runs at this noise follow these runs, at Config.Alpha
	// with the same correction. The detector never reports a step below Config.MinChange, whatever
	// this says.
	MinDetectableChange float64 `json:"minDetectableChange"`
	// Autocorrelation is the lag-1 autocorrelation of the between-run errors estimated over the
	// whole series (0 below 20 runs, or when none shows): the tests, and the minimum detectable
	// change, allow for it (docs/change-detection.md).
	Autocorrelation float64 `json:"autocorrelation,omitempty"`
}

// Analysis is the verdict on one series.
type Analysis struct {
	State State `json:"state"`
	// Runs is the number of runs analysed.
	Runs int `json:"runs"`
	// Changes are the significant steps of at least MinChange that a drift does not explain, in
	// run order.
	Changes []Step `json:"changes,omitempty"`
	// Minor are significant steps below MinChange: real but too small to report; they bound
	// segments like changes and can be drawn on boards, but are not findings.
	Minor []Step `json:"minor,omitempty"`
	// Suspect is the strongest step since the last change (or minor step) that is big enough but
	// not yet a change; nil when there is none.
	Suspect *Suspect `json:"suspect,omitempty"`
	// Noise is measured over the runs since the last change or minor step (over all the runs before
	// MinHistory runs, with no verdict); its zero value for fewer than 2 runs. Its
	// MinDetectableChange is the series' sensitivity, so that a caller needs no second pass.
	Noise Noise `json:"noise"`
}

// Analyze finds the changes in a series of runs, oldest first. sense says which direction is a
// regression. The runs must be of one metric measured the same way (one parameter hash).
//
// The search is E-Divisive with means (Matteson and James, 2014) over the run means: the split
// that maximizes the energy divergence of the two sides is tested with a random-effects step test
// (see stats.go), its p-value corrected for the number of splits that could have been chosen (see
// segment); a significant split that is not a drift is kept and both sides are searched again,
// until no split is significant (the sides of a drift are searched too: searchDrift). Under no
// change at all, the probability of any change is then at most Alpha. When the runs are
// autocorrelated, the series is searched again with the estimated autocorrelation (autocorr.go).
func Analyze(runs []Run, sense Sense, cfg Config) (Analysis, error) {
	if err := cfg.validate(); err != nil {
		return Analysis{}, err
	}
	if err := validateRuns(runs); err != nil {
		return Analysis{}, err
	}
	a := Analysis{State: InsufficientHistory, Runs: len(runs)}
	d := detector{runs: runs, y: means(runs), s2: squaredStandardErrors(runs), sense: sense, cfg: cfg}
	if len(runs) < cfg.MinHistory {
		if len(runs) >= 2 {
			a.Noise = d.noise(0, len(runs))
		}
		return a, nil
	}
	d.energy = newEnergy(d.y)
	d.segment(0, len(runs))
	for range 3 {
		var bounds []int
		for _, s := range slices.Concat(d.changes, d.minor) {
			bounds = append(bounds, s.Index)
		}
		phi := residualAutocorrelation(d.y, d.s2, bounds, d.cfg.AutocorrelationUpperBound)
		if phi <= d.phi {
			break
		}
		d.phi, d.changes, d.minor = phi, nil, nil
		d.segment(0, len(runs))
	}
	sort.Slice(d.changes, func(i, j int) bool { return d.changes[i].Index < d.changes[j].Index })
	sort.Slice(d.minor, func(i, j int) bool { return d.minor[i].Index < d.minor[j].Index })
	a.Changes, a.Minor = d.changes, d.minor
	last := 0
	for _, s := range append(append([]Step(nil), d.changes...), d.minor...) {
		last = max(last, s.Index)
	}
	a.Suspect = d.suspect(last)
	a.Noise = d.noise(last, len(runs))
	switch {
	case a.Suspect != nil:
		a.State = Suspected
	case len(a.Changes) > 0:
		a.State = Changed
	default:
		a.State = Stable
	}
	return a, nil
}

type detector struct {
	runs    []Run
	y, s2   []float64
	phi     float64
	sense   Sense
	cfg     Config
	energy  *energy
	changes []Step
	minor   []Step
}

// segment searches [s, e) for a change and recurses into both sides of a significant one. Half of
// Alpha goes to the best split of the whole segment (corrected for the number of splits), half to
// the best pair of a split and an earlier end of the second side (corrected for the number of
// pairs), which finds a step followed by a step back. Either way the probability of a false change
// in a segment without one is at most Alpha.
func (d *detector) segment(s, e int) {
	m := d.cfg.MinRunsEachSide
	tau, ok := d.energy.candidate(s, e, m)
	if !ok {
		return
	}
	splits, pairs := splitCounts(e-s, m)
	kappa := e
	f := fitStepAR(d.y[s:e], d.s2[s:e], tau-s, d.phi)
	adjusted := math.Min(1, 2*float64(splits)*f.P)
	if adjusted > d.cfg.Alpha {
		t2, k2, _ := d.energy.candidatePair(s, e, m)
		f2 := fitStepAR(d.y[s:k2], d.s2[s:k2], t2-s, d.phi)
		adjusted = math.Min(1, 2*float64(pairs)*f2.P)
		if adjusted > d.cfg.Alpha {
			return
		}
		tau, kappa, f = t2, k2, f2
	}
	if looksLikeDrift(d.y[s:kappa], tau-s, f, d.cfg.Alpha, d.cfg.TrendAlpha) {
		d.searchDrift(s, tau, e)
		return
	}
	step := d.step(tau, s, kappa, f, adjusted)
	if math.Abs(f.Diff) >= math.Log1p(d.cfg.MinChange) {
		d.changes = append(d.changes, step)
	} else {
		d.minor = append(d.minor, step)
	}
	d.segment(s, tau)
	d.segment(tau, e)
}

// searchDrift searches the two sides of a segment whose significant split looked like a drift. A
// staircase of equal steps fits a trend as well as a drift does, and its steps are found on the
// sides; once a side holds a step, the runs between the nearest steps (or minor steps) on each side
// of the split no longer form a staircase, and they are searched again, which finds the step at
// the split. The steps found are kept only when a trend beside them all is not significant at
// TrendAlpha: pieces of a drift keep the drift's slope between them, the steps of a staircase
// leave none. Each search is of a strictly shorter segment, so the recursion ends.
func (d *detector) searchDrift(s, tau, e int) {
	nc, nm := len(d.changes), len(d.minor)
	d.segment(s, tau)
	d.segment(tau, e)
	l, r := s, e
	for _, st := range slices.Concat(d.changes[nc:], d.minor[nm:]) {
		switch {
		case st.Index <= tau:
			l = max(l, st.Index)
		default:
			r = min(r, st.Index)
		}
	}
	if l == s && r == e {
		return
	}
	d.segment(l, r)
	var bounds []int
	for _, st := range slices.Concat(d.changes[nc:], d.minor[nm:]) {
		bounds = append(bounds, st.Index)
	}
	if trendBesideSteps(d.y[s:e], d.s2[s:e], s, bounds, d.cfg.TrendAlpha) {
		d.changes, d.minor = d.changes[:nc], d.minor[:nm]
	}
}

// trendBesideSteps fits a level for each piece of y between the steps at bounds (indices offset by
// s) beside one linear trend over the run index, with random-effects weights around the pieces'
// levels, and is true when the trend is significant at trendAlpha.
func trendBesideSteps(y, s2 []float64, s int, bounds []int, trendAlpha float64) bool {
	k := len(y)
	slices.Sort(bounds)
	groups := make([][2]int, 0, len(bounds)+1)
	start := 0
	for _, b := range bounds {
		groups = append(groups, [2]int{start, b - s})
		start = b - s
	}
	groups = append(groups, [2]int{start, k})
	if k <= len(groups)+1 {
		return false
	}
	w := reWeights(s2, dlTau2(y, s2, groups))
	cols := make([][]float64, 0, len(groups)+1)
	for _, g := range groups {
		c := make([]float64, k)
		for i := g[0]; i < g[1]; i++ {
			c[i] = 1
		}
		cols = append(cols, c)
	}
	idx := make([]float64, k)
	for i := range idx {
		idx[i] = float64(i)
	}
	cols = append(cols, idx)
	beta, cov, rss, ok := wls(cols, y, w)
	if !ok {
		return false
	}
	df := float64(k - len(cols))
	j := len(cols) - 1
	return twoSidedP(beta[j], math.Sqrt(rss/df*cov.At(j, j)), df) <= trendAlpha
}

func (d *detector) step(tau, s, e int, f stepFit, adjusted float64) Step {
	t := tQuantile(1-(1-d.cfg.Confidence)/2, f.DF)
	st := Step{Index: tau, RunID: d.runs[tau].ID, Time: d.runs[tau].Time, Direction: Up,
		Ratio: math.Exp(f.Diff), RatioLow: math.Exp(f.Diff - t*f.SE), RatioHigh: math.Exp(f.Diff + t*f.SE),
		PValue: adjusted, RawPValue: f.P, Before: tau - s, After: e - tau}
	if f.Diff < 0 {
		st.Direction = Down
	}
	st.Regression = (st.Direction == Down) == (d.sense == HigherIsBetter)
	return st
}

// suspect is the most significant split of the runs from `from` on that leaves MinRunsEachSide
// runs before it and at least one after it, moves by at least MinChange, has a p-value at or below
// SuspectAlpha once multiplied by the number of such splits (so that a series without change
// asks for confirmation runs in at most SuspectAlpha of its analyses), and is not a drift.
func (d *detector) suspect(from int) *Suspect {
	m, n := d.cfg.MinRunsEachSide, len(d.runs)
	y, s2 := d.y[from:], d.s2[from:]
	candidates := float64(n - from - m)
	var best *Suspect
	w := make([]float64, len(y))
	fe := newFESums(y, s2)
	for tau := from + m; tau < n; tau++ {
		f := fitLevelsWith(y, s2, tau-from, w, d.phi, fe.tau2(tau-from, len(y)))
		if math.Abs(f.Diff) < math.Log1p(d.cfg.MinChange) {
			continue
		}
		if f.P = twoSidedP(f.Diff, f.SE, f.DF); f.P*candidates > d.cfg.SuspectAlpha {
			continue
		}
		if looksLikeDrift(y, tau-from, f, d.cfg.Alpha, d.cfg.TrendAlpha) {
			continue
		}
		if best != nil && f.P >= best.RawPValue {
			continue
		}
		splits, _ := splitCounts(n-from, m)
		adjusted := math.Min(1, 2*f.P*float64(max(1, splits)))
		best = &Suspect{Step: d.step(tau, from, n, f, adjusted)}
		best.Reasons, best.ConfirmationRuns = d.lacks(f, n-tau, n-from)
	}
	return best
}

// lacks says what a suspect still needs and how many more runs would give it.
func (d *detector) lacks(f stepFit, after, total int) ([]string, int) {
	m := d.cfg.MinRunsEachSide
	var reasons []string
	need := 0
	if after < m {
		reasons = append(reasons, fmt.Sprintf("%d run(s) after the step, %d needed", after, m))
		need = m - after
	}
	splits, _ := splitCounts(total, m)
	if p := 2 * f.P * float64(max(1, splits)); p > d.cfg.Alpha {
		reasons = append(reasons, fmt.Sprintf("p=%.2g after the correction for %d splits, %g needed", p, max(1, splits), d.cfg.Alpha))
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "significant at this run, but the split of the segment that E-Divisive chose is another run, "+
			"which is not: more runs settle where the step is")
	}
	before := total - after
	// The step's standard error with r more runs like the ones after it, by the same equal-weight
	// approximation as the minimum detectable change.
	runVar := f.SE * f.SE / (1/float64(before) + 1/float64(after))
	for r := need; r <= d.cfg.MaxConfirmationRuns; r++ {
		a := after + r
		if a < m {
			continue
		}
		k := before + a
		se := math.Sqrt(runVar * (1/float64(before) + 1/float64(a)))
		if detectable(d.cfg, k, se) <= math.Abs(f.Diff) {
			return reasons, max(r, 1)
		}
	}
	return reasons, d.cfg.MaxConfirmationRuns
}

// detectable is the log-scale step found with probability cfg.Power by the test of the whole
// segment of k runs with standard error se, at its share of cfg.Alpha (half, corrected for the
// splits of k runs): (t_crit + t_power)·se.
func detectable(cfg Config, k int, se float64) float64 {
	df := float64(k - 2)
	splits, _ := splitCounts(k, cfg.MinRunsEachSide)
	crit := tQuantile(1-cfg.Alpha/(4*float64(max(1, splits))), df)
	return (crit + tQuantile(cfg.Power, df)) * se
}

// noise summarizes runs [from, to) and the change a further MinRunsEachSide runs could reveal.
func (d *detector) noise(from, to int) Noise {
	g := summarizeGroup(d.y[from:to], d.s2[from:to])
	before, after := to-from, d.cfg.MinRunsEachSide
	se := math.Sqrt(g.RunVar * (1/float64(before) + 1/float64(after)) * equalRunsFactor(before, after, g, d.phi))
	return Noise{Runs: before, RunSD: math.Sqrt(g.RunVar), BetweenSD: math.Sqrt(g.Tau2), WithinSE: math.Sqrt(g.WithinSE2),
		MinDetectableChange: math.Expm1(detectable(d.cfg, before+after, se)), Autocorrelation: d.phi}
}

// equalRunsFactor is autocorrelationFactor for a step between `before` and `after` runs alike,
// whose between-run share of the variance is g's.
func equalRunsFactor(before, after int, g oneGroup, phi float64) float64 {
	if phi <= 0 || g.RunVar <= 0 {
		return 1
	}
	w := make([]float64, before+after)
	for i := range w {
		w[i] = 1
	}
	share := g.Tau2 / g.RunVar
	if g.WithinSE2 == 0 {
		share = 1
	}
	return autocorrelationFactor(w, before, math.Min(1, share), phi, true)
}

// MinDetectableChange is the smallest step (a fraction: 0.02 for 2%) that Analyze finds with
// cfg.Power when `after` runs as noisy as `before` follow the runs `before` (which should share one
// level), at cfg.Alpha with its correction for the splits of the combined series. It is what a board
// shows as the sensitivity of a series at its current history; Analysis.Noise gives it for
// after = MinRunsEachSide. From 20 runs on it allows for the runs' autocorrelation as Analyze does.
func MinDetectableChange(before []Run, after int, cfg Config) (float64, error) {
	if err := cfg.validate(); err != nil {
		return 0, err
	}
	if err := validateRuns(before); err != nil {
		return 0, err
	}
	if len(before) < 2 || after < 1 {
		return 0, fmt.Errorf("a minimum detectable change needs at least 2 runs before and 1 after, got %d and %d", len(before), after)
	}
	y, s2 := means(before), squaredStandardErrors(before)
	g := summarizeGroup(y, s2)
	phi := residualAutocorrelation(y, s2, nil, cfg.AutocorrelationUpperBound)
	se := math.Sqrt(g.RunVar * (1/float64(len(before)) + 1/float64(after)) * equalRunsFactor(len(before), after, g, phi))
	return math.Expm1(detectable(cfg, len(before)+after, se)), nil
}
