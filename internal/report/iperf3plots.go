package report

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

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
