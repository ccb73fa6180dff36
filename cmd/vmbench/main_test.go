package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmbench/vmbench/internal/results"
)

// fixtures are the real tool outputs kept with the parsers.
const fixtures = "../../internal/results/testdata"

type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(stdin string, args ...string) cliResult {
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(stdin), &stdout, &stderr)
	return cliResult{code, stdout.String(), stderr.String()}
}

func TestParseGoodFixture(t *testing.T) {
	r := runCLI("", "parse", "sysbench-cpu", filepath.Join(fixtures, "sysbench-cpu.txt"))
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var got []results.Metric
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not a JSON metric array: %v\n%s", err, r.stdout)
	}
	want := []results.Metric{
		{Name: "events_per_second", Value: 218.59, Unit: "events/s", Direction: results.HigherIsBetter},
		{Name: "latency_min_ms", Value: 1.20, Unit: "ms", Direction: results.LowerIsBetter},
		{Name: "latency_avg_ms", Value: 9.10, Unit: "ms", Direction: results.LowerIsBetter},
		{Name: "latency_max_ms", Value: 121.39, Unit: "ms", Direction: results.LowerIsBetter},
		{Name: "latency_p95_ms", Value: 33.12, Unit: "ms", Direction: results.LowerIsBetter},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics mismatch (-want +got):\n%s", diff)
	}
	wantStart := "[\n  {\n    \"name\": \"events_per_second\",\n    \"value\": 218.59,\n    \"unit\": \"events/s\",\n    \"direction\": \"HigherIsBetter\"\n  },"
	if !strings.HasPrefix(r.stdout, wantStart) || !strings.HasSuffix(r.stdout, "]\n") {
		t.Errorf("stdout is not indented JSON ending in a newline:\n%s", r.stdout)
	}
}

func TestParseStdin(t *testing.T) {
	ping, err := os.ReadFile(filepath.Join(fixtures, "ping-c10-loopback.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := runCLI(string(ping), "parse", "ping", "-")
	if r.code != 0 || !strings.Contains(r.stdout, `"name": "rtt_avg_ms"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestParseFailures(t *testing.T) {
	garbage := filepath.Join(t.TempDir(), "garbage.json")
	if err := os.WriteFile(garbage, []byte("\x00\x01 this is not fio output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"garbage file", "", []string{"parse", "fio", garbage}, 1,
			"vmbench: fio: output is not JSON; run fio with --output-format=json\n"},
		{"iperf3 error with exit status 0", "", []string{"parse", "iperf3", filepath.Join(fixtures, "iperf3-error-no-server.json")}, 1,
			"vmbench: iperf3 reported an error: unable to connect to server: Connection refused\n"},
		{"empty stdin", "", []string{"parse", "ping", "-"}, 1,
			"vmbench: ping: empty output\n"},
		{"missing file", "", []string{"parse", "ping", filepath.Join(t.TempDir(), "absent.txt")}, 1,
			"vmbench: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(tt.stdin, tt.args...)
			if r.code != tt.wantCode {
				t.Errorf("exit %d, want %d", r.code, tt.wantCode)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			if !strings.HasPrefix(r.stderr, tt.wantStderr) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q, want one line starting with %q", r.stderr, tt.wantStderr)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown tool", []string{"parse", "nmap", "out.txt"}, []string{
			`vmbench: unknown tool "nmap"; valid tools: hpcc, sysbench-cpu, sysbench-memory, stress-ng, iozone, iperf3, fio, ping, netperf, netcat, probe`,
			"usage: vmbench parse <tool> <file|->",
		}},
		{"missing file argument", []string{"parse", "ping"}, []string{"usage: vmbench parse <tool> <file|->"}},
		{"missing arguments", []string{"parse"}, []string{"usage: vmbench parse <tool> <file|->"}},
		{"too many arguments", []string{"parse", "ping", "a", "b"}, []string{"usage: vmbench parse <tool> <file|->"}},
		{"unknown flag", []string{"parse", "-x", "ping", "a"}, []string{"usage: vmbench parse <tool> <file|->"}},
		{"no command", nil, []string{"usage: vmbench <command>"}},
		{"unknown command", []string{"report2"}, []string{`vmbench: unknown command "report2"`, "usage: vmbench <command>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI("", tt.args...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2", r.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not contain %q", r.stderr, w)
				}
			}
		})
	}
}

func TestHelp(t *testing.T) {
	r := runCLI("", "help")
	if r.code != 0 || !strings.Contains(r.stdout, "vmbench parse <tool> <file|->") {
		t.Errorf("exit %d, stdout %q", r.code, r.stdout)
	}
}
