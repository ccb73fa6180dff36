package controllers

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// statusBudget is the most bytes of JSON that a status may take, headline, conditions and warnings
// included: far below etcd's 1.5 MiB object
// limit, with room for the spec and metadata. Past it, fitStatus drops per-sample detail; statistics
// stay exact because they are updated sample by sample (combine).
const statusBudget = 768 << 10

// samplesPerMetric caps the samples kept for one metric.
const samplesPerMetric = 100

// runReport is what a run's runner reported, decoded from its log.
type runReport struct {
	Started *runplan.Message
	Results []runplan.Message
	Done    *runplan.Message
	// FrameErr is set when frames were corrupt or not authentic.
	FrameErr error
	// ForeignErr is set when authentic frames of another run were in this run's log: they were
	// refused, as counting them would count another run's samples twice.
	ForeignErr error
	// LogErr is set when no log could be read.
	LogErr error
}

// newRunReport sorts decoded messages by kind; later duplicates of started and done are ignored.
func newRunReport(msgs []runplan.Message, frameErr error) runReport {
	r := runReport{FrameErr: frameErr}
	for i := range msgs {
		m := msgs[i]
		switch m.Kind {
		case runplan.KindStarted:
			if r.Started == nil {
				r.Started = &m
			}
		case runplan.KindResult:
			r.Results = append(r.Results, m)
		case runplan.KindDone:
			if r.Done == nil {
				r.Done = &m
			}
		}
	}
	return r
}

// runCompletion is everything known when a run ends.
type runCompletion struct {
	Report   runReport
	Outcome  platform.Outcome
	TimedOut bool
	Deadline time.Duration
	Now      time.Time
	// Created is when each node's pod or VMI was created, for the time to the runner's start.
	Created map[string]time.Time
	// Shape is the suite's cluster shape, against which the nodes' CPU lists are judged.
	Shape vmbenchv1.ClusterShape
	// TablesKept and TablesLost count, per benchmark, the run's whole result tables that its
	// tables ConfigMaps keep and those they could not (resultTables).
	TablesKept, TablesLost map[string]int32
	// DedicatedVM is set for a VM run whose VMs asked for dedicated CPUs (cluster.dedicatedCPUs or
	// the platform's vm.dedicatedCPUs).
	DedicatedVM bool
	// SharedStorage is the suite's spec.sharedStorage, which a Container or Host run's claim of the
	// Shared target was made of.
	SharedStorage *vmbenchv1.SharedStorage
}

