package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// scheduleOf selects one schedule's series.
const scheduleOf = `namespace="$namespace", schedule="$schedule"`

// seriesOf selects one benchmark and metric of one schedule, on the chosen platforms.
const seriesOf = scheduleOf + `, benchmark="$benchmark", metric="$metric", platform=~"$platform"`

// scheduleSuites selects the result series of the suites a schedule started, which are named
// <schedule>-<minutes since 1970>: the schedule's own series carry no emulated label.
const scheduleSuites = `namespace="$namespace", suite=~"$schedule-[0-9]+", benchmark="$benchmark", metric="$metric"`

// Annotation names of the schedule board.
const (
	AnnotationChangePoints       = "Change points (findings)"
	AnnotationVersionTriggers    = "Version changes (triggers)"
	AnnotationEnvironmentChanges = "Environment changes between records"
)

// Schedule follows one BenchmarkSchedule's history: each series' ratio to the baseline with its
// interval, both arms' levels, their noise and the detector's minimum detectable change, the open findings, the last and next runs, and the
// change points and version changes as annotations; the ratio and arms panels draw the record pinned
// in spec.baseline as a dotted line.
func Schedule() (dashboard.Dashboard, error) {
	return newBoard("vmbench-schedule", "vmbench / Schedule trend",
		"One BenchmarkSchedule over time: the ratio of each platform to the baseline with its 95% interval, both arms, "+
			"the record pinned in spec.baseline as a dotted line, their noise, open findings, and change points and version "+
			"changes as annotations.",
		"now-30d").
		WithVariable(labelVariable(VarNamespace, "Namespace", "vmbench_schedule_records")).
		WithVariable(labelVariable(VarSchedule, "Schedule", `vmbench_schedule_records{namespace="$namespace"}`)).
		WithVariable(labelVariable(VarBenchmark, "Benchmark", `vmbench_schedule_mean{`+scheduleOf+`}`)).
		WithVariable(labelVariable(VarMetric, "Metric", `vmbench_schedule_mean{`+scheduleOf+`, benchmark="$benchmark"}`)).
		WithVariable(multiVariable(VarPlatform, "Platforms",
			`vmbench_schedule_mean{`+scheduleOf+`, benchmark="$benchmark", metric="$metric"}`)).
		Annotation(prometheusAnnotation(AnnotationChangePoints, "red",
			`vmbench_schedule_finding_timestamp_seconds{`+seriesOf+`} * 1000`)).
		Annotation(prometheusAnnotation(AnnotationVersionTriggers, "orange",
			`vmbench_schedule_version_change_timestamp_seconds{`+scheduleOf+`} * 1000`)).
		Annotation(prometheusAnnotation(AnnotationEnvironmentChanges, "yellow",
			`vmbench_schedule_environment_change_timestamp_seconds{`+scheduleOf+`} * 1000`)).
		WithPanel(emulationPanel(1, pos(0, 0, 6, 6), scheduleSuites)).
		WithPanel(openFindingsPanel(2, pos(6, 0, 6, 6))).
		WithPanel(timestampPanel(3, pos(12, 0, 4, 6), "Last successful run",
			"vmbench_schedule_last_success_timestamp_seconds: when the schedule's latest complete suite ended "+
				"(status.lastSuccessfulTime). Empty before the first.",
			`vmbench_schedule_last_success_timestamp_seconds{`+scheduleOf+`} * 1000`, "no complete suite yet")).
		WithPanel(timestampPanel(4, pos(16, 0, 4, 6), "Next run",
			"vmbench_schedule_next_run_timestamp_seconds: when the schedule starts its next suite (status.nextScheduleTime). "+
				"Empty while the schedule is suspended (spec.suspend) or invalid (see its Valid condition).",
			`vmbench_schedule_next_run_timestamp_seconds{`+scheduleOf+`} * 1000`, "suspended or invalid")).
		WithPanel(recordsPanel(5, pos(20, 0, 4, 6))).
		WithPanel(scheduleRatioPanel(6, pos(0, 6, 24, 10))).
		WithPanel(armsPanel(7, pos(0, 16, 8, 10))).
		WithPanel(noisePanel(8, pos(8, 16, 8, 10))).
		WithPanel(detectablePanel(9, pos(16, 16, 8, 10))).
		WithPanel(changePointsPanel(10, pos(0, 26, 24, 8))).
		Build()
}

