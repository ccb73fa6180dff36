package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
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
		significant          any
		count                int
		trimmed, emulatedRow bool
	}{
		// Expected values: see stats_test.go. Ratio 95.6778 / 1003.89 = 0.095307, overhead 90.469%.
		{"significant drop", "sysbench-cpu", "events_per_second", 1003.8889, 4.8864, 95.6778, 0.991684,
			0.095307, 90.469, "<1e-10", true, 9, false, true},
		// latency_max_ms is lower-is-better: the VM's higher mean is an overhead of +15.95%, not significant.
		{"not significant", "sysbench-cpu", "latency_max_ms", 18.877778, 8.43767, 21.888889, nil,
			1.15951, 15.951, 0.581955, false, 9, false, true},
		// Two of three VM runs timed out: one value, so no interval and no test.
		{"one value", "hpcc-n8000", "HPL_Tflops", nil, nil, nil, nil, nil, nil, nil, nil, 1, false, true},
		{"trimmed samples", "iozone", "read_65536k_4k", nil, nil, nil, nil, nil, nil, nil, true, 9, true, true},
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
				case string: // "<1e-10"
					if got == nil || *got >= 1e-10 {
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
			if want, ok := tt.significant.(bool); ok && (r.Significant == nil || *r.Significant != want) {
				t.Errorf("significant = %v, want %v", r.Significant, want)
			}
			if r.Count != tt.count || r.SamplesTrimmed != tt.trimmed || r.Emulated != tt.emulatedRow || r.BaselineEmulated {
				t.Errorf("count %d trimmed %v emulated %v baselineEmulated %v", r.Count, r.SamplesTrimmed, r.Emulated, r.BaselineEmulated)
			}
		})
	}
	oneValue := findRow(t, rep.Rows, "hpcc-n8000", "HPL_Tflops", "vm")
	if oneValue.CI95 != nil || oneValue.PValue != nil || oneValue.Significant != nil || oneValue.WelchDF != nil || oneValue.Ratio == nil {
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
	header := lines[2]
	if !strings.HasPrefix(header, "BENCHMARK") || !strings.Contains(header, "CONTAINER (BASELINE)") || !strings.Contains(header, "SIGNIFICANT") {
		t.Fatalf("header line %q", header)
	}
	tests := []struct {
		metric string
		fields []string
	}{
		{"events_per_second", []string{"sysbench-cpu", "events_per_second", "events/s", "1003.9", "±", "4.9", "(n=9)", "vm", "(emulated)",
			"95.68", "±", "0.99", "(n=9)", "0.095", "+90.5%", "<0.0001", "yes"}},
		{"latency_max_ms", []string{"latency_max_ms", "ms", "18.9", "±", "8.4", "(n=9)", "vm", "(emulated)", "21.9", "±", "9.0", "(n=9)",
			"1.160", "+16.0%", "0.5820", "no"}},
		{"read_65536k_4k", []string{"read_65536k_4k", "KiB/s", "911k", "±", "35k", "(n=9*)", "vm", "(emulated)", "151.2k", "±", "5.3k",
			"(n=9*)", "0.166", "+83.4%", "<0.0001", "yes"}},
	}
	for _, tt := range tests {
		t.Run(tt.metric, func(t *testing.T) {
			for _, l := range lines {
				f := strings.Fields(l)
				if len(f) > 1 && (f[0] == tt.metric || f[1] == tt.metric) {
					if strings.Join(f, " ") != strings.Join(tt.fields, " ") {
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
	// The n=1 row of hpcc-n8000: every statistic that needs two values says n/a.
	for _, l := range lines {
		if strings.HasPrefix(l, "hpcc-n8000") {
			if !strings.HasSuffix(strings.TrimSpace(l), "n/a      n/a") || !strings.Contains(l, "± n/a (n=1)") {
				t.Errorf("n=1 row %q", l)
			}
		}
	}
	// Columns are aligned: the PLATFORM column starts at the same character on every row.
	col := len([]rune(header[:strings.Index(header, "PLATFORM")]))
	for _, l := range lines[3:100] {
		if !strings.HasPrefix(string([]rune(l)[col:]), "vm (emulated)") {
			t.Errorf("misaligned row %q", l)
			break
		}
	}
	for _, want := range []string{EmulatedNote, "*: per-sample detail was dropped", "n/a: fewer than 2 values",
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
			"count": "9", "baselineCount": "9", "unit": "events/s", "direction": "HigherIsBetter", "significant": "true", "samplesTrimmed": "false"}},
		{"sysbench-cpu", "latency_max_ms", map[string]string{"significant": "false", "direction": "LowerIsBetter"}},
		{"hpcc-n8000", "HPL_Tflops", map[string]string{"count": "1", "ci95": "", "stdDev": "0", "pValue": "", "significant": "", "welchT": "", "welchDF": ""}},
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
			if r["significant"] != true || r["emulated"] != true || !near(r["ci95"].(float64), 0.991684, 1e-4) || !near(r["pValue"].(float64), 0, 1e-10) {
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
