package report

import (
	"fmt"
	"image/color"
	"math"
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

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// iozoneCell matches an iozone metric of auto mode: an optional target prefix, the test, file size
// and record size in KiB.
var iozoneCell = regexp.MustCompile(`^((?:local_|shared_|rootfs_)?[a-z_]+?)_(\d+)k_(\d+)k$`)

// heatCells are the means of one iozone test over file size × record size, per platform, with how
// many tables (or samples) each platform's means are made of.
type heatCells struct {
	unit   string
	cells  map[string]map[[2]int]float64 // platform -> (file, rec) -> mean
	counts map[string]int
}

// iozoneHeatmaps draws, per iozone benchmark, target and test, the mean throughput over file size ×
// record size, one panel per platform on one colour scale. The means come from the whole tables of
// auto mode (PlotOptions.Tables); without them, from status metrics named <test>_<file>k_<rec>k
// when those span more than one cell.
func (pl *figures) iozoneHeatmaps() error {
	found := false
	for _, b := range pl.suite.Spec.Benchmarks {
		if b.Type != vmbenchv1.BenchmarkIozone {
			continue
		}
		found = true
		tests, order := pl.iozoneTableCells(b.Name)
		source := "tables"
		if len(order) == 0 {
			tests, order = pl.iozoneStatusCells(b.Name)
			source = "status"
		}
		if len(order) == 0 {
			pl.note("%s: iozone heatmap skipped, %s", b.Name, pl.noHeatmapCause(b))
			continue
		}
		for _, test := range order {
			if err := pl.iozoneHeatmap(b.Name, test, source, tests[test]); err != nil {
				return err
			}
		}
	}
	if !found {
		pl.note("iozone heatmap: skipped, the suite has no iozone benchmark")
	}
	return nil
}

// noHeatmapCause says why an iozone benchmark has nothing to draw over file and record size.
func (pl *figures) noHeatmapCause(b vmbenchv1.Benchmark) string {
	if b.Iozone == nil || !b.Iozone.Auto {
		return "it runs one file and record size (set iozone.auto for the whole table)"
	}
	kept := int32(0)
	for _, platform := range pl.platforms {
		if res := findResult(pl.suite, b.Name, platform); res != nil {
			kept += res.Tables
		}
	}
	if kept > 0 {
		return fmt.Sprintf("status counts %d tables kept in ConfigMaps, and none was read: %s", kept, tablesHint(pl.suite))
	}
	return "no table was kept"
}

// iozoneTableCells averages the iozone tables of a benchmark, per target and test, per platform.
// Tests are named as in status, with the target's prefix when the benchmark has two.
func (pl *figures) iozoneTableCells(bench string) (map[string]heatCells, []string) {
	type acc struct{ sum, n float64 }
	sums := map[string]map[string]map[[2]int]*acc{}
	units := map[string]string{}
	tablesPer := map[string]map[string]int{}
	var order []string
	for _, st := range pl.opts.Tables {
		if st.Benchmark != bench {
			continue
		}
		file, record, cols, err := results.IozoneTableColumns(st.Table)
		if err != nil {
			pl.note("%s: table of run %s, %s: %v", bench, st.Run, st.Node, err)
			continue
		}
		for _, c := range cols {
			test := c.Test
			if st.Variant != "" {
				test = st.Variant + "_" + test
			}
			if sums[test] == nil {
				sums[test] = map[string]map[[2]int]*acc{}
				tablesPer[test] = map[string]int{}
				order = append(order, test)
			}
			if sums[test][st.Platform] == nil {
				sums[test][st.Platform] = map[[2]int]*acc{}
			}
			units[test] = c.Unit
			tablesPer[test][st.Platform]++
			for _, r := range st.Table.Rows {
				if math.IsNaN(r[c.Index]) {
					continue
				}
				k := [2]int{int(r[file]), int(r[record])}
				a := sums[test][st.Platform][k]
				if a == nil {
					a = &acc{}
					sums[test][st.Platform][k] = a
				}
				a.sum += r[c.Index]
				a.n++
			}
		}
	}
	out := map[string]heatCells{}
	for test, byPlatform := range sums {
		hc := heatCells{unit: units[test], cells: map[string]map[[2]int]float64{}, counts: tablesPer[test]}
		for platform, cells := range byPlatform {
			hc.cells[platform] = map[[2]int]float64{}
			for k, a := range cells {
				hc.cells[platform][k] = a.sum / a.n
			}
		}
		out[test] = hc
	}
	return out, order
}

// iozoneStatusCells reads the cells of auto mode from status metrics, where a test has more than
// one of them.
func (pl *figures) iozoneStatusCells(bench string) (map[string]heatCells, []string) {
	out := map[string]heatCells{}
	var order []string
	for _, platform := range pl.platforms {
		res := findResult(pl.suite, bench, platform)
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
			hc, ok := out[sub[1]]
			if !ok {
				hc = heatCells{unit: m.Unit, cells: map[string]map[[2]int]float64{}, counts: map[string]int{}}
				order = append(order, sub[1])
			}
			if hc.cells[platform] == nil {
				hc.cells[platform] = map[[2]int]float64{}
			}
			hc.cells[platform][[2]int{file, rec}] = Summarize(m).Mean
			hc.counts[platform] = max(hc.counts[platform], int(m.N))
			out[sub[1]] = hc
		}
	}
	// A single cell per test is auto mode's headline in status, not a table.
	var kept []string
	for _, test := range order {
		for _, cells := range out[test].cells {
			if len(cells) > 1 {
				kept = append(kept, test)
				break
			}
		}
	}
	return out, kept
}

