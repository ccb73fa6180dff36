package results

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The runner's netperf command lines (netserver listens with
// "netserver -p 12865" on the server side):
//
//	netperf -H <server> -p 12865 -t TCP_RR -l <seconds> -I 95,5 -i 10,3 -- \
//	  -o THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID
//	netperf -H <server> -p 12865 -t TCP_STREAM -l <seconds> -I 95,5 -i 10,3 -- \
//	  -o THROUGHPUT,THROUGHPUT_UNITS,CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID
//
// "-I 95,5 -i 10,3" repeats the test 3 to 10 times until the 95% confidence
// interval of the throughput is narrower than 5% of the mean.
const netperfOutputSelectors = "THROUGHPUT,THROUGHPUT_UNITS,...,CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID"

// netperf's -o column titles.
const (
	netperfThroughput      = "Throughput"
	netperfThroughputUnits = "Throughput Units"
	netperfConfLevel       = "Confidence Level Percent"
	netperfConfTarget      = "Confidence Width Target"
	netperfConfIterations  = "Confidence Iterations Run"
	netperfConfWidth       = "Throughput Confidence Width (%)"
)

var netperfLatencies = []struct{ title, name string }{
	{"Mean Latency Microseconds", "latency_mean_us"},
	{"50th Percentile Latency Microseconds", "latency_p50_us"},
	{"90th Percentile Latency Microseconds", "latency_p90_us"},
	{"99th Percentile Latency Microseconds", "latency_p99_us"},
}

// netperfBitsPer converts the throughput units of netperf's -f option to
// bit/s; netperf's K, M and G of bytes are powers of 1024.
var netperfBitsPer = map[string]float64{
	"10^0bits/s": 1,
	"10^3bits/s": 1e3,
	"10^6bits/s": 1e6,
	"10^9bits/s": 1e9,
	"Bytes/s":    8,
	"KBytes/s":   8 * 1024,
	"MBytes/s":   8 * 1024 * 1024,
	"GBytes/s":   8 * 1024 * 1024 * 1024,
}

const netperfNotAchieved = "Desired confidence was not achieved"

// ParseNetperf parses the CSV that netperf prints for the test-specific
// option -o (the command lines above). A TCP_RR test gives
// transactions_per_second and, when selected, latency_mean_us,
// latency_p50_us, latency_p90_us and latency_p99_us; a TCP_STREAM test
// gives bits_per_second, whatever the -f unit. With -I, it also gives
// confidence_width_percent (the width of the throughput's confidence
// interval, in % of the mean), confidence_iterations, and
// confidence_achieved: 1 when that width is within the -I target, 0 when
// netperf gave up after the -i maximum. netperf prints no warning with -o,
// so confidence_achieved is the only trace of a result that did not settle:
// it is kept as a metric rather than turned into an error, because such a
// run still measured something, just not as precisely as asked.
//
// The classic table of a run without -o is read too (see
// parseNetperfClassic): it gives the throughput and, with -I,
// confidence_achieved, plus confidence_width_percent when netperf warned.
//
// A latency or confidence column in a spelling the parser does not know, a
// classic result row or width line that cannot be read, and a warning
// without its width are refused.
func ParseNetperf(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("netperf: empty output")
	}
	ls := lines(output)
	header := -1
	var titles []string
	for i, l := range ls {
		fields := splitCSV(l)
		if indexOf(fields, netperfThroughput) >= 0 && indexOf(fields, netperfThroughputUnits) >= 0 {
			header, titles = i, fields
			break
		}
	}
	if header < 0 {
		ms, ok, err := parseNetperfClassic(ls)
		if err != nil {
			return nil, err
		}
		if ok {
			return ms, nil
		}
		return nil, netperfNoCSV(ls)
	}
	if err := netperfKnownTitles(titles); err != nil {
		return nil, err
	}
	var values []string
	for _, l := range ls[header+1:] {
		// Another netperf may print its confidence warning between the lines.
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "!!!") {
			values = splitCSV(l)
			break
		}
	}
	if len(values) != len(titles) {
		return nil, fmt.Errorf("netperf: the -o header has %d columns but the line after it has %d; the output is truncated or mixed with other output", len(titles), len(values))
	}
	column := func(title string) (string, bool) {
		i := indexOf(titles, title)
		if i < 0 {
			return "", false
		}
		return values[i], true
	}
	number := func(title string) (float64, bool, error) {
		s, ok := column(title)
		if !ok {
			return 0, false, nil
		}
		v, ok := parseNumber(s)
		if !ok {
			return 0, false, fmt.Errorf("netperf: %s is %q, not a number", title, firstLine(s))
		}
		return v, true, nil
	}

	var ms metricList
	throughput, _, err := number(netperfThroughput)
	if err != nil {
		return nil, err
	}
	if throughput < 0 {
		return nil, fmt.Errorf("netperf: negative throughput %v", throughput)
	}
	unit, _ := column(netperfThroughputUnits)
	switch bits, known := netperfBitsPer[unit]; {
	case unit == "Trans/s":
		ms.add("transactions_per_second", throughput, "trans/s", HigherIsBetter)
	case known:
		ms.add("bits_per_second", throughput*bits, unitBitPerS, HigherIsBetter)
	default:
		return nil, fmt.Errorf("netperf: unknown throughput unit %q; run a TCP_RR or TCP_STREAM test with the default -f", firstLine(unit))
	}
	for _, lat := range netperfLatencies {
		v, ok, err := number(lat.title)
		if err != nil {
			return nil, err
		}
		// netperf prints -1 for a figure it did not measure.
		if ok && v >= 0 {
			ms.add(lat.name, v, "us", LowerIsBetter)
		}
	}
	if err := netperfConfidence(&ms, number, strings.Contains(string(output), netperfNotAchieved)); err != nil {
		return nil, err
	}
	return ms.metrics, nil
}

