package schedule

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/metrics"
	"github.com/vmbench/vmbench/internal/platform"
)

// scheduleOwnerIndex indexes suites by the name of the BenchmarkSchedule that controls them.
const scheduleOwnerIndex = ".metadata.controller.benchmarkschedule"

// ScheduleReconciler starts a BenchmarkSchedule's suites on its cron schedule, records every
// finished one in the schedule's history and deletes the finished suites beyond the history limits.
// The suites it starts are BenchmarkSuites like any other: they wait in the run queue and run under
// the suite controller.
type ScheduleReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	History  HistoryStore
	// APIReader reads nodes and the KubeVirt CR for spec.triggers.onVersionChange without a cache
	// (the manager may get nodes, not list them); the client when nil.
	APIReader client.Reader
	// Images are the images the suite controller creates runs with, which
	// spec.triggers.onVersionChange.runnerImage compares with the records.
	Images platform.Images
	// MinInterval is the shortest time allowed between two consecutive starts of a schedule
	// (--min-schedule-interval); DefaultMinScheduleInterval when zero.
	MinInterval time.Duration

	// newest is each schedule's newest record, against status.analyzedThrough.
	newest newestRecords

	// Archive is true when the manager archives finished suites (--archive-s3-*): a suite beyond
	// the history limits is then deleted only once the archive holds it whole.
	Archive bool
}

func (r *ScheduleReconciler) minInterval() time.Duration {
	if r.MinInterval <= 0 {
		return DefaultMinScheduleInterval
	}
	return r.MinInterval
}

// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarkschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarkschedules/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarkschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=vmbench.io,resources=benchmarksuites,verbs=create;delete

