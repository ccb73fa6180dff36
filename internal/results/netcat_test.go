package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func netcatMetrics(bytes, seconds float64) []Metric {
	return []Metric{
		m("bytes", bytes, "B", HigherIsBetter),
		m("transfer_seconds", seconds, "s", LowerIsBetter),
		m("bytes_per_second", bytes/seconds, "B/s", HigherIsBetter),
	}
}

func TestParseNetcat(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  []Metric
	}{
		{"1 GiB over loopback", readFixture(t, "netcat-dd-1G.txt"), netcatMetrics(1073741824, 3.30649)},
		{"100 MiB over loopback", readFixture(t, "netcat-dd-100M.txt"), netcatMetrics(104857600, 0.195737)},
		{"100 MiB through ncat, its own byte count last", readFixture(t, "netcat-dd-100M-ncat.txt"), netcatMetrics(104857600, 0.196728)},
		{"1 KiB, seconds in %g exponent form, nc line last", readFixture(t, "netcat-dd-1k.txt"), netcatMetrics(1024, 4.6908e-05)},
		{"single byte, no parenthesis", []byte("1+0 records in\n1+0 records out\n1 byte copied, 2.1e-05 s, 47.6 kB/s\n"), netcatMetrics(1, 2.1e-05)},
		{"coreutils before 8.24", []byte("100+0 records in\n100+0 records out\n104857600 bytes (105 MB) copied, 0.0943 s, 1.1 GB/s\n"), netcatMetrics(104857600, 0.0943)},
		{"German locale, decimal comma", []byte("1024+0 Datensätze ein\n1024+0 Datensätze aus\n1073741824 Bytes (1,1 GB, 1,0 GiB) kopiert, 1,2 s, 894 MB/s\n"), netcatMetrics(1073741824, 1.2)},
		{"BusyBox", []byte("100+0 records in\n100+0 records out\n104857600 bytes (100.0MB) copied, 0.123456 seconds, 810.0MB/s\n"), netcatMetrics(104857600, 0.123456)},
		{"partial last record", []byte("1+1 records in\n1+1 records out\n1500000 bytes (1.5 MB, 1.4 MiB) copied, 0.01 s, 150 MB/s\r\n"), netcatMetrics(1500000, 0.01)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseNetcat(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			if diff := cmp.Diff(tt.want, ms, approx); diff != "" {
				t.Errorf("metrics mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseNetcatErrors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"no listener", readFixture(t, "netcat-error-refused.txt"), "netcat: nc reported an error, so the transfer did not complete: connect to 127.0.0.1 port 12867 (tcp) failed: Connection refused"},
		{"no listener, SIGPIPE ignored", readFixture(t, "netcat-error-refused-broken-pipe.txt"), "nc reported an error"},
		{"dd error alone", []byte("dd: error writing 'standard output': Broken pipe\n1+0 records in\n0+0 records out\n65536 bytes (66 kB, 64 KiB) copied, 0.0093 s, 7.0 MB/s\n"),
			"dd reported an error, so the transfer did not complete: error writing 'standard output': Broken pipe"},
		{"fewer records out", []byte("100+0 records in\n99+0 records out\n103809024 bytes copied, 0.1 s, 1 GB/s\n"), "dd read 100+0 records but wrote 99+0"},
		{"traditional nc has no -N", readFixture(t, "netcat-error-traditional-nc-no-N.txt"),
			"netcat: nc.traditional reported an error, so the transfer did not complete: invalid option -- 'N'; the sender needs an nc that knows -N and -v, such as OpenBSD netcat"},
		{"BusyBox nc has no -N", readFixture(t, "netcat-error-busybox-nc-no-N.txt"),
			"netcat: nc reported an error, so the transfer did not complete: invalid option -- 'N'; the sender needs an nc that knows -N and -v"},
		{"BusyBox dd prints no summary", readFixture(t, "netcat-busybox-dd-100M.txt"),
			"netcat: no dd summary line after dd's records (\"<n> bytes ... copied, <t> s, <rate>\"): a dd built without one (BusyBox without FEATURE_DD_THIRD_STATUS_LINE, such as Debian's busybox) cannot time the transfer; use coreutils dd"},
		{"no summary", []byte("Connection to 127.0.0.1 12866 port [tcp/*] succeeded!\n100+0 records in\n100+0 records out\n"), "no dd summary line"},
		{"summary without seconds", []byte("104857600 bytes (105 MB, 100 MiB) copied, soon, 1 GB/s\n"), "cannot read bytes and seconds"},
		{"two fields", []byte("104857600 bytes copied, 0.1 s\n"), "cannot read dd's summary"},
		{"zero bytes", []byte("0+0 records in\n0+0 records out\n0 bytes copied, 0.000738936 s, 0.0 kB/s\n"), "dd copied 0 bytes"},
		{"zero seconds", []byte("1 byte copied, 0 s, Infinity B/s\n"), "too fast to time"},
		{"huge byte count", []byte("99999999999999999999999 bytes copied, 1 s, 1 B/s\n"), "byte count out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParseNetcat, tt.input, tt.want)
		})
	}
}
