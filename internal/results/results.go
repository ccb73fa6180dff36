// Package results turns the raw output of the benchmark tools that vmbench
// runs (HPCC, sysbench, stress-ng, iozone, iperf3, fio, ping, netperf and
// netcat) into a flat list of named metrics, so that a VM run and a
// container run of the same benchmark can be compared metric by metric.
//
// Every parser is a pure function: it never panics, never returns NaN or
// ±Inf, returns metrics in a deterministic order, and returns an error (never
// an empty list) when the output is garbage, truncated, or reports a failure
// of the tool itself.
//
// A parser never returns half an answer: an output whose figures cannot all
// be read (a line in a spelling the parser does not know, a line missing or
// mangled, a table cut short) is refused with an error that names the line,
// or the line or figure that is missing, rather than returned with the
// figures that could be read. A figure the tool itself says it did not
// measure (HPCC's -1 and nan, netperf's -1, iperf3's retransmits and RTT on
// a platform without TCP_INFO, stress-ng's CPU and RSS columns without
// --metrics) is left out, as each parser's documentation says.
//
// The builds whose real outputs are the fixtures in testdata (each with a
// .cmd file saying how it was made), and so the builds the parsers are known
// to read, are Debian bookworm's (x86_64):
//   - HPCC 1.5.0 with Open MPI 4.1.4 (hpccoutf.txt);
//   - sysbench 1.0.20 (cpu and memory text reports);
//   - stress-ng 0.15.06 (--yaml files and the stderr metrc table);
//   - iozone 3.489 (main table and -R blocks);
//   - iperf 3.12 (-J reports);
//   - fio 3.33 (json and json+);
//   - ping of iputils 20221126, of BusyBox 1.35.0 and of GNU inetutils 2.4;
//   - netperf 2.7.0 (-o CSV and the classic TCP_RR and TCP_STREAM tables);
//   - for netcat, coreutils dd 9.1 with OpenBSD netcat 1.219 or Ncat 7.93.
//     Debian's BusyBox 1.35.0 dd prints its record counts but no byte and
//     time summary, and netcat-traditional 1.10 and BusyBox's nc know no -N:
//     their outputs are refused with that said.
//
// Debian has one build of each of the other tools, and no BSD or macOS
// build: their outputs are read when they print the lines above and refused,
// naming the line, when they do not (BSD dd's "bytes transferred in" summary,
// fio before 3.0 with latencies in microseconds).
package results

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Direction says whether a larger value of a metric is an improvement.
type Direction string

const (
	// HigherIsBetter marks throughputs and rates.
	HigherIsBetter Direction = "HigherIsBetter"
	// LowerIsBetter marks latencies, losses, retransmits, jitter, RSS and CPU usage.
	LowerIsBetter Direction = "LowerIsBetter"
)

// UnitFlag is the unit of a metric that is 1 when a condition held and 0 when it did not, such as
// netperf's confidence_achieved: a 0 is a measurement, not a broken run, and a ratio of flags is
// no speed, so flags stay out of the means.
const UnitFlag = "bool"

// IsFlag says whether a metric of unit is a flag (UnitFlag).
func IsFlag(unit string) bool { return unit == UnitFlag }

// Metric is one figure extracted from a tool's output.
type Metric struct {
	Name      string    `json:"name"`
	Value     float64   `json:"value"`
	Unit      string    `json:"unit"`
	Direction Direction `json:"direction"`
}

// Tool identifies a benchmark whose output this package can parse.
type Tool string

// The tools vmbench runs. sysbench has one Tool per built-in test because the
// cpu and memory tests print different figures.
const (
	HPCC           Tool = "hpcc"
	SysbenchCPU    Tool = "sysbench-cpu"
	SysbenchMemory Tool = "sysbench-memory"
	StressNG       Tool = "stress-ng"
	Iozone         Tool = "iozone"
	Iperf3         Tool = "iperf3"
	Fio            Tool = "fio"
	Ping           Tool = "ping"
	Netperf        Tool = "netperf"
	Netcat         Tool = "netcat"
	// Probe is the migration benchmark's in-guest probe (ProbeColumns).
	Probe Tool = "probe"
)