// annotationFormat is what a Prometheus annotation query says beyond the SDK's AnnotationQuery:
// how Grafana turns the series into events.
type annotationFormat struct {
	Step            string `json:"step,omitempty"`
	TitleFormat     string `json:"titleFormat,omitempty"`
	TextFormat      string `json:"textFormat,omitempty"`
	TagKeys         string `json:"tagKeys,omitempty"`
	UseValueForTime bool   `json:"useValueForTime,omitempty"`
}

// annotationFormats holds the format of every annotation query of the boards, by name; Render adds
// it to the query.
var annotationFormats = map[string]annotationFormat{
	AnnotationChangePoints: {Step: "5m", UseValueForTime: true, TagKeys: "arm,platform,direction,regression",
		TitleFormat: "Change point: {{benchmark}} {{metric}}, {{arm}} arm of {{platform}} moved {{direction}} (regression={{regression}})",
		TextFormat:  "Finding {{id}}, at the first suite after the change: status.findings of the schedule, or vmbench history, explain it."},
	AnnotationVersionTriggers: {Step: "5m", UseValueForTime: true, TagKeys: "suite",
		TitleFormat: "A watched version changed: suite {{suite}} started",
		TextFormat:  "status.lastTrigger of the schedule lists what changed (spec.triggers.onVersionChange)."},
	AnnotationEnvironmentChanges: {Step: "5m", UseValueForTime: true, TagKeys: "suite",
		TitleFormat: "Environment changed at suite {{suite}}",
		TextFormat:  "The record of suite {{suite}} ran on other versions than the record before it; vmbench history lists its environment."},
}

// prometheusAnnotation marks on every time series panel the times a query's values hold, in
// milliseconds (useValueForTime): each series an event at the time it names, however often it is
// scraped.
func prometheusAnnotation(name, color, expr string) *dashboard.AnnotationQueryBuilder {
	return dashboard.NewAnnotationQueryBuilder().
		Name(name).
		Datasource(datasource()).
		Enable(true).
		IconColor(color).
		Expr(expr)
}

func openFindingsPanel(id uint32, at dashboard.GridPos) *stat.PanelBuilder {
	return newStat().
		Id(id).
		GridPos(at).
		Title("Open findings, by arm").
		Description("vmbench_schedule_findings_open: changes found in the schedule's history that are still Untriaged "+
			"(status.findings), by arm (vm, container, host, ratio). Regressions turn red; improvements are blue. "+
			"Triage them in spec.triage (Acknowledged with a reason and an expiry, Invalid or Expected) to clear them.").
		Datasource(datasource()).
		WithTarget(instant("A", `sum by (arm) (vmbench_schedule_findings_open{`+scheduleOf+`, regression="true"})`, "{{arm}} regressions")).
		WithTarget(instant("B", `sum by (arm) (vmbench_schedule_findings_open{`+scheduleOf+`, regression="false"})`, "{{arm}} improvements")).
		Thresholds(thresholds("green", step{1, "red"})).
		OverrideByRegexp(`/.* improvements$/`, []dashboard.DynamicConfigValue{fixedColor("blue")}).
		Decimals(0).
		ColorMode(common.BigValueColorModeValue).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(lastValue())
}

// timestampPanel shows a time in milliseconds as how long ago or until it is.
func timestampPanel(id uint32, at dashboard.GridPos, title, description, expr, noValue string) *stat.PanelBuilder {
	return newStat().
		Id(id).
		GridPos(at).
		Title(title).
		Description(description).
		Datasource(datasource()).
		WithTarget(instant("A", expr, "")).
		Unit("dateTimeFromNow").
		NoValue(noValue).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("text")).
		ColorMode(common.BigValueColorModeValue).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValue).
		ReduceOptions(lastValue())
}

