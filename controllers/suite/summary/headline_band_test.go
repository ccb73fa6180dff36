package summary

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The Band column places the headline ratio against its family's band with the VM's recorded
// settings: in each position, with a latency headline turned into the higher-is-better sense, with
// the tuned band for a pinned VM, and nothing where no band applies.
func TestHeadlineBand(t *testing.T) {
	// suiteWith is a container baseline and a VM whose headline benchmark is first in spec order.
	suiteWith := func(benchmark vmbenchv1.BenchmarkType, metric string, direction vmbenchv1.Direction, ratio float64) *vmbenchv1.BenchmarkSuite {
		s := &vmbenchv1.BenchmarkSuite{Spec: vmbenchv1.BenchmarkSuiteSpec{
			Baseline:   "container",
			Platforms:  []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}},
			Benchmarks: []vmbenchv1.Benchmark{{Name: "b", Type: benchmark}},
			Cluster:    vmbenchv1.ClusterShape{CPU: 2, Memory: resource.NewQuantity(2<<30, resource.BinarySI)},
		}}
		s.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "b", Platform: "container",
			Metrics: []vmbenchv1.MetricSummary{{Name: metric, Direction: direction, N: 2, Mean: 1}}}}
		s.Status.Ratios = []vmbenchv1.PlatformRatios{{Benchmark: "b", Platform: "vm",
			Metrics: []vmbenchv1.RatioValue{{Metric: "other", Ratio: 0.01}, {Metric: metric, Ratio: ratio}}}}
		return s
	}
	hpl := func(ratio float64) *vmbenchv1.BenchmarkSuite {
		return suiteWith(vmbenchv1.BenchmarkHPCC, "HPL_Tflops", vmbenchv1.HigherIsBetter, ratio)
	}
	tests := []struct {
		name  string
		suite *vmbenchv1.BenchmarkSuite
		want  string
	}{
		{"HPL in the default compute band", hpl(0.95), "within"},
		{"HPL below it", hpl(0.45), "below"},
		{"HPL above it", hpl(1.3), "above"},
		{"HPL of a pinned VM, under the tuned band", func() *vmbenchv1.BenchmarkSuite {
			s := hpl(0.95)
			s.Status.VMSettings = []vmbenchv1.VMSettingsStatus{{Platform: "vm", Run: "r", DedicatedCPUs: true}}
			return s
		}(), "below"},
		{"HPL emulated", func() *vmbenchv1.BenchmarkSuite {
			s := hpl(0.003)
			s.Status.Ratios[0].Emulated = true
			return s
		}(), "emulated"},
		// A VM round trip of 1.5x the container's lies in 1.3–2.0x; 4x lies below the band.
		{"ping 1.5x the container's round trip", suiteWith(vmbenchv1.BenchmarkPing, "rtt_avg_ms", vmbenchv1.LowerIsBetter, 1.5), "within"},
		{"ping 4x the container's round trip", suiteWith(vmbenchv1.BenchmarkPing, "rtt_avg_ms", vmbenchv1.LowerIsBetter, 4), "below"},
		{"sysbench cpu has no band", suiteWith(vmbenchv1.BenchmarkSysbenchCPU, "events_per_second", vmbenchv1.HigherIsBetter, 0.5), ""},
		{"a VM baseline", func() *vmbenchv1.BenchmarkSuite {
			s := hpl(0.45)
			s.Spec.Platforms[0].Type = vmbenchv1.PlatformVM
			return s
		}(), ""},
		{"a container against a container", func() *vmbenchv1.BenchmarkSuite {
			s := hpl(0.45)
			s.Spec.Platforms[1].Type = vmbenchv1.PlatformContainer
			return s
		}(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.suite.Status.Headline = Headline(tt.suite.Spec, tt.suite.Status.Ratios)
			if got := HeadlineBand(tt.suite); got != tt.want {
				t.Errorf("band %q, want %q (headline %+v)", got, tt.want, tt.suite.Status.Headline)
			}
		})
	}
	if got := HeadlineBand(&vmbenchv1.BenchmarkSuite{}); got != "" {
		t.Errorf("a suite without a headline: %q", got)
	}
}
