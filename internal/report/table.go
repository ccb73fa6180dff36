package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The comparison table: every metric of every platform against the baseline, with the legend of its
// statistics, then the notes, the HPL sweeps and the runs.

// WriteTable prints the rows aligned, then the legend of its statistics, footnotes for emulated
// platforms and trimmed samples, and the suite's notes.
func (r *Report) WriteTable(w io.Writer) error {
	test := fmt.Sprintf("Welch's t-test, %s over the %d comparisons of this report, significant when the adjusted p < %g",
		Correction, r.Comparisons, Alpha)
	if r.Comparisons == 0 {
		test = "no test: no metric has 2 repetitions on the baseline and on another platform"
	}
	if err := r.WriteFirstScreen(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nEvery metric: every platform against baseline %q; mean ± %g%% CI (Student t) over repetitions; %s\n\n",
		r.Baseline, Confidence*100, test)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	baseHeader := strings.ToUpper(r.Baseline) + " (BASELINE)"
	fmt.Fprintf(tw, "BENCHMARK\tMETRIC\tUNIT\t%s\tCOV\tPLATFORM\tMEAN ± 95%% CI\tCOV\tPLAT/BASE\tOVERHEAD\tMDE\tP\tP HOLM\tSIGNIFICANT\tRATIO [95%% CI]\tCHANGE\tVERDICT\n", baseHeader)
	emulated, trimmed := false, false
	previous := ""
	for _, row := range r.Rows {
		bench := row.Benchmark
		if bench == previous {
			bench = ""
		}
		previous = row.Benchmark
		if bench != "" && row.Concurrent {
			bench += " " + AllNodesMark
		}
		platform := row.Platform
		if platform == "" {
			platform = "-"
		}
		if row.Emulated {
			platform += " (emulated)"
			emulated = true
		}
		baseCell := meanCell(row.BaselineCount, row.BaselineSamples, row.BaselineMean, row.BaselineCI95, row.SamplesTrimmed)
		if row.BaselineEmulated && row.BaselineMean != nil {
			baseCell += " (emulated)"
			emulated = true
		}
		trimmed = trimmed || row.SamplesTrimmed
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", bench, row.Metric, row.Unit,
			baseCell, formatCoV(row.BaselineCoVPercent), platform, meanCell(row.Count, row.Samples, row.Mean, row.CI95, row.SamplesTrimmed),
			formatCoV(row.CoVPercent), formatRatio(row.Ratio), formatPercent(row.OverheadPercent), formatMDE(row), formatP(row.PValue),
			formatP(row.PValueHolm), formatSignificant(row.Significant), ratioCell(row), changeMark(row), orDash(row.Verdict))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if r.Comparisons > 0 {
		fmt.Fprintf(w, "significant after %s: %d of %d comparisons (%d at p < %g uncorrected)\n", Correction,
			r.significant(func(row Row) *float64 { return row.PValueHolm }), r.Comparisons,
			r.significant(func(row Row) *float64 { return row.PValue }), Alpha)
	}
	for _, line := range r.legend(emulated, trimmed) {
		fmt.Fprintln(w, line)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
	if err := r.writeKVMBands(w); err != nil {
		return err
	}
	if err := r.writeSweeps(w); err != nil {
		return err
	}
	return r.writeRuns(w)
}

// significant counts the rows whose p-value, as p picks it, is below Alpha.
func (r *Report) significant(p func(Row) *float64) int {
	n := 0
	for _, row := range r.Rows {
		if v := p(row); v != nil && *v < Alpha {
			n++
		}
	}
	return n
}

// legend says what every statistic of the table is, so that the table can be read on its own.
func (r *Report) legend(emulated, trimmed bool) []string {
	lines := []string{
		"n counts repetitions: the values of one repetition's nodes (or node pairs) are averaged first, since the nodes of one run " +
			"measure at the same time under the same conditions and are not independent repetitions",
		"COV: coefficient of variation of the repetition means (standard deviation / mean), per platform",
	}
	if r.Comparisons > 0 {
		lines = append(lines,
			fmt.Sprintf("P: Welch's two-sided p-value, uncorrected; P HOLM: adjusted with %s over the family of all %d comparisons "+
				"in this report (every metric of every benchmark, each platform against the baseline); SIGNIFICANT: P HOLM < %g",
				Correction, r.Comparisons, Alpha),
			fmt.Sprintf("MDE: minimum detectable effect, in %% of the baseline mean: the smallest difference the suite detects with power %g "+
				"at the observed spread and n, from the exact power of Welch's test under normality (over both sample variances) at a = %g/%d "+
				"(the strictest Holm step); a difference below it can go undetected, so \"not significant\" does not rule it out",
				Power, Alpha, r.Comparisons))
	} else {
		lines = append(lines, fmt.Sprintf("P, P HOLM (%s), SIGNIFICANT and MDE (minimum detectable effect) need 2 repetitions on both sides", Correction))
	}
	lines = append(lines, "PLAT/BASE: the platform's mean over the baseline's, as measured (above 1 is more, whichever way the metric improves); "+
		RatioMethod+"; CHANGE: the ratio's change in % where the verdict is slower or faster, ~ where no difference is shown; "+
		fmt.Sprintf("VERDICT: slower/faster when P HOLM < %g, equivalent when the whole interval lies within ±%g%%, inconclusive otherwise", Alpha, r.Tolerance*100))
	lines = append(lines, "n/a: fewer than 2 repetitions on a side (no interval, no CoV, no test, no MDE: raise spec.repetitions) or no baseline value; "+
		"OVERHEAD is how much worse than the baseline, in the metric's bad direction")
	if emulated {
		lines = append(lines, EmulatedNote)
	}
	if trimmed {
		lines = append(lines, "*: per-sample detail was dropped from the status to fit its size; statistics come from its count, mean and stddev "+
			"over every sample, so n counts samples and each node's value counts as independent: intervals and p-values are too optimistic")
	}
	return lines
}
