package suite

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
)

// suiteState is what the conditions are computed from.
type suiteState struct {
	Generation  int64
	InvalidSpec error
	TimedOut    bool
	Now         time.Time
	// Waiting is what holds the active run up, if anything.
	Waiting *conditions.Cause
}

// setConditions sets Progressing, Complete, Failed and RunsFailed, the phase and the progress, from
// the runs and results in status.
func setConditions(st *vmbenchv1.BenchmarkSuiteStatus, s suiteState) {
	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: conditions.Truncate(msg, 1024), ObservedGeneration: s.Generation,
		})
	}
	finished, active, started := 0, "", false
	var runFailures, benchFailures []string
	for _, r := range st.Runs {
		switch r.Phase {
		case vmbenchv1.RunSucceeded, vmbenchv1.RunFailed:
			finished++
		default:
			if active == "" {
				active = r.Name
			}
		}
		started = started || r.Phase != vmbenchv1.RunPending
		switch {
		case r.Phase == vmbenchv1.RunFailed:
			runFailures = append(runFailures, fmt.Sprintf("%s: %s", r.Name, r.Message))
		case r.Message != "":
			benchFailures = append(benchFailures, fmt.Sprintf("%s: %s", r.Name, r.Message))
		}
	}
	st.Progress = fmt.Sprintf("%d/%d", finished, len(st.Runs))
	// A failed run is told at once, while the suite goes on to its other runs.
	defer func() {
		if len(runFailures) > 0 {
			set(vmbenchv1.ConditionRunsFailed, metav1.ConditionTrue, vmbenchv1.ReasonRunFailed,
				fmt.Sprintf("%d of %d runs failed; first: %s", len(runFailures), len(st.Runs), runFailures[0]))
			return
		}
		set(vmbenchv1.ConditionRunsFailed, metav1.ConditionFalse, vmbenchv1.ReasonNoFailure, "no run has failed")
	}()

	if s.InvalidSpec != nil {
		set(vmbenchv1.ConditionProgressing, metav1.ConditionFalse, vmbenchv1.ReasonInvalidSpec, "waiting for a valid spec")
		set(vmbenchv1.ConditionComplete, metav1.ConditionFalse, vmbenchv1.ReasonInvalidSpec, "the spec is invalid")
		set(vmbenchv1.ConditionFailed, metav1.ConditionTrue, vmbenchv1.ReasonInvalidSpec, s.InvalidSpec.Error())
		st.Phase = vmbenchv1.SuiteFailed
		return
	}
	if active != "" && !s.TimedOut {
		msg := fmt.Sprintf("run %s (%s runs finished)", active, st.Progress)
		if n := len(runFailures) + len(benchFailures); n > 0 {
			msg += fmt.Sprintf("; %d failures so far", n)
		}
		reason := vmbenchv1.ReasonRunning
		if !started {
			reason = vmbenchv1.ReasonPending
		}
		if s.Waiting != nil {
			reason = s.Waiting.Reason
			msg = fmt.Sprintf("run %s is waiting: %s (%s runs finished)", active, s.Waiting.Message, st.Progress)
		}
		set(vmbenchv1.ConditionProgressing, metav1.ConditionTrue, reason, msg)
		set(vmbenchv1.ConditionComplete, metav1.ConditionFalse, vmbenchv1.ReasonNotDone, "runs are still pending")
		set(vmbenchv1.ConditionFailed, metav1.ConditionFalse, vmbenchv1.ReasonNoFailure, "the suite has not ended")
		st.Phase = vmbenchv1.SuiteRunning
		if !started {
			st.Phase = vmbenchv1.SuitePending
		}
		st.CompletionTime = nil
		return
	}

	set(vmbenchv1.ConditionProgressing, metav1.ConditionFalse, vmbenchv1.ReasonFinished, "every run has ended")
	if st.CompletionTime == nil {
		st.CompletionTime = &metav1.Time{Time: s.Now}
	}
	reason, causes := "", []string(nil)
	switch {
	case endedByAnnotation(st):
		reason, causes = ReasonEndedByAdmin, append([]string{"the suite was " + endedMessage + "; the results of its finished runs are kept"}, runFailures...)
	case s.TimedOut:
		reason, causes = vmbenchv1.ReasonSuiteTimeout, append([]string{"the suite timed out"}, runFailures...)
	case len(runFailures) > 0:
		reason, causes = vmbenchv1.ReasonRunFailed, append(runFailures, benchFailures...)
	case len(benchFailures) > 0:
		reason, causes = vmbenchv1.ReasonBenchmarkFailed, benchFailures
	}
	if reason != "" {
		set(vmbenchv1.ConditionComplete, metav1.ConditionFalse, reason, "the suite ended with failures")
		set(vmbenchv1.ConditionFailed, metav1.ConditionTrue, reason, strings.Join(causes, "; "))
		st.Phase = vmbenchv1.SuiteFailed
		return
	}
	set(vmbenchv1.ConditionComplete, metav1.ConditionTrue, vmbenchv1.ReasonCompleted, fmt.Sprintf("%d runs finished, every benchmark has results", finished))
	set(vmbenchv1.ConditionFailed, metav1.ConditionFalse, vmbenchv1.ReasonNoFailure, "nothing failed")
	st.Phase = vmbenchv1.SuiteComplete
}

