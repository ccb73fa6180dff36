package report

import (
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestPrecisionPart(t *testing.T) {
	width := func(v float64) *float64 { return &v }
	spec := &vmbenchv1.PrecisionSpec{HalfWidthPercent: 2.5, MaxRepetitions: 6, Metrics: []string{"hpl", "cpu/events_per_second"}}
	tests := []struct {
		name      string
		precision *vmbenchv1.PrecisionSpec
		status    *vmbenchv1.PrecisionStatus
		want      string
	}{
		{name: "no target says nothing"},
		{name: "not judged yet", precision: spec,
			want: "precision target ±2.5% on hpl, cpu/events_per_second, 3 to 6 repetitions: not judged yet"},
		{name: "one reached, one capped", precision: spec, status: &vmbenchv1.PrecisionStatus{Repetitions: 6, Platforms: []vmbenchv1.PlatformPrecision{
			{Platform: "container", Repetitions: 6, Metric: "hpl/HPL_Tflops", HalfWidthPercent: width(1.234), Reached: true},
			{Platform: "vm", Repetitions: 6, Metric: "cpu/events_per_second", HalfWidthPercent: width(7.891)},
		}}, want: "precision target ±2.5% on hpl, cpu/events_per_second, 3 to 6 repetitions: " +
			"container reached (widest hpl/HPL_Tflops ±1.23% after 6 repetitions), " +
			"vm not reached at the cap (widest cpu/events_per_second ±7.89% after 6 repetitions)"},
		{name: "unknown width", precision: spec, status: &vmbenchv1.PrecisionStatus{Repetitions: 3, Platforms: []vmbenchv1.PlatformPrecision{
			{Platform: "vm", Repetitions: 1, Metric: "hpl"},
		}}, want: "vm not reached (widest hpl unknown after 1 repetition)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := &vmbenchv1.BenchmarkSuite{}
			suite.Spec.Repetitions = 3
			suite.Spec.Precision = tt.precision
			suite.Status.Precision = tt.status
			got := precisionPart(suite)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("precisionPart = %q\nwant it to contain %q", got, tt.want)
			}
		})
	}
}
