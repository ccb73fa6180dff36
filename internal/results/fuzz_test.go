package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzParser seeds f with the fixtures whose names start with one of
// prefixes and checks that parse either fails or returns well-formed
// metrics, and never panics.
func fuzzParser(f *testing.F, parse func([]byte) ([]Metric, error), prefixes ...string) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, ".cmd") {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				f.Add(readFixture(f, filepath.Base(name)))
				break
			}
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, input []byte) {
		ms, err := parse(input)
		if err != nil {
			if ms != nil {
				t.Errorf("metrics %+v returned with error %v", ms, err)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		checkMetrics(t, ms)
	})
}

func FuzzParseHPCC(f *testing.F) {
	f.Add([]byte("Begin of Summary section.\nSuccess=1\nHPL_Tflops=0.5\nMinPingPongLatency_usec=-1\nEnd of Summary section.\n"))
	f.Add([]byte("Begin of HPL section.\nWR11C2R4 200 32 1 2 0.00 6.897e+00\n||Ax-b||_oo/(eps)= 0.0076 ...... PASSED\n" +
		"WR11C2R4 400 32 1 2 0.19 2.257e-01\n||Ax-b||_oo/(eps)= 0.0081 ...... FAILED\nEnd of HPL section.\n" +
		"Begin of Summary section.\nSuccess=1\nHPL_Tflops=0.006897\nEnd of Summary section.\n"))
	fuzzParser(f, ParseHPCC, "hpcc")
}

func FuzzParseSysbenchCPU(f *testing.F) {
	f.Add([]byte("CPU speed:\n    events per second:   218.59\nLatency (ms):\n         min:  1.20\n         95th percentile:  33.12\n"))
	fuzzParser(f, ParseSysbenchCPU, "sysbench")
}

func FuzzParseSysbenchMemory(f *testing.F) {
	f.Add([]byte("Total operations: 2048 ( 1776.64 per second)\n\n2048.00 MiB transferred (1776.64 MiB/sec)\n"))
	fuzzParser(f, ParseSysbenchMemory, "sysbench")
}

func FuzzParseStressNG(f *testing.F) {
	f.Add([]byte(stressNGTwoStressorsYAML))
	fuzzParser(f, ParseStressNG, "stress-ng")
}

func FuzzParseIozone(f *testing.F) {
	f.Add([]byte(iozoneHeader + iozoneRowText(map[int]string{0: "262144", 1: "64", 2: "876920", 3: "2802633", 6: "1545523", 7: "1626304"})))
	fuzzParser(f, ParseIozone, "iozone")
}

func FuzzParseIperf3(f *testing.F) {
	f.Add([]byte(iperf3TwoStreams))
	fuzzParser(f, ParseIperf3, "iperf3")
}

func FuzzParseFio(f *testing.F) {
	f.Add([]byte(fioTwoJobsJSONPlus))
	fuzzParser(f, ParseFio, "fio")
}

func FuzzParsePing(f *testing.F) {
	f.Add([]byte("3 packets transmitted, 3 packets received, 0% packet loss\nround-trip min/avg/max = 0.047/0.060/0.071 ms\n"))
	fuzzParser(f, ParsePing, "ping")
}

func FuzzParseNetperf(f *testing.F) {
	f.Add([]byte(netperfStreamHeader + "357605.71,KBytes/s,95,5.000000,4,3.1\n"))
	fuzzParser(f, ParseNetperf, "netperf")
}

func FuzzParseNetcat(f *testing.F) {
	f.Add([]byte("1024+0 Datensätze ein\n1024+0 Datensätze aus\n1073741824 Bytes (1,1 GB, 1,0 GiB) kopiert, 1,2 s, 894 MB/s\n"))
	fuzzParser(f, ParseNetcat, "netcat")
}

// fuzzTable seeds f like fuzzParser and checks that read either fails with a one-line error or
// returns a table that passes Check and survives its own CSV, and never panics.
func fuzzTable(f *testing.F, read func([]byte) (Table, error), prefixes ...string) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasSuffix(name, ".cmd") {
			continue
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				f.Add(readFixture(f, name))
				break
			}
		}
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, input []byte) {
		table, err := read(input)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error is not one line: %q", err)
			}
			return
		}
		if err := table.Check(); err != nil {
			t.Fatalf("a table that fails its own check: %v", err)
		}
		again, err := ParseTableCSV(table.CSV())
		if err != nil {
			t.Fatalf("the table's CSV does not read back: %v", err)
		}
		if len(again.Rows) != len(table.Rows) || len(again.Columns) != len(table.Columns) {
			t.Errorf("CSV round trip changed the shape: %dx%d, then %dx%d", len(table.Rows), len(table.Columns), len(again.Rows), len(again.Columns))
		}
	})
}

func FuzzIozoneTable(f *testing.F) {
	f.Add([]byte(iozoneHeader + iozoneRowText(map[int]string{0: "1024", 1: "8", 2: "110", 6: "310", 7: "410"})))
	fuzzTable(f, IozoneTable, "iozone")
}

func FuzzIperf3Intervals(f *testing.F) {
	f.Add([]byte(`{"intervals": [{"sum": {"start": 0, "end": 1, "bits_per_second": 5, "omitted": true}}]}`))
	fuzzTable(f, Iperf3Intervals, "iperf3")
}

func FuzzParseTableCSV(f *testing.F) {
	f.Add([]byte("file_KiB,record_KiB,write_KiB_per_s\n64,4,189331\n128,4,\n"))
	f.Add([]byte("start_s,end_s,bits_per_s\n0,1.001,26844274295\n"))
	f.Add([]byte("a,\"b\"\r\n1,2\r\n"))
	fuzzTable(f, ParseTableCSV)
}
