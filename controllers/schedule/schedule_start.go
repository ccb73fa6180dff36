package schedule

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// How a schedule starts a suite once one is due: within maxActive, under its concurrency policy.

// atMaxActive says whether a start under Allow must wait, as spec.maxActive suites of the schedule
// are unfinished.
func atMaxActive(spec vmbenchv1.BenchmarkScheduleSpec, active int) bool {
	return spec.ConcurrencyPolicy == vmbenchv1.ConcurrencyAllow && active >= maxActiveOf(spec)
}

func findSuite(suites []*vmbenchv1.BenchmarkSuite, name string) *vmbenchv1.BenchmarkSuite {
	for _, s := range suites {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// start acts on the time due, if any: it skips it when too late or forbidden by the concurrency
// policy, replaces the active suites under Replace, and creates the suite. skip says why nothing
// started; API errors that waiting may heal are returned.
func (r *ScheduleReconciler) start(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen scheduleObservation, d startDecision) (*vmbenchv1.BenchmarkSuite, *conditions.Cause, error) {
	return r.startWith(ctx, sched, seen, d, nil)
}

// startWith is start with annotations added to the suite.
func (r *ScheduleReconciler) startWith(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen scheduleObservation, d startDecision,
	extra map[string]string) (*vmbenchv1.BenchmarkSuite, *conditions.Cause, error) {
	if d.Due.IsZero() {
		return nil, nil, nil
	}
	// The messages leave the due time out (status.skippedScheduleTime holds it), so that a start
	// that waits through several due times is told once.
	if d.TooLate {
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonMissedDeadline, Message: fmt.Sprintf(
			"a due start (status.skippedScheduleTime) was skipped: it is later than spec.startingDeadlineSeconds (%d) after its time, "+
				"as the manager was down, the schedule suspended or a suite of it still running; the next start is at "+
				"status.nextScheduleTime. Raise startingDeadlineSeconds, or remove it, to let late starts happen",
			*sched.Spec.StartingDeadlineSeconds)}, nil
	}
	// The suite of this time exists already when an earlier pass made it and its status write was
	// lost: the start happened.
	name := scheduledSuiteName(sched.Name, d.Due)
	if s := findSuite(slices.Concat(seen.Active, seen.Finished), name); s != nil {
		sched.Status.LastScheduleTime = &metav1.Time{Time: d.Due}
		return nil, nil, nil
	}
	if len(seen.Active) > 0 {
		switch sched.Spec.ConcurrencyPolicy {
		case vmbenchv1.ConcurrencyAllow:
			if atMaxActive(sched.Spec, len(seen.Active)) {
				return nil, &conditions.Cause{Reason: vmbenchv1.ReasonMaxActive, Message: fmt.Sprintf(
					"a due start (status.skippedScheduleTime) waits, as %d suites of this schedule are not finished, the most "+
						"spec.maxActive allows under concurrencyPolicy Allow; it starts when one ends (unless later than "+
						"spec.startingDeadlineSeconds by then). Raise spec.maxActive (at most %d), or start less often",
					maxActiveOf(sched.Spec), vmbenchv1.MaxMaxActive)}, nil
			}
		case vmbenchv1.ConcurrencyReplace:
			for _, s := range seen.Active {
				if err := r.Delete(ctx, s, client.Preconditions{UID: &s.UID}); client.IgnoreNotFound(err) != nil {
					return nil, nil, fmt.Errorf("deleting suite %s to replace it: %w", s.Name, err)
				}
			}
		default:
			return nil, &conditions.Cause{Reason: vmbenchv1.ReasonConcurrencyForbid, Message: fmt.Sprintf(
				"a due start (status.skippedScheduleTime) waits, as suite %s of this schedule is not finished and "+
					"spec.concurrencyPolicy is Forbid; it starts when that suite ends (unless later than spec.startingDeadlineSeconds "+
					"by then). Set concurrencyPolicy to Allow to start beside it, or Replace to delete it and start anew", seen.Active[0].Name)}, nil
		}
	}
	suite, err := r.buildSuite(sched, d.Due)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(suite.Annotations, extra)
	err = r.Create(ctx, suite)
	switch {
	case err == nil:
	case apierrors.IsAlreadyExists(err):
		// Made by an earlier attempt at the same time, whose status write was lost: the name is the
		// scheduled time's, so it is this start, if the schedule controls it.
		existing := &vmbenchv1.BenchmarkSuite{}
		if err := r.Get(ctx, client.ObjectKeyFromObject(suite), existing); err != nil {
			return nil, nil, err
		}
		if ref := metav1.GetControllerOf(existing); ref == nil || ref.UID != sched.UID {
			return nil, &conditions.Cause{Reason: vmbenchv1.ReasonSuiteNameTaken, Message: fmt.Sprintf(
				"a due start (status.skippedScheduleTime) needs the name %s, which a BenchmarkSuite that this schedule did not start has: "+
					"delete or rename that suite", suite.Name)}, nil
		}
		suite = existing
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err):
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonSuiteNotCreated, Message: fmt.Sprintf(
			"suite %s, due at status.skippedScheduleTime, was refused by the API server: %v. Fix spec.suiteTemplate (or ask an "+
				"admin about the refusal); the start is tried again on the next reconcile", suite.Name, err)}, nil
	default:
		return nil, nil, fmt.Errorf("creating suite %s: %w", suite.Name, err)
	}
	sched.Status.LastScheduleTime = &metav1.Time{Time: d.Due}
	return suite, nil, nil
}

// maxActiveOf is spec.maxActive, or its default when left out.
func maxActiveOf(spec vmbenchv1.BenchmarkScheduleSpec) int {
	if spec.MaxActive == nil || *spec.MaxActive < 1 {
		return vmbenchv1.DefaultMaxActive
	}
	return min(int(*spec.MaxActive), vmbenchv1.MaxMaxActive)
}

// buildSuite is the suite started for the scheduled time due.
func (r *ScheduleReconciler) buildSuite(sched *vmbenchv1.BenchmarkSchedule, due time.Time) (*vmbenchv1.BenchmarkSuite, error) {
	tmpl := sched.Spec.SuiteTemplate
	labels := maps.Clone(tmpl.Metadata.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[vmbenchv1.LabelSchedule] = sched.Name
	annotations := maps.Clone(tmpl.Metadata.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[vmbenchv1.AnnotationScheduledAt] = due.UTC().Format(time.RFC3339)
	delete(annotations, vmbenchv1.AnnotationRecorded)
	suite := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{
			Name: scheduledSuiteName(sched.Name, due), Namespace: sched.Namespace, Labels: labels, Annotations: annotations,
		},
		Spec: *tmpl.Spec.DeepCopy(),
	}
	if err := controllerutil.SetControllerReference(sched, suite, r.Scheme); err != nil {
		return nil, err
	}
	return suite, nil
}
