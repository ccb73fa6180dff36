package dashboards

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"

	"github.com/vmbench/vmbench/internal/disruption"
)

// suiteSelector selects one suite's series.
const suiteSelector = `namespace="$namespace", suite="$suite"`

// Overview is the suite overview: every benchmark's mean on every platform side by side, the
// overhead of each platform against the baseline, the suite's phase, the emulation warning, the
// operator-wide run, failure and node readiness counters, vmbench report's summary, and what the
// migration benchmark's live migrations cost the guest.
func Overview() (dashboard.Dashboard, error) {
	return newBoard("vmbench-overview", "vmbench / Suite overview",
		"One BenchmarkSuite: containers and KubeVirt VMs side by side, and the overhead of each platform against the baseline.",
		"now-24h").
		WithVariable(labelVariable(VarNamespace, "Namespace", "vmbench_result_value")).
		WithVariable(labelVariable(VarSuite, "Suite", `vmbench_result_value{namespace="$namespace"}`)).
		WithPanel(emulationPanel(1, pos(0, 0, 8, 6), suiteSelector)).
		WithPanel(phasePanel(2, pos(8, 0, 4, 6))).
		WithPanel(runsPanel(3, pos(12, 0, 6, 6))).
		WithPanel(failuresPanel(4, pos(18, 0, 6, 6))).
		WithPanel(sideBySidePanel(5, pos(0, 6, 24, 10))).
		WithPanel(overheadPanel(6, pos(0, 16, 16, 12), "Overhead against the baseline, per benchmark and metric",
			latest(`vmbench_result_overhead_percent{`+suiteSelector+`}`),
			"{{benchmark}} | {{metric}} | {{platform}} vs {{baseline}} | emulated={{emulated}}")).
		WithPanel(nodeReadyPanel(7, pos(16, 16, 8, 12))).
		WithPanel(summaryPanel(8, pos(0, 28, 24, 10))).
		WithPanel(migrationPanel(9, pos(0, 38, 24, 8))).
		Build()
}

func phasePanel(id uint32, at dashboard.GridPos) *stat.PanelBuilder {
	p := newStat().
		Id(id).
		GridPos(at).
		Title("Suite phase").
		Description("The suite's current phase (vmbench_suite_phase == 1): Pending, Running, Complete or Failed.").
		Datasource(datasource()).
		WithTarget(instant("A", `vmbench_suite_phase{`+suiteSelector+`} == 1`, "{{phase}}")).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("text")).
		NoValue("unknown").
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeName).
		ReduceOptions(lastValue())
	for _, c := range []struct{ phase, color string }{
		{"Pending", "yellow"}, {"Running", "blue"}, {"Complete", "green"}, {"Failed", "red"},
	} {
		p.OverrideByName(c.phase, []dashboard.DynamicConfigValue{fixedColor(c.color)})
	}
	return p
}

func runsPanel(id uint32, at dashboard.GridPos) *stat.PanelBuilder {
	return newStat().
		Id(id).
		GridPos(at).
		Title("Runs ended, by platform type and outcome").
		Description("vmbench_runs_total: runs of every suite that ended since the manager started, "+
			"by platform type (Container, VM, Host) and outcome. Operator-wide, not only this suite.").
		Datasource(datasource()).
		WithTarget(instant("A", `sum by (platform_type, outcome) (vmbench_runs_total)`, "{{platform_type}} {{outcome}}")).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("blue")).
		OverrideByRegexp(`/.* Failed$/`, []dashboard.DynamicConfigValue{fixedColor("red")}).
		NoValue("no run ended yet").
		Decimals(0).
		ColorMode(common.BigValueColorModeValue).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(lastValue())
}

func failuresPanel(id uint32, at dashboard.GridPos) *stat.PanelBuilder {
	// The fallback series (0, labelled "no failures") keeps the panel, and an end-to-end check of
	// this query, from coming back empty while nothing has failed.
	expr := `sum by (benchmark_type, platform_type) (vmbench_benchmark_failures_total) ` +
		`or on() label_replace(vector(0), "benchmark_type", "no failures", "", "")`
	return newStat().
		Id(id).
		GridPos(at).
		Title("Failed benchmark executions").
		Description("vmbench_benchmark_failures_total: benchmark executions that failed since the manager started, " +
			"by benchmark type and platform type. Operator-wide, not only this suite.").
		Datasource(datasource()).
		WithTarget(instant("A", expr, "{{benchmark_type}} {{platform_type}}")).
		Thresholds(thresholds("green", step{1, "red"})).
		Decimals(0).
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(lastValue())
}

