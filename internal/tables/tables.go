// Package tables keeps the whole result tables of a run, too large for a suite's status (iozone
// auto-mode tables, iperf3 time series), in ConfigMaps beside the suite, and reads them back for the
// report. It defines their layout once:
//
//   - the ConfigMaps of run R are named R-tables, R-tables-2, R-tables-3, ... and labelled
//     vmbench.io/suite, vmbench.io/platform and vmbench.io/tables-of=R;
//   - each table is one key, <benchmark>.<node>.csv or <benchmark>.<node>.<variant>.csv, where node
//     is the execution's node or pair (node01, master-node01) and variant tells apart the
//     executions of one benchmark on one node (the iozone target: local, shared);
//   - its value is the table as CSV (results.Table.CSV).
//
// No ConfigMap holds more than MapBudget bytes of keys and values, far under the API server's 1 MiB,
// and a run has at most MaxMaps of them. A table that does not fit is never cut: it is left out
// whole, and counted, so that status and the report say so.
package tables

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// Limits of a run's tables.
const (
	// MapBudget is the most bytes of keys and CSV one ConfigMap holds.
	MapBudget = 512 << 10
	// MaxMaps is the most ConfigMaps one run's tables take.
	MaxMaps = 16
)

// AnnotationBytes is the annotation of a tables ConfigMap that holds its bytes of keys and CSV, so
// that the tables a suite keeps can be summed from metadata alone.
const AnnotationBytes = "vmbench.io/tables-bytes"

// keyPart is what a benchmark, node or variant must look like to be part of a key that can be read
// back: no dot, which separates the parts, and nothing a ConfigMap key refuses.
var keyPart = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$`)

// Key is the ConfigMap key of the table of one execution, or an error when a part would make a key
// that cannot be read back.
func Key(benchmark, node, variant string) (string, error) {
	parts := []string{benchmark, node}
	if variant != "" {
		parts = append(parts, variant)
	}
	for _, p := range parts {
		if !keyPart.MatchString(p) {
			return "", fmt.Errorf("%q is not a name of letters, digits, '-' and '_' that a ConfigMap key can hold", p)
		}
	}
	return strings.Join(parts, ".") + ".csv", nil
}

// ParseKey reads a key made by Key.
func ParseKey(key string) (benchmark, node, variant string, ok bool) {
	name, found := strings.CutSuffix(key, ".csv")
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return "", "", "", false
	}
	for _, p := range parts {
		if !keyPart.MatchString(p) {
			return "", "", "", false
		}
	}
	if len(parts) == 3 {
		variant = parts[2]
	}
	return parts[0], parts[1], variant, true
}

// MapName is the name of a run's i-th tables ConfigMap, counting from 0.
func MapName(run string, i int) string {
	if i == 0 {
		return run + "-tables"
	}
	return run + "-tables-" + strconv.Itoa(i+1)
}

// Labels are the labels of a run's tables ConfigMaps.
func Labels(suite, platform, run string) map[string]string {
	return map[string]string{vmbenchv1.LabelSuite: suite, vmbenchv1.LabelPlatform: platform, vmbenchv1.LabelTablesOf: run}
}

// Entry is the table of one execution.
type Entry struct {
	Benchmark, Node, Variant string
	Table                    results.Table
}

// Lost is a table that is not kept, and why.
type Lost struct {
	Benchmark, Node, Variant string
	Cause                    string
}

// Pack lays out a run's tables in ConfigMap data, in order, each table in the first map with room
// for it: at most MaxMaps maps of at most MapBudget bytes each. What cannot be kept (a key that
// cannot be written, a table that is no table, a table larger than a map, no map left with room) is
// returned as lost, whole.
func Pack(entries []Entry) (maps []map[string]string, lost []Lost) {
	var used []int
	seen := map[string]bool{}
	for _, e := range entries {
		loss := func(format string, a ...any) {
			lost = append(lost, Lost{Benchmark: e.Benchmark, Node: e.Node, Variant: e.Variant, Cause: fmt.Sprintf(format, a...)})
		}
		key, err := Key(e.Benchmark, e.Node, e.Variant)
		if err != nil {
			loss("no ConfigMap key: %v", err)
			continue
		}
		if err := e.Table.Check(); err != nil {
			loss("%v", err)
			continue
		}
		value := string(e.Table.CSV())
		size := len(key) + len(value)
		if size > MapBudget {
			loss("%d bytes of CSV, more than the %d KiB a ConfigMap holds here", size, MapBudget>>10)
			continue
		}
		if seen[key] {
			loss("a second table of the same execution")
			continue
		}
		seen[key] = true
		placed := false
		for i := range maps {
			if used[i]+size <= MapBudget {
				maps[i][key] = value
				used[i] += size
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		if len(maps) == MaxMaps {
			loss("the run's %d ConfigMaps of %d KiB are full", MaxMaps, MapBudget>>10)
			continue
		}
		maps = append(maps, map[string]string{key: value})
		used = append(used, size)
	}
	return maps, lost
}