// Units shared by several parsers.
const (
	unitPercent  = "%"
	unitMs       = "ms"
	unitNs       = "ns"
	unitKiB      = "KiB"
	unitKiBPerS  = "KiB/s"
	unitBitPerS  = "bit/s"
	unitOpsPerS  = "ops/s"
	unitCount    = "count"
	unitIOPS     = "IOPS"
	unitBogoOpsS = "bogo-ops/s"
)

type parser func([]byte) ([]Metric, error)

// toolParsers is ordered as Tools() must return them.
var toolParsers = []struct {
	tool     Tool
	parse    parser
	headline string
}{
	{HPCC, ParseHPCC, "HPL_Tflops"},
	{SysbenchCPU, ParseSysbenchCPU, "events_per_second"},
	{SysbenchMemory, ParseSysbenchMemory, "mib_per_second"},
	{StressNG, ParseStressNG, "bogo_ops_per_second_real"},
	{Iozone, ParseIozone, "write"},
	{Iperf3, ParseIperf3, "bits_per_second"},
	// read_iops is the name for read and mixed jobs; HeadlineOf falls back to
	// write_iops (or trim_iops) for jobs that do not read.
	{Fio, ParseFio, "read_iops"},
	{Ping, ParsePing, "rtt_avg_ms"},
	// HeadlineOf falls back to bits_per_second for a TCP_STREAM test.
	{Netperf, ParseNetperf, "transactions_per_second"},
	{Netcat, ParseNetcat, "bytes_per_second"},
	{Probe, ParseProbe, "work_per_second"},
}

// Tools returns every supported tool in a fixed order.
func Tools() []Tool {
	tools := make([]Tool, len(toolParsers))
	for i, tp := range toolParsers {
		tools[i] = tp.tool
	}
	return tools
}

func toolNames() string {
	names := make([]string, len(toolParsers))
	for i, tp := range toolParsers {
		names[i] = string(tp.tool)
	}
	return strings.Join(names, ", ")
}

// ParseTool maps a tool name such as "sysbench-cpu" to its Tool. Case and
// surrounding blanks are ignored because names often come from YAML specs and
// command lines typed by people.
func ParseTool(name string) (Tool, error) {
	wanted := strings.ToLower(strings.TrimSpace(name))
	for _, tp := range toolParsers {
		if string(tp.tool) == wanted {
			return tp.tool, nil
		}
	}
	return "", fmt.Errorf("unknown tool %q; valid tools: %s", name, toolNames())
}

// Parse parses the output of tool with that tool's parser.
func Parse(tool Tool, output []byte) ([]Metric, error) {
	for _, tp := range toolParsers {
		if tp.tool == tool {
			return tp.parse(output)
		}
	}
	return nil, fmt.Errorf("unknown tool %q; valid tools: %s", tool, toolNames())
}

// Headline returns the name of the metric that best summarises a run of
// tool, or "" for an unknown tool. The name is the one produced for the
// usual single-job run; for runs where that name does not exist (an iozone
// auto-mode table, a write-only fio job, several stress-ng stressors) use
// HeadlineOf.
func Headline(tool Tool) string {
	for _, tp := range toolParsers {
		if tp.tool == tool {
			return tp.headline
		}
	}
	return ""
}

