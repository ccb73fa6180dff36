package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSysbenchCPU(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  []Metric
	}{
		{"default percentile", readFixture(t, "sysbench-cpu.txt"), []Metric{
			m("events_per_second", 218.59, "events/s", HigherIsBetter),
			m("latency_min_ms", 1.20, "ms", LowerIsBetter),
			m("latency_avg_ms", 9.10, "ms", LowerIsBetter),
			m("latency_max_ms", 121.39, "ms", LowerIsBetter),
			m("latency_p95_ms", 33.12, "ms", LowerIsBetter),
		}},
		{"interval reports, histogram and --percentile=99", readFixture(t, "sysbench-cpu-interval-histogram.txt"), []Metric{
			m("events_per_second", 126.94, "events/s", HigherIsBetter),
			m("latency_min_ms", 1.18, "ms", LowerIsBetter),
			m("latency_avg_ms", 15.54, "ms", LowerIsBetter),
			m("latency_max_ms", 528.40, "ms", LowerIsBetter),
			m("latency_p99_ms", 118.92, "ms", LowerIsBetter),
		}},
		{"--percentile=50 and CRLF", []byte(strings.ReplaceAll(
			strings.Replace(string(readFixture(t, "sysbench-cpu.txt")), "95th percentile:", "50th percentile:", 1),
			"\n", "\r\n")), []Metric{
			m("events_per_second", 218.59, "events/s", HigherIsBetter),
			m("latency_min_ms", 1.20, "ms", LowerIsBetter),
			m("latency_avg_ms", 9.10, "ms", LowerIsBetter),
			m("latency_max_ms", 121.39, "ms", LowerIsBetter),
			m("latency_p50_ms", 33.12, "ms", LowerIsBetter),
		}},
		{"--percentile=0 disables the percentile", []byte(strings.Replace(string(readFixture(t, "sysbench-cpu.txt")),
			"95th percentile:                       33.12", "percentile stats:               disabled", 1)), []Metric{
			m("events_per_second", 218.59, "events/s", HigherIsBetter),
			m("latency_min_ms", 1.20, "ms", LowerIsBetter),
			m("latency_avg_ms", 9.10, "ms", LowerIsBetter),
			m("latency_max_ms", 121.39, "ms", LowerIsBetter),
		}},
		{"real --percentile=0 output", readFixture(t, "sysbench-cpu-percentile0.txt"), []Metric{
			m("events_per_second", 867.34, "events/s", HigherIsBetter),
			m("latency_min_ms", 0.18, "ms", LowerIsBetter),
			m("latency_avg_ms", 1.11, "ms", LowerIsBetter),
			m("latency_max_ms", 124.22, "ms", LowerIsBetter),
		}},
		{"fractional percentile label", []byte(strings.Replace(string(readFixture(t, "sysbench-cpu.txt")),
			"95th percentile:", "99.9th percentile:", 1)), []Metric{
			m("events_per_second", 218.59, "events/s", HigherIsBetter),
			m("latency_min_ms", 1.20, "ms", LowerIsBetter),
			m("latency_avg_ms", 9.10, "ms", LowerIsBetter),
			m("latency_max_ms", 121.39, "ms", LowerIsBetter),
			m("latency_p99_9_ms", 33.12, "ms", LowerIsBetter),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseSysbenchCPU(tt.input)
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

func TestParseSysbenchMemory(t *testing.T) {
	tests := []struct {
		fixture string
		want    []Metric
	}{
		{"sysbench-memory-1K-t1.txt", []Metric{
			m("operations_per_second", 615038.81, "ops/s", HigherIsBetter),
			m("mib_per_second", 600.62, "MiB/s", HigherIsBetter),
		}},
		{"sysbench-memory-1K-t2.txt", []Metric{
			m("operations_per_second", 844534.71, "ops/s", HigherIsBetter),
			m("mib_per_second", 824.74, "MiB/s", HigherIsBetter),
		}},
		// "Total operations: 2048 ( 1776.64 per second)": padded rate.
		{"sysbench-memory-1M-t1.txt", []Metric{
			m("operations_per_second", 1776.64, "ops/s", HigherIsBetter),
			m("mib_per_second", 1776.64, "MiB/s", HigherIsBetter),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			ms, err := ParseSysbenchMemory(readFixture(t, tt.fixture))
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

func TestParseSysbenchErrors(t *testing.T) {
	tests := []struct {
		name  string
		parse func([]byte) ([]Metric, error)
		input []byte
		want  string
	}{
		{"memory text to the cpu parser", ParseSysbenchCPU, readFixture(t, "sysbench-memory-1K-t1.txt"), "output of `sysbench memory`"},
		{"cpu text to the memory parser", ParseSysbenchMemory, readFixture(t, "sysbench-cpu.txt"), "output of `sysbench cpu`"},
		{"Lua JSON hooks are not the cpu test", ParseSysbenchCPU, readFixture(t, "sysbench-lua-json-cpu.json"), "no \"events per second:\" line"},
		{"Lua CSV hooks are not the cpu test", ParseSysbenchCPU, readFixture(t, "sysbench-lua-csv-cpu.txt"), "no \"events per second:\" line"},
		{"cut off before the summary", ParseSysbenchCPU, []byte(strings.SplitAfter(string(readFixture(t, "sysbench-cpu.txt")), "Threads started!")[0]), "no \"events per second:\" line"},
		{"FATAL", ParseSysbenchMemory, []byte("sysbench 1.0.20\n\nFATAL: Invalid value for memory-block-size: 0\n"), "sysbench reported an error: FATAL: Invalid value for memory-block-size: 0"},
		{"empty cpu", ParseSysbenchCPU, nil, "sysbench-cpu: empty output"},
		{"empty memory", ParseSysbenchMemory, []byte("\n"), "sysbench-memory: empty output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, tt.parse, tt.input, tt.want)
		})
	}
}

// TestParseSysbenchRepeatedReport covers a capture that holds the report
// twice (a retried run appended to the same log): the first report wins and
// no metric name appears twice.
func TestParseSysbenchRepeatedReport(t *testing.T) {
	once := readFixture(t, "sysbench-cpu.txt")
	want, err := ParseSysbenchCPU(once)
	if err != nil {
		t.Fatal(err)
	}
	twice := append(append([]byte{}, once...), bytes.ReplaceAll(once, []byte("218.59"), []byte("1.00"))...)
	got, err := ParseSysbenchCPU(twice)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-once +twice):\n%s", diff)
	}
}
