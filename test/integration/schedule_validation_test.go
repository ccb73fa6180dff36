package integration

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Protects the schedule's bounds at admission (S6, S7): the API server refuses @every, a time-zone
// prefix and a spec.maxActive outside 1..10, each with a message that says what to change, and
// defaults spec.maxActive to 3. The minimum interval of a cron expression is the manager's
// (--min-schedule-interval) and is checked by the schedule controller, not here.
func TestScheduleBoundsAreRefusedAtAdmission(t *testing.T) {
	h := newHarness(t)
	schedule := func(i int, change func(*vmbenchv1.BenchmarkScheduleSpec)) *vmbenchv1.BenchmarkSchedule {
		s := &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bounds-%d", i), Namespace: h.ns},
			Spec: vmbenchv1.BenchmarkScheduleSpec{Schedule: "*/5 * * * *", SuiteTemplate: vmbenchv1.SuiteTemplate{
				Spec: vmbenchv1.BenchmarkSuiteSpec{Benchmarks: []vmbenchv1.Benchmark{bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)}}}}}
		change(&s.Spec)
		return s
	}
	for i, tc := range []struct {
		change func(*vmbenchv1.BenchmarkScheduleSpec)
		want   string
	}{
		{func(s *vmbenchv1.BenchmarkScheduleSpec) { s.Schedule = "@every 1s" }, "spec.schedule may not use @every"},
		{func(s *vmbenchv1.BenchmarkScheduleSpec) { s.Schedule = "  @every 24h" }, "or @hourly, @daily"},
		{func(s *vmbenchv1.BenchmarkScheduleSpec) { s.Schedule = "TZ=Europe/Berlin 0 3 * * *" }, "set spec.timeZone instead"},
		{func(s *vmbenchv1.BenchmarkScheduleSpec) { s.Schedule = " CRON_TZ=Europe/Berlin 0 3 * * *" }, "remove the TZ= or CRON_TZ= prefix"},
		{func(s *vmbenchv1.BenchmarkScheduleSpec) { s.MaxActive = ptr.To[int32](11) }, "spec.maxActive: Invalid value: 11"},
		{func(s *vmbenchv1.BenchmarkScheduleSpec) { s.MaxActive = ptr.To[int32](0) }, "spec.maxActive: Invalid value: 0"},
	} {
		s := schedule(i, tc.change)
		err := k8s.Create(h.ctx, s)
		h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%q, maxActive %d: %v", s.Spec.Schedule, ptr.Deref(s.Spec.MaxActive, 0), err)
		h.g.Expect(err.Error()).To(ContainSubstring(tc.want))
	}
	for i, ok := range []string{"*/5 * * * *", "@daily", "@hourly", "0 3 * * 1-5"} {
		s := schedule(100+i, func(s *vmbenchv1.BenchmarkScheduleSpec) { s.Schedule = ok })
		h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed(), ok)
		got := &vmbenchv1.BenchmarkSchedule{}
		h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
		h.g.Expect(got.Spec.MaxActive).To(HaveValue(BeEquivalentTo(vmbenchv1.DefaultMaxActive)), "spec.maxActive defaults to %d", vmbenchv1.DefaultMaxActive)
	}
}
