package results

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// stressNGFigure maps one per-stressor figure to its metric. yamlKey is the
// key in the YAML metrics entry; textColumn is its column in the text table,
// counted after the stressor name. The CPU and RSS columns exist only with
// --metrics, so shorter --metrics-brief rows simply lack them.
type stressNGFigure struct {
	name       string
	yamlKey    string
	textColumn int
	unit       string
	dir        Direction
	// required figures are printed by every stress-ng that writes metrics;
	// the others only by releases (or options) that measure them.
	required bool
}

var stressNGFigures = []stressNGFigure{
	{"bogo_ops_per_second_real", "bogo-ops-per-second-real-time", 4, unitBogoOpsS, HigherIsBetter, true},
	{"bogo_ops_per_second_usr_sys", "bogo-ops-per-second-usr-sys-time", 5, unitBogoOpsS, HigherIsBetter, true},
	{"cpu_usage_percent", "cpu-usage-per-instance", 6, unitPercent, LowerIsBetter, false},
	{"max_rss_kb", "max-rss", 7, unitKiB, LowerIsBetter, false},
}

// The text table has bogo ops, real, usr and sys time and the two rates after
// the stressor name; --metrics adds CPU usage and RSS.
const (
	stressNGBriefColumns = 6
	stressNGFullColumns  = 8
)

// errStressNGDamaged marks a YAML metrics section that is there but cannot be
// read whole, which is refused rather than explained as a missing option.
var errStressNGDamaged = errors.New("stress-ng: the YAML metrics section is damaged")

var errStressNGNoMetrics = errors.New("stress-ng: output has no metrics; run stress-ng with --metrics-brief (or --metrics)")

type stressNGResult struct {
	stressor string
	values   map[string]float64
}

// ParseStressNG parses the YAML file written by `stress-ng --yaml FILE`, or,
// failing that, the "metrc:" table stress-ng prints on stderr. Per stressor
// it returns bogo_ops_per_second_real, bogo_ops_per_second_usr_sys,
// cpu_usage_percent and max_rss_kb (the last two only when the output has
// them).
//
// vmbench runs one stressor per invocation, so with exactly one stressor the
// names are bare, which keeps them identical across stressors and lets
// Headline name them. With several stressors each name gets a
// "<stressor>_" prefix (snake_case, e.g. cpu_bogo_ops_per_second_real).
//
// Without --metrics or --metrics-brief stress-ng writes no metrics at all;
// that is reported as an error that names the missing option.
//
// Each YAML metrics entry must have its stressor name and both bogo-ops
// rates; cpu-usage-per-instance and max-rss are read when there. In the text
// table, a row of a stressor that "dispatching hogs:" names must be readable,
// and each such stressor must have a row. Anything else is refused by name.
func ParseStressNG(output []byte) ([]Metric, error) {
	if isBlank(output) {
		return nil, errors.New("stress-ng: empty output")
	}
	stressors, yamlErr := stressNGFromYAML(output)
	if yamlErr == nil {
		return stressNGMetrics(stressors)
	}
	text, err := stressNGFromText(output)
	if err != nil {
		return nil, err
	}
	if len(text) > 0 {
		return stressNGMetrics(text)
	}
	if errors.Is(yamlErr, errStressNGDamaged) {
		return nil, yamlErr
	}
	if failure := stressNGFailure(output); failure != "" {
		return nil, errors.New("stress-ng reported an error: " + failure)
	}
	if strings.Contains(string(output), "stress-ng:") {
		// A stderr log without a table: the run itself went fine.
		return nil, errStressNGNoMetrics
	}
	return nil, yamlErr
}

// stressNGFailure returns the first "error:" or "fail:" log line of a stderr
// log, the way stress-ng reports stressors that could not run.
func stressNGFailure(output []byte) string {
	for _, line := range lines(output) {
		_, rest, ok := strings.Cut(line, "stress-ng:")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "error:") || strings.HasPrefix(rest, "fail:") {
			return firstLine(rest)
		}
	}
	return ""
}

