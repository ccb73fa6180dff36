package results

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// iperf3TwoStreams is the shape of `iperf3 -c HOST -P 2 -J`, cut down to the
// keys the parser reads.
const iperf3TwoStreams = `{
	"start": {"test_start": {"protocol": "TCP", "num_streams": 2, "reverse": 0}},
	"intervals": [],
	"end": {
		"streams": [
			{"sender": {"bits_per_second": 1.5e10, "retransmits": 3, "max_rtt": 900, "min_rtt": 20, "mean_rtt": 300, "sender": true},
			 "receiver": {"bits_per_second": 1.4e10, "sender": true}},
			{"sender": {"bits_per_second": 1.6e10, "retransmits": 5, "max_rtt": 700, "min_rtt": 25, "mean_rtt": 500, "sender": true},
			 "receiver": {"bits_per_second": 1.5e10, "sender": true}}
		],
		"sum_sent": {"bits_per_second": 3.1e10, "retransmits": 8, "sender": true},
		"sum_received": {"bits_per_second": 2.9e10, "sender": true},
		"cpu_utilization_percent": {"host_total": 40.5, "remote_total": 60.25}
	}
}`

func TestParseIperf3(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  []Metric
	}{
		{"TCP", readFixture(t, "iperf3-tcp-5s.json"), []Metric{
			m("bits_per_second", 31140433002.203979, "bit/s", HigherIsBetter),
			m("sender_bits_per_second", 31147911331.973179, "bit/s", HigherIsBetter),
			m("retransmits", 26, "count", LowerIsBetter),
			m("rtt_mean_us", 304, "us", LowerIsBetter),
			m("cpu_host_percent", 25.689286670314353, "%", LowerIsBetter),
			m("cpu_remote_percent", 58.792028065591516, "%", LowerIsBetter),
		}},
		// -R: RTT fields are 0 and must not be reported.
		{"TCP reverse", readFixture(t, "iperf3-tcp-5s-reverse.json"), []Metric{
			m("bits_per_second", 20999411842.681572, "bit/s", HigherIsBetter),
			m("sender_bits_per_second", 20999848302.602913, "bit/s", HigherIsBetter),
			m("retransmits", 12, "count", LowerIsBetter),
			m("cpu_host_percent", 33.12791748815092, "%", LowerIsBetter),
			m("cpu_remote_percent", 33.666209469402546, "%", LowerIsBetter),
		}},
		{"TCP with server output", readFixture(t, "iperf3-tcp-5s-get-server-output.json"), []Metric{
			m("bits_per_second", 11460466504.7755, "bit/s", HigherIsBetter),
			m("sender_bits_per_second", 11470899716.327715, "bit/s", HigherIsBetter),
			m("retransmits", 4, "count", LowerIsBetter),
			m("rtt_mean_us", 340, "us", LowerIsBetter),
			m("cpu_host_percent", 19.422815748303563, "%", LowerIsBetter),
			m("cpu_remote_percent", 18.52419718273267, "%", LowerIsBetter),
		}},
		// UDP goodput comes from sum_received (921 Mbit/s), not end.sum (999.9).
		{"UDP", readFixture(t, "iperf3-udp-1G-5s.json"), []Metric{
			m("bits_per_second", 921298872.6796818, "bit/s", HigherIsBetter),
			m("sender_bits_per_second", 999901875.5821133, "bit/s", HigherIsBetter),
			m("jitter_ms", 0.01936077709527848, "ms", LowerIsBetter),
			m("lost_percent", 7.859689597315437, "%", LowerIsBetter),
			m("cpu_host_percent", 4.831833992731467, "%", LowerIsBetter),
			m("cpu_remote_percent", 2.245669724077092, "%", LowerIsBetter),
		}},
		{"-P 2 uses the sums and averages the stream RTTs", []byte(iperf3TwoStreams), []Metric{
			m("bits_per_second", 2.9e10, "bit/s", HigherIsBetter),
			m("sender_bits_per_second", 3.1e10, "bit/s", HigherIsBetter),
			m("retransmits", 8, "count", LowerIsBetter),
			m("rtt_mean_us", 400, "us", LowerIsBetter),
			m("cpu_host_percent", 40.5, "%", LowerIsBetter),
			m("cpu_remote_percent", 60.25, "%", LowerIsBetter),
		}},
		{"warning before the JSON and text after it",
			[]byte("iperf3: warning: something odd\n" + iperf3TwoStreams + "\nconnection closed\n"), []Metric{
				m("bits_per_second", 2.9e10, "bit/s", HigherIsBetter),
				m("sender_bits_per_second", 3.1e10, "bit/s", HigherIsBetter),
				m("retransmits", 8, "count", LowerIsBetter),
				m("rtt_mean_us", 400, "us", LowerIsBetter),
				m("cpu_host_percent", 40.5, "%", LowerIsBetter),
				m("cpu_remote_percent", 60.25, "%", LowerIsBetter),
			}},
		{"older UDP report with end.sum only", []byte(`{"start": {"test_start": {"protocol": "UDP", "reverse": false}},
			"end": {"sum": {"bits_per_second": 1e9, "jitter_ms": 0.5, "lost_percent": 1.25}}}`), []Metric{
			m("bits_per_second", 1e9, "bit/s", HigherIsBetter),
			m("jitter_ms", 0.5, "ms", LowerIsBetter),
			m("lost_percent", 1.25, "%", LowerIsBetter),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseIperf3(tt.input)
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

func TestParseIperf3Errors(t *testing.T) {
	tcp := string(readFixture(t, "iperf3-tcp-5s.json"))
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"connection refused with exit status 0", readFixture(t, "iperf3-error-no-server.json"),
			"iperf3 reported an error: unable to connect to server: Connection refused"},
		{"error next to partial results", []byte(`{"end": {"sum_received": {"bits_per_second": 1}}, "error": "interrupt - the server has terminated"}`),
			"iperf3 reported an error: interrupt - the server has terminated"},
		{"truncated JSON", []byte(tcp[:len(tcp)/2]), "iperf3: invalid JSON"},
		{"text output", readFixture(t, "iperf3-tcp-5s-text.txt"), "run the client with -J"},
		{"server log", readFixture(t, "iperf3-server-5201.txt"), "run the client with -J"},
		{"no end summary", []byte(`{"start": {}, "intervals": [], "end": {}}`), "the test did not finish"},
		{"multi-line error", []byte(`{"error": "first line\nsecond line"}`), "iperf3 reported an error: first line"},
		{"empty", []byte("  "), "iperf3: empty output"},
		{"not an object", []byte(strings.Repeat("[", 10)), "run the client with -J"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParseIperf3, tt.input, tt.want)
		})
	}
}

