package dashboards

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// chartDir holds the generated files, relative to this package.
const chartDir = "../../charts/vmbench/dashboards"

// exported maps every series name internal/metrics exports to its label names. It registers the
// collectors on a fresh registry, records a suite with an emulated VM platform, a finished run with
// a failed benchmark and a node timing, and gathers; a histogram contributes its _bucket (with
// le), _sum and _count series.
var exported = func() map[string]map[string]bool {
	reg := prometheus.NewRegistry()
	metrics.Register(reg)
	metrics.RecordSuite(&vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "suite"},
		Spec:       vmbenchv1.BenchmarkSuiteSpec{Baseline: "container"},
		Status: vmbenchv1.BenchmarkSuiteStatus{
			Phase: vmbenchv1.SuiteComplete,
			Results: []vmbenchv1.BenchmarkResult{
				{Benchmark: "cpu", Platform: "container", Metrics: []vmbenchv1.MetricSummary{
					{Name: "events_per_second", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 3, Mean: 1000, StdDev: 10}}},
				{Benchmark: "cpu", Platform: "vm", Emulated: true, Metrics: []vmbenchv1.MetricSummary{
					{Name: "events_per_second", Unit: "ops/s", Direction: vmbenchv1.HigherIsBetter, N: 3, Mean: 100, StdDev: 5}}},
			},
			Ratios: []vmbenchv1.PlatformRatios{{Benchmark: "cpu", Platform: "vm", Emulated: true,
				Metrics: []vmbenchv1.RatioValue{{Metric: "events_per_second", Ratio: 0.1, OverheadPercent: 900}}}},
		},
	})
	recordSchedule()
	metrics.RunFinished(vmbenchv1.PlatformVM,
		vmbenchv1.RunStatus{Phase: vmbenchv1.RunFailed, BootSeconds: []vmbenchv1.NodeTiming{{Node: "node01", Seconds: 42}}},
		[]vmbenchv1.BenchmarkType{vmbenchv1.BenchmarkSysbenchCPU})
	families, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	out := map[string]map[string]bool{}
	add := func(name string, m *dto.Metric, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range m.GetLabel() {
			out[name][l.GetName()] = true
		}
		for _, l := range extra {
			out[name][l] = true
		}
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetType() == dto.MetricType_HISTOGRAM {
				add(f.GetName()+"_bucket", m, "le")
				add(f.GetName()+"_sum", m)
				add(f.GetName()+"_count", m)
				continue
			}
			add(f.GetName(), m)
		}
	}
	return out
}()

// recordSchedule gives a schedule every series internal/metrics exports of schedules: its status
// with a finding and a version trigger, a pinned baseline record, and two records of two platforms
// on different versions.
func recordSchedule() {
	at := metav1.NewTime(time.Unix(1700000000, 0))
	metrics.RecordSchedule(&vmbenchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "nightly"},
		Status: vmbenchv1.BenchmarkScheduleStatus{
			LastSuccessfulTime: &at, NextScheduleTime: &at, Records: 2,
			Findings: []vmbenchv1.Finding{{ID: "f", Benchmark: "cpu", Metric: "events_per_second", Platform: "vm",
				Arm: vmbenchv1.ArmVM, Direction: "down", Regression: true, Time: at, State: vmbenchv1.FindingUntriaged}},
			LastTrigger: &vmbenchv1.VersionTrigger{Time: at, Suite: "nightly-28333333"},
		},
	})
	metrics.RecordScheduleSensitivity("ns", "nightly", []metrics.SeriesSensitivity{
		{Benchmark: "cpu", Metric: "events_per_second", Platform: "vm", Arm: "ratio", MinDetectableChange: 0.04}})
	f := func(v float64) *float64 { return &v }
	metrics.RecordScheduleBaseline("ns", "nightly", &history.Record{Suite: "nightly-0", Baseline: "container",
		Metrics: []history.MetricRecord{
			{Benchmark: "cpu", Platform: "container", Metric: "events_per_second", N: 3, MeanLog: f(7)},
			{Benchmark: "cpu", Platform: "vm", Metric: "events_per_second", N: 3, MeanLog: f(6.95), Ratio: f(0.95)},
		}})
	var records []history.Record
	for i, runner := range []string{"runner:1", "runner:2"} {
		rec := history.Record{Suite: fmt.Sprintf("nightly-%d", i), Baseline: "container", Phase: vmbenchv1.SuiteComplete,
			Environments: []vmbenchv1.RunEnvironment{{ID: runner, Platform: vmbenchv1.PlatformContainer, RunnerImage: runner}},
			Metrics: []history.MetricRecord{
				{Benchmark: "cpu", Platform: "container", Metric: "events_per_second", N: 3, MeanLog: f(7), VarLog: f(0.01)},
				{Benchmark: "cpu", Platform: "vm", Metric: "events_per_second", N: 3, MeanLog: f(6.9), VarLog: f(0.02),
					Ratio: f(0.9), RatioLow: f(0.85), RatioHigh: f(0.95)},
			}}
		records = append(records, rec)
		metrics.RecordScheduleRecord("ns", "nightly", rec)
	}
	metrics.RecordScheduleEnvironmentChange("ns", "nightly", records)
}

