package results

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	// "100+0 records in" / "100+0 records out"; the words are translated.
	ddRecords = regexp.MustCompile(`^([0-9]+)\+([0-9]+) \S`)
	// The summary starts with the byte count: "104857600 bytes (105 MB,
	// 100 MiB) copied, 0.195737 s, 536 MB/s" (coreutils), "1 byte copied,
	// ..." or "104857600 bytes (100.0MB) copied, 0.123456 seconds,
	// 810.0MB/s" (BusyBox).
	ddSummaryStart = regexp.MustCompile(`^([0-9]+) \S`)
	ddParenthesis  = regexp.MustCompile(`\([^)]*\)`)
	// "0.195737 s", "4.6908e-05 s", "0,195737 s" (decimal comma), "1.2 seconds".
	// An error line of dd or of nc, also of a build that names itself
	// otherwise: "nc.traditional: invalid option -- 'N'".
	ddOrNcError = regexp.MustCompile(`^(dd|nc(?:\.[a-z]+)?):\s*(.*)$`)
	ddSeconds   = regexp.MustCompile(`^([0-9]+(?:[.,][0-9]+)?(?:[eE][-+]?[0-9]+)?) \pL`)
)

// ParseNetcat parses the output of the runner's netcat bulk transfer, a
// fixed amount of zeros sent by dd through nc to a receiver that discards
// it:
//
//	receiver: nc -l <port> > /dev/null
//	sender:   sh -c 'LC_ALL=C dd if=/dev/zero bs=1M count=1024 | nc -N -v <receiver> <port>' 2>&1
//
// dd's summary on stderr gives bytes, transfer_seconds and bytes_per_second
// (computed from the two, because dd rounds its own rate to two or three
// digits). dd stops the clock when its last block is in the pipe, so up to
// the pipe and socket buffers (a few MiB) may still be in flight: transfer
// at least 1 GiB to keep that under 1%. LC_ALL=C is for people reading the
// output; the parser also reads dd's translations and decimal commas.
//
// A line from nc or dd ("nc: connect to ... failed", "dd: error writing
// 'standard output': Broken pipe") or fewer records written than read means
// the transfer was cut short, which is an error, not a slow transfer. A
// summary that cannot be read, or without both record lines beside it, is
// refused; so is a dd that prints no summary at all (Debian's BusyBox dd).
func ParseNetcat(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("netcat: empty output; did dd run (its summary goes to stderr, which the runner must capture)?")
	}
	ls := lines(output)
	for _, l := range ls {
		match := ddOrNcError.FindStringSubmatch(strings.TrimSpace(l))
		if match == nil {
			continue
		}
		message := firstLine(match[2])
		hint := ""
		if strings.HasPrefix(match[1], "nc") && strings.Contains(message, "invalid option") {
			hint = "; the sender needs an nc that knows -N and -v, such as OpenBSD netcat"
		}
		return nil, fmt.Errorf("netcat: %s reported an error, so the transfer did not complete: %s%s", match[1], message, hint)
	}
	var records []string
	summary := ""
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if match := ddRecords.FindStringSubmatch(t); match != nil {
			records = append(records, match[1]+"+"+match[2])
			continue
		}
		// Any other line that starts with a count is dd's summary, in a
		// spelling that ddSummaryMetrics reads or refuses by name.
		if ddSummaryStart.MatchString(t) {
			summary = t
		}
	}
	if len(records) >= 2 && records[0] != records[1] {
		return nil, fmt.Errorf("netcat: dd read %s records but wrote %s; the receiver went away before the end of the transfer", records[0], records[1])
	}
	if summary == "" {
		if len(records) > 0 {
			return nil, errors.New("netcat: no dd summary line after dd's records (\"<n> bytes ... copied, <t> s, <rate>\"): a dd built without one (BusyBox without FEATURE_DD_THIRD_STATUS_LINE, such as Debian's busybox) cannot time the transfer; use coreutils dd")
		}
		return nil, errors.New("netcat: no dd summary line (\"<n> bytes ... copied, <t> s, <rate>\"); run the sender as dd ... | nc ... with dd's stderr captured")
	}
	ms, err := ddSummaryMetrics(summary)
	if err != nil {
		return nil, err
	}
	// dd prints both record lines before its summary; without them the check
	// above that nothing was lost could not run.
	if len(records) < 2 {
		return nil, fmt.Errorf("netcat: dd's \"records in\" and \"records out\" lines are not both there beside its summary (%d found); the output is cut off or damaged", len(records))
	}
	return ms, nil
}

func ddSummaryMetrics(summary string) ([]Metric, error) {
	fields := strings.Split(ddParenthesis.ReplaceAllString(summary, ""), ", ")
	if len(fields) < 3 {
		return nil, errors.New("netcat: cannot read dd's summary (want \"<n> bytes ... copied, <t> s, <rate>\"): " + firstLine(summary))
	}
	bytesMatch := ddSummaryStart.FindStringSubmatch(fields[0])
	secondsMatch := ddSeconds.FindStringSubmatch(strings.TrimSpace(fields[1]))
	if bytesMatch == nil || secondsMatch == nil {
		return nil, errors.New("netcat: cannot read bytes and seconds from dd's summary: " + firstLine(summary))
	}
	bytes, err := strconv.ParseUint(bytesMatch[1], 10, 64)
	if err != nil {
		return nil, errors.New("netcat: byte count out of range in dd's summary: " + firstLine(summary))
	}
	seconds, ok := parseNumber(strings.Replace(secondsMatch[1], ",", ".", 1))
	if !ok {
		return nil, errors.New("netcat: cannot read the seconds in dd's summary: " + firstLine(summary))
	}
	if bytes == 0 {
		return nil, errors.New("netcat: dd copied 0 bytes; check that the receiver listens and that dd's count is above 0")
	}
	if seconds <= 0 {
		return nil, fmt.Errorf("netcat: dd reports %d bytes in 0 s, too fast to time; transfer more data (at least 1 GiB)", bytes)
	}
	var ms metricList
	ms.add("bytes", float64(bytes), "B", HigherIsBetter)
	ms.add("transfer_seconds", seconds, "s", LowerIsBetter)
	ms.add("bytes_per_second", float64(bytes)/seconds, "B/s", HigherIsBetter)
	if ms.empty() {
		return nil, errors.New("netcat: no finite figure in dd's summary: " + firstLine(summary))
	}
	return ms.metrics, nil
}