// sideBySideExpr labels every mean with its table row (benchmark, metric, unit, direction) and
// column (platform and whether it was emulated), so that a grouping-to-matrix transformation puts
// the platforms next to each other.
var sideBySideExpr = fmt.Sprintf(
	`label_join(label_join(%s, "row", " | ", "benchmark", "metric", "unit", "direction"), `+
		`"column", " emulated=", "platform", "emulated")`, latest(`vmbench_result_value{`+suiteSelector+`}`))

func sideBySidePanel(id uint32, at dashboard.GridPos) *table.PanelBuilder {
	return platformMatrix(newTable().
		Id(id).
		GridPos(at).
		Title("Mean per benchmark and metric, platforms side by side").
		Description("vmbench_result_value: one row per benchmark | metric | unit | direction, one column per platform. " +
			`Columns ending in emulated=true (red) hold figures from VMs under QEMU software emulation (TCG): ` +
			"they are not a measure of VM overhead.").
		Datasource(datasource()).
		WithTarget(tableQuery("A", sideBySideExpr)))
}

// platformMatrix turns a table whose series carry row and column labels into a matrix, a column
// per platform, three decimals, the emulated columns in red.
func platformMatrix(b *table.PanelBuilder) *table.PanelBuilder {
	return b.WithTransformation(dashboard.DataTransformerConfig{Id: "groupingToMatrix", Options: map[string]any{
		"columnField": "column", "rowField": "row", "valueField": "Value",
	}}).
		Decimals(3).
		OverrideByRegexp(emulatedSeries, []dashboard.DynamicConfigValue{
			fixedColor("red"),
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}},
		})
}

// overheadPanel is a horizontal bar gauge of overhead percentages, emulated series in purple.
func overheadPanel(id uint32, at dashboard.GridPos, title, expr, legend string) *bargauge.PanelBuilder {
	return emulatedBars(bargauge.NewPanelBuilder().
		Id(id).
		GridPos(at).
		Title(title).
		Description("vmbench_result_overhead_percent: how much worse a platform is than the baseline platform, in percent, "+
			"whichever way the metric improves; negative is better than the baseline. Green up to 5 %, red from 30 %. "+
			"Purple bars (emulated=true) come from VMs under QEMU software emulation (TCG): they measure the emulator, "+
			"not VM overhead.").
		Datasource(datasource()).
		WithTarget(instant("A", expr, legend)).
		Unit("percent").
		Decimals(1).
		Thresholds(overheadThresholds()),
		common.BarGaugeNamePlacementTop)
}

func nodeReadyPanel(id uint32, at dashboard.GridPos) *bargauge.PanelBuilder {
	return bargauge.NewPanelBuilder().
		Id(id).
		GridPos(at).
		Title("Mean node ready time, by platform type").
		Description("vmbench_node_ready_seconds: mean time from a node's pod or VMI creation until the runner reached it, " +
			"since the manager started, over every suite. VMs under software emulation (TCG) boot far slower.").
		Datasource(datasource()).
		WithTarget(instant("A",
			`sum by (platform_type) (vmbench_node_ready_seconds_sum) / sum by (platform_type) (vmbench_node_ready_seconds_count)`,
			"{{platform_type}}")).
		Unit("s").
		Decimals(1).
		Min(0).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdPaletteClassic)).
		Orientation(common.VizOrientationHorizontal).
		DisplayMode(common.BarGaugeDisplayModeBasic).
		NamePlacement(common.BarGaugeNamePlacementTop).
		ReduceOptions(lastValue())
}

// summaryPanel shows vmbench report's summary per platform: the geometric mean of each benchmark's
// ratios and of all of them. Its series stay as long as the suite, unlike the per-metric ones.
func summaryPanel(id uint32, at dashboard.GridPos) *bargauge.PanelBuilder {
	return emulatedBars(bargauge.NewPanelBuilder().
		Id(id).
		GridPos(at).
		Title("Speed against the baseline, per benchmark and overall (geometric mean)").
		Description("vmbench_summary_ratio: the geometric mean of a platform's ratios to the baseline in the higher-is-better "+
			"sense, per benchmark and over all benchmarks, as vmbench report's summary; below 1 the platform is slower. "+
			"Red below 0.7, yellow below 0.95. Purple bars (emulated=true) come from VMs under QEMU software emulation (TCG): "+
			"they measure the emulator, not VM overhead.").
		Datasource(datasource()).
		WithTarget(instant("A", latest(`vmbench_summary_ratio{`+suiteSelector+`, kind=~"benchmark|overall"}`),
			"{{group}} | {{platform}} vs {{baseline}} | emulated={{emulated}}")).
		Decimals(3).
		Min(0).
		Thresholds(thresholds("red", step{0.7, "yellow"}, step{0.95, "green"})),
		common.BarGaugeNamePlacementTop)
}

