package metrics

import (
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

// A schedule exports what its status says at each reconcile (open findings, the times of its
// creation, last success and next run, whether its spec is valid, the records kept) and, per benchmark, metric and platform, the ratio to the
// baseline of its latest record, set when the record is appended, and the same values of the record
// pinned in spec.baseline, set at each baseline verdict. After a restart of the manager both come
// back with the next record.

// MaxRatioSeriesPerSchedule caps the ratio series of one schedule (ratio, interval and noise
// together, then the means, then the pinned baseline record's ratios and means); the metrics past it
// are dropped and counted in vmbench_schedule_series_dropped_total.
const MaxRatioSeriesPerSchedule = 200

var (
	scheduleLabels      = []string{"namespace", "schedule"}
	scheduleRatioLabels = []string{"namespace", "schedule", "benchmark", "metric", "platform"}
	findingArms         = []vmbenchv1.FindingArm{vmbenchv1.ArmVM, vmbenchv1.ArmContainer, vmbenchv1.ArmHost, vmbenchv1.ArmRatio}

	scheduleFindingsOpenDesc = prometheus.NewDesc("vmbench_schedule_findings_open",
		"Findings of the schedule's history in state Untriaged (status.findings), confirmed or never sent to confirmation runs; "+
			"a finding counts once however many series changed with it (status.findings[].seriesCount), by the arm of its worst; "+
			"triage them in spec.triage. "+
			"Labels: namespace, schedule, arm (vm|container|host|ratio), regression (true|false).",
		[]string{"namespace", "schedule", "arm", "regression"}, nil)
	scheduleLastSuccessDesc = prometheus.NewDesc("vmbench_schedule_last_success_timestamp_seconds",
		"When the last suite of the schedule that completed finished (status.lastSuccessfulTime), in Unix seconds; absent before the first. "+
			"Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleNextRunDesc = prometheus.NewDesc("vmbench_schedule_next_run_timestamp_seconds",
		"When the schedule starts its next suite (status.nextScheduleTime), in Unix seconds; absent while suspended or invalid. "+
			"Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleCreatedDesc = prometheus.NewDesc("vmbench_schedule_created_timestamp_seconds",
		"When the schedule was created (metadata.creationTimestamp), in Unix seconds: the start of the wait for its first success. "+
			"Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleValidDesc = prometheus.NewDesc("vmbench_schedule_valid",
		"1 when the schedule's spec is valid (condition Valid True), 0 when it is not and the schedule starts nothing "+
			"(the condition's message says what to change); absent before the manager judged it. Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleRecordsDesc = prometheus.NewDesc("vmbench_schedule_records",
		"Records in the schedule's history (status.records). Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleBaselineDriftedDesc = prometheus.NewDesc("vmbench_schedule_baseline_drifted",
		"Series of the schedule's newest runs that are worse than the baseline pinned in spec.baseline by more than the tolerance "+
			"(status.baseline); 0 when none is, absent without spec.baseline. Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleRatioDesc = prometheus.NewDesc("vmbench_schedule_ratio",
		"A platform's mean over the baseline's in the higher-is-better sense in the schedule's latest record. "+
			"Labels: namespace, schedule, benchmark, metric, platform.", scheduleRatioLabels, nil)
	scheduleRatioLowDesc = prometheus.NewDesc("vmbench_schedule_ratio_low",
		"Lower bound of vmbench_schedule_ratio's 95% interval; absent without 2 repetitions a side. Labels as it.", scheduleRatioLabels, nil)
	scheduleRatioHighDesc = prometheus.NewDesc("vmbench_schedule_ratio_high",
		"Upper bound of vmbench_schedule_ratio's 95% interval; absent without 2 repetitions a side. Labels as it.", scheduleRatioLabels, nil)
	scheduleNoiseDesc = prometheus.NewDesc("vmbench_schedule_noise",
		"Standard deviation of the logarithms of the platform's repetition means in the schedule's latest record "+
			"(about the relative spread: 0.05 is 5%); absent without 2 repetitions. Labels as vmbench_schedule_ratio.", scheduleRatioLabels, nil)

	scheduleSeriesDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vmbench_schedule_series_dropped_total",
		Help: "Ratio, mean, pinned baseline and minimum detectable change series of schedules that were not exported: past the cap of 200 a schedule, or whose labels collide once sanitised.",
	})
)