// heatGrid is one platform's means on the (record size, file size) grid; NaN where not measured.
type heatGrid struct {
	z [][]float64 // [file][record]
}

func (g heatGrid) Dims() (c, r int)   { return len(g.z[0]), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

func (pl *figures) iozoneHeatmap(bench, test, source string, hc heatCells) error {
	scale, shownUnit := 1.0, hc.unit
	if hc.unit == "KiB/s" {
		scale, shownUnit = 1.0/1024, "MiB/s"
	}
	var files, recs []int
	var platforms []string
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, platform := range pl.platforms {
		cells, ok := hc.cells[platform]
		if !ok {
			continue
		}
		platforms = append(platforms, platform)
		for k, v := range cells {
			files = appendNew(files, k[0])
			recs = appendNew(recs, k[1])
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
				v, ok := hc.cells[platform][[2]int{f, rec}]
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
		p.Title.Text = fmt.Sprintf("%s: %s [%s], %s", pl.label(platform), test, shownUnit, meanOf(source, hc.counts[platform]))
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
	bar.Y.Tick.Marker = niceTicks{}

	what := "mean throughput"
	if hc.unit == "us" {
		what = "mean time per operation"
	}
	title := fmt.Sprintf("%s %s: %s over file size × record size [%s], one colour scale for all panels; grey: not measured%s",
		bench, test, what, shownUnit, pl.emulationLine(platforms))
	// Cells stay wide enough for their label however many sizes the table has.
	panelW := vg.Length(math.Max(340, 46*float64(len(recs))+110))
	panelH := vg.Length(math.Max(330, 20*float64(len(files))+110))
	return pl.saveFigure(gridFigure{name: bench + "-" + strings.ReplaceAll(test, "_", "-") + "-heatmap", title: title,
		grid: [][]*plot.Plot{plots}, panelW: panelW, panelH: panelH, side: bar, sideW: 90})
}

// meanOf says what a heatmap panel's means are made of.
func meanOf(source string, n int) string {
	if source == "tables" {
		if n == 1 {
			return "1 table"
		}
		return fmt.Sprintf("mean of %d tables", n)
	}
	if n == 1 {
		return "1 value"
	}
	return fmt.Sprintf("mean of %d values", n)
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
