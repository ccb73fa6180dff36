package bands

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsTableMatchesTable checks that docs/reports.md ("Against what KVM can do") shows the
// figures of Table: in each family's row, the default cell's numbers (and, for network throughput,
// the masquerade band after them) and the tuned cell's.
func TestDocsTableMatchesTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/reports.md")
	if err != nil {
		t.Fatal(err)
	}
	number := regexp.MustCompile(`[0-9]+\.[0-9]+`)
	numbers := func(cell string) []float64 {
		var out []float64
		for _, m := range number.FindAllString(cell, -1) {
			v, _ := strconv.ParseFloat(m, 64)
			out = append(out, v)
		}
		return out
	}
	cells := map[Family][]string{}
	for _, line := range strings.Split(string(doc), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) < 6 {
			continue
		}
		cells[Family(strings.TrimSpace(parts[1]))] = parts
	}
	for _, b := range Table {
		row, ok := cells[b.Family]
		if !ok {
			t.Errorf("docs/reports.md has no row for %s", b.Family)
			continue
		}
		cell, skip := row[3], 0
		if b.Tuned {
			cell = row[4]
		}
		if b.Variant != "" {
			skip = 2
		}
		got := numbers(cell)
		if len(got) < skip+2 || got[skip] != b.Low || got[skip+1] != b.High {
			t.Errorf("docs/reports.md shows %q for %s tuned=%v %s, the table %g–%g", cell, b.Family, b.Tuned, b.Variant, b.Low, b.High)
		}
	}
}