func recordsPanel(id uint32, at dashboard.GridPos) *stat.PanelBuilder {
	return newStat().
		Id(id).
		GridPos(at).
		Title("Records in the history").
		Description("vmbench_schedule_records: the records the schedule keeps (status.records), one per finished suite, " +
			"at most 200; they outlive the suites. The detector judges a series from its 5th record under one parameters hash on.").
		Datasource(datasource()).
		WithTarget(instant("A", `vmbench_schedule_records{`+scheduleOf+`}`, "")).
		Thresholds(thresholds("yellow", step{5, "green"})).
		Decimals(0).
		ColorMode(common.BigValueColorModeValue).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValue).
		ReduceOptions(lastValue())
}

// scheduleTrend is a time series panel of a schedule's series, each a step at every record.
func scheduleTrend(id uint32, at dashboard.GridPos, title, description string) *timeseries.PanelBuilder {
	return newTimeseries().
		Id(id).
		GridPos(at).
		Title(title).
		Description(description).
		Datasource(datasource()).
		LineWidth(2).
		LineInterpolation(common.LineInterpolationStepAfter).
		SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		Legend(tableBelow("lastNotNull", "min", "max"))
}

func scheduleRatioPanel(id uint32, at dashboard.GridPos) *timeseries.PanelBuilder {
	return scheduleTrend(id, at, "Ratio to the baseline with its 95% interval, per record",
		"vmbench_schedule_ratio: the platform's geometric mean over the baseline platform's in the higher-is-better sense, "+
			"in the schedule's latest record: below 1 the platform is slower or worse than the baseline, whichever way the "+
			"metric improves. Dashed: vmbench_schedule_ratio_low and _high, the 95% interval (absent without 2 repetitions "+
			"a side). A step is a new record. Dotted: vmbench_schedule_baseline_ratio, the ratio in the record pinned in "+
			"spec.baseline.suite (named in the legend), which the baseline verdict (condition Drifted) holds the newest runs "+
			"against; absent without spec.baseline. Annotations: red change points, orange and yellow version and environment "+
			"changes. The baseline platform has no ratio.").
		WithTarget(rangeQuery("A", `vmbench_schedule_ratio{`+seriesOf+`}`, "{{platform}} / baseline")).
		WithTarget(rangeQuery("B", `vmbench_schedule_ratio_low{`+seriesOf+`}`, "{{platform}} 95% low")).
		WithTarget(rangeQuery("C", `vmbench_schedule_ratio_high{`+seriesOf+`}`, "{{platform}} 95% high")).
		WithTarget(rangeQuery("D", `vmbench_schedule_baseline_ratio{`+seriesOf+`}`, PinnedBaselineLegend)).
		OverrideByRegexp(`/.* 95% (low|high)$/`, []dashboard.DynamicConfigValue{
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
			{Id: "custom.lineWidth", Value: 1},
		}).
		OverrideByRegexp(PinnedBaselinePattern, pinnedBaselineStyle()).
		Decimals(3)
}

// PinnedBaselineLegend names the line of the record pinned in spec.baseline on the ratio and arms
// panels; PinnedBaselinePattern matches it, and only it, for its style.
const (
	PinnedBaselineLegend  = "{{platform}} pinned baseline ({{suite}})"
	PinnedBaselinePattern = `/ pinned baseline \(.*\)$/`
)

// pinnedBaselineStyle draws the pinned baseline record's level as a dotted line, apart from the
// series and their dashed interval.
func pinnedBaselineStyle() []dashboard.DynamicConfigValue {
	return []dashboard.DynamicConfigValue{
		// Grafana rounds the caps of a dotted line: zero-length dashes are dots, 10 pixels apart.
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dot", "dash": []int{0, 10}}},
		{Id: "custom.lineWidth", Value: 3},
		{Id: "custom.fillOpacity", Value: 0},
	}
}

