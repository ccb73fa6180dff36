package results

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// iozoneTests are the result columns of the main table, left to right, after
// the kB and reclen columns.
var iozoneTests = [...]string{
	"write", "rewrite", "read", "reread", "random_read", "random_write",
	"bkwd_read", "record_rewrite", "stride_read", "fwrite", "frewrite",
	"fread", "freread",
}

// iozoneColumnEnds are the character positions (exclusive, 0-based) where
// the right-aligned fields of a main-table row end: kB, reclen, then the
// tests. Tests that were not run are left blank in mid-row, so a row cannot
// be split on whitespace.
var iozoneColumnEnds = []int{16, 24, 33, 42, 51, 60, 69, 78, 87, 97, 107, 116, 125, 134, 143}

// iozoneReportTitles maps the titles of the -R "Excel" blocks to tests.
var iozoneReportTitles = map[string]string{
	"writer report":         "write",
	"re-writer report":      "rewrite",
	"reader report":         "read",
	"re-reader report":      "reread",
	"random read report":    "random_read",
	"random write report":   "random_write",
	"backward read report":  "bkwd_read",
	"record rewrite report": "record_rewrite",
	"stride read report":    "stride_read",
	"fwrite report":         "fwrite",
	"re-fwrite report":      "frewrite",
	"fread report":          "fread",
	"re-fread report":       "freread",
}

type iozoneRow struct {
	fileKB, reclenKB int64
	// values is indexed like iozoneTests; present marks the tests that ran.
	values  [len(iozoneTests)]float64
	present [len(iozoneTests)]bool
}

// ParseIozone parses the stdout of iozone. Metrics are named after the
// tests (write, rewrite, read, reread, random_read, random_write, bkwd_read,
// record_rewrite, stride_read, fwrite, frewrite, fread, freread) and only the
// tests that ran are returned. When the table has one (file size, record
// size) row the names are bare; with several rows (auto mode -a, or several
// -r values) each name gets "_<filekB>k_<reclenkB>k", e.g. write_65536k_64k.
//
// Values are in KiB/s (iozone's "kBytes/sec" are 1024-byte units), or ops/s
// with -O, or us per operation with -N. The fixed-width main table is read
// by character position; when it is missing, the -R "Excel" blocks are used
// instead, where 0 marks a combination that was not run.
//
// A row that cannot be read, a row with figures for other tests than the
// first row, a row missing from an automatic-mode table (sizes double from
// row to row) and an output without "iozone test complete." are refused.
func ParseIozone(output []byte) ([]Metric, error) {
	rows, unit, dir, err := iozoneRows(output)
	if err != nil {
		return nil, err
	}
	bare := len(rows) == 1
	var ms metricList
	for _, r := range rows {
		for i, test := range iozoneTests {
			if !r.present[i] {
				continue
			}
			name := test
			if !bare {
				name = fmt.Sprintf("%s_%dk_%dk", test, r.fileKB, r.reclenKB)
			}
			ms.add(name, r.values[i], unit, dir)
		}
	}
	if ms.empty() {
		return nil, errors.New("iozone: result table has no figures")
	}
	return ms.metrics, nil
}

// iozoneRows reads the rows of iozone's result table, from the fixed-width main table or, when it
// is missing, from the -R "Excel" blocks, and the unit and direction of their figures.
func iozoneRows(output []byte) ([]iozoneRow, string, Direction, error) {
	if isBlank(output) {
		return nil, "", "", errors.New("iozone: empty output")
	}
	ls := lines(output)
	unit, dir := iozoneUnit(ls)
	rows, err := iozoneMainTable(ls)
	if err != nil {
		return nil, "", "", err
	}
	if len(rows) == 0 {
		rows = iozoneExcelBlocks(ls)
	}
	if len(rows) == 0 {
		return nil, "", "", errors.New("iozone: no result table (no \"kB  reclen\" header followed by rows); is this iozone stdout?")
	}
	if err := iozoneComplete(ls, rows); err != nil {
		return nil, "", "", err
	}
	return rows, unit, dir, nil
}