// netperfKnownTitles refuses a latency or confidence column in a spelling the
// parser does not know, whose figure would otherwise be left out unnoticed.
func netperfKnownTitles(titles []string) error {
	known := map[string]bool{netperfConfLevel: true, netperfConfTarget: true, netperfConfIterations: true, netperfConfWidth: true}
	for _, lat := range netperfLatencies {
		known[lat.title] = true
	}
	for _, title := range titles {
		if known[title] {
			continue
		}
		if strings.Contains(title, "Latency") || strings.Contains(title, "Confidence") {
			return fmt.Errorf("netperf: unknown -o column %q; the output is damaged or from a netperf that names its columns otherwise (vmbench reads netperf 2.7's)", firstLine(title))
		}
	}
	return nil
}

// netperfConfidence adds the confidence metrics of a run with -I; netperf
// reports a level of 0 and a target of -1 for a run without it.
func netperfConfidence(ms *metricList, number func(string) (float64, bool, error), warned bool) error {
	level, hasLevel, err := number(netperfConfLevel)
	if err != nil {
		return err
	}
	target, hasTarget, err := number(netperfConfTarget)
	if err != nil {
		return err
	}
	if !hasLevel || level <= 0 || !hasTarget || target <= 0 {
		return nil
	}
	width, hasWidth, err := number(netperfConfWidth)
	if err != nil {
		return err
	}
	if !hasWidth || width < 0 {
		return errors.New("netperf: the run used -I but the output has no throughput confidence width; add THROUGHPUT_CONFID to the -o selectors (" + netperfOutputSelectors + ")")
	}
	ms.add("confidence_width_percent", width, unitPercent, LowerIsBetter)
	if iterations, ok, err := number(netperfConfIterations); err != nil {
		return err
	} else if ok && iterations > 0 {
		ms.add("confidence_iterations", iterations, unitCount, LowerIsBetter)
	}
	achieved := 0.0
	if width <= target && !warned {
		achieved = 1
	}
	ms.add("confidence_achieved", achieved, UnitFlag, HigherIsBetter)
	return nil
}

var (
	// "MIGRATED TCP STREAM TEST from ... : +/-2.500% @ 95% conf.  : demo".
	netperfClassicConfidence = regexp.MustCompile(`@ [0-9.]+% conf\.`)
	// "!!! Confidence intervals: Throughput      : 15.957%".
	netperfClassicWidth = regexp.MustCompile(`^!!! Confidence intervals: Throughput\s*: ([0-9.]+)%`)
)

