package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// sweepPoint is one point of an HPL sweep on one platform: its parameters and its Gflop/s over the
// repetitions.
type sweepPoint struct {
	results.HPLPoint
	Summary Summary
}

// hplSweep is the points of one hpcc benchmark that ran several HPL points in one execution.
type hplSweep struct {
	Benchmark string
	// Platforms are in report order; ByPlatform holds each one's points, sorted by grid, NB and N.
	Platforms  []string
	ByPlatform map[string][]sweepPoint
	// Ns, NBs and Grids are every value that some platform measured, in ascending order (grids in
	// the order of their first point).
	Ns, NBs []int
	Grids   [][2]int
}

// hplSweeps finds the sweeps of the suite: every benchmark whose results carry point metrics
// (results.HPLPointMetric), in spec order.
func hplSweeps(suite *vmbenchv1.BenchmarkSuite, platforms []string) []hplSweep {
	var out []hplSweep
	for _, bench := range benchmarkOrder(suite) {
		sw := hplSweep{Benchmark: bench, ByPlatform: map[string][]sweepPoint{}}
		for _, platform := range platforms {
			res := findResult(suite, bench, platform)
			if res == nil {
				continue
			}
			for _, m := range res.Metrics {
				p, ok := results.ParseHPLPointMetric(m.Name)
				if !ok || m.N == 0 {
					continue
				}
				s := Summarize(m)
				s.Mean *= gflopsScale(m.Unit)
				s.StdDev *= gflopsScale(m.Unit)
				sw.ByPlatform[platform] = append(sw.ByPlatform[platform], sweepPoint{HPLPoint: p, Summary: s})
				sw.Ns = appendNew(sw.Ns, p.N)
				sw.NBs = appendNew(sw.NBs, p.NB)
				sw.Grids = appendNew(sw.Grids, [2]int{p.P, p.Q})
			}
			if len(sw.ByPlatform[platform]) > 0 {
				sw.Platforms = append(sw.Platforms, platform)
			}
		}
		if len(sw.Platforms) == 0 {
			continue
		}
		sort.Ints(sw.Ns)
		sort.Ints(sw.NBs)
		gridIndex := map[[2]int]int{}
		for i, g := range sw.Grids {
			gridIndex[g] = i
		}
		for _, pts := range sw.ByPlatform {
			sort.SliceStable(pts, func(i, j int) bool {
				a, b := pts[i], pts[j]
				if ga, gb := gridIndex[[2]int{a.P, a.Q}], gridIndex[[2]int{b.P, b.Q}]; ga != gb {
					return ga < gb
				}
				if a.NB != b.NB {
					return a.NB < b.NB
				}
				return a.N < b.N
			})
		}
		out = append(out, sw)
	}
	return out
}

// series is the label of a point's line: its block size, and its grid when the sweep has several.
func (sw hplSweep) series(p sweepPoint) string {
	if len(sw.Grids) > 1 {
		return fmt.Sprintf("NB=%d, %dx%d", p.NB, p.P, p.Q)
	}
	return fmt.Sprintf("NB=%d", p.NB)
}

// sweepDashes tell the grids apart where colours tell the block sizes apart.
var sweepDashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

var sweepGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}, draw.PlusGlyph{}}

// hplSweepPlots draws, per sweep, HPL's Gflop/s over N: one panel per platform on one y scale, one
// line per block size (colour) and grid (dashes and marks), each point the mean over repetitions
// with its 95% interval.
func (pl *figures) hplSweepPlots() error {
	// Without a sweep, hplOverN's note says what a sweep needs.
	for _, sw := range hplSweeps(pl.suite, pl.platforms) {
		if err := pl.hplSweepPlot(sw); err != nil {
			return err
		}
	}
	return nil
}

