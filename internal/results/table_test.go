package results

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var nan = math.NaN()

func TestTableCSVRoundTrip(t *testing.T) {
	in := Table{
		Columns: []string{"file_KiB", "record_KiB", "write_KiB_per_s", "read_KiB_per_s"},
		Rows: [][]float64{
			{64, 4, 189331, nan},
			{4096, 4096, 106094, 1091145.5},
			{1, 2, 0.125, 26844274295},
		},
	}
	text := string(in.CSV())
	want := "file_KiB,record_KiB,write_KiB_per_s,read_KiB_per_s\n64,4,189331,\n4096,4096,106094,1091145.5\n1,2,0.125,26844274295\n"
	if text != want {
		t.Errorf("CSV() =\n%s\nwant\n%s", text, want)
	}
	out, err := ParseTableCSV([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	// In a message the table is its CSV, one JSON string.
	raw, err := json.Marshal(struct {
		Table *Table `json:"table"`
	}{&in})
	if err != nil {
		t.Fatal(err)
	}
	if wantJSON := `{"table":` + mustJSON(t, want) + `}`; string(raw) != wantJSON {
		t.Errorf("JSON = %s, want %s", raw, wantJSON)
	}
	var back struct {
		Table *Table `json:"table"`
	}
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, *back.Table, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("JSON round trip (-in +out):\n%s", diff)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseTableCSVCRLF(t *testing.T) {
	got, err := ParseTableCSV([]byte("a,b\r\n1,\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rows) != 1 || got.Rows[0][0] != 1 || !math.IsNaN(got.Rows[0][1]) {
		t.Errorf("got %+v", got)
	}
}

func TestParseTableCSVErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "table: empty"},
		{"header only", "a,b\n", "table: 0 rows, want 1 to 100000"},
		{"ragged row", "a,b\n1,2\n3\n", "wrong number of fields"},
		{"word", "a,b\n1,x\n", `table: row 1, column b: "x" is not a number`},
		{"infinity", "a\nInf\n", `table: row 1, column a: "Inf" is not a number`},
		{"NaN spelt out", "a\nNaN\n", `"NaN" is not a number`},
		{"column with a blank", "a b\n1\n", `table: column "a b" is not a name`},
		{"empty column name", "a,\n1,2\n", `table: column "" is not a name`},
		{"column twice", "a,a\n1,2\n", `table: column "a" appears twice`},
		{"too many columns", strings.Repeat("c,", 40) + "c\n", "table: 41 columns, want 1 to 32"},
		{"bare quote", "a\n\"1\n", "table: "},
		{"row of blanks", "a,b\n1,2\n,\n", "table: row 2 has no value"},
		{"one blank column", "a\n\"\"\n", "table: row 1 has no value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTableCSV([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseTableCSV() = %+v, %v, want an error containing %q", got, err, tt.want)
			}
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
	if _, err := ParseTableCSV([]byte("a\n" + strings.Repeat("1\n", MaxTableRows+1))); err == nil || !strings.Contains(err.Error(), "more than 100000 rows") {
		t.Errorf("too many rows: %v", err)
	}
}

func TestTableMarshalRefusesNoTable(t *testing.T) {
	for _, bad := range []Table{
		{},
		{Columns: []string{"a"}},
		{Columns: []string{"a"}, Rows: [][]float64{{math.Inf(1)}}},
		{Columns: []string{"a", "b"}, Rows: [][]float64{{1}}},
	} {
		if _, err := json.Marshal(bad); err == nil {
			t.Errorf("json.Marshal(%+v) succeeded", bad)
		}
	}
}