// scheduleSeries is what one schedule exports.
type scheduleSeries struct {
	status []prometheus.Metric
	ratios []prometheus.Metric
	// environment is the series of RecordScheduleEnvironmentChange, nil without a change.
	environment prometheus.Metric
	// sensitivity are the series of RecordScheduleSensitivity.
	sensitivity []prometheus.Metric
	// baselineGroups are the pinned baseline record's series of RecordScheduleBaseline, one group
	// per platform series, before the budget; baseline those admitted in what ratios leave.
	baselineGroups [][]pending
	baseline       []prometheus.Metric
}

type scheduleCollector struct {
	mu        sync.RWMutex
	schedules map[string]*scheduleSeries
}

var schedules = &scheduleCollector{schedules: map[string]*scheduleSeries{}}

func (c *scheduleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{scheduleFindingsOpenDesc, scheduleLastSuccessDesc, scheduleNextRunDesc, scheduleCreatedDesc, scheduleValidDesc, scheduleRecordsDesc,
		scheduleBaselineDriftedDesc, scheduleRatioDesc, scheduleRatioLowDesc, scheduleRatioHighDesc, scheduleNoiseDesc} {
		ch <- d
	}
	for _, d := range boardDescs {
		ch <- d
	}
}

func (c *scheduleCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, s := range c.schedules {
		for _, m := range s.status {
			ch <- m
		}
		for _, m := range s.ratios {
			ch <- m
		}
		if s.environment != nil {
			ch <- s.environment
		}
		for _, m := range s.sensitivity {
			ch <- m
		}
		for _, m := range s.baseline {
			ch <- m
		}
	}
}

// entry returns the schedule's series, creating them; the caller holds the lock.
func (c *scheduleCollector) entry(namespace, name string) *scheduleSeries {
	k := suiteKey(namespace, name)
	s := c.schedules[k]
	if s == nil {
		s = &scheduleSeries{}
		c.schedules[k] = s
	}
	return s
}

// statusSeries are the series read from the schedule's status.
func statusSeries(sched *vmbenchv1.BenchmarkSchedule) []prometheus.Metric {
	ns, name := labelValue(sched.Namespace), labelValue(sched.Name)
	type armKey struct {
		arm        vmbenchv1.FindingArm
		regression bool
	}
	open := map[armKey]int{}
	arms := append([]vmbenchv1.FindingArm{}, findingArms...)
	for _, f := range sched.Status.Findings {
		if !f.Open() {
			// Triaged, or waiting for or cleared by its confirmation runs.
			continue
		}
		if !slices.Contains(arms, f.Arm) {
			arms = append(arms, f.Arm)
		}
		open[armKey{f.Arm, f.Regression}]++
	}
	var out []prometheus.Metric
	for _, arm := range arms {
		for _, regression := range []bool{true, false} {
			r := "false"
			if regression {
				r = "true"
			}
			out = append(out, prometheus.MustNewConstMetric(scheduleFindingsOpenDesc, prometheus.GaugeValue,
				float64(open[armKey{arm, regression}]), ns, name, labelValue(string(arm)), r))
		}
	}
	if !sched.CreationTimestamp.IsZero() {
		out = append(out, prometheus.MustNewConstMetric(scheduleCreatedDesc, prometheus.GaugeValue, unixSeconds(sched.CreationTimestamp.UnixNano()), ns, name))
	}
	st := sched.Status
	if c := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionValid); c != nil && c.Status != metav1.ConditionUnknown {
		valid := 0.0
		if c.Status == metav1.ConditionTrue {
			valid = 1
		}
		out = append(out, prometheus.MustNewConstMetric(scheduleValidDesc, prometheus.GaugeValue, valid, ns, name))
	}
	if st.LastSuccessfulTime != nil {
		out = append(out, prometheus.MustNewConstMetric(scheduleLastSuccessDesc, prometheus.GaugeValue, unixSeconds(st.LastSuccessfulTime.UnixNano()), ns, name))
	}
	if st.NextScheduleTime != nil {
		out = append(out, prometheus.MustNewConstMetric(scheduleNextRunDesc, prometheus.GaugeValue, unixSeconds(st.NextScheduleTime.UnixNano()), ns, name))
	}
	out = append(out, prometheus.MustNewConstMetric(scheduleRecordsDesc, prometheus.GaugeValue, float64(st.Records), ns, name))
	if st.Baseline != nil {
		drifted := 0
		for _, s := range st.Baseline.Series {
			if s.Verdict == vmbenchv1.BaselineDrifted {
				drifted++
			}
		}
		out = append(out, prometheus.MustNewConstMetric(scheduleBaselineDriftedDesc, prometheus.GaugeValue, float64(drifted), ns, name))
	}
	return out
}

