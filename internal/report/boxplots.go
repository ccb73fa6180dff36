package report

import (
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// boxes draws, per benchmark, one panel per metric: a box plot of every sample of each platform
// (every node of every repetition), the samples themselves, and beside them the repetition means,
// which are the unit of the report's statistics. A suite has few values per platform, so the points
// show what the box summarizes.
func (pl *figures) boxes() error {
	for _, bench := range benchmarkOrder(pl.suite) {
		var platforms, metrics []string
		dropped, single := 0, 0
		for _, p := range pl.platforms {
			if findResult(pl.suite, bench, p) != nil {
				platforms = append(platforms, p)
			}
		}
		for _, p := range platforms {
			for _, m := range findResult(pl.suite, bench, p).Metrics {
				switch {
				case results.IsHPLPointMetric(m.Name):
					// An HPL sweep's points have a figure of their own (hplSweepPlots).
				case m.N > 0 && !hasAllSamples(m):
					dropped++
				case m.N == 1:
					single++
				case m.N > 1:
					metrics = appendNew(metrics, m.Name)
				}
			}
		}
		if len(metrics) == 0 {
			switch {
			case dropped > 0:
				pl.note("%s: box plots skipped, the status dropped the samples of every metric (it keeps their count, mean and stddev)", bench)
			case single > 0:
				pl.note("%s: box plots skipped, every platform measured one value per metric (one node, one repetition; raise spec.repetitions)", bench)
			}
			continue
		}
		if err := pl.boxChart(bench, platforms, metrics); err != nil {
			return err
		}
	}
	return nil
}

// hasAllSamples is true when the status still holds every sample of m.
func hasAllSamples(m vmbenchv1.MetricSummary) bool {
	return m.N > 0 && len(m.Samples) == int(m.N)
}

func (pl *figures) boxChart(bench string, platforms, metrics []string) error {
	const panelW, panelH = 250, 240
	cols := min(4, len(metrics))
	if len(metrics) > 4 && len(metrics) <= 6 {
		cols = 3
	}
	rows := (len(metrics) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for r := range grid {
		grid[r] = make([]*plot.Plot, cols)
	}
	// The jitter is seeded per chart, so that the same suite always gives the same picture.
	rng := rand.New(rand.NewPCG(uint64(len(bench)), uint64(len(metrics))))
	anyRelative := false
	for i, name := range metrics {
		p, relative, err := pl.boxPanel(bench, name, platforms, rng)
		if err != nil {
			return err
		}
		anyRelative = anyRelative || relative
		grid[i/cols][i%cols] = p
	}
	title := fmt.Sprintf("%s: every sample per platform (each node or node pair of each repetition), one panel per metric\n"+
		"box: median and quartiles, whiskers to 1.5 IQR; rings: samples; diamonds: repetition means, the unit of the tests",
		bench)
	if anyRelative {
		title += "\nwhere each platform's values would span less than a tenth of a shared axis, each is shown in % from its own median (under the axis)"
	}
	title += pl.emulationLine(platforms)
	return pl.saveGrid(bench+"-boxes", title, grid, panelW, panelH, 0)
}

func (pl *figures) boxPanel(bench, name string, platforms []string, rng *rand.Rand) (*plot.Plot, bool, error) {
	p := newPlot()
	p.Title.TextStyle.Font = font.From(sansFont, 10)
	columns := make([]boxColumn, len(platforms))
	unit, direction := "", ""
	lo, hi := math.Inf(1), math.Inf(-1)
	for j, platform := range platforms {
		columns[j].label = pl.label(platform)
		m := findMetricSummary(findResult(pl.suite, bench, platform).Metrics, name)
		switch {
		case m == nil || m.N == 0:
			columns[j].label += "\nnot measured"
			continue
		case !hasAllSamples(*m):
			columns[j].label += "\nsamples dropped"
			continue
		}
		unit, direction = m.Unit, directionWord(string(m.Direction))
		columns[j].samples = m.Samples
		for _, s := range m.Samples {
			lo, hi = math.Min(lo, s.Value), math.Max(hi, s.Value)
		}
	}
	relative := lo > 0 && spreadsAreFlat(columns, lo, hi)
	p.Title.Text = fmt.Sprintf("%s\n[%s, %s]", name, unit, direction)
	p.Y.Label.Text = unit
	if relative {
		p.Y.Label.Text = "% from the platform's median"
	}
	var ticks []string
	var all []float64
	for j, col := range columns {
		if col.samples == nil {
			ticks = append(ticks, col.label)
			continue
		}
		values := make(plotter.Values, len(col.samples))
		for k, s := range col.samples {
			values[k] = s.Value
		}
		means := RepetitionMeans(col.samples)
		label := fmt.Sprintf("%s\n%s, %s", col.label, plural(len(values), "value"), plural(len(means), "rep"))
		if relative {
			median := stat.Quantile(0.5, stat.Empirical, sortedCopy(values), nil)
			label += "\nmedian " + compactNumber(median)
			for k := range values {
				values[k] = (values[k]/median - 1) * 100
			}
			for k := range means {
				means[k] = (means[k]/median - 1) * 100
			}
		}
		ticks = append(ticks, label)
		all = append(all, values...)
		points := make(plotter.XYs, len(values))
		for k, v := range values {
			points[k] = plotter.XY{X: float64(j) + 0.16*(rng.Float64()-0.5), Y: v}
		}
		if err := pl.addBox(p, platforms[j], j, len(platforms), values, points, means); err != nil {
			return nil, false, err
		}
	}
	p.NominalX(ticks...)
	p.X.Min, p.X.Max = -0.6, float64(len(platforms))-0.4
	setBoxYAxis(p, all)
	p.Add(plotter.NewGrid())
	return p, relative, nil
}

// boxColumn is one platform in a box plot panel.
type boxColumn struct {
	label   string
	samples []vmbenchv1.Sample
}

// spreadsAreFlat is true when no platform's values span a tenth of the shared axis from lo to hi
// (an emulated VM beside a container, say): each platform is then drawn relative to its own median,
// so that its spread stays visible.
func spreadsAreFlat(columns []boxColumn, lo, hi float64) bool {
	for _, col := range columns {
		if len(col.samples) < 2 {
			continue
		}
		cl, ch := math.Inf(1), math.Inf(-1)
		for _, s := range col.samples {
			cl, ch = math.Min(cl, s.Value), math.Max(ch, s.Value)
		}
		if ch-cl >= 0.1*(hi-lo) {
			return false
		}
	}
	return true
}

// addBox draws one platform's box at x, its samples (already jittered) and its repetition means
// beside the box.
func (pl *figures) addBox(p *plot.Plot, platform string, x, platforms int, values plotter.Values, points plotter.XYs, means []float64) error {
	c := pl.color(platform)
	box, err := plotter.NewBoxPlot(vg.Points(250*0.34/float64(platforms)), float64(x), values)
	if err != nil {
		return err
	}
	box.FillColor = tint(c, 0.25)
	box.BoxStyle.Color, box.MedianStyle.Color, box.WhiskerStyle.Color = c, c, c
	box.BoxStyle.Width = vg.Points(1.2)
	box.MedianStyle.Width = vg.Points(2.2)
	box.WhiskerStyle.Width = vg.Points(1)
	box.GlyphStyle.Radius = 0 // every sample is drawn below, outliers too
	samples, err := plotter.NewScatter(points)
	if err != nil {
		return err
	}
	samples.GlyphStyle = draw.GlyphStyle{Color: color.Gray{Y: 60}, Radius: vg.Points(2.4), Shape: draw.RingGlyph{}}
	repXY := make(plotter.XYs, len(means))
	for k, v := range means {
		repXY[k] = plotter.XY{X: float64(x) + 0.3, Y: v}
	}
	reps, err := plotter.NewScatter(repXY)
	if err != nil {
		return err
	}
	reps.GlyphStyle = draw.GlyphStyle{Color: shade(c, 0.6), Radius: vg.Points(4), Shape: diamondGlyph{}}
	p.Add(box, samples, reps)
	return nil
}

func sortedCopy(v []float64) []float64 {
	out := append([]float64(nil), v...)
	sort.Float64s(out)
	return out
}

// setBoxYAxis fits the axis to the values with some room above and below.
func setBoxYAxis(p *plot.Plot, values []float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	p.Y.Tick.Marker = niceTicks{}
	if len(values) == 0 {
		p.Y.Min, p.Y.Max = 0, 1
		return
	}
	pad := (hi - lo) * 0.12
	if pad == 0 {
		pad = math.Max(math.Abs(hi)*0.1, 1)
	}
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
}

// tint mixes c with white: share 0 is white, 1 is c.
func tint(c color.Color, share float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(255 - share*(255-float64(v>>8))) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xFF}
}

// shade mixes c with black: share 1 is c, 0 is black.
func shade(c color.Color, share float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 { return uint8(share * float64(v>>8)) }
	return color.RGBA{R: mix(r), G: mix(g), B: mix(b), A: 0xFF}
}

// diamondGlyph is a filled square standing on a corner, which no other mark of the plots uses.
type diamondGlyph struct{}

func (diamondGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	var path vg.Path
	path.Move(vg.Point{X: pt.X, Y: pt.Y + r})
	path.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	path.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	path.Line(vg.Point{X: pt.X - r, Y: pt.Y})
	path.Close()
	c.SetColor(sty.Color)
	c.Fill(path)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
