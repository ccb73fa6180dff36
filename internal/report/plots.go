package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// PlotOptions say where the plots go and in which formats.
type PlotOptions struct {
	// Dir is created when it does not exist.
	Dir string
	// SVG writes an SVG next to every PNG.
	SVG bool
	// Tolerance overrides the suite's for the forest plots' band, as in Options.
	Tolerance *float64
}

// PlotOutput lists what WritePlots wrote, and why it skipped the plots it did not draw.
type PlotOutput struct {
	Files []string
	Notes []string
}

// pngDPI makes the PNGs sharp enough to read on a laptop screen and in a pull request.
const pngDPI = 120

// platformColors are the Okabe–Ito colours, which stay distinct for colour-blind readers.
var platformColors = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF},
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF},
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF},
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF},
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF},
}

// WritePlots draws the forest plots (Report.Forests) and, for every benchmark, the means per platform with their confidence intervals; and,
// when the suite has the data for them, HPL over the problem size, iozone heatmaps over file and
// record size, and the iperf3 bandwidth samples.
func WritePlots(suite *vmbenchv1.BenchmarkSuite, opts PlotOptions) (*PlotOutput, error) {
	if !hasMetrics(suite) {
		return nil, fmt.Errorf("suite %s has no results to plot", suiteName(suite))
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	pl := &figures{suite: suite, opts: opts, out: &PlotOutput{}, platforms: baselineFirst(suite), emulated: emulatedPlatforms(suite)}
	for _, step := range []func() error{pl.forests, pl.means, pl.boxes, pl.hplOverN, pl.iozoneHeatmaps, pl.iperf3Samples} {
		if err := step(); err != nil {
			return pl.out, err
		}
	}
	return pl.out, nil
}

// figures carries what every plot of one suite needs.
type figures struct {
	suite     *vmbenchv1.BenchmarkSuite
	opts      PlotOptions
	out       *PlotOutput
	platforms []string
	emulated  map[string]bool
}

func (pl *figures) note(format string, args ...any) {
	pl.out.Notes = append(pl.out.Notes, fmt.Sprintf(format, args...))
}

// label names a platform in legends and titles, marking emulation where the reader looks.
func (pl *figures) label(platform string) string {
	if pl.emulated[platform] {
		return platform + " (emulated)"
	}
	return platform
}

func (pl *figures) color(platform string) color.Color {
	for i, p := range pl.platforms {
		if p == platform {
			return platformColors[i%len(platformColors)]
		}
	}
	return color.Black
}

// emulationLine is a title line that warns about emulated platforms, or "".
func (pl *figures) emulationLine(platforms []string) string {
	var em []string
	for _, p := range platforms {
		if pl.emulated[p] {
			em = append(em, p)
		}
	}
	if len(em) == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s: emulated VMs (QEMU TCG, no KVM): not a measure of VM overhead", strings.Join(em, ", "))
}

// baselineFirst is platform order with the baseline moved to the front, so that it gets the first
// colour and the leftmost bar.
func baselineFirst(suite *vmbenchv1.BenchmarkSuite) []string {
	baseline := baselineOf(suite)
	out := []string{baseline}
	for _, p := range platformOrder(suite) {
		if p != baseline {
			out = append(out, p)
		}
	}
	return out
}

// means draws, per benchmark, one small panel per metric: each platform's mean as a bar with its 95%
// CI, in the metric's own unit, so that neither a large ratio nor a unit hides an interval.
func (pl *figures) means() error {
	for _, bench := range benchmarkOrder(pl.suite) {
		var platforms []string
		for _, p := range pl.platforms {
			if findResult(pl.suite, bench, p) != nil {
				platforms = append(platforms, p)
			}
		}
		var metrics []string
		for _, p := range platforms {
			for _, m := range findResult(pl.suite, bench, p).Metrics {
				if m.N > 0 {
					metrics = appendNew(metrics, m.Name)
				}
			}
		}
		if len(metrics) == 0 {
			continue
		}
		if err := pl.meansChart(bench, platforms, metrics); err != nil {
			return err
		}
	}
	return nil
}

func (pl *figures) meansChart(bench string, platforms, metrics []string) error {
	const panelW, panelH = 250, 215
	cols := 4
	switch {
	case len(metrics) <= 4:
		cols = len(metrics)
	case len(metrics) <= 6:
		cols = 3
	}
	rows := (len(metrics) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	noCI := false
	for i, name := range metrics {
		p := newPlot()
		p.Title.TextStyle.Font = font.From(sansFont, 10)
		var ticks []string
		top := 0.0
		for j, platform := range platforms {
			m := findMetricSummary(findResult(pl.suite, bench, platform).Metrics, name)
			label := pl.label(platform)
			if m == nil || m.N == 0 {
				ticks = append(ticks, label+"\nnot measured")
				continue
			}
			if p.Title.Text == "" {
				p.Title.Text = name
				p.Y.Label.Text = fmt.Sprintf("%s (%s)", m.Unit, directionWord(string(m.Direction)))
			}
			s := Summarize(*m)
			hw, ok := CIHalfWidth(s, Confidence)
			// The mean is written above its bar (and interval), so that a bar too short to see still
			// has a value.
			if err := addBarValue(p, float64(j), s.Mean+hw, s.Mean); err != nil {
				return err
			}
			bc, err := plotter.NewBarChart(plotter.Values{s.Mean}, vg.Points(float64(panelW)*0.45/float64(len(platforms))))
			if err != nil {
				return err
			}
			bc.XMin = float64(j)
			bc.Color = pl.color(platform)
			bc.LineStyle.Width = 0
			p.Add(bc)
			top = math.Max(top, s.Mean)
			if !ok {
				ticks = append(ticks, fmt.Sprintf("%s\nn=%s, no CI", label, unitCount(s)))
				noCI = true
				continue
			}
			ticks = append(ticks, fmt.Sprintf("%s\nn=%s", label, unitCount(s)))
			eb, err := plotter.NewYErrorBars(errorPoints{plotter.XYs{{X: float64(j), Y: s.Mean}}, plotter.YErrors{{Low: hw, High: hw}}})
			if err != nil {
				return err
			}
			eb.Width = vg.Points(1.3)
			eb.CapWidth = vg.Points(9)
			p.Add(eb)
			top = math.Max(top, s.Mean+hw)
		}
		p.NominalX(ticks...)
		p.X.Min, p.X.Max = -0.6, float64(len(platforms))-0.4
		p.Y.Padding = 0
		p.Y.Min, p.Y.Max = 0, top*1.18
		if top == 0 {
			p.Y.Max = 1
		}
		p.Y.Tick.Marker = niceTicks{}
		grid[i/cols][i%cols] = p
	}
	title := fmt.Sprintf("%s: mean per platform with 95%% CI (Student t) over repetitions, one panel per metric", bench)
	if noCI {
		title += "\nno error bar below 2 repetitions"
	}
	title += pl.emulationLine(platforms)
	return pl.saveGrid(bench+"-means", title, grid, panelW, panelH, 0)
}

// unitCount is n with what it counts: "3 reps", or "9 samples" where the status dropped the samples
// and each counts on its own.
func unitCount(s Summary) string {
	if s.FromSamples {
		return plural(s.N, "rep")
	}
	return plural(s.N, "sample")
}

func addBarValue(p *plot.Plot, x, y, mean float64) error {
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: y}}, Labels: []string{FormatValue(mean)}})
	if err != nil {
		return err
	}
	lb.TextStyle[0].Font = font.From(sansFont, 8)
	lb.TextStyle[0].XAlign = draw.XCenter
	lb.TextStyle[0].YAlign = draw.YBottom
	lb.Offset = vg.Point{Y: vg.Points(3)}
	p.Add(lb)
	return nil
}

