package preflight

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// cpuText writes a CPU quantity as people count CPUs: "2", "1.5", "100m".
func cpuText(q resource.Quantity) string {
	milli := q.MilliValue()
	switch {
	case milli%1000 == 0:
		return strconv.FormatInt(milli/1000, 10)
	case milli > 1000 && milli%100 == 0:
		return strconv.FormatFloat(float64(milli)/1000, 'f', -1, 64)
	}
	return fmt.Sprintf("%dm", milli)
}

// cpusText is cpuText with its unit: "1 CPU", "4 CPUs", "100m CPU".
func cpusText(q resource.Quantity) string {
	s := cpuText(q)
	if q.MilliValue() > 1000 {
		return s + " CPUs"
	}
	return s + " CPU"
}

// memText writes a byte quantity in binary units, one decimal at most: "7.7Gi", "512Mi".
func memText(q resource.Quantity) string {
	b := q.Value()
	const ki, mi, gi, ti = 1 << 10, 1 << 20, 1 << 30, 1 << 40
	unit := func(div int64, suffix string) string {
		return strconv.FormatFloat(float64(int64(float64(b)/float64(div)*10))/10, 'f', -1, 64) + suffix
	}
	switch {
	case b >= ti:
		return unit(ti, "Ti")
	case b >= gi:
		return unit(gi, "Gi")
	case b >= mi:
		return unit(mi, "Mi")
	case b >= ki:
		return unit(ki, "Ki")
	}
	return strconv.FormatInt(b, 10)
}

// quantityText writes a quota or limit figure in the unit its resource is counted in.
func quantityText(name string, q resource.Quantity) string {
	switch {
	case strings.HasSuffix(name, "cpu"):
		return cpuText(q)
	case strings.HasSuffix(name, "memory"), strings.HasSuffix(name, "storage"):
		return memText(q)
	}
	return q.String()
}

// list joins names as a sentence's list, at most limit of them, with "and N more".
func list(items []string, limit int) string {
	if len(items) > limit {
		return strings.Join(items[:limit], ", ") + fmt.Sprintf(" and %d more", len(items)-limit)
	}
	return strings.Join(items, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// plural writes a count with its noun: "1 pod", "3 pods".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
