package chart

import (
	"slices"
	"testing"
)

// The minimum interval between two starts of a schedule is a chart value that becomes the
// manager's --min-schedule-interval: 5m by default, as docs/schedules.md says; the kind e2e sets
// 1m (hack/install.sh) for its every-minute schedule.
func TestMinScheduleIntervalBecomesAManagerFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--min-schedule-interval=5m"},
		{[]string{"--set", "minScheduleInterval=1m"}, "--min-schedule-interval=1m"},
	} {
		if _, c := manager(t, render(t, tc.args...)); !slices.Contains(c.Args, tc.want) {
			t.Errorf("%v: no %s in %v", tc.args, tc.want, c.Args)
		}
	}
	if _, _, err := helm(t, "template", release, "charts/vmbench", "--namespace", namespace, "--set", "minScheduleInterval=often"); err == nil {
		t.Error("minScheduleInterval=often renders, want the schema to refuse it")
	}
}
