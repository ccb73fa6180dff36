package results

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// iozoneHeader is the two-line header of the main table, verbatim.
const iozoneHeader = "" +
	"                                                              random    random     bkwd    record    stride                                    \n" +
	"              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread\n"

// iozoneEnd is the line iozone ends every run with.
const iozoneEnd = "\niozone test complete.\n"

// withoutMainTable cuts the main table out of a -R output, from its header to the end line, which
// stays with the -R blocks.
func withoutMainTable(full string) string {
	return full[:strings.Index(full, "                                                              random")] +
		full[strings.Index(full, "iozone test complete."):]
}

// iozoneRowText lays out a main-table row the way iozone does: each value is
// right-aligned to its column end; columns missing from values stay blank.
func iozoneRowText(values map[int]string) string {
	var b strings.Builder
	for col, end := range iozoneColumnEnds {
		v := values[col]
		b.WriteString(strings.Repeat(" ", end-b.Len()-len(v)))
		b.WriteString(v)
	}
	return b.String() + "\n"
}

func TestIozoneRowTextMatchesRealRow(t *testing.T) {
	real := "          262144      64   876920  2802633  2905058  1208532  1545523  1626304                                                                "
	got := iozoneRowText(map[int]string{0: "262144", 1: "64", 2: "876920", 3: "2802633", 4: "2905058", 5: "1208532", 6: "1545523", 7: "1626304"})
	if strings.TrimRight(got, " \n") != strings.TrimRight(real, " ") {
		t.Errorf("helper layout differs from iozone's:\n%q\n%q", got, real)
	}
}