// errorPoints feeds plotter.NewYErrorBars.
type errorPoints struct {
	plotter.XYs
	plotter.YErrors
}

// hplOverN draws HPL's Gflop/s against the problem size when the suite has hpcc benchmarks with
// different problemSize values.
func (pl *figures) hplOverN() error {
	type point struct {
		n     float64
		bench string
	}
	var sweep []point
	sizes := map[int32]bool{}
	for _, b := range pl.suite.Spec.Benchmarks {
		if b.Type != vmbenchv1.BenchmarkHPCC || b.HPCC == nil || b.HPCC.N == nil {
			continue
		}
		sweep = append(sweep, point{float64(*b.HPCC.N), b.Name})
		sizes[*b.HPCC.N] = true
	}
	if len(sizes) < 2 {
		pl.note("HPL over N: skipped, the suite has no sweep (it needs hpcc benchmarks with at least 2 different spec problemSize values, found %d)", len(sizes))
		return nil
	}
	sort.SliceStable(sweep, func(i, j int) bool { return sweep[i].n < sweep[j].n })

	type series struct {
		platform string
		xys      plotter.XYs
		ns       []float64
		errs     plotter.YErrors
		labels   []string
	}
	var all []series
	lo, hi := math.Inf(1), 0.0
	noCI := false
	// Each platform's points are moved a little sideways so that close intervals stay apart.
	span := sweep[len(sweep)-1].n - sweep[0].n
	for j, platform := range pl.platforms {
		sr := series{platform: platform}
		dodge := (float64(j) - float64(len(pl.platforms)-1)/2) * 0.015 * span
		for _, pt := range sweep {
			res := findResult(pl.suite, pt.bench, platform)
			if res == nil {
				continue
			}
			m := hplMetric(res.Metrics)
			if m == nil || m.N == 0 {
				continue
			}
			s := Summarize(*m)
			scale := gflopsScale(m.Unit)
			hw, ok := CIHalfWidth(s, Confidence)
			label := fmt.Sprintf("%.3g (n=%s)", s.Mean*scale, unitCount(s))
			if !ok {
				label = fmt.Sprintf("%.3g (n=%s, no CI)", s.Mean*scale, unitCount(s))
				noCI = true
			}
			sr.xys = append(sr.xys, plotter.XY{X: pt.n + dodge, Y: s.Mean * scale})
			sr.errs = append(sr.errs, struct{ Low, High float64 }{hw * scale, hw * scale})
			sr.labels = append(sr.labels, label)
			sr.ns = append(sr.ns, pt.n)
			lo, hi = math.Min(lo, (s.Mean-hw)*scale), math.Max(hi, (s.Mean+hw)*scale)
		}
		if len(sr.xys) > 0 {
			all = append(all, sr)
		}
	}
	if len(all) == 0 {
		pl.note("HPL over N: skipped, no hpcc result has an HPL_Tflops metric")
		return nil
	}

	p := newPlot()
	p.X.Label.Text = "HPL problem size N (matrix order, spec hpcc.problemSize)"
	p.Y.Label.Text = "HPL performance [Gflop/s]"
	// Emulated VMs are an order of magnitude slower: a log axis keeps both platforms readable.
	logY := lo > 0 && hi/lo > 8
	if logY {
		p.Y.Label.Text += ", log scale"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
		p.Y.Min, p.Y.Max = lo/1.6, hi*2.2
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.3
		p.Y.Tick.Marker = niceTicks{}
	}
	var drawn []string
	var tags []pointTag
	for _, sr := range all {
		drawn = append(drawn, sr.platform)
		line, points, err := plotter.NewLinePoints(sr.xys)
		if err != nil {
			return err
		}
		c := pl.color(sr.platform)
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.5)
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(3.5)
		eb, err := plotter.NewYErrorBars(errorPoints{sr.xys, sr.errs})
		if err != nil {
			return err
		}
		eb.Color = c
		eb.Width = vg.Points(1.3)
		eb.CapWidth = vg.Points(8)
		p.Add(line, points, eb)
		for i, xy := range sr.xys {
			tags = append(tags, pointTag{xy: xy, group: sr.ns[i], text: sr.labels[i], color: c, right: i == len(sr.xys)-1})
		}
		p.Legend.Add(pl.label(sr.platform), line, points)
	}
	if err := addPointTags(p, tags, logY, 440); err != nil {
		return err
	}
	p.Add(plotter.NewGrid())
	p.X.Min, p.X.Max = sweep[0].n-0.18*span, sweep[len(sweep)-1].n+0.18*span
	ticks := make(plot.ConstantTicks, 0, len(sizes))
	for n := range sizes {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: strconv.Itoa(int(n))})
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Value < ticks[j].Value })
	p.X.Tick.Marker = ticks
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	title := "HPL Gflop/s over problem size N, mean with 95% CI (Student t) over repetitions"
	if noCI {
		title += "; no error bar below 2 repetitions"
	}
	p.Title.Text = title + pl.emulationLine(drawn)
	return pl.save(p, 680, 440, "hpl-over-n")
}

