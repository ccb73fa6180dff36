package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/history"
)

// spec.confirmation: when an analysis adds findings, a round of confirmation suites is planned at
// once (their names fixed in status.confirmation, so that a retry never makes one twice) and the
// findings wait in Confirmation Pending, which does not alert. The suites start through the same
// path as cron and version-trigger starts: under Allow all at once, under Forbid and Replace one
// after the other as the active suite ends. Once every suite of the round is in the history, each
// finding is Confirmed when the analysis with the new records still finds it, NotConfirmed
// otherwise, and the round ends. A new suspect (a step not yet a change) queues a round the same
// way, of the runs it asks for (at most spec.confirmation.runs), or joins the round under way; it
// needs no verdict, as the analysis with the runs' records turns it into a finding or drops it. Its
// key is kept in status.suspectsQueued, so that it is queued for once, also across restarts.

// defaultConfirmationRuns is spec.confirmation.runs when left out.
const defaultConfirmationRuns = 2

// annotationConfirms holds, on a confirmation suite, the IDs of the findings it confirms and the
// keys of the suspects it settles, comma separated: a round planned again after its status write
// was lost takes the suites made for it.
const annotationConfirms = "vmbench.io/confirms"

// MaxSuspectsQueued is how many suspect keys status.suspectsQueued keeps; the oldest go first.
const MaxSuspectsQueued = 32

// suspectKey names a suspect: a hash of its series, '@', and the suite right after its step.
func suspectKey(sa seriesAnalysis) string {
	s := sa.series
	h := sha256.Sum256([]byte(strings.Join([]string{s.Benchmark, s.Metric, s.Platform, string(s.Arm)}, "\x00")))
	return hex.EncodeToString(h[:6]) + "@" + sa.analysis.Suspect.RunID
}

// suspectKnown says whether keys hold the suspect: the same series, with the suite after its step
// the same or one run of the series off (a step whose split moved by a run as runs came is the
// same step).
func suspectKnown(keys []string, sa seriesAnalysis) bool {
	series, _, _ := strings.Cut(suspectKey(sa), "@")
	at := sa.analysis.Suspect.Index
	for _, k := range keys {
		i := strings.LastIndexByte(k, '@')
		if i < 0 || k[:i] != series {
			continue
		}
		for j, run := range sa.series.Runs {
			if run.ID == k[i+1:] && j-at >= -1 && j-at <= 1 {
				return true
			}
		}
	}
	return false
}

// describeSuspect is a suspect in a few words: its series, the step and where it starts.
func describeSuspect(sa seriesAnalysis) string {
	a := sa.analysis.Suspect
	return fmt.Sprintf("%s %s by %+.1f%% from suite %s on (p=%.2g, key %s)", sa.series.name(), a.Direction, (a.Ratio-1)*100, a.RunID, a.PValue,
		suspectKey(sa))
}

func describeSuspects(suspects []seriesAnalysis) string {
	out := make([]string, 0, len(suspects))
	for _, sa := range suspects {
		out = append(out, describeSuspect(sa))
	}
	return strings.Join(out, "; ")
}

// roundSubject says what a round is for: its findings and its suspects.
func roundSubject(round *vmbenchv1.ConfirmationRound) string {
	var parts []string
	if len(round.Findings) > 0 {
		parts = append(parts, "finding(s) "+strings.Join(round.Findings, ", "))
	}
	if len(round.Suspects) > 0 {
		parts = append(parts, "suspect(s) "+strings.Join(round.Suspects, ", "))
	}
	return strings.Join(parts, " and ")
}

// lastN keeps the newest n of list.
func lastN(list []string, n int) []string {
	if len(list) > n {
		return list[len(list)-n:]
	}
	return list
}

// confirmationRuns is spec.confirmation.runs with its default and bounds.
func confirmationRuns(spec vmbenchv1.BenchmarkScheduleSpec) int {
	if spec.Confirmation == nil || spec.Confirmation.Runs == nil {
		return defaultConfirmationRuns
	}
	return min(max(int(*spec.Confirmation.Runs), 0), vmbenchv1.MaxConfirmationRuns)
}