// finishRun records a finished run in status: its phase and cause, timings, and every parsed sample.
// It returns the names of the benchmarks that failed in this run.
func finishRun(st *vmbenchv1.BenchmarkSuiteStatus, run *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType,
	benchmarks []vmbenchv1.Benchmark, c runCompletion) []string {
	rep := c.Report
	var causes []string
	switch {
	case c.TimedOut:
		causes = append(causes, fmt.Sprintf("run did not finish within its deadline of %s", c.Deadline))
	case c.Outcome.Phase == platform.PhaseFailed:
		causes = append(causes, c.Outcome.Message)
	}
	if rep.LogErr != nil {
		causes = append(causes, "reading the runner's log: "+rep.LogErr.Error())
	}
	if rep.FrameErr != nil {
		causes = append(causes, "corrupt result frames: "+oneLine(rep.FrameErr))
	}
	if rep.ForeignErr != nil {
		causes = append(causes, "frames of another run: "+oneLine(rep.ForeignErr))
	}
	// A result without a benchmark is the runner saying the run could not take place at all.
	for _, m := range rep.Results {
		if m.Benchmark == "" && m.Error != "" {
			causes = append(causes, "runner: "+m.Error)
		}
	}
	if rep.Done == nil && len(causes) == 0 {
		causes = append(causes, "the runner never reported that it finished")
	}

	if rep.Started != nil {
		if platformType == vmbenchv1.PlatformVM {
			run.Accelerator = acceleratorOf(rep.Started.Virtualization)
		}
		if platform.UsesShared(benchmarks) {
			recordSharedStorage(st, run, sharedStorageOf(run.Name, platformType, c.SharedStorage, rep.Started))
		}
		run.BootSeconds = bootSeconds(rep.Started.NodesReady, c.Created)
		run.CPUs = nodeCPUs(rep.Started.CPUSets, platformType, c.Shape, c.DedicatedVM)
		observeRunnerReady(run, rep.Started.Time)
	}
	if rep.Done != nil && run.StartTime != nil {
		orchestration := c.Now.Sub(run.StartTime.Time).Seconds() - rep.Done.BenchmarkSeconds
		run.OrchestrationSeconds = &orchestration
	}

	emulated := run.Accelerator == vmbenchv1.AcceleratorEmulation
	var failedBenchmarks, benchmarkCauses []string
	latest := latestResults(rep.Results)
	run.Noise = nodeNoise(latest)
	for _, b := range benchmarks {
		res := resultFor(st, b.Name, run.Platform)
		res.Emulated = res.Emulated || emulated
		res.Concurrent = res.Concurrent || b.Concurrency == vmbenchv1.ConcurrencyAllNodes
		res.Tables += c.TablesKept[b.Name]
		res.TablesLost += c.TablesLost[b.Name]
		reported, firstErr := false, ""
		for _, m := range latest {
			if m.Benchmark != b.Name {
				continue
			}
			reported = true
			if err := sampleError(m); err != "" {
				res.Failures++
				res.LastError = truncate(fmt.Sprintf("run %s, %s: %s", run.Name, where(m), err), 512)
				if firstErr == "" {
					firstErr = where(m) + ": " + err
				}
				continue
			}
			for _, metric := range m.Metrics {
				metric = fitMetric(metric)
				if findMetric(res.Metrics, metric.Name) == nil && len(res.Metrics) >= maxMetricsPerEntry {
					continue // warnings() says that the benchmark reached the limit
				}
				addSample(res, metric, vmbenchv1.Sample{Repetition: run.Repetition, Node: truncate(m.Node, maxSampleNode), Value: metric.Value, Noise: sampleNoise(m)})
			}
		}
		if !reported {
			res.Failures++
			res.LastError = fmt.Sprintf("run %s reported no result", run.Name)
			firstErr = "no result reported"
		}
		if firstErr != "" {
			failedBenchmarks = append(failedBenchmarks, b.Name)
			benchmarkCauses = append(benchmarkCauses, fmt.Sprintf("%s (%s)", b.Name, firstErr))
		}
	}

	run.CompletionTime = &metav1.Time{Time: c.Now}
	run.Phase = vmbenchv1.RunSucceeded
	if len(causes) > 0 {
		run.Phase = vmbenchv1.RunFailed
	}
	if len(benchmarkCauses) > 0 {
		causes = append(causes, "benchmarks failed: "+strings.Join(benchmarkCauses, ", "))
	}
	run.Message = truncate(strings.Join(causes, "; "), 1024)
	return failedBenchmarks
}

// latestResults keeps, per benchmark, node and variant, the last result a runner reported, preferring a
// measurement to an error: a runner started again in the same log (a rebooted VM) measured again,
// and no execution may count twice. A run is merged into status once, when it ends, so this is the
// only place where duplicates can meet.
func latestResults(msgs []runplan.Message) []runplan.Message {
	type key struct{ benchmark, node, variant string }
	index := map[key]int{}
	var out []runplan.Message
	for _, m := range msgs {
		k := key{m.Benchmark, m.Node, m.Variant}
		if i, ok := index[k]; ok {
			if sampleError(m) == "" || sampleError(out[i]) != "" {
				out[i] = m
			}
			continue
		}
		index[k] = len(out)
		out = append(out, m)
	}
	return out
}

// where names the execution of a result: its node or pair, and its variant if any.
func where(m runplan.Message) string {
	if m.Variant == "" {
		return m.Node
	}
	return m.Node + " " + m.Variant
}

// sampleError is why one result cannot be used: the runner's error, no metric at all, or a
// throughput of zero, which is a broken run, never a measurement (a flag of zero is one: netperf's
// confidence_achieved says the interval was not reached, and the result stands).
func sampleError(m runplan.Message) string {
	if m.Error != "" {
		return m.Error
	}
	if len(m.Metrics) == 0 {
		return "no metric was parsed"
	}
	for _, metric := range m.Metrics {
		if math.IsNaN(metric.Value) || math.IsInf(metric.Value, 0) {
			return fmt.Sprintf("%s is not a number", metric.Name)
		}
		if metric.Direction == results.HigherIsBetter && metric.Value <= 0 && !results.IsFlag(metric.Unit) {
			return fmt.Sprintf("%s is %g %s", metric.Name, metric.Value, metric.Unit)
		}
	}
	return ""
}

// maxSharedStorage is the longest PlatformSharedStorage.BackedBy the schema admits.
const maxSharedStorage = 256

