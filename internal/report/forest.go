package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// NoisyCoV is the coefficient of variation (on either side) above which a metric is marked noisy
// in the forest plots.
const NoisyCoV = 10.0

// forestRow is one line of a forest plot: a ratio in the higher-is-better sense and its interval.
type forestRow struct {
	label    string
	est      float64
	lo, hi   *float64
	overall  bool
	summary  bool
	noisy    bool
	platform int
}

// forestPlotter draws the rows of a forest plot on a log x axis: the tolerance band, a line at 1, a
// bar and a dot per row, a diamond for an overall figure. Row i is at y = -i, so the first row is on top.
type forestPlotter struct {
	rows      []forestRow
	tolerance float64
}

var (
	bandColor  = color.NRGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0x38}
	noisyColor = color.Gray{Y: 70}
)

func (f forestPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	top, bottom := trY(0.6), trY(-float64(len(f.rows))+0.4)
	band := c.ClipPolygonY([]vg.Point{{X: trX(1 - f.tolerance), Y: bottom}, {X: trX(1 + f.tolerance), Y: bottom},
		{X: trX(1 + f.tolerance), Y: top}, {X: trX(1 - f.tolerance), Y: top}})
	c.FillPolygon(bandColor, band)
	c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(1)}, trX(1), bottom, trX(1), top)
	for i, r := range f.rows {
		y := trY(-float64(i))
		if i > 0 && (r.summary != f.rows[i-1].summary || r.overall != f.rows[i-1].overall) {
			sep := trY(-float64(i) + 0.5)
			c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 200}, Width: vg.Points(0.5)}, c.Min.X, sep, c.Max.X, sep)
		}
		col := platformColors[r.platform%len(platformColors)]
		if r.noisy {
			col = noisyColor
		}
		if r.overall {
			f.diamond(c, trX, y, r, col)
			continue
		}
		width := vg.Points(1.5)
		if r.summary {
			width = vg.Points(3)
		}
		if r.lo != nil {
			c.StrokeLine2(draw.LineStyle{Color: col, Width: width}, trX(*r.lo), y, trX(*r.hi), y)
		}
		glyph := draw.GlyphStyle{Color: col, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		if r.summary {
			glyph.Shape, glyph.Radius = draw.BoxGlyph{}, vg.Points(4)
		}
		if r.noisy {
			glyph.Shape, glyph.Radius = draw.TriangleGlyph{}, vg.Points(4.5)
		}
		if r.lo == nil {
			glyph.Shape = draw.RingGlyph{}
			if r.summary {
				glyph.Shape = draw.SquareGlyph{}
			}
		}
		c.DrawGlyph(glyph, vg.Point{X: trX(r.est), Y: y})
	}
}

// diamond spans the interval, or is a glyph at the point when there is none.
func (f forestPlotter) diamond(c draw.Canvas, trX func(float64) vg.Length, y vg.Length, r forestRow, col color.Color) {
	h := vg.Points(6)
	lo, hi := trX(r.est)-h, trX(r.est)+h
	if r.lo != nil {
		lo, hi = min(trX(*r.lo), lo+h*0.6), max(trX(*r.hi), hi-h*0.6)
	}
	pts := []vg.Point{{X: lo, Y: y}, {X: trX(r.est), Y: y + h}, {X: hi, Y: y}, {X: trX(r.est), Y: y - h}}
	c.FillPolygon(col, pts)
}

func (f forestPlotter) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = 1-f.tolerance, 1+f.tolerance
	for _, r := range f.rows {
		xmin, xmax = math.Min(xmin, r.est), math.Max(xmax, r.est)
		if r.lo != nil {
			xmin, xmax = math.Min(xmin, *r.lo), math.Max(xmax, *r.hi)
		}
	}
	return xmin / 1.25, xmax * 1.25, -float64(len(f.rows)) + 0.4, 0.6
}

// forestTicks labels the rows.
type forestTicks []forestRow

func (t forestTicks) Ticks(_, _ float64) []plot.Tick {
	ticks := make([]plot.Tick, len(t))
	for i, r := range t {
		ticks[i] = plot.Tick{Value: -float64(i), Label: r.label}
	}
	return ticks
}

// ratioTicks are log ticks written as ratios: 0.001×, 0.01×, 0.1×, 0.5×, 1×, 2×.
type ratioTicks struct{}

