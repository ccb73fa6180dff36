package suite

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/tables"
)

// A run's raw outputs and whole result tables are kept in ConfigMaps beside its results, best effort:
// the results go to status whatever becomes of them. A ConfigMap that cannot be written (a
// ResourceQuota, an admission policy, a name taken by an object that is not the suite's) is named in
// the run's notKept and in status.warnings, and its tables count as lost; collection goes on. Only an
// error that may heal (a conflict, throttling, a timeout, a 5xx) is tried again, until collectRetry
// after the run ended.

// ReasonOutputsUnwritable holds a run's collection up while one of its ConfigMaps could not be
// written for a reason that may pass.
const ReasonOutputsUnwritable = "OutputsUnwritable"

// ReasonOutputsNotKept is the Warning event of a run whose raw outputs or tables were not kept.
const ReasonOutputsNotKept = "OutputsNotKept"

// sideOutput is one ConfigMap of a run's side outputs: what it holds, for messages, and per
// benchmark the tables in it, which are lost with it.
type sideOutput struct {
	cm     *corev1.ConfigMap
	what   string
	tables map[string]int32
}

// sideOutputs are the ConfigMaps a finished run's report fills: its raw outputs, then its tables.
func sideOutputs(raw *corev1.ConfigMap, kept summary.RunTables) []sideOutput {
	var out []sideOutput
	if raw != nil {
		out = append(out, sideOutput{cm: raw, what: "the run's raw outputs"})
	}
	for _, cm := range kept.Maps {
		counts := map[string]int32{}
		for key := range cm.Data {
			if benchmark, _, _, ok := tables.ParseKey(key); ok {
				counts[benchmark]++
			}
		}
		out = append(out, sideOutput{cm: cm, what: "the run's result tables", tables: counts})
	}
	return out
}

// keptOutputs is what became of a run's side outputs.
type keptOutputs struct {
	// notKept names each ConfigMap that was not written, its cause and what to change.
	notKept []string
	// lost counts, per benchmark, the tables in ConfigMaps that were not written.
	lost map[string]int32
	// retry is set when a ConfigMap could not be written for a reason that may pass, before
	// retryEnd: the run is collected again later.
	retry *conditions.Cause
}

// keepOutputs writes a run's side outputs, each after checking that no object of its name belongs to
// anything but the suite: vmbench never takes over an object it did not create.
func (r *SuiteReconciler) keepOutputs(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run string, outs []sideOutput,
	now, retryEnd time.Time) keptOutputs {
	res := keptOutputs{lost: map[string]int32{}}
	advised := map[string]bool{}
	for _, o := range outs {
		name := o.cm.Name
		existing, err := r.readMeta(ctx, o.cm)
		foreign := existing != nil && !metav1.IsControlledBy(existing, suite)
		if err == nil && !foreign {
			err = r.apply(ctx, suite, o.cm)
		}
		var why string
		switch {
		case foreign:
			why = fmt.Sprintf("ConfigMap %s (%s) was not written: a ConfigMap of that name exists and is not this suite's (%s); "+
				"vmbench does not take over objects it did not create: delete ConfigMap %s, which is not this suite's", name, o.what,
				controllerOf(existing), name)
		case err == nil:
			continue
		case refusedForGood(err):
			why = fmt.Sprintf("ConfigMap %s (%s) was not written: the API server refused it: %s", name, o.what, conditions.OneLineString(err.Error()))
			// The same advice once: notKept has room for 1024 characters.
			if advice := keepAdvice(err, name); !advised[advice] {
				advised[advice] = true
				why += "; " + advice
			}
		case now.Before(retryEnd):
			res.retry = &conditions.Cause{Reason: ReasonOutputsUnwritable, Message: fmt.Sprintf("writing ConfigMap %s (%s) of run %s failed, "+
				"retrying until %s, then the run's results go to status without it: %s", name, o.what, run,
				retryEnd.UTC().Format(time.RFC3339), conditions.OneLineString(err.Error()))}
			return res
		default:
			why = fmt.Sprintf("ConfigMap %s (%s) was not written: gave up after %s: %s", name, o.what, collectRetry, conditions.OneLineString(err.Error()))
		}
		res.notKept = append(res.notKept, why)
		for b, n := range o.tables {
			res.lost[b] += n
		}
	}
	return res
}

// keepAdvice says what to change about a refused ConfigMap.
func keepAdvice(err error, name string) string {
	msg := err.Error()
	switch {
	case apierrors.IsForbidden(err) && strings.Contains(msg, "exceeded quota"):
		return fmt.Sprintf("the namespace's ResourceQuota has no room for it: raise its count/configmaps (each run keeps up to %d ConfigMaps, "+
			"its raw outputs and tables, until its suite is deleted), or delete suites whose results are no longer needed", tables.MaxMaps+1)
	case apierrors.IsForbidden(err) && strings.Contains(msg, "being terminated"):
		return "the namespace is being deleted"
	case strings.Contains(msg, "Controller set"):
		return fmt.Sprintf("ConfigMap %s was created meanwhile by something else: delete it, as it is not this suite's", name)
	}
	return "an admission policy or webhook of the cluster refuses it: ask the cluster's admins to admit vmbench's ConfigMaps " +
		"(labelled " + vmbenchv1.LabelSuite + ") in this namespace"
}

// notKeptWarning names the runs whose side outputs were not kept, with the first one's causes, or "".
func notKeptWarning(st *vmbenchv1.BenchmarkSuiteStatus) string {
	var runs []string
	first := ""
	for _, r := range st.Runs {
		if r.NotKept == "" {
			continue
		}
		runs = append(runs, r.Name)
		if first == "" {
			first = r.NotKept
		}
	}
	switch len(runs) {
	case 0:
		return ""
	case 1:
		return conditions.Truncate(fmt.Sprintf("run %s kept its results in status, but not all its raw outputs or tables: %s", runs[0], first), 2048)
	}
	return conditions.Truncate(fmt.Sprintf("runs %s kept their results in status, but not all their raw outputs or tables (status.runs[].notKept "+
		"says why for each); run %s: %s", strings.Join(runs, ", "), runs[0], first), 2048)
}
