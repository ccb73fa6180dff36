package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)

func at(minutes float64) *metav1.Time {
	return &metav1.Time{Time: t0.Add(time.Duration(minutes * float64(time.Minute)))}
}

func TestSuiteWindow(t *testing.T) {
	now := t0.Add(2 * time.Hour)
	run := func(start, done *metav1.Time) vmbenchv1.RunStatus {
		return vmbenchv1.RunStatus{Name: "r", StartTime: start, CompletionTime: done}
	}
	tests := []struct {
		name       string
		status     vmbenchv1.BenchmarkSuiteStatus
		start, end time.Time
		err        string
	}{
		{"runs, out of order", vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteComplete, StartTime: at(-5),
			Runs: []vmbenchv1.RunStatus{run(at(10), at(20)), run(at(1), at(9)), run(at(21), at(25.5))}},
			t0.Add(time.Minute), t0.Add(25*time.Minute + 30*time.Second), ""},
		// Queued time before the first run does not count: the suite's own start is earlier.
		{"a run still going", vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteRunning, StartTime: at(-5),
			Runs: []vmbenchv1.RunStatus{run(at(1), at(9)), run(at(10), nil)}}, t0.Add(time.Minute), now, ""},
		{"between runs", vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteRunning,
			Runs: []vmbenchv1.RunStatus{run(at(1), at(9))}}, t0.Add(time.Minute), now, ""},
		{"no run times", vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuiteFailed, StartTime: at(0), CompletionTime: at(3)},
			t0, t0.Add(3 * time.Minute), ""},
		{"not started", vmbenchv1.BenchmarkSuiteStatus{Phase: vmbenchv1.SuitePending}, time.Time{}, time.Time{},
			"suite bench/s has not started: no run has a start time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &vmbenchv1.BenchmarkSuite{Status: tt.status}
			s.Name, s.Namespace = "s", "bench"
			start, end, err := suiteWindow(s, now)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !start.Equal(tt.start) || !end.Equal(tt.end) {
				t.Errorf("window %s - %s, %v; want %s - %s", start, end, err, tt.start, tt.end)
			}
		})
	}
}

func TestFootprintQueries(t *testing.T) {
	rss, cpu, peak, procs := footprintQueries("vmbench", 25*time.Minute+12500*time.Millisecond)
	for got, want := range map[string]string{
		rss:   `max(max_over_time(process_resident_memory_bytes{job="vmbench"}[1513s]))`,
		cpu:   `sum(increase(process_cpu_seconds_total{job="vmbench"}[1513s]))`,
		peak:  `max(max_over_time(rate(process_cpu_seconds_total{job="vmbench"}[60s])[1513s:15s]))`,
		procs: `count(max_over_time(process_start_time_seconds{job="vmbench"}[1513s]))`,
	} {
		if got != want {
			t.Errorf("query %s\nwant  %s", got, want)
		}
	}
}

func TestParsePromScalar(t *testing.T) {
	tests := []struct {
		name string
		body string
		want float64
		err  string
	}{
		{"one series", `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1795514400.5,"43253760"]}]}}`, 43253760, ""},
		{"no series", `{"status":"success","data":{"resultType":"vector","result":[]}}`, 0, "no series"},
		{"bad query", `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\""}`, 0,
			`prometheus: bad_data: 1:5: parse error: unexpected "}"`},
		{"a matrix", `{"status":"success","data":{"resultType":"matrix","result":[]}}`, 0, `prometheus answered a "matrix", not an instant vector`},
		{"two series", `{"status":"success","data":{"resultType":"vector","result":[{"value":[1,"1"]},{"value":[1,"2"]}]}}`, 0,
			"prometheus answered 2 series where the query aggregates to one"},
		{"not a number", `{"status":"success","data":{"resultType":"vector","result":[{"value":[1,"many"]}]}}`, 0, `prometheus sample value "many"`},
		{"NaN", `{"status":"success","data":{"resultType":"vector","result":[{"value":[1,"NaN"]}]}}`, 0, "prometheus sample value \"NaN\" is not a number"},
		{"an HTML page", `<html>502 Bad Gateway</html>`, 0, "not an answer of the Prometheus HTTP API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePromScalar([]byte(tt.body))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("= %g, %v; want %g", got, err, tt.want)
			}
		})
	}
}

