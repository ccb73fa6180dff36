package results

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseHPCC(t *testing.T) {
	ms, err := ParseHPCC(readFixture(t, "hpcc-np2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, ms)
	want := []Metric{
		m("HPL_Tflops", 0.000375035, "Tflop/s", HigherIsBetter),
		m("StarDGEMM_Gflops", 0.599357, "Gflop/s", HigherIsBetter),
		m("SingleDGEMM_Gflops", 0.774767, "Gflop/s", HigherIsBetter),
		m("PTRANS_GBs", 0.0626931, "GB/s", HigherIsBetter),
		m("MPIRandomAccess_GUPs", 0.00214772, "GUP/s", HigherIsBetter),
		m("MPIRandomAccess_LCG_GUPs", 0.000517392, "GUP/s", HigherIsBetter),
		m("StarRandomAccess_GUPs", 0.0103647, "GUP/s", HigherIsBetter),
		m("SingleRandomAccess_GUPs", 0.00715513, "GUP/s", HigherIsBetter),
		m("StarRandomAccess_LCG_GUPs", 0.0326531, "GUP/s", HigherIsBetter),
		m("SingleRandomAccess_LCG_GUPs", 0.0394419, "GUP/s", HigherIsBetter),
		m("StarSTREAM_Copy", 11.5478, "GB/s", HigherIsBetter),
		m("StarSTREAM_Scale", 11.666, "GB/s", HigherIsBetter),
		m("StarSTREAM_Add", 10.2784, "GB/s", HigherIsBetter),
		m("StarSTREAM_Triad", 12.0066, "GB/s", HigherIsBetter),
		m("SingleSTREAM_Copy", 15.6111, "GB/s", HigherIsBetter),
		m("SingleSTREAM_Scale", 12.7182, "GB/s", HigherIsBetter),
		m("SingleSTREAM_Add", 14.6752, "GB/s", HigherIsBetter),
		m("SingleSTREAM_Triad", 13.9718, "GB/s", HigherIsBetter),
		m("StarFFT_Gflops", 0.257256, "Gflop/s", HigherIsBetter),
		m("SingleFFT_Gflops", 1.46992, "Gflop/s", HigherIsBetter),
		m("MPIFFT_Gflops", 0.251972, "Gflop/s", HigherIsBetter),
		m("MinPingPongLatency_usec", 0.426333, "us", LowerIsBetter),
		m("AvgPingPongLatency_usec", 0.438417, "us", LowerIsBetter),
		m("MaxPingPongLatency_usec", 0.4505, "us", LowerIsBetter),
		m("MinPingPongBandwidth_GBytes", 13.1957, "GB/s", HigherIsBetter),
		m("AvgPingPongBandwidth_GBytes", 13.3056, "GB/s", HigherIsBetter),
		m("MaxPingPongBandwidth_GBytes", 13.4155, "GB/s", HigherIsBetter),
		m("NaturallyOrderedRingLatency_usec", 0.401967, "us", LowerIsBetter),
		m("RandomlyOrderedRingLatency_usec", 0.382402, "us", LowerIsBetter),
		m("NaturallyOrderedRingBandwidth_GBytes", 8.6455, "GB/s", HigherIsBetter),
		m("RandomlyOrderedRingBandwidth_GBytes", 4.29258, "GB/s", HigherIsBetter),
	}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("ParseHPCC mismatch (-want +got):\n%s", diff)
	}
}

// hpccVariant rewrites Summary lines of the real fixture: each replacement
// maps a "key=" prefix to the whole new line ("" deletes the line).
func hpccVariant(t *testing.T, replacements map[string]string) []byte {
	t.Helper()
	ls := strings.Split(string(readFixture(t, "hpcc-np2.txt")), "\n")
	var out []string
	for _, l := range ls {
		replaced := false
		for prefix, line := range replacements {
			if strings.HasPrefix(l, prefix) {
				replaced = true
				if line != "" {
					out = append(out, line)
				}
			}
		}
		if !replaced {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

func TestParseHPCCVariants(t *testing.T) {
	t.Run("single rank leaves out -1 PingPong and Ring keys", func(t *testing.T) {
		input := hpccVariant(t, map[string]string{
			"MinPingPongLatency_usec=":              "MinPingPongLatency_usec=-1",
			"AvgPingPongLatency_usec=":              "AvgPingPongLatency_usec=-1",
			"MaxPingPongLatency_usec=":              "MaxPingPongLatency_usec=-1",
			"MinPingPongBandwidth_GBytes=":          "MinPingPongBandwidth_GBytes=-1",
			"AvgPingPongBandwidth_GBytes=":          "AvgPingPongBandwidth_GBytes=-1",
			"MaxPingPongBandwidth_GBytes=":          "MaxPingPongBandwidth_GBytes=-1",
			"NaturallyOrderedRingLatency_usec=":     "NaturallyOrderedRingLatency_usec=-1",
			"RandomlyOrderedRingLatency_usec=":      "RandomlyOrderedRingLatency_usec=-1",
			"NaturallyOrderedRingBandwidth_GBytes=": "NaturallyOrderedRingBandwidth_GBytes=-1",
			"RandomlyOrderedRingBandwidth_GBytes=":  "RandomlyOrderedRingBandwidth_GBytes=-1",
			"CommWorldProcs=":                       "CommWorldProcs=1",
		})
		ms, err := ParseHPCC(input)
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, ms)
		if len(ms) != 21 {
			t.Errorf("got %d metrics, want the 21 that are not PingPong/Ring", len(ms))
		}
		for _, m := range ms {
			if strings.Contains(m.Name, "PingPong") || strings.Contains(m.Name, "Ring") {
				t.Errorf("unexpected %s=%v", m.Name, m.Value)
			}
		}
	})
	t.Run("non-finite values are left out", func(t *testing.T) {
		ms, err := ParseHPCC(hpccVariant(t, map[string]string{
			"HPL_Tflops=":     "HPL_Tflops=inf",
			"StarFFT_Gflops=": "StarFFT_Gflops=-nan",
		}))
		if err != nil {
			t.Fatal(err)
		}
		checkMetrics(t, ms)
		for _, m := range ms {
			if m.Name == "HPL_Tflops" || m.Name == "StarFFT_Gflops" {
				t.Errorf("unexpected %s=%v", m.Name, m.Value)
			}
		}
	})
	t.Run("CRLF and only the Summary section", func(t *testing.T) {
		full := string(readFixture(t, "hpcc-np2.txt"))
		begin := strings.Index(full, hpccSummaryBegin)
		summary := strings.ReplaceAll(full[begin:], "\n", "\r\n")
		ms, err := ParseHPCC([]byte(summary))
		if err != nil {
			t.Fatal(err)
		}
		if ms[0] != m("HPL_Tflops", 0.000375035, "Tflop/s", HigherIsBetter) {
			t.Errorf("first metric = %+v", ms[0])
		}
	})
	t.Run("appended runs use the last Summary", func(t *testing.T) {
		first := string(readFixture(t, "hpcc-np2.txt"))
		second := strings.Replace(first, "HPL_Tflops=0.000375035", "HPL_Tflops=0.5", 1)
		ms, err := ParseHPCC([]byte(first + second))
		if err != nil {
			t.Fatal(err)
		}
		if ms[0].Name != "HPL_Tflops" || ms[0].Value != 0.5 {
			t.Errorf("first metric = %+v, want HPL_Tflops=0.5 from the second run", ms[0])
		}
	})
}

func TestParseHPCCErrors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"Success=0", hpccVariant(t, map[string]string{"Success=": "Success=0"}), "failed verification (Success=0)"},
		{"Success missing", hpccVariant(t, map[string]string{"Success=": ""}), "no Success key"},
		{"console output", readFixture(t, "hpcc-np2.console.txt"), "no \"Begin of Summary section.\""},
		{"input file", readFixture(t, "hpcc-np2.hpccinf.txt"), "no \"Begin of Summary section.\""},
		{"empty", nil, "empty"},
		{"summary without figures", []byte("Begin of Summary section.\nSuccess=1\nHPL_N=3000\nEnd of Summary section.\n"), "no performance figures"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParseHPCC, tt.input, tt.want)
		})
	}
}