// settleConfirmation counts the round's suites not yet recorded and, once all are, gives each of
// its pending findings its verdict from found (the analysis that includes them) and ends the round.
// lost are started suites of the round that are gone without a record (deleted by a Replace start
// or by hand): they count as ended with no result.
func settleConfirmation(sched *vmbenchv1.BenchmarkSchedule, found []vmbenchv1.Finding, records []history.Record, lost map[string]bool) []scheduleEvent {
	round := sched.Status.Confirmation
	if round == nil {
		return nil
	}
	recorded := map[string]vmbenchv1.SuitePhase{}
	for _, r := range records {
		recorded[r.Suite] = r.Phase
	}
	remaining, failed := 0, 0
	for _, s := range round.Suites {
		phase, ok := recorded[s]
		switch {
		case lost[s]:
			failed++
		case !ok:
			remaining++
		case phase != vmbenchv1.SuiteComplete:
			failed++
		}
	}
	round.Remaining = int32(remaining)
	if remaining > 0 {
		return nil
	}
	pos := recordPositions(currentSeries(records))
	var events []scheduleEvent
	for i := range sched.Status.Findings {
		f := &sched.Status.Findings[i]
		if f.Confirmation != vmbenchv1.ConfirmationPending || !slices.Contains(round.Findings, f.ID) {
			continue
		}
		f.Confirmation = vmbenchv1.ConfirmationNotConfirmed
		for _, g := range found {
			if sameFinding(*f, g, pos) {
				f.Confirmation = vmbenchv1.ConfirmationConfirmed
				break
			}
		}
		runs := fmt.Sprintf("the confirmation suites %s", strings.Join(round.Suites, ", "))
		if failed > 0 {
			runs += fmt.Sprintf(" (%d of them failed or were deleted and added no result)", failed)
		}
		if f.Confirmation == vmbenchv1.ConfirmationConfirmed {
			kind := corev1.EventTypeNormal
			if f.Regression {
				kind = corev1.EventTypeWarning
			}
			events = append(events, scheduleEvent{kind: kind, reason: vmbenchv1.ReasonChangeConfirmed, action: "Confirm",
				note: fmt.Sprintf("%s confirm the change: %s", runs, describeFinding(*f))})
			continue
		}
		events = append(events, scheduleEvent{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonChangeNotConfirmed, action: "Confirm",
			note: fmt.Sprintf("with %s the change of finding %s (%s %s on %s, %s) is no longer found: it stays in status.findings as "+
				"NotConfirmed and does not alert", runs, f.ID, f.Benchmark, f.Metric, f.Platform, f.Arm)})
	}
	sched.Status.Confirmation = nil
	return events
}

// confirmLater confirms a NotConfirmed finding that a later analysis finds again: the change its
// confirmation runs did not show is there with more runs, and it alerts from now on.
func confirmLater(sched *vmbenchv1.BenchmarkSchedule, found []vmbenchv1.Finding, records []history.Record) []scheduleEvent {
	var pos map[string]int
	var events []scheduleEvent
	for i := range sched.Status.Findings {
		f := &sched.Status.Findings[i]
		if f.Confirmation != vmbenchv1.ConfirmationNotConfirmed {
			continue
		}
		if pos == nil {
			pos = recordPositions(currentSeries(records))
		}
		for _, g := range found {
			if !sameFinding(*f, g, pos) {
				continue
			}
			f.Confirmation = vmbenchv1.ConfirmationConfirmed
			kind := corev1.EventTypeNormal
			if f.Regression {
				kind = corev1.EventTypeWarning
			}
			events = append(events, scheduleEvent{kind: kind, reason: vmbenchv1.ReasonChangeConfirmed, action: "Confirm",
				note: "the change that its confirmation runs did not show is found again with later runs: " + describeFinding(*f)})
			break
		}
	}
	return events
}