// pointTag is the value written next to one point of a line plot.
type pointTag struct {
	xy plotter.XY
	// group is the x value the point belongs to before dodging; tags of one group are kept apart.
	group float64
	text  string
	color color.Color
	// right puts the tag right of the point (the last point of a line), else left, clear of the
	// error bar's caps.
	right bool
}

// addPointTags writes the tags, moving those of the same group and side apart so that the values of
// platforms that measured nearly the same do not print over each other. height is the figure's
// height in points, of which about three quarters is data area.
func addPointTags(p *plot.Plot, tags []pointTag, logY bool, height float64) error {
	fwd, back := func(y float64) float64 { return y }, func(y float64) float64 { return y }
	if logY {
		fwd, back = math.Log10, func(y float64) float64 { return math.Pow(10, y) }
	}
	gap := (fwd(p.Y.Max) - fwd(p.Y.Min)) * 13 / (0.72 * height)
	sort.SliceStable(tags, func(i, j int) bool {
		a, b := tags[i], tags[j]
		if a.group != b.group || a.right != b.right {
			return a.group < b.group || (a.group == b.group && !a.right)
		}
		return a.xy.Y < b.xy.Y
	})
	for i := range tags {
		y := fwd(tags[i].xy.Y)
		if i > 0 && tags[i-1].group == tags[i].group && tags[i-1].right == tags[i].right {
			y = math.Max(y, fwd(tags[i-1].xy.Y)+gap)
		}
		tags[i].xy.Y = back(y)
	}
	for _, tag := range tags {
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{tag.xy}, Labels: []string{tag.text}})
		if err != nil {
			return err
		}
		style := &lb.TextStyle[0]
		style.Font = font.From(sansFont, 9)
		style.Color = tag.color
		style.YAlign = draw.YCenter
		style.XAlign = draw.XRight
		lb.Offset = vg.Point{X: -vg.Points(9)}
		if tag.right {
			style.XAlign = draw.XLeft
			lb.Offset = vg.Point{X: vg.Points(9)}
		}
		p.Add(lb)
	}
	return nil
}

