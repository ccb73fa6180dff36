package results

import (
	"errors"
	"fmt"
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

// ParseSysbenchCPU parses the text report of `sysbench cpu run`. It returns
// events_per_second and the latency figures of the "Latency (ms):" block:
// latency_min_ms, latency_avg_ms, latency_max_ms and latency_p<N>_ms, where N
// follows --percentile (e.g. latency_p95_ms, latency_p99_ms, latency_p99_9_ms).
// The total time is left out because it echoes --time rather than measuring
// anything; events_per_second already carries the throughput.
//
// A report whose figures cannot all be read (a missing or mangled line, a
// line in a spelling sysbench 1.0 does not print) is refused with the line
// named, never returned with the figures that could be read.
func ParseSysbenchCPU(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("sysbench-cpu: empty output")
	}
	ls := lines(output)
	if err := sysbenchFailure(ls); err != nil {
		return nil, err
	}
	line, found := sysbenchLine(ls, "events per second")
	if !found {
		if _, memory := sysbenchLine(ls, "Total operations:"); memory {
			return nil, errors.New("sysbench-cpu: this is the output of `sysbench memory`, not `sysbench cpu`")
		}
		return nil, errors.New("sysbench-cpu: no \"events per second:\" line; is this the output of `sysbench cpu run`?")
	}
	var ms metricList
	v, err := sysbenchFigure(line, sysbenchEventsPerSecond, 1, "sysbench-cpu")
	if err != nil {
		return nil, err
	}
	ms.add("events_per_second", v, unitEventsPerS, HigherIsBetter)
	if err := sysbenchLatencies(&ms, ls); err != nil {
		return nil, err
	}
	return ms.metrics, nil
}

// ParseSysbenchMemory parses the text report of `sysbench memory run` into
// operations_per_second and mib_per_second (MiB = 2^20 bytes). Both the
// "Total operations:" and the "MiB transferred" line must be there and read.
func ParseSysbenchMemory(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("sysbench-memory: empty output")
	}
	ls := lines(output)
	if err := sysbenchFailure(ls); err != nil {
		return nil, err
	}
	operations, hasOperations := sysbenchLine(ls, "Total operations:")
	transferred, hasTransferred := sysbenchLine(ls, "MiB transferred")
	switch {
	case !hasOperations && !hasTransferred:
		if _, cpu := sysbenchLine(ls, "events per second"); cpu {
			return nil, errors.New("sysbench-memory: this is the output of `sysbench cpu`, not `sysbench memory`")
		}
		return nil, errors.New("sysbench-memory: no \"Total operations:\" or \"MiB transferred\" line; is this the output of `sysbench memory run`?")
	case !hasOperations:
		return nil, errors.New("sysbench-memory: no \"Total operations: <n> (<rate> per second)\" line beside \"MiB transferred\"; the report is cut off or damaged")
	case !hasTransferred:
		return nil, errors.New("sysbench-memory: no \"<n> MiB transferred (<rate> MiB/sec)\" line beside \"Total operations:\"; the report is cut off or damaged")
	}
	opsPerSecond, err := sysbenchFigure(operations, sysbenchTotalOperations, 1, "sysbench-memory")
	if err != nil {
		return nil, err
	}
	mibPerSecond, err := sysbenchFigure(transferred, sysbenchTransferred, 2, "sysbench-memory")
	if err != nil {
		return nil, err
	}
	var ms metricList
	ms.add("operations_per_second", opsPerSecond, unitOpsPerS, HigherIsBetter)
	ms.add("mib_per_second", mibPerSecond, "MiB/s", HigherIsBetter)
	return ms.metrics, nil
}

// sysbenchLine returns the first line containing marker. A retried run
// appended to the same log holds the report twice, and the first one wins.
func sysbenchLine(ls []string, marker string) (string, bool) {
	for _, l := range ls {
		if strings.Contains(l, marker) {
			return l, true
		}
	}
	return "", false
}

// sysbenchFigure reads submatch group of re on line, or names the line it
// cannot read.
func sysbenchFigure(line string, re *regexp.Regexp, group int, tool string) (float64, error) {
	match := re.FindStringSubmatch(line)
	if match == nil {
		return 0, fmt.Errorf("%s: cannot read the line %q", tool, firstLine(line))
	}
	v, ok := parseNumber(match[group])
	if !ok {
		return 0, fmt.Errorf("%s: the figure of the line %q is out of range", tool, firstLine(line))
	}
	return v, nil
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
// the blank line that ends the block, so that "min:" lines elsewhere in the
// report cannot be mistaken for latencies. Every line of the block must be
// one sysbench prints (min, avg, max, the percentile or "percentile stats:"
// when --percentile=0 turned it off, and sum), and min, avg, max and the
// percentile must all be there.
func sysbenchLatencies(ms *metricList, ls []string) error {
	header := -1
	for i, l := range ls {
		if strings.TrimSpace(l) == "Latency (ms):" {
			header = i
			break
		}
	}
	if header < 0 {
		return errors.New("sysbench-cpu: no \"Latency (ms):\" block after \"events per second:\"; the report is cut off or damaged")
	}
	seen := map[string]bool{}
	for _, l := range ls[header+1:] {
		t := strings.TrimSpace(l)
		if t == "" {
			break
		}
		if strings.HasPrefix(t, "sum:") {
			continue
		}
		if strings.HasPrefix(t, "percentile stats:") {
			seen["percentile"] = true
			continue
		}
		match := sysbenchLatencyLine.FindStringSubmatch(l)
		if match == nil {
			return fmt.Errorf("sysbench-cpu: cannot read the line %q of the \"Latency (ms):\" block", firstLine(l))
		}
		v, ok := parseNumber(match[3])
		if !ok {
			return fmt.Errorf("sysbench-cpu: the figure of the line %q is out of range", firstLine(l))
		}
		name := "latency_" + match[1] + "_ms"
		key := match[1]
		if match[2] != "" {
			name = "latency_p" + strings.ReplaceAll(match[2], ".", "_") + "_ms"
			key = "percentile"
		}
		seen[key] = true
		ms.add(name, v, unitMs, LowerIsBetter)
	}
	for _, key := range []string{"min", "avg", "max", "percentile"} {
		if !seen[key] {
			label := key + ":"
			if key == "percentile" {
				label = "<N>th percentile:"
			}
			return fmt.Errorf("sysbench-cpu: the \"Latency (ms):\" block has no %q line; the report is cut off or damaged", label)
		}
	}
	return nil
}