// fakePrometheus answers the four footprint queries with the given values, and records the
// evaluation time it was asked for.
func fakePrometheus(t *testing.T, values map[string]string) (url string, times *[]string) {
	t.Helper()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query().Get("query")
		asked = append(asked, r.URL.Query().Get("time"))
		for prefix, v := range values {
			if strings.HasPrefix(q, prefix) {
				_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"` + v + `"]}]}}`))
				return
			}
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &asked
}

func writeYAML(t *testing.T, v any) string {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func finishedSuite(t *testing.T) string {
	t.Helper()
	s := &vmbenchv1.BenchmarkSuite{TypeMeta: metav1.TypeMeta{APIVersion: "vmbench.io/v1alpha1", Kind: "BenchmarkSuite"}}
	s.Name, s.Namespace = "quick", "default"
	s.Status.Phase = vmbenchv1.SuiteComplete
	s.Status.Runs = []vmbenchv1.RunStatus{
		{Name: "quick-container-1", StartTime: at(0), CompletionTime: at(2)},
		{Name: "quick-vm-1", StartTime: at(2), CompletionTime: at(10)},
	}
	return writeYAML(t, s)
}

func TestFootprintCommand(t *testing.T) {
	url, times := fakePrometheus(t, map[string]string{
		"max(max_over_time(process_resident_memory_bytes": "45088768",
		"sum(increase(process_cpu_seconds_total":          "30",
		"max(max_over_time(rate(":                         "0.21",
		"count(":                                          "1",
	})
	var stdout, stderr bytes.Buffer
	code := Footprint(t.Context(), "vmbench", []string{"-f", finishedSuite(t), "--prometheus-url", url}, nil, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// 45088768 bytes = 43.0 MiB; 30 CPU-seconds in 10 minutes = 0.050 cores.
	want := "Manager footprint while suite default/quick ran, 2026-11-24 10:00:00 to 10:10:00 UTC (10m0s), Prometheus job \"vmbench\":\n" +
		"  memory  peak RSS 43.0 MiB\n" +
		"  CPU     0.050 cores on average (30.0 CPU-seconds), 0.210 cores in the busiest minute\n"
	if stdout.String() != want {
		t.Errorf("output\n%s\nwant\n%s", stdout.String(), want)
	}
	// Every query is evaluated at the last run's completion.
	end := promTime(t0.Add(10 * time.Minute))
	for _, got := range *times {
		if got != end {
			t.Errorf("evaluated at %s, want %s", got, end)
		}
	}
	if len(*times) != 4 {
		t.Errorf("%d queries, want 4", len(*times))
	}
}

func TestFootprintCommandJSON(t *testing.T) {
	url, _ := fakePrometheus(t, map[string]string{
		"max(max_over_time(process_resident_memory_bytes": "45088768",
		"sum(increase(process_cpu_seconds_total":          "30.25",
		"max(max_over_time(rate(":                         "0.21",
		"count(":                                          "2",
	})
	var stdout, stderr bytes.Buffer
	code := Footprint(t.Context(), "vmbench", []string{"-f", finishedSuite(t), "--prometheus-url", url, "-o", "json"}, nil, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got FootprintJSON
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	// 30.25 CPU-seconds in 600 s: 0.050416... cores, unrounded.
	want := FootprintJSON{Suite: "default/quick", Job: "vmbench", Start: t0, End: t0.Add(10 * time.Minute),
		PeakRSSBytes: 45088768, CPUSeconds: 30.25, AverageCores: 30.25 / 600, PeakCores: 0.21, Processes: 2}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if !strings.Contains(stdout.String(), `"peakRSSBytes": 45088768,`) {
		t.Errorf("JSON field names: %s", stdout.String())
	}
}

func TestFootprintCommandFailures(t *testing.T) {
	restarted, _ := fakePrometheus(t, map[string]string{"max(max_over_time(process_resident_memory_bytes": "1048576",
		"sum(increase(process_cpu_seconds_total": "6", "max(max_over_time(rate(": "0.2", "count(": "2"})
	empty, _ := fakePrometheus(t, nil)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"wrong job", []string{"-f", finishedSuite(t), "--prometheus-url", empty, "--job", "vmbench-metrics"}, ExitError, "",
			`prometheus has no max(max_over_time(process_resident_memory_bytes{job="vmbench-metrics"}[600s])) between 2026-11-24T10:00:00Z and 2026-11-24T10:10:00Z: is the manager scraped under another job (--job, now "vmbench-metrics")`},
		{"restart", []string{"-f", finishedSuite(t), "--prometheus-url", restarted}, ExitOK,
			"2 manager processes in the window (a restart or a second replica)", ""},
		{"no suite", []string{}, ExitUsage, "", "name a suite, or read one from a file with -f"},
		{"both prometheus flags", []string{"s", "--prometheus", "a/b:1", "--prometheus-url", "http://x"}, ExitUsage, "",
			"--prometheus and --prometheus-url are alternatives"},
		{"bad service", []string{"s", "--prometheus", "prometheus"}, ExitUsage, "", "--prometheus wants NAMESPACE/SERVICE:PORT"},
		{"bad job", []string{"s", "--job", `a"b`}, ExitUsage, "", "--job wants the scrape job's name"},
		{"unreachable", []string{"-f", finishedSuite(t), "--prometheus-url", "http://127.0.0.1:1"}, ExitError, "", "prometheus at http://127.0.0.1:1"},
		{"bad output", []string{"s", "-o", "yaml"}, ExitUsage, "", "-o yaml: use text or json"},
		{"help", []string{"-h"}, ExitOK, "process_resident_memory_bytes", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Footprint(t.Context(), "vmbench", tt.args, nil, &stdout, &stderr)
			if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
					code, stdout.String(), stderr.String(), tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestWriteFootprintProcesses(t *testing.T) {
	var out bytes.Buffer
	writeFootprint(&out, "bench/s", "vmbench", t0, t0.Add(time.Minute), footprint{PeakRSSBytes: 1 << 20, CPUSeconds: 6, PeakCores: 0.2, Processes: 2})
	if !strings.Contains(out.String(), "0.100 cores on average") || !strings.Contains(out.String(), "2 manager processes in the window") {
		t.Errorf("output %q", out.String())
	}
}

func TestHTTPPromQueryPassesTheQuery(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query().Get("query") + " @ " + r.URL.Query().Get("time")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	if _, err := httpPromQuery(srv.URL+"/")(context.Background(), `up{job="a b"}`, t0); err != nil {
		t.Fatal(err)
	}
	if want := `up{job="a b"} @ 1795514400.000`; got != want {
		t.Errorf("Prometheus got %q, want %q", got, want)
	}
}
