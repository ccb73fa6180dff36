// Package analysis holds the statistics of vmbench's report: every other platform against the
// baseline platform, with 95% confidence intervals over repetitions, Welch's t-test corrected with
// Holm-Bonferroni over all comparisons, the minimum effect the suite could have detected, a verdict
// per metric and the summaries per benchmark, resource and platform. The manager links it for its
// metrics and precision targets; internal/report renders it with tables and plots, which the manager
// does not link.
package analysis

import (
	"errors"
	"fmt"
	"math"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// DefaultTolerance is how far a metric may move in its bad direction before it counts as a
// regression: 5%.
const DefaultTolerance = 0.05

// Row compares one metric of one platform with the same metric on the baseline platform. Pointers
// are nil ("n/a") where a figure does not exist: no interval or test below two values, no ratio
// without a baseline mean.
type Row struct {
	Benchmark string `json:"benchmark"`
	Metric    string `json:"metric"`
	Unit      string `json:"unit"`
	Direction string `json:"direction"`

	BaselinePlatform string `json:"baselinePlatform"`
	BaselineEmulated bool   `json:"baselineEmulated"`
	// BaselineCount is the number of repetitions (of samples when SamplesTrimmed); every statistic
	// is over the repetition means, see Summary.
	BaselineCount int `json:"baselineCount"`
	// BaselineSamples is how many values the repetitions hold: every node of every repetition.
	BaselineSamples int      `json:"baselineSamples"`
	BaselineMean    *float64 `json:"baselineMean"`
	BaselineStdDev  *float64 `json:"baselineStdDev"`
	// BaselineCI95 is the half-width of the baseline mean's 95% confidence interval.
	BaselineCI95 *float64 `json:"baselineCI95"`
	// BaselineCoVPercent is the baseline's coefficient of variation, in percent.
	BaselineCoVPercent *float64 `json:"baselineCoVPercent"`

	// Platform is empty on a row of a metric that only the baseline measured.
	Platform string `json:"platform"`
	Emulated bool   `json:"emulated"`
	// Concurrent is true when either side was measured on all nodes at once (concurrency AllNodes).
	Concurrent bool     `json:"concurrent,omitempty"`
	Count      int      `json:"count"`
	Samples    int      `json:"samples"`
	Mean       *float64 `json:"mean"`
	StdDev     *float64 `json:"stdDev"`
	CI95       *float64 `json:"ci95"`
	// CoVPercent is the platform's coefficient of variation, in percent.
	CoVPercent *float64 `json:"coVPercent"`

	Ratio *float64 `json:"ratio"`
	// OverheadPercent is how much worse the platform is than the baseline, whichever way the metric
	// improves; negative when it is better.
	OverheadPercent *float64 `json:"overheadPercent"`

	// MDE is the minimum detectable effect (MinDetectableEffect at the report's strictest Holm
	// level, Alpha over the number of comparisons, and power Power), in the metric's unit;
	// MDEPercent is the same relative to the baseline mean.
	MDE        *float64 `json:"mde"`
	MDEPercent *float64 `json:"mdePercent"`

	WelchT  *float64 `json:"welchT"`
	WelchDF *float64 `json:"welchDF"`
	// PValue is Welch's two-sided p-value, uncorrected.
	PValue *float64 `json:"pValue"`
	// PValueHolm is PValue adjusted with Holm's procedure over every comparison of the report.
	PValueHolm *float64 `json:"pValueHolm"`
	// Significant is PValueHolm < Alpha.
	Significant *bool `json:"significant"`

	// SamplesTrimmed is true when either side's statistics come from the status's count, mean and
	// stddev because its per-sample detail was dropped: that side's n counts samples, not
	// repetitions, and its samples count as independent.
	SamplesTrimmed bool `json:"samplesTrimmed"`

	// Resource is what the metric measures: compute, memory, storage or network (ResourceOf).
	Resource string `json:"resource"`
	// SpeedRatio is platform/baseline in the higher-is-better sense (baseline/platform for a
	// lower-is-better metric), the ratio of the geometric means of the repetition means; below 1 the
	// platform is worse. Nil when a value is at or below 0.
	SpeedRatio *float64 `json:"speedRatio"`
	// SpeedRatioLow and SpeedRatioHigh bound SpeedRatio's 95% interval: Welch's interval of the
	// difference of the mean logarithms, exponentiated. Nil below 2 repetitions on a side.
	SpeedRatioLow  *float64 `json:"speedRatioLow"`
	SpeedRatioHigh *float64 `json:"speedRatioHigh"`
	// RatioNote says why SpeedRatio or its interval is missing.
	RatioNote string `json:"ratioNote"`
	// Verdict is slower, faster, equivalent or inconclusive (Judge); empty on a row without a
	// platform or a baseline.
	Verdict string `json:"verdict"`

	// log is SpeedRatio on the log scale with its standard error, for the summaries.
	log *logRatio
}

// Result is the comparison of every platform of one suite with its baseline platform.
type Result struct {
	Baseline string
	// Tolerance is the half-width of the band, as a fraction of 1, inside which a ratio counts as
	// equivalent.
	Tolerance float64
	Rows      []Row
	// Summaries are per platform: each benchmark, each resource and the overall figure.
	Summaries []PlatformSummary
	// Comparisons is the size of the family that Holm's correction covers: every row with a test.
	Comparisons int
}

// Tolerance is the suite's spec.report.tolerancePercent as a fraction, else DefaultTolerance.
func Tolerance(suite *vmbenchv1.BenchmarkSuite) float64 {
	if suite.Spec.Report != nil && suite.Spec.Report.TolerancePercent != nil {
		return *suite.Spec.Report.TolerancePercent / 100
	}
	return DefaultTolerance
}

// Analyze compares every platform with the suite's baseline platform, benchmark by benchmark, in
// spec order, with tolerance. It fails when the suite has no results to compare or the tolerance is
// negative.
func Analyze(suite *vmbenchv1.BenchmarkSuite, tolerance float64) (*Result, error) {
	if !HasMetrics(suite) {
		msg := fmt.Sprintf("suite %s has no results yet", SuiteName(suite))
		if suite.Status.Phase != "" {
			msg += fmt.Sprintf(" (phase %s", suite.Status.Phase)
			if suite.Status.Progress != "" {
				msg += ", runs finished " + suite.Status.Progress
			}
			msg += ")"
		}
		return nil, errors.New(msg)
	}
	r := &Result{Baseline: BaselineOf(suite), Tolerance: tolerance}
	if r.Tolerance < 0 || math.IsNaN(r.Tolerance) {
		return nil, fmt.Errorf("tolerance must not be negative, got %g%%", r.Tolerance*100)
	}
	emulated := EmulatedPlatforms(suite)
	for _, bench := range BenchmarkOrder(suite) {
		base := FindResult(suite, bench, r.Baseline)
		others := otherResults(suite, bench, r.Baseline)
		for _, metric := range metricOrder(base, others) {
			rows := rowsFor(bench, metric, r.Baseline, base, others, emulated)
			for i := range rows {
				rows[i].Resource = ResourceOf(benchmarkType(suite, bench), metric)
			}
			r.Rows = append(r.Rows, rows...)
		}
	}
	r.Comparisons = correct(r.Rows)
	judgeRows(r.Rows, r.Tolerance)
	r.Summaries = summarize(r.Rows, PlatformOrder(suite))
	return r, nil
}

func rowsFor(bench, metric, baseline string, base *vmbenchv1.BenchmarkResult, others []vmbenchv1.BenchmarkResult,
	emulated map[string]bool) []Row {
	template := Row{Benchmark: bench, Metric: metric, BaselinePlatform: baseline}
	var baseSummary, baseLog *Summary
	if base != nil {
		template.BaselineEmulated = base.Emulated || emulated[baseline]
		if m := FindMetricSummary(base.Metrics, metric); m != nil && m.N > 0 {
			s := Summarize(*m)
			baseSummary = &s
			template.Unit, template.Direction = m.Unit, string(m.Direction)
			template.BaselineCount, template.BaselineSamples = s.N, s.Samples
			template.BaselineMean, template.BaselineStdDev = pointer(s.Mean), pointer(s.StdDev)
			template.BaselineCI95, template.BaselineCoVPercent = ci95(s), covPercent(s)
			template.SamplesTrimmed = !s.FromSamples
			template.Concurrent = base.Concurrent
			if l, ok := LogSummary(*m); ok {
				baseLog = &l
			}
		}
	}
	var rows []Row
	for _, other := range others {
		m := FindMetricSummary(other.Metrics, metric)
		if m == nil || m.N == 0 {
			continue
		}
		row := template
		s := Summarize(*m)
		if row.Unit == "" {
			row.Unit, row.Direction = m.Unit, string(m.Direction)
		}
		row.Platform = other.Platform
		row.Emulated = other.Emulated || emulated[other.Platform]
		row.Count, row.Samples = s.N, s.Samples
		row.Mean, row.StdDev, row.CI95, row.CoVPercent = pointer(s.Mean), pointer(s.StdDev), ci95(s), covPercent(s)
		row.SamplesTrimmed = row.SamplesTrimmed || !s.FromSamples
		row.Concurrent = row.Concurrent || other.Concurrent
		if baseSummary != nil {
			compare(&row, *baseSummary, s)
		}
		if l, ok := LogSummary(*m); ok && baseLog != nil {
			row.log = pointer(ratioOfLogs(*baseLog, l, vmbenchv1.Direction(row.Direction)))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 && baseSummary != nil {
		rows = append(rows, template)
	}
	return rows
}

// compare fills the ratio, the overhead and Welch's test of row against the baseline; correct
// adds what depends on the other rows.
func compare(row *Row, base, other Summary) {
	if base.Mean != 0 {
		ratio := other.Mean / base.Mean
		row.Ratio = pointer(ratio)
		row.OverheadPercent = pointer(overheadPercent(ratio, vmbenchv1.Direction(row.Direction)))
	}
	if w, ok := Welch(base, other); ok {
		row.PValue = pointer(w.P)
		if !math.IsInf(w.T, 0) {
			row.WelchT = pointer(w.T)
		}
		if !math.IsNaN(w.DF) {
			row.WelchDF = pointer(w.DF)
		}
	}
}

// correct adjusts the rows' p-values with Holm's procedure, over every row with a test, decides
// significance on the adjusted values, and fills the minimum detectable effect at the strictest
// level of the procedure, Alpha/m: the level the smallest p-value must pass, so that an effect of
// that size is detected with power Power whatever the other comparisons show. It returns m.
func correct(rows []Row) int {
	p := make([]float64, len(rows))
	m := 0
	for i, row := range rows {
		p[i] = math.NaN()
		if row.PValue != nil {
			p[i] = *row.PValue
			m++
		}
	}
	adjusted := Holm(p)
	for i := range rows {
		row := &rows[i]
		if row.PValue == nil {
			continue
		}
		row.PValueHolm = pointer(adjusted[i])
		row.Significant = pointer(adjusted[i] < Alpha)
		base := Summary{N: row.BaselineCount, Mean: *row.BaselineMean, StdDev: *row.BaselineStdDev}
		other := Summary{N: row.Count, Mean: *row.Mean, StdDev: *row.StdDev}
		if mde, ok := MinDetectableEffect(base, other, Alpha/float64(m), Power); ok {
			row.MDE = pointer(mde)
			if base.Mean != 0 {
				row.MDEPercent = pointer(mde / math.Abs(base.Mean) * 100)
			}
		}
	}
	return m
}

func covPercent(s Summary) *float64 {
	if c, ok := CoV(s); ok {
		return pointer(c * 100)
	}
	return nil
}

// overheadPercent is how much worse ratio is than 1, in percent, in the metric's bad direction.
func overheadPercent(ratio float64, dir vmbenchv1.Direction) float64 {
	if dir == vmbenchv1.LowerIsBetter {
		return (ratio - 1) * 100
	}
	return (1 - ratio) * 100
}

func ci95(s Summary) *float64 {
	if hw, ok := CIHalfWidth(s, Confidence); ok {
		return &hw
	}
	return nil
}

func pointer[T any](v T) *T { return &v }
