package cli

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"math"
	"strings"

	"github.com/vmbench/vmbench/internal/history"
)

// Geometry of a series' plot, in SVG user units.
const (
	plotWidth, plotHeight           = 720.0, 220.0
	plotLeft, plotRight             = 60.0, 20.0
	plotTop, plotBottom             = 20.0, 40.0
	plotInnerWidth, plotInnerHeight = plotWidth - plotLeft - plotRight, plotHeight - plotTop - plotBottom
)

// writeHistoryHTML writes one self-contained page: the text output, then per series an inline SVG
// of its ratio over the runs (for the baseline platform its value over the first run's) with the
// 95% band, the detector's change points as solid lines and environment changes as dashed lines.
func writeHistoryHTML(w io.Writer, name, namespace string, records []history.Record) error {
	var text bytes.Buffer
	if err := writeHistoryText(&text, name, namespace, records); err != nil {
		return err
	}
	envAt := map[string][]string{}
	for _, c := range environmentChanges(records) {
		suite, what, _ := strings.Cut(c, ": ")
		envAt[suite] = append(envAt[suite], what)
	}
	analysed := analysedRecords(records)
	baselineName := analysed[len(analysed)-1].Baseline
	series, keys := buildSeries(analysed)

	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>vmbench history %s</title>\n", html.EscapeString(name))
	b.WriteString("<style>body{font-family:sans-serif;margin:1em 2em}pre{font-size:12px}svg{display:block;margin-bottom:1.5em}" +
		".band{fill:#9ecae1;opacity:.5}.line{fill:none;stroke:#08519c;stroke-width:1.5}.pt{fill:#08519c}" +
		".change{stroke:#cb181d;stroke-width:2}.env{stroke:#636363;stroke-dasharray:4 3}.axis{stroke:#999}text{font-size:11px}</style>\n</head><body>\n")
	fmt.Fprintf(&b, "<h1>History of schedule %s</h1>\n<pre>%s</pre>\n", html.EscapeString(name), html.EscapeString(text.String()))
	for _, k := range keys {
		points := series[k]
		baseline := k.platform == baselineName
		title := fmt.Sprintf("%s %s on %s: ratio to %s", k.benchmark, k.metric, k.platform, baselineName)
		if baseline {
			title = fmt.Sprintf("%s %s on %s (baseline): value over the first run's", k.benchmark, k.metric, k.platform)
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n", html.EscapeString(title))
		a, at, err := analyzeSeries(points, baseline)
		var changes []int
		if err == nil {
			for _, c := range a.Changes {
				changes = append(changes, at[c.Index])
			}
		}
		writeSeriesSVG(&b, points, baseline, changes, envAt)
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plotValue is a point's value, band and whether it has one.
func plotValue(p seriesPoint, baseline bool, first float64) (v, low, high float64, ok bool) {
	m := p.metric
	if baseline {
		if m.MeanLog == nil {
			return 0, 0, 0, false
		}
		v = math.Exp(*m.MeanLog - first)
		half := 0.0
		if m.VarLog != nil && m.N >= 2 {
			half = 1.96 * math.Sqrt(*m.VarLog/float64(m.N))
		}
		return v, v * math.Exp(-half), v * math.Exp(half), true
	}
	if m.Ratio == nil {
		return 0, 0, 0, false
	}
	v, low, high = *m.Ratio, *m.Ratio, *m.Ratio
	if m.RatioLow != nil && m.RatioHigh != nil {
		low, high = *m.RatioLow, *m.RatioHigh
	}
	return v, low, high, true
}

func writeSeriesSVG(b *strings.Builder, points []seriesPoint, baseline bool, changes []int, envAt map[string][]string) {
	first := 0.0
	for _, p := range points {
		if p.metric.MeanLog != nil {
			first = *p.metric.MeanLog
			break
		}
	}
	type pt struct {
		i            int
		v, low, high float64
	}
	var pts []pt
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, p := range points {
		if v, l, h, ok := plotValue(p, baseline, first); ok {
			pts = append(pts, pt{i, v, l, h})
			lo, hi = math.Min(lo, l), math.Max(hi, h)
		}
	}
	if len(pts) == 0 {
		b.WriteString("<p>No values to plot.</p>\n")
		return
	}
	if hi-lo < 1e-9 {
		lo, hi = lo*0.99, hi*1.01+1e-9
	}
	pad := (hi - lo) * 0.1
	lo, hi = lo-pad, hi+pad
	x := func(i int) float64 {
		if len(points) == 1 {
			return plotLeft + plotInnerWidth/2
		}
		return plotLeft + float64(i)*plotInnerWidth/float64(len(points)-1)
	}
	y := func(v float64) float64 { return plotTop + (hi-v)/(hi-lo)*plotInnerHeight }
	fmt.Fprintf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" height=\"%g\" viewBox=\"0 0 %g %g\">\n", plotWidth, plotHeight, plotWidth, plotHeight)
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%g\" y1=\"%g\" x2=\"%g\" y2=\"%g\"/>\n", plotLeft, plotTop+plotInnerHeight, plotWidth-plotRight, plotTop+plotInnerHeight)
	fmt.Fprintf(b, "<text x=\"4\" y=\"%.1f\">%.3f</text><text x=\"4\" y=\"%.1f\">%.3f</text>\n", y(hi-pad)+4, hi-pad, y(lo+pad)+4, lo+pad)
	// The band: highs left to right, then lows right to left.
	var band, line []string
	for _, p := range pts {
		band = append(band, fmt.Sprintf("%.1f,%.1f", x(p.i), y(p.high)))
		line = append(line, fmt.Sprintf("%.1f,%.1f", x(p.i), y(p.v)))
	}
	for j := len(pts) - 1; j >= 0; j-- {
		band = append(band, fmt.Sprintf("%.1f,%.1f", x(pts[j].i), y(pts[j].low)))
	}
	fmt.Fprintf(b, "<polygon class=\"band\" points=\"%s\"/>\n", strings.Join(band, " "))
	fmt.Fprintf(b, "<polyline class=\"line\" points=\"%s\"/>\n", strings.Join(line, " "))
	for _, p := range pts {
		fmt.Fprintf(b, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\"><title>%s: %.4f [%.4f, %.4f]</title></circle>\n",
			x(p.i), y(p.v), html.EscapeString(points[p.i].suite), p.v, p.low, p.high)
	}
	// A change or a version change lies between the run before and the run it names.
	between := func(i int) float64 {
		if i == 0 {
			return x(0)
		}
		return (x(i-1) + x(i)) / 2
	}
	for _, i := range changes {
		fmt.Fprintf(b, "<line class=\"change\" data-suite=\"%s\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"><title>change at %s</title></line>\n",
			html.EscapeString(points[i].suite), between(i), plotTop, between(i), plotTop+plotInnerHeight, html.EscapeString(points[i].suite))
	}
	for i, p := range points {
		if what, ok := envAt[p.suite]; ok {
			fmt.Fprintf(b, "<line class=\"env\" data-suite=\"%s\" x1=\"%.1f\" y1=\"%g\" x2=\"%.1f\" y2=\"%g\"><title>%s: %s</title></line>\n",
				html.EscapeString(p.suite), between(i), plotTop, between(i), plotTop+plotInnerHeight,
				html.EscapeString(p.suite), html.EscapeString(strings.Join(what, "; ")))
		}
	}
	fmt.Fprintf(b, "<text x=\"%g\" y=\"%g\">%s</text><text x=\"%g\" y=\"%g\" text-anchor=\"end\">%s</text>\n",
		plotLeft, plotHeight-10, html.EscapeString(points[0].suite), plotWidth-plotRight, plotHeight-10, html.EscapeString(points[len(points)-1].suite))
	b.WriteString("</svg>\n")
}
