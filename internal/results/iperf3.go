package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Pointers distinguish "absent" from 0: iperf3 leaves keys out that do not
// apply (retransmits on UDP, RTT on platforms without TCP_INFO).
type iperf3Output struct {
	Start struct {
		TestStart struct {
			Protocol string          `json:"protocol"`
			Reverse  json.RawMessage `json:"reverse"`
		} `json:"test_start"`
	} `json:"start"`
	End struct {
		Streams []struct {
			Sender *struct {
				MeanRTT *float64 `json:"mean_rtt"`
			} `json:"sender"`
		} `json:"streams"`
		Sum            *iperf3Sum `json:"sum"`
		SumSent        *iperf3Sum `json:"sum_sent"`
		SumReceived    *iperf3Sum `json:"sum_received"`
		CPUUtilization *struct {
			HostTotal   *float64 `json:"host_total"`
			RemoteTotal *float64 `json:"remote_total"`
		} `json:"cpu_utilization_percent"`
	} `json:"end"`
	Error *string `json:"error"`
}

type iperf3Sum struct {
	BitsPerSecond *float64 `json:"bits_per_second"`
	Retransmits   *float64 `json:"retransmits"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPercent   *float64 `json:"lost_percent"`
}

// ParseIperf3 parses the JSON report of an iperf3 client run with -J. It
// returns:
//   - bits_per_second: goodput seen by the receiver (end.sum_received);
//   - sender_bits_per_second: rate of the sender (end.sum_sent);
//   - retransmits (TCP);
//   - rtt_mean_us (TCP forward only): mean of the senders' mean RTTs over the
//     streams that report one, because in reverse mode the client is the
//     receiver and iperf3 reports 0;
//   - jitter_ms and lost_percent (UDP, from end.sum_received, since
//     end.sum mixes the sender's rate with the receiver's loss);
//   - cpu_host_percent and cpu_remote_percent.
//
// iperf3 exits 0 even when it could not connect, so an "error" key in the
// report is returned as an error. A report without the receiver's or the
// sender's bits_per_second, without jitter_ms or lost_percent for UDP, or with
// a CPU block lacking one of its totals is refused; retransmits and RTT are
// optional because builds without TCP_INFO do not report them.
func ParseIperf3(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("iperf3: empty output")
	}
	start := bytes.IndexByte(output, '{')
	if start < 0 {
		return nil, errors.New("iperf3: output is not JSON; run the client with -J")
	}
	var report iperf3Output
	// Decode only the first document: a server -J log holds several, and
	// text after the report (e.g. a shell message) must not spoil it.
	if err := json.NewDecoder(bytes.NewReader(output[start:])).Decode(&report); err != nil {
		return nil, fmt.Errorf("iperf3: invalid JSON: %s", firstLine(err.Error()))
	}
	if report.Error != nil && strings.TrimSpace(*report.Error) != "" {
		return nil, fmt.Errorf("iperf3 reported an error: %s", firstLine(*report.Error))
	}
	end := report.End
	udp := strings.EqualFold(report.Start.TestStart.Protocol, "UDP")
	reverse := iperf3Flag(report.Start.TestStart.Reverse)

	received, receivedKey := end.SumReceived, "end.sum_received"
	if received == nil && udp {
		// Older releases reported UDP results only in end.sum.
		received, receivedKey = end.Sum, "end.sum"
	}
	if received == nil && end.SumSent == nil {
		return nil, errors.New("iperf3: report has no end.sum_received or end.sum_sent; the test did not finish")
	}
	if err := iperf3Complete(report, received, receivedKey, udp); err != nil {
		return nil, err
	}

	var ms metricList
	ms.add("bits_per_second", *received.BitsPerSecond, unitBitPerS, HigherIsBetter)
	if end.SumSent != nil {
		ms.add("sender_bits_per_second", *end.SumSent.BitsPerSecond, unitBitPerS, HigherIsBetter)
	}
	if !udp {
		// Builds without TCP_INFO report neither retransmits nor RTTs.
		if end.SumSent.Retransmits != nil && *end.SumSent.Retransmits >= 0 {
			ms.add("retransmits", *end.SumSent.Retransmits, unitCount, LowerIsBetter)
		}
		if !reverse {
			if rtt, ok := iperf3MeanRTT(report); ok {
				ms.add("rtt_mean_us", rtt, unitUs, LowerIsBetter)
			}
		}
	}
	if udp {
		ms.add("jitter_ms", *received.JitterMs, unitMs, LowerIsBetter)
		ms.add("lost_percent", *received.LostPercent, unitPercent, LowerIsBetter)
	}
	if cpu := end.CPUUtilization; cpu != nil {
		ms.add("cpu_host_percent", *cpu.HostTotal, unitPercent, LowerIsBetter)
		ms.add("cpu_remote_percent", *cpu.RemoteTotal, unitPercent, LowerIsBetter)
	}
	if ms.empty() {
		return nil, errors.New("iperf3: report has no figures")
	}
	return ms.metrics, nil
}

// iperf3Complete refuses a report whose figures are not all there: the
// receiver's rate, the sender's (but for an older UDP report, which has
// end.sum alone), jitter and loss for UDP, and both totals of a CPU block.
func iperf3Complete(report iperf3Output, received *iperf3Sum, receivedKey string, udp bool) error {
	end := report.End
	switch {
	case received == nil:
		return errors.New("iperf3: report has end.sum_sent but no end.sum_received; the test did not finish or the report is damaged")
	case received.BitsPerSecond == nil:
		return fmt.Errorf("iperf3: %s has no bits_per_second; the report is damaged", receivedKey)
	case end.SumSent == nil && receivedKey != "end.sum":
		return errors.New("iperf3: report has end.sum_received but no end.sum_sent; the report is damaged")
	case end.SumSent != nil && end.SumSent.BitsPerSecond == nil:
		return errors.New("iperf3: end.sum_sent has no bits_per_second; the report is damaged")
	case udp && received.JitterMs == nil:
		return fmt.Errorf("iperf3: the UDP report's %s has no jitter_ms; the report is damaged", receivedKey)
	case udp && received.LostPercent == nil:
		return fmt.Errorf("iperf3: the UDP report's %s has no lost_percent; the report is damaged", receivedKey)
	}
	if cpu := end.CPUUtilization; cpu != nil && (cpu.HostTotal == nil || cpu.RemoteTotal == nil) {
		return errors.New("iperf3: end.cpu_utilization_percent lacks host_total or remote_total; the report is damaged")
	}
	return nil
}

// iperf3MeanRTT averages the per-stream mean RTTs; iperf3 has no summed RTT
// for -P runs. Streams reporting 0 have no RTT sample and are left out.
func iperf3MeanRTT(report iperf3Output) (float64, bool) {
	var sum float64
	var n int
	for _, s := range report.End.Streams {
		if s.Sender == nil || s.Sender.MeanRTT == nil || *s.Sender.MeanRTT <= 0 {
			continue
		}
		sum += *s.Sender.MeanRTT
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// iperf3Flag reads test_start.reverse, an integer 0/1 in iperf 3.12, but
// accepts a JSON boolean as well so that a different encoding does not make
// the whole report unreadable.
func iperf3Flag(raw json.RawMessage) bool {
	switch strings.TrimSpace(string(raw)) {
	case "", "0", "false", "null":
		return false
	}
	return true
}

// Columns of an iperf3 time series: an interval's start and end in seconds from the start of the
// test, and the bandwidth over it in bits per second, the sum over all parallel streams.
const (
	Iperf3StartColumn     = "start_s"
	Iperf3EndColumn       = "end_s"
	Iperf3BandwidthColumn = "bits_per_s"
)

type iperf3Intervals struct {
	Intervals []struct {
		Sum *struct {
			Start         *float64 `json:"start"`
			End           *float64 `json:"end"`
			BitsPerSecond *float64 `json:"bits_per_second"`
			Omitted       bool     `json:"omitted"`
		} `json:"sum"`
	} `json:"intervals"`
	Error *string `json:"error"`
}

// Iperf3Intervals reads the time series of an iperf3 client's JSON report (-J): per interval (-i,
// one second by default) its start, end and bandwidth, summed over the parallel streams, as the
// client measured it: the sender's rate, or the receiver's with -R. Intervals of iperf3's warm-up
// (-O) are left out, as iperf3 leaves them out of its summary. Times are rounded to the millisecond
// and bandwidths to the bit per second.
func Iperf3Intervals(output []byte) (Table, error) {
	start := bytes.IndexByte(output, '{')
	if start < 0 {
		return Table{}, errors.New("iperf3: output is not JSON; run the client with -J")
	}
	var report iperf3Intervals
	if err := json.NewDecoder(bytes.NewReader(output[start:])).Decode(&report); err != nil {
		return Table{}, fmt.Errorf("iperf3: invalid JSON: %s", firstLine(err.Error()))
	}
	if report.Error != nil && strings.TrimSpace(*report.Error) != "" {
		return Table{}, fmt.Errorf("iperf3 reported an error: %s", firstLine(*report.Error))
	}
	t := Table{Columns: []string{Iperf3StartColumn, Iperf3EndColumn, Iperf3BandwidthColumn}}
	for i, in := range report.Intervals {
		s := in.Sum
		if s == nil || s.Omitted {
			continue
		}
		if s.Start == nil || s.End == nil || s.BitsPerSecond == nil {
			return Table{}, fmt.Errorf("iperf3: interval %d lacks its start, end or bits_per_second", i+1)
		}
		begin, end, bps := *s.Start, *s.End, *s.BitsPerSecond
		if math.IsNaN(begin+end+bps) || math.IsInf(begin+end+bps, 0) || begin < 0 || end < begin || bps < 0 {
			return Table{}, fmt.Errorf("iperf3: interval %d is not a time span with a bandwidth (%g to %g s, %g bit/s)", i+1, begin, end, bps)
		}
		if len(t.Rows) == MaxTableRows {
			return Table{}, fmt.Errorf("iperf3: more than %d intervals", MaxTableRows)
		}
		t.Rows = append(t.Rows, []float64{math.Round(begin*1000) / 1000, math.Round(end*1000) / 1000, math.Round(bps)})
	}
	if len(t.Rows) == 0 {
		return Table{}, errors.New("iperf3: report has no intervals")
	}
	return t, nil
}
