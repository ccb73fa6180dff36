package report

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// The expected figures below were computed by hand (a calculator, or python3's math module), not
// with this package, from:
//   - Student t quantiles from a printed table: t(0.975; 4) = 2.776445105, t(0.975; 8) = 2.306004135.
//   - Fixtures whose logarithms are chosen: a side of 3 repetitions at m·e^-0.1, m, m·e^0.1 has
//     log mean ln m and log standard deviation sqrt((0.01 + 0 + 0.01)/2) = 0.1.
//
// Two such sides (m = 100 and m = 50) have a log difference ln 0.5, standard error
// sqrt(0.01/3 + 0.01/3) = 0.0816497 and Welch df (2v)²/(2v²/2) = 4, so the 95% interval is
// 0.5·exp(±2.776445·0.0816497) = [0.398582, 0.627224]; for a lower-is-better metric the ratio is
// inverted: 2 in [1/0.627224, 1/0.398582] = [1.594326, 2.508896].

// spread3 is the three repetitions m·e^-d, m, m·e^d.
func spread3(m, d float64) []float64 {
	return []float64{m * math.Exp(-d), m, m * math.Exp(d)}
}

// metricOf is a metric with one value per repetition, on one node.
func metricOf(name string, dir vmbenchv1.Direction, values []float64) vmbenchv1.MetricSummary {
	var samples []vmbenchv1.Sample
	for i, v := range values {
		samples = append(samples, vmbenchv1.Sample{Repetition: int32(i + 1), Node: "master", Value: v})
	}
	return summary(name, "u", dir, samples)
}

// fixtureMetric is one metric of the fixture suite: its benchmark, direction and both sides.
type fixtureMetric struct {
	bench, name   string
	dir           vmbenchv1.Direction
	container, vm []float64
}

// fixtureSuite builds a container/vm suite; benchmark "cpu" is sysbench-cpu (compute), "net" is
// iperf3 (network).
func fixtureSuite(metrics []fixtureMetric) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{Spec: vmbenchv1.BenchmarkSuiteSpec{
		Platforms: []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}},
		Baseline:  "container",
		Benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
			{Name: "net", Type: vmbenchv1.BenchmarkIperf3}},
	}}
	s.Name = "fixture"
	for _, platform := range []string{"container", "vm"} {
		for _, bench := range []string{"cpu", "net"} {
			res := vmbenchv1.BenchmarkResult{Benchmark: bench, Platform: platform}
			for _, m := range metrics {
				if m.bench != bench {
					continue
				}
				values := m.container
				if platform == "vm" {
					values = m.vm
				}
				res.Metrics = append(res.Metrics, metricOf(m.name, m.dir, values))
			}
			if len(res.Metrics) > 0 {
				s.Status.Results = append(s.Status.Results, res)
			}
		}
	}
	return s
}

func rowOf(t *testing.T, rep *Report, metric string) Row {
	t.Helper()
	for _, r := range rep.Rows {
		if r.Metric == metric && r.Platform == "vm" {
			return r
		}
	}
	t.Fatalf("no vm row for %s", metric)
	return Row{}
}

func checkNear(t *testing.T, what string, got *float64, want, tol float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: nil, want %.6g", what, want)
		return
	}
	if math.Abs(*got-want) > tol*math.Abs(want) {
		t.Errorf("%s: %.7g, want %.7g", what, *got, want)
	}
}

