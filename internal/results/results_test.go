package results

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// readFixture returns a file from testdata/, copied from real runs of the
// tools (see the matching .cmd file for the command line).
func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// approx compares computed values (weighted means, sums) without demanding
// bit-identical floating-point results.
var approx = cmpopts.EquateApprox(1e-9, 0)

func m(name string, value float64, unit string, dir Direction) Metric {
	return Metric{Name: name, Value: value, Unit: unit, Direction: dir}
}

// checkMetrics asserts the invariants every successful parse must satisfy.
func checkMetrics(t testing.TB, ms []Metric) {
	t.Helper()
	if len(ms) == 0 {
		t.Fatal("parser returned no metrics and no error")
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if m.Name == "" || m.Unit == "" {
			t.Errorf("metric %+v has an empty name or unit", m)
		}
		if m.Direction != HigherIsBetter && m.Direction != LowerIsBetter {
			t.Errorf("metric %q has direction %q", m.Name, m.Direction)
		}
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			t.Errorf("metric %q has non-finite value %v", m.Name, m.Value)
		}
		if seen[m.Name] {
			t.Errorf("metric %q appears twice", m.Name)
		}
		seen[m.Name] = true
	}
}

// checkParseError asserts that parsing fails with an error mentioning want.
func checkParseError(t *testing.T, parse func([]byte) ([]Metric, error), input []byte, want string) {
	t.Helper()
	ms, err := parse(input)
	if err == nil {
		t.Fatalf("want error containing %q, got metrics %+v", want, ms)
	}
	if ms != nil {
		t.Errorf("want nil metrics with the error, got %+v", ms)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
	if strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("error %q is not one line", err)
	}
}

func TestTools(t *testing.T) {
	want := []Tool{HPCC, SysbenchCPU, SysbenchMemory, StressNG, Iozone, Iperf3, Fio, Ping, Netperf, Netcat, Probe}
	if diff := cmp.Diff(want, Tools()); diff != "" {
		t.Errorf("Tools() mismatch (-want +got):\n%s", diff)
	}
}

func TestParseTool(t *testing.T) {
	for _, tool := range Tools() {
		got, err := ParseTool(string(tool))
		if err != nil || got != tool {
			t.Errorf("ParseTool(%q) = %q, %v", tool, got, err)
		}
	}
	if got, err := ParseTool(" Sysbench-CPU "); err != nil || got != SysbenchCPU {
		t.Errorf("ParseTool ignores case and blanks: got %q, %v", got, err)
	}
	_, err := ParseTool("sysbench")
	if err == nil {
		t.Fatal("ParseTool(sysbench) succeeded")
	}
	for _, tool := range Tools() {
		if !strings.Contains(err.Error(), string(tool)) {
			t.Errorf("error %q does not list %q", err, tool)
		}
	}
}