// niceTicks puts about five labelled ticks at multiples of 1, 2 or 5 times a power of ten, all
// printed with the same number of decimals, and a minor tick between them.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * pow
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*pow*1.5 {
			step = m * pow
			break
		}
	}
	// Large values get an SI prefix (400k, 3.5M) rather than a row of zeros.
	scale, suffix := siPrefix(math.Max(math.Abs(lo), math.Abs(hi)))
	decimals := max(0, -int(math.Floor(math.Log10(step/scale))))
	var ticks []plot.Tick
	first := math.Ceil(lo/step - 1e-9)
	for i := 0; ; i++ {
		v := (first + float64(i)) * step
		if v > hi+step*1e-9 {
			break
		}
		label := strconv.FormatFloat(v/scale, 'f', decimals, 64) + suffix
		if v == 0 {
			label = "0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
		if half := v + step/2; half < hi {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// logTicks labels every power of ten and the 2 and 5 between them, so that a log axis over less
// than a decade still has labels.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= min && v <= max {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}

func hplMetric(ms []vmbenchv1.MetricSummary) *vmbenchv1.MetricSummary {
	for _, name := range []string{"HPL_Tflops", "HPL_Gflops"} {
		if m := findMetricSummary(ms, name); m != nil {
			return m
		}
	}
	return nil
}

func gflopsScale(unit string) float64 {
	switch unit {
	case "Tflop/s":
		return 1000
	case "Mflop/s":
		return 0.001
	}
	return 1
}

// iozoneCell matches an iozone metric of auto mode: an optional target prefix, the test, file size
// and record size in KiB.
var iozoneCell = regexp.MustCompile(`^((?:local_|shared_)?[a-z_]+?)_(\d+)k_(\d+)k$`)

// iozoneHeatmaps draws, per iozone benchmark and test, the mean throughput over file size × record
// size, one panel per platform on one colour scale.
func (pl *figures) iozoneHeatmaps() error {
	found := false
	for _, b := range pl.suite.Spec.Benchmarks {
		if b.Type != vmbenchv1.BenchmarkIozone {
			continue
		}
		found = true
		tests := map[string]map[string]map[[2]int]float64{} // test -> platform -> (file, rec) -> mean
		units := map[string]string{}
		var testOrder []string
		for _, platform := range pl.platforms {
			res := findResult(pl.suite, b.Name, platform)
			if res == nil {
				continue
			}
			for _, m := range res.Metrics {
				sub := iozoneCell.FindStringSubmatch(m.Name)
				if sub == nil || m.N == 0 {
					continue
				}
				file, _ := strconv.Atoi(sub[2])
				rec, _ := strconv.Atoi(sub[3])
				if tests[sub[1]] == nil {
					tests[sub[1]] = map[string]map[[2]int]float64{}
					testOrder = append(testOrder, sub[1])
				}
				if tests[sub[1]][platform] == nil {
					tests[sub[1]][platform] = map[[2]int]float64{}
				}
				tests[sub[1]][platform][[2]int{file, rec}] = Summarize(m).Mean
				units[sub[1]] = m.Unit
			}
		}
		if len(testOrder) == 0 {
			pl.note("%s: iozone heatmap skipped, no metric carries the _<file>k_<record>k suffix of auto mode (one file and record size per run)", b.Name)
			continue
		}
		for _, test := range testOrder {
			if err := pl.iozoneHeatmap(b.Name, test, units[test], tests[test]); err != nil {
				return err
			}
		}
	}
	if !found {
		pl.note("iozone heatmap: skipped, the suite has no iozone benchmark")
	}
	return nil
}

// heatGrid is one platform's means on the (record size, file size) grid; NaN where not measured.
type heatGrid struct {
	z [][]float64 // [file][record]
}

func (g heatGrid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

func (pl *figures) iozoneHeatmap(bench, test, unit string, byPlatform map[string]map[[2]int]float64) error {
	scale, shownUnit := 1.0, unit
	if unit == "KiB/s" {
		scale, shownUnit = 1.0/1024, "MiB/s"
	}
	var files, recs []int
	var platforms []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, platform := range pl.platforms {
		cells, ok := byPlatform[platform]
		if !ok {
			continue
		}
		platforms = append(platforms, platform)
		for k, v := range cells {
			files = appendNewInt(files, k[0])
			recs = appendNewInt(recs, k[1])
			lo, hi = math.Min(lo, v*scale), math.Max(hi, v*scale)
		}
	}
	sort.Ints(files)
	sort.Ints(recs)
	if hi <= lo {
		hi = lo + 1
	}
	cmap := throughputColors()
	cmap.SetMin(lo)
	cmap.SetMax(hi)
	pal := cmap.Palette(255)

	var plots []*plot.Plot
	for _, platform := range platforms {
		g := heatGrid{z: make([][]float64, len(files))}
		var labels plotter.XYLabels
		var styles []text.Style
		for r, f := range files {
			g.z[r] = make([]float64, len(recs))
			for ci, rec := range recs {
				v, ok := byPlatform[platform][[2]int{f, rec}]
				if !ok {
					g.z[r][ci] = math.NaN()
					continue
				}
				g.z[r][ci] = v * scale
				labels.XYs = append(labels.XYs, plotter.XY{X: float64(ci), Y: float64(r)})
				labels.Labels = append(labels.Labels, compactNumber(v*scale))
				styles = append(styles, cellTextStyle(cmap, v*scale))
			}
		}
		hm := plotter.NewHeatMap(g, pal)
		hm.Min, hm.Max = lo, hi
		hm.NaN = color.Gray{Y: 235}
		p := newPlot()
		p.Title.Text = fmt.Sprintf("%s, %s: %s [%s]", bench, pl.label(platform), test, shownUnit)
		p.Add(hm)
		if len(labels.XYs) > 0 {
			lb, err := plotter.NewLabels(labels)
			if err != nil {
				return err
			}
			lb.TextStyle = styles
			p.Add(lb)
		}
		p.X.Label.Text = "record size"
		p.Y.Label.Text = "file size"
		p.X.Tick.Marker = sizeTicks(recs)
		p.Y.Tick.Marker = sizeTicks(files)
		p.X.Min, p.X.Max = -0.5, float64(len(recs))-0.5
		p.Y.Min, p.Y.Max = -0.5, float64(len(files))-0.5
		p.X.Padding, p.Y.Padding = 0, 0
		plots = append(plots, p)
	}

	bar := newPlot()
	bar.Title.Text = shownUnit
	bar.Title.TextStyle.Font = font.From(sansFont, 10)
	bar.Add(&plotter.ColorBar{ColorMap: cmap, Vertical: true})
	bar.HideX()
	bar.Y.Padding = 0

	what := "mean throughput"
	if unit == "us" {
		what = "mean time per operation"
	}
	title := fmt.Sprintf("%s %s: %s over file size × record size [%s], one colour scale for all panels%s",
		bench, test, what, shownUnit, pl.emulationLine(platforms))
	return pl.saveFigure(gridFigure{name: bench + "-" + strings.ReplaceAll(test, "_", "-") + "-heatmap", title: title,
		grid: [][]*plot.Plot{plots}, panelW: 340, panelH: 330, side: bar, sideW: 90})
}

// throughputColors runs from dark violet to yellow with steadily rising lightness (the viridis
// control colours), so that order is visible in grey and no cell fades into the white background.
func throughputColors() palette.ColorMap {
	controls := []color.Color{
		color.RGBA{R: 0x44, G: 0x01, B: 0x54, A: 0xFF},
		color.RGBA{R: 0x3B, G: 0x52, B: 0x8B, A: 0xFF},
		color.RGBA{R: 0x21, G: 0x91, B: 0x8C, A: 0xFF},
		color.RGBA{R: 0x5E, G: 0xC9, B: 0x62, A: 0xFF},
		color.RGBA{R: 0xFD, G: 0xE7, B: 0x25, A: 0xFF},
	}
	cmap, err := moreland.NewLuminance(controls)
	if err != nil {
		panic(err) // the controls above are fixed and increase in lightness
	}
	return cmap
}

func appendNewInt(list []int, v int) []int {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

// sizeTicks labels grid positions with sizes given in KiB: 4k, 64k, 1M, 64M.
func sizeTicks(kb []int) plot.ConstantTicks {
	ticks := make(plot.ConstantTicks, len(kb))
	for i, v := range kb {
		ticks[i] = plot.Tick{Value: float64(i), Label: sizeLabel(v)}
	}
	return ticks
}

func sizeLabel(kb int) string {
	switch {
	case kb >= 1<<20 && kb%(1<<20) == 0:
		return fmt.Sprintf("%dG", kb>>20)
	case kb >= 1<<10 && kb%(1<<10) == 0:
		return fmt.Sprintf("%dM", kb>>10)
	}
	return fmt.Sprintf("%dk", kb)
}

// compactNumber fits a heatmap cell: three significant digits.
func compactNumber(v float64) string {
	switch abs := math.Abs(v); {
	case abs >= 1e5:
		return FormatValue(v)
	case abs >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// cellTextStyle writes dark text on light cells and light text on dark ones.
func cellTextStyle(cmap palette.ColorMap, v float64) text.Style {
	style := text.Style{
		Font:    font.From(sansFont, 8),
		XAlign:  draw.XCenter,
		YAlign:  draw.YCenter,
		Handler: plot.DefaultTextHandler,
		Color:   color.Black,
	}
	c, err := cmap.At(v)
	if err != nil {
		return style
	}
	r, g, b, _ := c.RGBA()
	if 0.299*float64(r)+0.587*float64(g)+0.114*float64(b) < 0.5*0xFFFF {
		style.Color = color.White
	}
	return style
}

// iperf3Samples draws every bandwidth sample of every iperf3 benchmark in status order (repetition,
// then node pair), per platform. Status keeps no per-second intervals, so this is the finest grain.
func (pl *figures) iperf3Samples() error {
	found := false
	for _, b := range pl.suite.Spec.Benchmarks {
		if b.Type != vmbenchv1.BenchmarkIperf3 {
			continue
		}
		found = true
		if err := pl.iperf3Chart(b.Name); err != nil {
			return err
		}
	}
	if !found {
		pl.note("iperf3 samples: skipped, the suite has no iperf3 benchmark")
	}
	return nil
}

func (pl *figures) iperf3Chart(bench string) error {
	type key struct {
		rep  int32
		node string
	}
	var order []key
	seen := map[key]bool{}
	series := map[string][]vmbenchv1.Sample{}
	var metricName string
	var drawn []string
	for _, platform := range pl.platforms {
		res := findResult(pl.suite, bench, platform)
		if res == nil {
			continue
		}
		m := findMetricSummary(res.Metrics, "bits_per_second")
		if m == nil {
			m = findMetricSummary(res.Metrics, "sender_bits_per_second")
		}
		if m == nil {
			continue
		}
		if len(m.Samples) == 0 {
			pl.note("%s on %s: no iperf3 samples plotted, the status dropped them (count %d, mean %s %s)",
				bench, platform, m.N, FormatValue(m.Mean), m.Unit)
			continue
		}
		if len(m.Samples) < int(m.N) {
			pl.note("%s on %s: the plot shows the first %d of %d samples, the status dropped the rest", bench, platform, len(m.Samples), m.N)
		}
		metricName = m.Name
		drawn = append(drawn, platform)
		series[platform] = m.Samples
		for _, s := range m.Samples {
			k := key{s.Repetition, s.Node}
			if !seen[k] {
				seen[k] = true
				order = append(order, k)
			}
		}
	}
	if len(drawn) == 0 {
		pl.note("%s: iperf3 samples plot skipped, no bandwidth samples in status", bench)
		return nil
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].rep < order[j].rep })
	index := map[key]int{}
	for i, k := range order {
		index[k] = i
	}

	// One panel per platform, each on its own bandwidth axis: emulated VMs are too slow to share one.
	grid := make([][]*plot.Plot, len(drawn))
	for r, platform := range drawn {
		p := newPlot()
		p.Title.TextStyle.Font = font.From(sansFont, 11)
		var xys plotter.XYs
		values := make([]float64, 0, len(series[platform]))
		for _, s := range series[platform] {
			xys = append(xys, plotter.XY{X: float64(index[key{s.Repetition, s.Node}]), Y: s.Value / 1e9})
			values = append(values, s.Value/1e9)
		}
		sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		c := pl.color(platform)
		line.Color, points.Color = c, c
		line.Width = vg.Points(1.2)
		points.Shape = draw.CircleGlyph{}
		points.Radius = vg.Points(3)
		st := Summarize(vmbenchv1.MetricSummary{Samples: series[platform], N: int32(len(series[platform]))})
		mean := horizontalLine(st.Mean/1e9, -0.5, float64(len(order))-0.5)
		p.Add(plotter.NewGrid(), mean, line, points)
		p.Title.Text = fmt.Sprintf("%s: mean %.3g Gbit/s (dashed)", pl.label(platform), st.Mean/1e9)
		if hw, ok := CIHalfWidth(st, Confidence); ok {
			p.Title.Text = fmt.Sprintf("%s: mean %.3g ± %.2g Gbit/s (95%% CI over repetitions, dashed), n=%s", pl.label(platform),
				st.Mean/1e9, hw/1e9, unitCount(st))
		}
		p.Y.Label.Text = "bandwidth [Gbit/s]"
		p.X.Min, p.X.Max = -0.5, float64(len(order))-0.5
		top := 0.0
		for _, v := range values {
			top = math.Max(top, v)
		}
		p.Y.Min, p.Y.Max = 0, top*1.15
		p.Y.Tick.Marker = niceTicks{}
		ticks := make(plot.ConstantTicks, len(order))
		for i, k := range order {
			ticks[i] = plot.Tick{Value: float64(i), Label: fmt.Sprintf("r%d %s", k.rep, k.node)}
			if r != len(drawn)-1 {
				// Only the bottom panel names the samples; the others keep the tick marks.
				ticks[i].Label = " "
			}
		}
		p.X.Tick.Marker = ticks
		if r == len(drawn)-1 {
			p.X.Label.Text = "sample, in status order: repetition, node pair (sender-receiver)"
			rotateXTicks(p)
		}
		grid[r] = []*plot.Plot{p}
	}
	title := fmt.Sprintf("%s: %s of every sample, in order (repetition × node pair)\n"+
		"the status keeps one value per sample, not iperf3's per-second intervals%s", bench, metricName, pl.emulationLine(drawn))
	width := vg.Length(math.Max(700, float64(len(order))*34+160))
	left := labelOverhang(fmt.Sprintf("r%d %s", order[0].rep, order[0].node))
	return pl.saveGrid(bench+"-samples", title, grid, width, 230, left)
}

func horizontalLine(y, xmin, xmax float64) *plotter.Line {
	l, _ := plotter.NewLine(plotter.XYs{{X: xmin, Y: y}, {X: xmax, Y: y}})
	l.Color = color.Gray{Y: 90}
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	l.Width = vg.Points(1)
	return l
}

var sansFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// newPlot is a plot in a sans-serif font, which stays legible when the PNG is scaled down.
func newPlot() *plot.Plot {
	p := plot.New()
	p.Title.TextStyle.Font = font.From(sansFont, 12)
	p.Title.Padding = vg.Points(8)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sansFont, 11)
		ax.Tick.Label.Font = font.From(sansFont, 9)
	}
	p.Legend.TextStyle.Font = font.From(sansFont, 10)
	return p
}

const tickRotation = math.Pi / 6

// rotateXTicks turns long tick labels so that neighbours do not overlap.
func rotateXTicks(p *plot.Plot) {
	p.X.Tick.Label.Rotation = tickRotation
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter
}

// gridFigure is a heading over a grid of aligned panels, with an optional narrow plot (a colour bar)
// at the right.
type gridFigure struct {
	name, title    string
	grid           [][]*plot.Plot
	panelW, panelH vg.Length
	// padLeft makes room for rotated tick labels that reach left of the first panel.
	padLeft vg.Length
	side    *plot.Plot
	sideW   vg.Length
}

func (pl *figures) saveGrid(name, title string, grid [][]*plot.Plot, panelW, panelH, padLeft vg.Length) error {
	return pl.saveFigure(gridFigure{name: name, title: title, grid: grid, panelW: panelW, panelH: panelH, padLeft: padLeft})
}

func (pl *figures) saveFigure(f gridFigure) error {
	rows, cols := len(f.grid), len(f.grid[0])
	titleH := vg.Points(16*float64(1+strings.Count(f.title, "\n")) + 14)
	head := newPlot()
	head.Title.Text = f.title
	head.HideAxes()
	// The figure is at least as wide as its heading, so that one small panel does not clip it.
	w := f.padLeft + f.panelW*vg.Length(cols) + f.sideW
	w = max(w, head.Title.TextStyle.Width(f.title)+vg.Points(40), vg.Points(480))
	h := titleH + f.panelH*vg.Length(rows)
	return pl.saveDrawing(w, h, f.name, func(dc draw.Canvas) {
		head.Draw(draw.Crop(dc, 0, 0, h-titleH, 0))
		body := draw.Crop(dc, f.padLeft, -f.sideW, 0, -titleH)
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 20, PadY: 16, PadTop: 2, PadBottom: 6, PadLeft: 6, PadRight: 12}
		canvases := plot.Align(f.grid, tiles, body)
		for r, row := range f.grid {
			for c, p := range row {
				if p != nil {
					p.Draw(canvases[r][c])
				}
			}
		}
		if f.side != nil {
			f.side.Draw(draw.Crop(dc, w-f.sideW+16, -10, 36, -titleH-20))
		}
	})
}

// labelOverhang is how far a rotated tick label reaches left of its tick.
func labelOverhang(label string) vg.Length {
	style := newPlot().X.Tick.Label
	return vg.Length(float64(style.Width(label)) * math.Cos(tickRotation))
}

func (pl *figures) save(p *plot.Plot, w, h vg.Length, name string) error {
	return pl.saveDrawing(w, h, name, func(dc draw.Canvas) { p.Draw(dc) })
}

// saveDrawing renders draw into a PNG, and an SVG when asked, named after name.
func (pl *figures) saveDrawing(w, h vg.Length, name string, drawFn func(draw.Canvas)) error {
	formats := []string{"png"}
	if pl.opts.SVG {
		formats = append(formats, "svg")
	}
	for _, format := range formats {
		c, err := newCanvas(w, h, format)
		if err != nil {
			return err
		}
		drawFn(draw.New(c))
		path := filepath.Join(pl.opts.Dir, fileName(name)+"."+format)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		_, err = c.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		pl.out.Files = append(pl.out.Files, path)
	}
	return nil
}

func newCanvas(w, h vg.Length, format string) (vg.CanvasWriterTo, error) {
	switch format {
	case "png":
		return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}, nil
	case "svg":
		return vgsvg.New(w, h), nil
	}
	return nil, fmt.Errorf("unsupported plot format %q", format)
}

var unsafeFileChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

func fileName(name string) string {
	return unsafeFileChars.ReplaceAllString(name, "_")
}