func stressNGMetrics(stressors []stressNGResult) ([]Metric, error) {
	prefixes := make([]string, len(stressors))
	if len(stressors) > 1 {
		names := make([]string, len(stressors))
		for i, s := range stressors {
			names[i] = s.stressor
		}
		for i, p := range uniquePrefixes(names) {
			prefixes[i] = p + "_"
		}
	}
	var ms metricList
	for i, s := range stressors {
		for _, f := range stressNGFigures {
			if v, ok := s.values[f.name]; ok {
				ms.add(prefixes[i]+f.name, v, f.unit, f.dir)
			}
		}
	}
	if ms.empty() {
		return nil, errors.New("stress-ng: metrics section has no readable figures")
	}
	return ms.metrics, nil
}

// stressNGFromYAML returns the stressors of the metrics section. It returns
// an error when the input is not a stress-ng YAML document or has no metrics
// section; the caller then still tries the text table.
//
// The document is walked as yaml.Node scalars rather than decoded into Go
// types so that no value is reinterpreted: stressor names such as "null" stay
// names, and `date-yyyy-mm-dd: 2026:11:22` is never read at all.
func stressNGFromYAML(output []byte) ([]stressNGResult, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(stressNGDocument(output), &doc); err != nil {
		return nil, errors.New("stress-ng: output is neither stress-ng YAML nor a text report with metrc lines: " + firstLine(err.Error()))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("stress-ng: output is neither stress-ng YAML nor a text report with metrc lines")
	}
	root := doc.Content[0]
	metrics := mappingValue(root, "metrics")
	if metrics == nil {
		if mappingValue(root, "system-info") == nil {
			return nil, errors.New("stress-ng: YAML has neither system-info nor metrics; is this stress-ng --yaml output?")
		}
		return nil, errStressNGNoMetrics
	}
	if metrics.Kind != yaml.SequenceNode || len(metrics.Content) == 0 {
		return nil, errors.New("stress-ng: metrics section is empty")
	}
	var stressors []stressNGResult
	for i, entry := range metrics.Content {
		if entry.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%w: entry %d of metrics is not a mapping", errStressNGDamaged, i+1)
		}
		result := stressNGResult{values: map[string]float64{}}
		name := mappingValue(entry, "stressor")
		if name == nil || name.Kind != yaml.ScalarNode || strings.TrimSpace(name.Value) == "" {
			return nil, fmt.Errorf("%w: entry %d of metrics has no stressor name", errStressNGDamaged, i+1)
		}
		result.stressor = name.Value
		for _, f := range stressNGFigures {
			node := mappingValue(entry, f.yamlKey)
			if node == nil {
				if f.required {
					return nil, fmt.Errorf("%w: the entry of stressor %q has no %s", errStressNGDamaged, firstLine(result.stressor), f.yamlKey)
				}
				continue
			}
			v, ok := parseNumber(node.Value)
			if node.Kind != yaml.ScalarNode || !ok {
				return nil, fmt.Errorf("%w: cannot read %s of stressor %q: %q", errStressNGDamaged, f.yamlKey, firstLine(result.stressor), firstLine(node.Value))
			}
			result.values[f.name] = v
		}
		stressors = append(stressors, result)
	}
	return stressors, nil
}

// stressNGDocument cuts the YAML document out of output, which may also hold
// the stderr log when both were captured into one file. stress-ng brackets
// the document with "---" and "...".
func stressNGDocument(output []byte) []byte {
	ls := lines(output)
	start := -1
	for i, l := range ls {
		if strings.TrimRight(l, " \t") == "---" {
			start = i
			break
		}
	}
	if start < 0 {
		return output
	}
	end := len(ls)
	for i := start + 1; i < len(ls); i++ {
		if strings.TrimRight(ls[i], " \t") == "..." {
			end = i
			break
		}
	}
	return []byte(strings.Join(ls[start:end], "\n"))
}

// mappingValue returns the value node of key in a YAML mapping node, or nil.
func mappingValue(mapping *yaml.Node, key string) *yaml.Node {
	if mapping == nil || mapping.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(mapping.Content); i += 2 {
		k := mapping.Content[i]
		if k.Kind == yaml.ScalarNode && k.Value == key {
			return mapping.Content[i+1]
		}
	}
	return nil
}

