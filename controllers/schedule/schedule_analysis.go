package schedule

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// newestRecords remembers, per schedule, the UID of the newest record of its history that this
// manager has read or written, so that a reconcile knows whether status.analyzedThrough is behind
// without reading the history again. After a restart it is empty, and the first reconcile of each
// schedule reads the history once to learn it.
type newestRecords struct {
	mu sync.Mutex
	// m maps namespace/name to the schedule's UID and its newest record's UID.
	m map[types.NamespacedName][2]types.UID
}

func (n *newestRecords) get(sched *vmbenchv1.BenchmarkSchedule) (types.UID, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, ok := n.m[types.NamespacedName{Namespace: sched.Namespace, Name: sched.Name}]
	if !ok || v[0] != sched.UID {
		return "", false
	}
	return v[1], true
}

func (n *newestRecords) set(sched *vmbenchv1.BenchmarkSchedule, newest types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[types.NamespacedName][2]types.UID{}
	}
	n.m[types.NamespacedName{Namespace: sched.Namespace, Name: sched.Name}] = [2]types.UID{sched.UID, newest}
}

func (n *newestRecords) forget(key types.NamespacedName) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.m, key)
}

// analysisDue says whether the history is to be analysed in this reconcile: after a record was
// appended, when the history was never analysed or the last analysis failed (no condition
// Regressed), and whenever the newest record is not the one status.analyzedThrough names, which is
// how a pass whose status write was lost or refused, or a restart between a record and its status,
// is made up for. An analysis is idempotent: it adds only findings, suspects and rounds the status
// does not hold, and its events are told only once its status is written.
func (r *ScheduleReconciler) analysisDue(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, appended bool) bool {
	st := &sched.Status
	if appended || st.Records > 0 && meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionRegressed) == nil {
		return true
	}
	newest, known := r.newest.get(sched)
	if !known {
		records, err := r.History.List(ctx, sched)
		if err != nil {
			// The analysis reads the history again and says why it cannot.
			return true
		}
		newest = ""
		if len(records) > 0 {
			newest = records[len(records)-1].UID
		}
		r.newest.set(sched, newest)
	}
	return string(newest) != st.AnalyzedThrough
}

// BoundScheduleStatus holds every list and string of the status within the CRD's bounds, so that
// no analysis, however many series moved and whatever the history holds, makes a status the API
// server refuses (it would refuse the whole write, and the findings with it).
func BoundScheduleStatus(st *vmbenchv1.BenchmarkScheduleStatus) {
	if len(st.Findings) > MaxFindings {
		st.Findings = st.Findings[len(st.Findings)-MaxFindings:]
	}
	for i := range st.Findings {
		boundFinding(&st.Findings[i])
	}
	if round := st.Confirmation; round != nil {
		round.Findings = boundStrings(lastN(round.Findings, MaxFindings), 16)
		round.Suspects = boundStrings(lastN(round.Suspects, MaxSuspectsQueued), 48)
		if len(round.Suites) > vmbenchv1.MaxConfirmationRuns {
			round.Suites = round.Suites[:vmbenchv1.MaxConfirmationRuns]
		}
		round.Suites = boundStrings(round.Suites, 30)
		round.Started = min(max(round.Started, 0), int32(len(round.Suites)))
		round.Remaining = min(max(round.Remaining, 0), int32(len(round.Suites)))
	}
	st.SuspectsQueued = boundStrings(lastN(st.SuspectsQueued, MaxSuspectsQueued), 48)
	if len(st.Active) > 32 {
		st.Active = st.Active[:32]
	}
	if t := st.LastTrigger; t != nil {
		if len(t.Changes) > 8 {
			t.Changes = t.Changes[:8]
		}
		t.Changes = boundStrings(t.Changes, 512)
		t.Suite = conditions.Truncate(t.Suite, 30)
	}
	if b := st.Baseline; b != nil {
		b.Suite = conditions.Truncate(b.Suite, 64)
		b.TolerancePercent = finiteOr0(b.TolerancePercent)
		if len(b.Series) > 16 {
			b.Series = b.Series[:16]
		}
		for i := range b.Series {
			s := &b.Series[i]
			s.Benchmark, s.Metric, s.Platform = conditions.Truncate(s.Benchmark, 128), conditions.Truncate(s.Metric, 128), conditions.Truncate(s.Platform, 64)
			s.Ratio, s.RatioLow, s.RatioHigh, s.PValue = finiteOr0(s.Ratio), finiteOr0(s.RatioLow), finiteOr0(s.RatioHigh), finiteOr0(s.PValue)
		}
	}
	for i := range st.Conditions {
		// metav1.Condition allows 32768; the schedule's own messages are shorter still.
		st.Conditions[i].Message = conditions.Truncate(st.Conditions[i].Message, 32768)
	}
}

// boundFinding holds a finding's strings, lists and numbers within the CRD's bounds: the history
// they come from is a ConfigMap, whose names no schema bounds.
func boundFinding(f *vmbenchv1.Finding) {
	f.ID = conditions.Truncate(f.ID, 16)
	f.Benchmark, f.Metric, f.Platform = conditions.Truncate(f.Benchmark, 128), conditions.Truncate(f.Metric, 128), conditions.Truncate(f.Platform, 64)
	f.Before, f.After = conditions.Truncate(f.Before, 64), conditions.Truncate(f.After, 64)
	f.Explanation = conditions.Truncate(f.Explanation, 512)
	if len(f.EnvironmentChanges) > 8 {
		f.EnvironmentChanges = f.EnvironmentChanges[:8]
	}
	f.EnvironmentChanges = boundStrings(f.EnvironmentChanges, 512)
	f.Ratio, f.RatioLow, f.RatioHigh, f.PValue = finiteOr0(f.Ratio), finiteOr0(f.RatioLow), finiteOr0(f.RatioHigh), finiteOr0(f.PValue)
	if len(f.Series) > vmbenchv1.MaxFindingSeries {
		f.Series = f.Series[:vmbenchv1.MaxFindingSeries]
	}
	for i := range f.Series {
		s := &f.Series[i]
		s.Benchmark, s.Metric, s.Platform = conditions.Truncate(s.Benchmark, 128), conditions.Truncate(s.Metric, 128), conditions.Truncate(s.Platform, 64)
		s.Ratio = finiteOr0(s.Ratio)
	}
	f.SeriesCount = max(f.SeriesCount, 0)
	f.Regressions = min(max(f.Regressions, 0), max(f.SeriesCount, 1))
}

// boundStrings truncates each string of list to n bytes (so at most n characters).
func boundStrings(list []string, n int) []string {
	for i := range list {
		list[i] = conditions.Truncate(list[i], n)
	}
	return list
}

// statusRefused tells, on the schedule, that its status write was refused (not a conflict, which
// is retried quietly): what this pass found is not lost, as status.analyzedThrough stays behind and
// the next reconcile analyses again, but it is not shown until the write goes through.
func (r *ScheduleReconciler) statusRefused(sched *vmbenchv1.BenchmarkSchedule, err error) {
	if r.Recorder == nil || !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) && !apierrors.IsForbidden(err) &&
		!apierrors.IsRequestEntityTooLargeError(err) {
		return
	}
	r.Recorder.Eventf(sched, nil, corev1.EventTypeWarning, vmbenchv1.ReasonStatusNotWritten, "WriteStatus", "%s", conditions.Truncate(fmt.Sprintf(
		"the API server refused the status of this schedule: %v. The findings, confirmation runs and baseline verdict of this pass are "+
			"analysed again on each reconcile until the write goes through; this is a bug of vmbench: report it with this message", err), 1024))
}
