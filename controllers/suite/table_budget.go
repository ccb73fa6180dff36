package suite

import (
	"context"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/tables"
)

// A suite's tables ConfigMaps live as long as the suite, and each run may add up to
// tables.MaxMaps × tables.MapBudget (8 MiB) of them: in etcd, a suite of many runs would grow
// without end. suiteTableBudget bounds the bytes of tables all the runs of one suite keep, counted
// from the size each tables ConfigMap carries in its annotation tables.AnnotationBytes. Beyond it a
// run's tables ConfigMaps are not written, as keepOutputs degrades any side output: named in the
// run's notKept, status.warnings and an OutputsNotKept event, their tables counted in tablesLost;
// the run's figures go to status all the same.

// suiteTableBudget is the most bytes of tables one suite keeps across its runs: a run at every API
// maximum keeps 4.2 MiB (TestWorstCaseTablesFit), so the bound keeps such a run whole, and a usual
// run's tables (tens of KiB) for hundreds of runs, while 250 suites stay within 2 GiB, etcd's
// default quota.
const suiteTableBudget = 8 << 20

// tableBytes is the size of a tables ConfigMap's keys and values.
func tableBytes(cm *corev1.ConfigMap) int {
	n := 0
	for k, v := range cm.Data {
		n += len(k) + len(v)
	}
	return n
}

// keptTableBytes sums the tables that the suite's other runs keep: the ConfigMaps labelled as the
// suite's tables and controlled by it, each by its annotation (one without counts as full, as a
// ConfigMap written before the annotation may be). The run's own ConfigMaps, written by an earlier
// try of its collection, are not counted.
func (r *SuiteReconciler) keptTableBytes(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := r.APIReader.List(ctx, list, client.InNamespace(suite.Namespace), client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name},
		client.HasLabels{vmbenchv1.LabelTablesOf}); err != nil {
		return 0, fmt.Errorf("listing the tables ConfigMaps of suite %s: %w", suite.Name, err)
	}
	total := 0
	for i := range list.Items {
		cm := &list.Items[i]
		if cm.Labels[vmbenchv1.LabelTablesOf] == run || !metav1.IsControlledBy(cm, suite) {
			continue
		}
		n, err := strconv.Atoi(cm.Annotations[tables.AnnotationBytes])
		if err != nil || n < 0 || n > tables.MapBudget {
			n = tables.MapBudget
		}
		total += n
	}
	return total, nil
}

// withinTableBudget marks each of the run's tables ConfigMaps with its size and leaves out those that
// no longer fit in the suite's budget; what it leaves out is in over, as keepOutputs reports it.
func (r *SuiteReconciler) withinTableBudget(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string,
	outs []sideOutput) (kept []sideOutput, over keptOutputs, err error) {
	over = keptOutputs{lost: map[string]int32{}}
	hasTables := false
	for _, o := range outs {
		hasTables = hasTables || o.tables != nil
	}
	if !hasTables {
		return outs, over, nil
	}
	held, err := r.keptTableBytes(ctx, suite, run)
	if err != nil {
		return nil, over, err
	}
	used := held
	var left []string
	lostTables := int32(0)
	for _, o := range outs {
		if o.tables == nil {
			kept = append(kept, o)
			continue
		}
		size := tableBytes(o.cm)
		if used+size <= suiteTableBudget {
			if o.cm.Annotations == nil {
				o.cm.Annotations = map[string]string{}
			}
			o.cm.Annotations[tables.AnnotationBytes] = strconv.Itoa(size)
			used += size
			kept = append(kept, o)
			continue
		}
		left = append(left, o.cm.Name)
		for b, n := range o.tables {
			over.lost[b] += n
			lostTables += n
		}
	}
	if len(left) > 0 {
		over.notKept = append(over.notKept, fmt.Sprintf("ConfigMaps %s (the run's result tables, %d tables) were not written: suite %s keeps at most %d MiB "+
			"of tables across its runs, and its earlier runs keep %d KiB; delete suites whose tables are no longer needed and run the rest "+
			"in a new suite, or split the suite's platforms or repetitions across several suites", joinNames(left), lostTables, suite.Name,
			suiteTableBudget>>20, held>>10))
	}
	return kept, over, nil
}

// joinNames names up to 3 ConfigMaps and counts the rest, so that a message stays short.
func joinNames(names []string) string {
	if len(names) <= 3 {
		return fmt.Sprint(names)
	}
	return fmt.Sprintf("%v and %d more", names[:3], len(names)-3)
}

// add merges what another step left out into a run's kept outputs.
func (k *keptOutputs) add(other keptOutputs) {
	k.notKept = append(other.notKept, k.notKept...)
	if k.lost == nil {
		k.lost = map[string]int32{}
	}
	for b, n := range other.lost {
		k.lost[b] += n
	}
}
