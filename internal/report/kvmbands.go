package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/bands"
)

// Each VM metric that has a KVM band, held against it: the section "against KVM's expected band"
// of the table, and the kvmBand fields of the JSON and CSV rows.

// KVMBandRow is one VM metric's ratio against the band KVM is expected to give.
type KVMBandRow struct {
	Benchmark string
	Metric    string
	Platform  string
	// Row is the comparison row, for its ratio and interval.
	Row Row
	bands.Placement
}

// KVMBandsLegend explains the section.
const KVMBandsLegend = "AGAINST KVM'S EXPECTED BAND: each VM metric with a published KVM figure, its ratio to the container " +
	"(higher is better) against what a correct VM gives on real hardware with these settings (docs/reports.md, \"Against what KVM can do\"); " +
	"within: the ratio lies in the band; below: its whole 95% interval lies under the band, likely causes first; above: its whole interval lies over it, " +
	"suspect the container arm; inconclusive: the ratio is off the band but its interval reaches into it (raise spec.repetitions)"

// kvmBandsOf places every row of a VM platform against a container baseline whose metric has a band.
func kvmBandsOf(suite *vmbenchv1.BenchmarkSuite, rows []Row) []KVMBandRow {
	types := map[string]vmbenchv1.PlatformType{}
	for _, p := range suite.Spec.Platforms {
		types[p.Name] = p.Type
	}
	benches := map[string]vmbenchv1.Benchmark{}
	for _, b := range suite.Spec.Benchmarks {
		benches[b.Name] = b
	}
	var out []KVMBandRow
	for _, row := range rows {
		if row.SpeedRatio == nil || types[row.Platform] != vmbenchv1.PlatformVM || types[row.BaselinePlatform] != vmbenchv1.PlatformContainer {
			continue
		}
		b, ok := benches[row.Benchmark]
		if !ok {
			b = vmbenchv1.Benchmark{Name: row.Benchmark, Type: vmbenchv1.BenchmarkType(row.Benchmark)}
		}
		p, ok := bands.PlaceMetric(bands.MetricOf(b, row.Metric), *row.SpeedRatio, row.SpeedRatioLow, row.SpeedRatioHigh,
			bandSettings(suite, row.Platform, row.Emulated))
		if !ok {
			continue
		}
		out = append(out, KVMBandRow{Benchmark: row.Benchmark, Metric: row.Metric, Platform: row.Platform, Row: row, Placement: p})
	}
	return out
}

// bandSettings are the settings of a VM platform as the suite recorded them (bands.SettingsOf).
func bandSettings(suite *vmbenchv1.BenchmarkSuite, platform string, emulated bool) bands.Settings {
	return bands.SettingsOf(suite, platform, emulated)
}

// bandCell is the band as a ratio, with the latency multiplier it comes from: 0.9–1× (default).
func bandCell(b *bands.Band) string {
	if b == nil {
		return "-"
	}
	lo, hi := b.SpeedRange()
	cell := trimFloat3(lo) + "–" + formatSpeed(hi)
	if b.Multiplier {
		cell += fmt.Sprintf(" (latency %s–%s×)", trimFloat3(b.Low), trimFloat3(b.High))
	}
	kind := "default"
	if b.Tuned {
		kind = "tuned"
	}
	if b.Variant != "" {
		kind = b.Variant
	}
	return cell + " " + kind + ", " + strings.Join(b.Sources, ", ")
}

// writeKVMBands prints the section: emulated platforms in one line each, then a row per metric with
// its placement, then the causes of each metric off its band.
func (r *Report) writeKVMBands(w io.Writer) error {
	if len(r.KVMBands) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, KVMBandsLegend)
	emulated := map[string]int{}
	var platforms []string
	for _, b := range r.KVMBands {
		if b.Position == bands.Emulated {
			if emulated[b.Platform] == 0 {
				platforms = append(platforms, b.Platform)
			}
			emulated[b.Platform]++
		}
	}
	for _, p := range platforms {
		fmt.Fprintf(w, "%s (emulated): %d metric(s) have a KVM band, and none applies under emulation; %s\n", p, emulated[p], bands.EnableKVM)
	}
	if len(platforms) == len(r.platformsWithBands()) {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLATFORM\tBENCHMARK\tMETRIC\tFAMILY\tRATIO [95% CI]\tKVM BAND\tPLACEMENT")
	for _, b := range r.KVMBands {
		if b.Position == bands.Emulated {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Platform, b.Benchmark, b.Metric, b.Family, ratioCell(b.Row), bandCell(b.Band), b.Position)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// The causes depend on the family, the platform's settings and whether the metric writes only:
	// one list per platform, family and list of causes.
	type group struct {
		platform string
		family   bands.Family
		position bands.Position
		metrics  []string
		causes   []bands.Cause
	}
	var groups []*group
	index := map[string]*group{}
	for _, b := range r.KVMBands {
		if b.Position == bands.Emulated || len(b.Causes) == 0 {
			continue
		}
		key := b.Platform + "/" + string(b.Family) + "/" + string(b.Position) + "/" + kvmBandFields{Causes: b.Causes}.causeSettings()
		g, ok := index[key]
		if !ok {
			g = &group{platform: b.Platform, family: b.Family, position: b.Position, causes: b.Causes}
			index[key] = g
			groups = append(groups, g)
		}
		g.metrics = append(g.metrics, b.Benchmark+" "+b.Metric)
	}
	for _, g := range groups {
		fmt.Fprintf(w, "%s %s %s its band (%s); likely causes, most likely first:\n", g.platform, g.family, g.position, strings.Join(g.metrics, ", "))
		for i, c := range g.causes {
			fmt.Fprintf(w, "  %d. %s\n     %s\n", i+1, c.Setting, c.Why)
		}
	}
	return nil
}

func (r *Report) platformsWithBands() map[string]bool {
	seen := map[string]bool{}
	for _, b := range r.KVMBands {
		seen[b.Platform] = true
	}
	return seen
}

// kvmBandOf is the placement of a row, if it has one.
func (r *Report) kvmBandOf(row Row) *KVMBandRow {
	for i := range r.KVMBands {
		b := &r.KVMBands[i]
		if b.Benchmark == row.Benchmark && b.Metric == row.Metric && b.Platform == row.Platform {
			return b
		}
	}
	return nil
}

// kvmBandFields are the kvmBand fields of one JSON or CSV row; empty when the row has no band.
type kvmBandFields struct {
	Family   string        `json:"kvmBandFamily"`
	Position string        `json:"kvmBandPosition"`
	Low      *float64      `json:"kvmBandLow"`
	High     *float64      `json:"kvmBandHigh"`
	Sources  []string      `json:"kvmBandSources"`
	Causes   []bands.Cause `json:"kvmBandCauses"`
}

func (r *Report) kvmBandFieldsOf(row Row) kvmBandFields {
	b := r.kvmBandOf(row)
	if b == nil {
		return kvmBandFields{}
	}
	f := kvmBandFields{Family: string(b.Family), Position: string(b.Position), Causes: b.Causes}
	if b.Band != nil {
		lo, hi := b.Band.SpeedRange()
		f.Low, f.High, f.Sources = &lo, &hi, b.Band.Sources
	}
	return f
}

func (f kvmBandFields) causeSettings() string {
	var settings []string
	for _, c := range f.Causes {
		settings = append(settings, c.Setting)
	}
	return strings.Join(settings, "; ")
}
