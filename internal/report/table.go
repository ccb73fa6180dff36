// Package report turns a BenchmarkSuite's status into tables, plots and regression checks: every
// other platform against the baseline platform, with 95% confidence intervals over repetitions,
// coefficients of variation, Welch's t-test corrected with Holm-Bonferroni over all comparisons of
// the report, and the minimum effect the suite could have detected.
package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

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

// RunRow is one run of the suite.
type RunRow struct {
	Name        string
	Platform    string
	Phase       string
	Accelerator string
	Network     string
	// BootSeconds is per VM, in the run's node order: VMI created to the runner reaching it.
	BootSeconds []vmbenchv1.NodeTiming
	// SlowestBootSeconds is set instead of BootSeconds for a run whose per-node lists were compacted
	// in status: only its slowest VM's boot time is left.
	SlowestBootSeconds   *float64
	OrchestrationSeconds *float64
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

func hasMetrics(suite *vmbenchv1.BenchmarkSuite) bool {
	for _, res := range suite.Status.Results {
		for _, m := range res.Metrics {
			if m.N > 0 {
				return true
			}
		}
	}
	return false
}

func suiteName(suite *vmbenchv1.BenchmarkSuite) string {
	if suite.Namespace != "" {
		return suite.Namespace + "/" + suite.Name
	}
	return suite.Name
}

// baselineOf is spec.baseline, defaulted like the API server does; a suite whose baseline has no
// results at all is compared against its first platform with results.
func baselineOf(suite *vmbenchv1.BenchmarkSuite) string {
	baseline := suite.Spec.Baseline
	if baseline == "" {
		baseline = "container"
	}
	for _, res := range suite.Status.Results {
		if res.Platform == baseline {
			return baseline
		}
	}
	for _, p := range platformOrder(suite) {
		for _, res := range suite.Status.Results {
			if res.Platform == p {
				return p
			}
		}
	}
	return baseline
}

// AllNodesMark follows the name of a benchmark that ran on all nodes at once.
const AllNodesMark = "(all nodes at once)"

// concurrentBenchmarks are the benchmarks with results measured on all nodes at once, in report
// order.
func concurrentBenchmarks(suite *vmbenchv1.BenchmarkSuite) []string {
	concurrent := map[string]bool{}
	for _, res := range suite.Status.Results {
		concurrent[res.Benchmark] = concurrent[res.Benchmark] || res.Concurrent
	}
	var out []string
	for _, b := range benchmarkOrder(suite) {
		if concurrent[b] {
			out = append(out, b)
		}
	}
	return out
}

// emulatedPlatforms are the platforms with at least one run under software emulation.
func emulatedPlatforms(suite *vmbenchv1.BenchmarkSuite) map[string]bool {
	out := map[string]bool{}
	for _, run := range suite.Status.Runs {
		if run.Accelerator == vmbenchv1.AcceleratorEmulation {
			out[run.Platform] = true
		}
	}
	for _, res := range suite.Status.Results {
		if res.Emulated {
			out[res.Platform] = true
		}
	}
	return out
}

// benchmarkOrder is spec order, then benchmarks that only status knows.
func benchmarkOrder(suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, b := range suite.Spec.Benchmarks {
		names = appendNew(names, b.Name)
	}
	for _, res := range suite.Status.Results {
		names = appendNew(names, res.Benchmark)
	}
	return names
}

// platformOrder is spec order, then platforms that only status knows.
func platformOrder(suite *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, p := range suite.Spec.Platforms {
		names = appendNew(names, p.Name)
	}
	for _, res := range suite.Status.Results {
		names = appendNew(names, res.Platform)
	}
	return names
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func findResult(suite *vmbenchv1.BenchmarkSuite, bench, platform string) *vmbenchv1.BenchmarkResult {
	for i := range suite.Status.Results {
		res := &suite.Status.Results[i]
		if res.Benchmark == bench && res.Platform == platform {
			return res
		}
	}
	return nil
}

// otherResults are bench's results on every platform but the baseline, in platform order.
func otherResults(suite *vmbenchv1.BenchmarkSuite, bench, baseline string) []vmbenchv1.BenchmarkResult {
	var out []vmbenchv1.BenchmarkResult
	for _, p := range platformOrder(suite) {
		if p == baseline {
			continue
		}
		if res := findResult(suite, bench, p); res != nil {
			out = append(out, *res)
		}
	}
	return out
}

// metricOrder is the baseline's order, then metrics that only other platforms measured.
func metricOrder(base *vmbenchv1.BenchmarkResult, others []vmbenchv1.BenchmarkResult) []string {
	var names []string
	if base != nil {
		for _, m := range base.Metrics {
			names = appendNew(names, m.Name)
		}
	}
	for _, o := range others {
		for _, m := range o.Metrics {
			names = appendNew(names, m.Name)
		}
	}
	return names
}

func findMetricSummary(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

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

// writeRuns is the table of runs: what each VM run ran on and how long the machinery around the
// benchmarks took (VM boot: VMI created to the runner reaching the VM).
func (r *Report) writeRuns(w io.Writer) error {
	if len(r.Runs) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nRuns")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLATFORM\tPHASE\tACCELERATOR\tNETWORK\tVM BOOT (s)\tORCHESTRATION (s)")
	for _, run := range r.Runs {
		boot := make([]string, len(run.BootSeconds))
		for i, b := range run.BootSeconds {
			boot[i] = fmt.Sprintf("%s %.0f", b.Node, b.Seconds)
		}
		if run.SlowestBootSeconds != nil {
			boot = append(boot, fmt.Sprintf("slowest %.0f", *run.SlowestBootSeconds))
		}
		orchestration := "-"
		if run.OrchestrationSeconds != nil {
			orchestration = fmt.Sprintf("%.0f", *run.OrchestrationSeconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", run.Name, run.Platform, run.Phase, orDash(run.Accelerator),
			orDash(run.Network), orDash(strings.Join(boot, ", ")), orchestration)
	}
	return tw.Flush()
}

// ratioCell is the ratio in the higher-is-better sense with its interval: 0.871× [0.84, 0.90].
func ratioCell(row Row) string {
	if row.SpeedRatio == nil {
		if row.RatioNote != "" {
			return "n/a (value <= 0)"
		}
		return "n/a"
	}
	if row.SpeedRatioLow == nil {
		return formatSpeed(*row.SpeedRatio) + " [n/a]¹"
	}
	return formatSpeed(*row.SpeedRatio) + " " + formatInterval(row.SpeedRatioLow, row.SpeedRatioHigh)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// meanCell is the mean with its interval and n, and how many values the repetitions averaged when
// that is more than one per repetition: 1408 ± 38 (n=3, 9 values).
func meanCell(n, values int, mean, ci *float64, trimmed bool) string {
	if mean == nil {
		return "n/a"
	}
	count := strconv.Itoa(n)
	if trimmed {
		count += "*"
	} else if values > n {
		count += fmt.Sprintf(", %d values", values)
	}
	if ci == nil {
		return fmt.Sprintf("%s ± n/a (n=%s)", FormatValue(*mean), count)
	}
	return fmt.Sprintf("%s (n=%s)", FormatMeanCI(*mean, *ci), count)
}

// FormatMeanCI rounds the interval to two significant digits and the mean to the same decimal place,
// both with the mean's SI prefix: 1003.9 ± 4.9, 23.81G ± 0.76G, 0.000861 ± 0.000058.
func FormatMeanCI(mean, ci float64) string {
	if ci <= 0 || math.IsInf(ci, 0) || math.IsNaN(ci) {
		return FormatValue(mean) + " ± 0"
	}
	scale, suffix := siPrefix(mean)
	decimals := 1 - int(math.Floor(math.Log10(ci/scale)))
	decimals = max(0, min(decimals, 12))
	return fmt.Sprintf("%.*f%s ± %.*f%s", decimals, mean/scale, suffix, decimals, ci/scale, suffix)
}

// siPrefix is the prefix FormatValue uses for v.
func siPrefix(v float64) (float64, string) {
	abs := math.Abs(v)
	for _, p := range []struct {
		limit, scale float64
		suffix       string
	}{{1e12, 1e12, "T"}, {1e9, 1e9, "G"}, {1e6, 1e6, "M"}, {1e4, 1e3, "k"}} {
		if abs >= p.limit {
			return p.scale, p.suffix
		}
	}
	return 1, ""
}

// FormatValue prints four significant digits, with an SI prefix on large values so that bit/s and
// KiB/s stay readable: 9.412G, 218.6, 0.001234.
func FormatValue(v float64) string {
	scale, suffix := siPrefix(v)
	return trimFloat(v/scale) + suffix
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func formatRatio(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

func formatPercent(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

func formatP(v *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case *v < 0.0001:
		return "<0.0001"
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

func formatCoV(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// formatMDE is the minimum detectable effect relative to the baseline, or in the metric's unit
// when the baseline mean is 0.
func formatMDE(row Row) string {
	switch {
	case row.MDEPercent != nil:
		return fmt.Sprintf("%.1f%%", *row.MDEPercent)
	case row.MDE != nil:
		return FormatValue(*row.MDE) + " " + row.Unit
	}
	return "n/a"
}

func formatSignificant(v *bool) string {
	switch {
	case v == nil:
		return "n/a"
	case *v:
		return "yes"
	}
	return "no"
}

// WriteJSON writes the rows as an indented JSON array.
func (r *Report) WriteJSON(w io.Writer) error {
	rows := r.Rows
	if rows == nil {
		rows = []Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// csvHeader names the CSV columns after the JSON fields.
var csvHeader = []string{
	"benchmark", "metric", "unit", "direction",
	"baselinePlatform", "baselineEmulated", "baselineCount", "baselineSamples", "baselineMean", "baselineStdDev", "baselineCI95",
	"baselineCoVPercent", "platform", "emulated", "count", "samples", "mean", "stdDev", "ci95", "coVPercent",
	"ratio", "overheadPercent", "mde", "mdePercent", "welchT", "welchDF", "pValue", "pValueHolm", "significant", "samplesTrimmed",
	// Added after the first release: at the end, so that readers by position keep working.
	"resource", "speedRatio", "speedRatioLow", "speedRatioHigh", "ratioNote", "verdict",
}

// WriteCSV writes the rows with a header; a figure that does not exist is an empty cell.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, row := range r.Rows {
		record := []string{
			row.Benchmark, row.Metric, row.Unit, row.Direction,
			row.BaselinePlatform, strconv.FormatBool(row.BaselineEmulated), strconv.Itoa(row.BaselineCount), strconv.Itoa(row.BaselineSamples),
			csvFloat(row.BaselineMean), csvFloat(row.BaselineStdDev), csvFloat(row.BaselineCI95), csvFloat(row.BaselineCoVPercent),
			row.Platform, strconv.FormatBool(row.Emulated), strconv.Itoa(row.Count), strconv.Itoa(row.Samples),
			csvFloat(row.Mean), csvFloat(row.StdDev), csvFloat(row.CI95), csvFloat(row.CoVPercent),
			csvFloat(row.Ratio), csvFloat(row.OverheadPercent), csvFloat(row.MDE), csvFloat(row.MDEPercent),
			csvFloat(row.WelchT), csvFloat(row.WelchDF), csvFloat(row.PValue), csvFloat(row.PValueHolm),
			csvBool(row.Significant), strconv.FormatBool(row.SamplesTrimmed),
			row.Resource, csvFloat(row.SpeedRatio), csvFloat(row.SpeedRatioLow), csvFloat(row.SpeedRatioHigh), row.RatioNote, row.Verdict,
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(v *float64) string {
	if v == nil || math.IsInf(*v, 0) || math.IsNaN(*v) {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func csvBool(v *bool) string {
	if v == nil {
		return ""
	}
	return strconv.FormatBool(*v)
}
