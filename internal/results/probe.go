package results

import (
	"fmt"
	"math"
)

// ProbeColumns are the columns of the steady probe's output (the migration benchmark's in-guest
// probe, package runner): per window of about 100 ms, its start on the monotonic clock in ms since
// the probe began, its start on the wall clock in Unix ms, its length in ms, the units of work the
// CPU loop did in it and the longest gap of the 10 ms ticker in it, in ms.
var ProbeColumns = []string{"mono_ms", "wall_ms", "length_ms", "work", "max_gap_ms"}

// ProbeDirtyColumns are ProbeColumns and, where the probe ran its memory writer (a migration
// benchmark with dirtyRates), the bytes the writer dirtied in each window (4 KiB a page touched)
// and the rate it was set to then, in bytes a second.
var ProbeDirtyColumns = append(append([]string{}, ProbeColumns...), "dirtied_bytes", "dirty_rate_set")

// ProbePeerColumn is the last column where a peer outside the guest reported to the in-guest probe
// (a VM run's probe worker pod, every 10 ms): the longest gap between two of its reports that ended
// in the window, or was still open at the window's close, in ms. A probe no peer reported to has no
// such column; a table with it is ProbeColumns or ProbeDirtyColumns and then it.
const ProbePeerColumn = "peer_gap_ms"

// ProbeColumnIndex is where column name is in t's columns; -1 where t has none.
func ProbeColumnIndex(t Table, name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Column indexes of ProbeColumns (and ProbeDirtyColumns); the peer column's is
// ProbeColumnIndex(t, ProbePeerColumn).
const (
	ProbeMono = iota
	ProbeWall
	ProbeLength
	ProbeWork
	ProbeMaxGap
	ProbeDirtied
	ProbeDirtySet
)

// unitWorkPerS is the probe's rate: units of its CPU loop a second, comparable only between runs of
// the same runner build on the same platform.
const unitWorkPerS = "units/s"

// ParseProbe reads the probe's output and returns its whole-run figures: the mean work rate, the
// longest ticker gap and the number of windows. What a migration did to the guest is read from the
// series (ProbeSeries) against the migration's times, not from these.
func ParseProbe(output []byte) ([]Metric, error) {
	t, err := ProbeSeries(output)
	if err != nil {
		return nil, err
	}
	var work, length, maxGap float64
	for _, r := range t.Rows {
		work += r[ProbeWork]
		length += r[ProbeLength]
		maxGap = math.Max(maxGap, r[ProbeMaxGap])
	}
	if length <= 0 {
		return nil, fmt.Errorf("probe: its windows add up to no time")
	}
	var l metricList
	l.add("work_per_second", work/(length/1000), unitWorkPerS, HigherIsBetter)
	l.add("max_gap_ms", maxGap, unitMs, LowerIsBetter)
	l.add("windows", float64(len(t.Rows)), unitCount, HigherIsBetter)
	return l.metrics, nil
}

// ProbeSeries reads the probe's output as a table and checks that it is one: the probe's columns in
// order, windows one after the other on the monotonic clock, no negative length, work or gap.
func ProbeSeries(output []byte) (Table, error) {
	if isBlank(output) {
		return Table{}, fmt.Errorf("probe: empty output")
	}
	t, err := ParseTableCSV(output)
	if err != nil {
		return Table{}, fmt.Errorf("probe: %w", err)
	}
	cols := t.Columns
	if n := len(cols); n > 0 && cols[n-1] == ProbePeerColumn {
		cols = cols[:n-1]
	}
	want := ProbeColumns
	if len(cols) == len(ProbeDirtyColumns) {
		want = ProbeDirtyColumns
	}
	if len(cols) != len(want) {
		return Table{}, fmt.Errorf("probe: columns %v, want %v (or %v), each optionally followed by %s", t.Columns, ProbeColumns, ProbeDirtyColumns, ProbePeerColumn)
	}
	if len(cols) < len(t.Columns) {
		want = append(append([]string{}, want...), ProbePeerColumn)
	}
	for i, c := range want {
		if t.Columns[i] != c {
			return Table{}, fmt.Errorf("probe: columns %v, want %v", t.Columns, want)
		}
	}
	prev := math.Inf(-1)
	for i, r := range t.Rows {
		for j, v := range r {
			if math.IsNaN(v) || v < 0 {
				return Table{}, fmt.Errorf("probe: window %d: %s is %v, want a number of at least 0", i+1, want[j], v)
			}
		}
		if r[ProbeMono] <= prev {
			return Table{}, fmt.Errorf("probe: window %d starts at %v ms, not after the window before it", i+1, r[ProbeMono])
		}
		prev = r[ProbeMono]
	}
	return t, nil
}