// emulatedBars is the style of the horizontal bar gauges that compare platforms: emulated VMs'
// bars in purple, values as text, unfilled bars shown, the last value of each series.
func emulatedBars(b *bargauge.PanelBuilder, names common.BarGaugeNamePlacement) *bargauge.PanelBuilder {
	return b.
		OverrideByRegexp(emulatedSeries, []dashboard.DynamicConfigValue{fixedColor(emulatedColor)}).
		Orientation(common.VizOrientationHorizontal).
		DisplayMode(common.BarGaugeDisplayModeBasic).
		ValueMode(common.BarGaugeValueModeText).
		NamePlacement(names).
		ShowUnfilled(true).
		ReduceOptions(lastValue())
}

// migrationFigures are the migration benchmark's figures the suite board shows, in its order:
// what vmbench report's migration line gives.
// In a dirty-rate sweep each is named for its rate (pause_ms_at_64Mi, and the writer's achieved
// dirtied_mib_per_s_at_64Mi: migrationRateSuffix), a row per figure and rate.
var migrationFigures = []string{disruption.MetricPause, disruption.MetricBackgroundGap, disruption.MetricTotal, disruption.MetricDip,
	disruption.MetricRecovery, disruption.MetricCompleted, disruption.MetricDirtyRate}

// migrationRateSuffix is the optional rate of a figure's name in a dirty-rate sweep
// (disruption.RateMetric), as a PromQL regular expression: a quantity such as 0, 64Mi or 1.5G.
const migrationRateSuffix = `(_at_[0-9][0-9A-Za-z.]*)?`

// NoMigrations is the row the migration panel shows for a suite without migration results: its
// query then returns this one series, of value NaN shown as "-", instead of nothing, so that an
// end-to-end check of every query gets data and no figure is made up.
const NoMigrations = "no migration benchmark results in this suite"

// migrationExpr is the mean of each migration figure per platform, labelled as the side-by-side
// table is (a row per benchmark | metric | unit, a column per platform and emulated), or the
// NoMigrations row. The figures are told apart by their names: only the migration benchmark
// reports these.
var migrationExpr = fmt.Sprintf(
	`label_join(label_join(%s, "row", " | ", "benchmark", "metric", "unit"), "column", " emulated=", "platform", "emulated") `+
		`or on() label_replace(label_replace(vector(NaN), "row", %q, "", ""), "column", "-", "", "")`,
	latest(`vmbench_result_value{`+suiteSelector+`, metric=~"(`+strings.Join(migrationFigures, "|")+`)`+migrationRateSuffix+`"}`), NoMigrations)

// migrationPanel is the migration benchmark per platform: pause and the background gap before it,
// total time, dip and time back at rate (means over the migrations), and the share of them that
// completed.
func migrationPanel(id uint32, at dashboard.GridPos) *table.PanelBuilder {
	nan := "-"
	return platformMatrix(newTable().
		Id(id).
		GridPos(at).
		Title("Live migration: pause, total time, dip per platform").
		Description("vmbench_result_value of the migration benchmark's figures, means over its live migrations (each one sample): " +
			"pause_ms, the longest gap of the guest's 10 ms ticker, to read against background_gap_ms, the longest in the 10 s " +
			"before (the guest's stalls without a migration); total_seconds, KubeVirt's migration start to end; dip_percent, " +
			"the work lost against the rate before the migration, for recovery_seconds until back at rate; completed, the share " +
			"of the migrations that completed (1: all). Lower is better but for completed. In a dirty-rate sweep each figure is " +
			"named for its rate (pause_ms_at_64Mi), with dirtied_mib_per_s_at_<rate>, the rate the guest achieved. Intervals: vmbench report's migration " +
			"line. Columns ending in emulated=true (red) come from VMs under QEMU software emulation (TCG). " +
			"On a Container platform the columns are a pod's evictions (the container arm): pause_ms the longest gap of the probe " +
			"worker's 10 ms reports at the master, total_seconds the eviction to the replacement Ready; vmbench report's pod eviction line " +
			"adds back_at_rate_seconds.").
		Datasource(datasource()).
		WithTarget(tableQuery("A", migrationExpr))).
		Mappings([]dashboard.ValueMapping{{SpecialValueMap: &dashboard.SpecialValueMap{Type: dashboard.MappingTypeSpecialValue,
			Options: dashboard.DashboardSpecialValueMapOptions{Match: dashboard.SpecialValueMatchNaN,
				Result: dashboard.ValueMappingResult{Text: &nan, Index: ptr[int32](0)}}}}})
}