// boards builds every board once for the tests.
func boards(t *testing.T) map[string]dashboard.Dashboard {
	t.Helper()
	out := map[string]dashboard.Dashboard{}
	for _, b := range All() {
		d, err := b.Build()
		if err != nil {
			t.Fatalf("%s: %v", b.File, err)
		}
		out[b.File] = d
	}
	return out
}

func TestExportedMetrics(t *testing.T) {
	// The sample recording must reach every collector, or the name checks below would be too strict.
	for _, name := range []string{"vmbench_result_value", "vmbench_result_stddev", "vmbench_result_samples",
		"vmbench_result_ratio", "vmbench_result_overhead_percent", "vmbench_suite_phase", "vmbench_runs_total",
		"vmbench_benchmark_failures_total", "vmbench_node_ready_seconds_bucket", "vmbench_summary_ratio",
		"vmbench_schedule_records", "vmbench_schedule_findings_open", "vmbench_schedule_last_success_timestamp_seconds",
		"vmbench_schedule_next_run_timestamp_seconds", "vmbench_schedule_ratio", "vmbench_schedule_ratio_low",
		"vmbench_schedule_ratio_high", "vmbench_schedule_noise", "vmbench_schedule_mean", "vmbench_schedule_finding_timestamp_seconds",
		"vmbench_schedule_version_change_timestamp_seconds", "vmbench_schedule_environment_change_timestamp_seconds",
		"vmbench_schedule_min_detectable_change", "vmbench_schedule_baseline_ratio", "vmbench_schedule_baseline_mean"} {
		if exported[name] == nil {
			t.Errorf("internal/metrics exported no %s: %v", name, exported)
		}
	}
}

func TestBoards(t *testing.T) {
	uids := map[string]string{}
	for file, d := range boards(t) {
		uid := str(d.Uid)
		if uid == "" || str(d.Title) == "" {
			t.Errorf("%s: uid %q, title %q", file, uid, str(d.Title))
		}
		if other, dup := uids[uid]; dup {
			t.Errorf("%s and %s share the uid %q", file, other, uid)
		}
		uids[uid] = file
		if !slices.Contains(d.Tags, Tag) {
			t.Errorf("%s: tags %v lack %q", file, d.Tags, Tag)
		}
		if len(Queries(d)) == 0 {
			t.Errorf("%s: no queries", file)
		}
	}
}

func TestVariables(t *testing.T) {
	for file, d := range boards(t) {
		vars := Variables(d)
		byName := map[string]Variable{}
		for i, v := range vars {
			if _, dup := byName[v.Name]; dup {
				t.Errorf("%s: variable %q twice", file, v.Name)
			}
			// A variable may only use variables defined before it: Grafana resolves them in order.
			for _, ref := range VariableRefs(v.Query) {
				if _, ok := byName[ref]; !ok {
					t.Errorf("%s: variable %d %q refers to $%s, not defined before it", file, i, v.Name, ref)
				}
			}
			byName[v.Name] = v
		}
		if ds := byName[VarDatasource]; ds.Type != "datasource" || ds.Query != "prometheus" {
			t.Errorf("%s: datasource variable %+v, want a prometheus datasource picker", file, ds)
		}
		// A suite's boards pick a namespace and a suite among the results, a schedule's a namespace
		// and a schedule among the schedules.
		picks, from := []string{VarNamespace, VarSuite}, "vmbench_result_value"
		if scheduleBoard(file) {
			picks, from = []string{VarNamespace, VarSchedule}, "vmbench_schedule_records"
		}
		for _, name := range picks {
			v, ok := byName[name]
			if !ok {
				t.Errorf("%s: no %s variable", file, name)
				continue
			}
			if v.Type != "query" || !strings.HasPrefix(v.Query, "label_values("+from) {
				t.Errorf("%s: variable %s is %s %q, want label_values on %s", file, name, v.Type, v.Query, from)
			}
		}
		for _, model := range d.Templating.List {
			if model.Type == "query" && (model.Datasource == nil || str(model.Datasource.Uid) != "${datasource}") {
				t.Errorf("%s: variable %s does not query ${datasource}", file, model.Name)
			}
		}
	}
}

