// Package metrics holds every Prometheus collector of vmbench. Register adds them to
// controller-runtime's registry once; the suite controller records a suite's results after each
// status write and forgets them when the suite is deleted. What a suite exports, and for how long,
// is in suite.go.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var (
	runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmbench_runs_total",
		Help: "Runs that ended, by platform type and outcome. Labels: platform_type (Container|VM|Host), outcome (Succeeded|Failed).",
	}, []string{"platform_type", "outcome"})

	benchmarkFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmbench_benchmark_failures_total",
		Help: "Benchmark executions that failed, by benchmark type and platform type. " +
			"Labels: benchmark_type (hpcc|sysbench-cpu|...), platform_type (Container|VM|Host).",
	}, []string{"benchmark_type", "platform_type"})

	bootSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "vmbench_node_ready_seconds",
		Help:    "Time from a node's pod or VMI creation until the runner reached it. Labels: platform_type (Container|VM|Host).",
		Buckets: []float64{5, 10, 20, 40, 60, 90, 120, 180, 300, 600, 1200},
	}, []string{"platform_type"})

	startupSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "vmbench_run_startup_seconds",
		Help: "Time to workload: from a run's children being created until the last of its members reached a phase of its start. " +
			"Labels: platform_type (Container|VM|Host), phase (podsScheduled|sandboxesReady|containersStarted|vmiScheduled|vmiRunning|runnerReady).",
		Buckets: []float64{1, 2, 5, 10, 20, 40, 60, 90, 120, 180, 300, 600, 1200},
	}, []string{"platform_type", "phase"})
)

// Registerer is the registry the collectors go to: controller-runtime's metrics.Registry in the
// manager, a fresh registry in tests.
type Registerer interface {
	MustRegister(...prometheus.Collector)
}

// Register adds every collector to reg. Call it once per process.
func Register(reg Registerer) {
	reg.MustRegister(suites, seriesDropped, schedules, scheduleSeriesDropped, runsFinished, benchmarkFailures, bootSeconds, startupSeconds,
		scheduleAwaitingArchive)
}

// RecordSuite replaces a suite's series with what its status holds now, within the options of
// Configure.
func RecordSuite(s *vmbenchv1.BenchmarkSuite) {
	suites.record(s)
}

// ForgetSuite deletes every series of a suite.
func ForgetSuite(namespace, name string) {
	suites.forget(namespace, name)
}

// RunFinished counts a run that ended, with its failed benchmark executions and node readiness times.
func RunFinished(platformType vmbenchv1.PlatformType, run vmbenchv1.RunStatus, failedBenchmarkTypes []vmbenchv1.BenchmarkType) {
	runsFinished.WithLabelValues(string(platformType), string(run.Phase)).Inc()
	for _, t := range failedBenchmarkTypes {
		benchmarkFailures.WithLabelValues(string(t), string(platformType)).Inc()
	}
	for _, b := range run.BootSeconds {
		bootSeconds.WithLabelValues(string(platformType)).Observe(b.Seconds)
	}
	for _, p := range run.StartupSeconds.Phases() {
		startupSeconds.WithLabelValues(string(platformType), p.Name).Observe(p.Seconds)
	}
}
