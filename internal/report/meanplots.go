package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vmbench/vmbench/internal/results"
)

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
				// An HPL sweep's points have a figure of their own (hplSweepPlots).
				if m.N > 0 && !results.IsHPLPointMetric(m.Name) {
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