var labelValues = regexp.MustCompile(`^label_values\((.+), (\w+)\)$`)

// The selector of every label_values query parses and selects an exported series that has the label.
func TestVariableQueries(t *testing.T) {
	for file, d := range boards(t) {
		for _, v := range Variables(d) {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Query)
			if m == nil {
				t.Errorf("%s: variable %s: %q is not label_values(selector, label)", file, v.Name, v.Query)
				continue
			}
			expr, err := parser.ParseExpr(m[1])
			if err != nil {
				t.Errorf("%s: variable %s: selector %q: %v", file, v.Name, m[1], err)
				continue
			}
			sel, ok := expr.(*parser.VectorSelector)
			if !ok || exported[sel.Name] == nil {
				t.Errorf("%s: variable %s: %q does not select a series of internal/metrics", file, v.Name, m[1])
				continue
			}
			if !exported[sel.Name][m[2]] {
				t.Errorf("%s: variable %s: %s has no label %q", file, v.Name, sel.Name, m[2])
			}
		}
	}
}

type rect struct {
	id         uint32
	x, y, w, h uint32
}

func (a rect) overlaps(b rect) bool {
	return a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h
}

func TestPanels(t *testing.T) {
	for file, d := range boards(t) {
		ids := map[uint32]bool{}
		var rects []rect
		for _, p := range Panels(d) {
			if p.Id == nil || *p.Id == 0 {
				t.Errorf("%s: panel %q has no id", file, str(p.Title))
				continue
			}
			id := *p.Id
			if ids[id] {
				t.Errorf("%s: panel id %d twice", file, id)
			}
			ids[id] = true
			if str(p.Title) == "" || str(p.Description) == "" {
				t.Errorf("%s: panel %d lacks a title or a description", file, id)
			}
			g := p.GridPos
			if g == nil || g.W == 0 || g.H == 0 || g.X+g.W > 24 {
				t.Errorf("%s: panel %d: gridPos %+v not within the 24 columns", file, id, g)
				continue
			}
			r := rect{id, g.X, g.Y, g.W, g.H}
			for _, o := range rects {
				if r.overlaps(o) {
					t.Errorf("%s: panels %d %+v and %d %+v overlap", file, o.id, o, id, r)
				}
			}
			rects = append(rects, r)
			if p.Datasource == nil || str(p.Datasource.Type) != "prometheus" || str(p.Datasource.Uid) != "${datasource}" {
				t.Errorf("%s: panel %d: datasource %+v, want prometheus ${datasource}", file, id, p.Datasource)
			}
			targets := Targets(p)
			if len(targets) == 0 || len(targets) != len(p.Targets) {
				t.Errorf("%s: panel %d: %d targets, %d of them Prometheus queries", file, id, len(p.Targets), len(targets))
			}
			refs := map[string]bool{}
			for _, q := range targets {
				if strings.TrimSpace(q.Expr) == "" {
					t.Errorf("%s: panel %d: empty expression", file, id)
				}
				ref := str(q.RefId)
				if ref == "" || refs[ref] {
					t.Errorf("%s: panel %d: refId %q empty or repeated", file, id, ref)
				}
				refs[ref] = true
				if q.Datasource != nil && str(q.Datasource.Uid) != "${datasource}" {
					t.Errorf("%s: panel %d target %s: datasource %+v", file, id, ref, q.Datasource)
				}
			}
		}
		if len(ids) == 0 {
			t.Errorf("%s: no panels", file)
		}
	}
}

