package integration

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// scheduleGauge is the value of the one series of a schedule's metric family whose labels include
// the given ones, and whether there is one.
func scheduleGauge(g Gomega, family, ns, schedule string, match map[string]string) (float64, bool) {
	families, err := registry.Gather()
	g.Expect(err).NotTo(HaveOccurred())
	var values []float64
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			if labelValue(m, "namespace") != ns || labelValue(m, "schedule") != schedule {
				continue
			}
			for k, v := range match {
				if labelValue(m, k) != v {
					continue next
				}
			}
			values = append(values, m.GetGauge().GetValue())
		}
	}
	g.Expect(len(values)).To(BeNumerically("<=", 1), "%s of %s/%s: %v", family, ns, schedule, values)
	if len(values) == 0 {
		return 0, false
	}
	return values[0], true
}

// The schedule controller exports a schedule's status and its latest record's ratios, and forgets
// them when the schedule is deleted.
func TestScheduleMetrics(t *testing.T) {
	h := newHarness(t)
	sched, first := h.hourly("gauged", nil)
	h.startSchedules()
	h.clock.SetTime(first)
	h.pokeSchedule("gauged")
	name := suiteAt("gauged", first)
	h.eventuallySchedule("gauged", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
	})
	h.g.Eventually(func(g Gomega) {
		next, ok := scheduleGauge(g, "vmbench_schedule_next_run_timestamp_seconds", h.ns, "gauged", nil)
		g.Expect(ok).To(BeTrue(), "no next run series")
		g.Expect(next).To(Equal(float64(first.Add(time.Hour).Unix())))
		records, ok := scheduleGauge(g, "vmbench_schedule_records", h.ns, "gauged", nil)
		g.Expect(ok).To(BeTrue())
		g.Expect(records).To(BeZero())
		_, ok = scheduleGauge(g, "vmbench_schedule_last_success_timestamp_seconds", h.ns, "gauged", nil)
		g.Expect(ok).To(BeFalse(), "a last success before any suite finished")
		open, ok := scheduleGauge(g, "vmbench_schedule_findings_open", h.ns, "gauged", map[string]string{"arm": "vm", "regression": "true"})
		g.Expect(ok).To(BeTrue())
		g.Expect(open).To(BeZero())
	}, timeout, interval).Should(Succeed())

	finished := first.Add(10 * time.Minute)
	h.clock.SetTime(finished)
	h.finishSuite(name, vmbenchv1.SuiteComplete)
	h.eventuallySchedule("gauged", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Records).To(Equal(int32(1)))
	})
	h.g.Eventually(func(g Gomega) {
		records, _ := scheduleGauge(g, "vmbench_schedule_records", h.ns, "gauged", nil)
		g.Expect(records).To(Equal(1.0))
		success, ok := scheduleGauge(g, "vmbench_schedule_last_success_timestamp_seconds", h.ns, "gauged", nil)
		g.Expect(ok).To(BeTrue(), "no last success after a complete suite")
		g.Expect(success).To(BeNumerically("~", float64(finished.Unix()), 1))
		ratio, ok := scheduleGauge(g, "vmbench_schedule_ratio", h.ns, "gauged",
			map[string]string{"benchmark": "cpu", "metric": "events_per_second", "platform": "vm"})
		g.Expect(ok).To(BeTrue(), "no ratio of the record")
		g.Expect(ratio).To(BeNumerically("~", 0.9, 1e-9))
		_, ok = scheduleGauge(g, "vmbench_schedule_ratio_low", h.ns, "gauged", map[string]string{"platform": "vm"})
		g.Expect(ok).To(BeTrue(), "no interval of a ratio with 2 repetitions a side")
	}, timeout, interval).Should(Succeed())

	h.g.Expect(k8s.Delete(h.ctx, sched)).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		for family, match := range map[string]map[string]string{
			"vmbench_schedule_records":                        nil,
			"vmbench_schedule_next_run_timestamp_seconds":     nil,
			"vmbench_schedule_last_success_timestamp_seconds": nil,
			"vmbench_schedule_ratio":                          {"platform": "vm"},
			"vmbench_schedule_findings_open":                  {"arm": "vm", "regression": "true"},
		} {
			_, ok := scheduleGauge(g, family, h.ns, "gauged", match)
			g.Expect(ok).To(BeFalse(), "%s of a deleted schedule", family)
		}
	}, timeout, interval).Should(Succeed())
}
