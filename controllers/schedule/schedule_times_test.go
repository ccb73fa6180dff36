package schedule

import (
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseScheduleRefusesWithACause(t *testing.T) {
	for _, tc := range []struct {
		name, schedule string
		zone           *string
		reason, says   string
	}{
		{"four fields", "0 3 * *", nil, vmbenchv1.ReasonInvalidSchedule, "5 fields"},
		{"minute out of range", "61 3 * * *", nil, vmbenchv1.ReasonInvalidSchedule, "not a cron expression"},
		{"zone in the expression", "CRON_TZ=Europe/Berlin 0 3 * * *", nil, vmbenchv1.ReasonInvalidSchedule, "set spec.timeZone"},
		// robfig's parser takes TZ= as well as CRON_TZ=; the zone would then be dropped for spec.timeZone or UTC.
		{"zone in the expression, short prefix", "TZ=Europe/Berlin 0 3 * * *", nil, vmbenchv1.ReasonInvalidSchedule, "set spec.timeZone"},
		{"@every, however long", "@every 1h", nil, vmbenchv1.ReasonInvalidSchedule, "*/5 * * * *"},
		{"@every a second", "@every 1s", nil, vmbenchv1.ReasonInvalidSchedule, "@every"},
		{"every minute", "* * * * *", nil, vmbenchv1.ReasonTooFrequent, "1m0s apart"},
		{"every minute, written with a step", "*/1 * * * *", nil, vmbenchv1.ReasonTooFrequent, "--min-schedule-interval"},
		{"every 4 minutes", "*/4 * * * *", nil, vmbenchv1.ReasonTooFrequent, "4m0s apart"},
		// 3, 10 and 12 past: two of the gaps are 7 and 53 minutes, one is 2.
		{"two starts 2 minutes apart in an hour", "3,10,12 * * * *", nil, vmbenchv1.ReasonTooFrequent, "2m0s apart"},
		// 23:58 and 00:01 the next day.
		{"across midnight", "58,1 23,0 * * *", nil, vmbenchv1.ReasonTooFrequent, "3m0s apart"},
		{"unknown zone", "0 3 * * *", ptr.To("Mars/Olympus_Mons"), vmbenchv1.ReasonUnknownTimeZone, "Mars/Olympus_Mons"},
		{"the manager's local zone", "0 3 * * *", ptr.To("Local"), vmbenchv1.ReasonUnknownTimeZone, "IANA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := parseSchedule(vmbenchv1.BenchmarkScheduleSpec{Schedule: tc.schedule, TimeZone: tc.zone}, DefaultMinScheduleInterval)
			if c == nil {
				t.Fatalf("%q in zone %v was accepted", tc.schedule, tc.zone)
			}
			if c.Reason != tc.reason || !strings.Contains(c.Message, tc.says) {
				t.Errorf("cause %s %q, want reason %s and a message naming %q", c.Reason, c.Message, tc.reason, tc.says)
			}
		})
	}
	for _, ok := range []string{"0 3 * * *", "*/15 * * * 1-5", "@daily", "@hourly", "@weekly", "*/5 * * * *", "0,5,10 * * * *", "55 23 * * *"} {
		if _, c := parseSchedule(vmbenchv1.BenchmarkScheduleSpec{Schedule: ok, TimeZone: ptr.To("America/New_York")}, DefaultMinScheduleInterval); c != nil {
			t.Errorf("%q refused: %s", ok, c.Message)
		}
	}
}

