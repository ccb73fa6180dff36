package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// metricSelector selects one metric of one benchmark of one suite, on every platform.
const metricSelector = `namespace="$namespace", suite="$suite", benchmark="$benchmark", metric="$metric"`

// Benchmark is the detail of one metric of one benchmark in one suite: mean and standard
// deviation per platform, sample counts, and the ratio and overhead against the baseline.
func Benchmark() (dashboard.Dashboard, error) {
	mean := `vmbench_result_value{` + metricSelector + `}`
	stddev := `vmbench_result_stddev{` + metricSelector + `}`
	samples := `vmbench_result_samples{` + metricSelector + `}`
	return newBoard("vmbench-benchmark", "vmbench / Benchmark detail",
		"One metric of one benchmark in one suite: mean ± standard deviation per platform, samples, ratio to the baseline.",
		"now-24h").
		WithVariable(labelVariable(VarNamespace, "Namespace", "vmbench_result_value")).
		WithVariable(labelVariable(VarSuite, "Suite", `vmbench_result_value{namespace="$namespace"}`)).
		WithVariable(labelVariable(VarBenchmark, "Benchmark", `vmbench_result_value{namespace="$namespace", suite="$suite"}`)).
		WithVariable(labelVariable(VarMetric, "Metric",
			`vmbench_result_value{namespace="$namespace", suite="$suite", benchmark="$benchmark"}`)).
		WithPanel(emulationPanel(1, pos(0, 0, 8, 6), metricSelector)).
		WithPanel(samplesPanel(2, pos(8, 0, 8, 6), latest(samples))).
		WithPanel(ratioPanel(3, pos(16, 0, 8, 6))).
		WithPanel(statsTablePanel(4, pos(0, 6, 12, 9), latest(mean), latest(stddev), latest(samples))).
		WithPanel(overheadPanel(5, pos(12, 6, 12, 9), "Overhead against the baseline",
			latest(`vmbench_result_overhead_percent{`+metricSelector+`}`),
			"{{platform}} vs {{baseline}} | emulated={{emulated}}")).
		WithPanel(meanStddevPanel(6, pos(0, 15, 24, 10), mean, stddev)).
		Build()
}

func samplesPanel(id uint32, at dashboard.GridPos, expr string) *stat.PanelBuilder {
	return newStat().
		Id(id).
		GridPos(at).
		Title("Samples per platform").
		Description("vmbench_result_samples: the number of samples behind each mean. With one sample the standard " +
			"deviation is 0; below about 5 it says little about run-to-run noise (red below 2, yellow below 5).").
		Datasource(datasource()).
		WithTarget(instant("A", expr, "{{platform}} (emulated={{emulated}})")).
		Thresholds(thresholds("red", step{2, "yellow"}, step{5, "green"})).
		Decimals(0).
		ColorMode(common.BigValueColorModeValue).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(lastValue())
}

func ratioPanel(id uint32, at dashboard.GridPos) *stat.PanelBuilder {
	return newStat().
		Id(id).
		GridPos(at).
		Title("Ratio to the baseline").
		Description("vmbench_result_ratio: the platform's mean divided by the baseline platform's mean. Whether above 1 "+
			"is better depends on the metric's direction (HigherIsBetter or LowerIsBetter); the overhead panel accounts "+
			"for it. Purple: emulated VMs (TCG), not VM overhead.").
		Datasource(datasource()).
		WithTarget(instant("A", latest(`vmbench_result_ratio{`+metricSelector+`}`),
			"{{platform}} / {{baseline}} | emulated={{emulated}}")).
		ColorScheme(dashboard.NewFieldColorBuilder().Mode(dashboard.FieldColorModeIdFixed).FixedColor("blue")).
		OverrideByRegexp(emulatedSeries, []dashboard.DynamicConfigValue{fixedColor(emulatedColor)}).
		Decimals(3).
		ColorMode(common.BigValueColorModeValue).
		GraphMode(common.BigValueGraphModeNone).
		TextMode(common.BigValueTextModeValueAndName).
		ReduceOptions(lastValue())
}

// statsTablePanel merges mean, standard deviation and sample count, which carry the same labels,
// into one row per platform.
func statsTablePanel(id uint32, at dashboard.GridPos, mean, stddev, samples string) *table.PanelBuilder {
	hidden := map[string]any{}
	for _, l := range []string{"Time", "__name__", "namespace", "suite", "benchmark", "metric"} {
		hidden[l] = true
	}
	return newTable().
		Id(id).
		GridPos(at).
		Title("Mean ± standard deviation per platform").
		Description("vmbench_result_value (mean), vmbench_result_stddev (sample standard deviation) and "+
			"vmbench_result_samples (count) per platform. A red emulated cell marks figures from VMs under QEMU "+
			"software emulation (TCG): they are not VM overhead.").
		Datasource(datasource()).
		WithTarget(tableQuery("A", mean)).
		WithTarget(tableQuery("B", stddev)).
		WithTarget(tableQuery("C", samples)).
		WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}}).
		WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
			"excludeByName": hidden,
			"indexByName": map[string]any{
				"platform": 0, "Value #A": 1, "Value #B": 2, "Value #C": 3, "unit": 4, "direction": 5, "emulated": 6,
			},
			"renameByName": map[string]any{"Value #A": "Mean", "Value #B": "Std. deviation", "Value #C": "Samples"},
		}}).
		Decimals(3).
		OverrideByName("Samples", []dashboard.DynamicConfigValue{{Id: "decimals", Value: 0}}).
		OverrideByName("emulated", []dashboard.DynamicConfigValue{
			{Id: "mappings", Value: []map[string]any{{
				"type": "value",
				"options": map[string]any{
					"true":  map[string]any{"text": "EMULATED (TCG): not VM overhead", "color": "red", "index": 0},
					"false": map[string]any{"text": "no", "color": "green", "index": 1},
				},
			}}},
			{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}},
		})
}

// meanStddevPanel draws each platform's mean with dashed lines one standard deviation above and
// below it.
func meanStddevPanel(id uint32, at dashboard.GridPos, mean, stddev string) *timeseries.PanelBuilder {
	return newTimeseries().
		Id(id).
		GridPos(at).
		Title("Mean ± standard deviation per platform, over time").
		Description("Solid: vmbench_result_value (mean). Dashed: mean ± vmbench_result_stddev. Purple: emulated VMs "+
			"(QEMU software emulation, TCG), whose figures are not VM overhead.").
		Datasource(datasource()).
		WithTarget(rangeQuery("A", mean, "{{platform}} mean [{{unit}}] | emulated={{emulated}}")).
		WithTarget(rangeQuery("B", mean+" + "+stddev, "{{platform}} +1 stddev | emulated={{emulated}}")).
		WithTarget(rangeQuery("C", mean+" - "+stddev, "{{platform}} -1 stddev | emulated={{emulated}}")).
		OverrideByRegexp(`/.* [+-]1 stddev \| .*/`, []dashboard.DynamicConfigValue{
			{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
			{Id: "custom.lineWidth", Value: 1},
		}).
		OverrideByRegexp(emulatedSeries, []dashboard.DynamicConfigValue{fixedColor(emulatedColor)}).
		LineWidth(2).
		SpanNulls(common.BoolOrFloat64{Bool: ptr(false)}).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementRight).
			ShowLegend(true).
			Calcs([]string{"lastNotNull"}))
}