// HeadlineOf picks the headline metric out of the metrics parsed from one run
// of tool. It returns the metric named Headline(tool) when present, and
// otherwise the closest equivalent:
//   - fio: the first "<dir>_iops" in read, write, trim order (so a write-only
//     job gets write_iops), also with the "<job>_" prefix of multi-job runs;
//   - stress-ng: the first stressor's bogo_ops_per_second_real;
//   - netperf: bits_per_second of a TCP_STREAM test;
//   - iozone: the write figure of the largest file size, and of its largest
//     record size, because that is the least dominated by caches and per-call
//     overhead.
func HeadlineOf(tool Tool, ms []Metric) (Metric, bool) {
	want := Headline(tool)
	if want == "" {
		return Metric{}, false
	}
	for _, m := range ms {
		if m.Name == want {
			return m, true
		}
	}
	switch tool {
	case Fio:
		for _, dir := range fioDirections {
			for _, m := range ms {
				if m.Name == dir+"_iops" || strings.HasSuffix(m.Name, "_"+dir+"_iops") {
					return m, true
				}
			}
		}
	case StressNG:
		for _, m := range ms {
			if strings.HasSuffix(m.Name, "_"+want) {
				return m, true
			}
		}
	case Iozone:
		return largestIozoneWrite(ms)
	case Netperf:
		// The runner prefixes the figures of each test (tcp_rr_, tcp_stream_) when it runs two.
		for _, name := range []string{"transactions_per_second", "bits_per_second"} {
			for _, m := range ms {
				if m.Name == name || strings.HasSuffix(m.Name, "_"+name) {
					return m, true
				}
			}
		}
	}
	return Metric{}, false
}

// metricList accumulates metrics. It silently drops non-finite values,
// which tools print as "nan"/"inf" when a timer reads zero and which would
// poison every comparison downstream, and keeps only the first metric of a
// name, so that a repeated line in a damaged output cannot yield two values
// for one name.
type metricList struct {
	metrics []Metric
	names   map[string]bool
}

func (l *metricList) add(name string, value float64, unit string, dir Direction) {
	if math.IsNaN(value) || math.IsInf(value, 0) || l.names[name] {
		return
	}
	if l.names == nil {
		l.names = map[string]bool{}
	}
	l.names[name] = true
	l.metrics = append(l.metrics, Metric{Name: name, Value: value, Unit: unit, Direction: dir})
}

func (l *metricList) empty() bool { return len(l.metrics) == 0 }

// parseNumber is strconv.ParseFloat restricted to finite values, because
// ParseFloat accepts "NaN", "Inf" and overflows to ±Inf.
func parseNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// lines splits output into lines without their line terminators, tolerating
// CRLF from tools run under Windows-style terminals or captured via kubectl.
func lines(output []byte) []string {
	text := strings.ReplaceAll(string(output), "\r\n", "\n")
	return strings.Split(text, "\n")
}

func isBlank(output []byte) bool {
	return len(bytes.TrimSpace(output)) == 0
}

var nonAlnum = regexp.MustCompile(`[^a-z0-9]+`)

// snakeCase turns a stressor or job name such as "af-alg" or "Rand Read 4k"
// into a metric-name prefix such as "af_alg" or "rand_read_4k".
func snakeCase(s string) string {
	s = nonAlnum.ReplaceAllString(strings.ToLower(s), "_")
	s = strings.Trim(s, "_")
	if s == "" {
		return "unnamed"
	}
	return s
}

// uniquePrefixes maps each name to a snake_case prefix and disambiguates
// names that collapse to the same prefix (e.g. "a-b" and "a_b") with a
// numeric suffix, so metric names never collide.
func uniquePrefixes(names []string) []string {
	prefixes := make([]string, len(names))
	used := map[string]bool{}
	for i, n := range names {
		base := snakeCase(n)
		p := base
		for k := 2; used[p]; k++ {
			p = fmt.Sprintf("%s_%d", base, k)
		}
		used[p] = true
		prefixes[i] = p
	}
	return prefixes
}

// firstLine shortens a message to its first line so that errors built from
// tool output stay one line long.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	const maxRunes = 200
	if utf8.RuneCountInString(s) > maxRunes {
		s = string([]rune(s)[:maxRunes]) + "..."
	}
	return s
}