// stressNGFromText reads the table stress-ng prints on stderr, e.g.
//
//	stress-ng: metrc: [26606] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s
//	stress-ng: metrc: [26606]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)
//	stress-ng: metrc: [26606] cpu   2531  10.02  2.56  0.03  252.53  975.92
//
// The table starts at its "stressor bogo ops" title, whatever the tag (older
// releases spelled "metrc" as "info"), and its rows are a name followed by 6
// or 8 numbers. A row of a stressor named in "dispatching hogs:" that cannot
// be read, and a dispatched stressor without a row, are refused. It returns
// no rows and no error for output without a table.
func stressNGFromText(output []byte) ([]stressNGResult, error) {
	ls := lines(output)
	dispatched := stressNGDispatched(ls)
	var stressors []stressNGResult
	tag, sawTable := "", false
	for _, line := range ls {
		_, rest, ok := strings.Cut(line, "stress-ng:")
		if !ok {
			continue
		}
		// Split off the "metrc: [PID]" tag and pid.
		lineTag, rest, ok := strings.Cut(rest, "]")
		if !ok {
			continue
		}
		lineTag, _, _ = strings.Cut(lineTag, "[")
		lineTag = strings.TrimSpace(lineTag)
		fields := strings.Fields(rest)
		if len(fields) >= 2 && fields[0] == "stressor" && fields[1] == "bogo" {
			tag, sawTable = lineTag, true
			continue
		}
		if tag == "" || len(fields) == 0 {
			continue
		}
		if lineTag != tag || strings.Contains(rest, "miscellaneous metrics") {
			// The table is over: other log lines, or the per-stressor extras of --metrics.
			tag = ""
			continue
		}
		result, ok := stressNGRow(fields)
		if !ok {
			if dispatched[fields[0]] {
				return nil, fmt.Errorf("stress-ng: cannot read the metrics row %q", firstLine(strings.TrimSpace(line)))
			}
			continue
		}
		stressors = append(stressors, result)
	}
	if !sawTable {
		return nil, nil
	}
	for _, name := range stressNGDispatchOrder(ls) {
		found := false
		for _, s := range stressors {
			found = found || s.stressor == name
		}
		if !found {
			return nil, fmt.Errorf("stress-ng: the metrics table has no row for the stressor %q that was dispatched; the table is cut off or damaged", firstLine(name))
		}
	}
	return stressors, nil
}

// stressNGRow reads a table row: a name followed by 6 (--metrics-brief) or 8
// (--metrics) numbers.
func stressNGRow(fields []string) (stressNGResult, bool) {
	if len(fields) != 1+stressNGBriefColumns && len(fields) != 1+stressNGFullColumns {
		return stressNGResult{}, false
	}
	values := make([]float64, 0, len(fields)-1)
	for _, f := range fields[1:] {
		v, ok := parseNumber(f)
		if !ok {
			return stressNGResult{}, false
		}
		values = append(values, v)
	}
	result := stressNGResult{stressor: fields[0], values: map[string]float64{}}
	for _, f := range stressNGFigures {
		if f.textColumn < len(values) {
			result.values[f.name] = values[f.textColumn]
		}
	}
	return result, true
}

// stressNGDispatchOrder returns the stressors of the "dispatching hogs: 2 cpu,
// 1 vm" line, in its order.
func stressNGDispatchOrder(ls []string) []string {
	for _, l := range ls {
		_, hogs, ok := strings.Cut(l, "dispatching hogs:")
		if !ok {
			continue
		}
		var names []string
		for _, hog := range strings.Split(hogs, ",") {
			if f := strings.Fields(hog); len(f) == 2 {
				names = append(names, f[1])
			}
		}
		return names
	}
	return nil
}

func stressNGDispatched(ls []string) map[string]bool {
	names := map[string]bool{}
	for _, n := range stressNGDispatchOrder(ls) {
		names[n] = true
	}
	return names
}