// parseNetperfClassic reads the table netperf prints without -o, for a
// TCP_RR or TCP_STREAM test without CPU utilisation (-c/-C):
//
//	bytes  Bytes  bytes    bytes   secs.    per sec       (TCP_RR)
//	16384  131072 1        1       2.00     42708.99
//
//	bytes  bytes   bytes    secs.    10^6bits/sec         (TCP_STREAM)
//	131072  16384  16384    2.01     5883.89
//
// With -I, netperf prints a warning with the confidence width when it did
// not achieve the confidence, and nothing (not even the width) when it did.
// It reports false for any other table.
//
// A row or a confidence warning that is there but cannot be read, and a
// warning without the width, are errors.
func parseNetperfClassic(ls []string) ([]Metric, bool, error) {
	units := -1
	for i, l := range ls {
		if fields := strings.Fields(l); len(fields) > 0 && fields[0] == "bytes" {
			units = i
			break
		}
	}
	if units < 0 {
		return nil, false, nil
	}
	unitFields := strings.Fields(ls[units])
	var row []float64
	for _, l := range ls[units+1:] {
		fields := strings.Fields(l)
		if len(fields) == 0 {
			continue
		}
		for _, f := range fields {
			v, ok := parseNumber(f)
			if !ok {
				return nil, false, fmt.Errorf("netperf: cannot read the result row %q under %q", firstLine(strings.TrimSpace(l)), firstLine(strings.TrimSpace(ls[units])))
			}
			row = append(row, v)
		}
		break
	}
	var ms metricList
	switch {
	case len(unitFields) == 7 && unitFields[5] == "per" && unitFields[6] == "sec" && len(row) == 6 && row[5] >= 0:
		ms.add("transactions_per_second", row[5], "trans/s", HigherIsBetter)
	case len(unitFields) == 5 && len(row) == 5 && row[4] >= 0:
		bits, known := netperfBitsPer[strings.TrimSuffix(unitFields[4], "ec")]
		if !known {
			return nil, false, nil
		}
		ms.add("bits_per_second", row[4]*bits, unitBitPerS, HigherIsBetter)
	default:
		return nil, false, nil
	}
	usedConfidence, warned, hasWidth := false, false, false
	for _, l := range ls {
		if netperfClassicConfidence.MatchString(l) {
			usedConfidence = true
		}
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "!!! Confidence intervals: Throughput") {
			match := netperfClassicWidth.FindStringSubmatch(t)
			v, ok := 0.0, false
			if match != nil {
				v, ok = parseNumber(match[1])
			}
			if !ok {
				return nil, false, fmt.Errorf("netperf: cannot read the confidence width line %q", firstLine(t))
			}
			ms.add("confidence_width_percent", v, unitPercent, LowerIsBetter)
			hasWidth = true
		}
		if strings.Contains(l, netperfNotAchieved) {
			warned = true
		}
	}
	if warned && !hasWidth {
		return nil, false, errors.New("netperf: the warning \"" + netperfNotAchieved + "\" has no \"!!! Confidence intervals: Throughput : <width>%\" line; the output is damaged")
	}
	if usedConfidence {
		achieved := 1.0
		if warned {
			achieved = 0
		}
		ms.add("confidence_achieved", achieved, UnitFlag, HigherIsBetter)
	}
	return ms.metrics, true, nil
}

// netperfNoCSV explains output without an -o header: an error of netperf
// itself, or the classic table of a run without -o.
func netperfNoCSV(ls []string) error {
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "establish control:") || strings.HasPrefix(t, "netperf:") || strings.HasPrefix(t, "send_omni:") || strings.HasPrefix(t, "recv_response") {
			return errors.New("netperf reported an error: " + firstLine(t))
		}
	}
	for _, l := range ls {
		if strings.Contains(l, "MIGRATED") || strings.Contains(l, "Elapsed") {
			return errors.New("netperf: a classic table that vmbench does not read (only TCP_RR and TCP_STREAM without -c/-C are known); run the test with the test-specific option -- -o " + netperfOutputSelectors)
		}
	}
	return errors.New("netperf: no -o CSV header (a line with \"Throughput,Throughput Units\"); run netperf with -- -o " + netperfOutputSelectors)
}

func splitCSV(line string) []string {
	fields := strings.Split(line, ",")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields
}

func indexOf(fields []string, want string) int {
	for i, f := range fields {
		if f == want {
			return i
		}
	}
	return -1
}

// IsConfidenceMetric says whether name is one of netperf's figures about its own confidence
// interval (its width, the iterations it took, whether it was reached), with or without a test's
// prefix: they say how settled a result is, not how fast, so the report keeps them out of the means.
func IsConfidenceMetric(name string) bool {
	for _, suffix := range []string{"confidence_width_percent", "confidence_iterations", "confidence_achieved"} {
		if strings.HasSuffix(name, suffix) {
			return true
		}
	}
	return false
}
