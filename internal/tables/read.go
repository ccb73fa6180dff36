package tables

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
)

// Stored is a table read back from a run's ConfigMap.
type Stored struct {
	Entry
	Run, Platform string
}

// Read takes the tables of suite out of ConfigMaps, which may be any: those without the suite's
// label and vmbench.io/tables-of (raw outputs, other suites') are passed over. Labels are anyone's
// to set, so a ConfigMap is read only when its controller is the suite itself, by UID; one that has
// the labels and another controller is named in problems. A key or value that is not a table is not
// used, and named in problems. Tables come in the order of their run and key.
func Read(suite string, uid types.UID, cms []corev1.ConfigMap) (stored []Stored, problems []string) {
	for _, cm := range cms {
		run, ok := cm.Labels[vmbenchv1.LabelTablesOf]
		if !ok || cm.Labels[vmbenchv1.LabelSuite] != suite {
			continue
		}
		if owner := metav1.GetControllerOf(&cm); owner == nil || owner.Kind != "BenchmarkSuite" || owner.UID != uid || uid == "" {
			problems = append(problems, fmt.Sprintf("ConfigMap %s has the labels of suite %s's tables but is not controlled by it (%s): "+
				"its tables are not used, as anyone who may create ConfigMaps in the namespace could have made it", cm.Name, suite, controllerOf(&cm)))
			continue
		}
		platform := cm.Labels[vmbenchv1.LabelPlatform]
		for _, key := range slices.Sorted(maps.Keys(cm.Data)) {
			benchmark, node, variant, ok := ParseKey(key)
			if !ok {
				problems = append(problems, fmt.Sprintf("ConfigMap %s: key %q is not <benchmark>.<node>[.<variant>].csv", cm.Name, key))
				continue
			}
			table, err := results.ParseTableCSV([]byte(cm.Data[key]))
			if err != nil {
				problems = append(problems, fmt.Sprintf("ConfigMap %s, key %s: %v", cm.Name, key, err))
				continue
			}
			stored = append(stored, Stored{Entry: Entry{Benchmark: benchmark, Node: node, Variant: variant, Table: table}, Run: run, Platform: platform})
		}
	}
	slices.SortStableFunc(stored, func(a, b Stored) int {
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		ka, _ := Key(a.Benchmark, a.Node, a.Variant)
		kb, _ := Key(b.Benchmark, b.Node, b.Variant)
		return strings.Compare(ka, kb)
	})
	return stored, problems
}

// controllerOf names a ConfigMap's controller, for problems.
func controllerOf(cm *corev1.ConfigMap) string {
	owner := metav1.GetControllerOf(cm)
	if owner == nil {
		return "it has no controller"
	}
	return fmt.Sprintf("its controller is %s %s, uid %s", owner.Kind, owner.Name, owner.UID)
}
