package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/tables"
)

// PlotOptions say where the plots go and in which formats.
type PlotOptions struct {
	// Dir is created when it does not exist.
	Dir string
	// SVG writes an SVG next to every PNG.
	SVG bool
	// Tolerance overrides the suite's for the forest plots' band, as in Options.
	Tolerance *float64
	// Tables are the suite's whole result tables, read from its ConfigMaps (package tables): the
	// iozone heatmaps and the iperf3 time series are drawn from them.
	Tables []tables.Stored
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

// WritePlots draws the forest plots (Report.Forests) and, for every benchmark, the means per
// platform with their confidence intervals; and, when the suite has the data for them, HPL over the
// problem size (across hpcc benchmarks, and within each hpcc benchmark that swept N, NB or the
// grid), iozone heatmaps over file and record size, the iperf3 bandwidth samples and, from the whole
// result tables (PlotOptions.Tables), the iperf3 bandwidth over time.
func WritePlots(suite *vmbenchv1.BenchmarkSuite, opts PlotOptions) (*PlotOutput, error) {
	if !hasMetrics(suite) {
		return nil, fmt.Errorf("suite %s has no results to plot", suiteName(suite))
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	pl := &figures{suite: suite, opts: opts, out: &PlotOutput{}, platforms: baselineFirst(suite), emulated: emulatedPlatforms(suite)}
	for _, step := range []func() error{pl.forests, pl.means, pl.boxes, pl.hplOverN, pl.hplSweepPlots, pl.iozoneHeatmaps, pl.iperf3Samples, pl.iperf3TimeSeries} {
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