// checkQuery parses one expression and checks what it selects against internal/metrics: every
// vector selector names an exported series and matches only its labels, grouping and legend labels
// exist, multi-value variables appear only in regex matchers and single-value ones only in
// equality matchers. It returns the series names the expression selects.
func checkQuery(t *testing.T, where, expr, legend string, multi map[string]bool) []string {
	t.Helper()
	// Variables are fine inside string literals; only the interval macros stand outside them.
	parsed, err := parser.ParseExpr(Expand(expr, nil))
	if err != nil {
		t.Errorf("%s: %q does not parse as PromQL: %v", where, expr, err)
		return nil
	}
	var names []string
	available := map[string]bool{}
	var grouping []string
	parser.Inspect(parsed, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			known := exported[n.Name]
			if known == nil {
				t.Errorf("%s: %q selects %q, which internal/metrics does not export", where, expr, n.Name)
				return nil
			}
			names = append(names, n.Name)
			for l := range known {
				available[l] = true
			}
			for _, m := range n.LabelMatchers {
				if m.Name == "__name__" {
					continue
				}
				if !known[m.Name] {
					t.Errorf("%s: %q matches label %q, which %s does not have", where, expr, m.Name, n.Name)
				}
				for _, ref := range VariableRefs(m.Value) {
					if multi[ref] && m.Type != labels.MatchRegexp {
						t.Errorf("%s: %q: multi-value $%s needs =~, not %s", where, expr, ref, m.Type)
					}
					// A single value may stand in a pattern ("$schedule-[0-9]+"), not alone in a regex.
					if !multi[ref] && m.Type != labels.MatchEqual && (m.Type != labels.MatchRegexp || m.Value == "$"+ref) {
						t.Errorf("%s: %q: single-value $%s needs =, not %s", where, expr, ref, m.Type)
					}
				}
			}
		case *parser.AggregateExpr:
			grouping = append(grouping, n.Grouping...)
		case *parser.Call:
			// label_join and label_replace add their destination label.
			if (n.Func.Name == "label_join" || n.Func.Name == "label_replace") && len(n.Args) > 1 {
				if s, ok := n.Args[1].(*parser.StringLiteral); ok {
					available[s.Val] = true
				}
			}
		}
		return nil
	})
	if len(names) == 0 {
		t.Errorf("%s: %q selects no vmbench series", where, expr)
	}
	for _, l := range grouping {
		if !available[l] {
			t.Errorf("%s: %q groups by %q, which none of %v has", where, expr, l, names)
		}
	}
	for _, m := range legendLabel.FindAllStringSubmatch(legend, -1) {
		if !available[m[1]] {
			t.Errorf("%s: legend %q uses {{%s}}, which none of %v has", where, legend, m[1], names)
		}
	}
	return names
}

var legendLabel = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

func TestQueries(t *testing.T) {
	for file, d := range boards(t) {
		defined := map[string]bool{}
		multi := map[string]bool{}
		for _, v := range d.Templating.List {
			defined[v.Name] = true
			multi[v.Name] = v.Multi != nil && *v.Multi
		}
		for _, p := range Panels(d) {
			for _, q := range Targets(p) {
				where := file + ": panel " + str(p.Title) + " target " + str(q.RefId)
				for _, ref := range VariableRefs(q.Expr) {
					if _, macro := Macros[ref]; !macro && !defined[ref] {
						t.Errorf("%s: %q uses $%s, which the board does not define", where, q.Expr, ref)
					}
				}
				checkQuery(t, where, q.Expr, str(q.LegendFormat), multi)
			}
		}
		for _, a := range Annotations(d) {
			where := file + ": annotation " + a.Name
			for _, ref := range VariableRefs(a.Expr) {
				if _, macro := Macros[ref]; !macro && !defined[ref] {
					t.Errorf("%s: %q uses $%s, which the board does not define", where, a.Expr, ref)
				}
			}
			checkQuery(t, where, a.Expr, annotationFormats[a.Name].TitleFormat+annotationFormats[a.Name].TextFormat, multi)
		}
	}
}

// scheduleBoard says whether a file holds one of ScheduleBoards.
func scheduleBoard(file string) bool {
	return slices.ContainsFunc(ScheduleBoards(), func(b Board) bool { return b.File == file })
}

// resultSeries carry the emulated label: every panel showing them must show it too.
var resultSeries = []string{"vmbench_result_value", "vmbench_result_stddev", "vmbench_result_samples",
	"vmbench_result_ratio", "vmbench_result_overhead_percent"}

func TestEmulationIsMarked(t *testing.T) {
	for file, d := range boards(t) {
		var warnings int
		for _, p := range Panels(d) {
			if str(p.Title) == EmulationPanelTitle {
				warnings++
				checkEmulationPanel(t, file, p)
				continue
			}
			for _, q := range Targets(p) {
				if !slices.ContainsFunc(resultSeries, func(s string) bool { return strings.Contains(q.Expr, s) }) {
					continue
				}
				legend := str(q.LegendFormat)
				switch {
				case strings.Contains(legend, "emulated={{emulated}}"):
				case strings.Contains(q.Expr, `"emulated"`): // label_join puts it into a column name
				case q.Format != nil && *q.Format == "table" && !tableHides(p, "emulated"):
				default:
					t.Errorf("%s: panel %q target %s shows results without marking emulated ones (legend %q)",
						file, str(p.Title), str(q.RefId), legend)
				}
			}
		}
		if warnings != 1 {
			t.Errorf("%s: %d panels titled %q, want 1", file, warnings, EmulationPanelTitle)
		}
	}
}