func TestDecideStart(t *testing.T) {
	created := utc("2026-11-01T09:12:00Z")
	for _, tc := range []struct {
		name     string
		schedule string
		zone     *string
		deadline *int64
		last     *time.Time
		now      time.Time
		due      time.Time // zero: nothing due
		tooLate  bool
		next     time.Time
	}{
		{name: "before the first time", schedule: "0 * * * *", now: utc("2026-11-01T09:59:59Z"), next: utc("2026-11-01T10:00:00Z")},
		{name: "at the first time", schedule: "0 * * * *", now: utc("2026-11-01T10:00:00Z"),
			due: utc("2026-11-01T10:00:00Z"), next: utc("2026-11-01T11:00:00Z")},
		{name: "the time last started is not due again", schedule: "0 * * * *", last: ptr.To(utc("2026-11-01T10:00:00Z")),
			now: utc("2026-11-01T10:30:00Z"), next: utc("2026-11-01T11:00:00Z")},
		{name: "missed times: only the most recent is due", schedule: "0 * * * *", last: ptr.To(utc("2026-11-01T10:00:00Z")),
			now: utc("2026-11-01T13:30:00Z"), due: utc("2026-11-01T13:00:00Z"), next: utc("2026-11-01T14:00:00Z")},
		{name: "missed past the deadline", schedule: "0 * * * *", deadline: ptr.To[int64](600), last: ptr.To(utc("2026-11-01T10:00:00Z")),
			now: utc("2026-11-01T13:30:00Z"), due: utc("2026-11-01T13:00:00Z"), tooLate: true, next: utc("2026-11-01T14:00:00Z")},
		{name: "late within the deadline", schedule: "0 * * * *", deadline: ptr.To[int64](1800), last: ptr.To(utc("2026-11-01T10:00:00Z")),
			now: utc("2026-11-01T13:30:00Z"), due: utc("2026-11-01T13:00:00Z"), next: utc("2026-11-01T14:00:00Z")},
		{name: "a deadline too large for a duration never passes", schedule: "0 * * * *", deadline: ptr.To[int64](1 << 62),
			now: utc("2026-11-01T13:30:00Z"), due: utc("2026-11-01T13:00:00Z"), next: utc("2026-11-01T14:00:00Z")},
		{name: "every minute, down for two years", schedule: "* * * * *", last: ptr.To(utc("2026-11-01T10:00:00Z")),
			now: utc("2028-11-01T10:00:30Z"), due: utc("2028-11-01T10:00:00Z"), next: utc("2028-11-01T10:01:00Z")},
		{name: "a rare time long ago", schedule: "0 4 29 2 *", last: ptr.To(utc("2026-11-01T10:00:00Z")),
			now: utc("2029-01-01T00:00:00Z"), due: utc("2028-02-29T04:00:00Z"), next: utc("2032-02-29T04:00:00Z")},
		// 09:00 in Berlin is 08:00 UTC in winter time and 07:00 UTC from the last Sunday of March.
		{name: "time zone: winter time", schedule: "0 9 * * *", zone: ptr.To("Europe/Berlin"), last: ptr.To(utc("2026-03-27T08:00:00Z")),
			now: utc("2026-03-28T08:30:00Z"), due: utc("2026-03-28T08:00:00Z"), next: utc("2026-03-29T07:00:00Z")},
		{name: "time zone: summer time starts", schedule: "0 9 * * *", zone: ptr.To("Europe/Berlin"), last: ptr.To(utc("2026-03-28T08:00:00Z")),
			now: utc("2026-03-29T07:30:00Z"), due: utc("2026-03-29T07:00:00Z"), next: utc("2026-03-30T07:00:00Z")},
		{name: "time zone: not due an hour early in UTC terms", schedule: "0 9 * * *", zone: ptr.To("Europe/Berlin"),
			last: ptr.To(utc("2026-10-24T07:00:00Z")), now: utc("2026-10-25T07:30:00Z"), next: utc("2026-10-25T08:00:00Z")},
		// As in the CronJob controller (the same parser): a local time that the clocks skip does not
		// happen that day, and one that they repeat happens twice.
		{name: "time zone: 02:30 skipped when clocks spring forward", schedule: "30 2 * * *", zone: ptr.To("Europe/Berlin"),
			last: ptr.To(utc("2026-03-28T01:30:00Z")), now: utc("2026-03-29T12:00:00Z"), next: utc("2026-03-30T00:30:00Z")},
		{name: "time zone: 02:30 twice when clocks fall back", schedule: "30 2 * * *", zone: ptr.To("Europe/Berlin"),
			last: ptr.To(utc("2026-10-25T00:30:00Z")), now: utc("2026-10-25T01:45:00Z"), due: utc("2026-10-25T01:30:00Z"),
			next: utc("2026-10-26T01:30:00Z")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := vmbenchv1.BenchmarkScheduleSpec{Schedule: tc.schedule, TimeZone: tc.zone, StartingDeadlineSeconds: tc.deadline}
			// The lowest minimum the manager takes, so that the every-minute case parses.
			sched, c := parseSchedule(spec, LowestMinScheduleInterval)
			if c != nil {
				t.Fatal(c.Message)
			}
			cr := created
			if tc.last != nil && tc.last.Before(cr) {
				cr = tc.last.Add(-time.Hour)
			}
			d := decideStart(sched, spec, cr, tc.last, tc.now)
			if !d.Due.Equal(tc.due) || d.TooLate != tc.tooLate || !d.Next.Equal(tc.next) {
				t.Errorf("due %v (too late %v), next %v; want due %v (too late %v), next %v",
					d.Due.UTC(), d.TooLate, d.Next.UTC(), tc.due, tc.tooLate, tc.next)
			}
		})
	}
}