func armsPanel(id uint32, at dashboard.GridPos) *timeseries.PanelBuilder {
	return scheduleTrend(id, at, "Both arms: mean per platform, per record",
		"vmbench_schedule_mean: each platform's geometric mean of its repetition means in the schedule's latest record, "+
			"in the metric's unit, the baseline's too. When the ratio moves, this says which arm moved: the VM arm only "+
			"(KubeVirt, QEMU, virt-launcher), the container arm only (the runtime), or both (node, kernel, hardware). "+
			"Dotted: vmbench_schedule_baseline_mean, each platform's mean in the record pinned in spec.baseline.suite; "+
			"absent without spec.baseline.").
		WithTarget(rangeQuery("A", `vmbench_schedule_mean{`+seriesOf+`}`, "{{platform}}")).
		WithTarget(rangeQuery("B", `vmbench_schedule_baseline_mean{`+seriesOf+`}`, PinnedBaselineLegend)).
		OverrideByRegexp(PinnedBaselinePattern, pinnedBaselineStyle())
}

func noisePanel(id uint32, at dashboard.GridPos) *timeseries.PanelBuilder {
	return scheduleTrend(id, at, "Noise: coefficient of variation of the repetitions, per record",
		"vmbench_schedule_noise: the standard deviation of the logarithms of a platform's repetition means in the latest "+
			"record, about their coefficient of variation (0.05 is 5%); absent with fewer than 2 repetitions. The detector "+
			"reports no change below 3%, and the noisier the arm the larger the change it needs: more repetitions per suite "+
			"lower the noise of each record.").
		WithTarget(rangeQuery("A", `vmbench_schedule_noise{`+seriesOf+`}`, "{{platform}}")).
		Unit("percentunit").
		Min(0)
}

func detectablePanel(id uint32, at dashboard.GridPos) *timeseries.PanelBuilder {
	return scheduleTrend(id, at, "Minimum detectable change, per arm and ratio",
		"vmbench_schedule_min_detectable_change: the smallest step (0.03 is 3%) the change detector would find with 80% "+
			"power, at its p <= 0.001, once 3 more runs as noisy as those since the series' last change follow: the VM and "+
			"container arms (arm=vm, container, host) and the platform's ratio to the baseline (arm=ratio). It falls as "+
			"runs accumulate; the detector reports no step below 3% whatever this says. Absent before a series has 2 runs.").
		WithTarget(rangeQuery("A", `vmbench_schedule_min_detectable_change{`+seriesOf+`}`, "{{platform}} ({{arm}})")).
		Unit("percentunit").
		Min(0)
}

func changePointsPanel(id uint32, at dashboard.GridPos) *table.PanelBuilder {
	hidden := map[string]any{}
	for _, l := range []string{"Time", "__name__", "namespace", "schedule", "benchmark", "metric"} {
		hidden[l] = true
	}
	return newTable().
		Id(id).
		GridPos(at).
		Title("Change points of this series (status.findings)").
		Description("vmbench_schedule_finding_timestamp_seconds: every finding the schedule's status holds for the chosen "+
			"benchmark and metric (at most 32 over all series, the oldest go first), whatever its triage state: the arm "+
			"that moved, which way, whether that is a regression, and when the first suite after the change was scheduled. "+
			"`kubectl get bsched <schedule> -o yaml` or vmbench history give its ratio, p-value, explanation and the "+
			"environment changes.").
		Datasource(datasource()).
		WithTarget(tableQuery("A", `vmbench_schedule_finding_timestamp_seconds{`+seriesOf+`} * 1000`)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": hidden,
			"indexByName": map[string]any{
				"Value": 0, "platform": 1, "arm": 2, "direction": 3, "regression": 4, "id": 5,
			},
			"renameByName": map[string]any{"Value": "First suite after the change"},
		}}).
		OverrideByName("First suite after the change", []dashboard.DynamicConfigValue{{Id: "unit", Value: "dateTimeAsIso"}}).
		OverrideByName("regression", []dashboard.DynamicConfigValue{
			{Id: "mappings", Value: []map[string]any{{
				"type": "value",
				"options": map[string]any{
					"true":  map[string]any{"text": "regression", "color": "red", "index": 0},
					"false": map[string]any{"text": "improvement", "color": "blue", "index": 1},
				},
			}}},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}},
		}).
		NoValue("no change found in this series")
}