func TestIperf3Intervals(t *testing.T) {
	columns := []string{"start_s", "end_s", "bits_per_s"}
	tests := []struct {
		fixture string
		rows    [][]float64
	}{
		// One stream, iperf3's default interval of one second; the last one ran 10 ms long.
		{"iperf3-tcp-5s.json", [][]float64{
			{0, 1, 28886912026}, {1, 2, 36425237544}, {2, 3, 38640488534}, {3, 4.01, 37547586905}, {4.01, 5.008, 14134839929}}},
		// Two streams every 2 seconds: the sum over the streams.
		{"iperf3-tcp-6s-P2-i2.json", [][]float64{
			{0, 2.001, 26844274295}, {2.001, 4.001, 26873160850}, {4.001, 6.001, 14639067372}}},
		// -R: the client receives, and measures what it received.
		{"iperf3-tcp-5s-reverse.json", [][]float64{
			{0, 1.002, 5484951176}, {1.002, 2, 7164133805}, {2, 3, 31368632231}, {3, 4, 30907368983}, {4, 5, 30078278641}}},
		{"iperf3-udp-1G-5s.json", [][]float64{
			{0, 1, 999190967}, {1, 2, 999846239}, {2, 3, 1000070419}, {3, 4, 1000082340}, {4, 5, 1000319443}}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			got, err := Iperf3Intervals(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Table{Columns: columns, Rows: tt.rows}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestIperf3IntervalsErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"no server", string(readFixture(t, "iperf3-error-no-server.json")), "iperf3 reported an error: unable to connect to server"},
		{"text", "iperf3: error - unable to connect\n", "output is not JSON"},
		{"broken JSON", `{"intervals": [`, "iperf3: invalid JSON"},
		{"no intervals", iperf3TwoStreams, "iperf3: report has no intervals"},
		{"only warm-up", `{"intervals": [{"sum": {"start": 0, "end": 1, "bits_per_second": 5, "omitted": true}}]}`, "report has no intervals"},
		{"interval without bandwidth", `{"intervals": [{"sum": {"start": 0, "end": 1}}]}`, "interval 1 lacks its start, end or bits_per_second"},
		{"time running backwards", `{"intervals": [{"sum": {"start": 2, "end": 1, "bits_per_second": 5}}]}`, "interval 1 is not a time span"},
		{"negative bandwidth", `{"intervals": [{"sum": {"start": 0, "end": 1, "bits_per_second": -5}}]}`, "interval 1 is not a time span"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Iperf3Intervals([]byte(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Iperf3Intervals() = %+v, %v, want an error containing %q", got, err, tt.want)
			}
		})
	}
	// Warm-up intervals are left out, the others kept.
	got, err := Iperf3Intervals([]byte(`{"intervals": [{"sum": {"start": 0, "end": 1, "bits_per_second": 5, "omitted": true}},` +
		`{"sum": {"start": 0, "end": 1, "bits_per_second": 7}}]}`))
	if err != nil || len(got.Rows) != 1 || got.Rows[0][2] != 7 {
		t.Errorf("Iperf3Intervals() = %+v, %v", got, err)
	}
}
