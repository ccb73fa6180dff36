// Package report turns a BenchmarkSuite's status into tables, plots and regression checks: every
// other platform against the baseline platform, with 95% confidence intervals over repetitions,
// coefficients of variation, Welch's t-test corrected with Holm-Bonferroni over all comparisons of
// the report, and the minimum effect the suite could have detected.
package report

import (
	"errors"
	"fmt"
	"math"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// EmulatedNote is the footnote of every output that shows emulated figures.
const EmulatedNote = "(emulated): the VMs ran under QEMU software emulation (TCG), not KVM; these figures do not measure VM overhead"

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

// Report is one suite's results, arranged for reading.
type Report struct {
	Suite    string
	Baseline string
	// Tolerance is the half-width of the band, as a fraction of 1, inside which a ratio counts as
	// equivalent.
	Tolerance float64
	Rows      []Row
	// Summaries are per platform: each benchmark, each resource and the overall figure.
	Summaries []PlatformSummary
	// Context is the one line that says what was measured on what.
	Context string
	// Comparisons is the size of the family that Holm's correction covers: every row with a test.
	Comparisons int
	// Runs say how each run went: for VMs the accelerator, network, boot times, and for every run
	// the time orchestration took besides the benchmarks.
	Runs []RunRow
	// Startup is, per platform, its runs' time to workload and, for VMs, what Kubernetes reserved per
	// VM beyond its guest; empty for statuses from before vmbench recorded them.
	Startup []PlatformStartup
	// VMSettings are, per VM platform, how its VMs were built; empty for statuses from before vmbench
	// recorded them, unless the spec sets some.
	VMSettings []PlatformVMSettings
	// Notes are facts a reader of the table must know: failed executions, the suite's warnings.
	Notes []string
	// Sweeps are the HPL sweeps of hpcc benchmarks that ran several points per execution.
	Sweeps []HPLSweepTable
}

// Options change how Build judges.
type Options struct {
	// Tolerance overrides the suite's spec.report.tolerancePercent (a fraction: 0.05 for 5%).
	Tolerance *float64
}

// Build compares every platform with the suite's baseline platform, benchmark by benchmark, in spec
// order, with the suite's tolerance. It fails when the suite has no results to compare.
func Build(suite *vmbenchv1.BenchmarkSuite) (*Report, error) {
	return BuildWith(suite, Options{})
}

// BuildWith is Build with options.
func BuildWith(suite *vmbenchv1.BenchmarkSuite, opts Options) (*Report, error) {
	if !hasMetrics(suite) {
		msg := fmt.Sprintf("suite %s has no results yet", suiteName(suite))
		if suite.Status.Phase != "" {
			msg += fmt.Sprintf(" (phase %s", suite.Status.Phase)
			if suite.Status.Progress != "" {
				msg += ", runs finished " + suite.Status.Progress
			}
			msg += ")"
		}
		return nil, errors.New(msg)
	}
	r := &Report{Suite: suiteName(suite), Baseline: baselineOf(suite), Tolerance: toleranceOf(suite, opts)}
	if r.Tolerance < 0 || math.IsNaN(r.Tolerance) {
		return nil, fmt.Errorf("tolerance must not be negative, got %g%%", r.Tolerance*100)
	}
	emulated := emulatedPlatforms(suite)
	for _, bench := range benchmarkOrder(suite) {
		base := findResult(suite, bench, r.Baseline)
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
	r.judgeRows()
	r.Summaries = summarize(r.Rows, platformOrder(suite))
	r.VMSettings = vmSettingsOf(suite)
	r.Context = contextLine(suite, r)
	r.Startup = startupOf(suite, platformOrder(suite))
	for _, res := range suite.Status.Results {
		if res.Failures > 0 {
			note := fmt.Sprintf("%s on %s: %d failed execution(s)", res.Benchmark, res.Platform, res.Failures)
			if res.LastError != "" {
				note += "; last error: " + res.LastError
			}
			r.Notes = append(r.Notes, note)
		}
	}
	for _, bench := range concurrentBenchmarks(suite) {
		r.Notes = append(r.Notes, fmt.Sprintf("%s %s: it ran on all nodes of each run at once (concurrency AllNodes), so each node's value "+
			"includes the contention of the other nodes; compare it with runs of the same concurrency only", bench, AllNodesMark))
	}
	r.Notes = append(r.Notes, sharedStorageNotes(suite)...)
	r.Notes = append(r.Notes, suite.Status.Warnings...)
	r.Sweeps = sweepTables(suite)
	for _, run := range suite.Status.Runs {
		row := RunRow{Name: run.Name, Platform: run.Platform, Phase: string(run.Phase),
			Accelerator: string(run.Accelerator), Network: run.Network, BootSeconds: run.BootSeconds,
			OrchestrationSeconds: run.OrchestrationSeconds}
		if run.Compacted != nil && len(run.BootSeconds) == 0 {
			row.SlowestBootSeconds = run.Compacted.MaxBootSeconds
		}
		r.Runs = append(r.Runs, row)
	}
	return r, nil
}

func rowsFor(bench, metric, baseline string, base *vmbenchv1.BenchmarkResult, others []vmbenchv1.BenchmarkResult,
	emulated map[string]bool) []Row {
	template := Row{Benchmark: bench, Metric: metric, BaselinePlatform: baseline}
	var baseSummary, baseLog *Summary
	if base != nil {
		template.BaselineEmulated = base.Emulated || emulated[baseline]
		if m := findMetricSummary(base.Metrics, metric); m != nil && m.N > 0 {
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
		m := findMetricSummary(other.Metrics, metric)
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