func TestRatioAndVerdict(t *testing.T) {
	rep, err := Build(fixtureSuite([]fixtureMetric{
		{"cpu", "half", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"cpu", "half_time", vmbenchv1.LowerIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		// 1.01·exp(±2.776445·sqrt(2·0.0001/3)) = [0.987361, 1.033158]: inside ±5%.
		{"cpu", "same", vmbenchv1.HigherIsBetter, spread3(100, 0.01), spread3(101, 0.01)},
		// No spread anywhere: the interval is the point. Equal means: p = 1, ratio 1, equivalent.
		// 12 against 10: p = 0 (every value differs), ratio 1.2 outside the band: faster.
		{"cpu", "flat", vmbenchv1.HigherIsBetter, []float64{10, 10}, []float64{10, 10}},
		{"cpu", "flat_up", vmbenchv1.HigherIsBetter, []float64{10, 10}, []float64{12, 12}},
		// One repetition on a side: the ratio 8/10 without an interval, inconclusive.
		{"net", "once", vmbenchv1.HigherIsBetter, []float64{10, 10}, []float64{8}},
		// A zero value: no log, no ratio.
		{"net", "zero", vmbenchv1.LowerIsBetter, []float64{0, 0}, []float64{1, 2}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	half := rowOf(t, rep, "half")
	checkNear(t, "half ratio", half.SpeedRatio, 0.5, 1e-9)
	checkNear(t, "half low", half.SpeedRatioLow, 0.398582, 1e-5)
	checkNear(t, "half high", half.SpeedRatioHigh, 0.627224, 1e-5)
	if half.Verdict != Slower || half.PValueHolm == nil || *half.PValueHolm >= Alpha {
		t.Errorf("half: verdict %s, Holm p %v; want slower with Holm p < %g", half.Verdict, half.PValueHolm, Alpha)
	}
	halfTime := rowOf(t, rep, "half_time")
	checkNear(t, "half_time ratio", halfTime.SpeedRatio, 2, 1e-9)
	checkNear(t, "half_time low", halfTime.SpeedRatioLow, 1.594326, 1e-5)
	checkNear(t, "half_time high", halfTime.SpeedRatioHigh, 2.508896, 1e-5)
	if halfTime.Verdict != Faster {
		t.Errorf("half_time: verdict %s, want faster", halfTime.Verdict)
	}
	same := rowOf(t, rep, "same")
	checkNear(t, "same low", same.SpeedRatioLow, 0.987361, 1e-5)
	checkNear(t, "same high", same.SpeedRatioHigh, 1.033158, 1e-5)
	if same.Verdict != Equivalent || changeMark(same) != "~" {
		t.Errorf("same: verdict %s, mark %s; want equivalent, ~", same.Verdict, changeMark(same))
	}
	flat := rowOf(t, rep, "flat")
	checkNear(t, "flat low", flat.SpeedRatioLow, 1, 1e-12)
	checkNear(t, "flat high", flat.SpeedRatioHigh, 1, 1e-12)
	if flat.Verdict != Equivalent {
		t.Errorf("flat: verdict %s, want equivalent", flat.Verdict)
	}
	up := rowOf(t, rep, "flat_up")
	checkNear(t, "flat_up low", up.SpeedRatioLow, 1.2, 1e-12)
	if up.Verdict != Faster || changeMark(up) != "+20.0%" {
		t.Errorf("flat_up: verdict %s, mark %s; want faster, +20.0%%", up.Verdict, changeMark(up))
	}
	once := rowOf(t, rep, "once")
	checkNear(t, "once ratio", once.SpeedRatio, 0.8, 1e-12)
	if once.SpeedRatioLow != nil || once.Verdict != Inconclusive || once.RatioNote != NoIntervalNote {
		t.Errorf("once: low %v, verdict %s, note %q", once.SpeedRatioLow, once.Verdict, once.RatioNote)
	}
	zero := rowOf(t, rep, "zero")
	if zero.SpeedRatio != nil || zero.Verdict != Inconclusive || zero.RatioNote != NonPositiveNote {
		t.Errorf("zero: ratio %v, verdict %s, note %q", zero.SpeedRatio, zero.Verdict, zero.RatioNote)
	}
}

func TestToleranceChangesEquivalence(t *testing.T) {
	suite := fixtureSuite([]fixtureMetric{{"cpu", "same", vmbenchv1.HigherIsBetter, spread3(100, 0.01), spread3(101, 0.01)}})
	// [0.987361, 1.033158] is not inside ±3%.
	rep, err := BuildWith(suite, Options{Tolerance: pointer(0.03)})
	if err != nil {
		t.Fatal(err)
	}
	if v := rowOf(t, rep, "same").Verdict; v != Inconclusive {
		t.Errorf("at ±3%%: %s, want inconclusive", v)
	}
	// The suite's own tolerance applies without the option.
	suite.Spec.Report = &vmbenchv1.ReportSpec{TolerancePercent: pointer(3.0)}
	if rep, err = Build(suite); err != nil {
		t.Fatal(err)
	}
	if rep.Tolerance != 0.03 || rowOf(t, rep, "same").Verdict != Inconclusive {
		t.Errorf("suite tolerance %g, verdict %s", rep.Tolerance, rowOf(t, rep, "same").Verdict)
	}
	if _, err := BuildWith(suite, Options{Tolerance: pointer(-0.01)}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Errorf("negative tolerance: %v", err)
	}
}

// TestSummaryWeighsBenchmarks: benchmark cpu has ratios 0.5 and 2 (geometric mean 1), net has 0.25.
// Each benchmark weighs the same: overall sqrt(1·0.25) = 0.5, not (0.5·2·0.25)^(1/3) = 0.63. Every
// metric's log standard error is s = 0.0816497 on 4 df (see the top of this file), so cpu's is
// sqrt(2s²)/2 on (2s²)²/(2s⁴/4) = 8 df, and the overall's sqrt(s²/2 + s²)/2 = 0.05 on
// (1.5s²)²/((s²/2)²/8 + s⁴/4) = 8 df: 0.5·exp(±2.306004·0.05) = [0.445549, 0.561105]; cpu's interval
// exp(±2.306004·0.0577350) = [0.875345, 1.142407].
func TestSummaryWeighsBenchmarks(t *testing.T) {
	rep, err := Build(fixtureSuite([]fixtureMetric{
		{"cpu", "half", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"cpu", "double", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(200, 0.1)},
		{"cpu", "cpu_usage_percent", vmbenchv1.LowerIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"net", "quarter", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(25, 0.1)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Summaries) != 1 {
		t.Fatalf("%d platform summaries, want 1", len(rep.Summaries))
	}
	ps := rep.Summaries[0]
	checkNear(t, "overall", ps.Overall.Ratio, 0.5, 1e-9)
	checkNear(t, "overall low", ps.Overall.Low, 0.445549, 1e-5)
	checkNear(t, "overall high", ps.Overall.High, 0.561105, 1e-5)
	cpu := ps.Benchmarks[0]
	checkNear(t, "cpu", cpu.Ratio, 1, 1e-9)
	checkNear(t, "cpu low", cpu.Low, 0.875345, 1e-5)
	checkNear(t, "cpu high", cpu.High, 1.142407, 1e-5)
	// cpu_usage_percent (lower is better, halved: faster) has a verdict but stays out of the mean;
	// verdicts: half and quarter slower, double and cpu_usage_percent faster.
	if cpu.Metrics != 2 || cpu.Excluded != 1 || cpu.Counts.Total() != 3 || cpu.Worst == nil || cpu.Worst.Metric != "half" {
		t.Errorf("cpu: %d metrics, %d excluded, counts %+v, worst %v", cpu.Metrics, cpu.Excluded, cpu.Counts, cpu.Worst)
	}
	if ps.Overall.Worst == nil || ps.Overall.Worst.Metric != "quarter" {
		t.Errorf("overall worst %v, want quarter", ps.Overall.Worst)
	}
	var resources []string
	for _, g := range ps.Resources {
		resources = append(resources, g.Name)
	}
	if strings.Join(resources, ",") != "compute,network" {
		t.Errorf("resources %v", resources)
	}
	checkNear(t, "network", ps.Resources[1].Ratio, 0.25, 1e-9)
	want := "vm: 0.5× container [0.446, 0.561]; slower on 2 metrics, equivalent on 0, faster on 2, inconclusive on 0; worst: net quarter 0.25×"
	if got := rep.Headline(ps); got != want {
		t.Errorf("headline\n got %q\nwant %q", got, want)
	}
}

// TestSummaryWithoutInterval: one metric with one repetition leaves its benchmark and the overall
// figure without an interval, and says why.
func TestSummaryWithoutInterval(t *testing.T) {
	rep, err := Build(fixtureSuite([]fixtureMetric{
		{"cpu", "half", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"net", "once", vmbenchv1.HigherIsBetter, []float64{10}, []float64{8}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	ps := rep.Summaries[0]
	// sqrt(0.5·0.8) = 0.632456
	checkNear(t, "overall", ps.Overall.Ratio, 0.632456, 1e-5)
	if ps.Overall.Low != nil || ps.Overall.IntervalNote != NoIntervalNote || ps.Benchmarks[0].Low == nil {
		t.Errorf("overall low %v note %q; cpu low %v", ps.Overall.Low, ps.Overall.IntervalNote, ps.Benchmarks[0].Low)
	}
	if h := rep.Headline(ps); !strings.Contains(h, "[no interval: need >= 2 repetitions per side]") {
		t.Errorf("headline %q", h)
	}
}

func TestResourceOf(t *testing.T) {
	for _, tt := range []struct {
		typ    vmbenchv1.BenchmarkType
		metric string
		want   string
	}{
		{vmbenchv1.BenchmarkHPCC, "HPL_Tflops", Compute},
		{vmbenchv1.BenchmarkHPCC, "StarSTREAM_Triad", Memory},
		{vmbenchv1.BenchmarkHPCC, "MPIRandomAccess_GUPs", Memory},
		{vmbenchv1.BenchmarkHPCC, "AvgPingPongLatency_usec", Network},
		{vmbenchv1.BenchmarkHPCC, "NaturallyOrderedRingBandwidth_GBytes", Network},
		{vmbenchv1.BenchmarkSysbenchMemory, "bs1K_mib_per_second", Memory},
		{vmbenchv1.BenchmarkFio, "read_iops", Storage},
		{vmbenchv1.BenchmarkPing, "rtt_avg_ms", Network},
		{"unknown", "x", ""},
	} {
		if got := ResourceOf(tt.typ, tt.metric); got != tt.want {
			t.Errorf("ResourceOf(%s, %s) = %q, want %q", tt.typ, tt.metric, got, tt.want)
		}
	}
}

const quickSuite = "../../docs/report/quick-suite.yaml"

// TestFirstScreenGolden compares the first screen of the quick suite with testdata; run with
// -update to rewrite it after a deliberate change, and read the diff.
func TestFirstScreenGolden(t *testing.T) {
	suite, err := suitefile.Read(quickSuite, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteFirstScreen(&out); err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/quick-first-screen.golden"
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestFirstScreenGolden -update to create it)", err)
	}
	if out.String() != string(want) {
		t.Errorf("first screen differs from %s (go test -update rewrites it):\n%s", golden, out.String())
	}
}

// TestForests: the overview has a row per benchmark, per resource and the overall one; each plot
// renders as PNG and SVG.
func TestForests(t *testing.T) {
	rep, err := Build(fixtureSuite([]fixtureMetric{
		{"cpu", "half", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"net", "quarter", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(25, 0.1)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	forests := rep.Forests()
	if len(forests) != 3 || forests[0].Name != "forest-overview" || forests[1].Name != "cpu-forest" {
		t.Fatalf("forests %v", forests)
	}
	var labels []string
	for _, r := range rep.overviewRows() {
		labels = append(labels, r.label)
	}
	if got := strings.Join(labels, ","); got != "cpu (1),net (1),COMPUTE,NETWORK,OVERALL" {
		t.Errorf("overview rows %s", got)
	}
	for _, format := range []string{"png", "svg"} {
		data, err := forests[0].Render(format)
		if err != nil || len(data) < 1000 {
			t.Errorf("%s: %d bytes, %v", format, len(data), err)
		}
	}
}

// TestWriteHTML: the page carries the first screen and every plot, and names no external resource
// (the Chromium test, make test-html, checks what a browser actually loads).
func TestWriteHTML(t *testing.T) {
	rep, err := Build(fixtureSuite([]fixtureMetric{
		{"cpu", "half", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"net", "quarter", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(25, 0.1)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteHTML(&out); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	// sqrt(0.5·0.25) = 0.353553, each benchmark's log SE s = 0.0816497 on 4 df, the overall's
	// sqrt(2s²)/2 = 0.0577350 on 8 df: 0.353553·exp(±2.306004·0.0577350) = [0.309481, 0.403902].
	if !strings.Contains(page, "vm: 0.354× container [0.309, 0.404]") || strings.Count(page, `<svg class="plot"`) != len(rep.Forests()) {
		t.Errorf("page lacks the headline or a plot (%d plots): %.600s", strings.Count(page, `<svg class="plot"`), page[strings.Index(page, "<h1>"):])
	}
	for _, external := range []string{`src="http`, `href="http`, `url(http`, `url("http`, "<script", "<link"} {
		if strings.Contains(page, external) {
			t.Errorf("page contains %q", external)
		}
	}
}

// TestSummaryLeavesNetperfConfidenceOut: netperf's figures about its own interval (iterations taken,
// whether it was reached) get verdicts but stay out of the means: needing 10 iterations rather than
// 3 says how settled a result is, not how fast; net's mean is its transactions' ratio alone, 0.5.
func TestSummaryLeavesNetperfConfidenceOut(t *testing.T) {
	rep, err := Build(fixtureSuite([]fixtureMetric{
		{"net", "tcp_rr_transactions_per_second", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(50, 0.1)},
		{"net", "tcp_rr_confidence_iterations", vmbenchv1.LowerIsBetter, spread3(3, 0.1), spread3(10, 0.1)},
		{"net", "tcp_rr_confidence_achieved", vmbenchv1.HigherIsBetter, spread3(1, 0.1), spread3(1, 0.1)},
	}))
	if err != nil {
		t.Fatal(err)
	}
	net := rep.Summaries[0].Benchmarks[0]
	if net.Metrics != 1 || net.Excluded != 2 || net.Counts.Total() != 3 {
		t.Errorf("net: %d metrics, %d excluded, counts %+v; want 1, 2, 3", net.Metrics, net.Excluded, net.Counts)
	}
	checkNear(t, "net", net.Ratio, 0.5, 1e-9)
}