func unixSeconds(nanos int64) float64 { return float64(nanos) / 1e9 }

// ratioSeries are the series of a record's ratios, within MaxRatioSeriesPerSchedule, and how many
// did not fit.
func ratioSeries(namespace, name string, rec history.Record) ([]prometheus.Metric, int) {
	ns, sched := labelValue(namespace), labelValue(name)
	b := &budget{left: MaxRatioSeriesPerSchedule, seen: map[string]bool{}}
	var out []prometheus.Metric
	for _, m := range rec.Metrics {
		if m.Ratio == nil {
			continue
		}
		l := []string{ns, sched, labelValue(m.Benchmark), labelValue(m.Metric), labelValue(m.Platform)}
		group := []pending{{scheduleRatioDesc, *m.Ratio, l}}
		if m.RatioLow != nil && m.RatioHigh != nil {
			group = append(group, pending{scheduleRatioLowDesc, *m.RatioLow, l}, pending{scheduleRatioHighDesc, *m.RatioHigh, l})
		}
		if m.VarLog != nil && m.N >= 2 && *m.VarLog >= 0 {
			group = append(group, pending{scheduleNoiseDesc, math.Sqrt(*m.VarLog), l})
		}
		out = append(out, b.admit(group)...)
	}
	return out, b.dropped
}

// RecordSchedule replaces the series a schedule's status gives: call it after each reconcile.
func RecordSchedule(sched *vmbenchv1.BenchmarkSchedule) {
	series := append(statusSeries(sched), eventSeries(sched)...)
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	schedules.entry(sched.Namespace, sched.Name).status = series
}

// RecordScheduleRecord replaces the ratio series of a schedule with those of the record just
// appended to its history, the latest.
func RecordScheduleRecord(namespace, name string, rec history.Record) {
	series, dropped := ratioSeries(namespace, name, rec)
	arms, armsDropped := armSeries(namespace, name, rec, MaxRatioSeriesPerSchedule-len(series))
	series, dropped = append(series, arms...), dropped+armsDropped
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	e := schedules.entry(namespace, name)
	e.ratios = series
	// The pinned baseline's series take what the new record's leave.
	dropped += e.admitBaseline()
	if dropped > 0 {
		scheduleSeriesDropped.Add(float64(dropped))
	}
}

// ForgetSchedule deletes every series of a schedule.
func ForgetSchedule(namespace, name string) {
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	delete(schedules.schedules, suiteKey(namespace, name))
	ForgetScheduleAwaitingArchive(namespace, name)
}

// Series for the schedule trend board: each arm's level, the detector's sensitivity per series,
// and the times of the events the board marks (change points, version and environment changes).
// The levels take what the ratio series leave of MaxRatioSeriesPerSchedule, the sensitivities have
// a cap of their own; findings are at most 32 in the status, version and environment changes one
// series each.

