package suite

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestNextEviction protects the container arm's decisions: the first worker as soon as the probe
// started; eviction i due at lead-in + (i-1) × interval, only of a worker Ready for the 11 s the
// dip's baseline needs, and never while one runs; the replacement made once the evicted pod is terminating, off its node; an eviction
// ended by the replacement Ready (its Ready time) or failed past migrationTimeout with the
// scheduler's reason; none started with less than half an interval of probe left, none past count.
func TestNextEviction(t *testing.T) {
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	p := vmbenchv1.MigrationParams{Count: 2, Interval: vmbenchv1.DurationOf(30 * time.Second), MigrationTimeout: vmbenchv1.DurationOf(20 * time.Second)}
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	// The first worker was Ready at the probe's start, a replacement 30 s in.
	ready := func(k int, node string) probeWorker {
		readyAt := at(30)
		if k == 1 {
			readyAt = start
		}
		return probeWorker{name: "r-probe-" + string(rune('0'+k)), k: k, node: node, ready: true, readyAt: readyAt}
	}
	running := func(source, node string, s int) vmbenchv1.RunMigration {
		return vmbenchv1.RunMigration{Mode: vmbenchv1.MigrationModeEviction, SourcePod: source, SourceNode: node,
			StartTime: &metav1.Time{Time: at(s)}, Outcome: vmbenchv1.MigrationRunning}
	}
	done := running("r-probe-1", "a", 20)
	done.Outcome = vmbenchv1.MigrationCompleted
	for name, tc := range map[string]struct {
		workers   []probeWorker
		evictions []vmbenchv1.RunMigration
		now       int
		want      evictionStep
		message   string
	}{
		"first worker":        {nil, nil, 1, evictionStep{action: evictionCreateWorker, worker: 1}, ""},
		"before the lead-in":  {[]probeWorker{ready(1, "a")}, nil, 5, evictionStep{action: evictionWait, at: at(20)}, ""},
		"due":                 {[]probeWorker{ready(1, "a")}, nil, 21, evictionStep{action: evictionEvict, worker: 1}, ""},
		"due, not ready":      {[]probeWorker{{name: "r-probe-1", k: 1}}, nil, 21, evictionStep{action: evictionWait, at: at(21).Add(evictionPoll)}, ""},
		"replacement":         {[]probeWorker{{name: "r-probe-1", k: 1, node: "a", gone: true}}, []vmbenchv1.RunMigration{running("r-probe-1", "a", 20)}, 21, evictionStep{action: evictionCreateWorker, worker: 2, avoidNode: "a"}, ""},
		"evicted pod gone":    {nil, []vmbenchv1.RunMigration{running("r-probe-1", "a", 20)}, 21, evictionStep{action: evictionCreateWorker, worker: 2, avoidNode: "a"}, ""},
		"evicted pod stays":   {[]probeWorker{{name: "r-probe-1", k: 1, node: "a"}}, []vmbenchv1.RunMigration{running("r-probe-1", "a", 20)}, 21, evictionStep{action: evictionWait, at: at(21).Add(evictionPoll)}, ""},
		"replacement ready":   {[]probeWorker{ready(2, "b")}, []vmbenchv1.RunMigration{running("r-probe-1", "a", 20)}, 31, evictionStep{action: evictionEnd, eviction: 1, outcome: vmbenchv1.MigrationCompleted, target: "r-probe-2", targetNode: "b", at: at(30)}, ""},
		"next while one runs": {[]probeWorker{{name: "r-probe-2", k: 2}}, []vmbenchv1.RunMigration{running("r-probe-1", "a", 20)}, 39, evictionStep{action: evictionWait, at: at(40)}, ""},
		"unschedulable": {[]probeWorker{{name: "r-probe-2", k: 2, unschedulable: "Unschedulable: 0/2 nodes are available"}}, []vmbenchv1.RunMigration{running("r-probe-1", "a", 20)}, 40,
			evictionStep{action: evictionEnd, eviction: 1, outcome: vmbenchv1.MigrationFailed, target: "r-probe-2", at: at(40)}, "cannot place it off node a (Unschedulable: 0/2 nodes are available); the container arm needs two schedulable nodes"},
		"not settled": {[]probeWorker{{name: "r-probe-2", k: 2, node: "b", ready: true, readyAt: at(45)}}, []vmbenchv1.RunMigration{done}, 50,
			evictionStep{action: evictionWait, at: at(56)}, ""},
		"second due":     {[]probeWorker{ready(2, "b")}, []vmbenchv1.RunMigration{done}, 50, evictionStep{action: evictionEvict, worker: 2}, ""},
		"too late":       {[]probeWorker{ready(2, "b")}, []vmbenchv1.RunMigration{done}, 66, evictionStep{action: evictionsDone}, ""},
		"count reached":  {[]probeWorker{ready(3, "a")}, []vmbenchv1.RunMigration{done, done}, 55, evictionStep{action: evictionsDone}, ""},
		"no worker left": {nil, []vmbenchv1.RunMigration{done}, 55, evictionStep{action: evictionsDone}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			got := nextEviction(start, p, tc.workers, tc.evictions, at(tc.now))
			msg := got.message
			got.message = ""
			if got != tc.want {
				t.Errorf("nextEviction() = %+v, want %+v", got, tc.want)
			}
			if !strings.Contains(msg, tc.message) || (tc.message == "") != (msg == "") {
				t.Errorf("message %q, want one containing %q", msg, tc.message)
			}
		})
	}
}