// Reconcile records the schedule's finished suites, prunes them to the history limits, starts the
// suite due now if any, and writes the status once.
func (r *ScheduleReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	sched := &vmbenchv1.BenchmarkSchedule{}
	if err := r.Get(ctx, req.NamespacedName, sched); err != nil {
		if apierrors.IsNotFound(err) {
			metrics.ForgetSchedule(req.Namespace, req.Name)
			r.newest.forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !sched.DeletionTimestamp.IsZero() {
		metrics.ForgetSchedule(req.Namespace, req.Name)
		return ctrl.Result{}, nil
	}
	orig := sched.DeepCopy()
	now := r.Clock.Now()
	seen, err := r.observe(ctx, sched)
	if err != nil {
		return ctrl.Result{}, err
	}
	var events []scheduleEvent
	appended, historyErr := false, r.adoptHistory(ctx, sched, now)
	if historyErr == nil {
		appended, historyErr = r.recordFinished(ctx, sched, seen.Finished)
	}
	var analyzeErr error
	analyzed := false
	if historyErr == nil && r.analysisDue(ctx, sched, appended) {
		found, err := r.findChanges(ctx, sched, seen, now)
		events, analyzeErr, analyzed = append(events, found...), err, true
	}
	if historyErr == nil && analyzeErr == nil && (analyzed || baselineStale(sched)) {
		judged, err := r.judgeBaseline(ctx, sched)
		events, analyzeErr = append(events, judged...), err
	}
	triageAfter := triageFindings(sched, now)
	if historyErr == nil {
		pruned, err := r.prune(ctx, sched, seen.Finished)
		if err != nil {
			return ctrl.Result{}, err
		}
		events = append(events, pruned...)
	}
	st := &sched.Status
	setHistoryCondition(sched, historyErr)

	requeue, started, err := r.startDue(ctx, sched, &seen, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	events = append(events, started...)
	checkAfter, triggered, err := r.triggerOnVersionChange(ctx, sched, &seen, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	events = append(events, triggered...)
	confirming, err := r.startConfirmations(ctx, sched, &seen)
	if err != nil {
		return ctrl.Result{}, err
	}
	events = append(events, confirming...)
	setActive(st, seen.Active)
	setLastSuccessful(st, seen.Finished)
	if historyErr == nil {
		st.ObservedGeneration = sched.Generation
	}

	BoundScheduleStatus(st)
	if !equality.Semantic.DeepEqual(orig.Status, sched.Status) {
		if err := r.Status().Patch(ctx, sched, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			if apierrors.IsConflict(err) {
				logger.V(1).Info("schedule status conflict, retrying")
				return ctrl.Result{Requeue: true}, nil
			}
			r.statusRefused(orig, err)
			return ctrl.Result{}, fmt.Errorf("writing the status of schedule %s: %w", sched.Name, err)
		}
	}
	r.emit(sched, events)
	metrics.RecordSchedule(sched)
	if historyErr != nil {
		return ctrl.Result{}, historyErr
	}
	if analyzeErr != nil {
		return ctrl.Result{}, analyzeErr
	}
	if triageAfter > 0 && (requeue == 0 || triageAfter < requeue) {
		requeue = triageAfter
	}
	if checkAfter > 0 && (requeue == 0 || checkAfter < requeue) {
		requeue = checkAfter
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// adoptHistory adopts, once, the history an older vmbench wrote before records were signed, before
// anything reads the history, and sets status.historySignedAt in the status this reconcile writes.
// Only the manager writes the status, so no one else can have unsigned lines adopted later. A
// schedule without records (one this version created) has nothing to adopt and gets the field at
// its first reconcile; so does one whose store cannot adopt.
func (r *ScheduleReconciler) adoptHistory(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, now time.Time) error {
	if sched.Status.HistorySignedAt != nil {
		return nil
	}
	if a, ok := r.History.(HistoryAdopter); ok && sched.Status.Records > 0 {
		if _, err := a.Adopt(ctx, sched); err != nil {
			return fmt.Errorf("adopting the history written before records were signed: %w", err)
		}
	}
	sched.Status.HistorySignedAt = &metav1.Time{Time: now}
	return nil
}

// startDue validates the schedule, says whether it is suspended, and acts on the time due: it
// starts the suite of that time or says why not. It returns when to look again without an event.
func (r *ScheduleReconciler) startDue(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen *scheduleObservation, now time.Time) (time.Duration, []scheduleEvent, error) {
	st := &sched.Status
	parsed, invalid := parseSchedule(sched.Spec, r.minInterval())
	setValid(sched, invalid)
	suspended := sched.Spec.Suspend != nil && *sched.Spec.Suspend
	setSuspended(sched, suspended)
	st.NextScheduleTime = nil
	if invalid != nil {
		// A spec change brings the schedule back.
		setStartSkipped(sched, startDecision{}, nil)
		return 0, nil, nil
	}
	var last *time.Time
	if st.LastScheduleTime != nil {
		last = &st.LastScheduleTime.Time
	}
	d := decideStart(parsed, sched.Spec, sched.CreationTimestamp.Time, last, now)
	if suspended {
		var skip *conditions.Cause
		if !d.Due.IsZero() {
			skip = &conditions.Cause{Reason: vmbenchv1.ReasonScheduleSuspended, Message: "a due start (status.skippedScheduleTime) did not happen as " +
				"spec.suspend is true: set it to false to start the latest one (unless it is later than spec.startingDeadlineSeconds by then)"}
		}
		return 0, eventList(setStartSkipped(sched, d, skip)), nil
	}
	st.NextScheduleTime = &metav1.Time{Time: d.Next}
	started, skip, err := r.start(ctx, sched, *seen, d)
	if err != nil {
		return 0, nil, err
	}
	if started != nil {
		if sched.Spec.ConcurrencyPolicy == vmbenchv1.ConcurrencyReplace {
			// The suites it replaced are being deleted.
			seen.Active = nil
		}
		seen.Active = append(seen.Active, started)
	}
	return requeueAt(sched.Spec, d, skip, now), eventList(setStartSkipped(sched, d, skip)), nil
}

func eventList(ev *scheduleEvent) []scheduleEvent {
	if ev == nil {
		return nil
	}
	return []scheduleEvent{*ev}
}

// observe lists the suites the schedule controls, by UID, through the owner index.
func (r *ScheduleReconciler) observe(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule) (scheduleObservation, error) {
	var list vmbenchv1.BenchmarkSuiteList
	if err := r.List(ctx, &list, client.InNamespace(sched.Namespace), client.MatchingFields{scheduleOwnerIndex: sched.Name}); err != nil {
		return scheduleObservation{}, fmt.Errorf("listing the suites of schedule %s: %w", sched.Name, err)
	}
	var seen scheduleObservation
	for i := range list.Items {
		s := &list.Items[i]
		if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != sched.UID || !s.DeletionTimestamp.IsZero() {
			continue
		}
		if _, done := suiteFinished(s); done {
			seen.Finished = append(seen.Finished, s)
		} else {
			seen.Active = append(seen.Active, s)
		}
	}
	return seen, nil
}

// recordFinished appends the record of every finished suite not recorded yet, then marks the suite
// recorded, so that the history is read only when there is something to add. It says whether it
// appended any. Namespace editors may set or remove the mark, so a marked suite counts as recorded
// only when its UID is in the history, or when it is older than the history's oldest record (whose
// older records were dropped); a suite whose mark was removed is found in the history by its UID.
func (r *ScheduleReconciler) recordFinished(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, finished []*vmbenchv1.BenchmarkSuite) (bool, error) {
	appended := false
	sort.Slice(finished, func(i, j int) bool { return scheduledAt(finished[i]).Before(scheduledAt(finished[j])) })
	recorded, err := r.recordedSuites(ctx, sched, finished)
	if err != nil {
		return false, err
	}
	for _, s := range finished {
		if recorded(s) {
			continue
		}
		phase, _ := suiteFinished(s)
		rec := recordOf(s, phase)
		n, err := r.History.Append(ctx, sched, rec)
		if err != nil {
			return appended, fmt.Errorf("recording suite %s: %w", s.Name, err)
		}
		// The suites are recorded oldest first: the last is the latest record.
		metrics.RecordScheduleRecord(sched.Namespace, sched.Name, rec)
		appended = true
		sched.Status.Records = int32(min(n, MaxHistoryRecords))
		if s.Annotations[vmbenchv1.AnnotationRecorded] == "true" {
			continue
		}
		orig := s.DeepCopy()
		if s.Annotations == nil {
			s.Annotations = map[string]string{}
		}
		s.Annotations[vmbenchv1.AnnotationRecorded] = "true"
		if err := r.Patch(ctx, s, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
			return appended, fmt.Errorf("marking suite %s recorded: %w", s.Name, err)
		}
	}
	return appended, nil
}

// recordedSuites says which of the finished suites marked recorded are: the history is read only
// when one is marked.
func (r *ScheduleReconciler) recordedSuites(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule,
	finished []*vmbenchv1.BenchmarkSuite) (func(*vmbenchv1.BenchmarkSuite) bool, error) {
	marked := func(s *vmbenchv1.BenchmarkSuite) bool { return s.Annotations[vmbenchv1.AnnotationRecorded] == "true" }
	if !slices.ContainsFunc(finished, marked) {
		return marked, nil
	}
	records, err := r.History.List(ctx, sched)
	if err != nil {
		return nil, fmt.Errorf("reading the history of schedule %s to check which suites it records: %w", sched.Name, err)
	}
	uids := make(map[types.UID]bool, len(records))
	var oldest time.Time
	for i, rec := range records {
		uids[rec.UID] = true
		if i == 0 || rec.Scheduled.Before(oldest) {
			oldest = rec.Scheduled
		}
	}
	return func(s *vmbenchv1.BenchmarkSuite) bool {
		return marked(s) && (uids[s.UID] || len(records) > 0 && scheduledAt(s).Before(oldest))
	}, nil
}

// prune deletes the oldest finished, recorded suites beyond the history limits; with an archive,
// only those the archive holds whole (archive_prune.go).
func (r *ScheduleReconciler) prune(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, finished []*vmbenchv1.BenchmarkSuite) ([]scheduleEvent, error) {
	var events []scheduleEvent
	var kept []*vmbenchv1.BenchmarkSuite
	for _, name := range pruneFinished(sched.Spec, finished) {
		s := findSuite(finished, name)
		if awaitsArchive(r.Archive, s) {
			kept = append(kept, s)
			continue
		}
		if err := r.Delete(ctx, s, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil {
			return nil, fmt.Errorf("deleting suite %s beyond the history limit: %w", s.Name, err)
		}
		events = append(events, scheduleEvent{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonHistoryLimitDeleted, action: "Delete",
			note: fmt.Sprintf("deleted suite %s beyond the history limit; its record stays in the schedule's history", s.Name)})
	}
	return append(events, eventList(setAwaitingArchive(sched, r.Archive, kept))...), nil
}

// pruneFinished names the finished suites to delete: per outcome, all but the newest limit, and
// only those already recorded.
func pruneFinished(spec vmbenchv1.BenchmarkScheduleSpec, finished []*vmbenchv1.BenchmarkSuite) []string {
	limit := map[vmbenchv1.SuitePhase]int{vmbenchv1.SuiteComplete: 3, vmbenchv1.SuiteFailed: 1}
	if spec.SuccessfulHistoryLimit != nil {
		limit[vmbenchv1.SuiteComplete] = int(*spec.SuccessfulHistoryLimit)
	}
	if spec.FailedHistoryLimit != nil {
		limit[vmbenchv1.SuiteFailed] = int(*spec.FailedHistoryLimit)
	}
	byPhase := map[vmbenchv1.SuitePhase][]*vmbenchv1.BenchmarkSuite{}
	for _, s := range finished {
		phase, _ := suiteFinished(s)
		byPhase[phase] = append(byPhase[phase], s)
	}
	var out []string
	for _, phase := range []vmbenchv1.SuitePhase{vmbenchv1.SuiteComplete, vmbenchv1.SuiteFailed} {
		suites := byPhase[phase]
		// Newest first.
		sort.Slice(suites, func(i, j int) bool { return scheduledAt(suites[i]).After(scheduledAt(suites[j])) })
		for i, s := range suites {
			if i >= limit[phase] && s.Annotations[vmbenchv1.AnnotationRecorded] == "true" {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

// requeueAt is when the schedule is looked at again without an event: at the next scheduled time,
// or sooner when a start waiting under Forbid or spec.maxActive reaches its deadline, so that the
// skip is said then.
func requeueAt(spec vmbenchv1.BenchmarkScheduleSpec, d startDecision, skip *conditions.Cause, now time.Time) time.Duration {
	at := d.Next
	waits := skip != nil && (skip.Reason == vmbenchv1.ReasonConcurrencyForbid || skip.Reason == vmbenchv1.ReasonMaxActive)
	if waits && spec.StartingDeadlineSeconds != nil &&
		*spec.StartingDeadlineSeconds <= int64(maxDuration/time.Second) {
		if deadline := d.Due.Add(time.Duration(*spec.StartingDeadlineSeconds)*time.Second + time.Second); deadline.Before(at) {
			at = deadline
		}
	}
	if at.IsZero() {
		return 0
	}
	return max(at.Sub(now), time.Second)
}

// SetupWithManager registers the owner index of suites and the watches: the schedule's spec and
// annotations, and the suites it controls.
func (r *ScheduleReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner); err != nil {
		return fmt.Errorf("indexing suites by schedule: %w", err)
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&vmbenchv1.BenchmarkSchedule{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{},
			predicate.AnnotationChangedPredicate{}))).
		Owns(&vmbenchv1.BenchmarkSuite{}).
		Named("benchmarkschedule").
		WithOptions(controller.Options{MaxConcurrentReconciles: 4, ReconciliationTimeout: scheduleReconcileTimeout}).
		Complete(r)
}

// scheduleReconcileTimeout bounds one reconcile of a schedule, so that a stalled API call or the
// analysis of a large history cannot hold a worker for ever.
const scheduleReconcileTimeout = 5 * time.Minute

func indexScheduleOwner(obj client.Object) []string {
	owner := metav1.GetControllerOf(obj)
	if owner == nil || owner.APIVersion != vmbenchv1.GroupVersion.String() || owner.Kind != "BenchmarkSchedule" {
		return nil
	}
	return []string{owner.Name}
}

// setActive lists the unfinished suites by name.
func setActive(st *vmbenchv1.BenchmarkScheduleStatus, active []*vmbenchv1.BenchmarkSuite) {
	st.Active = nil
	for _, s := range active {
		st.Active = append(st.Active, vmbenchv1.ScheduledSuite{Name: s.Name, UID: s.UID})
	}
	sort.Slice(st.Active, func(i, j int) bool { return st.Active[i].Name < st.Active[j].Name })
	if len(st.Active) > 32 {
		st.Active = st.Active[:32]
	}
}

// setLastSuccessful moves lastSuccessfulTime to the latest end of a complete suite; it never goes
// back, as the suites it came from may have been deleted.
func setLastSuccessful(st *vmbenchv1.BenchmarkScheduleStatus, finished []*vmbenchv1.BenchmarkSuite) {
	for _, s := range finished {
		if phase, _ := suiteFinished(s); phase != vmbenchv1.SuiteComplete {
			continue
		}
		t := finishedAt(s)
		if t.IsZero() {
			continue
		}
		if st.LastSuccessfulTime == nil || t.After(st.LastSuccessfulTime.Time) {
			st.LastSuccessfulTime = &metav1.Time{Time: t}
		}
	}
}

// setValid says whether the schedule and its time zone can be read.
func setValid(sched *vmbenchv1.BenchmarkSchedule, invalid *conditions.Cause) {
	c := metav1.Condition{Type: vmbenchv1.ConditionValid, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonValid,
		Message: "spec.schedule and spec.timeZone are valid", ObservedGeneration: sched.Generation}
	if invalid != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, invalid.Reason, invalid.Message+"; no suite starts until then"
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
}

func setSuspended(sched *vmbenchv1.BenchmarkSchedule, suspended bool) {
	c := metav1.Condition{Type: vmbenchv1.ConditionSuspended, Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNotSuspended,
		Message: "suites start on schedule", ObservedGeneration: sched.Generation}
	if suspended {
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, vmbenchv1.ReasonSuspended,
			"spec.suspend is true: no suite starts, the ones started go on; set it to false to resume"
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
}

// setStartSkipped says what became of the latest due start, and returns the event to tell when
// that changed.
func setStartSkipped(sched *vmbenchv1.BenchmarkSchedule, d startDecision, skip *conditions.Cause) *scheduleEvent {
	before := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionStartSkipped)
	c := metav1.Condition{Type: vmbenchv1.ConditionStartSkipped, ObservedGeneration: sched.Generation}
	var ev *scheduleEvent
	sched.Status.SkippedScheduleTime = nil
	switch {
	case skip != nil:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, skip.Reason, skip.Message
		if !d.Due.IsZero() {
			sched.Status.SkippedScheduleTime = &metav1.Time{Time: d.Due}
		}
		if before == nil || before.Status != metav1.ConditionTrue || before.Message != skip.Message {
			// The event, told once, may name the time.
			note := skip.Message
			if !d.Due.IsZero() {
				note = fmt.Sprintf("%s [due at %s]", note, d.Due.UTC().Format(time.RFC3339))
			}
			ev = &scheduleEvent{kind: corev1.EventTypeWarning, reason: skip.Reason, action: "Start", note: note}
		}
	case !d.Due.IsZero():
		name := scheduledSuiteName(sched.Name, d.Due)
		c.Status, c.Reason = metav1.ConditionFalse, vmbenchv1.ReasonStarted
		c.Message = fmt.Sprintf("suite %s started for %s", name, d.Due.UTC().Format(time.RFC3339))
		ev = &scheduleEvent{kind: corev1.EventTypeNormal, reason: vmbenchv1.ReasonStarted, action: "Start", note: c.Message}
	case before != nil && before.Status == metav1.ConditionFalse:
		// Nothing due since the last start: what the condition says of it stays.
		c = *before
		c.ObservedGeneration = sched.Generation
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, vmbenchv1.ReasonNothingDue, "no start was due yet"
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
	return ev
}

// setHistoryCondition says whether the finished suites are recorded.
func setHistoryCondition(sched *vmbenchv1.BenchmarkSchedule, err error) {
	c := metav1.Condition{Type: vmbenchv1.ConditionHistoryRecorded, Status: metav1.ConditionTrue, Reason: "Recorded",
		Message:            fmt.Sprintf("every finished suite is recorded; the history holds %d records (at most %d)", sched.Status.Records, MaxHistoryRecords),
		ObservedGeneration: sched.Generation}
	if err != nil {
		c.Status, c.Reason = metav1.ConditionFalse, vmbenchv1.ReasonHistoryNotWritten
		c.Message = conditions.Truncate(fmt.Sprintf("%v. Finished suites are kept beyond the history limits until they are recorded; check that the manager "+
			"may create and patch ConfigMaps labelled %s in this namespace", err, vmbenchv1.LabelHistoryOf), 1024)
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
}
