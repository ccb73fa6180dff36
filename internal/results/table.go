package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Table is a result too large for a list of metrics, kept whole beside them: named columns of
// numbers, one row per point measured, such as an iozone auto-mode table (a row per file and record
// size) or an iperf3 time series (a row per interval). A NaN cell is one the tool left blank, such
// as an iozone test that did not run at that size.
//
// A table travels in the runner's messages, and is kept in ConfigMaps, as CSV (see CSV): a header
// line with the column names, then one line per row, a blank field for a NaN cell. Its JSON form is
// that CSV text as one string, which is about as compact as the numbers themselves.
type Table struct {
	Columns []string
	Rows    [][]float64
}

// Limits of a table, far above what the runner sends (an iozone table up to 16G has 171 rows of 15
// columns, an iperf3 series at most maxIperf3Intervals rows of 3), so that a damaged or forged
// message cannot make a reader allocate without bound.
const (
	MaxTableColumns = 32
	MaxTableRows    = 100_000
)

// columnName is what a column may be called: a word that any CSV reader and spreadsheet takes as is.
var columnName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// Column is the index of the column called name, or -1.
func (t Table) Column(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// Check says what makes t no table: columns that are no names or appear twice, rows of another
// width or without any value, values that are infinite, or nothing at all.
func (t Table) Check() error {
	if err := checkColumns(t.Columns); err != nil {
		return err
	}
	if len(t.Rows) == 0 || len(t.Rows) > MaxTableRows {
		return fmt.Errorf("table: %d rows, want 1 to %d", len(t.Rows), MaxTableRows)
	}
	for i, r := range t.Rows {
		if len(r) != len(t.Columns) {
			return fmt.Errorf("table: row %d has %d values for %d columns", i+1, len(r), len(t.Columns))
		}
		blank := true
		for _, v := range r {
			if math.IsInf(v, 0) {
				return fmt.Errorf("table: row %d has an infinite value", i+1)
			}
			blank = blank && math.IsNaN(v)
		}
		// A row of blanks says nothing, and a one-column one would be an empty line, which CSV skips.
		if blank {
			return fmt.Errorf("table: row %d has no value", i+1)
		}
	}
	return nil
}

func checkColumns(columns []string) error {
	if len(columns) == 0 || len(columns) > MaxTableColumns {
		return fmt.Errorf("table: %d columns, want 1 to %d", len(columns), MaxTableColumns)
	}
	seen := map[string]bool{}
	for _, c := range columns {
		if !columnName.MatchString(c) {
			return fmt.Errorf("table: column %q is not a name of letters, digits and '_'", c)
		}
		if seen[c] {
			return fmt.Errorf("table: column %q appears twice", c)
		}
		seen[c] = true
	}
	return nil
}

// CSV writes t as CSV: the header, then a line per row; a NaN cell is an empty field. Numbers are
// written in full, without exponent, so that every tool reads them alike.
func (t Table) CSV() []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(t.Columns, ","))
	b.WriteByte('\n')
	for _, r := range t.Rows {
		for i, v := range r {
			if i > 0 {
				b.WriteByte(',')
			}
			if !math.IsNaN(v) {
				b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
			}
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseTableCSV reads a table written by CSV, and refuses anything else with an error that says
// where it went wrong.
func ParseTableCSV(data []byte) (Table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Table{}, errors.New("table: empty")
		}
		return Table{}, fmt.Errorf("table: %s", firstLine(err.Error()))
	}
	t := Table{Columns: append([]string(nil), header...)}
	if err := checkColumns(t.Columns); err != nil {
		return Table{}, err
	}
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Table{}, fmt.Errorf("table: %s", firstLine(err.Error()))
		}
		if len(t.Rows) == MaxTableRows {
			return Table{}, fmt.Errorf("table: more than %d rows", MaxTableRows)
		}
		row := make([]float64, len(record))
		for i, field := range record {
			if field == "" {
				row[i] = math.NaN()
				continue
			}
			v, ok := parseNumber(field)
			if !ok {
				return Table{}, fmt.Errorf("table: row %d, column %s: %q is not a number", len(t.Rows)+1, t.Columns[i], field)
			}
			row[i] = v
		}
		t.Rows = append(t.Rows, row)
	}
	if err := t.Check(); err != nil {
		return Table{}, err
	}
	return t, nil
}

// MarshalJSON writes the table as its CSV text, one JSON string.
func (t Table) MarshalJSON() ([]byte, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	return json.Marshal(string(t.CSV()))
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (t *Table) UnmarshalJSON(data []byte) error {
	var text string
	if err := json.Unmarshal(data, &text); err != nil {
		return fmt.Errorf("table: not a JSON string of CSV: %w", err)
	}
	parsed, err := ParseTableCSV([]byte(text))
	if err != nil {
		return err
	}
	*t = parsed
	return nil
}
