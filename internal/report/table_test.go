package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func findRow(t *testing.T, rows []Row, bench, metric, platform string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Benchmark == bench && r.Metric == metric && r.Platform == platform {
			return r
		}
	}
	t.Fatalf("no row %s/%s/%s", bench, metric, platform)
	return Row{}
}

func value(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestBuildRows(t *testing.T) {
	rep, err := Build(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Suite != "bench/demo" || rep.Baseline != "container" {
		t.Errorf("suite %q baseline %q", rep.Suite, rep.Baseline)
	}
	// 31 hpcc metrics at two problem sizes, 5 sysbench-cpu, 40 iozone, 4 iperf3; one other platform.
	if len(rep.Rows) != 31*2+5+40+4 {
		t.Errorf("%d rows, want %d", len(rep.Rows), 31*2+5+40+4)
	}
	if rep.Rows[0].Benchmark != "hpcc-n4000" || rep.Rows[len(rep.Rows)-1].Benchmark != "iperf3" {
		t.Errorf("rows are not in spec order: first %s, last %s", rep.Rows[0].Benchmark, rep.Rows[len(rep.Rows)-1].Benchmark)
	}

	tests := []struct {
		name                 string
		bench, metric        string
		baseMean, baseCI     any
		mean, ci             any
		ratio, overhead, p   any
		baseCoV, coV         any
		significant          any
		count, samples       int
		trimmed, emulatedRow bool
	}{
		// The unit is the repetition: three nodes' values are averaged per repetition first. By hand
		// (Python's statistics module): container repetition means 1005.4, 1002.2333, 1004.0333,
		// mean 1003.8889, s = 1.588267, so the interval is t(0.975; 2) * s / sqrt(3) = 4.303 *
		// 0.916986 = 3.94579 and the CoV 0.15821%; VM 96.0667, 95.3, 95.6667, mean 95.6778,
		// s = 0.383454, interval 0.952553, CoV 0.40078%. Ratio 95.6778 / 1003.89 = 0.095307,
		// overhead 90.469%. Welch's t = -962.77 on 2.23 df: p far below 1e-6.
		{"significant drop", "sysbench-cpu", "events_per_second", 1003.8889, 3.94579, 95.6778, 0.952553,
			0.095307, 90.469, "<1e-6", 0.158211, 0.400777, true, 3, 9, false, true},
		// latency_max_ms is lower-is-better: the VM's higher mean is an overhead of +15.95%. Repetition
		// means 16.9333, 22.0667, 17.6333 (s = 2.783749) and 20.0333, 25.5, 20.1333 (s = 3.127714):
		// t = 1.245585 on 3.946909 df, p = 0.281741 by integrating the t density (Simpson's rule).
		{"not significant", "sysbench-cpu", "latency_max_ms", 18.877778, 6.91522, 21.888889, 7.76967,
			1.15951, 15.951, 0.281741, 14.746170, 14.289047, false, 3, 9, false, true},
		// Two of three VM runs timed out: one value, so no interval and no test.
		{"one value", "hpcc-n8000", "HPL_Tflops", nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, 1, 1, false, true},
		{"trimmed samples", "iozone", "read_65536k_4k", nil, nil, nil, nil, nil, nil, nil, nil, nil, true, 9, 9, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := findRow(t, rep.Rows, tt.bench, tt.metric, "vm")
			check := func(field string, got *float64, want any, tol float64) {
				t.Helper()
				switch w := want.(type) {
				case nil:
				case float64:
					if got == nil || !near(*got, w, tol) {
						t.Errorf("%s = %v, want %v", field, value(got), w)
					}
				case string: // "<1e-6"
					if got == nil || *got >= 1e-6 {
						t.Errorf("%s = %v, want %s", field, value(got), w)
					}
				}
			}
			check("baselineMean", r.BaselineMean, tt.baseMean, 1e-6)
			check("baselineCI95", r.BaselineCI95, tt.baseCI, 1e-4)
			check("mean", r.Mean, tt.mean, 1e-6)
			check("ci95", r.CI95, tt.ci, 1e-4)
			check("ratio", r.Ratio, tt.ratio, 1e-4)
			check("overheadPercent", r.OverheadPercent, tt.overhead, 1e-4)
			check("pValue", r.PValue, tt.p, 1e-4)
			check("baselineCoVPercent", r.BaselineCoVPercent, tt.baseCoV, 1e-5)
			check("coVPercent", r.CoVPercent, tt.coV, 1e-5)
			if r.PValue != nil && (r.PValueHolm == nil || *r.PValueHolm < *r.PValue) {
				t.Errorf("pValueHolm = %v, want at least the raw %v", value(r.PValueHolm), *r.PValue)
			}
			if want, ok := tt.significant.(bool); ok && (r.Significant == nil || *r.Significant != want) {
				t.Errorf("significant = %v, want %v", r.Significant, want)
			}
			if r.Count != tt.count || r.Samples != tt.samples || r.SamplesTrimmed != tt.trimmed || r.Emulated != tt.emulatedRow || r.BaselineEmulated {
				t.Errorf("count %d samples %d trimmed %v emulated %v baselineEmulated %v", r.Count, r.Samples, r.SamplesTrimmed, r.Emulated, r.BaselineEmulated)
			}
		})
	}
	oneValue := findRow(t, rep.Rows, "hpcc-n8000", "HPL_Tflops", "vm")
	if oneValue.CI95 != nil || oneValue.PValue != nil || oneValue.PValueHolm != nil || oneValue.Significant != nil || oneValue.WelchDF != nil ||
		oneValue.MDE != nil || oneValue.CoVPercent != nil || oneValue.Ratio == nil {
		t.Errorf("a single value must have a ratio but no interval or test: %+v", oneValue)
	}
	if len(rep.Notes) != 3 || !strings.Contains(rep.Notes[0], "hpcc-n8000 on vm: 2 failed execution(s); last error: run demo-vm-3") {
		t.Errorf("notes %q", rep.Notes)
	}
}

func TestBuildEdgeCases(t *testing.T) {
	onlyBaseline := demoSuite()
	// sysbench-cpu measured only on the baseline: its rows say so instead of disappearing.
	var kept []vmbenchv1.BenchmarkResult
	for _, r := range onlyBaseline.Status.Results {
		if r.Benchmark != "sysbench-cpu" || r.Platform == "container" {
			kept = append(kept, r)
		}
	}
	onlyBaseline.Status.Results = kept
	rep, err := Build(onlyBaseline)
	if err != nil {
		t.Fatal(err)
	}
	r := findRow(t, rep.Rows, "sysbench-cpu", "events_per_second", "")
	if r.BaselineMean == nil || r.Mean != nil || r.Ratio != nil || r.Significant != nil {
		t.Errorf("baseline-only row: %+v", r)
	}

	// KVM everywhere: nothing is marked emulated. The Accelerator of the runs counts as much as the
	// results' flag.
	kvm := demoSuite()
	for i := range kvm.Status.Results {
		kvm.Status.Results[i].Emulated = false
	}
	rep, err = Build(kvm)
	if err != nil {
		t.Fatal(err)
	}
	if !findRow(t, rep.Rows, "iperf3", "retransmits", "vm").Emulated {
		t.Error("runs with Accelerator Emulation must mark the platform emulated")
	}
	for i := range kvm.Status.Runs {
		if kvm.Status.Runs[i].Accelerator != "" {
			kvm.Status.Runs[i].Accelerator = vmbenchv1.AcceleratorKVM
		}
	}
	rep, err = Build(kvm)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "emulated") && !strings.Contains(out.String(), "note: VMs ran under software emulation") {
		t.Errorf("KVM suite marked emulated:\n%s", out.String())
	}
	if strings.Contains(out.String(), EmulatedNote) {
		t.Error("KVM suite has the emulation footnote")
	}

	// No spec baseline: the API default, container.
	noBaseline := demoSuite()
	noBaseline.Spec.Baseline = ""
	if rep, err := Build(noBaseline); err != nil || rep.Baseline != "container" {
		t.Errorf("default baseline: %v, %v", rep, err)
	}
}

