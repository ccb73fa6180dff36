package summary

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Recording a finished run in status: its phase and cause, its timings, and every sample it measured,
// added to each metric's statistics.

// samplesPerMetric caps the samples kept for one metric.
const SamplesPerMetric = 100

// runCompletion is everything known when a run ends.
type RunCompletion struct {
	Report   RunReport
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
func FinishRun(st *vmbenchv1.BenchmarkSuiteStatus, run *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType,
	benchmarks []vmbenchv1.Benchmark, c RunCompletion) []string {
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
	var tooLarge *frame.LimitError
	switch {
	case errors.As(rep.FrameErr, &tooLarge):
		causes = append(causes, "result frames too large: "+conditions.OneLine(rep.FrameErr))
	case rep.FrameErr != nil:
		causes = append(causes, "corrupt result frames: "+conditions.OneLine(rep.FrameErr))
	}
	if rep.ForeignErr != nil {
		causes = append(causes, "frames of another run: "+conditions.OneLine(rep.ForeignErr))
	}
	// A result without a benchmark is the runner saying the run could not take place at all.
	for _, m := range rep.Results {
		if m.Benchmark == "" && m.Error != "" {
			causes = append(causes, "runner: "+m.Error)
		}
	}
	if rep.Done == nil && len(causes) == 0 {
		causes = append(causes, "the runner never reported that it finished"+lostNote(rep.LostErr))
	}

	if rep.Started != nil {
		if platformType == vmbenchv1.PlatformVM {
			run.Accelerator = acceleratorOf(rep.Started.Virtualization)
		}
		if platform.UsesShared(benchmarks) {
			recordSharedStorage(st, run, sharedStorageOf(run.Name, platformType, c.SharedStorage, rep.Started))
		}
		run.BootSeconds = bootSeconds(rep.Started.NodesReady, c.Created)
		run.CPUs = NodeCPUs(rep.Started.CPUSets, platformType, c.Shape, c.DedicatedVM)
		ObserveRunnerReady(run, rep.Started.Time)
	}
	if rep.Done != nil && run.StartTime != nil {
		orchestration := c.Now.Sub(run.StartTime.Time).Seconds() - rep.Done.BenchmarkSeconds
		run.OrchestrationSeconds = &orchestration
	}

	emulated := run.Accelerator == vmbenchv1.AcceleratorEmulation
	var failedBenchmarks, benchmarkCauses []string
	latest := LatestResults(rep.Results)
	run.Noise = NodeNoise(latest)
	for _, b := range benchmarks {
		res := ResultFor(st, b.Name, run.Platform)
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
			if err := SampleError(m); err != "" {
				res.Failures++
				res.LastError = conditions.Truncate(fmt.Sprintf("run %s, %s: %s", run.Name, Where(m), err), 512)
				if firstErr == "" {
					firstErr = Where(m) + ": " + err
				}
				continue
			}
			for _, metric := range m.Metrics {
				metric = fitMetric(metric)
				if FindMetric(res.Metrics, metric.Name) == nil && len(res.Metrics) >= MaxMetricsPerEntry {
					continue // warnings() says that the benchmark reached the limit
				}
				// A migration benchmark's samples measure the migrations themselves: they are not
				// marked, so that --drop-migrated never drops the answer to the question it asks.
				sample := vmbenchv1.Sample{Repetition: run.Repetition, Node: conditions.Truncate(m.Node, maxSampleNode), Value: metric.Value, Noise: sampleNoise(m),
					Migrated: b.Type != vmbenchv1.BenchmarkMigration && MigratedDuring(m, run.Migrations)}
				if !AddSample(res, metric, sample) {
					res.Failures++
					res.LastError = conditions.Truncate(fmt.Sprintf("run %s, %s: %s = %g would make its statistics in status infinite; it was not added",
						run.Name, Where(m), metric.Name, metric.Value), 512)
					if firstErr == "" {
						firstErr = fmt.Sprintf("%s: %s = %g would make its statistics infinite", Where(m), metric.Name, metric.Value)
					}
				}
			}
		}
		if !reported {
			res.Failures++
			res.LastError = conditions.Truncate(fmt.Sprintf("run %s reported no result", run.Name)+lostNote(rep.LostErr), 512)
			firstErr = "no result reported" + lostNote(rep.LostErr)
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
	run.Message = conditions.Truncate(strings.Join(causes, "; "), 1024)
	return failedBenchmarks
}

// MigratedDuring reports whether a live migration of one of the run's VMIs overlapped the time a
// result was measured: from its message's time (the runner's clock when it sent it) back by the
// seconds the execution took. A migration still running, or without an end, overlaps from its
// start on; one without a start overlaps nothing that can be placed. A result without a time (an
// older runner) overlaps any migration of the run.
func MigratedDuring(m runplan.Message, migrations []vmbenchv1.RunMigration) bool {
	for _, mig := range migrations {
		if mig.StartTime == nil {
			continue
		}
		if m.Time.IsZero() {
			return true
		}
		start := m.Time.Add(-time.Duration(m.Seconds * float64(time.Second)))
		if m.Time.Before(mig.StartTime.Time) {
			continue
		}
		if mig.EndTime == nil || !mig.EndTime.Time.Before(start) {
			return true
		}
	}
	return false
}

// lostNote adds to a missing message's cause the messages that a live migration cut, which may be it.
func lostNote(lost error) string {
	if lost == nil {
		return ""
	}
	return " (" + conditions.OneLine(lost) + ")"
}

// latestResults keeps, per benchmark, node and variant, the last result a runner reported, preferring a
// measurement to an error: a runner started again in the same log (a rebooted VM) measured again,
// and no execution may count twice. A run is merged into status once, when it ends, so this is the
// only place where duplicates can meet.
func LatestResults(msgs []runplan.Message) []runplan.Message {
	type key struct{ benchmark, node, variant string }
	index := map[key]int{}
	var out []runplan.Message
	for _, m := range msgs {
		k := key{m.Benchmark, m.Node, m.Variant}
		if i, ok := index[k]; ok {
			if SampleError(m) == "" || SampleError(out[i]) != "" {
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
func Where(m runplan.Message) string {
	if m.Variant == "" {
		return m.Node
	}
	return m.Node + " " + m.Variant
}

// sampleError is why one result cannot be used: the runner's error, no metric at all, or a
// throughput of zero, which is a broken run, never a measurement (a flag of zero is one: netperf's
// confidence_achieved says the interval was not reached, and the result stands).
func SampleError(m runplan.Message) string {
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
		if math.Abs(metric.Value) > maxValue {
			return fmt.Sprintf("%s is %g %s, beyond the %g that vmbench takes of any value; a parser that misread the tool's output, "+
				"or a forged result frame", metric.Name, metric.Value, metric.Unit, maxValue)
		}
		if metric.Direction == results.HigherIsBetter && metric.Value <= 0 && !results.IsFlag(metric.Unit) {
			return fmt.Sprintf("%s is %g %s", metric.Name, metric.Value, metric.Unit)
		}
	}
	if msg := noiseError(m.Noise); msg != "" {
		return msg
	}
	return ""
}

// maxValue bounds the magnitude of every number a runner reports (a metric's value, a noise
// percentage). No tool's figure comes near it (1e15 B/s is a petabyte per second), and below it the
// statistics of up to 2^31 samples stay finite: a status holding +Inf or NaN cannot be written, and
// every later write of the suite would fail with it.
const maxValue = 1e15

// noiseError is why the noise sampled around an execution cannot be used, or "".
func noiseError(n *runplan.Noise) string {
	if n == nil {
		return ""
	}
	values := map[string]float64{"busyPercent": n.BusyPercent, "stealPercent": n.StealPercent}
	if n.OthersPercent != nil {
		values["othersPercent"] = *n.OthersPercent
	}
	for _, name := range []string{"busyPercent", "stealPercent", "othersPercent"} {
		v, ok := values[name]
		if ok && !finiteWithin(v) {
			return fmt.Sprintf("the noise sampled on %s has %s %g, beyond the %g that vmbench takes of any value", n.Node, name, v, maxValue)
		}
	}
	return ""
}

// finiteWithin reports whether x is a number within maxValue.
func finiteWithin(x float64) bool { return !math.IsNaN(x) && math.Abs(x) <= maxValue }

// finite reports whether every x is a number that JSON, and so status, can hold.
func Finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
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
		out = append(out, vmbenchv1.NodeTiming{Node: node, Seconds: Round(t.Sub(c).Seconds(), 1)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

func ResultFor(st *vmbenchv1.BenchmarkSuiteStatus, benchmark, platformName string) *vmbenchv1.BenchmarkResult {
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
	MaxMetricName      = 64
	maxMetricUnit      = 16
	maxSampleNode      = 40
	MaxMetricsPerEntry = 48
)

// fitMetric shortens what the status schema cannot hold: a name past its limit keeps its start and a
// hash of the whole, so that the same long name always gives the same short one.
func fitMetric(m results.Metric) results.Metric {
	if len(m.Name) > MaxMetricName {
		h := fnv.New32a()
		_, _ = h.Write([]byte(m.Name))
		m.Name = fmt.Sprintf("%s_%08x", m.Name[:MaxMetricName-9], h.Sum32())
	}
	if len(m.Unit) > maxMetricUnit {
		m.Unit = m.Unit[:maxMetricUnit]
	}
	return m
}

// addSample adds one value to a metric's statistics, and to its samples while the metric has room.
// It reports false, and adds nothing, when the statistics would no longer be finite numbers (a
// status edited by hand to hold huge ones).
func AddSample(res *vmbenchv1.BenchmarkResult, m results.Metric, s vmbenchv1.Sample) bool {
	if summary := FindMetric(res.Metrics, m.Name); summary != nil {
		if _, mean, sd := Combine(summary.N, summary.Mean, summary.StdDev, s.Value); !Finite(mean, sd) {
			return false
		}
	}
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
	if len(summary.Samples) == int(summary.N) && len(summary.Samples) < SamplesPerMetric {
		summary.Samples = append(summary.Samples, s)
	}
	summary.N, summary.Mean, summary.StdDev = Combine(summary.N, summary.Mean, summary.StdDev, s.Value)
	return true
}

// combine adds x to a sample of n values with the given mean and sample standard deviation (Welford's
// update), so that statistics stay exact after per-sample detail is dropped.
func Combine(n int32, mean, stddev, x float64) (int32, float64, float64) {
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

// round rounds x to digits decimals; a number too large for that is left as it is, rather than
// made infinite.
func Round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	if math.IsInf(x*p, 0) {
		return x
	}
	return math.Round(x*p) / p
}

// runReport is what a run's runner reported, decoded from its log.
type RunReport struct {
	Started *runplan.Message
	// ProbeStarted is the migration benchmark's probe-started message, the first of them.
	ProbeStarted *runplan.Message
	Results      []runplan.Message
	Done         *runplan.Message
	// FrameErr is set when frames were corrupt or not authentic.
	FrameErr error
	// ForeignErr is set when authentic frames of another run were in this run's log: they were
	// refused, as counting them would count another run's samples twice.
	ForeignErr error
	// LogErr is set when no log could be read.
	LogErr error
	// LostErr names the messages that a VMI's live migration cut where one launcher pod's log ends
	// and the next begins, and that no log holds whole: they are lost, which is no corrupt frame.
	LostErr error
}
