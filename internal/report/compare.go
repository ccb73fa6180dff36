package report

import (
	"errors"
	"fmt"
	"io"
	"math"
	"text/tabwriter"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Verdict is how one metric moved between the baseline suite and the current one.
type Verdict string

const (
	VerdictOK         Verdict = "ok"
	VerdictRegression Verdict = "REGRESSION"
	VerdictImproved   Verdict = "improved"
	// VerdictUndefined is a baseline mean of zero, against which no relative change exists.
	VerdictUndefined Verdict = "n/a"
)

// Change is one metric of one benchmark on one platform, in the baseline suite and in the current one.
type Change struct {
	Benchmark string `json:"benchmark"`
	Platform  string `json:"platform"`
	Metric    string `json:"metric"`
	Unit      string `json:"unit"`
	Direction string `json:"direction"`

	BaselineCount int     `json:"baselineCount"`
	BaselineMean  float64 `json:"baselineMean"`
	CurrentCount  int     `json:"currentCount"`
	CurrentMean   float64 `json:"currentMean"`
	// ChangePercent is (current - baseline) / baseline in percent; nil for a baseline mean of 0.
	ChangePercent *float64 `json:"changePercent"`
	// PValue is Welch's test of the two suites' repetition means, uncorrected, for information: the
	// verdict uses only the tolerance, so that a gate does not depend on the number of repetitions.
	PValue *float64 `json:"pValue"`
	// PValueHolm is PValue adjusted with Holm's procedure over every change of the comparison.
	PValueHolm *float64 `json:"pValueHolm"`
	Verdict    Verdict  `json:"verdict"`
	// EmulationDiffers is true when one suite ran the platform under emulation and the other did not:
	// the change then measures the accelerator, not the software.
	EmulationDiffers bool `json:"emulationDiffers"`
}

// Comparison is the current suite checked against a baseline suite.
type Comparison struct {
	Current, Baseline string
	Tolerance         float64
	Changes           []Change
	// Missing are the benchmark/platform/metric triples of the baseline suite that the current suite
	// did not measure.
	Missing []string
	// Tests is the number of changes with a p-value: the family of Holm's correction.
	Tests int
}

// Compare checks every metric that both suites measured, on the same benchmark and platform.
// tolerance is a fraction (0.05 for 5%).
func Compare(current, baseline *vmbenchv1.BenchmarkSuite, tolerance float64) (*Comparison, error) {
	if tolerance < 0 || math.IsNaN(tolerance) {
		return nil, fmt.Errorf("tolerance must not be negative, got %g", tolerance)
	}
	for _, s := range []*vmbenchv1.BenchmarkSuite{current, baseline} {
		if !hasMetrics(s) {
			return nil, fmt.Errorf("suite %s has no results to compare", suiteName(s))
		}
	}
	c := &Comparison{Current: suiteName(current), Baseline: suiteName(baseline), Tolerance: tolerance}
	curEmulated, baseEmulated := emulatedPlatforms(current), emulatedPlatforms(baseline)
	for _, bench := range benchmarkOrder(baseline) {
		for _, platform := range platformOrder(baseline) {
			old := findResult(baseline, bench, platform)
			if old == nil {
				continue
			}
			cur := findResult(current, bench, platform)
			for _, om := range old.Metrics {
				if om.N == 0 {
					continue
				}
				var cm *vmbenchv1.MetricSummary
				if cur != nil {
					cm = findMetricSummary(cur.Metrics, om.Name)
				}
				if cm == nil || cm.N == 0 {
					c.Missing = append(c.Missing, fmt.Sprintf("%s/%s/%s", bench, platform, om.Name))
					continue
				}
				ch := change(bench, platform, om, *cm, tolerance)
				ch.EmulationDiffers = curEmulated[platform] != baseEmulated[platform]
				c.Changes = append(c.Changes, ch)
			}
		}
	}
	if len(c.Changes) == 0 {
		return nil, errors.New("the two suites have no benchmark, platform and metric in common")
	}
	c.holm()
	return c, nil
}

// holm adjusts the changes' p-values over the family of every change with a test.
func (c *Comparison) holm() {
	p := make([]float64, len(c.Changes))
	for i, ch := range c.Changes {
		p[i] = math.NaN()
		if ch.PValue != nil {
			p[i] = *ch.PValue
			c.Tests++
		}
	}
	for i, adj := range Holm(p) {
		if !math.IsNaN(adj) {
			c.Changes[i].PValueHolm = pointer(adj)
		}
	}
}

func change(bench, platform string, old, cur vmbenchv1.MetricSummary, tolerance float64) Change {
	was, now := Summarize(old), Summarize(cur)
	ch := Change{Benchmark: bench, Platform: platform, Metric: old.Name, Unit: old.Unit, Direction: string(old.Direction),
		BaselineCount: was.N, BaselineMean: was.Mean, CurrentCount: now.N, CurrentMean: now.Mean, Verdict: VerdictUndefined}
	if w, ok := Welch(was, now); ok {
		ch.PValue = pointer(w.P)
	}
	if was.Mean == 0 {
		return ch
	}
	rel := (now.Mean - was.Mean) / math.Abs(was.Mean)
	ch.ChangePercent = pointer(rel * 100)
	worse := -rel
	if old.Direction == vmbenchv1.LowerIsBetter {
		worse = rel
	}
	switch {
	case worse > tolerance:
		ch.Verdict = VerdictRegression
	case -worse > tolerance:
		ch.Verdict = VerdictImproved
	default:
		ch.Verdict = VerdictOK
	}
	return ch
}

// Regressions counts the metrics that moved beyond the tolerance in their bad direction.
func (c *Comparison) Regressions() int {
	n := 0
	for _, ch := range c.Changes {
		if ch.Verdict == VerdictRegression {
			n++
		}
	}
	return n
}

// WriteTable prints the comparison, then a one-line verdict.
func (c *Comparison) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "Comparison of %s against baseline suite %s; tolerance %g%% in each metric's bad direction\n\n",
		c.Current, c.Baseline, c.Tolerance*100)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tPLATFORM\tMETRIC\tUNIT\tDIRECTION\tBASELINE SUITE\tCURRENT SUITE\tCHANGE\tP\tP HOLM\tVERDICT")
	emulationDiffers := false
	for _, ch := range c.Changes {
		verdict := string(ch.Verdict)
		if ch.EmulationDiffers {
			verdict += " (emulation differs)"
			emulationDiffers = true
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s (n=%d)\t%s (n=%d)\t%s\t%s\t%s\t%s\n", ch.Benchmark, ch.Platform, ch.Metric, ch.Unit,
			directionWord(ch.Direction), FormatValue(ch.BaselineMean), ch.BaselineCount, FormatValue(ch.CurrentMean),
			ch.CurrentCount, formatPercent(ch.ChangePercent), formatP(ch.PValue), formatP(ch.PValueHolm), verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "n counts repetitions (a repetition's nodes averaged); P: Welch's test of the two suites, uncorrected; "+
		"P HOLM: adjusted with %s over the %d changes with a test; both for information, the verdict uses only the tolerance\n",
		Correction, c.Tests)
	if emulationDiffers {
		fmt.Fprintln(w, "(emulation differs): one suite ran this platform's VMs under software emulation and the other did not; the change measures the accelerator")
	}
	for _, m := range c.Missing {
		fmt.Fprintf(w, "note: %s is in the baseline suite but not in the current one\n", m)
	}
	if n := c.Regressions(); n > 0 {
		fmt.Fprintf(w, "FAIL: %d of %d metrics regressed beyond %g%%\n", n, len(c.Changes), c.Tolerance*100)
	} else {
		fmt.Fprintf(w, "PASS: no metric of %d regressed beyond %g%%\n", len(c.Changes), c.Tolerance*100)
	}
	return nil
}

func directionWord(d string) string {
	if d == string(vmbenchv1.LowerIsBetter) {
		return "lower better"
	}
	return "higher better"
}
