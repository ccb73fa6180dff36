package report

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"codeberg.org/go-fonts/liberation/liberationsansregular"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

//go:embed report.html.tmpl
var htmlTemplate string

// htmlPage is what the template shows.
type htmlPage struct {
	Suite, Baseline, Context string
	Headlines                []string
	Summaries                []PlatformSummary
	Overview                 template.HTML
	Forests                  []htmlForest
	Rows                     []Row
	Legend                   []string
	Notes                    []string
	Runs                     []RunRow
	Startup                  []PlatformStartup
	StartupPhases            []string
	StartupLegend            string
	VMSettings               []PlatformVMSettings
	VMSettingsLegend         string
	// KVMBands is the table's section "against KVM's expected band", as text.
	KVMBands         string
	TolerancePercent float64
	Comparisons      int
	RatioMethod      string
	NoIntervalNote   string
	// NoInterval and Excluded say whether some summary row carries footnote ¹ or ².
	NoInterval, Excluded bool
	NoisyCoV             float64
	// FontURL is Liberation Sans as a data: URL: the font gonum/plot measured the plots' text
	// with, so that labels fit on a machine without it, and nothing is fetched.
	FontURL template.URL
}

type htmlForest struct {
	Title string
	SVG   template.HTML
}

var htmlFuncs = template.FuncMap{
	"speed": func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return formatSpeed(*v)
	},
	"interval":  formatInterval,
	"ratioCell": ratioCell,
	"change":    changeMark,
	"meanCell": func(n, values int, mean, ci *float64, trimmed bool) string {
		return meanCell(n, values, mean, ci, trimmed)
	},
	"cov":   formatCoV,
	"deref": func(v *float64) float64 { return *v },
	"p":     formatP,
	"mde":   formatMDE,
	"worst": func(g GroupSummary) string {
		if g.Worst == nil {
			return "-"
		}
		s := g.Worst.Metric + " " + formatSpeed(*g.Worst.SpeedRatio)
		if g.Kind != KindBenchmark {
			s = g.Worst.Benchmark + " " + s
		}
		return s
	},
	"phaseWords": phaseWords,
}

// inlineSVG turns gonum/plot's SVG document into an element that scales with the page.
func inlineSVG(doc []byte) template.HTML {
	s := string(doc)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = strings.Replace(s, "<svg ", `<svg class="plot" role="img" `, 1)
	return template.HTML(s) //nolint:gosec // SVG from gonum/plot's own writer, whose text it escapes
}

// WriteHTML writes the report as one self-contained page: the first screen, the forest plots as
// inline SVG, the full table, the notes and a short guide; styles inline, nothing fetched.
func (r *Report) WriteHTML(w io.Writer) error {
	tmpl, err := template.New("report").Funcs(htmlFuncs).Parse(htmlTemplate)
	if err != nil {
		return err
	}
	page := htmlPage{Suite: r.Suite, Baseline: r.Baseline, Context: r.Context, Summaries: r.Summaries, Rows: r.Rows,
		Notes: r.Notes, Runs: r.Runs, Startup: r.Startup, StartupPhases: vmbenchv1.StartupPhaseNames, StartupLegend: StartupLegend,
		VMSettings: r.VMSettings, VMSettingsLegend: VMSettingsLegend,
		TolerancePercent: r.Tolerance * 100, Comparisons: r.Comparisons,
		RatioMethod: RatioMethod, NoIntervalNote: NoIntervalNote, NoisyCoV: NoisyCoV,
		FontURL: template.URL("data:font/ttf;base64," + base64.StdEncoding.EncodeToString(liberationsansregular.TTF))} //nolint:gosec // a constant font
	var bandsText strings.Builder
	if err := r.writeKVMBands(&bandsText); err != nil {
		return err
	}
	page.KVMBands = strings.TrimSpace(bandsText.String())
	for _, ps := range r.Summaries {
		page.Headlines = append(page.Headlines, r.Headline(ps))
	}
	page.Headlines = append(page.Headlines, r.migrationTexts()...)
	for _, ps := range r.Summaries {
		for _, g := range ps.Groups() {
			page.NoInterval = page.NoInterval || g.NoInterval()
			page.Excluded = page.Excluded || g.Excluded > 0
		}
	}
	emulated, trimmed := false, false
	for _, row := range r.Rows {
		emulated = emulated || row.Emulated || row.BaselineEmulated
		trimmed = trimmed || row.SamplesTrimmed
	}
	page.Legend = append(r.summaryLegend(false, false), r.legend(emulated, trimmed)...)
	for i, f := range r.Forests() {
		svg, err := f.Render("svg")
		if err != nil {
			return fmt.Errorf("forest plot %s: %w", f.Name, err)
		}
		if i == 0 && f.Name == "forest-overview" {
			page.Overview = inlineSVG(svg)
			continue
		}
		page.Forests = append(page.Forests, htmlForest{Title: f.Title, SVG: inlineSVG(svg)})
	}
	return tmpl.Execute(w, page)
}
