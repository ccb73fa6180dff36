package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePing(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  []Metric
	}{
		{"iputils loopback", readFixture(t, "ping-c10-loopback.txt"), []Metric{
			m("rtt_min_ms", 0.044, "ms", LowerIsBetter),
			m("rtt_avg_ms", 0.052, "ms", LowerIsBetter),
			m("rtt_max_ms", 0.061, "ms", LowerIsBetter),
			m("rtt_mdev_ms", 0.005, "ms", LowerIsBetter),
			m("packet_loss_percent", 0, "%", LowerIsBetter),
		}},
		{"BusyBox loopback", readFixture(t, "ping-busybox-c3-loopback.txt"), []Metric{
			m("rtt_min_ms", 0.045, "ms", LowerIsBetter),
			m("rtt_avg_ms", 0.067, "ms", LowerIsBetter),
			m("rtt_max_ms", 0.080, "ms", LowerIsBetter),
			m("packet_loss_percent", 0, "%", LowerIsBetter),
		}},
		// inetutils prints a standard deviation where iputils prints mdev; both are the spread of the RTTs.
		{"GNU inetutils loopback", readFixture(t, "ping-inetutils-c3-loopback.txt"), []Metric{
			m("rtt_min_ms", 0.065, "ms", LowerIsBetter),
			m("rtt_avg_ms", 0.069, "ms", LowerIsBetter),
			m("rtt_max_ms", 0.071, "ms", LowerIsBetter),
			m("rtt_mdev_ms", 0, "ms", LowerIsBetter),
			m("packet_loss_percent", 0, "%", LowerIsBetter),
		}},
		{"iputils with errors and partial loss", []byte(`PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.
64 bytes from 10.0.0.9: icmp_seq=1 ttl=64 time=1.10 ms
From 10.0.0.1 icmp_seq=2 Destination Host Unreachable

--- 10.0.0.9 ping statistics ---
6 packets transmitted, 4 received, +3 errors, 33.3333% packet loss, time 5040ms
rtt min/avg/max/mdev = 0.950/1.203/1.512/0.201 ms, pipe 3
`), []Metric{
			m("rtt_min_ms", 0.950, "ms", LowerIsBetter),
			m("rtt_avg_ms", 1.203, "ms", LowerIsBetter),
			m("rtt_max_ms", 1.512, "ms", LowerIsBetter),
			m("rtt_mdev_ms", 0.201, "ms", LowerIsBetter),
			m("packet_loss_percent", 33.3333, "%", LowerIsBetter),
		}},
		{"BusyBox has no mdev", []byte(`PING 127.0.0.1 (127.0.0.1): 56 data bytes
64 bytes from 127.0.0.1: seq=0 ttl=64 time=0.047 ms

--- 127.0.0.1 ping statistics ---
3 packets transmitted, 3 packets received, 0% packet loss
round-trip min/avg/max = 0.047/0.060/0.071 ms
`), []Metric{
			m("rtt_min_ms", 0.047, "ms", LowerIsBetter),
			m("rtt_avg_ms", 0.060, "ms", LowerIsBetter),
			m("rtt_max_ms", 0.071, "ms", LowerIsBetter),
			m("packet_loss_percent", 0, "%", LowerIsBetter),
		}},
		{"duplicates", []byte("4 packets transmitted, 4 received, +2 duplicates, 0% packet loss, time 3003ms\nrtt min/avg/max/mdev = 1/2/3/0.5 ms\n"), []Metric{
			m("rtt_min_ms", 1, "ms", LowerIsBetter),
			m("rtt_avg_ms", 2, "ms", LowerIsBetter),
			m("rtt_max_ms", 3, "ms", LowerIsBetter),
			m("rtt_mdev_ms", 0.5, "ms", LowerIsBetter),
			m("packet_loss_percent", 0, "%", LowerIsBetter),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParsePing(tt.input)
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

func TestParsePingErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"unknown host", "ping: nosuchhost: Name or service not known\n", "ping reported an error: nosuchhost: Name or service not known"},
		{"no permission", "ping: socktype: SOCK_RAW\nping: socket: Operation not permitted\n", "ping reported an error: socktype: SOCK_RAW"},
		{"interrupted before the summary", "PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data.\n64 bytes from 127.0.0.1: icmp_seq=1 ttl=64 time=0.048 ms\n", "no \"packets transmitted\" statistics line"},
		{"empty", "", "ping: empty output"},
		{"iputils, every packet lost", "PING 10.0.0.9 (10.0.0.9) 56(84) bytes of data.\nFrom 10.0.0.1 icmp_seq=1 Destination Host Unreachable\n\n--- 10.0.0.9 ping statistics ---\n10 packets transmitted, 0 received, +10 errors, 100% packet loss, time 9214ms\n",
			"ping: no reply at all (10 packets transmitted, 0 received, +10 errors, 100% packet loss, time 9214ms): the target does not answer ICMP echo"},
		{"BusyBox, every packet lost", "--- 10.0.0.9 ping statistics ---\r\n2 packets transmitted, 0 packets received, 100% packet loss\r\n",
			"ping: no reply at all (2 packets transmitted, 0 packets received, 100% packet loss)"},
		{"counts only, every packet lost", "3 packets transmitted, 0 received\n", "ping: no reply at all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParsePing, []byte(tt.input), tt.want)
		})
	}
}
