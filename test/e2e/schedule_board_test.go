//go:build e2e

package e2e

import (
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/dashboards"
	"github.com/vmbench/vmbench/internal/history"
)

// checkScheduleBoards runs every query of the schedule boards (panels and annotations), with the
// schedule's values for its variables, against the cluster's Prometheus. Each template variable
// must offer the schedule's value; each query must return data, except the few whose data the
// schedule's own state rules out, which must then return none:
//   - the next run, while the schedule is suspended (status.nextScheduleTime unset);
//   - change points, while status.findings holds none of the chosen series (the detector judges
//     from a series' 5th run on);
//   - version changes, while status.lastTrigger is unset (no spec.triggers.onVersionChange);
//   - environment changes: the test moved the runner image to a new tag (tagChanged), so once a
//     record of a suite scheduled after that exists, the query must return data (a literal
//     expectation, not the manager's own comparison);
//   - the pinned baseline line, while the schedule has no spec.baseline, or its suite is not (yet)
//     judged a complete record of the history (status.baseline, the condition Drifted).
//
// The chosen series is the ratio of a platform that is not the baseline in the latest record, which
// needs two platforms in the suite template; its interval and noise need 2 repetitions a side.
func (e *env) checkScheduleBoards(schedule string, tagChanged time.Time) {
	_, records := e.scheduleHistory(schedule)
	e.g.Expect(records).NotTo(BeEmpty(), "schedule %s has no records", schedule)
	latest := records[len(records)-1]
	values := map[string]string{dashboards.VarNamespace: e.ns, dashboards.VarSchedule: schedule}
	for _, m := range latest.Metrics {
		if m.Ratio != nil && m.Platform != latest.Baseline && m.RatioLow != nil {
			values[dashboards.VarBenchmark], values[dashboards.VarMetric], values[dashboards.VarPlatform] = m.Benchmark, m.Metric, m.Platform
			break
		}
	}
	e.g.Expect(values).To(HaveKey(dashboards.VarPlatform),
		"the latest record of schedule %s (suite %s) has no ratio with an interval: the board's ratio panel would be empty; metrics %+v",
		schedule, latest.Suite, latest.Metrics)

	// wantData says whether a query must return data, from the schedule's status and records now.
	wantData := func(expr string, sched *vmbenchv1.BenchmarkSchedule, records []history.Record) (bool, string) {
		switch {
		case strings.Contains(expr, "vmbench_schedule_next_run_timestamp_seconds"):
			return sched.Status.NextScheduleTime != nil, "status.nextScheduleTime set"
		case strings.Contains(expr, "vmbench_schedule_finding_timestamp_seconds"):
			for _, f := range sched.Status.Findings {
				if f.Benchmark == values[dashboards.VarBenchmark] && f.Metric == values[dashboards.VarMetric] && f.Platform == values[dashboards.VarPlatform] {
					return true, "a finding of the series in status.findings"
				}
			}
			return false, "a finding of the series in status.findings"
		case strings.Contains(expr, "vmbench_schedule_version_change_timestamp_seconds"):
			return sched.Status.LastTrigger != nil, "status.lastTrigger set"
		case strings.Contains(expr, "vmbench_schedule_environment_change_timestamp_seconds"):
			for _, r := range records {
				if r.Scheduled.After(tagChanged) {
					return true, "a record of suite " + r.Suite + ", scheduled after the runner image's new tag"
				}
			}
			return false, "no record scheduled after the runner image's new tag (" + tagChanged.Format(time.TimeOnly) + ")"
		case strings.Contains(expr, "vmbench_schedule_baseline_ratio"), strings.Contains(expr, "vmbench_schedule_baseline_mean"):
			return baselinePinned(sched), "spec.baseline set and its suite judged a complete record of the history"
		}
		return true, "always"
	}

	for _, b := range dashboards.ScheduleBoards() {
		d, err := b.Build()
		e.g.Expect(err).NotTo(HaveOccurred())
		for _, v := range dashboards.Variables(d) {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Query)
			e.g.Expect(m).NotTo(BeNil(), "%s: variable %s is no label_values query: %s", b.File, v.Name, v.Query)
			selector := dashboards.Expand(m[1], values)
			e.g.Eventually(func(g Gomega) {
				var offered []string
				g.Expect(e.prometheus("label/"+m[2]+"/values", url.Values{"match[]": {selector}}, &offered)).To(Succeed())
				g.Expect(offered).To(ContainElement(values[v.Name]))
			}, 2*time.Minute, 5*time.Second).Should(Succeed(), "%s: variable %s (%s) offers %q", b.File, v.Name, selector, values[v.Name])
		}
		queries := dashboards.Queries(d)
		for _, a := range dashboards.Annotations(d) {
			queries = append(queries, a.Expr)
		}
		e.g.Expect(queries).NotTo(BeEmpty(), b.File)
		for _, q := range queries {
			expanded := dashboards.Expand(q, values)
			e.g.Expect(dashboards.VariableRefs(expanded)).To(BeEmpty(), "%s: unexpanded variables in %s", b.File, expanded)
			// Prometheus scrapes every few seconds: wait for what the status says to be there, or gone.
			e.g.Eventually(func(g Gomega) {
				// A suite that was running when the schedule was suspended may add a record meanwhile.
				sched, records := e.scheduleHistory(schedule)
				want, why := wantData(q, sched, records)
				got, err := e.query(expanded)
				g.Expect(err).NotTo(HaveOccurred())
				if want {
					g.Expect(got).NotTo(BeEmpty(), "no data, with %s", why)
				} else {
					g.Expect(got).To(BeEmpty(), "data without %s", why)
				}
				e.t.Logf("%s: %d series (data wanted: %v, %s): %s", b.File, len(got), want, why, expanded)
			}, 2*time.Minute, 5*time.Second).Should(Succeed(), "%s: %s", b.File, expanded)
		}
	}
}

// scheduleHistory reads a schedule and its records from its history ConfigMaps.
func (e *env) scheduleHistory(name string) (*vmbenchv1.BenchmarkSchedule, []history.Record) {
	sched := &vmbenchv1.BenchmarkSchedule{}
	e.g.Expect(k8s.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, sched)).To(Succeed())
	cms := &corev1.ConfigMapList{}
	e.g.Expect(k8s.List(e.ctx, cms, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelHistoryOf: name})).To(Succeed())
	records, err := history.FromConfigMaps(name, sched.UID, cms.Items)
	e.g.Expect(err).NotTo(HaveOccurred())
	return sched, records
}

// baselinePinned says whether the manager exports the record pinned in spec.baseline: the baseline
// verdict has judged the pin as it is now and found the record.
func baselinePinned(sched *vmbenchv1.BenchmarkSchedule) bool {
	spec, st := sched.Spec.Baseline, sched.Status.Baseline
	if spec == nil || st == nil || st.Suite != spec.Suite {
		return false
	}
	c := meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionDrifted)
	return c != nil && c.Reason != vmbenchv1.ReasonBaselineNotFound
}
