package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
)

// largestHistory is the largest history a schedule keeps: 200 complete records of the largest
// suite (12 benchmarks on 4 platforms, 48 metrics each, 30 repetitions; see
// TestLargestRecordFitsAConfigMap), each metric's log-mean drawn at 2% noise: 4,032 series of 200
// runs (the 4 arms and 3 ratios of each benchmark and metric).
func largestHistory() ([]history.Record, map[string]vmbenchv1.PlatformType) {
	platforms := map[string]vmbenchv1.PlatformType{"container": vmbenchv1.PlatformContainer, "vm": vmbenchv1.PlatformVM,
		"kata": vmbenchv1.PlatformContainer, "platformname": vmbenchv1.PlatformVM}
	rng := rand.New(rand.NewPCG(1, 2))
	records := make([]history.Record, 200)
	for i := range records {
		at := time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC).Add(time.Duration(i) * 24 * time.Hour)
		rec := history.Record{Suite: fmt.Sprintf("nightly-%d", i), Scheduled: at, Finished: at.Add(time.Hour),
			Phase: vmbenchv1.SuiteComplete, Baseline: "container", ParametersHash: strings.Repeat("p", 16)}
		for b := range 12 {
			for _, p := range []string{"container", "vm", "kata", "platformname"} {
				for m := range 48 {
					mean := math.Log(1000+float64(m)) + 0.02/math.Sqrt(30)*rng.NormFloat64()
					v := 0.02 * 0.02 * (0.5 + rng.Float64())
					rec.Metrics = append(rec.Metrics, history.MetricRecord{Benchmark: fmt.Sprintf("bench%02d", b), Platform: p,
						Metric: fmt.Sprintf("metric%02d", m), Direction: vmbenchv1.HigherIsBetter, N: 30, Samples: 30, MeanLog: &mean, VarLog: &v})
				}
			}
		}
		records[i] = rec
	}
	return records, platforms
}

// BenchmarkAnalyzeLargestHistory is what the schedule controller spends after a record on the
// largest history once it is read: every series built and analysed once, findings and
// sensitivities from that pass (docs/performance.md).
//
//	go test ./controllers -run '^$' -bench AnalyzeLargestHistory -benchtime 3x
func BenchmarkAnalyzeLargestHistory(b *testing.B) {
	records, platforms := largestHistory()
	b.ResetTimer()
	// The CPU time, beside the wall time that waits for a core on a loaded machine.
	var ru syscall.Rusage
	cpu := func() time.Duration {
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	defer func() { b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e9, "cpu-s/op") }()
	for range b.N {
		_, all, err := analyzeHistory(records, platforms)
		if err != nil {
			b.Fatal(err)
		}
		if len(all) != 4032 || len(sensitivities(all)) != 4032 {
			b.Fatalf("%d series analysed, %d sensitivities, want 4032", len(all), len(sensitivities(all)))
		}
	}
}
