package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/bargauge"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// trendSelector selects one metric of one benchmark across the chosen suites and platforms.
const trendSelector = `namespace="$namespace", suite=~"$suite", benchmark="$benchmark", metric="$metric", platform=~"$platform"`

// trendLegend names a series by suite and platform; emulated series end in emulated=true.
const trendLegend = "{{suite}} | {{platform}} [{{unit}}] | emulated={{emulated}}"

// Trend follows one metric of one benchmark across suites over time, to catch regressions: the
// mean per suite and platform, the ratio to the baseline, and the overhead per suite.
func Trend() (dashboard.Dashboard, error) {
	return newBoard("vmbench-trend", "vmbench / Trend across suites",
		"The same benchmark and metric across suites over time, by suite and platform, to catch regressions.",
		"now-30d").
		WithVariable(labelVariable(VarNamespace, "Namespace", "vmbench_result_value")).
		WithVariable(multiVariable(VarSuite, "Suites", `vmbench_result_value{namespace="$namespace"}`)).
		WithVariable(labelVariable(VarBenchmark, "Benchmark", `vmbench_result_value{namespace="$namespace", suite=~"$suite"}`)).
		WithVariable(labelVariable(VarMetric, "Metric",
			`vmbench_result_value{namespace="$namespace", suite=~"$suite", benchmark="$benchmark"}`)).
		WithVariable(multiVariable(VarPlatform, "Platforms",
			`vmbench_result_value{namespace="$namespace", suite=~"$suite", benchmark="$benchmark", metric="$metric"}`)).
		WithPanel(emulationPanel(1, pos(0, 0, 6, 8), trendSelector)).
		WithPanel(lastMeanPanel(2, pos(6, 0, 18, 8))).
		WithPanel(meanTrendPanel(3, pos(0, 8, 24, 10))).
		WithPanel(ratioTrendPanel(4, pos(0, 18, 12, 10))).
		WithPanel(overheadPanel(5, pos(12, 18, 12, 10), "Overhead against the baseline, per suite (last value in range)",
			`last_over_time(vmbench_result_overhead_percent{`+trendSelector+`}[$__range])`,
			"{{suite}} | {{platform}} vs {{baseline}} | emulated={{emulated}}")).
		Build()
}

func lastMeanPanel(id uint32, at dashboard.GridPos) *bargauge.PanelBuilder {
	return emulatedBars(bargauge.NewPanelBuilder().
		Id(id).
		GridPos(at).
		Title("Mean per suite and platform (last value in range)").
		Description("last_over_time(vmbench_result_value[range]): the latest mean of every suite in the time range, "+
			"also of suites deleted since. Purple bars come from emulated VMs (TCG): not VM overhead.").
		Datasource(datasource()).
		WithTarget(instant("A", `last_over_time(vmbench_result_value{`+trendSelector+`}[$__range])`, trendLegend)).
		Decimals(3).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("blue")),
		common.BarGaugeNamePlacementLeft)
}

func trendPanel(id uint32, at dashboard.GridPos, title, description string) *timeseries.PanelBuilder {
	return newTimeseries().
		Id(id).
		GridPos(at).
		Title(title).
		Description(description).
		Datasource(datasource()).
		OverrideByRegexp(emulatedSeries, []dashboard.DynamicConfigValue{
			fixedColor(emulatedColor),
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		}).
		LineWidth(2).
		SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		Legend(tableBelow("lastNotNull", "min", "max"))
}

func meanTrendPanel(id uint32, at dashboard.GridPos) *timeseries.PanelBuilder {
	return trendPanel(id, at, "Mean over time, by suite and platform",
		"vmbench_result_value of the chosen benchmark and metric in every chosen suite. A suite's series starts when "+
			"its results are recorded and ends when the suite is deleted. Dashed purple: emulated VMs (QEMU software "+
			"emulation, TCG), not VM overhead.").
		WithTarget(rangeQuery("A", `vmbench_result_value{`+trendSelector+`}`, trendLegend))
}

func ratioTrendPanel(id uint32, at dashboard.GridPos) *timeseries.PanelBuilder {
	return trendPanel(id, at, "Ratio to the baseline over time, by suite and platform",
		"vmbench_result_ratio: the platform's mean divided by the baseline platform's mean, per suite. Whether above 1 "+
			"is better depends on the metric's direction. Dashed purple: emulated VMs (TCG), not VM overhead.").
		WithTarget(rangeQuery("A", `vmbench_result_ratio{`+trendSelector+`}`,
			"{{suite}} | {{platform}} / {{baseline}} | emulated={{emulated}}")).
		Decimals(3)
}
