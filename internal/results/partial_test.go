package results

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// damaged returns a real fixture with old replaced by replacement. old must occur exactly once, so
// that each case damages the line it names and nothing else.
func damaged(t *testing.T, fixture, old, replacement string) []byte {
	t.Helper()
	text := string(readFixture(t, fixture))
	if n := strings.Count(text, old); n != 1 {
		t.Fatalf("%q occurs %d times in %s, want once", old, n, fixture)
	}
	return []byte(strings.Replace(text, old, replacement, 1))
}

// damagedJSON returns a real JSON fixture with the value at path (object keys, or array indexes)
// deleted. The path must exist.
func damagedJSON(t *testing.T, fixture string, path ...string) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal(readFixture(t, fixture), &doc); err != nil {
		t.Fatal(err)
	}
	node := doc
	for i, key := range path {
		last := i == len(path)-1
		switch n := node.(type) {
		case map[string]any:
			if _, ok := n[key]; !ok {
				t.Fatalf("%s has no %s", fixture, strings.Join(path[:i+1], "."))
			}
			if last {
				delete(n, key)
			}
			node = n[key]
		case []any:
			index, err := strconv.Atoi(key)
			if err != nil || index < 0 || index >= len(n) || last {
				t.Fatalf("%s: cannot follow %s", fixture, strings.Join(path[:i+1], "."))
			}
			node = n[index]
		default:
			t.Fatalf("%s: %s is not an object or array", fixture, strings.Join(path[:i+1], "."))
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every parser refuses a real output whose headline figures cannot all be read, a line in a
// spelling it does not know or a line left out, with an error that names the line or what is
// missing, rather than returning the figures it could read.
func TestParsersRefusePartialOutput(t *testing.T) {
	const (
		sysbenchCPU = "sysbench-cpu.txt"
		sysbenchMem = "sysbench-memory-1K-t2.txt"
		hpccSweep   = "hpcc-sweep-np2.txt"
		stressYAML  = "stress-ng-vm-metrics-yaml.yaml"
		stressText  = "stress-ng-cpu-matrixprod.txt"
		iozoneAuto  = "iozone-auto-g64M.txt"
		iozoneI012  = "iozone-auto-n64k-g4m-i0i1i2-e-R.txt"
		iozoneOne   = "iozone-i0i1i2-r64k-s256M-R.txt"
		iperfTCP    = "iperf3-tcp-5s.json"
		iperfUDP    = "iperf3-udp-1G-5s.json"
		fioRead     = "fio-randread-4k-qd16.json"
		pingIputils = "ping-c10-loopback.txt"
		pingBusyBox = "ping-busybox-c3-loopback.txt"
		pingInet    = "ping-inetutils-c3-loopback.txt"
		netperfRR   = "netperf-tcp-rr-I95,50-i10,3.txt"
		netperfOld  = "netperf-tcp-rr-classic.txt"
		netcat1G    = "netcat-dd-1G.txt"
	)
	hpccRow := "WR11C2R4         400    64     2     1               0.20              2.187e-01"
	hpccResidual := "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0077415 ...... PASSED\n"
	tests := []struct {
		name    string
		parse   func([]byte) ([]Metric, error)
		fixture string
		input   func(t *testing.T) []byte
		want    string
	}{
		{"sysbench-cpu: events per second with a decimal comma", ParseSysbenchCPU, sysbenchCPU,
			func(t *testing.T) []byte { return damaged(t, sysbenchCPU, "218.59", "218,59") },
			`sysbench-cpu: cannot read the line "events per second:   218,59"`},
		{"sysbench-cpu: avg spelled mean", ParseSysbenchCPU, sysbenchCPU,
			func(t *testing.T) []byte { return damaged(t, sysbenchCPU, "avg:", "mean:") },
			`sysbench-cpu: cannot read the line "mean:                                    9.10" of the "Latency (ms):" block`},
		{"sysbench-cpu: max deleted", ParseSysbenchCPU, sysbenchCPU,
			func(t *testing.T) []byte {
				return damaged(t, sysbenchCPU, "         max:                                  121.39\n", "")
			},
			`the "Latency (ms):" block has no "max:" line`},
		{"sysbench-cpu: percentile deleted", ParseSysbenchCPU, sysbenchCPU,
			func(t *testing.T) []byte {
				return damaged(t, sysbenchCPU, "         95th percentile:                       33.12\n", "")
			},
			`the "Latency (ms):" block has no "<N>th percentile:" line`},
		{"sysbench-cpu: latency title deleted", ParseSysbenchCPU, sysbenchCPU,
			func(t *testing.T) []byte { return damaged(t, sysbenchCPU, "Latency (ms):\n", "") },
			`no "Latency (ms):" block`},
		{"sysbench-memory: MB for MiB", ParseSysbenchMemory, sysbenchMem,
			func(t *testing.T) []byte { return damaged(t, sysbenchMem, "MiB transferred", "MB transferred") },
			`no "<n> MiB transferred (<rate> MiB/sec)" line`},
		{"sysbench-memory: total operations deleted", ParseSysbenchMemory, sysbenchMem,
			func(t *testing.T) []byte {
				return damaged(t, sysbenchMem, "Total operations: 2097152 (844534.71 per second)\n", "")
			},
			`no "Total operations: <n> (<rate> per second)" line`},
		{"sysbench-memory: per sec for per second", ParseSysbenchMemory, sysbenchMem,
			func(t *testing.T) []byte { return damaged(t, sysbenchMem, "844534.71 per second", "844534.71 per sec") },
			`cannot read the line "Total operations: 2097152 (844534.71 per sec)"`},
		{"hpcc: a Summary key in another spelling", ParseHPCC, hpccSweep,
			func(t *testing.T) []byte { return damaged(t, hpccSweep, "StarFFT_Gflops=", "StarFFT_GFlops=") },
			"the Summary section has no StarFFT_Gflops= line"},
		{"hpcc: a Summary value with a decimal comma", ParseHPCC, hpccSweep,
			func(t *testing.T) []byte { return damaged(t, hpccSweep, "PTRANS_GBs=4.17995", "PTRANS_GBs=4,17995") },
			`cannot read the Summary line "PTRANS_GBs=4,17995"`},
		{"hpcc: the Summary cut after HPL_Tflops", ParseHPCC, hpccSweep,
			func(t *testing.T) []byte {
				full := string(readFixture(t, hpccSweep))
				return []byte(full[:strings.Index(full, "HPL_time=")])
			},
			"the Summary section has no StarDGEMM_Gflops=, SingleDGEMM_Gflops=, PTRANS_GBs= (and 27 more) line"},
		{"hpcc: an HPL result line mangled", ParseHPCC, hpccSweep,
			func(t *testing.T) []byte {
				return damaged(t, hpccSweep, hpccRow, strings.Replace(hpccRow, "e-01", "e-O1", 1))
			},
			`cannot read the HPL result line "WR11C2R4         400    64     2     1               0.20              2.187e-O1"`},
		{"hpcc: a residual check line deleted", ParseHPCC, hpccSweep,
			func(t *testing.T) []byte { return damaged(t, hpccSweep, hpccResidual, "") },
			"the HPL point N=400 NB=64 P=2 Q=1 has no PASSED residual check line although Success=1"},
		{"stress-ng YAML: real-time rate in another spelling", ParseStressNG, stressYAML,
			func(t *testing.T) []byte {
				return damaged(t, stressYAML, "bogo-ops-per-second-real-time:", "bogo-ops-per-second-realtime:")
			},
			`the entry of stressor "vm" has no bogo-ops-per-second-real-time`},
		{"stress-ng YAML: max-rss with a unit", ParseStressNG, stressYAML,
			func(t *testing.T) []byte { return damaged(t, stressYAML, "max-rss: 263952", "max-rss: 263952 KB") },
			`cannot read max-rss of stressor "vm": "263952 KB"`},
		{"stress-ng YAML: the stressor's name in another spelling", ParseStressNG, stressYAML,
			func(t *testing.T) []byte { return damaged(t, stressYAML, "- stressor: vm", "- name: vm") },
			"entry 1 of metrics has no stressor name"},
		{"stress-ng text: a column of the row lost", ParseStressNG, stressText,
			func(t *testing.T) []byte { return damaged(t, stressText, "0.02       247.52", "0.02") },
			`cannot read the metrics row "stress-ng: metrc: [26193] cpu                2481     10.02      2.22      0.02        1109.71"`},
		{"stress-ng text: the row deleted", ParseStressNG, stressText,
			func(t *testing.T) []byte {
				return damaged(t, stressText, "stress-ng: metrc: [26193] cpu                2481     10.02      2.22      0.02       247.52        1109.71\n", "")
			},
			`the metrics table has no row for the stressor "cpu" that was dispatched`},
		{"iozone: an automatic-mode row deleted", ParseIozone, iozoneAuto,
			func(t *testing.T) []byte {
				return damaged(t, iozoneAuto, "             128      16  2969325  9129573 10567140 20804356 25804035  7082197  5847904  18012359  18012359  7582312  6406138  8036304  8548124\n", "")
			},
			"the automatic-mode table jumps from 128k files and 8k records to 128k and 32k"},
		{"iozone: a figure of one row blanked", ParseIozone, iozoneI012,
			func(t *testing.T) []byte { return damaged(t, iozoneI012, "   163699   324665", "            324665") },
			"the row of 64k files and 8k records has figures for other tests (rewrite read reread random_read random_write) than the first row"},
		{"iozone: a figure with a letter", ParseIozone, iozoneOne,
			func(t *testing.T) []byte { return damaged(t, iozoneOne, "2802633  2905058", "2802633  29O5058") },
			`cannot read the row "262144      64   876920  2802633  29O5058  1208532  1545523  1626304" of the result table`},
		{"iozone: cut before its end line", ParseIozone, iozoneOne,
			func(t *testing.T) []byte {
				full := string(readFixture(t, iozoneOne))
				return []byte(full[:strings.Index(full, "iozone test complete.")])
			},
			`no "iozone test complete." line after the table`},
		{"iozone table: a figure of one row blanked", func(b []byte) ([]Metric, error) {
			ms, _, err := ParseIozoneAuto(b)
			return ms, err
		}, iozoneI012,
			func(t *testing.T) []byte { return damaged(t, iozoneI012, "   163699   324665", "            324665") },
			"the row of 64k files and 8k records has figures for other tests"},
		{"iperf3: sum_received in another spelling", ParseIperf3, iperfTCP,
			func(t *testing.T) []byte { return damaged(t, iperfTCP, `"sum_received"`, `"sum_rcvd"`) },
			"has end.sum_sent but no end.sum_received"},
		{"iperf3: the sender's rate left out", ParseIperf3, iperfTCP,
			func(t *testing.T) []byte { return damagedJSON(t, iperfTCP, "end", "sum_sent", "bits_per_second") },
			"end.sum_sent has no bits_per_second"},
		{"iperf3: the receiver's rate left out", ParseIperf3, iperfTCP,
			func(t *testing.T) []byte { return damagedJSON(t, iperfTCP, "end", "sum_received", "bits_per_second") },
			"end.sum_received has no bits_per_second"},
		{"iperf3: the sender's sum left out", ParseIperf3, iperfTCP,
			func(t *testing.T) []byte { return damagedJSON(t, iperfTCP, "end", "sum_sent") },
			"has end.sum_received but no end.sum_sent"},
		{"iperf3: the remote CPU left out", ParseIperf3, iperfTCP,
			func(t *testing.T) []byte {
				return damagedJSON(t, iperfTCP, "end", "cpu_utilization_percent", "remote_total")
			},
			"end.cpu_utilization_percent lacks host_total or remote_total"},
		{"iperf3: UDP jitter left out", ParseIperf3, iperfUDP,
			func(t *testing.T) []byte { return damagedJSON(t, iperfUDP, "end", "sum_received", "jitter_ms") },
			"the UDP report's end.sum_received has no jitter_ms"},
		{"iperf3: UDP loss left out", ParseIperf3, iperfUDP,
			func(t *testing.T) []byte { return damagedJSON(t, iperfUDP, "end", "sum_received", "lost_percent") },
			"the UDP report's end.sum_received has no lost_percent"},
		{"fio: bw left out", ParseFio, fioRead,
			func(t *testing.T) []byte { return damagedJSON(t, fioRead, "jobs", "0", "read", "bw") },
			`fio: job "randread" read did I/O but has no bw`},
		{"fio: clat_ns left out", ParseFio, fioRead,
			func(t *testing.T) []byte { return damagedJSON(t, fioRead, "jobs", "0", "read", "clat_ns") },
			`fio: job "randread" read did I/O but has no clat_ns`},
		{"fio: the percentiles left out", ParseFio, fioRead,
			func(t *testing.T) []byte {
				return damagedJSON(t, fioRead, "jobs", "0", "read", "clat_ns", "percentile")
			},
			`fio: job "randread" read has no 99th percentile in clat_ns.percentile`},
		{"fio: lat_ns left out", ParseFio, fioRead,
			func(t *testing.T) []byte { return damagedJSON(t, fioRead, "jobs", "0", "read", "lat_ns") },
			`fio: job "randread" read did I/O but has no lat_ns`},
		{"fio: iops left out", ParseFio, fioRead,
			func(t *testing.T) []byte { return damagedJSON(t, fioRead, "jobs", "0", "read", "iops") },
			`fio: job "randread" read did I/O but has no iops`},
		{"ping iputils: the rtt line deleted", ParsePing, pingIputils,
			func(t *testing.T) []byte {
				return damaged(t, pingIputils, "rtt min/avg/max/mdev = 0.044/0.052/0.061/0.005 ms\n", "")
			},
			`no "rtt min/avg/max" (or "round-trip min/avg/max") line after the packet counts`},
		{"ping iputils: mdev named but not given", ParsePing, pingIputils,
			func(t *testing.T) []byte {
				return damaged(t, pingIputils, "0.044/0.052/0.061/0.005", "0.044/0.052/0.061")
			},
			`the round-trip line "rtt min/avg/max/mdev = 0.044/0.052/0.061 ms" names a deviation but has none`},
		{"ping BusyBox: a decimal comma", ParsePing, pingBusyBox,
			func(t *testing.T) []byte { return damaged(t, pingBusyBox, "0.045/0.067/0.080", "0.045/0.067/0,080") },
			`cannot read the round-trip line "round-trip min/avg/max = 0.045/0.067/0,080 ms"`},
		{"ping BusyBox: a fourth figure without its label", ParsePing, pingBusyBox,
			func(t *testing.T) []byte {
				return damaged(t, pingBusyBox, "0.045/0.067/0.080", "0.045/0.067/0.080/0.001")
			},
			`the round-trip line "round-trip min/avg/max = 0.045/0.067/0.080/0.001 ms" has more figures than min/avg/max`},
		{"ping inetutils: the round-trip line deleted", ParsePing, pingInet,
			func(t *testing.T) []byte {
				return damaged(t, pingInet, "round-trip min/avg/max/stddev = 0.065/0.069/0.071/0.000 ms\n", "")
			},
			`no "rtt min/avg/max" (or "round-trip min/avg/max") line`},
		{"netperf: a latency column in another spelling", ParseNetperf, netperfRR,
			func(t *testing.T) []byte {
				return damaged(t, netperfRR, "99th Percentile Latency Microseconds", "99th Percentile Latency (us)")
			},
			`unknown -o column "99th Percentile Latency (us)"`},
		{"netperf classic: the width line deleted", ParseNetperf, netperfOld,
			func(t *testing.T) []byte {
				return damaged(t, netperfOld, "!!! Confidence intervals: Throughput      : 15.957%\n", "")
			},
			`has no "!!! Confidence intervals: Throughput : <width>%" line`},
		{"netperf classic: the width with a decimal comma", ParseNetperf, netperfOld,
			func(t *testing.T) []byte { return damaged(t, netperfOld, "15.957%", "15,957%") },
			`cannot read the confidence width line "!!! Confidence intervals: Throughput      : 15,957%"`},
		{"netperf classic: the rate with a decimal comma", ParseNetperf, netperfOld,
			func(t *testing.T) []byte { return damaged(t, netperfOld, "42708.99", "42708,99") },
			`cannot read the result row "16384  131072 1        1       2.00     42708,99"`},
		{"netcat: records out deleted", ParseNetcat, netcat1G,
			func(t *testing.T) []byte { return damaged(t, netcat1G, "1024+0 records out\n", "") },
			`dd's "records in" and "records out" lines are not both there beside its summary (1 found)`},
		{"netcat: the summary in BSD dd's spelling", ParseNetcat, netcat1G,
			func(t *testing.T) []byte {
				return damaged(t, netcat1G, "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 3.30649 s, 325 MB/s",
					"1073741824 bytes transferred in 3.30649 secs (324733126 bytes/sec)")
			},
			`cannot read dd's summary (want "<n> bytes ... copied, <t> s, <rate>"): 1073741824 bytes transferred in 3.30649 secs`},
		{"netcat: the summary deleted", ParseNetcat, netcat1G,
			func(t *testing.T) []byte {
				return damaged(t, netcat1G, "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 3.30649 s, 325 MB/s\n", "")
			},
			"no dd summary line after dd's records"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The fixture itself is read whole, so the refusal comes from the damage alone.
			ms, err := tt.parse(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatalf("the undamaged %s: %v", tt.fixture, err)
			}
			checkMetrics(t, ms)
			checkParseError(t, tt.parse, tt.input(t), tt.want)
		})
	}
}