// iozoneComplete refuses a table that is not whole: iozone ends every run
// with "iozone test complete.", every row holds the same tests (iozone runs
// each selected test at each size), and in automatic mode the record sizes of
// a file, and the file sizes, double from one row to the next, so a row left
// out shows as a jump.
func iozoneComplete(ls []string, rows []iozoneRow) error {
	complete, auto := false, false
	for _, l := range ls {
		switch strings.TrimSpace(l) {
		case "iozone test complete.":
			complete = true
		case "Auto Mode":
			auto = true
		}
	}
	if !complete {
		return errors.New("iozone: no \"iozone test complete.\" line after the table; the output is cut off")
	}
	for _, r := range rows[1:] {
		if r.present != rows[0].present {
			return fmt.Errorf("iozone: the row of %dk files and %dk records has figures for other tests (%s) than the first row (%s); a figure is missing or damaged",
				r.fileKB, r.reclenKB, iozoneTestNames(r), iozoneTestNames(rows[0]))
		}
	}
	if !auto {
		return nil
	}
	for i := 1; i < len(rows); i++ {
		prev, r := rows[i-1], rows[i]
		sameFile := r.fileKB == prev.fileKB && r.reclenKB == 2*prev.reclenKB
		nextFile := r.fileKB == 2*prev.fileKB && r.reclenKB <= prev.reclenKB
		if !sameFile && !nextFile {
			return fmt.Errorf("iozone: the automatic-mode table jumps from %dk files and %dk records to %dk and %dk; a row is missing or damaged",
				prev.fileKB, prev.reclenKB, r.fileKB, r.reclenKB)
		}
	}
	return nil
}

func iozoneTestNames(r iozoneRow) string {
	var names []string
	for i, t := range iozoneTests {
		if r.present[i] {
			names = append(names, t)
		}
	}
	return strings.Join(names, " ")
}

// iozoneUnit reads the "Output is in ..." header line; -O and -N change the
// unit, and -N turns throughput into a cost where lower is better.
func iozoneUnit(ls []string) (string, Direction) {
	for _, l := range ls {
		lower := strings.ToLower(l)
		if !strings.Contains(lower, "output is in") {
			continue
		}
		switch {
		case strings.Contains(lower, "microsecond"):
			return unitUs, LowerIsBetter
		case strings.Contains(lower, "operations per second") || strings.Contains(lower, "ops/sec"):
			return unitOpsPerS, HigherIsBetter
		}
		break
	}
	return unitKiBPerS, HigherIsBetter
}

// iozoneMainTable parses the rows following the first "kB  reclen" header.
// Rows with the same file and record size are kept once so metric names stay
// unique.
func iozoneMainTable(ls []string) ([]iozoneRow, error) {
	header := -1
	for i, l := range ls {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "kB" && f[1] == "reclen" {
			header = i
			break
		}
	}
	if header < 0 {
		return nil, nil
	}
	var rows []iozoneRow
	seen := map[[2]int64]bool{}
	for _, l := range ls[header+1:] {
		fs := strings.Fields(l)
		if len(fs) == 0 {
			continue
		}
		if _, err := strconv.ParseInt(fs[0], 10, 64); err != nil {
			// "iozone test complete." or any other text ends the table.
			break
		}
		row, ok := iozoneParseRow(l)
		if !ok {
			return nil, fmt.Errorf("iozone: cannot read the row %q of the result table", firstLine(strings.TrimSpace(l)))
		}
		key := [2]int64{row.fileKB, row.reclenKB}
		if seen[key] {
			continue
		}
		seen[key] = true
		rows = append(rows, row)
	}
	return rows, nil
}

type textField struct {
	text       string
	start, end int
}

func fieldsWithPositions(l string) []textField {
	var fs []textField
	start := -1
	for i := 0; i <= len(l); i++ {
		blank := i == len(l) || l[i] == ' ' || l[i] == '\t'
		switch {
		case blank && start >= 0:
			fs = append(fs, textField{l[start:i], start, i})
			start = -1
		case !blank && start < 0:
			start = i
		}
	}
	return fs
}

// iozoneParseRow places every field into the column that ends where the
// field ends. A row that does not line up with the columns (another iozone
// build, a value wider than its column) is accepted only when it is
// complete, because then the order alone identifies the columns.
func iozoneParseRow(l string) (iozoneRow, bool) {
	var row iozoneRow
	fs := fieldsWithPositions(l)
	if len(fs) < 3 || len(fs) > len(iozoneColumnEnds) {
		return row, false
	}
	numbers := make([]float64, len(fs))
	for i, f := range fs {
		v, ok := parseNumber(f.text)
		if !ok || v < 0 {
			return row, false
		}
		numbers[i] = v
	}
	columns, aligned := iozoneAlignedColumns(fs)
	if !aligned {
		if len(fs) != len(iozoneColumnEnds) {
			return row, false
		}
		for i := range columns {
			columns[i] = i
		}
	}
	if columns[0] != 0 || columns[1] != 1 {
		return row, false
	}
	fileKB, err1 := strconv.ParseInt(fs[0].text, 10, 64)
	reclenKB, err2 := strconv.ParseInt(fs[1].text, 10, 64)
	if err1 != nil || err2 != nil || fileKB <= 0 || reclenKB <= 0 {
		return row, false
	}
	row.fileKB, row.reclenKB = fileKB, reclenKB
	for i := 2; i < len(fs); i++ {
		test := columns[i] - 2
		row.values[test] = numbers[i]
		row.present[test] = true
	}
	return row, true
}

