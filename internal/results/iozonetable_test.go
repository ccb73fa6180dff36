package results

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// rowOf finds the row of a file and record size in an iozone table.
func rowOf(t *testing.T, table Table, fileKB, recKB float64) []float64 {
	t.Helper()
	for _, r := range table.Rows {
		if r[0] == fileKB && r[1] == recKB {
			return r
		}
	}
	return nil
}

func TestIozoneTableAutoMode(t *testing.T) {
	sixTests := []string{"file_KiB", "record_KiB", "write_KiB_per_s", "rewrite_KiB_per_s", "read_KiB_per_s", "reread_KiB_per_s",
		"random_read_KiB_per_s", "random_write_KiB_per_s"}
	tests := []struct {
		fixture string
		columns []string
		rows    int
		// cells are rows copied by hand from the fixture's main table.
		cells    [][]float64
		absent   [][2]float64
		headline []Metric
	}{
		{
			fixture: "iozone-auto-n64k-g4m-i0i1i2-e-R.txt",
			columns: sixTests,
			// 64k to 4M: 5 + 6 + ... + 11 record sizes, 4k up to the file size.
			rows: 56,
			cells: [][]float64{
				{64, 4, 189331, 194545, 347801, 336889, 372410, 344233},
				{2048, 64, 235077, 531792, 7159438, 6895083, 6945257, 1825390},
				{4096, 4096, 106094, 2395473, 1091145, 1106108, 18698043, 2933818},
			},
			absent: [][2]float64{{64, 128}, {4096, 8192}},
			headline: []Metric{
				m("write_4096k_4096k", 106094, "KiB/s", HigherIsBetter),
				m("rewrite_4096k_4096k", 2395473, "KiB/s", HigherIsBetter),
				m("read_4096k_4096k", 1091145, "KiB/s", HigherIsBetter),
				m("reread_4096k_4096k", 1106108, "KiB/s", HigherIsBetter),
				m("random_read_4096k_4096k", 18698043, "KiB/s", HigherIsBetter),
				m("random_write_4096k_4096k", 2933818, "KiB/s", HigherIsBetter),
			},
		},
		{
			fixture: "iozone-auto-n64k-g4m-i0i1i2-I-e-R.txt",
			columns: sixTests,
			rows:    56,
			cells: [][]float64{
				{64, 4, 12204, 7998, 8193, 15893, 6855, 8219},
				{2048, 64, 486328, 523399, 550678, 515484, 483346, 453898},
				{4096, 4096, 822837, 1064770, 937519, 833698, 413615, 574562},
			},
			headline: []Metric{
				m("write_4096k_4096k", 822837, "KiB/s", HigherIsBetter),
				m("rewrite_4096k_4096k", 1064770, "KiB/s", HigherIsBetter),
				m("read_4096k_4096k", 937519, "KiB/s", HigherIsBetter),
				m("reread_4096k_4096k", 833698, "KiB/s", HigherIsBetter),
				m("random_read_4096k_4096k", 413615, "KiB/s", HigherIsBetter),
				m("random_write_4096k_4096k", 574562, "KiB/s", HigherIsBetter),
			},
		},
		{
			// Every test; files of 32M and more skip the records below 64k, so those rows are absent.
			fixture: "iozone-auto-g64M.txt",
			rows:    99,
			cells: [][]float64{
				{16384, 4, 223535, 287948, 248607, 555745, 177762, 199773, 808808, 3937445, 4633250, 1183129, 1558306, 589842, 411255},
				{32768, 64, 239770, 556370, 3109773, 3132668, 3065042, 530896, 1711039, 25801382, 568385, 1002539, 565383, 839189, 1138957},
				{65536, 16384, 296124, 568760, 585655, 342908, 431180, 517490, 641584, 1132117, 2558317, 146590, 328682, 939246, 358128},
			},
			absent: [][2]float64{{32768, 32}, {65536, 4}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			table, err := IozoneTable(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if err := table.Check(); err != nil {
				t.Fatal(err)
			}
			if tt.columns != nil {
				if diff := cmp.Diff(tt.columns, table.Columns); diff != "" {
					t.Errorf("columns (-want +got):\n%s", diff)
				}
			} else if len(table.Columns) != 2+len(iozoneTests) {
				t.Errorf("%d columns, want every test: %v", len(table.Columns), table.Columns)
			}
			if len(table.Rows) != tt.rows {
				t.Errorf("%d rows, want %d", len(table.Rows), tt.rows)
			}
			for i := 1; i < len(table.Rows); i++ {
				prev, r := table.Rows[i-1], table.Rows[i]
				if r[0] < prev[0] || (r[0] == prev[0] && r[1] <= prev[1]) {
					t.Errorf("row %d (%v) is not after row %d (%v)", i, r[:2], i-1, prev[:2])
				}
			}
			for _, want := range tt.cells {
				if diff := cmp.Diff(want, rowOf(t, table, want[0], want[1])); diff != "" {
					t.Errorf("row %gk %gk (-want +got):\n%s", want[0], want[1], diff)
				}
			}
			for _, a := range tt.absent {
				if r := rowOf(t, table, a[0], a[1]); r != nil {
					t.Errorf("row %gk %gk = %v, iozone did not run it", a[0], a[1], r)
				}
			}
			ms, parsed, err := ParseIozoneAuto(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			if diff := cmp.Diff(table, *parsed, cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("ParseIozoneAuto's table differs (-IozoneTable +ParseIozoneAuto):\n%s", diff)
			}
			if tt.headline != nil {
				if diff := cmp.Diff(tt.headline, ms); diff != "" {
					t.Errorf("headlines (-want +got):\n%s", diff)
				}
			}
			// The table holds every figure that ParseIozone gives, and nothing else.
			all, err := ParseIozone(readFixture(t, tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			cells := 0
			for _, r := range table.Rows {
				for _, v := range r[2:] {
					if !math.IsNaN(v) {
						cells++
					}
				}
			}
			if cells != len(all) {
				t.Errorf("table has %d figures, ParseIozone %d", cells, len(all))
			}
			if h, ok := HeadlineOf(Iozone, all); !ok || h != ms[0] {
				t.Errorf("HeadlineOf(ParseIozone) = %+v, the table's write headline is %+v", h, ms[0])
			}
		})
	}
}

// The -R blocks alone give the same table as the main table, blanks where iozone wrote 0.
func TestIozoneTableFromExcelBlocks(t *testing.T) {
	full := string(readFixture(t, "iozone-auto-n64k-g4m-i0i1i2-I-e-R.txt"))
	fromMain, err := IozoneTable([]byte(full))
	if err != nil {
		t.Fatal(err)
	}
	fromExcel, err := IozoneTable([]byte(withoutMainTable(full)))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fromMain, fromExcel, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("(-main +excel):\n%s", diff)
	}
}

func TestIozoneTableBlankCells(t *testing.T) {
	// -i 0 -i 2 leaves read and reread blank in every row.
	input := "\tOutput is in kBytes/sec\n" + iozoneHeader +
		iozoneRowText(map[int]string{0: "1024", 1: "4", 2: "100", 3: "200", 6: "300", 7: "400"}) +
		iozoneRowText(map[int]string{0: "1024", 1: "8", 2: "110", 3: "210", 6: "310", 7: "410"}) + iozoneEnd
	table, err := IozoneTable([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	want := Table{
		Columns: []string{"file_KiB", "record_KiB", "write_KiB_per_s", "rewrite_KiB_per_s", "random_read_KiB_per_s", "random_write_KiB_per_s"},
		Rows:    [][]float64{{1024, 4, 100, 200, 300, 400}, {1024, 8, 110, 210, 310, 410}},
	}
	if diff := cmp.Diff(want, table, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A table with a blank cell (a table read back from its CSV) takes the headline of rewrite from
	// the largest record that has one.
	table.Rows[1][3] = nan
	ms, err := IozoneHeadlines(table)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Metric{
		m("write_1024k_8k", 110, "KiB/s", HigherIsBetter),
		m("rewrite_1024k_4k", 200, "KiB/s", HigherIsBetter),
		m("random_read_1024k_8k", 310, "KiB/s", HigherIsBetter),
		m("random_write_1024k_8k", 410, "KiB/s", HigherIsBetter),
	}, ms); diff != "" {
		t.Errorf("headlines (-want +got):\n%s", diff)
	}
	// -N tables are in microseconds, where lower is better, and say so in their column names.
	us, err := IozoneTable([]byte("\tOutput is in microseconds per operation.\n" + iozoneHeader + iozoneRowText(map[int]string{0: "64", 1: "4", 2: "3"}) + iozoneEnd))
	if err != nil {
		t.Fatal(err)
	}
	if us.Columns[2] != "write_us" {
		t.Errorf("columns %v", us.Columns)
	}
	if ms, err := IozoneHeadlines(us); err != nil || len(ms) != 1 || ms[0].Direction != LowerIsBetter || ms[0].Unit != "us" {
		t.Errorf("IozoneHeadlines = %+v, %v", ms, err)
	}
}

func TestIozoneTableErrors(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"empty", "", "iozone: empty output"},
		{"no table", "iozone: command not found\n", "no result table"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := IozoneTable([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("IozoneTable() error = %v, want %q", err, tt.want)
			}
			if ms, table, err := ParseIozoneAuto([]byte(tt.in)); err == nil || ms != nil || table != nil {
				t.Errorf("ParseIozoneAuto() = %v, %v, %v", ms, table, err)
			}
		})
	}
	for _, tt := range []struct {
		name  string
		table Table
		want  string
	}{
		{"no size columns", Table{Columns: []string{"write_KiB_per_s"}, Rows: [][]float64{{1}}}, "no file_KiB and record_KiB columns"},
		{"no test column", Table{Columns: []string{"file_KiB", "record_KiB", "speed"}, Rows: [][]float64{{64, 4, 1}}}, "no test column"},
		{"only blanks", Table{Columns: []string{"file_KiB", "record_KiB", "write_KiB_per_s"}, Rows: [][]float64{{64, 4, nan}}}, "has no figures"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := IozoneHeadlines(tt.table); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("IozoneHeadlines() error = %v, want %q", err, tt.want)
			}
		})
	}
}
