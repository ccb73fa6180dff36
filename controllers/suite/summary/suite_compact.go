package summary

import (
	"encoding/json"
	"slices"
	"sort"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// The status's size budget: compacting finished runs and dropping per-sample detail, never the
// statistics, so that the status stays within what the API server stores.

// statusBudget is the most bytes of JSON that a status may take, headline, conditions and warnings
// included: far below etcd's 1.5 MiB object
// limit, with room for the spec and metadata. Past it, fitStatus drops per-sample detail; statistics
// stay exact because they are updated sample by sample (combine).
const StatusBudget = 800 << 10

// fitStatus brings the status within statusBudget. It first compacts the per-node lists of finished
// runs, oldest first (compactRun), and only then drops per-sample detail, from the metrics with the
// most samples down: the samples are what the report's statistics are made of (per-repetition means,
// Welch's test, the noise marks), while a run's per-node lists only explain a run and keep their
// gist in its summary. Count, mean and standard deviation are never touched. It reports whether it
// changed anything. The status is marshalled once: dropping a metric's samples removes exactly its
// `"samples":[...],` from the JSON, thanks to omitempty, and a run is measured before and after.
func FitStatus(st *vmbenchv1.BenchmarkSuiteStatus) bool {
	size := jsonLen(st)
	if size <= StatusBudget {
		return false
	}
	changed := false
	for i := range st.Runs {
		if size <= StatusBudget {
			break
		}
		run := &st.Runs[i]
		if run.CompletionTime == nil || !compactable(run) {
			continue
		}
		before := jsonLen(run)
		CompactRun(run)
		size += jsonLen(run) - before
		changed = true
	}
	if size > StatusBudget {
		before := jsonLen(st.Environments)
		if NewestEnvironments(st) {
			size += jsonLen(st.Environments) - before
			changed = true
		}
	}
	var metrics []*vmbenchv1.MetricSummary
	for i := range st.Results {
		for j := range st.Results[i].Metrics {
			if len(st.Results[i].Metrics[j].Samples) > 0 {
				metrics = append(metrics, &st.Results[i].Metrics[j])
			}
		}
	}
	sort.SliceStable(metrics, func(i, j int) bool { return len(metrics[i].Samples) > len(metrics[j].Samples) })
	for _, m := range metrics {
		if size <= StatusBudget {
			break
		}
		samples, err := json.Marshal(m.Samples)
		if err != nil {
			break
		}
		size -= len(`"samples":,`) + len(samples)
		m.Samples = nil
		changed = true
	}
	return changed
}

// fitWithWarnings sets the warnings and fits the status, again after each pass that changed it: a
// pass may add a warning (samples dropped, runs compacted), and the next pass makes room for its
// bytes. It ends, as every pass that changes something removes a run's lists or a metric's samples.
func FitWithWarnings(st *vmbenchv1.BenchmarkSuiteStatus, warn func() []string) {
	st.Warnings = warn()
	for FitStatus(st) {
		st.Warnings = warn()
	}
}

// maxCompactedMessage is the most of its message that a compacted run keeps.
const MaxCompactedMessage = 256

// compactable is a run that compactRun would make smaller.
func compactable(run *vmbenchv1.RunStatus) bool {
	return len(run.Noise) > 0 || len(run.CPUs) > 0 || len(run.BootSeconds) > 0 || len(run.Migrations) > 0 || len(run.Message) > MaxCompactedMessage ||
		len(run.NotKept) > MaxCompactedMessage
}

// compactRun replaces a run's per-node lists with their summary: the noisiest node's noise, the
// slowest VM's boot, the nodes that were not pinned and the count of its VMIs' live migrations (its
// samples were marked when it ended), which is what the warnings and the report
// use of a run once it ended. It keeps the start of the run's message, which still says whether and
// why it failed (the Failed condition quotes the messages, cut to its own limit), and the start of
// its notKept. A summary already there is merged into.
func CompactRun(run *vmbenchv1.RunStatus) {
	s := run.Compacted
	if s == nil {
		s = &vmbenchv1.RunSummary{}
	}
	s.Nodes = max(s.Nodes, int32(len(run.Noise)), int32(len(run.CPUs)), int32(len(run.BootSeconds)))
	for _, n := range run.Noise {
		if s.MaxNoisePercent == nil || n.MaxPercent > *s.MaxNoisePercent {
			s.MaxNoisePercent = PtrTo(n.MaxPercent)
		}
	}
	for _, b := range run.BootSeconds {
		if s.MaxBootSeconds == nil || b.Seconds > *s.MaxBootSeconds {
			s.MaxBootSeconds = PtrTo(b.Seconds)
		}
	}
	for _, c := range run.CPUs {
		if !c.Pinned && !slices.Contains(s.Unpinned, c.Node) && len(s.Unpinned) < maxRunNodes {
			s.Unpinned = append(s.Unpinned, c.Node)
		}
	}
	for _, m := range run.Migrations {
		s.Migrations++
		if m.Outcome == vmbenchv1.MigrationFailed || m.Outcome == vmbenchv1.MigrationAborted {
			s.MigrationsNotCompleted++
		}
	}
	run.Compacted = s
	run.Noise, run.CPUs, run.BootSeconds, run.Migrations = nil, nil, nil, nil
	run.Message = conditions.Truncate(run.Message, MaxCompactedMessage)
	run.NotKept = conditions.Truncate(run.NotKept, MaxCompactedMessage)
}

func PtrTo(x float64) *float64 { return &x }

// compactedRuns counts the runs whose per-node lists were compacted.
func CompactedRuns(st *vmbenchv1.BenchmarkSuiteStatus) int {
	n := 0
	for _, r := range st.Runs {
		if r.Compacted != nil {
			n++
		}
	}
	return n
}

func jsonLen(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// newestEnvironments keeps, of the suite's environments, the newest of each platform type: what
// fitStatus gives up before any sample. Runs keep the IDs of the entries that went.
func NewestEnvironments(st *vmbenchv1.BenchmarkSuiteStatus) bool {
	newest := map[vmbenchv1.PlatformType]int{}
	for i, env := range st.Environments {
		newest[env.Platform] = i
	}
	if len(newest) == len(st.Environments) {
		return false
	}
	kept := st.Environments[:0]
	for i, env := range st.Environments {
		if newest[env.Platform] == i {
			kept = append(kept, env)
		}
	}
	st.Environments = kept
	return true
}