// TestReplacementOf protects the workers' naming: worker k+1 replaces worker k, whatever the run's
// name holds.
func TestReplacementOf(t *testing.T) {
	if got, k := replacementOf("a-probe-b-container-1-probe-2"); got != "a-probe-b-container-1-probe-3" || k != 2 {
		t.Errorf("replacementOf() = %s, %d", got, k)
	}
}

// TestEvictionTrouble protects the run's message while it runs: the last failed eviction, counted
// against count, in its own words; nothing when every eviction completed.
func TestEvictionTrouble(t *testing.T) {
	ok := vmbenchv1.RunMigration{Outcome: vmbenchv1.MigrationCompleted}
	refused := vmbenchv1.RunMigration{Outcome: vmbenchv1.MigrationFailed, Message: "refused by team-budget"}
	late := vmbenchv1.RunMigration{Outcome: vmbenchv1.MigrationFailed, Message: "not Ready"}
	if got := evictionTrouble([]vmbenchv1.RunMigration{ok, ok}, 2); got != "" {
		t.Errorf("all completed: %q, want none", got)
	}
	if got := evictionTrouble([]vmbenchv1.RunMigration{refused, ok, late}, 3); got != "eviction 3 of 3: not Ready" {
		t.Errorf("got %q, want the last failed one", got)
	}
}

// TestLostEvictions protects the record of an eviction whose status write failed: a replacement
// worker without a record of its predecessor's eviction brings one back, running from when the API
// server accepted the eviction (or from the replacement's making, the evicted pod gone); recorded
// evictions and the first worker bring none.
func TestLostEvictions(t *testing.T) {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	evicted := probeWorker{name: "r-probe-1", k: 1, node: "a", gone: true, evictedAt: at}
	replacement := probeWorker{name: "r-probe-2", k: 2, created: at.Add(time.Second)}
	got := lostEvictions([]probeWorker{evicted, replacement}, nil)
	if len(got) != 1 || got[0].SourcePod != "r-probe-1" || got[0].SourceNode != "a" || !got[0].StartTime.Time.Equal(at) ||
		got[0].Outcome != vmbenchv1.MigrationRunning || got[0].Mode != vmbenchv1.MigrationModeEviction {
		t.Errorf("lostEvictions() = %+v, want worker 1's eviction from %s", got, at)
	}
	if got := lostEvictions([]probeWorker{replacement}, nil); len(got) != 1 || !got[0].StartTime.Time.Equal(at.Add(time.Second)) {
		t.Errorf("the evicted pod gone: %+v, want the eviction from the replacement's making", got)
	}
	if got := lostEvictions([]probeWorker{evicted, replacement}, []vmbenchv1.RunMigration{{SourcePod: "r-probe-1"}}); len(got) != 0 {
		t.Errorf("recorded: %+v, want none", got)
	}
	if got := lostEvictions([]probeWorker{{name: "r-probe-1", k: 1}}, nil); len(got) != 0 {
		t.Errorf("the first worker: %+v, want none", got)
	}
}
