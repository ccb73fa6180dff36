package bands

import (
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestTableMatchesTheAnchorsNote lists, row by row, the figures of the anchors note's section 4
// ("Expected ranges a correct tool should report on KVM") and the sources its "why" column names:
// the table must hold exactly these rows.
func TestTableMatchesTheAnchorsNote(t *testing.T) {
	type row struct {
		family     Family
		tuned      bool
		variant    string
		low, high  float64
		multiplier bool
		sources    string
	}
	want := []row{
		// dense compute: 0.90–1.00 / 0.97–1.00; Felter 0.977 tuned / 0.83 untuned, Monash 0.98.
		{Compute, false, "", 0.90, 1.00, false, "felter2014 scientific-wg"},
		{Compute, true, "", 0.97, 1.00, false, "felter2014 scientific-wg"},
		// memory bandwidth: 0.95–1.00 / 0.97–1.00; Felter STREAM 0.970–0.989.
		{MemoryBandwidth, false, "", 0.95, 1.00, false, "felter2014"},
		{MemoryBandwidth, true, "", 0.97, 1.00, false, "felter2014"},
		// random memory: 0.85–1.00 / 0.95–1.00; Felter GUPS 0.86 / 0.99; hugepages from scientific-wg.
		{RandomMemory, false, "", 0.85, 1.00, false, "felter2014"},
		{RandomMemory, true, "", 0.95, 1.00, false, "felter2014 scientific-wg"},
		// storage sequential: 0.90–1.00 / 0.95–1.00; Felter fio 0.986–0.994.
		{StorageSequential, false, "", 0.90, 1.00, false, "felter2014"},
		{StorageSequential, true, "", 0.95, 1.00, false, "felter2014"},
		// storage random IOPS: 0.45–0.75 / 0.7–0.95; Felter 0.49–0.55, KubeVirt 0.6 of a plain VM, IOThreads 2x.
		{StorageRandomIOPS, false, "", 0.45, 0.75, false, "felter2014 kubevirt-4182"},
		{StorageRandomIOPS, true, "", 0.7, 0.95, false, "felter2014 redhat-iothreads"},
		// storage latency: 1.2–2.0x / 1.1–1.5x; Felter p50 1.5x, p99 2.0x.
		{StorageLatency, false, "", 1.2, 2.0, true, "felter2014"},
		{StorageLatency, true, "", 1.1, 1.5, true, "felter2014"},
		// network throughput ≤ 10 GbE: 0.85–1.00 (masquerade 0.6–0.9 without multiqueue) / 0.95–1.00.
		{NetworkThroughput, false, "", 0.85, 1.00, false, "felter2014"},
		{NetworkThroughput, false, "masquerade without multiqueue", 0.6, 0.9, false, "kubevirt-community-182"},
		{NetworkThroughput, true, "", 0.95, 1.00, false, "felter2014"},
		// network latency: RTT 1.3–2.0x / 1.1–1.5x; Felter +30 µs, sockperf +15.6 µs with vhost.
		{NetworkLatency, false, "", 1.3, 2.0, true, "felter2014 microvm-networking"},
		{NetworkLatency, true, "", 1.1, 1.5, true, "microvm-networking"},
	}
	if len(Table) != len(want) {
		t.Fatalf("Table has %d rows, the note %d", len(Table), len(want))
	}
	for i, w := range want {
		b := Table[i]
		got := row{b.Family, b.Tuned, b.Variant, b.Low, b.High, b.Multiplier, strings.Join(b.Sources, " ")}
		if got != w {
			t.Errorf("row %d: got %+v, the note says %+v", i, got, w)
		}
	}
}

// TestEverySourceIsListed checks that each band cites sources that Sources describes, and that
// every source has an address.
func TestEverySourceIsListed(t *testing.T) {
	known := map[string]bool{}
	for _, s := range Sources {
		if s.Title == "" || s.Ref == "" {
			t.Errorf("source %s lacks a title or a reference", s.ID)
		}
		known[s.ID] = true
	}
	for _, b := range Table {
		if len(b.Sources) == 0 {
			t.Errorf("band %s tuned=%v cites no source", b.Family, b.Tuned)
		}
		for _, id := range b.Sources {
			if !known[id] {
				t.Errorf("band %s tuned=%v cites unknown source %q", b.Family, b.Tuned, id)
			}
		}
	}
}

func TestSpeedRangeInvertsMultipliers(t *testing.T) {
	lo, hi := Band{Low: 1.25, High: 2, Multiplier: true}.SpeedRange()
	if lo != 0.5 || hi != 0.8 {
		t.Errorf("1.25–2x as a speed ratio: got %g–%g, want 0.5–0.8", lo, hi)
	}
	lo, hi = Band{Low: 0.45, High: 0.75}.SpeedRange()
	if lo != 0.45 || hi != 0.75 {
		t.Errorf("a ratio band changed: %g–%g", lo, hi)
	}
}

func TestFamilyOf(t *testing.T) {
	hpcc := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkHPCC}
	fioRand := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{RW: "randread"}}
	fioSeq := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{RW: "read"}}
	fioDefault := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkFio}
	iozoneDirect := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{DirectIO: true}}
	iozoneCached := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{}}
	tests := []struct {
		b      vmbenchv1.Benchmark
		metric string
		want   Family
	}{
		{hpcc, "HPL_Tflops", Compute},
		{hpcc, "StarDGEMM_Gflops", Compute},
		{hpcc, "SingleSTREAM_Triad", MemoryBandwidth},
		{hpcc, "MPIRandomAccess_GUPs", RandomMemory},
		{hpcc, "AvgPingPongLatency_usec", NetworkLatency},
		{hpcc, "RandomlyOrderedRingLatency_usec", NetworkLatency},
		{hpcc, "AvgPingPongBandwidth_GBytes", noFamily},
		{hpcc, "MPIFFT_Gflops", noFamily},
		{hpcc, "PTRANS_GBs", noFamily},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchCPU}, "events_per_second", noFamily},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory}, "mib_per_second", MemoryBandwidth},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory}, "bs1M_mib_per_second", MemoryBandwidth},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory}, "latency_avg_ms", noFamily},
		{fioRand, "read_iops", StorageRandomIOPS},
		{fioDefault, "read_iops", StorageRandomIOPS},
		{fioSeq, "read_iops", StorageSequential},
		{fioSeq, "read_bw_kib_per_second", StorageSequential},
		{fioSeq, "rand_read_read_iops", StorageRandomIOPS},
		{fioRand, "seq_write_write_bw_kib_per_second", StorageSequential},
		{fioRand, "read_clat_p99_ns", StorageLatency},
		{fioRand, "read_lat_mean_ns", noFamily},
		{iozoneDirect, "write", StorageSequential},
		{iozoneDirect, "random_read", noFamily},
		{iozoneCached, "write", noFamily},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIperf3}, "bits_per_second", NetworkThroughput},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIperf3}, "rtt_mean_us", noFamily},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetcat}, "bytes_per_second", NetworkThroughput},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetperf}, "tcp_stream_bits_per_second", NetworkThroughput},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetperf}, "tcp_rr_transactions_per_second", NetworkLatency},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkNetperf}, "tcp_rr_latency_p99_us", NetworkLatency},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkPing}, "rtt_avg_ms", NetworkLatency},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkPing}, "rtt_mdev_ms", noFamily},
	}
	for _, tt := range tests {
		if got := FamilyOf(tt.b, tt.metric); got != tt.want {
			t.Errorf("FamilyOf(%s, %s) = %q, want %q", tt.b.Type, tt.metric, got, tt.want)
		}
	}
}
