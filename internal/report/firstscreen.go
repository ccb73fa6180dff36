package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// toleranceOf is the option's tolerance, else the suite's spec.report.tolerancePercent, else
// DefaultTolerance.
func toleranceOf(suite *vmbenchv1.BenchmarkSuite, opts Options) float64 {
	switch {
	case opts.Tolerance != nil:
		return *opts.Tolerance
	case suite.Spec.Report != nil && suite.Spec.Report.TolerancePercent != nil:
		return *suite.Spec.Report.TolerancePercent / 100
	}
	return DefaultTolerance
}

// contextLine says what was measured on what: the cluster's shape, its QoS, how each VM platform
// ran (and, for a VM variant, how its VMs were built), the repetitions and the tolerance.
func contextLine(suite *vmbenchv1.BenchmarkSuite, r *Report) string {
	c := suite.Spec.Cluster
	var parts []string
	shape := fmt.Sprintf("%d nodes × %d CPU", c.Nodes, c.CPU)
	if c.Memory != nil {
		shape += ", " + c.Memory.String()
	}
	parts = append(parts, shape+" per platform")
	if below(c.CPURequest, resource.NewQuantity(int64(c.CPU), resource.DecimalSI)) || below(c.MemoryRequest, c.Memory) {
		parts = append(parts, "Burstable QoS (requests below limits: neighbours can take CPU)")
	} else {
		parts = append(parts, "Guaranteed QoS")
	}
	for _, p := range suite.Spec.Platforms {
		if p.Type != vmbenchv1.PlatformVM {
			continue
		}
		parts = append(parts, p.Name+" "+acceleratorOf(suite, p.Name)+r.vmSettingsPart(p.Name))
	}
	var reps []string
	for _, p := range platformOrder(suite) {
		if n := repetitionsOf(r.Rows, p, r.Baseline); n > 0 {
			reps = append(reps, fmt.Sprintf("%s %d", p, n))
		}
	}
	parts = append(parts, "repetitions: "+strings.Join(reps, ", "))
	parts = append(parts, fmt.Sprintf("tolerance ±%g%%", r.Tolerance*100))
	if p := precisionPart(suite); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// precisionPart says, for a suite with spec.precision, the target and whether each platform
// reached it, as status.precision records; empty without spec.precision.
func precisionPart(suite *vmbenchv1.BenchmarkSuite) string {
	p := suite.Spec.Precision
	if p == nil {
		return ""
	}
	head := fmt.Sprintf("precision target ±%g%% on %s, %d to %d repetitions", p.HalfWidthPercent, strings.Join(p.Metrics, ", "),
		suite.Spec.Repetitions, p.MaxRepetitions)
	st := suite.Status.Precision
	if st == nil || len(st.Platforms) == 0 {
		return head + ": not judged yet"
	}
	var platforms []string
	for _, pp := range st.Platforms {
		verdict := "reached"
		if !pp.Reached {
			verdict = "not reached"
			if pp.Repetitions >= p.MaxRepetitions {
				verdict = "not reached at the cap"
			}
		}
		width := "unknown"
		if pp.HalfWidthPercent != nil {
			width = fmt.Sprintf("±%.3g%%", *pp.HalfWidthPercent)
		}
		detail := fmt.Sprintf("%d repetitions", pp.Repetitions)
		if pp.Repetitions == 1 {
			detail = "1 repetition"
		}
		if pp.Metric != "" {
			detail = fmt.Sprintf("widest %s %s after %s", pp.Metric, width, detail)
		}
		platforms = append(platforms, fmt.Sprintf("%s %s (%s)", pp.Platform, verdict, detail))
	}
	return head + ": " + strings.Join(platforms, ", ")
}

func below(request, limit *resource.Quantity) bool {
	return request != nil && limit != nil && request.Cmp(*limit) < 0
}

// acceleratorOf says how a VM platform's runs ran: on KVM, emulated, or a mix.
func acceleratorOf(suite *vmbenchv1.BenchmarkSuite, platform string) string {
	seen := map[vmbenchv1.Accelerator]bool{}
	for _, run := range suite.Status.Runs {
		if run.Platform == platform && run.Accelerator != "" {
			seen[run.Accelerator] = true
		}
	}
	switch {
	case seen[vmbenchv1.AcceleratorKVM] && seen[vmbenchv1.AcceleratorEmulation]:
		return "partly KVM, partly emulated (TCG)"
	case seen[vmbenchv1.AcceleratorEmulation]:
		return "emulated (TCG, no KVM: not VM overhead)"
	case seen[vmbenchv1.AcceleratorKVM]:
		return "on KVM"
	}
	return "accelerator unknown"
}

// repetitionsOf is the largest number of repetitions of any metric of a platform.
func repetitionsOf(rows []Row, platform, baseline string) int {
	n := 0
	for _, row := range rows {
		switch platform {
		case row.Platform:
			n = max(n, row.Count)
		case baseline:
			n = max(n, row.BaselineCount)
		}
	}
	return n
}

// Headline is the first screen's sentence for one platform: its overall ratio with the interval,
// its verdict counts and its worst metric.
func (r *Report) Headline(ps PlatformSummary) string {
	name := ps.Platform
	if ps.Emulated {
		name += " (emulated)"
	}
	var b strings.Builder
	b.WriteString(name + ": ")
	o := ps.Overall
	if o.Ratio == nil {
		b.WriteString("no ratio")
	} else {
		interval := formatInterval(o.Low, o.High)
		if o.Low == nil {
			interval = "[no interval: " + NoIntervalNote[:strings.Index(NoIntervalNote, " for")] + "]"
		}
		fmt.Fprintf(&b, "%s %s %s", formatSpeed(*o.Ratio), r.Baseline, interval)
	}
	fmt.Fprintf(&b, "; slower on %s, equivalent on %d, faster on %d, inconclusive on %d", plural(o.Counts.Slower, "metric"),
		o.Counts.Equivalent, o.Counts.Faster, o.Counts.Inconclusive)
	if o.Worst != nil {
		fmt.Fprintf(&b, "; worst: %s", worstText(*o.Worst))
	}
	return b.String()
}

// worstText names a metric with its ratio, and for a lower-is-better metric the plain ratio of its
// values too, which is the figure a reader sees in the tool's output: 0.00666× (150× the ns).
func worstText(row Row) string {
	s := fmt.Sprintf("%s %s %s", row.Benchmark, row.Metric, formatSpeed(*row.SpeedRatio))
	if row.Direction == string(vmbenchv1.LowerIsBetter) {
		s += fmt.Sprintf(" (%s the %s, lower is better)", formatSpeed(1 / *row.SpeedRatio), row.Unit)
	}
	return s
}

// WriteFirstScreen prints the answer: a sentence per platform, a migration line per migration
// benchmark and VM platform, the context line, and the table per
// benchmark and resource with its footnotes.
func (r *Report) WriteFirstScreen(w io.Writer) error {
	fmt.Fprintf(w, "Suite %s: every platform against baseline %q; ratio in the higher-is-better sense (1 = same), 95%% interval in brackets\n\n",
		r.Suite, r.Baseline)
	for _, ps := range r.Summaries {
		fmt.Fprintln(w, r.Headline(ps))
	}
	r.writeMigrations(w)
	fmt.Fprintf(w, "context: %s\n\n", r.Context)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLATFORM\tSUMMARY\tRATIO\t95% CI\tMETRICS\tSLOWER\tEQUIV\tFASTER\tINCONCL\tWORST")
	noInterval, excluded := false, false
	for _, ps := range r.Summaries {
		for _, g := range ps.Groups() {
			name := g.Name
			if g.Kind == KindResource {
				name = "[" + name + "]"
			}
			if g.Kind == KindOverall {
				name = "= overall"
			}
			ratio := "n/a"
			if g.Ratio != nil {
				ratio = formatSpeed(*g.Ratio)
			}
			interval := formatInterval(g.Low, g.High)
			if g.NoInterval() {
				interval += "¹"
				noInterval = true
			}
			metrics := fmt.Sprint(g.Metrics)
			if g.Excluded > 0 {
				metrics += fmt.Sprintf(" (+%d)²", g.Excluded)
				excluded = true
			}
			worst := "-"
			if g.Worst != nil {
				worst = fmt.Sprintf("%s %s", g.Worst.Metric, formatSpeed(*g.Worst.SpeedRatio))
				if g.Kind != KindBenchmark {
					worst = g.Worst.Benchmark + " " + worst
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\n", ps.Platform, name, ratio, interval, metrics,
				g.Counts.Slower, g.Counts.Equivalent, g.Counts.Faster, g.Counts.Inconclusive, worst)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for _, line := range r.summaryLegend(noInterval, excluded) {
		fmt.Fprintln(w, line)
	}
	if err := r.writeVMSettings(w); err != nil {
		return err
	}
	return r.writeStartup(w)
}

// summaryLegend explains the first screen's figures.
func (r *Report) summaryLegend(noInterval, excluded bool) []string {
	lines := []string{
		"RATIO: geometric mean of the metrics' ratios (higher-is-better sense); a benchmark's metrics first, then the benchmarks, " +
			"each weighing the same ([resource]: each benchmark's metrics of that resource; HPCC's STREAM and RandomAccess count as memory, " +
			"its PingPong and Ring as network); its interval treats the metrics as independent, which they are not, so it is too narrow " +
			"where metrics move together, and it covers repetition noise only, not the choice of benchmarks",
		fmt.Sprintf("verdicts: slower/faster when Welch's test survives %s (P HOLM < %g); equivalent when the whole 95%% interval of the ratio "+
			"lies within ±%g%%; inconclusive otherwise", Correction, Alpha, r.Tolerance*100),
	}
	if len(r.Migrations) > 0 {
		lines = append(lines, MigrationLegend)
	}
	if noInterval {
		lines = append(lines, "¹ "+NoIntervalNote+": every verdict is inconclusive (raise spec.repetitions)")
	}
	if excluded {
		line := "² metrics outside the geometric mean but counted in the verdicts: the tool's own CPU and memory usage, and values <= 0"
		if len(r.Sweeps) > 0 {
			line += "; and the points of HPL sweeps, for which HPL_Tflops, each HPCC execution's fastest point, stands"
		}
		lines = append(lines, line)
	}
	return lines
}