func (ratioTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	decades := math.Log10(hi / lo)
	// Over many decades only every step-th power of ten is labelled (always 1×), so that labels
	// such as 10000× and 100000× do not run into each other.
	step := math.Max(1, math.Ceil(decades/6))
	for _, t := range (logTicks{}).Ticks(lo, hi) {
		exponent := math.Floor(math.Log10(t.Value) + 1e-9)
		mantissa := t.Value / math.Pow(10, exponent)
		switch {
		case decades <= 2.5:
			t.Label = strings.TrimSuffix(trimFloat3(t.Value), ".0") + "×"
		case math.Abs(mantissa-1) > 1e-9 || math.Mod(math.Abs(exponent), step) != 0:
			t.Label = "" // minor tick
		default:
			t.Label = strings.TrimSuffix(trimFloat3(t.Value), ".0") + "×"
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// forestPlot is the plot of rows with a title; height follows the number of rows.
func forestPlot(title string, rows []forestRow, tolerance float64) (*plot.Plot, vg.Length, vg.Length) {
	p := newPlot()
	p.Title.Text = title
	p.Add(forestPlotter{rows: rows, tolerance: tolerance})
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = ratioTicks{}
	p.X.Label.Text = fmt.Sprintf("ratio to the baseline, higher is better (log scale; shaded: ±%g%%)", tolerance*100)
	p.Y.Tick.Marker = forestTicks(rows)
	p.Y.Tick.Label.Font = font.From(sansFont, 9)
	p.Y.Tick.Length = 0
	p.Y.Tick.Width = 0
	p.Y.Width = 0
	xmin, xmax, ymin, ymax := forestPlotter{rows: rows, tolerance: tolerance}.DataRange()
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	lines := 1 + strings.Count(title, "\n")
	h := vg.Points(max(float64(len(rows))*17+70+15*float64(lines), 200))
	w := vg.Points(760)
	return p, w, h
}

// overviewRows are, per platform, a row per benchmark, a row per resource and the overall diamond.
func (r *Report) overviewRows() []forestRow {
	var rows []forestRow
	for i, ps := range r.Summaries {
		prefix := ""
		if len(r.Summaries) > 1 {
			prefix = ps.Platform + ": "
		}
		add := func(g GroupSummary, label string, summary, overall bool) {
			if g.Ratio == nil {
				return
			}
			rows = append(rows, forestRow{label: prefix + label, est: *g.Ratio, lo: g.Low, hi: g.High, summary: summary,
				overall: overall, platform: i + 1})
		}
		for _, g := range ps.Benchmarks {
			add(g, fmt.Sprintf("%s (%d)", g.Name, g.Metrics), false, false)
		}
		for _, g := range ps.Resources {
			add(g, strings.ToUpper(g.Name), true, false)
		}
		add(ps.Overall, "OVERALL", false, true)
	}
	return rows
}

// benchmarkRows are a row per metric of bench that has a ratio, for every platform.
func (r *Report) benchmarkRows(bench string) []forestRow {
	var rows []forestRow
	index := map[string]int{}
	for i, ps := range r.Summaries {
		index[ps.Platform] = i + 1
	}
	multi := len(r.Summaries) > 1
	for _, row := range r.Rows {
		if row.Benchmark != bench || row.SpeedRatio == nil {
			continue
		}
		label := row.Metric
		if multi {
			label = row.Platform + ": " + label
		}
		noisy := (row.CoVPercent != nil && *row.CoVPercent > NoisyCoV) || (row.BaselineCoVPercent != nil && *row.BaselineCoVPercent > NoisyCoV)
		if noisy {
			label += " (noisy)"
		}
		rows = append(rows, forestRow{label: label, est: *row.SpeedRatio, lo: row.SpeedRatioLow, hi: row.SpeedRatioHigh,
			noisy: noisy, platform: index[row.Platform]})
	}
	return rows
}

// forestCaption says what the marks mean and what the figures do not measure.
func (r *Report) forestCaption(rows []forestRow, extra ...string) string {
	parts := append([]string{"dot and bar: ratio and 95% interval"}, extra...)
	for _, row := range rows {
		if row.lo == nil {
			parts = append(parts, "open mark: no interval ("+NoIntervalNote+")")
			break
		}
	}
	for _, row := range rows {
		if row.noisy {
			parts = append(parts, fmt.Sprintf("grey triangle: noisy (CoV > %g%% on a side)", NoisyCoV))
			break
		}
	}
	line := strings.Join(parts, "; ")
	for _, ps := range r.Summaries {
		if ps.Emulated {
			line += "\n" + ps.Platform + ": emulated VMs (QEMU TCG, no KVM): not a measure of VM overhead"
		}
	}
	return line
}

// Forest is one forest plot: Name is the file name without extension.
type Forest struct {
	Name, Title string
	plot        *plot.Plot
	w, h        vg.Length
}

// Forests are the overview (a row per benchmark, per resource and the overall figure, per platform)
// and one plot per benchmark with a row per metric.
func (r *Report) Forests() []Forest {
	var out []Forest
	if rows := r.overviewRows(); len(rows) > 0 {
		title := fmt.Sprintf("%s: every platform against %s, geometric means per benchmark (its metrics), resource and overall\n%s",
			r.Suite, r.Baseline, r.forestCaption(rows, "square: resource; diamond: overall"))
		p, w, h := forestPlot(title, rows, r.Tolerance)
		out = append(out, Forest{Name: "forest-overview", Title: "Overview", plot: p, w: w, h: h})
	}
	var benches []string
	for _, row := range r.Rows {
		benches = appendNew(benches, row.Benchmark)
	}
	for _, bench := range benches {
		rows := r.benchmarkRows(bench)
		if len(rows) == 0 {
			continue
		}
		title := fmt.Sprintf("%s: each metric against %s\n%s", bench, r.Baseline, r.forestCaption(rows))
		p, w, h := forestPlot(title, rows, r.Tolerance)
		out = append(out, Forest{Name: bench + "-forest", Title: bench, plot: p, w: w, h: h})
	}
	return out
}

// Render draws the forest plot as "png" or "svg".
func (f Forest) Render(format string) ([]byte, error) {
	c, err := newCanvas(f.w, f.h, format)
	if err != nil {
		return nil, err
	}
	drawForest(f.plot, draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// forests writes the forest plots of the suite.
func (pl *figures) forests() error {
	rep, err := BuildWith(pl.suite, Options{Tolerance: pl.opts.Tolerance})
	if err != nil {
		return err
	}
	for _, f := range rep.Forests() {
		if err := pl.saveDrawing(f.w, f.h, f.Name, func(c draw.Canvas) { drawForest(f.plot, c) }); err != nil {
			return err
		}
	}
	return nil
}

// drawForest leaves a margin, so that the longest label does not touch the edge.
func drawForest(p *plot.Plot, c draw.Canvas) {
	p.Draw(draw.Crop(c, vg.Points(10), -vg.Points(14), vg.Points(4), -vg.Points(4)))
}