var (
	scheduleMeanDesc = prometheus.NewDesc("vmbench_schedule_mean",
		"A platform's geometric mean of its repetition means in the schedule's latest record, in the metric's unit: "+
			"each arm's level, the baseline's too. Labels as vmbench_schedule_ratio.", scheduleRatioLabels, nil)
	scheduleFindingTimeDesc = prometheus.NewDesc("vmbench_schedule_finding_timestamp_seconds",
		"When the first suite after a change point of status.findings was scheduled, in Unix seconds; one series per "+
			"finding, whatever its triage state. Labels: namespace, schedule, id, benchmark, metric, platform, "+
			"arm (vm|container|host|ratio), direction (up|down), regression (true|false).",
		[]string{"namespace", "schedule", "id", "benchmark", "metric", "platform", "arm", "direction", "regression"}, nil)
	scheduleVersionTriggerDesc = prometheus.NewDesc("vmbench_schedule_version_change_timestamp_seconds",
		"When spec.triggers.onVersionChange last found a watched version changed (status.lastTrigger), in Unix seconds; "+
			"absent before the first. Labels: namespace, schedule, suite (the suite started for it).",
		[]string{"namespace", "schedule", "suite"}, nil)
	scheduleEnvironmentChangeDesc = prometheus.NewDesc("vmbench_schedule_environment_change_timestamp_seconds",
		"When the first suite whose record's environment (KubeVirt version, virt-launcher and runner images, the nodes' "+
			"kernel, OS image, container runtime, kubelet and CPU model, the VMs' machine type) differs from the Complete "+
			"record before it was scheduled, in Unix seconds: the latest such change in the history. Labels: namespace, schedule, suite.",
		[]string{"namespace", "schedule", "suite"}, nil)

	scheduleMinDetectableDesc = prometheus.NewDesc("vmbench_schedule_min_detectable_change",
		"The smallest step (0.02 for 2%) that the change detector would find, with 80% power at its p <= 0.001, once 3 more "+
			"runs as noisy as those since the series' last change follow them; it never reports a step below 3% whatever this "+
			"says. Absent before the series has 2 runs under the current parameters hash. Labels: namespace, schedule, "+
			"benchmark, metric, platform, arm (vm|container|host for the platform's own series, ratio for its ratio to the baseline).",
		[]string{"namespace", "schedule", "benchmark", "metric", "platform", "arm"}, nil)

	scheduleBaselineLabels    = []string{"namespace", "schedule", "benchmark", "metric", "platform", "suite"}
	scheduleBaselineRatioDesc = prometheus.NewDesc("vmbench_schedule_baseline_ratio",
		"vmbench_schedule_ratio in the record pinned in spec.baseline.suite, the level the baseline verdict holds the newest runs "+
			"against; set at each verdict (after each record and when spec.baseline changes), absent without spec.baseline or while "+
			"the pinned suite is not a complete record of the history. Labels as vmbench_schedule_ratio, and suite (the pinned record's).",
		scheduleBaselineLabels, nil)
	scheduleBaselineMeanDesc = prometheus.NewDesc("vmbench_schedule_baseline_mean",
		"vmbench_schedule_mean in the record pinned in spec.baseline.suite, in the metric's unit; set and absent as "+
			"vmbench_schedule_baseline_ratio. Labels as vmbench_schedule_mean, and suite (the pinned record's).",
		scheduleBaselineLabels, nil)

	boardDescs = []*prometheus.Desc{scheduleMeanDesc, scheduleFindingTimeDesc, scheduleVersionTriggerDesc, scheduleEnvironmentChangeDesc,
		scheduleMinDetectableDesc, scheduleBaselineRatioDesc, scheduleBaselineMeanDesc}
)

// SeriesSensitivity is the change detector's sensitivity to one series of a schedule's history.
type SeriesSensitivity struct {
	Benchmark, Metric, Platform string
	// Arm is vm, container or host for the platform's own series, ratio for its ratio to the baseline.
	Arm string
	// MinDetectableChange is a fraction: 0.02 for 2%.
	MinDetectableChange float64
}

// RecordScheduleSensitivity replaces a schedule's minimum detectable change series with those of
// its latest analysis, at most MaxRatioSeriesPerSchedule.
func RecordScheduleSensitivity(namespace, name string, series []SeriesSensitivity) {
	ns, sched := labelValue(namespace), labelValue(name)
	b := &budget{left: MaxRatioSeriesPerSchedule, seen: map[string]bool{}}
	var out []prometheus.Metric
	for _, s := range series {
		if math.IsNaN(s.MinDetectableChange) || math.IsInf(s.MinDetectableChange, 0) {
			b.dropped++
			continue
		}
		out = append(out, b.admit([]pending{{scheduleMinDetectableDesc, s.MinDetectableChange,
			[]string{ns, sched, labelValue(s.Benchmark), labelValue(s.Metric), labelValue(s.Platform), labelValue(s.Arm)}}})...)
	}
	if b.dropped > 0 {
		scheduleSeriesDropped.Add(float64(b.dropped))
	}
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	schedules.entry(namespace, name).sensitivity = out
}

// armSeries are the means of every platform of a record, and the noise of the platforms that have
// no ratio (the baseline), whose noise ratioSeries leaves out, within room series.
func armSeries(namespace, name string, rec history.Record, room int) ([]prometheus.Metric, int) {
	ns, sched := labelValue(namespace), labelValue(name)
	b := &budget{left: max(room, 0), seen: map[string]bool{}}
	var out []prometheus.Metric
	for _, m := range rec.Metrics {
		if m.MeanLog == nil || math.IsNaN(*m.MeanLog) || math.IsInf(*m.MeanLog, 0) {
			continue
		}
		l := []string{ns, sched, labelValue(m.Benchmark), labelValue(m.Metric), labelValue(m.Platform)}
		group := []pending{{scheduleMeanDesc, math.Exp(*m.MeanLog), l}}
		if m.Ratio == nil && m.VarLog != nil && m.N >= 2 && *m.VarLog >= 0 {
			group = append(group, pending{scheduleNoiseDesc, math.Sqrt(*m.VarLog), l})
		}
		out = append(out, b.admit(group)...)
	}
	return out, b.dropped
}

