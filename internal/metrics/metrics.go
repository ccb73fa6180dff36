// Package metrics holds every Prometheus collector of vmbench. Register adds them to
// controller-runtime's registry once; the suite controller records a suite's results after each
// status write and forgets them when the suite is deleted.
package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

var suiteLabels = []string{"namespace", "suite"}

var (
	resultValue = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_result_value",
		Help: "Mean of a parsed benchmark metric, per suite, benchmark and platform. " +
			"Labels: namespace, suite, benchmark, platform, metric, unit, direction (HigherIsBetter|LowerIsBetter), emulated (true|false).",
	}, append(suiteLabels, "benchmark", "platform", "metric", "unit", "direction", "emulated"))

	resultStdDev = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_result_stddev",
		Help: "Sample standard deviation of a parsed benchmark metric. Labels as vmbench_result_value.",
	}, append(suiteLabels, "benchmark", "platform", "metric", "unit", "direction", "emulated"))

	resultSamples = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_result_samples",
		Help: "Number of samples behind vmbench_result_value. Labels as vmbench_result_value.",
	}, append(suiteLabels, "benchmark", "platform", "metric", "unit", "direction", "emulated"))

	resultRatio = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_result_ratio",
		Help: "A platform's mean divided by the baseline platform's mean. " +
			"Labels: namespace, suite, benchmark, metric, platform, baseline, emulated (true|false).",
	}, append(suiteLabels, "benchmark", "metric", "platform", "baseline", "emulated"))

	resultOverhead = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_result_overhead_percent",
		Help: "How much worse a platform is than the baseline, in percent, whichever way the metric improves (negative: better). " +
			"Labels as vmbench_result_ratio.",
	}, append(suiteLabels, "benchmark", "metric", "platform", "baseline", "emulated"))

	suitePhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_suite_phase",
		Help: "1 for the suite's current phase, 0 for the others. Labels: namespace, suite, phase (Pending|Running|Complete|Failed).",
	}, append(suiteLabels, "phase"))

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

	launcherOverheadCPU = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_vm_launcher_overhead_cpu_cores",
		Help: "CPU that Kubernetes reserved for one VM beyond its guest (virt-launcher pod's requests minus the guest's), " +
			"the largest over the platform's runs. Labels: namespace, suite, platform.",
	}, append(suiteLabels, "platform"))

	launcherOverheadMemory = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "vmbench_vm_launcher_overhead_memory_bytes",
		Help: "Memory that Kubernetes reserved for one VM beyond its guest, as vmbench_vm_launcher_overhead_cpu_cores. Labels as it.",
	}, append(suiteLabels, "platform"))

	perSuite = []*prometheus.GaugeVec{resultValue, resultStdDev, resultSamples, resultRatio, resultOverhead, suitePhase,
		launcherOverheadCPU, launcherOverheadMemory}
)

// Registerer is the registry the collectors go to: controller-runtime's metrics.Registry in the
// manager, a fresh registry in tests.
type Registerer interface {
	MustRegister(...prometheus.Collector)
}

// Register adds every collector to reg. Call it once per process.
func Register(reg Registerer) {
	reg.MustRegister(resultValue, resultStdDev, resultSamples, resultRatio, resultOverhead, suitePhase,
		runsFinished, benchmarkFailures, bootSeconds, startupSeconds, launcherOverheadCPU, launcherOverheadMemory)
}

// RecordSuite replaces a suite's gauges with what its status holds now.
func RecordSuite(s *vmbenchv1.BenchmarkSuite) {
	ForgetSuite(s.Namespace, s.Name)
	for _, r := range s.Status.Results {
		for _, m := range r.Metrics {
			l := prometheus.Labels{
				"namespace": s.Namespace, "suite": s.Name, "benchmark": r.Benchmark, "platform": r.Platform,
				"metric": m.Name, "unit": m.Unit, "direction": string(m.Direction), "emulated": strconv.FormatBool(r.Emulated),
			}
			resultValue.With(l).Set(m.Mean)
			resultStdDev.With(l).Set(m.StdDev)
			resultSamples.With(l).Set(float64(m.N))
		}
	}
	for _, pr := range s.Status.Ratios {
		for _, r := range pr.Metrics {
			l := prometheus.Labels{
				"namespace": s.Namespace, "suite": s.Name, "benchmark": pr.Benchmark, "metric": r.Metric,
				"platform": pr.Platform, "baseline": s.Spec.Baseline, "emulated": strconv.FormatBool(pr.Emulated),
			}
			resultRatio.With(l).Set(r.Ratio)
			resultOverhead.With(l).Set(r.OverheadPercent)
		}
	}
	overheads := map[string]vmbenchv1.ResourceOverhead{}
	for _, run := range s.Status.Runs {
		if o := run.LauncherOverhead; o != nil {
			had, ok := overheads[run.Platform]
			if !ok || o.CPU.Cmp(had.CPU) > 0 {
				had.CPU = o.CPU
			}
			if !ok || o.Memory.Cmp(had.Memory) > 0 {
				had.Memory = o.Memory
			}
			overheads[run.Platform] = had
		}
	}
	for platform, o := range overheads {
		launcherOverheadCPU.WithLabelValues(s.Namespace, s.Name, platform).Set(o.CPU.AsApproximateFloat64())
		launcherOverheadMemory.WithLabelValues(s.Namespace, s.Name, platform).Set(o.Memory.AsApproximateFloat64())
	}
	for _, phase := range []vmbenchv1.SuitePhase{vmbenchv1.SuitePending, vmbenchv1.SuiteRunning, vmbenchv1.SuiteComplete, vmbenchv1.SuiteFailed} {
		v := 0.0
		if s.Status.Phase == phase {
			v = 1
		}
		suitePhase.WithLabelValues(s.Namespace, s.Name, string(phase)).Set(v)
	}
}

// ForgetSuite deletes every series of a suite.
func ForgetSuite(namespace, name string) {
	for _, g := range perSuite {
		g.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "suite": name})
	}
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
