package report

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
)

// The table's rows as JSON and CSV, for other tools (vmbench report --json, --csv).

// jsonRow is a row with its placement against KVM's expected band.
type jsonRow struct {
	Row
	kvmBandFields
}

// WriteJSON writes the rows as an indented JSON array.
func (r *Report) WriteJSON(w io.Writer) error {
	rows := make([]jsonRow, 0, len(r.Rows))
	for _, row := range r.Rows {
		rows = append(rows, jsonRow{Row: row, kvmBandFields: r.kvmBandFieldsOf(row)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// csvHeader names the CSV columns after the JSON fields.
var csvHeader = []string{
	"benchmark", "metric", "unit", "direction",
	"baselinePlatform", "baselineEmulated", "baselineCount", "baselineSamples", "baselineMean", "baselineStdDev", "baselineCI95",
	"baselineCoVPercent", "platform", "emulated", "count", "samples", "mean", "stdDev", "ci95", "coVPercent",
	"ratio", "overheadPercent", "mde", "mdePercent", "welchT", "welchDF", "pValue", "pValueHolm", "significant", "samplesTrimmed",
	// Added after the first release: at the end, so that readers by position keep working.
	"resource", "speedRatio", "speedRatioLow", "speedRatioHigh", "ratioNote", "verdict",
	"kvmBandFamily", "kvmBandPosition", "kvmBandLow", "kvmBandHigh", "kvmBandSources", "kvmBandCauses",
}

// WriteCSV writes the rows with a header; a figure that does not exist is an empty cell.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, row := range r.Rows {
		band := r.kvmBandFieldsOf(row)
		record := []string{
			row.Benchmark, row.Metric, row.Unit, row.Direction,
			row.BaselinePlatform, strconv.FormatBool(row.BaselineEmulated), strconv.Itoa(row.BaselineCount), strconv.Itoa(row.BaselineSamples),
			csvFloat(row.BaselineMean), csvFloat(row.BaselineStdDev), csvFloat(row.BaselineCI95), csvFloat(row.BaselineCoVPercent),
			row.Platform, strconv.FormatBool(row.Emulated), strconv.Itoa(row.Count), strconv.Itoa(row.Samples),
			csvFloat(row.Mean), csvFloat(row.StdDev), csvFloat(row.CI95), csvFloat(row.CoVPercent),
			csvFloat(row.Ratio), csvFloat(row.OverheadPercent), csvFloat(row.MDE), csvFloat(row.MDEPercent),
			csvFloat(row.WelchT), csvFloat(row.WelchDF), csvFloat(row.PValue), csvFloat(row.PValueHolm),
			csvBool(row.Significant), strconv.FormatBool(row.SamplesTrimmed),
			row.Resource, csvFloat(row.SpeedRatio), csvFloat(row.SpeedRatioLow), csvFloat(row.SpeedRatioHigh), row.RatioNote, row.Verdict,
			band.Family, band.Position, csvFloat(band.Low), csvFloat(band.High), strings.Join(band.Sources, " "), band.causeSettings(),
		}
		if err := cw.Write(record); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvFloat(v *float64) string {
	if v == nil || math.IsInf(*v, 0) || math.IsNaN(*v) {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func csvBool(v *bool) string {
	if v == nil {
		return ""
	}
	return strconv.FormatBool(*v)
}
