package results

import (
	"errors"
	"regexp"
	"strings"
)

const unitEventsPerS = "events/s"

// A sysbench number: sysbench 1.0 prints fixed-point values, but exponents
// are accepted so that a very large rate does not make the line unreadable.
const sysbenchNumber = `([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)`

// The patterns are matched against single lines, which keeps matching cheap
// on long outputs such as --histogram reports.
var (
	sysbenchEventsPerSecond = regexp.MustCompile(`^\s*events per second:\s*` + sysbenchNumber + `\s*$`)
	sysbenchLatencyLine     = regexp.MustCompile(`^\s*(min|avg|max|([0-9]+(?:\.[0-9]+)?)(?:st|nd|rd|th) percentile):\s*` + sysbenchNumber + `\s*$`)
	// Total operations: 2048 ( 1776.64 per second): the rate is padded to a
	// fixed width, so blanks may follow the parenthesis.
	sysbenchTotalOperations = regexp.MustCompile(`^\s*Total operations:\s*[0-9]+\s*\(\s*` + sysbenchNumber + `\s+per second\)`)
	sysbenchTransferred     = regexp.MustCompile(`^\s*` + sysbenchNumber + `\s+MiB transferred\s*\(\s*` + sysbenchNumber + `\s+MiB/sec\)`)
)

// sysbenchFind returns the submatches of re on the first line containing
// marker, or nil.
func sysbenchFind(ls []string, marker string, re *regexp.Regexp) []string {
	for _, l := range ls {
		if strings.Contains(l, marker) {
			if match := re.FindStringSubmatch(l); match != nil {
				return match
			}
		}
	}
	return nil
}

// ParseSysbenchCPU parses the text report of `sysbench cpu run`. It returns
// events_per_second and the latency figures of the "Latency (ms):" block:
// latency_min_ms, latency_avg_ms, latency_max_ms and latency_p<N>_ms, where N
// follows --percentile (e.g. latency_p95_ms, latency_p99_ms, latency_p99_9_ms).
// The total time is left out because it echoes --time rather than measuring
// anything; events_per_second already carries the throughput.
func ParseSysbenchCPU(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("sysbench-cpu: empty output")
	}
	ls := lines(output)
	if err := sysbenchFailure(ls); err != nil {
		return nil, err
	}
	match := sysbenchFind(ls, "events per second:", sysbenchEventsPerSecond)
	if match == nil {
		if sysbenchFind(ls, "Total operations:", sysbenchTotalOperations) != nil {
			return nil, errors.New("sysbench-cpu: this is the output of `sysbench memory`, not `sysbench cpu`")
		}
		return nil, errors.New("sysbench-cpu: no \"events per second:\" line; is this the output of `sysbench cpu run`?")
	}
	var ms metricList
	if v, ok := parseNumber(match[1]); ok {
		ms.add("events_per_second", v, unitEventsPerS, HigherIsBetter)
	}
	sysbenchLatencies(&ms, ls)
	if ms.empty() {
		return nil, errors.New("sysbench-cpu: no readable figures in the output")
	}
	return ms.metrics, nil
}

// ParseSysbenchMemory parses the text report of `sysbench memory run` into
// operations_per_second and mib_per_second (MiB = 2^20 bytes).
func ParseSysbenchMemory(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("sysbench-memory: empty output")
	}
	ls := lines(output)
	if err := sysbenchFailure(ls); err != nil {
		return nil, err
	}
	var ms metricList
	if match := sysbenchFind(ls, "Total operations:", sysbenchTotalOperations); match != nil {
		if v, ok := parseNumber(match[1]); ok {
			ms.add("operations_per_second", v, unitOpsPerS, HigherIsBetter)
		}
	}
	if match := sysbenchFind(ls, "MiB transferred", sysbenchTransferred); match != nil {
		if v, ok := parseNumber(match[2]); ok {
			ms.add("mib_per_second", v, "MiB/s", HigherIsBetter)
		}
	}
	if ms.empty() {
		if sysbenchFind(ls, "events per second:", sysbenchEventsPerSecond) != nil {
			return nil, errors.New("sysbench-memory: this is the output of `sysbench cpu`, not `sysbench memory`")
		}
		return nil, errors.New("sysbench-memory: no \"Total operations:\" or \"MiB transferred\" line; is this the output of `sysbench memory run`?")
	}
	return ms.metrics, nil
}

// sysbenchFailure reports sysbench's own FATAL messages (bad options, thread
// creation failures), which mean the figures, if any, are not trustworthy.
func sysbenchFailure(ls []string) error {
	for _, l := range ls {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "FATAL:") {
			return errors.New("sysbench reported an error: " + firstLine(t))
		}
	}
	return nil
}

// sysbenchLatencies reads the indented lines following "Latency (ms):" up to
// the first line that is not one of them, so that "min:" lines elsewhere in
// the report cannot be mistaken for latencies.
func sysbenchLatencies(ms *metricList, ls []string) {
	header := -1
	for i, l := range ls {
		if strings.TrimSpace(l) == "Latency (ms):" {
			header = i
			break
		}
	}
	if header < 0 {
		return
	}
	for _, l := range ls[header+1:] {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "sum:") || strings.HasPrefix(t, "percentile stats:") {
			continue
		}
		match := sysbenchLatencyLine.FindStringSubmatch(l)
		if match == nil {
			break
		}
		v, ok := parseNumber(match[3])
		if !ok {
			continue
		}
		name := "latency_" + match[1] + "_ms"
		if match[2] != "" {
			name = "latency_p" + strings.ReplaceAll(match[2], ".", "_") + "_ms"
		}
		ms.add(name, v, unitMs, LowerIsBetter)
	}
}
