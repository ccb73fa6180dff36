package results

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
)

var (
	// iputils: "10 packets transmitted, 10 received, +3 errors, 0% packet loss, time 9209ms"
	// BusyBox: "10 packets transmitted, 10 packets received, 0% packet loss".
	pingCounts = regexp.MustCompile(`([0-9]+) packets transmitted, ([0-9]+) (?:packets )?received`)
	pingLoss   = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?)% packet loss`)
	// iputils: "rtt min/avg/max/mdev = 0.044/0.052/0.061/0.005 ms"
	// BusyBox: "round-trip min/avg/max = 0.044/0.052/0.061 ms".
	pingRTT = regexp.MustCompile(`(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev))? = ([0-9.]+)/([0-9.]+)/([0-9.]+)(?:/([0-9.]+))? ms`)
)

// ParsePing parses the statistics that ping prints when it ends (iputils,
// BusyBox or GNU inetutils). It returns rtt_min_ms, rtt_avg_ms, rtt_max_ms,
// rtt_mdev_ms (iputils' mdev or inetutils' stddev; not for BusyBox, which has
// neither) and packet_loss_percent. When a reply came back, the round-trip
// line must be there and whole. Partial loss is a
// measurement; when every packet was lost there is no round trip to report
// and the target is unreachable, which is an error, not a result of 100%.
func ParsePing(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("ping: empty output")
	}
	ls := lines(output)
	summary := -1
	for i, l := range ls {
		if pingCounts.MatchString(l) {
			summary = i
			break
		}
	}
	if summary < 0 {
		for _, l := range ls {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "ping:") {
				return nil, errors.New("ping reported an error: " + firstLine(strings.TrimSpace(strings.TrimPrefix(t, "ping:"))))
			}
		}
		return nil, errors.New("ping: no \"packets transmitted\" statistics line; was ping interrupted before it finished?")
	}
	loss, ok := pingLossPercent(ls[summary])
	if !ok {
		return nil, errors.New("ping: cannot read the packet loss from: " + firstLine(ls[summary]))
	}
	if loss >= 100 {
		return nil, errors.New("ping: no reply at all (" + firstLine(strings.TrimSpace(ls[summary])) +
			"): the target does not answer ICMP echo; check the network between the nodes (for VMs, the binding and ICMP in pods)")
	}
	rtt, err := pingRTTs(ls[summary+1:])
	if err != nil {
		return nil, err
	}
	var ms metricList
	for i, name := range []string{"rtt_min_ms", "rtt_avg_ms", "rtt_max_ms", "rtt_mdev_ms"} {
		if i < len(rtt) {
			ms.add(name, rtt[i], unitMs, LowerIsBetter)
		}
	}
	ms.add("packet_loss_percent", loss, unitPercent, LowerIsBetter)
	return ms.metrics, nil
}

// pingRTTs reads the round-trip line that follows the counts: min, avg and
// max, and the deviation when the build prints one (iputils' mdev, GNU
// inetutils' stddev; BusyBox has none). A reply was received, so the line
// must be there and whole.
func pingRTTs(ls []string) ([]float64, error) {
	for _, l := range ls {
		if !strings.Contains(l, "min/avg/max") {
			continue
		}
		match := pingRTT.FindStringSubmatch(l)
		if match == nil {
			return nil, errors.New("ping: cannot read the round-trip line " + strconv.Quote(firstLine(l)))
		}
		var rtt []float64
		for _, s := range match[1:] {
			if s == "" {
				break
			}
			v, ok := parseNumber(s)
			if !ok {
				return nil, errors.New("ping: cannot read the round-trip line " + strconv.Quote(firstLine(l)))
			}
			rtt = append(rtt, v)
		}
		if strings.Contains(l, "mdev") || strings.Contains(l, "stddev") {
			if len(rtt) != 4 {
				return nil, errors.New("ping: the round-trip line " + strconv.Quote(firstLine(l)) + " names a deviation but has none")
			}
		} else if len(rtt) != 3 {
			return nil, errors.New("ping: the round-trip line " + strconv.Quote(firstLine(l)) + " has more figures than min/avg/max")
		}
		return rtt, nil
	}
	return nil, errors.New("ping: no \"rtt min/avg/max\" (or \"round-trip min/avg/max\") line after the packet counts; the output is cut off or damaged")
}

// pingLossPercent reads "N% packet loss", or derives it from the counts for
// a ping that does not print it.
func pingLossPercent(line string) (float64, bool) {
	if match := pingLoss.FindStringSubmatch(line); match != nil {
		return parseNumber(match[1])
	}
	counts := pingCounts.FindStringSubmatch(line)
	if counts == nil {
		return 0, false
	}
	sent, err1 := strconv.ParseFloat(counts[1], 64)
	received, err2 := strconv.ParseFloat(counts[2], 64)
	if err1 != nil || err2 != nil || sent <= 0 || received > sent {
		return 0, false
	}
	return (sent - received) / sent * 100, true
}
