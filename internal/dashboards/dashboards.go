// Package dashboards builds vmbench's Grafana dashboards as code, with the Grafana Foundation SDK,
// from the metrics that internal/metrics exports. cmd/dashboards writes them as JSON into the Helm
// chart (charts/vmbench/dashboards); the tests check their layout, their PromQL and that the
// committed files are current.
//
// Every board marks results from emulated VMs (emulated="true": QEMU software emulation, TCG) in a
// panel that turns red, in legends and in table columns, because such figures do not measure the
// overhead of a VM.
package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// Names of the template variables the boards define.
const (
	VarDatasource = "datasource"
	VarNamespace  = "namespace"
	VarSuite      = "suite"
	VarBenchmark  = "benchmark"
	VarMetric     = "metric"
	VarPlatform   = "platform"
	VarSchedule   = "schedule"
)

// Tag is on every board; the boards link to each other through it.
const Tag = "vmbench"

// EmulationPanelTitle is the title of the stat panel, on every board, that turns red when a result
// it selects comes from emulated VMs.
const EmulationPanelTitle = "Emulated VMs (TCG)"

// EmulationDescription explains on the emulation panel why emulated figures are not VM overhead.
const EmulationDescription = `Red when any result selected here has emulated="true": its VMs ran under QEMU software ` +
	`emulation (TCG) because the nodes offered no usable KVM. TCG translates every guest instruction in software, ` +
	`so emulated VMs are typically several to tens of times slower than hardware-accelerated ones, by an amount ` +
	`that depends on the workload. Those VM figures, and every ratio and overhead percentage computed from them, ` +
	`measure the emulator, not the overhead of a KubeVirt VM: do not compare them with container results or quote ` +
	`them as VM overhead. Rerun on nodes with /dev/kvm for real VM figures. Green: no selected result is emulated.`

// Board is one dashboard and the file cmd/dashboards writes it to.
type Board struct {
	File  string
	Build func() (dashboard.Dashboard, error)
}

// Boards returns the dashboards of suites' series (namespace and suite variables), in a fixed
// order.
func Boards() []Board {
	return []Board{
		{File: "vmbench-overview.json", Build: Overview},
		{File: "vmbench-benchmark.json", Build: Benchmark},
		{File: "vmbench-trend.json", Build: Trend},
	}
}

// ScheduleBoards returns the dashboards of schedules' series (namespace and schedule variables),
// in a fixed order.
func ScheduleBoards() []Board {
	return []Board{
		{File: "vmbench-schedule.json", Build: Schedule},
	}
}

// All returns every dashboard, in a fixed order: what cmd/dashboards writes.
func All() []Board {
	return append(Boards(), ScheduleBoards()...)
}