func TestBuildWithoutResults(t *testing.T) {
	running := demoSuite()
	running.Status = vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteRunning, Progress: "0/6"}
	empty := demoSuite()
	empty.Status = vmbenchv1.BenchmarkSuiteStatus{Results: []vmbenchv1.BenchmarkResult{{Benchmark: "iperf3", Platform: "vm", Failures: 3}}}
	tests := []struct {
		name  string
		suite *vmbenchv1.BenchmarkSuite
		want  string
	}{
		{"running", running, "suite bench/demo has no results yet (phase Running, runs finished 0/6)"},
		{"only failures", empty, "suite bench/demo has no results yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Build(tt.suite); err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestWriteTable(t *testing.T) {
	rep, err := Build(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	lines := strings.Split(text, "\n")
	header, headerAt := "", 0
	for i, line := range lines {
		if strings.HasPrefix(line, "BENCHMARK") {
			header, headerAt = line, i
			break
		}
	}
	if !strings.HasPrefix(header, "BENCHMARK") || !strings.Contains(header, "CONTAINER (BASELINE)") || !strings.Contains(header, "SIGNIFICANT") {
		t.Fatalf("header line %q", header)
	}
	tests := []struct {
		metric string
		fields []string
	}{
		// Values: see TestBuildRows. The MDE and RATIO [95% CI] cells were computed outside the
		// package from testdata/suite-demo.yaml with SciPy: the ratio in the higher-is-better sense
		// with Welch's interval on the logs of the repetition means (or, without samples, the delta
		// method: log of the mean, SD over mean), t(0.975) on Welch's df; the MDE with
		// testdata/mde_welch.py at alpha 0.05/80 (the report's 80 comparisons), power 0.8, over
		// the baseline mean: 40.3274 of 1003.89 (4.017%), 53.8292 of 18.8778 (285.146%, which the
		// package's quadrature, within its 0.1%, gets as 285.17% and prints 285.2%) and 100475 of
		// 910900 (11.030%); see TestWriteTableMDE.
		{"events_per_second", []string{"sysbench-cpu", "events_per_second", "events/s", "1003.9", "±", "3.9", "(n=3,", "9", "values)", "0.2%",
			"vm", "(emulated)", "95.68", "±", "0.95", "(n=3,", "9", "values)", "0.4%", "0.095", "+90.5%", "4.0%",
			"<0.0001", "<0.0001", "yes", "0.0953× [0.0945, 0.0961]", "-90.5%", "slower"}},
		{"latency_max_ms", []string{"latency_max_ms", "ms", "18.9", "±", "6.9", "(n=3,", "9", "values)", "14.7%", "vm", "(emulated)", "21.9",
			"±", "7.8", "(n=3,", "9", "values)", "14.3%", "1.160", "+16.0%", "285.2%", "0.2817", "0.2817", "no",
			"0.862× [0.627, 1.18]", "~", "inconclusive"}},
		{"read_65536k_4k", []string{"read_65536k_4k", "KiB/s", "911k", "±", "35k", "(n=9*)", "5.0%", "vm", "(emulated)", "151.2k", "±", "5.3k",
			"(n=9*)", "4.5%", "0.166", "+83.4%", "11.0%", "<0.0001", "<0.0001", "yes",
			"0.166× [0.158, 0.174]", "-83.4%", "slower"}},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			for _, l := range lines {
				f := strings.Fields(l)
				if len(f) > 1 && (f[0] == tt.metric || f[1] == tt.metric) {
					if strings.Join(f, " ") != strings.Join(tt.fields, " ") || strings.Count(l, "×") != 1 {
						t.Errorf("line %q\nwant fields %q", l, tt.fields)
					}
					return
				}
			}
			t.Errorf("no line for %s", tt.metric)
		})
	}
	// The runs table: a VM run with its accelerator and boot times, a container run without.
	for _, want := range [][]string{
		{"demo-container-1", "container", "Succeeded", "-", "-", "-"},
		{"demo-vm-1", "vm", "Succeeded", "Emulation", "-", "master", "92,", "node01", "92,", "node02", "94"},
	} {
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == want[0] {
				found = strings.HasPrefix(strings.Join(f, " "), strings.Join(want, " "))
				if !found {
					t.Errorf("run line %q\nwant it to start with %q", l, want)
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no run line for %s", want[0])
		}
	}
	// The n=1 row of hpcc-n8000: every statistic that needs two repetitions says n/a.
	for _, l := range lines {
		if strings.HasPrefix(l, "hpcc-n8000") {
			f := strings.Fields(l)
			// The last columns: RATIO [95% CI] (ratio, "[n/a]¹"), CHANGE, VERDICT.
			stats := f[:len(f)-4]
			if strings.Join(stats[len(stats)-4:], " ") != "n/a n/a n/a n/a" || stats[len(stats)-7] != "n/a" || !strings.Contains(l, "± n/a (n=1)") ||
				strings.Join(f[len(f)-3:], " ") != "[n/a]¹ ~ inconclusive" {
				t.Errorf("n=1 row %q", l)
			}
		}
	}
	// Columns are aligned: the PLATFORM column starts at the same character on every row.
	col := len([]rune(header[:strings.Index(header, "PLATFORM")]))
	for _, l := range lines[headerAt+1 : headerAt+98] {
		if !strings.HasPrefix(string([]rune(l)[col:]), "vm (emulated)") {
			t.Errorf("misaligned row %q", l)
			break
		}
	}
	for _, want := range []string{EmulatedNote, "*: per-sample detail was dropped", "n/a: fewer than 2 repetitions",
		"Holm-Bonferroni over the 80 comparisons", "P HOLM: adjusted with Holm-Bonferroni over the family of all 80 comparisons",
		"a = 0.05/80", "n counts repetitions", "COV: coefficient of variation", "significant after Holm-Bonferroni: ",
		"note: hpcc-n8000 on vm: 2 failed execution(s)", "\nRuns\nRUN "} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

func TestFormatMeanCI(t *testing.T) {
	tests := []struct {
		mean, ci float64
		want     string
	}{
		{1003.8889, 4.8864, "1003.9 ± 4.9"},
		{0.0008613, 0.00005751, "0.000861 ± 0.000058"},
		{23.81e9, 0.7567e9, "23.81G ± 0.76G"},
		{406200, 15310, "406k ± 15k"},
		{69010, 2895, "69.0k ± 2.9k"},
		{5, 0, "5 ± 0"},
		{1.2e6, 250, "1.20000M ± 0.00025M"},
	}
	for _, tt := range tests {
		if got := FormatMeanCI(tt.mean, tt.ci); got != tt.want {
			t.Errorf("FormatMeanCI(%g, %g) = %q, want %q", tt.mean, tt.ci, got, tt.want)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	rep, err := Build(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteCSV(&out); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != len(rep.Rows)+1 {
		t.Fatalf("%d records, want header + %d", len(records), len(rep.Rows))
	}
	if got := strings.Join(records[0], ","); got != strings.Join(csvHeader, ",") {
		t.Errorf("header %s", got)
	}
	byName := func(rec []string) map[string]string {
		m := map[string]string{}
		for i, h := range records[0] {
			m[h] = rec[i]
		}
		return m
	}
	tests := []struct {
		bench, metric string
		want          map[string]string
	}{
		{"sysbench-cpu", "events_per_second", map[string]string{"platform": "vm", "emulated": "true", "baselinePlatform": "container",
			"count": "3", "baselineCount": "3", "samples": "9", "baselineSamples": "9", "unit": "events/s", "direction": "HigherIsBetter",
			"significant": "true", "samplesTrimmed": "false"}},
		{"sysbench-cpu", "latency_max_ms", map[string]string{"significant": "false", "direction": "LowerIsBetter"}},
		{"hpcc-n8000", "HPL_Tflops", map[string]string{"count": "1", "ci95": "", "stdDev": "0", "pValue": "", "pValueHolm": "", "significant": "",
			"welchT": "", "welchDF": "", "mde": "", "coVPercent": ""}},
		{"iozone", "write_1024k_4k", map[string]string{"samplesTrimmed": "true", "unit": "KiB/s"}},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			for _, rec := range records[1:] {
				m := byName(rec)
				if m["benchmark"] != tt.bench || m["metric"] != tt.metric {
					continue
				}
				for k, v := range tt.want {
					if m[k] != v {
						t.Errorf("%s = %q, want %q", k, m[k], v)
					}
				}
				if m["mean"] == "" || m["ratio"] == "" {
					t.Errorf("mean %q ratio %q", m["mean"], m["ratio"])
				}
				return
			}
			t.Errorf("no record for %s/%s", tt.bench, tt.metric)
		})
	}
}

func TestWriteJSON(t *testing.T) {
	rep, err := Build(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("not a JSON array: %v", err)
	}
	if len(rows) != len(rep.Rows) {
		t.Fatalf("%d rows, want %d", len(rows), len(rep.Rows))
	}
	for _, key := range csvHeader {
		if _, ok := rows[0][key]; !ok {
			t.Errorf("row has no field %q", key)
		}
	}
	for _, r := range rows {
		if r["benchmark"] == "sysbench-cpu" && r["metric"] == "events_per_second" {
			if r["significant"] != true || r["emulated"] != true || !near(r["ci95"].(float64), 0.952553, 1e-4) || r["pValue"].(float64) > 1e-6 {
				t.Errorf("events_per_second row %v", r)
			}
		}
		if r["benchmark"] == "hpcc-n8000" && r["metric"] == "HPL_Tflops" {
			if r["ci95"] != nil || r["pValue"] != nil || r["significant"] != nil || r["count"] != 1.0 {
				t.Errorf("n=1 row must carry null statistics: %v", r)
			}
		}
	}
}

// TestWriteTableMDE checks the MDE of the demo's rows that TestWriteTable prints against the figures
// computed outside the package (testdata/mde_welch.py), within the 0.1% its quadrature promises.
func TestWriteTableMDE(t *testing.T) {
	rep, err := Build(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Comparisons != 80 {
		t.Fatalf("%d comparisons, want the 80 the figures were computed for", rep.Comparisons)
	}
	for metric, want := range map[string]struct {
		benchmark    string
		mde, percent float64
	}{
		"events_per_second": {"sysbench-cpu", 40.3274, 4.01712},
		"latency_max_ms":    {"sysbench-cpu", 53.8292, 285.146},
		"read_65536k_4k":    {"iozone", 100475, 11.0303},
	} {
		r := findRow(t, rep.Rows, want.benchmark, metric, "vm")
		if r.MDE == nil || r.MDEPercent == nil || !near(*r.MDE, want.mde, 1e-3) || !near(*r.MDEPercent, want.percent, 1e-3) {
			t.Errorf("%s: MDE %v (%v%%), want %g (%g%%)", metric, value(r.MDE), value(r.MDEPercent), want.mde, want.percent)
		}
	}
}

// suiteOf is a container/vm suite of one benchmark whose metrics have one value per repetition on
// each platform, as given.
func suiteOf(metrics map[string][2][]float64) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{Spec: vmbenchv1.BenchmarkSuiteSpec{
		Platforms:  []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}},
		Baseline:   "container",
		Benchmarks: []vmbenchv1.Benchmark{{Name: "b", Type: vmbenchv1.BenchmarkSysbenchCPU}},
	}}
	s.Name = "holm"
	names := make([]string, 0, len(metrics))
	for name := range metrics {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, platform := range []string{"container", "vm"} {
		res := vmbenchv1.BenchmarkResult{Benchmark: "b", Platform: platform}
		for _, name := range names {
			var samples []vmbenchv1.Sample
			for rep, v := range metrics[name][i] {
				samples = append(samples, vmbenchv1.Sample{Repetition: int32(rep + 1), Node: "master", Value: v})
			}
			res.Metrics = append(res.Metrics, summary(name, "s", vmbenchv1.LowerIsBetter, samples))
		}
		s.Status.Results = append(s.Status.Results, res)
	}
	return s
}

func TestBuildHolm(t *testing.T) {
	base := []float64{1, 2, 3, 4, 5}
	metrics := map[string][2][]float64{
		// Welch p-values computed independently (stats_test.go): 1..5 against 4..8 has t = 3 on 8 df,
		// p = 0.0170717 (Simpson's rule on the t density); against 3..7 p = 0.0805162; against
		// 10, 14, ..., 30 p = 0.00211392.
		"a": {base, {4, 5, 6, 7, 8}},
		"b": {base, {3, 4, 5, 6, 7}},
		"c": {base, {10, 14, 18, 22, 26, 30}},
		"d": {base, {4, 5, 6, 7, 8}},
		// One repetition on the VM: no test, and not in the family.
		"e": {base, {9}},
	}
	rep, err := Build(suiteOf(metrics))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Comparisons != 4 {
		t.Errorf("%d comparisons, want 4", rep.Comparisons)
	}
	// Holm with m = 4: c 0.00211392 * 4 = 0.00845568; a 0.0170717 * 3 = 0.0512151; d * 2 = 0.0341434,
	// raised to 0.0512151; b 0.0805162. a and d pass at 0.05 uncorrected but not after correction.
	want := map[string]struct {
		p, holm     float64
		significant bool
	}{
		"a": {0.0170717, 0.0512151, false},
		"b": {0.0805162, 0.0805162, false},
		"c": {0.00211392, 0.00845568, true},
		"d": {0.0170717, 0.0512151, false},
	}
	for metric, w := range want {
		r := findRow(t, rep.Rows, "b", metric, "vm")
		if r.PValue == nil || r.PValueHolm == nil || r.Significant == nil || !near(*r.PValue, w.p, 1e-4) ||
			!near(*r.PValueHolm, w.holm, 1e-4) || *r.Significant != w.significant {
			t.Errorf("%s: p %v, Holm %v, significant %v; want %g, %g, %v", metric, value(r.PValue), value(r.PValueHolm),
				r.Significant, w.p, w.holm, w.significant)
		}
		// The MDE is at the strictest Holm level, 0.05/4, relative to the baseline mean 3.
		mde, _ := MinDetectableEffect(summaryOf(base...), summaryOf(metrics[metric][1]...), Alpha/4, Power)
		if r.MDE == nil || r.MDEPercent == nil || !near(*r.MDE, mde, 1e-9) || !near(*r.MDEPercent, mde/3*100, 1e-9) {
			t.Errorf("%s: MDE %v (%v%%), want %g at alpha 0.05/4", metric, value(r.MDE), value(r.MDEPercent), mde)
		}
	}
	// The figure itself, computed outside the package (testdata/mde_welch.py, SciPy's adaptive
	// double integral over both chi-squared variances and Brent's root finder): 1..5 against 4..8,
	// SD sqrt(2.5) on each side, alpha 0.05/4, power 0.8: `python3 mde_welch.py 5 1.58113883 5
	// 1.58113883 0.0125` prints 4.39886, 146.6% of the baseline mean 3.
	if a := findRow(t, rep.Rows, "b", "a", "vm"); a.MDE == nil || !near(*a.MDE, 4.39886, 1e-3) || formatMDE(a) != "146.6%" {
		t.Errorf("a: MDE %v (cell %q), want 4.39886 (146.6%%)", value(a.MDE), formatMDE(a))
	}
	e := findRow(t, rep.Rows, "b", "e", "vm")
	if e.PValue != nil || e.PValueHolm != nil || e.Significant != nil || e.MDE != nil {
		t.Errorf("one repetition has a test: %+v", e)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "significant after Holm-Bonferroni: 1 of 4 comparisons (3 at p < 0.05 uncorrected)") {
		t.Errorf("table lacks the count of significant rows:\n%s", out.String())
	}
}

// A run whose per-node lists the controller compacted shows its slowest VM boot in the runs table.
func TestRunsTableShowsCompactedBoot(t *testing.T) {
	suite := demoSuite()
	run := &suite.Status.Runs[1]
	run.BootSeconds = nil
	slowest := 97.4
	run.Compacted = &vmbenchv1.RunSummary{Nodes: 3, MaxBootSeconds: &slowest}
	r, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.writeRuns(&b); err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, run.Name+" ") {
			line = l
		}
	}
	if !strings.Contains(line, "slowest 97") {
		t.Errorf("runs table line %q does not show the compacted run's slowest boot", line)
	}
	if other := suite.Status.Runs[2]; !strings.Contains(b.String(), other.BootSeconds[0].Node+" ") {
		t.Errorf("runs table lost the per-node boot times of uncompacted run %s:\n%s", other.Name, b.String())
	}
}