func iozoneAlignedColumns(fs []textField) ([]int, bool) {
	columns := make([]int, len(fs))
	next := 0
	for i, f := range fs {
		for next < len(iozoneColumnEnds) && iozoneColumnEnds[next] < f.end {
			next++
		}
		if next == len(iozoneColumnEnds) || iozoneColumnEnds[next] != f.end {
			return columns, false
		}
		columns[i] = next
		next++
	}
	return columns, true
}

// iozoneExcelBlocks parses the blocks printed after "Excel output is below:"
// with -R: a quoted title, a row of quoted record sizes, then one row per
// file size. Rows are ragged and 0 marks a combination that was not run.
func iozoneExcelBlocks(ls []string) []iozoneRow {
	start := -1
	for i, l := range ls {
		if strings.Contains(l, "Excel output is below") {
			start = i + 1
			break
		}
	}
	if start < 0 {
		return nil
	}
	var rows []iozoneRow
	index := map[[2]int64]int{}
	test := -1
	var reclens []int64
	for _, l := range ls[start:] {
		fs := strings.Fields(l)
		if len(fs) == 0 {
			continue
		}
		if title := strings.ToLower(strings.Trim(strings.TrimSpace(l), `"`)); strings.HasSuffix(title, "report") {
			test = -1
			reclens = nil
			if name, ok := iozoneReportTitles[title]; ok {
				test = iozoneTestIndex(name)
			}
			continue
		}
		if test < 0 {
			continue
		}
		if reclens == nil {
			reclens = iozoneQuotedInts(fs)
			continue
		}
		fileKB, ok := iozoneQuotedInt(fs[0])
		if !ok {
			continue
		}
		for i, f := range fs[1:] {
			if i >= len(reclens) {
				break
			}
			v, ok := parseNumber(f)
			if !ok || v <= 0 {
				continue
			}
			key := [2]int64{fileKB, reclens[i]}
			r, ok := index[key]
			if !ok {
				r = len(rows)
				index[key] = r
				rows = append(rows, iozoneRow{fileKB: fileKB, reclenKB: reclens[i]})
			}
			rows[r].values[test] = v
			rows[r].present[test] = true
		}
	}
	return rows
}

func iozoneTestIndex(name string) int {
	for i, t := range iozoneTests {
		if t == name {
			return i
		}
	}
	return -1
}

func iozoneQuotedInts(fs []string) []int64 {
	out := make([]int64, 0, len(fs))
	for _, f := range fs {
		v, ok := iozoneQuotedInt(f)
		if !ok {
			return []int64{}
		}
		out = append(out, v)
	}
	return out
}

func iozoneQuotedInt(f string) (int64, bool) {
	if len(f) < 3 || f[0] != '"' || f[len(f)-1] != '"' {
		return 0, false
	}
	v, err := strconv.ParseInt(f[1:len(f)-1], 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}

// largestIozoneWrite picks the write figure of the largest file and, within
// it, of the largest record, from suffixed names like write_65536k_64k.
func largestIozoneWrite(ms []Metric) (Metric, bool) {
	var best Metric
	var bestFile, bestRec int64 = -1, -1
	for _, m := range ms {
		rest, ok := strings.CutPrefix(m.Name, "write_")
		if !ok {
			continue
		}
		fileText, recText, ok := strings.Cut(rest, "_")
		if !ok {
			continue
		}
		file, err1 := strconv.ParseInt(strings.TrimSuffix(fileText, "k"), 10, 64)
		rec, err2 := strconv.ParseInt(strings.TrimSuffix(recText, "k"), 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if file > bestFile || (file == bestFile && rec > bestRec) {
			best, bestFile, bestRec = m, file, rec
		}
	}
	return best, bestFile >= 0
}