// queueConfirmation marks the added findings Pending and plans a round of confirmation suites for
// them and for the suspects not queued for before, or adds them to the round under way (whose runs
// confirm or settle them too). A round for findings has spec.confirmation.runs suites; one for
// suspects only, the most that one of them asks for, at most that. The names of a new round are the
// minutes from now on (after the latest cron start) that no suite of the schedule, started or
// recorded, has taken; suites that a lost status write left behind for these findings or suspects
// are taken back first. added is updated in place.
func queueConfirmation(sched *vmbenchv1.BenchmarkSchedule, added []vmbenchv1.Finding, suspects []seriesAnalysis, seen scheduleObservation,
	records []history.Record, now time.Time) []scheduleEvent {
	runs := confirmationRuns(sched.Spec)
	if runs == 0 {
		return nil
	}
	st := &sched.Status
	var fresh []seriesAnalysis
	var keys []string
	want := 0
	if len(added) > 0 {
		want = runs
	}
	for _, sa := range suspects {
		if sa.analysis.Suspect == nil || suspectKnown(st.SuspectsQueued, sa) || sa.analysis.Suspect.ConfirmationRuns < 1 {
			continue
		}
		fresh = append(fresh, sa)
		keys = append(keys, suspectKey(sa))
		want = max(want, min(sa.analysis.Suspect.ConfirmationRuns, runs))
	}
	if len(added) == 0 && len(fresh) == 0 {
		return nil
	}
	if st.Confirmation == nil {
		// A new round spends the budget; joining the round under way costs no suite.
		left := budgetLeft(sched, now)
		if left == 0 {
			return budgetSpent(sched, added)
		}
		want = min(want, left)
	}
	ids := make([]string, 0, len(added))
	for i := range added {
		added[i].Confirmation = vmbenchv1.ConfirmationPending
		ids = append(ids, added[i].ID)
	}
	for i := range st.Findings {
		if slices.Contains(ids, st.Findings[i].ID) {
			st.Findings[i].Confirmation = vmbenchv1.ConfirmationPending
		}
	}
	st.SuspectsQueued = lastN(append(st.SuspectsQueued, keys...), MaxSuspectsQueued)
	if round := st.Confirmation; round != nil {
		round.Findings = lastN(append(round.Findings, ids...), MaxFindings)
		round.Suspects = lastN(append(round.Suspects, keys...), MaxSuspectsQueued)
		var events []scheduleEvent
		if len(ids) > 0 {
			events = append(events, scheduleEvent{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonConfirmationQueued, action: "Confirm",
				note: fmt.Sprintf("finding(s) %s join the confirmation runs under way (%s, %d not yet recorded); they do not alert until then",
					strings.Join(ids, ", "), strings.Join(round.Suites, ", "), round.Remaining)})
		}
		if len(fresh) > 0 {
			events = append(events, scheduleEvent{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonConfirmationQueued, action: "Confirm",
				note: conditions.Truncate(fmt.Sprintf("the suspected change(s) %s join the confirmation runs under way (%s, %d not yet recorded): the "+
					"analysis with their records turns a suspect into a finding or clears it", describeSuspects(fresh),
					strings.Join(round.Suites, ", "), round.Remaining), 1024)})
		}
		return events
	}
	mine := slices.Concat(ids, keys)
	all := slices.Concat(seen.Active, seen.Finished)
	var names []string
	for _, s := range all {
		for _, id := range strings.Split(s.Annotations[annotationConfirms], ",") {
			if id != "" && slices.Contains(mine, id) && !slices.Contains(names, s.Name) {
				names = append(names, s.Name)
			}
		}
	}
	sort.Strings(names)
	if len(names) > want {
		names = names[:want]
	}
	taken := map[string]bool{}
	for _, s := range all {
		taken[s.Name] = true
	}
	for _, r := range records {
		taken[r.Suite] = true
	}
	if st.LastTrigger != nil {
		taken[st.LastTrigger.Suite] = true
	}
	for t := triggerTime(now, st.LastScheduleTime); len(names) < want; t = t.Add(time.Minute) {
		if name := scheduledSuiteName(sched.Name, t); !taken[name] {
			names = append(names, name)
		}
	}
	st.Confirmation = &vmbenchv1.ConfirmationRound{Findings: lastN(ids, MaxFindings), Suspects: lastN(keys, MaxSuspectsQueued), Suites: names,
		Remaining: int32(len(names))}
	spendBudget(sched, len(names), now)
	how := "all at once, as spec.concurrencyPolicy is Allow"
	if sched.Spec.ConcurrencyPolicy != vmbenchv1.ConcurrencyAllow {
		how = fmt.Sprintf("one after the other, as spec.concurrencyPolicy is %s", concurrencyOf(sched.Spec))
	}
	var notes []string
	if len(ids) > 0 {
		notes = append(notes, fmt.Sprintf("for finding(s) %s, starting %s; the finding(s) do not alert until the suites are recorded "+
			"and the change is still found (set spec.confirmation.runs to 0 to alert at once)", strings.Join(ids, ", "), how))
	}
	if len(fresh) > 0 {
		what := fmt.Sprintf("for the suspected change(s) %s", describeSuspects(fresh))
		if len(ids) == 0 {
			what += ", starting " + how
		}
		notes = append(notes, what+"; the analysis with their records turns a suspect into a finding, confirmed like any new "+
			"finding, or clears it (set spec.confirmation.runs to 0 to leave suspects to the schedule)")
	}
	return []scheduleEvent{{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonConfirmationQueued, action: "Confirm",
		note: conditions.Truncate(fmt.Sprintf("queued %d confirmation suite(s) %s %s", len(names), strings.Join(names, ", "), strings.Join(notes, "; and ")), 1024)}}
}