// eventSeries are the times of the schedule's findings and of its last version trigger.
func eventSeries(sched *vmbenchv1.BenchmarkSchedule) []prometheus.Metric {
	ns, name := labelValue(sched.Namespace), labelValue(sched.Name)
	var out []prometheus.Metric
	seen := map[string]bool{}
	for _, f := range sched.Status.Findings {
		if seen[f.ID] || f.Time.IsZero() {
			continue
		}
		seen[f.ID] = true
		out = append(out, prometheus.MustNewConstMetric(scheduleFindingTimeDesc, prometheus.GaugeValue, unixSeconds(f.Time.UnixNano()),
			ns, name, labelValue(f.ID), labelValue(f.Benchmark), labelValue(f.Metric), labelValue(f.Platform),
			labelValue(string(f.Arm)), labelValue(f.Direction), strconv.FormatBool(f.Regression)))
	}
	if t := sched.Status.LastTrigger; t != nil && !t.Time.IsZero() {
		out = append(out, prometheus.MustNewConstMetric(scheduleVersionTriggerDesc, prometheus.GaugeValue, unixSeconds(t.Time.UnixNano()),
			ns, name, labelValue(t.Suite)))
	}
	return out
}

// RecordScheduleEnvironmentChange sets, from a schedule's records (oldest first), when the suite
// of the latest Complete record whose environment differs from the Complete record before it was
// scheduled (history.LatestEnvironmentChange); without such a record there is no series.
func RecordScheduleEnvironmentChange(namespace, name string, records []history.Record) {
	var m prometheus.Metric
	if latest, _, ok := history.LatestEnvironmentChange(records); ok {
		m = prometheus.MustNewConstMetric(scheduleEnvironmentChangeDesc, prometheus.GaugeValue,
			unixSeconds(latest.Scheduled.UnixNano()), labelValue(namespace), labelValue(name), labelValue(latest.Suite))
	}
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	schedules.entry(namespace, name).environment = m
}

// baselineGroups are a pinned record's ratio and mean of each platform series, a group per series;
// a value that is absent or not finite has no series.
func baselineGroups(namespace, name string, rec history.Record) [][]pending {
	ns, sched, suite := labelValue(namespace), labelValue(name), labelValue(rec.Suite)
	var out [][]pending
	for _, m := range rec.Metrics {
		l := []string{ns, sched, labelValue(m.Benchmark), labelValue(m.Metric), labelValue(m.Platform), suite}
		var group []pending
		if m.Ratio != nil && finite(*m.Ratio) {
			group = append(group, pending{scheduleBaselineRatioDesc, *m.Ratio, l})
		}
		if m.MeanLog != nil && finite(*m.MeanLog) {
			group = append(group, pending{scheduleBaselineMeanDesc, math.Exp(*m.MeanLog), l})
		}
		if len(group) > 0 {
			out = append(out, group)
		}
	}
	return out
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// admitBaseline admits the pinned baseline's series in what the latest record's series leave of
// MaxRatioSeriesPerSchedule, and returns how many did not fit; the caller holds the lock.
func (s *scheduleSeries) admitBaseline() int {
	b := &budget{left: max(MaxRatioSeriesPerSchedule-len(s.ratios), 0), seen: map[string]bool{}}
	s.baseline = nil
	for _, g := range s.baselineGroups {
		s.baseline = append(s.baseline, b.admit(g)...)
	}
	return b.dropped
}

// RecordScheduleBaseline replaces the series of a schedule's pinned baseline record (spec.baseline)
// with those of rec, at each baseline verdict; nil removes them (no spec.baseline, or the pinned
// suite is no complete record of the history). They share MaxRatioSeriesPerSchedule with the
// latest record's series, which come first.
func RecordScheduleBaseline(namespace, name string, rec *history.Record) {
	var groups [][]pending
	if rec != nil {
		groups = baselineGroups(namespace, name, *rec)
	}
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	e := schedules.schedules[suiteKey(namespace, name)]
	if e == nil {
		if groups == nil {
			return
		}
		e = schedules.entry(namespace, name)
	}
	e.baselineGroups = groups
	if dropped := e.admitBaseline(); dropped > 0 {
		scheduleSeriesDropped.Add(float64(dropped))
	}
}