func TestParseDispatches(t *testing.T) {
	tests := []struct {
		tool    Tool
		fixture string
	}{
		{HPCC, "hpcc-np2.txt"},
		{SysbenchCPU, "sysbench-cpu.txt"},
		{SysbenchMemory, "sysbench-memory-1K-t1.txt"},
		{StressNG, "stress-ng-vm-metrics-yaml.yaml"},
		{Iozone, "iozone-i0i1i2-r64k-s256M-R.txt"},
		{Iperf3, "iperf3-tcp-5s.json"},
		{Fio, "fio-randread-4k-qd16.json"},
		{Ping, "ping-c10-loopback.txt"},
		{Netperf, "netperf-tcp-rr-I95,5-i10,3.txt"},
		{Netcat, "netcat-dd-1G.txt"},
		{Probe, "probe-2s.csv"},
	}
	for _, tt := range tests {
		t.Run(string(tt.tool), func(t *testing.T) {
			ms, err := Parse(tt.tool, readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			h, ok := HeadlineOf(tt.tool, ms)
			if !ok || h.Name != Headline(tt.tool) {
				t.Errorf("HeadlineOf = %+v, %v; want metric %q", h, ok, Headline(tt.tool))
			}
		})
	}
	if _, err := Parse("nmap", []byte("x")); err == nil || !strings.Contains(err.Error(), "valid tools") {
		t.Errorf("Parse(unknown tool) error = %v", err)
	}
}

func TestHeadline(t *testing.T) {
	want := map[Tool]string{
		HPCC:           "HPL_Tflops",
		SysbenchCPU:    "events_per_second",
		SysbenchMemory: "mib_per_second",
		StressNG:       "bogo_ops_per_second_real",
		Iozone:         "write",
		Iperf3:         "bits_per_second",
		Fio:            "read_iops",
		Ping:           "rtt_avg_ms",
		Netperf:        "transactions_per_second",
		Netcat:         "bytes_per_second",
		Probe:          "work_per_second",
	}
	for _, tool := range Tools() {
		if got := Headline(tool); got != want[tool] {
			t.Errorf("Headline(%s) = %q, want %q", tool, got, want[tool])
		}
	}
	if got := Headline("nmap"); got != "" {
		t.Errorf("Headline(unknown) = %q", got)
	}
}

func TestHeadlineOfFallbacks(t *testing.T) {
	tests := []struct {
		name string
		tool Tool
		ms   []Metric
		want string
		ok   bool
	}{
		{"fio write-only job", Fio, []Metric{
			m("write_bw_kib_per_second", 1, unitKiBPerS, HigherIsBetter),
			m("write_iops", 2, unitIOPS, HigherIsBetter),
		}, "write_iops", true},
		{"fio several jobs", Fio, []Metric{
			m("seq_write_iops", 1, unitIOPS, HigherIsBetter),
			m("rand_read_iops", 2, unitIOPS, HigherIsBetter),
		}, "rand_read_iops", true},
		{"stress-ng several stressors", StressNG, []Metric{
			m("cpu_max_rss_kb", 1, unitKiB, LowerIsBetter),
			m("cpu_bogo_ops_per_second_real", 2, unitBogoOpsS, HigherIsBetter),
			m("vm_bogo_ops_per_second_real", 3, unitBogoOpsS, HigherIsBetter),
		}, "cpu_bogo_ops_per_second_real", true},
		{"iozone auto mode", Iozone, []Metric{
			m("write_64k_4k", 1, unitKiBPerS, HigherIsBetter),
			m("write_65536k_64k", 2, unitKiBPerS, HigherIsBetter),
			m("write_65536k_16384k", 3, unitKiBPerS, HigherIsBetter),
			m("write_8192k_8192k", 4, unitKiBPerS, HigherIsBetter),
			m("read_131072k_64k", 5, unitKiBPerS, HigherIsBetter),
		}, "write_65536k_16384k", true},
		{"netperf TCP_STREAM", Netperf, []Metric{
			m("bits_per_second", 1, unitBitPerS, HigherIsBetter),
			m("confidence_width_percent", 2, unitPercent, LowerIsBetter),
		}, "bits_per_second", true},
		{"netperf TCP_RR prefixed by the runner", Netperf, []Metric{
			m("tcp_rr_latency_p99_us", 1, "us", LowerIsBetter),
			m("tcp_rr_transactions_per_second", 2, "trans/s", HigherIsBetter),
		}, "tcp_rr_transactions_per_second", true},
		{"netperf TCP_STREAM prefixed by the runner", Netperf, []Metric{
			m("tcp_stream_confidence_achieved", 1, "bool", HigherIsBetter),
			m("tcp_stream_bits_per_second", 2, unitBitPerS, HigherIsBetter),
		}, "tcp_stream_bits_per_second", true},
		{"netperf without throughput", Netperf, []Metric{
			m("latency_p99_us", 1, "us", LowerIsBetter),
		}, "", false},
		{"ping without rtt", Ping, []Metric{
			m("packet_loss_percent", 100, unitPercent, LowerIsBetter),
		}, "", false},
		{"unknown tool", "nmap", []Metric{m("x", 1, "s", LowerIsBetter)}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := HeadlineOf(tt.tool, tt.ms)
			if ok != tt.ok || got.Name != tt.want {
				t.Errorf("HeadlineOf = %q, %v; want %q, %v", got.Name, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestEmptyAndGarbage feeds every parser inputs that are not its tool's
// output; each must fail with an error rather than return nothing.
func TestEmptyAndGarbage(t *testing.T) {
	inputs := map[string][]byte{
		"empty":    nil,
		"blank":    []byte(" \n\t\n"),
		"garbage":  []byte("\x00\xff<html><body>502 Bad Gateway</body></html>\n"),
		"json":     []byte(`{"hello": "world"}`),
		"yaml":     []byte("---\nfoo: [1, 2]\n...\n"),
		"numbers":  []byte("1 2 3\n4 5 6\n"),
		"trunc":    []byte(`{"start": {"test_start": {"protocol": "TCP"`),
		"only-nan": []byte("NaN Inf -Inf\n"),
	}
	for _, tool := range Tools() {
		for name, input := range inputs {
			t.Run(string(tool)+"/"+name, func(t *testing.T) {
				ms, err := Parse(tool, input)
				if err == nil {
					t.Fatalf("want an error, got %+v", ms)
				}
				if !strings.HasPrefix(err.Error(), strings.SplitN(string(tool), "-", 2)[0]) {
					t.Errorf("error %q does not name the tool", err)
				}
			})
		}
	}
}