// warnings name what makes the comparison less fair than the defaults would.
func warnings(spec vmbenchv1.BenchmarkSuiteSpec, st *vmbenchv1.BenchmarkSuiteStatus, vmNetwork platform.VMNetwork) []string {
	var out []string
	if samplesTrimmed(st) {
		out = append(out, "some metrics keep only their statistics, not every sample, so that the status stays small")
	}
	if n := summary.CompactedRuns(st); n > 0 {
		out = append(out, fmt.Sprintf("%d of %d runs keep only a summary of their per-node noise, CPU lists and VM boot times "+
			"(runs[].compacted) and the first %d characters of their message, so that the status stays small", n, len(st.Runs), summary.MaxCompactedMessage))
	}
	if !spec.Cluster.Guaranteed() {
		out = append(out, "cluster requests are below limits: pods and VMs are not in Guaranteed QoS, so neighbours can take their CPU")
	}
	if w := summary.PinningWarning(spec, st); w != "" {
		out = append(out, w)
	}
	for _, r := range st.Runs {
		if r.Accelerator == vmbenchv1.AcceleratorEmulation {
			out = append(out, "VMs ran under software emulation (no usable KVM): VM figures do not measure VM overhead")
			break
		}
	}
	// A platform's own vm.networkBinding is its choice, which the API refuses where MPI would span
	// its VMs: the warning is for masquerade that the manager chose for the cluster.
	chosen := map[string]bool{}
	for _, p := range spec.Platforms {
		chosen[p.Name] = platform.VMNetworkOf(p) != ""
	}
	for _, r := range st.Runs {
		if r.Network == string(platform.VMNetworkMasquerade) && !chosen[r.Platform] {
			vmNetwork = platform.VMNetworkMasquerade
		}
	}
	for _, p := range spec.Platforms {
		if p.Type == vmbenchv1.PlatformVM && !chosen[p.Name] && vmNetwork == platform.VMNetworkMasquerade {
			out = append(out, "VMs use masquerade networking: every guest is 10.0.2.2, so MPI across VMs cannot work on this cluster")
			break
		}
	}
	if w := notKeptWarning(st); w != "" {
		out = append(out, w)
	}
	if w := summary.LostTablesWarning(st); w != "" {
		out = append(out, w)
	}
	for _, r := range st.Results {
		if len(r.Metrics) >= summary.MaxMetricsPerEntry {
			out = append(out, fmt.Sprintf("%s on %s reported more metrics than status holds (%d): the rest are only in the raw outputs", r.Benchmark, r.Platform, summary.MaxMetricsPerEntry))
		}
	}
	// The schema holds 8 warnings; the first ones are the most general.
	if len(out) > 8 {
		out = out[:8]
	}
	return out
}

func samplesTrimmed(st *vmbenchv1.BenchmarkSuiteStatus) bool {
	for _, r := range st.Results {
		for _, m := range r.Metrics {
			if int(m.N) > len(m.Samples) {
				return true
			}
		}
	}
	return false
}
