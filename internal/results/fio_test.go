package results

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFio(t *testing.T) {
	tests := []struct {
		fixture string
		want    []Metric
	}{
		{"fio-randread-4k-qd16.json", []Metric{
			m("read_iops", 37201.779822, "IOPS", HigherIsBetter),
			m("read_bw_kib_per_second", 148807, "KiB/s", HigherIsBetter),
			m("read_clat_mean_ns", 426377.986026, "ns", LowerIsBetter),
			m("read_clat_p99_ns", 4014080, "ns", LowerIsBetter),
			m("read_lat_mean_ns", 429550.424311, "ns", LowerIsBetter),
		}},
		{"fio-randread-4k-qd16-jsonplus.json", []Metric{
			m("read_iops", 29307.269273, "IOPS", HigherIsBetter),
			m("read_bw_kib_per_second", 117229, "KiB/s", HigherIsBetter),
			m("read_clat_mean_ns", 541004.13771, "ns", LowerIsBetter),
			m("read_clat_p99_ns", 4751360, "ns", LowerIsBetter),
			m("read_lat_mean_ns", 545269.224359, "ns", LowerIsBetter),
		}},
		{"fio-seqwrite-1m-qd4.json", []Metric{
			m("write_iops", 1339.162586, "IOPS", HigherIsBetter),
			m("write_bw_kib_per_second", 1371302, "KiB/s", HigherIsBetter),
			m("write_clat_mean_ns", 2877538.314678, "ns", LowerIsBetter),
			m("write_clat_p99_ns", 11993088, "ns", LowerIsBetter),
			m("write_lat_mean_ns", 2984952.197597, "ns", LowerIsBetter),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			ms, err := ParseFio(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFioHistogramMatchesFio checks that the percentile computed from the
// json+ histogram equals the p99 fio printed for the same run, which is what
// makes merging histograms of several jobs trustworthy.
func TestFioHistogramMatchesFio(t *testing.T) {
	report, err := fioDecode(readFixture(t, "fio-randread-4k-qd16-jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	read := report.Jobs[0].Read
	for _, p := range []float64{1, 50, 90, 99, 99.9} {
		want, ok := fioPercentile(read.Clat.Percentile, p)
		if !ok {
			t.Fatalf("fixture has no p%v", p)
		}
		got, ok := fioHistogramPercentile([]*fioDirection{read}, p)
		if !ok || got != want {
			t.Errorf("p%v from bins = %v, fio printed %v", p, got, want)
		}
	}
}

// fioFixtureJobs returns the fixture's report as generic JSON so that tests
// can clone and alter jobs.
func fioFixtureJobs(t *testing.T, fixture string) map[string]any {
	t.Helper()
	var report map[string]any
	if err := json.Unmarshal(readFixture(t, fixture), &report); err != nil {
		t.Fatal(err)
	}
	return report
}

func fioSet(job any, path string, value any) {
	keys := strings.Split(path, ".")
	obj := job.(map[string]any)
	for _, k := range keys[:len(keys)-1] {
		obj = obj[k].(map[string]any)
	}
	obj[keys[len(keys)-1]] = value
}

func cloneJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseFioTwoJobsSameName(t *testing.T) {
	report := fioFixtureJobs(t, "fio-randread-4k-qd16.json")
	first := report["jobs"].([]any)[0]
	second := cloneJSON(t, first)
	fioSet(second, "read.iops", 12798.220178)
	fioSet(second, "read.bw", 51193)
	fioSet(second, "read.clat_ns.mean", 1000000.0)
	fioSet(second, "read.clat_ns.N", 127945)
	fioSet(second, "read.lat_ns.mean", 1100000.0)
	fioSet(second, "read.lat_ns.N", 127945)
	percentiles := second.(map[string]any)["read"].(map[string]any)["clat_ns"].(map[string]any)["percentile"].(map[string]any)
	percentiles["99.000000"] = 8000000
	report["jobs"] = []any{first, second}
	b, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	input := "fio: this platform does not support process shared mutexes, forcing use of threads. Use the 'thread' option to get rid of this warning.\n" +
		"note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1\n" + string(b)

	ms, err := ParseFio([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, ms)
	const n1, n2 = 372055.0, 127945.0
	want := []Metric{
		m("read_iops", 37201.779822+12798.220178, "IOPS", HigherIsBetter),
		m("read_bw_kib_per_second", 148807+51193, "KiB/s", HigherIsBetter),
		m("read_clat_mean_ns", (426377.986026*n1+1000000*n2)/(n1+n2), "ns", LowerIsBetter),
		m("read_clat_p99_ns", (4014080*n1+8000000*n2)/(n1+n2), "ns", LowerIsBetter),
		m("read_lat_mean_ns", (429550.424311*n1+1100000*n2)/(n1+n2), "ns", LowerIsBetter),
	}
	if diff := cmp.Diff(want, ms, approx); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// fioTwoJobsJSONPlus is the shape of numjobs=2 with --output-format=json+
// and no --group_reporting, cut down to the keys the parser reads.
const fioTwoJobsJSONPlus = `{"jobs": [
	{"jobname": "r", "error": 0, "read": {"iops": 10, "bw": 40, "total_ios": 100,
		"clat_ns": {"mean": 118, "N": 100, "percentile": {"99.000000": 1000}, "bins": {"100": 98, "1000": 2}},
		"lat_ns": {"mean": 120, "N": 100}}},
	{"jobname": "r", "error": 0, "read": {"iops": 30, "bw": 120, "total_ios": 100,
		"clat_ns": {"mean": 200, "N": 100, "percentile": {"99.000000": 200}, "bins": {"200": 100}},
		"lat_ns": {"mean": 210, "N": 100}}}]}`

func TestParseFioVariants(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []Metric
	}{
		// Merged bins give p99=200; averaging the jobs' p99s would give 600.
		{"json+ jobs with the same name merge histograms", fioTwoJobsJSONPlus,
			[]Metric{
				m("read_iops", 40, "IOPS", HigherIsBetter),
				m("read_bw_kib_per_second", 160, "KiB/s", HigherIsBetter),
				m("read_clat_mean_ns", 159, "ns", LowerIsBetter),
				m("read_clat_p99_ns", 200, "ns", LowerIsBetter),
				m("read_lat_mean_ns", 165, "ns", LowerIsBetter),
			}},
		{"differently named jobs get prefixes", `{"jobs": [
			{"jobname": "rand-read", "error": 0, "read": {"iops": 10, "bw": 40, "total_ios": 100,
				"clat_ns": {"mean": 5, "N": 100, "percentile": {"99.000000": 8}}, "lat_ns": {"mean": 6, "N": 100}},
				"write": {"iops": 0, "bw": 0, "total_ios": 0}},
			{"jobname": "seq write", "error": 0, "write": {"iops": 3, "bw": 3072, "total_ios": 30,
				"clat_ns": {"mean": 7, "N": 30, "percentile": {"99.000000": 9}}, "lat_ns": {"mean": 8, "N": 30}}}]}`,
			[]Metric{
				m("rand_read_read_iops", 10, "IOPS", HigherIsBetter),
				m("rand_read_read_bw_kib_per_second", 40, "KiB/s", HigherIsBetter),
				m("rand_read_read_clat_mean_ns", 5, "ns", LowerIsBetter),
				m("rand_read_read_clat_p99_ns", 8, "ns", LowerIsBetter),
				m("rand_read_read_lat_mean_ns", 6, "ns", LowerIsBetter),
				m("seq_write_write_iops", 3, "IOPS", HigherIsBetter),
				m("seq_write_write_bw_kib_per_second", 3072, "KiB/s", HigherIsBetter),
				m("seq_write_write_clat_mean_ns", 7, "ns", LowerIsBetter),
				m("seq_write_write_clat_p99_ns", 9, "ns", LowerIsBetter),
				m("seq_write_write_lat_mean_ns", 8, "ns", LowerIsBetter),
			}},
		{"mixed read/write job, --status-interval reports, last one wins", `{"jobs": [{"jobname": "rw", "error": 0,
				"read": {"iops": 1, "bw": 4, "total_ios": 1, "clat_ns": {"mean": 1, "N": 1}, "lat_ns": {"mean": 1, "N": 1}}}]}
			{"jobs": [{"jobname": "rw", "error": 0,
				"read": {"iops": 70, "bw": 280, "total_ios": 700, "clat_ns": {"mean": 50, "N": 700, "percentile": {"99.00": 90}}, "lat_ns": {"mean": 55, "N": 700}},
				"write": {"iops": 30, "bw": 120, "total_ios": 300, "clat_ns": {"mean": 60, "N": 300, "percentile": {"99.00": 95}}, "lat_ns": {"mean": 65, "N": 300}}}]}`,
			[]Metric{
				m("read_iops", 70, "IOPS", HigherIsBetter),
				m("read_bw_kib_per_second", 280, "KiB/s", HigherIsBetter),
				m("read_clat_mean_ns", 50, "ns", LowerIsBetter),
				m("read_clat_p99_ns", 90, "ns", LowerIsBetter),
				m("read_lat_mean_ns", 55, "ns", LowerIsBetter),
				m("write_iops", 30, "IOPS", HigherIsBetter),
				m("write_bw_kib_per_second", 120, "KiB/s", HigherIsBetter),
				m("write_clat_mean_ns", 60, "ns", LowerIsBetter),
				m("write_clat_p99_ns", 95, "ns", LowerIsBetter),
				m("write_lat_mean_ns", 65, "ns", LowerIsBetter),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseFio([]byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			if diff := cmp.Diff(tt.want, ms, approx); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if h, ok := HeadlineOf(Fio, ms); !ok || !strings.HasSuffix(h.Name, "_iops") {
				t.Errorf("HeadlineOf = %+v, %v", h, ok)
			}
		})
	}
}

func TestParseFioErrors(t *testing.T) {
	failed := fioFixtureJobs(t, "fio-randread-4k-qd16.json")
	fioSet(failed["jobs"].([]any)[0], "error", 5)
	failedJSON, err := json.Marshal(failed)
	if err != nil {
		t.Fatal(err)
	}
	// fio before 3.0 reports clat and lat in microseconds, under other keys.
	usec := fioFixtureJobs(t, "fio-randread-4k-qd16.json")
	read := usec["jobs"].([]any)[0].(map[string]any)["read"].(map[string]any)
	read["clat"], read["lat"] = read["clat_ns"], read["lat_ns"]
	delete(read, "clat_ns")
	delete(read, "lat_ns")
	usecJSON, err := json.Marshal(usec)
	if err != nil {
		t.Fatal(err)
	}
	full := string(readFixture(t, "fio-randread-4k-qd16.json"))
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"fio before 3.0", usecJSON, `fio: job "randread" read reports clat in microseconds, not clat_ns: fio before 3.0 is not read; use fio 3.0 or later`},
		{"job error", failedJSON, `fio job "randread" failed with error 5 (input/output error)`},
		{"normal output", readFixture(t, "fio-randread-4k-qd16-normal.txt"), "run fio with --output-format=json"},
		{"terse output", readFixture(t, "fio-randread-4k-qd16-terse.txt"), "run fio with --output-format=json"},
		{"truncated JSON", []byte(full[:len(full)-200]), "fio: invalid JSON"},
		{"no jobs", []byte(`{"fio version": "fio-3.33", "jobs": []}`), "fio: report has no jobs"},
		{"no I/O", []byte(`{"jobs": [{"jobname": "x", "error": 0, "read": {"iops": 0, "total_ios": 0}}]}`), "fio: no job did any I/O"},
		{"empty", nil, "fio: empty output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParseFio, tt.input, tt.want)
		})
	}
}

// A real randrw run of two jobs with the same name (numjobs=2, json+): both directions of both jobs
// are summed, their means weighted by N, and p99 taken from the merged histograms (1253376 and 13376
// ns, between the jobs' own p99s of 946176/1449984 and 13120/13504).
func TestParseFioRealTwoJobsRandRW(t *testing.T) {
	ms, err := ParseFio(readFixture(t, "fio-randrw-4k-nj2-jsonplus.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, ms)
	const r1, r2, w1, w2 = 6113.0, 6780.0, 6176.0, 6919.0
	want := []Metric{
		m("read_iops", 5917.715392+6773.226773, "IOPS", HigherIsBetter),
		m("read_bw_kib_per_second", 23670+27092, "KiB/s", HigherIsBetter),
		m("read_clat_mean_ns", (98752.091772*r1+112194.412094*r2)/(r1+r2), "ns", LowerIsBetter),
		m("read_clat_p99_ns", 1253376, "ns", LowerIsBetter),
		m("read_lat_mean_ns", (98771.497301*r1+112213.236431*r2)/(r1+r2), "ns", LowerIsBetter),
		m("write_iops", 5978.702807+6912.087912, "IOPS", HigherIsBetter),
		m("write_bw_kib_per_second", 23914+27648, "KiB/s", HigherIsBetter),
		m("write_clat_mean_ns", (3176.569301*w1+3229.995664*w2)/(w1+w2), "ns", LowerIsBetter),
		m("write_clat_p99_ns", 13376, "ns", LowerIsBetter),
		m("write_lat_mean_ns", (3207.112532*w1+3262.531869*w2)/(w1+w2), "ns", LowerIsBetter),
	}
	if diff := cmp.Diff(want, ms, approx); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