// TestAllNodesIsMarked checks that a benchmark measured on all nodes at once is marked in the table
// and explained in a note, and that the other benchmarks are not.
func TestAllNodesIsMarked(t *testing.T) {
	suite := demoSuite()
	for i := range suite.Status.Results {
		if suite.Status.Results[i].Benchmark == "sysbench-cpu" {
			suite.Status.Results[i].Concurrent = true
		}
	}
	rep, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Rows {
		if row.Concurrent != (row.Benchmark == "sysbench-cpu") {
			t.Errorf("%s %s on %s: concurrent = %v", row.Benchmark, row.Metric, row.Platform, row.Concurrent)
		}
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "sysbench-cpu "+AllNodesMark+"  "); n != 1 {
		t.Errorf("sysbench-cpu is marked in %d table cells, want 1:\n%s", n, text)
	}
	if strings.Count(text, AllNodesMark) != 2 {
		t.Errorf("want the mark in the table and in its note only:\n%s", text)
	}
	if !strings.Contains(text, "note: sysbench-cpu "+AllNodesMark+": it ran on all nodes of each run at once (concurrency AllNodes)") {
		t.Errorf("no note on sysbench-cpu:\n%s", text)
	}

	plain, err := Build(demoSuite())
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := plain.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), AllNodesMark) {
		t.Errorf("a suite without concurrency AllNodes is marked:\n%s", out.String())
	}
}