func TestParseIozoneSingleRow(t *testing.T) {
	ms, err := ParseIozone(readFixture(t, "iozone-i0i1i2-r64k-s256M-R.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, ms)
	want := []Metric{
		m("write", 876920, "KiB/s", HigherIsBetter),
		m("rewrite", 2802633, "KiB/s", HigherIsBetter),
		m("read", 2905058, "KiB/s", HigherIsBetter),
		m("reread", 1208532, "KiB/s", HigherIsBetter),
		m("random_read", 1545523, "KiB/s", HigherIsBetter),
		m("random_write", 1626304, "KiB/s", HigherIsBetter),
	}
	if diff := cmp.Diff(want, ms); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestParseIozoneAutoMode(t *testing.T) {
	for _, fixture := range []string{"iozone-auto-g64M.txt", "iozone-auto-g64M-R.txt"} {
		t.Run(fixture, func(t *testing.T) {
			ms, err := ParseIozone(readFixture(t, fixture))
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			// 99 (file size, record size) rows, all 13 tests each: small files
			// have fewer records, and files >= 32 MB skip records < 64 kB.
			if len(ms) != 99*13 {
				t.Errorf("got %d metrics, want %d", len(ms), 99*13)
			}
			byName := map[string]Metric{}
			for _, m := range ms {
				byName[m.Name] = m
				if m.Unit != "KiB/s" || m.Direction != HigherIsBetter {
					t.Errorf("%s: unit %q direction %q", m.Name, m.Unit, m.Direction)
				}
			}
			for _, absent := range []string{"write", "write_32768k_32k", "write_64k_128k"} {
				if _, ok := byName[absent]; ok {
					t.Errorf("unexpected metric %s", absent)
				}
			}
			if ms[0].Name != "write_64k_4k" || ms[len(ms)-1].Name != "freread_65536k_16384k" {
				t.Errorf("order: first %s, last %s", ms[0].Name, ms[len(ms)-1].Name)
			}
		})
	}
	ms, err := ParseIozone(readFixture(t, "iozone-auto-g64M.txt"))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]float64{}
	for _, m := range ms {
		byName[m.Name] = m.Value
	}
	for name, want := range map[string]float64{
		"write_64k_4k":              604849,
		"freread_64k_64k":           64000000,
		"record_rewrite_1024k_16k":  148620,
		"random_write_8192k_8k":     150871,
		"write_32768k_64k":          239770,
		"stride_read_16384k_16384k": 965529,
		"freread_65536k_16384k":     358128,
	} {
		if byName[name] != want {
			t.Errorf("%s = %v, want %v", name, byName[name], want)
		}
	}
	h, ok := HeadlineOf(Iozone, ms)
	if !ok || h.Name != "write_65536k_16384k" || h.Value != 296124 {
		t.Errorf("HeadlineOf = %+v, %v", h, ok)
	}
}

// TestParseIozoneExcelOnly removes the main table so that only the -R
// blocks remain; they must yield the same figures, which also cross-checks
// the fixed-width reading of the main table.
func TestParseIozoneExcelOnly(t *testing.T) {
	full := string(readFixture(t, "iozone-auto-g64M-R.txt"))
	fromTable, err := ParseIozone([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	excelOnly := withoutMainTable(full)
	fromExcel, err := ParseIozone([]byte(excelOnly))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, fromExcel)
	if diff := cmp.Diff(fromTable, fromExcel); diff != "" {
		t.Errorf("Excel blocks and main table disagree (-table +excel):\n%s", diff)
	}
}

func TestParseIozoneVariants(t *testing.T) {
	preamble := "\tIozone: Performance Test of File I/O\n\tOutput is in kBytes/sec\n"
	tests := []struct {
		name  string
		input string
		want  []Metric
	}{
		{"-i 0 -i 2 leaves read and reread blank in mid-row",
			preamble + iozoneHeader +
				iozoneRowText(map[int]string{0: "262144", 1: "64", 2: "876920", 3: "2802633", 6: "1545523", 7: "1626304"}) +
				"\niozone test complete.\n",
			[]Metric{
				m("write", 876920, "KiB/s", HigherIsBetter),
				m("rewrite", 2802633, "KiB/s", HigherIsBetter),
				m("random_read", 1545523, "KiB/s", HigherIsBetter),
				m("random_write", 1626304, "KiB/s", HigherIsBetter),
			}},
		{"-i 0 -i 5 -i 7: stride read and fread only",
			preamble + iozoneHeader +
				iozoneRowText(map[int]string{0: "1024", 1: "4", 2: "100", 3: "200", 10: "300", 13: "400", 14: "500"}) + iozoneEnd,
			[]Metric{
				m("write", 100, "KiB/s", HigherIsBetter),
				m("rewrite", 200, "KiB/s", HigherIsBetter),
				m("stride_read", 300, "KiB/s", HigherIsBetter),
				m("fread", 400, "KiB/s", HigherIsBetter),
				m("freread", 500, "KiB/s", HigherIsBetter),
			}},
		{"several record sizes with gaps get suffixes",
			preamble + iozoneHeader +
				iozoneRowText(map[int]string{0: "65536", 1: "64", 2: "11", 3: "12", 6: "13", 7: "14"}) +
				iozoneRowText(map[int]string{0: "65536", 1: "1024", 2: "21", 3: "22", 6: "23", 7: "24"}) + iozoneEnd,
			[]Metric{
				m("write_65536k_64k", 11, "KiB/s", HigherIsBetter),
				m("rewrite_65536k_64k", 12, "KiB/s", HigherIsBetter),
				m("random_read_65536k_64k", 13, "KiB/s", HigherIsBetter),
				m("random_write_65536k_64k", 14, "KiB/s", HigherIsBetter),
				m("write_65536k_1024k", 21, "KiB/s", HigherIsBetter),
				m("rewrite_65536k_1024k", 22, "KiB/s", HigherIsBetter),
				m("random_read_65536k_1024k", 23, "KiB/s", HigherIsBetter),
				m("random_write_65536k_1024k", 24, "KiB/s", HigherIsBetter),
			}},
		{"-O reports operations per second",
			"\tOPS Mode. Output is in operations per second.\n" + iozoneHeader +
				iozoneRowText(map[int]string{0: "4096", 1: "4", 2: "1000", 3: "2000"}) + iozoneEnd,
			[]Metric{
				m("write", 1000, "ops/s", HigherIsBetter),
				m("rewrite", 2000, "ops/s", HigherIsBetter),
			}},
		{"-N reports microseconds per operation",
			"\tMicroseconds/op Mode. Output is in microseconds per operation.\n" + iozoneHeader +
				iozoneRowText(map[int]string{0: "4096", 1: "4", 2: "3", 3: "2"}) + iozoneEnd,
			[]Metric{
				m("write", 3, "us", LowerIsBetter),
				m("rewrite", 2, "us", LowerIsBetter),
			}},
		{"complete row that is not aligned is read in order",
			preamble + iozoneHeader + "64 4 1 2 3 4 5 6 7 8 9 10 11 12 13\n" + iozoneEnd,
			func() []Metric {
				var ms []Metric
				for i, test := range iozoneTests {
					ms = append(ms, m(test, float64(i+1), "KiB/s", HigherIsBetter))
				}
				return ms
			}()},
		{"ragged -R block alone, 0 means not run",
			"iozone test complete.\nExcel output is below:\n\n\"Writer report\"\n        \"4\"  \"8\"  \"64\"\n\"64\"   10  20 \n\"32768\"   0  0  30 \n\n" +
				"\"Reader report\"\n        \"4\"  \"8\"  \"64\"\n\"64\"   40  50 \n\"32768\"   0  0  60 \n",
			[]Metric{
				m("write_64k_4k", 10, "KiB/s", HigherIsBetter),
				m("read_64k_4k", 40, "KiB/s", HigherIsBetter),
				m("write_64k_8k", 20, "KiB/s", HigherIsBetter),
				m("read_64k_8k", 50, "KiB/s", HigherIsBetter),
				m("write_32768k_64k", 30, "KiB/s", HigherIsBetter),
				m("read_32768k_64k", 60, "KiB/s", HigherIsBetter),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseIozone([]byte(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseIozoneErrors(t *testing.T) {
	full := string(readFixture(t, "iozone-i0i1i2-r64k-s256M-R.txt"))
	header := full[:strings.Index(full, "              kB  reclen")]
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"killed before the table", header, "no result table"},
		{"header without rows", header + iozoneHeader + "\n", "no result table"},
		{"empty", "", "iozone: empty output"},
		{"text", "iozone: command not found\n", "no result table"},
		{"row with a word", iozoneHeader + fmt.Sprintf("%16s%8s%9s\n", "64", "4", "oops") + iozoneEnd, "cannot read the row \"64       4     oops\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParseIozone, []byte(tt.input), tt.want)
		})
	}
}
