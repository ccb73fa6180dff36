package results

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Columns of an iozone table: the file and record size in KiB, then one column per test that ran,
// named after the test and its unit, e.g. write_KiB_per_s or random_read_KiB_per_s.
const (
	IozoneFileColumn   = "file_KiB"
	IozoneRecordColumn = "record_KiB"
)

// IozoneTable reads the whole result table of an iozone run, automatic mode (-a) included: a row per
// file and record size, in that order, and a column per test that ran. A cell iozone left blank (a
// test that did not run) is NaN. Sizes iozone skipped (in auto mode, the records below 64k of the
// files of 32M and more) have no row at all.
func IozoneTable(output []byte) (Table, error) {
	rows, unit, _, err := iozoneRows(output)
	if err != nil {
		return Table{}, err
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].fileKB != rows[j].fileKB {
			return rows[i].fileKB < rows[j].fileKB
		}
		return rows[i].reclenKB < rows[j].reclenKB
	})
	var tests []int
	for i := range iozoneTests {
		for _, r := range rows {
			if r.present[i] {
				tests = append(tests, i)
				break
			}
		}
	}
	if len(tests) == 0 {
		return Table{}, errors.New("iozone: result table has no figures")
	}
	t := Table{Columns: []string{IozoneFileColumn, IozoneRecordColumn}}
	for _, i := range tests {
		t.Columns = append(t.Columns, iozoneTests[i]+"_"+unitColumnSuffix(unit))
	}
	for _, r := range rows {
		row := []float64{float64(r.fileKB), float64(r.reclenKB)}
		for _, i := range tests {
			v := math.NaN()
			if r.present[i] {
				v = r.values[i]
			}
			row = append(row, v)
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) > MaxTableRows {
		return Table{}, fmt.Errorf("iozone: %d rows, more than a table holds (%d)", len(t.Rows), MaxTableRows)
	}
	return t, nil
}

// unitColumnSuffix writes a unit as part of a column name: KiB/s becomes KiB_per_s.
func unitColumnSuffix(unit string) string {
	return strings.ReplaceAll(unit, "/", "_per_")
}

// IozoneColumn is a test's column of an iozone table.
type IozoneColumn struct {
	// Index is the column's position in Table.Columns.
	Index int
	// Test is the test's name as in metric names: write, random_read, ...
	Test      string
	Unit      string
	Direction Direction
}

// IozoneTableColumns finds the size columns and the test columns of an iozone table, as IozoneTable
// names them, or says what is missing.
func IozoneTableColumns(t Table) (file, record int, tests []IozoneColumn, err error) {
	file, record = t.Column(IozoneFileColumn), t.Column(IozoneRecordColumn)
	if file < 0 || record < 0 {
		return 0, 0, nil, fmt.Errorf("iozone table: no %s and %s columns", IozoneFileColumn, IozoneRecordColumn)
	}
	for i, c := range t.Columns {
		for _, test := range iozoneTests {
			for _, u := range []struct {
				unit string
				dir  Direction
			}{{unitKiBPerS, HigherIsBetter}, {unitOpsPerS, HigherIsBetter}, {unitUs, LowerIsBetter}} {
				if c == test+"_"+unitColumnSuffix(u.unit) {
					tests = append(tests, IozoneColumn{Index: i, Test: test, Unit: u.unit, Direction: u.dir})
				}
			}
		}
	}
	if len(tests) == 0 {
		return 0, 0, nil, errors.New("iozone table: no test column")
	}
	return file, record, tests, nil
}

// IozoneHeadlines are the figures of an iozone table that status keeps: for each test, its value at
// the largest file size and, within it, the largest record size, named like the other cells of an
// auto-mode run (write_524288k_16384k). That cell is the one least served by the page cache and
// least dominated by the cost of each call, so it is the closest to the storage itself; the whole
// table stays in the table's ConfigMap.
func IozoneHeadlines(t Table) ([]Metric, error) {
	file, record, tests, err := IozoneTableColumns(t)
	if err != nil {
		return nil, err
	}
	var ms metricList
	for _, c := range tests {
		best := -1
		for i, r := range t.Rows {
			if math.IsNaN(r[c.Index]) {
				continue
			}
			if best < 0 || r[file] > t.Rows[best][file] || (r[file] == t.Rows[best][file] && r[record] > t.Rows[best][record]) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		r := t.Rows[best]
		ms.add(fmt.Sprintf("%s_%.0fk_%.0fk", c.Test, r[file], r[record]), r[c.Index], c.Unit, c.Direction)
	}
	if ms.empty() {
		return nil, errors.New("iozone: result table has no figures")
	}
	return ms.metrics, nil
}

// ParseIozoneAuto parses the output of an automatic-mode run: the whole table, and the headline
// figures of each test (IozoneHeadlines) as its metrics.
func ParseIozoneAuto(output []byte) ([]Metric, *Table, error) {
	t, err := IozoneTable(output)
	if err != nil {
		return nil, nil, err
	}
	ms, err := IozoneHeadlines(t)
	if err != nil {
		return nil, nil, err
	}
	return ms, &t, nil
}