// Render returns a dashboard as indented JSON with a trailing newline. Struct fields keep their
// declared order and map keys are sorted, so the same dashboard always renders the same bytes.
// Annotation queries get their format from annotationFormats; a board with annotations has them
// last.
func Render(d dashboard.Dashboard) ([]byte, error) {
	var doc any = d
	if len(d.Annotations.List) > 0 {
		a := annotated{Dashboard: d}
		for _, q := range d.Annotations.List {
			f, ok := annotationFormats[q.Name]
			if !ok {
				return nil, fmt.Errorf("annotation %q has no format in annotationFormats", q.Name)
			}
			a.Annotations.List = append(a.Annotations.List, formattedAnnotation{AnnotationQuery: q, annotationFormat: f})
		}
		doc = a
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep PromQL's < > & readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// annotated is a dashboard whose annotation queries carry their format.
type annotated struct {
	dashboard.Dashboard
	Annotations struct {
		List []formattedAnnotation `json:"list"`
	} `json:"annotations"`
}

type formattedAnnotation struct {
	dashboard.AnnotationQuery
	annotationFormat
}

// RenderAll builds and renders every board, by file name.
func RenderAll() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, b := range All() {
		d, err := b.Build()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
		data, err := Render(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
		out[b.File] = data
	}
	return out, nil
}

// WriteAll renders every board into dir, which it creates if needed, and returns the paths written.
func WriteAll(dir string) ([]string, error) {
	files, err := RenderAll()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, b := range All() {
		path := filepath.Join(dir, b.File)
		if err := os.WriteFile(path, files[b.File], 0o644); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// Panels returns a dashboard's panels, including those inside rows.
func Panels(d dashboard.Dashboard) []dashboard.Panel {
	var out []dashboard.Panel
	for _, p := range d.Panels {
		if p.Panel != nil {
			out = append(out, *p.Panel)
		}
		if p.RowPanel != nil {
			out = append(out, p.RowPanel.Panels...)
		}
	}
	return out
}

// Targets returns a panel's Prometheus queries.
func Targets(p dashboard.Panel) []prometheus.Dataquery {
	var out []prometheus.Dataquery
	for _, t := range p.Targets {
		switch q := t.(type) {
		case prometheus.Dataquery:
			out = append(out, q)
		case *prometheus.Dataquery:
			out = append(out, *q)
		}
	}
	return out
}

// Queries returns every PromQL expression of a dashboard's panels, in panel and target order,
// each once. They still hold Grafana variables: Expand them before sending them to Prometheus.
func Queries(d dashboard.Dashboard) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range Panels(d) {
		for _, t := range Targets(p) {
			if !seen[t.Expr] {
				seen[t.Expr] = true
				out = append(out, t.Expr)
			}
		}
	}
	return out
}

// Annotation is an annotation query of a dashboard.
type Annotation struct {
	Name, Expr string
}

// Annotations returns a dashboard's annotation queries, in their order on the board. Their
// expressions hold Grafana variables as Queries' do.
func Annotations(d dashboard.Dashboard) []Annotation {
	var out []Annotation
	for _, a := range d.Annotations.List {
		out = append(out, Annotation{Name: a.Name, Expr: str(a.Expr)})
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// Variable is a template variable: a label_values query, or the datasource picker (Query is the
// plugin type).
type Variable struct {
	Name, Type, Query string
}

// Variables returns a dashboard's template variables in their order on the board.
func Variables(d dashboard.Dashboard) []Variable {
	var out []Variable
	for _, v := range d.Templating.List {
		q := ""
		if v.Query != nil && v.Query.String != nil {
			q = *v.Query.String
		}
		out = append(out, Variable{Name: v.Name, Type: string(v.Type), Query: q})
	}
	return out
}

// Macros are the values Expand gives Grafana's built-in interval variables unless told otherwise.
var Macros = map[string]string{"__range": "1h", "__rate_interval": "5m", "__interval": "1m"}

var varRef = regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]`)

// VariableRefs returns the names of the Grafana variables an expression refers to ($name, ${name},
// ${name:format}, [[name]]), each once, in order of appearance.
func VariableRefs(expr string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range varRef.FindAllStringSubmatch(expr, -1) {
		name := m[1] + m[2] + m[3]
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// Expand replaces the Grafana variables in a query with values, and the interval macros with
// Macros where values has none, so that the query can run against Prometheus directly. A variable
// without a value stays as it is.
func Expand(expr string, values map[string]string) string {
	return varRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := values[name]; ok {
			return v
		}
		if v, ok := Macros[name]; ok {
			return v
		}
		return ref
	})
}

// --- building blocks shared by the boards ---

func ptr[T any](v T) *T { return &v }

// datasource is the panels' data source: whatever the datasource variable picked.
func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: ptr("prometheus"), Uid: ptr("${" + VarDatasource + "}")}
}

func newBoard(uid, title, description, from string) *dashboard.DashboardBuilder {
	return dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags([]string{Tag}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Time(from, "now").
		Timezone(common.TimeZoneBrowser).
		Refresh("1m").
		Link(dashboard.NewDashboardLinkBuilder("vmbench").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{Tag}).
			Icon("external link").
			Tooltip("vmbench dashboards").
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true)).
		WithVariable(dashboard.NewDatasourceVariableBuilder(VarDatasource).
			Label("Data source").
			Type("prometheus"))
}

// labelVariable is a query variable over label_values(selector, name).
func labelVariable(name, label, selector string) *dashboard.QueryVariableBuilder {
	q := fmt.Sprintf("label_values(%s, %s)", selector, name)
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Query(dashboard.StringOrMap{String: &q}).
		Datasource(datasource()).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc)
}

// multiVariable is a labelVariable that takes several values, All meaning every value (also those
// that appear later), for regex matchers (label=~"$name").
func multiVariable(name, label, selector string) *dashboard.QueryVariableBuilder {
	return labelVariable(name, label, selector).Multi(true).IncludeAll(true).AllValue(".*")
}

func pos(x, y, w, h uint32) dashboard.GridPos { return dashboard.GridPos{X: x, Y: y, W: w, H: h} }

// instant is a query for the latest value, as the stat, bar gauge and table panels show.
func instant(refID, expr, legend string) *prometheus.DataqueryBuilder {
	q := prometheus.NewDataqueryBuilder().RefId(refID).Expr(expr).Instant().EditorMode(prometheus.QueryEditorModeCode)
	if legend != "" {
		q.LegendFormat(legend)
	}
	return q
}

// tableQuery is an instant query in table format: one row per series, one column per label.
func tableQuery(refID, expr string) *prometheus.DataqueryBuilder {
	return instant(refID, expr, "").Format(prometheus.PromQueryFormatTable)
}

// latest is the last value of each of expr's series within the dashboard's time range, for instant
// panels of a suite's per-metric series: the manager exports those only while the suite runs and
// for a retention after it ends (--metrics-detail-retention), so that at "now" a finished suite
// may have none while Prometheus still holds them.
func latest(expr string) string {
	return "last_over_time(" + expr + "[$__range])"
}

// rangeQuery is a query over the dashboard's time range, for time series panels.
func rangeQuery(refID, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().RefId(refID).Expr(expr).Range().
		EditorMode(prometheus.QueryEditorModeCode).LegendFormat(legend)
}

// step is a threshold: from this value on, the colour.
type step struct {
	from  float64
	color string
}

func thresholds(base string, steps ...step) cog.Builder[dashboard.ThresholdsConfig] {
	out := []dashboard.Threshold{{Color: base}}
	for _, s := range steps {
		out = append(out, dashboard.Threshold{Value: ptr(s.from), Color: s.color})
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(out)
}

// overheadThresholds colour an overhead percentage: green up to 5 % (negative: better than the
// baseline), then yellow, orange, and red from 30 %.
func overheadThresholds() cog.Builder[dashboard.ThresholdsConfig] {
	return thresholds("green", step{5, "yellow"}, step{15, "orange"}, step{30, "red"})
}

func lastValue() cog.Builder[common.ReduceDataOptions] {
	return common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}).Values(false)
}

func fixedColor(color string) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "color", Value: map[string]any{"mode": "fixed", "fixedColor": color}}
}

// emulatedSeries matches the display names of series whose legend ends in emulated=true.
const emulatedSeries = `/.*emulated=true$/`

// emulatedColor marks emulated series in bar gauges and time series, apart from the threshold
// colours that grade real overhead.
const emulatedColor = "purple"

// emulationPanel counts the selected value series that come from emulated VMs: red with a
// warning from one on, green at zero, no value when the selection has no results at all.
func emulationPanel(id uint32, at dashboard.GridPos, selector string) *stat.PanelBuilder {
	expr := fmt.Sprintf(`count(%s) or (0 * count(%s))`,
		latest(`vmbench_result_value{`+selector+`, emulated="true"}`), latest(`vmbench_result_value{`+selector+`}`))
	red := "red"
	green := "green"
	return newStat().
		Id(id).
		GridPos(at).
		Title(EmulationPanelTitle).
		Description(EmulationDescription).
		Datasource(datasource()).
		WithTarget(instant("A", expr, "emulated series")).
		Thresholds(thresholds("green", step{1, "red"})).
		Mappings([]dashboard.ValueMapping{
			{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText,
				Options: map[string]dashboard.ValueMappingResult{"0": {Text: ptr("No emulated results"), Color: &green, Index: ptr[int32](0)}}}},
			{RangeMap: &dashboard.RangeMap{Type: dashboard.MappingTypeRangeToText,
				Options: dashboard.DashboardRangeMapOptions{From: ptr(1.0), Result: dashboard.ValueMappingResult{
					Text: ptr("EMULATED (TCG): VM figures are not VM overhead"), Color: &red, Index: ptr[int32](1)}}}},
		}).
		NoValue("no results").
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValue).
		ReduceOptions(lastValue())
}

// newStat is a stat panel with Grafana's default orientation.
func newStat() *stat.PanelBuilder {
	return stat.NewPanelBuilder().Orientation(common.VizOrientationAuto)
}

// newTimeseries is a time series panel whose tooltip lists every series, highest first.
func newTimeseries() *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().
		Tooltip(common.NewVizTooltipOptionsBuilder().Mode(common.TooltipDisplayModeMulti).Sort(common.SortOrderDescending))
}

// newTable is a table panel with small rows and no footer.
func newTable() *table.PanelBuilder {
	return table.NewPanelBuilder().
		CellHeight(common.TableCellHeightSm).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{"sum"}).CountRows(false))
}

// tableBelow is a time series panel's legend: a table below the plot with the given calculations
// per series.
func tableBelow(calcs ...string) *common.VizLegendOptionsBuilder {
	return common.NewVizLegendOptionsBuilder().
		DisplayMode(common.LegendDisplayModeTable).
		Placement(common.LegendPlacementBottom).
		ShowLegend(true).
		Calcs(calcs)
}