// sharedStorageOf says what backed a run's Shared target, from what the run was built with and what
// its runner saw: a Container or Host run's claim and its class, a VM run's NFS server on the master
// VM (none when the runner could not export it), and what the nodes had mounted; the run's own name,
// which its claim and its VMs' addresses carry, is written <run>, so that a platform's runs read
// alike.
func sharedStorageOf(run string, platformType vmbenchv1.PlatformType, claim *vmbenchv1.SharedStorage, started *runplan.Message) string {
	var s string
	switch {
	case platformType == vmbenchv1.PlatformVM && started.SharedServer != "":
		s = fmt.Sprintf("NFSv4.2 export of VM %s (%s)", vmbenchv1.RoleMaster, started.SharedServer)
	case platformType != vmbenchv1.PlatformVM && claim != nil:
		s = fmt.Sprintf("PVC %s of storage class %s (ReadWriteMany)", platform.SharedClaimName(run), claim.StorageClassName)
	default:
		return ""
	}
	if started.SharedMount != "" {
		s += ", mounted as " + started.SharedMount
	}
	return truncate(strings.ReplaceAll(s, run, "<run>"), maxSharedStorage)
}

// recordSharedStorage keeps what backed the Shared target of run's platform, as run recorded it: one
// entry per platform, the latest run's, so that the status holds it once however many runs there are.
func recordSharedStorage(st *vmbenchv1.BenchmarkSuiteStatus, run *vmbenchv1.RunStatus, backedBy string) {
	if backedBy == "" {
		return
	}
	entry := vmbenchv1.PlatformSharedStorage{Platform: run.Platform, BackedBy: backedBy, Run: run.Name}
	for i := range st.SharedStorage {
		if st.SharedStorage[i].Platform == run.Platform {
			st.SharedStorage[i] = entry
			return
		}
	}
	st.SharedStorage = append(st.SharedStorage, entry)
}

func acceleratorOf(virtualization string) vmbenchv1.Accelerator {
	switch virtualization {
	case "kvm":
		return vmbenchv1.AcceleratorKVM
	case "qemu":
		return vmbenchv1.AcceleratorEmulation
	}
	return ""
}

