package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// hplOverN draws HPL's Gflop/s against the problem size when the suite has hpcc benchmarks with
// different problemSize values, one HPCC execution per point (a sweep inside one benchmark is
// drawn by hplSweepPlots).
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
		// A sweep inside one benchmark has its own figure (hplSweepPlots).
		if len(hplSweeps(pl.suite, pl.platforms)) == 0 {
			pl.note("HPL over N: skipped, the suite has no sweep (it needs an hpcc benchmark with problemSizes, blockSizes or grids, "+
				"or hpcc benchmarks with at least 2 different spec problemSize values, found %d)", len(sizes))
		}
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
