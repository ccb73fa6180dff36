package report

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// pairColors tell the node pairs of a time series apart: the Okabe–Ito colours, then dashed.
var pairColors = []color.Color{
	color.RGBA{R: 0x00, G: 0x72, B: 0xB2, A: 0xFF},
	color.RGBA{R: 0xD5, G: 0x5E, B: 0x00, A: 0xFF},
	color.RGBA{R: 0x00, G: 0x9E, B: 0x73, A: 0xFF},
	color.RGBA{R: 0xCC, G: 0x79, B: 0xA7, A: 0xFF},
	color.RGBA{R: 0xE6, G: 0x9F, B: 0x00, A: 0xFF},
	color.RGBA{R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF},
	color.RGBA{R: 0x00, G: 0x00, B: 0x00, A: 0xFF},
}

// interval is one row of an iperf3 time series.
type interval struct{ start, end, bps float64 }

// iperf3Series reads the intervals of an iperf3 table, or says what is wrong with it.
func iperf3Series(t results.Table) ([]interval, error) {
	s, e, b := t.Column(results.Iperf3StartColumn), t.Column(results.Iperf3EndColumn), t.Column(results.Iperf3BandwidthColumn)
	if s < 0 || e < 0 || b < 0 {
		return nil, fmt.Errorf("no %s, %s and %s columns", results.Iperf3StartColumn, results.Iperf3EndColumn, results.Iperf3BandwidthColumn)
	}
	var out []interval
	for _, r := range t.Rows {
		if math.IsNaN(r[s]) || math.IsNaN(r[e]) || math.IsNaN(r[b]) {
			continue
		}
		out = append(out, interval{r[s], r[e], r[b]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no interval")
	}
	return out, nil
}

// iperf3TimeSeries draws, per iperf3 benchmark, the bandwidth over time of every node pair, one
// panel per platform: a step per interval, faint for each repetition and bold for their mean.
func (pl *figures) iperf3TimeSeries() error {
	found := false
	for _, b := range pl.suite.Spec.Benchmarks {
		if b.Type != vmbenchv1.BenchmarkIperf3 {
			continue
		}
		found = true
		if err := pl.iperf3TimeSeriesOf(b.Name); err != nil {
			return err
		}
	}
	if !found {
		pl.note("iperf3 time series: skipped, the suite has no iperf3 benchmark")
	}
	return nil
}

func (pl *figures) iperf3TimeSeriesOf(bench string) error {
	// platform -> pair -> one series per repetition
	byPlatform := map[string]map[string][][]interval{}
	var pairs []string
	for _, st := range pl.opts.Tables {
		if st.Benchmark != bench {
			continue
		}
		series, err := iperf3Series(st.Table)
		if err != nil {
			pl.note("%s: time series of run %s, %s: %v", bench, st.Run, st.Node, err)
			continue
		}
		if byPlatform[st.Platform] == nil {
			byPlatform[st.Platform] = map[string][][]interval{}
		}
		byPlatform[st.Platform][st.Node] = append(byPlatform[st.Platform][st.Node], series)
		pairs = appendNew(pairs, st.Node)
	}
	var drawn []string
	for _, p := range pl.platforms {
		if byPlatform[p] != nil {
			drawn = append(drawn, p)
		}
	}
	if len(drawn) == 0 {
		cause := "no table was kept"
		kept := int32(0)
		for _, p := range pl.platforms {
			if res := findResult(pl.suite, bench, p); res != nil {
				kept += res.Tables
			}
		}
		if kept > 0 {
			cause = fmt.Sprintf("status counts %d series kept in ConfigMaps, and none was read: %s", kept, tablesHint(pl.suite))
		}
		pl.note("%s: iperf3 time series skipped, %s", bench, cause)
		return nil
	}
	sort.Strings(pairs)
	colorOf := func(pair string) (color.Color, []vg.Length) {
		i := sort.SearchStrings(pairs, pair)
		var dashes []vg.Length
		if i >= len(pairColors) {
			dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		return pairColors[i%len(pairColors)], dashes
	}

	end := 0.0
	for _, byPair := range byPlatform {
		for _, reps := range byPair {
			for _, s := range reps {
				end = math.Max(end, s[len(s)-1].end)
			}
		}
	}
	grid := make([][]*plot.Plot, len(drawn))
	for r, platform := range drawn {
		p := newPlot()
		top := 0.0
		reps := 0
		for _, pair := range pairs {
			for _, s := range byPlatform[platform][pair] {
				for _, in := range s {
					top = math.Max(top, in.bps)
				}
			}
			reps = max(reps, len(byPlatform[platform][pair]))
		}
		scale, unit := 1e-9, "Gbit/s"
		if top < 1e9 {
			scale, unit = 1e-6, "Mbit/s"
		}
		for _, pair := range pairs {
			series := byPlatform[platform][pair]
			if len(series) == 0 {
				continue
			}
			c, dashes := colorOf(pair)
			if len(series) > 1 {
				for _, s := range series {
					faint := steps(s, scale)
					faint.Color = withAlpha(c, 0x66)
					faint.Width = vg.Points(0.8)
					faint.Dashes = dashes
					p.Add(faint)
				}
			}
			mean := steps(meanSeries(series), scale)
			mean.Color = c
			mean.Width = vg.Points(2)
			mean.Dashes = dashes
			p.Add(mean)
		}
		p.Add(plotter.NewGrid())
		what := "one repetition"
		if reps > 1 {
			what = fmt.Sprintf("bold: mean of %d repetitions, faint: each", reps)
		}
		p.Title.Text = fmt.Sprintf("%s: %s", pl.label(platform), what)
		p.Y.Label.Text = "bandwidth [" + unit + "]"
		p.Y.Min, p.Y.Max = 0, top*scale*1.1
		p.Y.Tick.Marker = niceTicks{}
		p.X.Min, p.X.Max = 0, end
		p.X.Tick.Marker = niceTicks{}
		if r == len(drawn)-1 {
			p.X.Label.Text = "time since the start of the measurement [s]"
		}
		grid[r] = []*plot.Plot{p}
	}

	legend := newPlot()
	legend.HideAxes()
	legend.Legend.Top, legend.Legend.Left = true, true
	legend.Legend.TextStyle.Font.Size = vg.Points(10)
	legend.Title.Text = "pair (sender-receiver)"
	legend.Title.TextStyle.Font.Size = vg.Points(10)
	for _, pair := range pairs {
		c, dashes := colorOf(pair)
		l := &plotter.Line{LineStyle: draw.LineStyle{Color: c, Width: vg.Points(2), Dashes: dashes}}
		legend.Legend.Add(pair, l)
	}
	title := fmt.Sprintf("%s: bandwidth over time per node pair, as iperf3's client measured each interval%s", bench, pl.emulationLine(drawn))
	return pl.saveFigure(gridFigure{name: bench + "-over-time", title: title, grid: grid,
		panelW: 620, panelH: 240, side: legend, sideW: 170})
}

// steps draws a series as a step per interval: its bandwidth held from the interval's start to its
// end.
func steps(s []interval, scale float64) *plotter.Line {
	xys := make(plotter.XYs, 0, len(s)+1)
	for _, in := range s {
		xys = append(xys, plotter.XY{X: in.start, Y: in.bps * scale})
	}
	last := s[len(s)-1]
	xys = append(xys, plotter.XY{X: last.end, Y: last.bps * scale})
	l, _ := plotter.NewLine(xys)
	l.StepStyle = plotter.PostStep
	return l
}

// meanSeries averages the repetitions of one pair interval by interval, as far as each goes.
func meanSeries(series [][]interval) []interval {
	n := 0
	for _, s := range series {
		n = max(n, len(s))
	}
	out := make([]interval, n)
	for i := range out {
		var sum interval
		k := 0.0
		for _, s := range series {
			if i < len(s) {
				sum.start += s[i].start
				sum.end += s[i].end
				sum.bps += s[i].bps
				k++
			}
		}
		out[i] = interval{sum.start / k, sum.end / k, sum.bps / k}
	}
	return out
}

func withAlpha(c color.Color, a uint8) color.Color {
	r, g, b, _ := c.RGBA()
	return color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: a}
}