func checkEmulationPanel(t *testing.T, file string, p dashboard.Panel) {
	t.Helper()
	if p.Type != "stat" {
		t.Errorf("%s: emulation panel is a %s, want stat", file, p.Type)
	}
	desc := str(p.Description)
	for _, want := range []string{`emulated="true"`, "TCG", "not the overhead of a KubeVirt VM"} {
		if !strings.Contains(desc, want) {
			t.Errorf("%s: emulation panel description lacks %q", file, want)
		}
	}
	targets := Targets(p)
	if len(targets) != 1 || !strings.Contains(targets[0].Expr, `emulated="true"`) {
		t.Errorf("%s: emulation panel targets %+v, want one counting emulated=\"true\"", file, targets)
	}
	if p.FieldConfig == nil || p.FieldConfig.Defaults.Thresholds == nil {
		t.Fatalf("%s: emulation panel has no thresholds", file)
	}
	steps := p.FieldConfig.Defaults.Thresholds.Steps
	if len(steps) != 2 || steps[0].Color != "green" || steps[1].Color != "red" || steps[1].Value == nil || *steps[1].Value != 1 {
		t.Errorf("%s: emulation panel thresholds %+v, want green, red from 1", file, steps)
	}
	if data, _ := json.Marshal(p.Options); !bytes.Contains(data, []byte(`"colorMode":"background"`)) {
		t.Errorf("%s: emulation panel options %s, want a background colour", file, data)
	}
}

// tableHides says whether an organize transformation of the panel hides a column.
func tableHides(p dashboard.Panel, column string) bool {
	for _, tr := range p.Transformations {
		if o, ok := tr.Options.(map[string]any); ok && tr.Id == "organize" {
			if ex, ok := o["excludeByName"].(map[string]any); ok && ex[column] == true {
				return true
			}
		}
	}
	return false
}

func TestOverviewPanels(t *testing.T) {
	d, err := Overview()
	if err != nil {
		t.Fatal(err)
	}
	var selected []string
	for _, q := range Queries(d) {
		selected = append(selected, checkQuery(t, "overview", q, "", nil)...)
	}
	for _, want := range []string{"vmbench_result_value", "vmbench_result_overhead_percent", "vmbench_suite_phase",
		"vmbench_runs_total", "vmbench_benchmark_failures_total", "vmbench_summary_ratio"} {
		if !slices.Contains(selected, want) {
			t.Errorf("the overview does not show %s", want)
		}
	}
	for _, p := range Panels(d) {
		for _, q := range Targets(p) {
			if strings.Contains(q.Expr, "vmbench_result_overhead_percent") &&
				(p.FieldConfig == nil || p.FieldConfig.Defaults.Thresholds == nil) {
				t.Errorf("overhead panel %q has no thresholds", str(p.Title))
			}
		}
	}
}

func TestExpand(t *testing.T) {
	got := Expand(`last_over_time(x{suite=~"$suite", a="${namespace}", b="[[metric]]", c="$other"}[$__range])`,
		map[string]string{"suite": "s1|s2", "namespace": "ns", "metric": "m"})
	want := `last_over_time(x{suite=~"s1|s2", a="ns", b="m", c="$other"}[1h])`
	if got != want {
		t.Errorf("Expand = %s, want %s", got, want)
	}
	if refs := VariableRefs(`a{b="$x", c="${y:regex}"} + $x`); !slices.Equal(refs, []string{"x", "y"}) {
		t.Errorf("VariableRefs = %v", refs)
	}
}

func TestRenderIsStable(t *testing.T) {
	first, err := RenderAll()
	if err != nil {
		t.Fatal(err)
	}
	second, err := RenderAll()
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range first {
		if !bytes.Equal(data, second[file]) {
			t.Errorf("%s renders differently twice", file)
		}
		if !bytes.HasSuffix(data, []byte("}\n")) || !json.Valid(data) {
			t.Errorf("%s: not one JSON document with a trailing newline", file)
		}
	}
}

