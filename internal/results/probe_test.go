package results

import (
	"strconv"
	"strings"
	"testing"
)

// TestParseProbeReadsTheRealProbe protects the whole-run figures of a real probe output: 20
// windows over 2 s, a rate within the fixture's own bounds, the longest gap its 16.883 ms.
func TestParseProbeReadsTheRealProbe(t *testing.T) {
	ms, err := ParseProbe(readFixture(t, "probe-2s.csv"))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, ms)
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	if got["windows"] != 20 {
		t.Errorf("windows = %v, want 20", got["windows"])
	}
	// The fixture's windows did 7,681 to 13,000 units in 60 to 104 ms: about 125,000 units/s.
	if r := got["work_per_second"]; r < 110_000 || r > 135_000 {
		t.Errorf("work_per_second = %v, want 110,000 to 135,000", r)
	}
	if got["max_gap_ms"] != 16.883 {
		t.Errorf("max_gap_ms = %v, want 16.883", got["max_gap_ms"])
	}
}

// TestParseProbeSyntheticStall protects the longest gap and the rate of a series with a known
// stall: 10 windows of 100 ms at 1,000 units, one of which slept 730 ms and did 300 units.
func TestParseProbeSyntheticStall(t *testing.T) {
	var b strings.Builder
	b.WriteString("mono_ms,wall_ms,length_ms,work,max_gap_ms\n")
	mono := 0.0
	for i := range 10 {
		length, work, gap := "100", "1000", "10.1"
		step := 100.0
		if i == 4 {
			length, work, gap, step = "730", "300", "730", 730
		}
		b.WriteString(strings.Join([]string{ftoa(mono), ftoa(1e12 + mono), length, work, gap}, ",") + "\n")
		mono += step
	}
	ms, err := ParseProbe([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"work_per_second": 9300 / 1.63, "max_gap_ms": 730, "windows": 10}
	for _, m := range ms {
		if w, ok := want[m.Name]; !ok || m.Value < w-1e-6 || m.Value > w+1e-6 {
			t.Errorf("%s = %v, want %v", m.Name, m.Value, w)
		}
	}
}

// TestParseProbeRefusesBrokenSeries protects the checks: windows out of order, negative work,
// other columns.
func TestParseProbeRefusesBrokenSeries(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"out of order": {"mono_ms,wall_ms,length_ms,work,max_gap_ms\n100,1,100,5,10\n50,2,100,5,10\n", "not after the window before it"},
		"negative":     {"mono_ms,wall_ms,length_ms,work,max_gap_ms\n0,1,100,-5,10\n", "work is -5"},
		"blank cell":   {"mono_ms,wall_ms,length_ms,work,max_gap_ms\n0,1,100,,10\n", "work is NaN"},
		"columns":      {"mono_ms,wall_ms,work\n0,1,5\n", "want [mono_ms"},
		// The memory writer's two columns come together, named and in order, and never negative.
		"one writer column": {"mono_ms,wall_ms,length_ms,work,max_gap_ms,dirtied_bytes\n0,1,100,5,10,4096\n", "or [mono_ms"},
		"writer misnamed":   {"mono_ms,wall_ms,length_ms,work,max_gap_ms,dirty_rate_set,dirtied_bytes\n0,1,100,5,10,0,4096\n", "want [mono_ms wall_ms length_ms work max_gap_ms dirtied_bytes dirty_rate_set]"},
		"writer negative":   {"mono_ms,wall_ms,length_ms,work,max_gap_ms,dirtied_bytes,dirty_rate_set\n0,1,100,5,10,-4096,0\n", "dirtied_bytes is -4096"},
	} {
		t.Run(name, func(t *testing.T) {
			checkParseError(t, ParseProbe, []byte(tc.in), tc.want)
		})
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// TestProbeSeriesTakesThePeerColumnLast protects the VM arm's probe table: the peer column
// (peer_gap_ms) is read after ProbeColumns and after ProbeDirtyColumns, found by name, and refused
// anywhere else (it would shift the writer's columns).
func TestProbeSeriesTakesThePeerColumnLast(t *testing.T) {
	for _, cols := range [][]string{ProbeColumns, ProbeDirtyColumns} {
		tab := Table{Columns: append(append([]string{}, cols...), ProbePeerColumn)}
		row := make([]float64, len(tab.Columns))
		row[len(row)-1] = 510
		tab.Rows = [][]float64{row}
		got, err := ProbeSeries(tab.CSV())
		if err != nil {
			t.Fatalf("%v: %v", tab.Columns, err)
		}
		if i := ProbeColumnIndex(got, ProbePeerColumn); i != len(cols) || got.Rows[0][i] != 510 {
			t.Errorf("%v: peer column at %d, want %d with 510", tab.Columns, i, len(cols))
		}
	}
	misplaced := Table{Columns: append(append([]string{}, ProbeColumns...), ProbePeerColumn, "dirtied_bytes", "dirty_rate_set"),
		Rows: [][]float64{make([]float64, len(ProbeColumns)+3)}}
	if _, err := ProbeSeries(misplaced.CSV()); err == nil {
		t.Errorf("columns %v read, want the peer column refused before the writer's", misplaced.Columns)
	}
}