// defaultMaxSuitesPerDay is spec.confirmation.maxSuitesPerDay when left out: two rounds of the
// default 2 runs a day.
const defaultMaxSuitesPerDay = 4

// budgetPeriod is the period of spec.confirmation.maxSuitesPerDay.
const budgetPeriod = 24 * time.Hour

// maxSuitesPerDay is spec.confirmation.maxSuitesPerDay with its default and bounds.
func maxSuitesPerDay(spec vmbenchv1.BenchmarkScheduleSpec) int {
	if spec.Confirmation == nil || spec.Confirmation.MaxSuitesPerDay == nil {
		return defaultMaxSuitesPerDay
	}
	return min(max(int(*spec.Confirmation.MaxSuitesPerDay), 0), 100)
}

// budgetLeft is how many confirmation suites the current period of the budget still allows at now.
func budgetLeft(sched *vmbenchv1.BenchmarkSchedule, now time.Time) int {
	limit := maxSuitesPerDay(sched.Spec)
	b := sched.Status.ConfirmationBudget
	if b == nil || !now.Before(b.PeriodStart.Add(budgetPeriod)) || now.Before(b.PeriodStart.Time) {
		return limit
	}
	return max(limit-int(b.Suites), 0)
}

// spendBudget counts n confirmation suites queued at now, starting a new period when the last one
// is over.
func spendBudget(sched *vmbenchv1.BenchmarkSchedule, n int, now time.Time) {
	b := sched.Status.ConfirmationBudget
	if b == nil || !now.Before(b.PeriodStart.Add(budgetPeriod)) || now.Before(b.PeriodStart.Time) {
		b = &vmbenchv1.ConfirmationBudget{PeriodStart: metav1.Time{Time: now.Truncate(time.Second)}}
		sched.Status.ConfirmationBudget = b
	}
	b.Suites += int32(n)
}

// budgetSpent leaves the added findings without confirmation runs, so that they alert at once, and
// says why; suspects wait for the schedule, or for the next period.
func budgetSpent(sched *vmbenchv1.BenchmarkSchedule, added []vmbenchv1.Finding) []scheduleEvent {
	if len(added) == 0 {
		return nil
	}
	ids := make([]string, 0, len(added))
	for _, f := range added {
		ids = append(ids, f.ID)
	}
	since := "for this period"
	if b := sched.Status.ConfirmationBudget; b != nil {
		since = "since " + b.PeriodStart.UTC().Format(time.RFC3339)
	}
	return []scheduleEvent{{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonConfirmationBudgetSpent, action: "Confirm",
		note: conditions.Truncate(fmt.Sprintf("no confirmation runs for finding(s) %s: the %d confirmation suites a day of "+
			"spec.confirmation.maxSuitesPerDay are spent %s, so they alert without confirmation. A series that flaps between two "+
			"levels spends it: look in status.findings for the same series again and again; raise maxSuitesPerDay if the runs are worth it",
			strings.Join(ids, ", "), maxSuitesPerDay(sched.Spec), since), 1024)}}
}

func concurrencyOf(spec vmbenchv1.BenchmarkScheduleSpec) vmbenchv1.ConcurrencyPolicy {
	if spec.ConcurrencyPolicy == "" {
		return vmbenchv1.ConcurrencyForbid
	}
	return spec.ConcurrencyPolicy
}