// TestGenerated fails when charts/vmbench/dashboards differs from what the generator produces now.
func TestGenerated(t *testing.T) {
	want, err := RenderAll()
	if err != nil {
		t.Fatal(err)
	}
	for file, data := range want {
		got, err := os.ReadFile(filepath.Join(chartDir, file))
		if err != nil {
			t.Errorf("charts/vmbench/dashboards/%s: %v; run `make dashboards`", file, err)
			continue
		}
		if !bytes.Equal(got, data) {
			t.Errorf("charts/vmbench/dashboards/%s is stale: run `make dashboards` and commit the result", file)
		}
	}
	entries, err := os.ReadDir(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok && strings.HasSuffix(e.Name(), ".json") {
			extra = append(extra, e.Name())
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("charts/vmbench/dashboards holds %v, which no board generates: delete them and run `make dashboards`", extra)
	}
}

// A finished suite's per-metric series leave the endpoint after the retention, while Prometheus
// keeps them: an instant panel that read them at "now" would go blank. Every instant query of them
// takes the last value within the board's time range instead.
func TestInstantPanelsOutliveTheDetailRetention(t *testing.T) {
	for file, d := range boards(t) {
		for _, p := range Panels(d) {
			for _, q := range Targets(p) {
				if q.Instant == nil || !*q.Instant {
					continue
				}
				parsed, err := parser.ParseExpr(Expand(q.Expr, nil))
				if err != nil {
					t.Errorf("%s: %q: %v", file, q.Expr, err)
					continue
				}
				parser.Inspect(parsed, func(node parser.Node, path []parser.Node) error {
					vs, ok := node.(*parser.VectorSelector)
					if !ok || !slices.Contains(resultSeries, vs.Name) {
						return nil
					}
					within := false
					for _, n := range path {
						if c, ok := n.(*parser.Call); ok && c.Func.Name == "last_over_time" {
							within = true
						}
					}
					if !within {
						t.Errorf("%s: panel %q reads %s at the instant, not its last value in the range: %s", file, str(p.Title), vs.Name, q.Expr)
					}
					return nil
				})
			}
		}
	}
}

// The schedule board shows each series' ratio with its interval, both arms, the noise and the
// minimum detectable change, the open findings, the last and next runs and the records, and marks
// change points and version and environment changes as annotations that take their time from the
// value.
func TestSchedulePanels(t *testing.T) {
	d, err := Schedule()
	if err != nil {
		t.Fatal(err)
	}
	var selected []string
	for _, q := range Queries(d) {
		selected = append(selected, checkQuery(t, "schedule", q, "", map[string]bool{VarPlatform: true})...)
	}
	for _, want := range []string{"vmbench_schedule_ratio", "vmbench_schedule_ratio_low", "vmbench_schedule_ratio_high",
		"vmbench_schedule_mean", "vmbench_schedule_noise", "vmbench_schedule_min_detectable_change", "vmbench_schedule_findings_open",
		"vmbench_schedule_last_success_timestamp_seconds", "vmbench_schedule_next_run_timestamp_seconds",
		"vmbench_schedule_records", "vmbench_schedule_finding_timestamp_seconds", "vmbench_result_value",
		"vmbench_schedule_baseline_ratio", "vmbench_schedule_baseline_mean"} {
		if !slices.Contains(selected, want) {
			t.Errorf("the schedule board does not show %s", want)
		}
	}
	// The ratio and its bounds share a panel, so that the interval reads as a band around it.
	for _, p := range Panels(d) {
		var exprs []string
		for _, q := range Targets(p) {
			exprs = append(exprs, q.Expr)
		}
		joined := strings.Join(exprs, "\n")
		if strings.Contains(joined, "vmbench_schedule_ratio{") &&
			(!strings.Contains(joined, "vmbench_schedule_ratio_low{") || !strings.Contains(joined, "vmbench_schedule_ratio_high{")) {
			t.Errorf("panel %q shows the ratio without its interval: %v", str(p.Title), exprs)
		}
	}

	want := map[string]string{
		AnnotationChangePoints:       "vmbench_schedule_finding_timestamp_seconds",
		AnnotationVersionTriggers:    "vmbench_schedule_version_change_timestamp_seconds",
		AnnotationEnvironmentChanges: "vmbench_schedule_environment_change_timestamp_seconds",
	}
	annotations := Annotations(d)
	if len(annotations) != len(want) {
		t.Errorf("annotations %+v, want %d", annotations, len(want))
	}
	for _, a := range annotations {
		names := checkQuery(t, "schedule annotation "+a.Name, a.Expr, "", map[string]bool{VarPlatform: true})
		if !slices.Equal(names, []string{want[a.Name]}) {
			t.Errorf("annotation %q selects %v, want %s", a.Name, names, want[a.Name])
		}
		// Grafana reads the value as the event's time, in milliseconds.
		if f := annotationFormats[a.Name]; !f.UseValueForTime || !strings.HasSuffix(a.Expr, " * 1000") || f.Step == "" {
			t.Errorf("annotation %q: %q with %+v, want the seconds times 1000 used as the time", a.Name, a.Expr, f)
		}
	}
	data, err := Render(d)
	if err != nil {
		t.Fatal(err)
	}
	var rendered struct {
		Annotations struct {
			List []map[string]any `json:"list"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(data, &rendered); err != nil {
		t.Fatal(err)
	}
	if len(rendered.Annotations.List) != len(want) {
		t.Fatalf("rendered annotations: %v", rendered.Annotations.List)
	}
	for _, a := range rendered.Annotations.List {
		if a["useValueForTime"] != true || a["expr"] == "" || a["titleFormat"] == "" || a["enable"] != true {
			t.Errorf("rendered annotation %v lacks its expression, title or useValueForTime", a)
		}
		if ds, _ := a["datasource"].(map[string]any); ds["uid"] != "${datasource}" {
			t.Errorf("rendered annotation %v does not query ${datasource}", a)
		}
	}
}

// The ratio and arms panels draw the record pinned in spec.baseline beside the series: a second
// query of the pinned record's values, named with its suite and dotted, while the series and their
// interval keep their own style.
func TestSchedulePinnedBaselineLine(t *testing.T) {
	d, err := Schedule()
	if err != nil {
		t.Fatal(err)
	}
	pattern := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(PinnedBaselinePattern, "/"), "/"))
	// legendOf is a legend as Grafana shows it for one series.
	legendOf := func(format string) string {
		return strings.NewReplacer("{{platform}}", "vm", "{{suite}}", "nightly-29412345").Replace(format)
	}
	drawn := map[string]bool{}
	for _, p := range Panels(d) {
		var series, baseline *string
		for _, q := range Targets(p) {
			switch {
			case strings.HasPrefix(q.Expr, "vmbench_schedule_ratio{") || strings.HasPrefix(q.Expr, "vmbench_schedule_mean{"):
				series = &q.Expr
				if pattern.MatchString(legendOf(str(q.LegendFormat))) {
					t.Errorf("panel %q: the series' legend %q takes the pinned baseline's style", str(p.Title), str(q.LegendFormat))
				}
			case strings.HasPrefix(q.Expr, "vmbench_schedule_baseline_"):
				baseline = &q.Expr
				legend := str(q.LegendFormat)
				if !strings.Contains(legend, "{{suite}}") || !strings.Contains(legend, "{{platform}}") || !pattern.MatchString(legendOf(legend)) {
					t.Errorf("panel %q: pinned baseline legend %q, want the platform and the suite, matched by %s", str(p.Title), legend, PinnedBaselinePattern)
				}
			default:
				if q.LegendFormat != nil && pattern.MatchString(legendOf(*q.LegendFormat)) {
					t.Errorf("panel %q: legend %q takes the pinned baseline's style", str(p.Title), *q.LegendFormat)
				}
			}
		}
		if series == nil && baseline == nil {
			continue
		}
		if series == nil || baseline == nil {
			t.Errorf("panel %q: series %v and pinned baseline %v, want both on one panel", str(p.Title), series, baseline)
			continue
		}
		// The same series of the pinned record: vmbench_schedule_ratio{...} and vmbench_schedule_baseline_ratio{...}.
		if want := strings.Replace(*series, "vmbench_schedule_", "vmbench_schedule_baseline_", 1); *baseline != want {
			t.Errorf("panel %q: pinned baseline query %q, want %q", str(p.Title), *baseline, want)
		}
		drawn[*baseline] = true
		dotted := false
		if p.FieldConfig != nil {
			for _, o := range p.FieldConfig.Overrides {
				// The SDK keeps a regexp matcher's option as a *string.
				if opt, _ := o.Matcher.Options.(*string); o.Matcher.Id != "byRegexp" || opt == nil || *opt != PinnedBaselinePattern {
					continue
				}
				for _, v := range o.Properties {
					if style, ok := v.Value.(map[string]any); ok && v.Id == "custom.lineStyle" && style["fill"] == "dot" {
						dotted = true
					}
				}
			}
		}
		if !dotted {
			t.Errorf("panel %q: no override draws %s dotted", str(p.Title), PinnedBaselinePattern)
		}
	}
	if len(drawn) != 2 {
		t.Errorf("pinned baseline lines %v, want the ratio's and the means'", drawn)
	}
}

func TestRenderRefusesAnAnnotationWithoutAFormat(t *testing.T) {
	d, err := newBoard("x", "x", "x", "now-1h").
		Annotation(prometheusAnnotation("no format", "red", "vmbench_schedule_records * 1000")).Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Render(d); err == nil || !strings.Contains(err.Error(), "no format") {
		t.Errorf("Render of an annotation without a format: %v, want an error naming it", err)
	}
}

// Protects the suite board's migration panel: one table query of vmbench_result_value that selects
// exactly the migration benchmark's figures (pause, background gap, total time, dip, time back at rate, completed:
// the names the manager writes) of the board's suite and no other benchmark's metric, labelled a row
// per benchmark | metric | unit and a column per platform and emulated, as the side-by-side table;
// and, for a suite without migration results, one fallback series (the NoMigrations row, NaN shown
// as "-") instead of nothing, so that the end-to-end check of every query (test/e2e) gets data and
// no figure is made up.
func TestMigrationPanel(t *testing.T) {
	d, err := Overview()
	if err != nil {
		t.Fatal(err)
	}
	var panel *dashboard.Panel
	for _, p := range Panels(d) {
		if str(p.Title) == "Live migration: pause, total time, dip per platform" {
			panel = &p
		}
	}
	if panel == nil {
		t.Fatal("the suite board has no migration panel")
	}
	targets := Targets(*panel)
	if len(targets) != 1 {
		t.Fatalf("%d targets, want 1", len(targets))
	}
	parsed, err := parser.ParseExpr(Expand(targets[0].Expr, map[string]string{VarNamespace: "ns", VarSuite: "s"}))
	if err != nil {
		t.Fatal(err)
	}
	or, ok := parsed.(*parser.BinaryExpr)
	if !ok || or.Op != parser.LOR || or.VectorMatching == nil || !or.VectorMatching.On || len(or.VectorMatching.MatchingLabels) != 0 {
		t.Fatalf("%s: want `<figures> or on() <fallback>`", parsed)
	}
	var selectors []*parser.VectorSelector
	parser.Inspect(or.LHS, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			selectors = append(selectors, vs)
		}
		return nil
	})
	if len(selectors) != 1 || selectors[0].Name != "vmbench_result_value" {
		t.Fatalf("the figures side selects %v, want vmbench_result_value", selectors)
	}
	matches := func(metric string) bool {
		l := labels.FromStrings("__name__", "vmbench_result_value", "namespace", "ns", "suite", "s", "metric", metric)
		for _, m := range selectors[0].LabelMatchers {
			if !m.Matches(l.Get(m.Name)) {
				return false
			}
		}
		return true
	}
	for _, figure := range []string{disruption.MetricPause, disruption.MetricBackgroundGap, disruption.MetricTotal, disruption.MetricDip,
		disruption.MetricRecovery, disruption.MetricCompleted} {
		if !matches(figure) {
			t.Errorf("the panel does not select the migration figure %s", figure)
		}
	}
	// A dirty-rate sweep's figures, each named for its rate.
	for _, figure := range []string{"pause_ms_at_64Mi", "completed_at_0", "total_seconds_at_256Mi", "dirtied_mib_per_s_at_64Mi"} {
		if !matches(figure) {
			t.Errorf("the panel does not select the sweep's figure %s", figure)
		}
	}
	for _, other := range []string{"events_per_second", "pause", "xpause_ms", "total_seconds_p99", "rtt_avg_ms", "pause_ms_at_", "work_at_64Mi"} {
		if matches(other) {
			t.Errorf("the panel selects %s, which is no migration figure", other)
		}
	}
	rhs := or.RHS.String()
	if strings.Contains(rhs, "vmbench_") || !strings.Contains(rhs, "vector(NaN)") || !strings.Contains(rhs, fmt.Sprintf("%q", NoMigrations)) {
		t.Errorf("fallback %s: want the NoMigrations row of vector(NaN), selecting nothing", rhs)
	}
	for _, l := range []string{`"row", " | ", "benchmark", "metric", "unit"`, `"column", " emulated=", "platform", "emulated"`} {
		if !strings.Contains(targets[0].Expr, l) {
			t.Errorf("the panel's rows or columns are not labelled %s: %s", l, targets[0].Expr)
		}
	}
	nan := false
	if fc := panel.FieldConfig; fc != nil {
		for _, m := range fc.Defaults.Mappings {
			if s := m.SpecialValueMap; s != nil && s.Options.Match == dashboard.SpecialValueMatchNaN && s.Options.Result.Text != nil {
				nan = *s.Options.Result.Text == "-"
			}
		}
	}
	if !nan {
		t.Error("the fallback's NaN is not shown as -")
	}
}