func (pl *figures) hplSweepPlot(sw hplSweep) error {
	lo, hi := math.Inf(1), 0.0
	noCI := false
	for _, pts := range sw.ByPlatform {
		for _, p := range pts {
			hw, ok := CIHalfWidth(p.Summary, Confidence)
			noCI = noCI || !ok
			lo, hi = math.Min(lo, math.Max(p.Summary.Mean-hw, p.Summary.Mean/2)), math.Max(hi, p.Summary.Mean+hw)
		}
	}
	// Emulated VMs are one or two orders of magnitude slower: a log axis keeps every panel readable.
	logY := lo > 0 && hi/lo > 8
	logX := sw.Ns[0] > 0 && float64(sw.Ns[len(sw.Ns)-1])/float64(sw.Ns[0]) >= 4
	nbColor := map[int]color.Color{}
	for i, nb := range sw.NBs {
		nbColor[nb] = platformColors[i%len(platformColors)]
	}
	gridStyle := map[[2]int]int{}
	for i, g := range sw.Grids {
		gridStyle[g] = i % len(sweepDashes)
	}
	// Each line's points move a little sideways, so that the intervals of lines that measured nearly
	// the same stay apart: by a fraction of an octave on a log axis, of the span on a linear one.
	lines := len(sw.NBs) * len(sw.Grids)
	dodge := func(pt sweepPoint) float64 {
		i := slices.Index(sw.NBs, pt.NB)*len(sw.Grids) + slices.Index(sw.Grids, [2]int{pt.P, pt.Q})
		offset := float64(i) - float64(lines-1)/2
		if logX {
			return float64(pt.N) * math.Pow(2, 0.03*offset)
		}
		return float64(pt.N) + 0.012*offset*float64(sw.Ns[len(sw.Ns)-1]-sw.Ns[0])
	}

	legend := newPlot()
	legend.HideAxes()
	legend.Legend.Top, legend.Legend.Left = true, true
	legend.Legend.TextStyle.Font = font.From(sansFont, 10)
	legend.Legend.Padding = vg.Points(2)
	var panels []*plot.Plot
	inLegend := map[string]bool{}
	var labels []string
	for _, platform := range sw.Platforms {
		p := newPlot()
		p.Title.Text = pl.label(platform)
		p.Title.TextStyle.Font = font.From(sansFont, 11)
		p.X.Label.Text = "problem size N"
		if logX {
			p.X.Label.Text += ", log scale"
		}
		// Every panel has the same axes, so that plot.Align puts their titles at one height. The
		// label stays short: gonum reserves room for it around the arithmetic middle of the range,
		// which on a log axis lies near the top.
		p.Y.Label.Text = "Gflop/s"
		if logY {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
			p.Y.Min, p.Y.Max = lo/1.3, hi*1.5
		} else {
			p.Y.Min, p.Y.Max = 0, hi*1.1
			p.Y.Tick.Marker = niceTicks{}
		}
		ticks := make(plot.ConstantTicks, len(sw.Ns))
		for k, n := range sw.Ns {
			ticks[k] = plot.Tick{Value: float64(n), Label: strconv.Itoa(n)}
		}
		p.X.Tick.Marker = ticks
		first, last := float64(sw.Ns[0]), float64(sw.Ns[len(sw.Ns)-1])
		if logX {
			p.X.Scale = plot.LogScale{}
			p.X.Min, p.X.Max = first/1.25, last*1.25
		} else {
			pad := math.Max((last-first)*0.08, first*0.05)
			p.X.Min, p.X.Max = first-pad, last+pad
		}
		if len(sw.Ns) > 4 {
			rotateXTicks(p)
		}
		p.Add(plotter.NewGrid())

		var order []string
		xys := map[string]plotter.XYs{}
		errs := map[string]plotter.YErrors{}
		style := map[string]sweepPoint{}
		for _, pt := range sw.ByPlatform[platform] {
			key := sw.series(pt)
			if _, ok := xys[key]; !ok {
				order = append(order, key)
				style[key] = pt
			}
			hw, _ := CIHalfWidth(pt.Summary, Confidence)
			xys[key] = append(xys[key], plotter.XY{X: dodge(pt), Y: pt.Summary.Mean})
			errs[key] = append(errs[key], struct{ Low, High float64 }{hw, hw})
		}
		for _, key := range order {
			pt := style[key]
			c := nbColor[pt.NB]
			g := gridStyle[[2]int{pt.P, pt.Q}]
			line, points, err := plotter.NewLinePoints(xys[key])
			if err != nil {
				return err
			}
			line.Color, points.Color = c, c
			line.Width = vg.Points(1.6)
			line.Dashes = sweepDashes[g]
			points.Shape = sweepGlyphs[g]
			points.Radius = vg.Points(3.2)
			eb, err := plotter.NewYErrorBars(errorPoints{xys[key], errs[key]})
			if err != nil {
				return err
			}
			eb.Color = c
			eb.Width = vg.Points(1.1)
			eb.CapWidth = vg.Points(6)
			p.Add(line, points, eb)
			if !inLegend[key] {
				inLegend[key] = true
				labels = append(labels, key)
				legend.Legend.Add(key, line, points)
			}
		}
		panels = append(panels, p)
	}
	title := fmt.Sprintf("%s: HPL Gflop/s over problem size N, one line per block size NB", sw.Benchmark)
	if logY {
		title = fmt.Sprintf("%s: HPL Gflop/s (log scale) over problem size N, one line per block size NB", sw.Benchmark)
	}
	if len(sw.Grids) > 1 {
		title += " and grid PxQ"
	} else {
		title += fmt.Sprintf(" (grid %dx%d)", sw.Grids[0][0], sw.Grids[0][1])
	}
	title += ";\nmean with 95% CI (Student t) over repetitions, one HPCC execution per repetition"
	if noCI {
		title += "; no error bar below 2 repetitions"
	}
	title += pl.emulationLine(sw.Platforms)
	sideW := vg.Length(40) + legendWidth(legend, labels)
	return pl.saveFigure(gridFigure{name: sw.Benchmark + "-hpl-sweep", title: title,
		grid: [][]*plot.Plot{panels}, panelW: 330, panelH: 320, side: legend, sideW: sideW})
}

// legendWidth is how wide a legend with these labels is, thumbnails included.
func legendWidth(p *plot.Plot, labels []string) vg.Length {
	w := vg.Length(0)
	for _, label := range labels {
		w = max(w, p.Legend.TextStyle.Width(label))
	}
	return w + p.Legend.ThumbnailWidth + vg.Points(10)
}