func TestDecideStartCountsFromCreation(t *testing.T) {
	spec := vmbenchv1.BenchmarkScheduleSpec{Schedule: "0 * * * *"}
	sched, _ := parseSchedule(spec, DefaultMinScheduleInterval)
	// Created after 10:00: 10:00 is not due, however late the first reconcile.
	d := decideStart(sched, spec, utc("2026-11-01T10:00:01Z"), nil, utc("2026-11-01T10:59:00Z"))
	if !d.Due.IsZero() {
		t.Errorf("due %v before the schedule existed", d.Due)
	}
}

func TestScheduledSuiteNameIsTheTimes(t *testing.T) {
	a := scheduledSuiteName("nightly", utc("2026-11-01T02:30:00Z"))
	if a != "nightly-29891670" {
		t.Errorf("name %s", a)
	}
	if b := scheduledSuiteName("nightly", utc("2026-11-01T02:30:00Z").In(time.FixedZone("x", 3600))); b != a {
		t.Errorf("the same time in another zone is named %s, not %s", b, a)
	}
	if len(scheduledSuiteName(strings.Repeat("a", vmbenchv1.MaxScheduleNameLength), utc("2150-01-01T00:00:00Z"))) > vmbenchv1.MaxSuiteNameLength {
		t.Error("a schedule name of the longest length gives suite names longer than a suite's name may be")
	}
}

func TestRequeueAtTheNextTimeOrTheWaitingStartsDeadline(t *testing.T) {
	now := utc("2026-11-01T10:05:00Z")
	d := startDecision{Due: utc("2026-11-01T10:00:00Z"), Next: utc("2026-11-01T11:00:00Z")}
	forbid := &conditions.Cause{Reason: vmbenchv1.ReasonConcurrencyForbid}
	for _, tc := range []struct {
		name     string
		deadline *int64
		skip     *conditions.Cause
		want     time.Duration
	}{
		{name: "started: the next time", want: 55 * time.Minute},
		{name: "waiting without a deadline: the next time", skip: forbid, want: 55 * time.Minute},
		// Due at 10:00 with 20 minutes: the skip is said at 10:20, a second after the deadline.
		{name: "waiting: the deadline", deadline: ptr.To[int64](1200), skip: forbid, want: 15*time.Minute + time.Second},
		{name: "waiting, a deadline after the next time", deadline: ptr.To[int64](7200), skip: forbid, want: 55 * time.Minute},
		{name: "a huge deadline", deadline: ptr.To[int64](1 << 62), skip: forbid, want: 55 * time.Minute},
		{name: "waiting for spec.maxActive: the deadline", deadline: ptr.To[int64](1200), skip: &conditions.Cause{Reason: vmbenchv1.ReasonMaxActive},
			want: 15*time.Minute + time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := requeueAt(vmbenchv1.BenchmarkScheduleSpec{StartingDeadlineSeconds: tc.deadline}, d, tc.skip, now)
			if got != tc.want {
				t.Errorf("requeue after %v, want %v", got, tc.want)
			}
		})
	}
}