func bootSeconds(ready map[string]time.Time, created map[string]time.Time) []vmbenchv1.NodeTiming {
	var out []vmbenchv1.NodeTiming
	for node, t := range ready {
		c, ok := created[node]
		if !ok || t.Before(c) {
			continue
		}
		out = append(out, vmbenchv1.NodeTiming{Node: node, Seconds: round(t.Sub(c).Seconds(), 1)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func resultFor(st *vmbenchv1.BenchmarkSuiteStatus, benchmark, platformName string) *vmbenchv1.BenchmarkResult {
	for i := range st.Results {
		if st.Results[i].Benchmark == benchmark && st.Results[i].Platform == platformName {
			return &st.Results[i]
		}
	}
	st.Results = append(st.Results, vmbenchv1.BenchmarkResult{Benchmark: benchmark, Platform: platformName})
	return &st.Results[len(st.Results)-1]
}

// Limits of the status schema (api/v1alpha1): a status beyond them is refused by the API server, and
// every later status write of the suite with it.
const (
	maxMetricName      = 64
	maxMetricUnit      = 16
	maxSampleNode      = 40
	maxMetricsPerEntry = 48
)

// fitMetric shortens what the status schema cannot hold: a name past its limit keeps its start and a
// hash of the whole, so that the same long name always gives the same short one.
func fitMetric(m results.Metric) results.Metric {
	if len(m.Name) > maxMetricName {
		h := fnv.New32a()
		_, _ = h.Write([]byte(m.Name))
		m.Name = fmt.Sprintf("%s_%08x", m.Name[:maxMetricName-9], h.Sum32())
	}
	if len(m.Unit) > maxMetricUnit {
		m.Unit = m.Unit[:maxMetricUnit]
	}
	return m
}

// addSample adds one value to a metric's statistics, and to its samples while the metric has room.
func addSample(res *vmbenchv1.BenchmarkResult, m results.Metric, s vmbenchv1.Sample) {
	var summary *vmbenchv1.MetricSummary
	for i := range res.Metrics {
		if res.Metrics[i].Name == m.Name {
			summary = &res.Metrics[i]
		}
	}
	if summary == nil {
		res.Metrics = append(res.Metrics, vmbenchv1.MetricSummary{Name: m.Name, Unit: m.Unit, Direction: vmbenchv1.Direction(m.Direction)})
		summary = &res.Metrics[len(res.Metrics)-1]
	}
	// Samples stay a prefix of everything measured: once detail was dropped or capped, later
	// repetitions are not added, or the kept samples would be biased towards them.
	if len(summary.Samples) == int(summary.N) && len(summary.Samples) < samplesPerMetric {
		summary.Samples = append(summary.Samples, s)
	}
	summary.N, summary.Mean, summary.StdDev = combine(summary.N, summary.Mean, summary.StdDev, s.Value)
}

// fitStatus brings the status within statusBudget. It first compacts the per-node lists of finished
// runs, oldest first (compactRun), and only then drops per-sample detail, from the metrics with the
// most samples down: the samples are what the report's statistics are made of (per-repetition means,
// Welch's test, the noise marks), while a run's per-node lists only explain a run and keep their
// gist in its summary. Count, mean and standard deviation are never touched. It reports whether it
// changed anything. The status is marshalled once: dropping a metric's samples removes exactly its
// `"samples":[...],` from the JSON, thanks to omitempty, and a run is measured before and after.
func fitStatus(st *vmbenchv1.BenchmarkSuiteStatus) bool {
	size := statusSize(st)
	if size <= statusBudget {
		return false
	}
	changed := false
	for i := range st.Runs {
		if size <= statusBudget {
			break
		}
		run := &st.Runs[i]
		if run.CompletionTime == nil || !compactable(run) {
			continue
		}
		before := jsonLen(run)
		compactRun(run)
		size += jsonLen(run) - before
		changed = true
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
		if size <= statusBudget {
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
func fitWithWarnings(st *vmbenchv1.BenchmarkSuiteStatus, warn func() []string) {
	st.Warnings = warn()
	for fitStatus(st) {
		st.Warnings = warn()
	}
}

// maxCompactedMessage is the most of its message that a compacted run keeps.
const maxCompactedMessage = 256

// compactable is a run that compactRun would make smaller.
func compactable(run *vmbenchv1.RunStatus) bool {
	return len(run.Noise) > 0 || len(run.CPUs) > 0 || len(run.BootSeconds) > 0 || len(run.Message) > maxCompactedMessage
}

// compactRun replaces a run's per-node lists with their summary: the noisiest node's noise, the
// slowest VM's boot and the nodes that were not pinned, which is what the warnings and the report
// use of a run once it ended. It keeps the start of the run's message, which still says whether and
// why it failed (the Failed condition quotes the messages, cut to its own limit). A summary already
// there is merged into.
func compactRun(run *vmbenchv1.RunStatus) {
	s := run.Compacted
	if s == nil {
		s = &vmbenchv1.RunSummary{}
	}
	s.Nodes = max(s.Nodes, int32(len(run.Noise)), int32(len(run.CPUs)), int32(len(run.BootSeconds)))
	for _, n := range run.Noise {
		if s.MaxNoisePercent == nil || n.MaxPercent > *s.MaxNoisePercent {
			s.MaxNoisePercent = ptrTo(n.MaxPercent)
		}
	}
	for _, b := range run.BootSeconds {
		if s.MaxBootSeconds == nil || b.Seconds > *s.MaxBootSeconds {
			s.MaxBootSeconds = ptrTo(b.Seconds)
		}
	}
	for _, c := range run.CPUs {
		if !c.Pinned && !slices.Contains(s.Unpinned, c.Node) && len(s.Unpinned) < maxRunNodes {
			s.Unpinned = append(s.Unpinned, c.Node)
		}
	}
	run.Compacted = s
	run.Noise, run.CPUs, run.BootSeconds = nil, nil, nil
	run.Message = truncate(run.Message, maxCompactedMessage)
}

func ptrTo(x float64) *float64 { return &x }

// compactedRuns counts the runs whose per-node lists were compacted.
func compactedRuns(st *vmbenchv1.BenchmarkSuiteStatus) int {
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

func statusSize(st *vmbenchv1.BenchmarkSuiteStatus) int {
	b, err := json.Marshal(st)
	if err != nil {
		return 0
	}
	return len(b)
}

// combine adds x to a sample of n values with the given mean and sample standard deviation (Welford's
// update), so that statistics stay exact after per-sample detail is dropped.
func combine(n int32, mean, stddev, x float64) (int32, float64, float64) {
	m2 := 0.0
	if n > 1 {
		m2 = stddev * stddev * float64(n-1)
	}
	n++
	delta := x - mean
	mean += delta / float64(n)
	m2 += delta * (x - mean)
	if n < 2 {
		return n, mean, 0
	}
	return n, mean, math.Sqrt(m2 / float64(n-1))
}

// computeRatios divides every platform's mean by the baseline's, metric by metric.
func computeRatios(st *vmbenchv1.BenchmarkSuiteStatus, baseline string) []vmbenchv1.PlatformRatios {
	var out []vmbenchv1.PlatformRatios
	for _, base := range st.Results {
		if base.Platform != baseline {
			continue
		}
		for _, other := range st.Results {
			if other.Benchmark != base.Benchmark || other.Platform == baseline {
				continue
			}
			pr := vmbenchv1.PlatformRatios{Benchmark: base.Benchmark, Platform: other.Platform, Emulated: other.Emulated}
			for _, bm := range base.Metrics {
				om := findMetric(other.Metrics, bm.Name)
				if om == nil || bm.N == 0 || om.N == 0 || bm.Mean == 0 {
					continue
				}
				ratio := om.Mean / bm.Mean
				overhead := (1 - ratio) * 100
				if bm.Direction == vmbenchv1.LowerIsBetter {
					overhead = (ratio - 1) * 100
				}
				pr.Metrics = append(pr.Metrics, vmbenchv1.RatioValue{Metric: bm.Name, Ratio: round(ratio, 4), OverheadPercent: round(overhead, 2)})
			}
			if len(pr.Metrics) > 0 {
				out = append(out, pr)
			}
		}
	}
	return out
}

func findMetric(ms []vmbenchv1.MetricSummary, name string) *vmbenchv1.MetricSummary {
	for i := range ms {
		if ms[i].Name == name {
			return &ms[i]
		}
	}
	return nil
}

// toolOf maps a benchmark type to the parser that reads its output.
func toolOf(t vmbenchv1.BenchmarkType) results.Tool {
	switch t {
	case vmbenchv1.BenchmarkStressNGCPU, vmbenchv1.BenchmarkStressNGVM:
		return results.StressNG
	}
	return results.Tool(t)
}

// headline is the first benchmark, in spec order, whose headline metric has a ratio. The runner may
// prefix a metric with a block size or target (bs1M_mib_per_second), so a suffix matches too.
func headline(spec vmbenchv1.BenchmarkSuiteSpec, ratios []vmbenchv1.PlatformRatios) *vmbenchv1.Headline {
	for _, b := range spec.Benchmarks {
		want := results.Headline(toolOf(b.Type))
		for _, pr := range ratios {
			if pr.Benchmark != b.Name {
				continue
			}
			for _, r := range pr.Metrics {
				if r.Metric != want && !strings.HasSuffix(r.Metric, "_"+want) {
					continue
				}
				summary := fmt.Sprintf("%s/%s %.2f", pr.Platform, spec.Baseline, r.Ratio)
				if pr.Emulated {
					summary += " (emulated)"
				}
				return &vmbenchv1.Headline{Benchmark: b.Name, Metric: r.Metric, Summary: summary}
			}
		}
	}
	return nil
}

// suiteState is what the conditions are computed from.
type suiteState struct {
	Generation  int64
	InvalidSpec error
	TimedOut    bool
	Now         time.Time
	// Waiting is what holds the active run up, if anything.
	Waiting *cause
}

// setConditions sets Progressing, Complete, Failed and RunsFailed, the phase and the progress, from
// the runs and results in status.
func setConditions(st *vmbenchv1.BenchmarkSuiteStatus, s suiteState) {
	set := func(t string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: status, Reason: reason, Message: truncate(msg, 1024), ObservedGeneration: s.Generation,
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
	if n := compactedRuns(st); n > 0 {
		out = append(out, fmt.Sprintf("%d of %d runs keep only a summary of their per-node noise, CPU lists and VM boot times "+
			"(runs[].compacted) and the first %d characters of their message, so that the status stays small", n, len(st.Runs), maxCompactedMessage))
	}
	if !spec.Cluster.Guaranteed() {
		out = append(out, "cluster requests are below limits: pods and VMs are not in Guaranteed QoS, so neighbours can take their CPU")
	}
	if w := pinningWarning(spec, st); w != "" {
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
	if w := lostTablesWarning(st); w != "" {
		out = append(out, w)
	}
	for _, r := range st.Results {
		if len(r.Metrics) >= maxMetricsPerEntry {
			out = append(out, fmt.Sprintf("%s on %s reported more metrics than status holds (%d): the rest are only in the raw outputs", r.Benchmark, r.Platform, maxMetricsPerEntry))
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

func oneLine(err error) string {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		parts := make([]string, 0, len(joined.Unwrap()))
		for _, e := range joined.Unwrap() {
			parts = append(parts, e.Error())
		}
		return strings.Join(parts, "; ")
	}
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
