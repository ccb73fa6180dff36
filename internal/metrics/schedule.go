package metrics

import (
	"math"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

// A schedule exports what its status says at each reconcile (open findings, the times of its last
// success and next run, the records kept) and, per benchmark, metric and platform, the ratio to the
// baseline of its latest record, set when the record is appended. After a restart of the manager
// the ratios come back with the next record.

// MaxRatioSeriesPerSchedule caps the ratio series of one schedule (ratio, interval and noise
// together); the metrics past it are dropped and counted in
// vmbench_schedule_series_dropped_total.
const MaxRatioSeriesPerSchedule = 200

var (
	scheduleLabels      = []string{"namespace", "schedule"}
	scheduleRatioLabels = []string{"namespace", "schedule", "benchmark", "metric", "platform"}
	findingArms         = []vmbenchv1.FindingArm{vmbenchv1.ArmVM, vmbenchv1.ArmContainer, vmbenchv1.ArmHost, vmbenchv1.ArmRatio}

	scheduleFindingsOpenDesc = prometheus.NewDesc("vmbench_schedule_findings_open",
		"Findings of the schedule's history in state Untriaged (status.findings), confirmed or never sent to confirmation runs; "+
			"triage them in spec.triage. "+
			"Labels: namespace, schedule, arm (vm|container|host|ratio), regression (true|false).",
		[]string{"namespace", "schedule", "arm", "regression"}, nil)
	scheduleLastSuccessDesc = prometheus.NewDesc("vmbench_schedule_last_success_timestamp_seconds",
		"When the last suite of the schedule that completed finished (status.lastSuccessfulTime), in Unix seconds; absent before the first. "+
			"Labels: namespace, schedule.", scheduleLabels, nil)
	scheduleNextRunDesc = prometheus.NewDesc("vmbench_schedule_next_run_timestamp_seconds",
		"When the schedule starts its next suite (status.nextScheduleTime), in Unix seconds; absent while suspended or invalid. "+
			"Labels: namespace, schedule.", scheduleLabels, nil)
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
		Help: "Ratio series of schedules' latest records that were not exported: past the cap of 200 a schedule, or whose labels collide once sanitised.",
	})
)

// scheduleSeries is what one schedule exports.
type scheduleSeries struct {
	status []prometheus.Metric
	ratios []prometheus.Metric
}

type scheduleCollector struct {
	mu        sync.RWMutex
	schedules map[string]*scheduleSeries
}

var schedules = &scheduleCollector{schedules: map[string]*scheduleSeries{}}

func (c *scheduleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{scheduleFindingsOpenDesc, scheduleLastSuccessDesc, scheduleNextRunDesc, scheduleRecordsDesc,
		scheduleBaselineDriftedDesc, scheduleRatioDesc, scheduleRatioLowDesc, scheduleRatioHighDesc, scheduleNoiseDesc} {
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
	st := sched.Status
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
	series := statusSeries(sched)
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	schedules.entry(sched.Namespace, sched.Name).status = series
}

// RecordScheduleRecord replaces the ratio series of a schedule with those of the record just
// appended to its history, the latest.
func RecordScheduleRecord(namespace, name string, rec history.Record) {
	series, dropped := ratioSeries(namespace, name, rec)
	if dropped > 0 {
		scheduleSeriesDropped.Add(float64(dropped))
	}
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	schedules.entry(namespace, name).ratios = series
}

// ForgetSchedule deletes every series of a schedule.
func ForgetSchedule(namespace, name string) {
	schedules.mu.Lock()
	defer schedules.mu.Unlock()
	delete(schedules.schedules, suiteKey(namespace, name))
}
