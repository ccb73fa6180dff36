package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// A schedule's times are pure functions of its cron expression, its time zone, the time it last
// started a suite for and the clock, as in the CronJob controller: the reconcile computes the most
// recent time due, decides about it, and comes back exactly at the next one.

// The bounds of the minimum interval between two starts of a schedule (the manager's
// --min-schedule-interval). Five minutes is the default: a VM suite takes minutes to boot and run,
// so starts closer than that only pile up behind it (Forbid) or in the run queue (Allow), while
// each start costs a suite, a history record, a status write and an event; it is also the
// shortest interval GitHub Actions allows a scheduled workflow. A minute is the finest a cron
// expression can say; the interval is checked on the times of one day, so an hour is the most
// that check can enforce.
const (
	DefaultMinScheduleInterval = 5 * time.Minute
	LowestMinScheduleInterval  = time.Minute
	HighestMinScheduleInterval = time.Hour
)

// parseSchedule reads spec.schedule in spec.timeZone, and refuses @every and any schedule whose
// consecutive starts can be closer than minInterval. A cause names what to fix.
func parseSchedule(spec vmbenchv1.BenchmarkScheduleSpec, minInterval time.Duration) (cron.Schedule, *conditions.Cause) {
	expr := strings.TrimSpace(spec.Schedule)
	if strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ=") {
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonInvalidSchedule, Message: fmt.Sprintf(
			"spec.schedule %q names a time zone: remove the TZ= prefix and set spec.timeZone instead", spec.Schedule)}
	}
	if strings.HasPrefix(expr, "@every") {
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonInvalidSchedule, Message: fmt.Sprintf(
			"spec.schedule %q uses @every, which vmbench does not take: write a cron expression of 5 fields, for example %q, "+
				"or @hourly, @daily, @weekly, @monthly or @yearly", spec.Schedule, everyExample(minInterval))}
	}
	loc := time.UTC
	if spec.TimeZone != nil {
		var err error
		if loc, err = time.LoadLocation(*spec.TimeZone); err != nil || *spec.TimeZone == "Local" {
			return nil, &conditions.Cause{Reason: vmbenchv1.ReasonUnknownTimeZone, Message: fmt.Sprintf(
				"spec.timeZone %q is not an IANA time zone the manager knows: set a zone such as Europe/Berlin or America/New_York, "+
					"or remove spec.timeZone for UTC", *spec.TimeZone)}
		}
	}
	sched, err := cron.ParseStandard(expr)
	if err != nil {
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonInvalidSchedule, Message: fmt.Sprintf(
			"spec.schedule %q is not a cron expression (%v): write 5 fields, minute hour day-of-month month day-of-week, "+
				"for example \"0 3 * * *\" for 03:00 every day, or a descriptor such as @daily", spec.Schedule, err)}
	}
	s, ok := sched.(*cron.SpecSchedule)
	if !ok {
		// ParseStandard gives anything else only for @every.
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonInvalidSchedule, Message: fmt.Sprintf(
			"spec.schedule %q is not a cron expression: write 5 fields, for example %q", spec.Schedule, everyExample(minInterval))}
	}
	s.Location = loc
	if gap := shortestGap(s); gap < minInterval {
		return nil, &conditions.Cause{Reason: vmbenchv1.ReasonTooFrequent, Message: fmt.Sprintf(
			"spec.schedule %q starts suites %s apart, more often than the minimum of %s between two starts that this manager "+
				"allows (its --min-schedule-interval, the Helm value minScheduleInterval): start at most every %s, for example %q",
			spec.Schedule, gap, minInterval, minInterval, everyExample(minInterval))}
	}
	return s, nil
}

// shortestGap is the shortest time between two consecutive starts of s on the wall clock: between
// two times of one day, or from the last time of a day to the first of the next, as if every day
// started. Daylight saving time may bring two starts closer twice a year; that is let be.
func shortestGap(s *cron.SpecSchedule) time.Duration {
	var times []int // minutes since midnight, ascending
	for h := range 24 {
		if s.Hour&(1<<h) == 0 {
			continue
		}
		for m := range 60 {
			if s.Minute&(1<<m) != 0 {
				times = append(times, h*60+m)
			}
		}
	}
	if len(times) == 0 {
		return 24 * time.Hour
	}
	gap := times[0] + 24*60 - times[len(times)-1]
	for i := 1; i < len(times); i++ {
		gap = min(gap, times[i]-times[i-1])
	}
	return time.Duration(gap) * time.Minute
}

// everyExample is a cron expression that starts every minInterval, or hourly.
func everyExample(minInterval time.Duration) string {
	if m := int(minInterval / time.Minute); m >= 1 && m < 60 && 60%m == 0 && minInterval%time.Minute == 0 {
		return fmt.Sprintf("*/%d * * * *", m)
	}
	return "0 * * * *"
}

// mostRecentDue is the latest scheduled time after earliest and at or before now; ok is false when
// none is. The search looks back from now over windows that double, so that a schedule down for a
// year costs a few dozen steps rather than one per missed minute.
func mostRecentDue(sched cron.Schedule, earliest, now time.Time) (time.Time, bool) {
	if !earliest.Before(now) {
		return time.Time{}, false
	}
	for window := time.Minute; ; window *= 2 {
		from := now.Add(-window)
		if window <= 0 || from.Before(earliest) {
			from = earliest
		}
		t := sched.Next(from)
		if !t.IsZero() && !t.After(now) {
			for {
				next := sched.Next(t)
				if next.IsZero() || next.After(now) {
					return t, true
				}
				t = next
			}
		}
		if from.Equal(earliest) {
			return time.Time{}, false
		}
	}
}

// startDecision is what a schedule does about its most recent due time.
type startDecision struct {
	// Due is the most recent scheduled time not started yet; zero when none is due.
	Due time.Time
	// TooLate is true when Due is past the starting deadline: it is skipped.
	TooLate bool
	// Next is the scheduled time after now: when the reconcile comes back.
	Next time.Time
}

// decideStart finds the time due since the schedule last started a suite (or since it was created)
// and whether it is too late to start it.
func decideStart(sched cron.Schedule, spec vmbenchv1.BenchmarkScheduleSpec, created time.Time, last *time.Time, now time.Time) startDecision {
	earliest := created
	if last != nil && last.After(earliest) {
		earliest = *last
	}
	d := startDecision{Next: sched.Next(now)}
	due, ok := mostRecentDue(sched, earliest, now)
	if !ok {
		return d
	}
	d.Due = due
	if spec.StartingDeadlineSeconds != nil {
		deadline := time.Duration(*spec.StartingDeadlineSeconds) * time.Second
		// A deadline too large for a Duration never passes.
		if *spec.StartingDeadlineSeconds <= int64(maxDuration/time.Second) && due.Add(deadline).Before(now) {
			d.TooLate = true
		}
	}
	return d
}

const maxDuration = time.Duration(1<<63 - 1)

// scheduledSuiteName is the name of the suite started for scheduled time t: the same after any
// restart, so that a second attempt finds the first one's suite instead of making another.
func scheduledSuiteName(schedule string, t time.Time) string {
	return fmt.Sprintf("%s-%d", schedule, t.Unix()/60)
}