// A skip is told once, when it first appears or changes, not on every reconcile that sees it.
func TestStartSkippedTellsATransitionOnce(t *testing.T) {
	sched := &vmbenchv1.BenchmarkSchedule{}
	sched.Name = "nightly"
	d := startDecision{Due: utc("2026-11-01T10:00:00Z"), Next: utc("2026-11-01T11:00:00Z")}
	waiting := &conditions.Cause{Reason: vmbenchv1.ReasonConcurrencyForbid, Message: "waits for nightly-1"}
	late := &conditions.Cause{Reason: vmbenchv1.ReasonMissedDeadline, Message: "skipped"}
	steps := []struct {
		skip      *conditions.Cause
		d         startDecision
		wantEvent string
		status    string
	}{
		{skip: waiting, d: d, wantEvent: vmbenchv1.ReasonConcurrencyForbid, status: "True"},
		{skip: waiting, d: d, status: "True"},
		{skip: late, d: d, wantEvent: vmbenchv1.ReasonMissedDeadline, status: "True"},
		{skip: late, d: d, status: "True"},
		{d: startDecision{Due: d.Next}, wantEvent: vmbenchv1.ReasonStarted, status: "False"},
		// Nothing due since: the condition keeps saying what became of the last start.
		{d: startDecision{}, status: "False"},
	}
	for i, step := range steps {
		ev := setStartSkipped(sched, step.d, step.skip)
		got := ""
		if ev != nil {
			got = ev.reason
		}
		c := sched.Status.Conditions[0]
		if got != step.wantEvent || string(c.Status) != step.status {
			t.Errorf("step %d: event %q, condition %s %s; want event %q, condition %s", i, got, c.Status, c.Reason, step.wantEvent, step.status)
		}
	}
	if c := sched.Status.Conditions[0]; c.Reason != vmbenchv1.ReasonStarted || !strings.Contains(c.Message, "nightly-") {
		t.Errorf("after nothing was due the condition says %s %q, want the last start", c.Reason, c.Message)
	}
}

// The minimum interval is the manager's: a lower one, as the e2e installs, lets an every-minute
// schedule run, and the shortest gap is measured, not read off the minute field's step.
func TestParseScheduleHoldsTheManagersMinimumInterval(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		min      time.Duration
		refused  bool
	}{
		{"* * * * *", time.Minute, false},
		{"* * * * *", DefaultMinScheduleInterval, true},
		{"*/5 * * * *", DefaultMinScheduleInterval, false},
		{"*/5 * * * *", 6 * time.Minute, true},
		{"@hourly", HighestMinScheduleInterval, false},
		{"0,59 * * * *", HighestMinScheduleInterval, true},
		// Hours 0 and 12: 12 hours apart, whatever the minimum.
		{"0 0,12 * * *", HighestMinScheduleInterval, false},
	} {
		_, c := parseSchedule(vmbenchv1.BenchmarkScheduleSpec{Schedule: tc.schedule}, tc.min)
		if (c != nil) != tc.refused {
			t.Errorf("%q with a minimum of %s: refused %v (%v), want refused %v", tc.schedule, tc.min, c != nil, c, tc.refused)
		}
	}
}

func TestShortestGap(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		want     time.Duration
	}{
		{"* * * * *", time.Minute},
		{"*/7 * * * *", 4 * time.Minute}, // 56 past, then 0 past the next hour
		{"30 2 * * *", 24 * time.Hour},
		{"0 9-17 * * 1-5", time.Hour},
		{"0 0,23 * * *", time.Hour},
		{"@weekly", 24 * time.Hour}, // one time of day: at most once a day
	} {
		s, err := cron.ParseStandard(tc.schedule)
		if err != nil {
			t.Fatal(err)
		}
		if got := shortestGap(s.(*cron.SpecSchedule)); got != tc.want {
			t.Errorf("shortestGap(%q) = %s, want %s", tc.schedule, got, tc.want)
		}
	}
}