// suiteTime is the time a scheduled suite's name stands for: <schedule>-<minutes since 1970>.
func suiteTime(name string) (time.Time, bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return time.Time{}, false
	}
	minutes, err := strconv.ParseInt(name[i+1:], 10, 64)
	if err != nil || minutes < 0 {
		return time.Time{}, false
	}
	return time.Unix(minutes*60, 0).UTC(), true
}

// startConfirmations starts the round's suites not started yet: all under Allow; under Forbid only
// when no suite of the schedule is unfinished, and under Replace only when no suite of the round is
// (a confirmation suite replaces a cron one, never one of its own round); one at a time under both.
func (r *ScheduleReconciler) startConfirmations(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen *scheduleObservation) ([]scheduleEvent, error) {
	st := &sched.Status
	round := st.Confirmation
	if round == nil || sched.Spec.Suspend != nil && *sched.Spec.Suspend ||
		meta.IsStatusConditionFalse(st.Conditions, vmbenchv1.ConditionValid) {
		// They start once the schedule is resumed or fixed.
		return nil, nil
	}
	policy := concurrencyOf(sched.Spec)
	for int(round.Started) < len(round.Suites) {
		name := round.Suites[round.Started]
		if findSuite(slices.Concat(seen.Active, seen.Finished), name) != nil {
			// Made by an earlier pass whose status write was lost.
			round.Started++
			continue
		}
		if len(seen.Active) > 0 && (policy == vmbenchv1.ConcurrencyForbid || atMaxActive(sched.Spec, len(seen.Active)) ||
			policy == vmbenchv1.ConcurrencyReplace && slices.ContainsFunc(seen.Active, func(s *vmbenchv1.BenchmarkSuite) bool {
				return slices.Contains(round.Suites, s.Name)
			})) {
			// The next one starts when the active suite ends; its watch brings the schedule back.
			return nil, nil
		}
		at, ok := suiteTime(name)
		if !ok {
			return nil, fmt.Errorf("confirmation suite name %q in status.confirmation does not end in minutes", name)
		}
		// A confirmation start leaves lastScheduleTime, which is the cron schedule's, as it was.
		lastSchedule := st.LastScheduleTime
		started, skip, err := r.startWith(ctx, sched, *seen, startDecision{Due: at},
			map[string]string{annotationConfirms: strings.Join(slices.Concat(round.Findings, round.Suspects), ",")})
		st.LastScheduleTime = lastSchedule
		if err != nil {
			return nil, err
		}
		if skip != nil {
			return []scheduleEvent{{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonConfirmationWaits, action: "Start",
				note: fmt.Sprintf("confirmation suite %s for %s did not start: %s", name, roundSubject(round), skip.Message)}}, nil
		}
		if started != nil {
			if policy == vmbenchv1.ConcurrencyReplace {
				seen.Active = nil
			}
			seen.Active = append(seen.Active, started)
		}
		round.Started++
	}
	return nil, nil
}

// lostConfirmations are the started suites of the round that are neither recorded nor found: the
// cache may lag behind a suite just created, so the API server is asked before a suite counts as
// lost.
func (r *ScheduleReconciler) lostConfirmations(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen scheduleObservation,
	records []history.Record) (map[string]bool, error) {
	round := sched.Status.Confirmation
	if round == nil {
		return nil, nil
	}
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	recorded := recordPositions(records)
	lost := map[string]bool{}
	for _, name := range round.Suites[:min(int(round.Started), len(round.Suites))] {
		if _, ok := recorded[name]; ok || findSuite(slices.Concat(seen.Active, seen.Finished), name) != nil {
			continue
		}
		err := reader.Get(ctx, client.ObjectKey{Namespace: sched.Namespace, Name: name}, &vmbenchv1.BenchmarkSuite{})
		switch {
		case apierrors.IsNotFound(err):
			lost[name] = true
		case err != nil:
			return nil, fmt.Errorf("reading confirmation suite %s: %w", name, err)
		}
	}
	return lost, nil
}

// recordPositions maps each record's suite to its index.
func recordPositions(records []history.Record) map[string]int {
	pos := map[string]int{}
	for i, r := range records {
		pos[r.Suite] = i
	}
	return pos
}
