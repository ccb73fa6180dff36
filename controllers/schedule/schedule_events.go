package schedule

import (
	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// What one reconcile of a schedule saw and has to tell: its suites, and the events told once the
// status is written.

// scheduleObservation is what one reconcile found of a schedule's suites.
type scheduleObservation struct {
	// Active are the unfinished suites, Finished the others; both only those the schedule controls.
	Active, Finished []*vmbenchv1.BenchmarkSuite
}

// scheduleEvent is an event told once the status is written.
type scheduleEvent struct {
	kind, reason, action, note string
}

func (r *ScheduleReconciler) emit(sched *vmbenchv1.BenchmarkSchedule, evs []scheduleEvent) {
	if r.Recorder == nil {
		return
	}
	for _, e := range evs {
		r.Recorder.Eventf(sched, nil, e.kind, e.reason, e.action, "%s", conditions.Truncate(e.note, 1024))
	}
}
