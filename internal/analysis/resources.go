package analysis

import (
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The resources a summary is made for.
const (
	Compute = "compute"
	Memory  = "memory"
	Storage = "storage"
	Network = "network"
)

// Resources lists the resources in the order of every summary.
var Resources = []string{Compute, Memory, Storage, Network}

// benchmarkResources maps each benchmark type to the resource it measures. HPCC is the one benchmark
// that measures several: hpccResource splits it by metric.
var benchmarkResources = map[vmbenchv1.BenchmarkType]string{
	vmbenchv1.BenchmarkHPCC:           Compute,
	vmbenchv1.BenchmarkSysbenchCPU:    Compute,
	vmbenchv1.BenchmarkStressNGCPU:    Compute,
	vmbenchv1.BenchmarkSysbenchMemory: Memory,
	vmbenchv1.BenchmarkStressNGVM:     Memory,
	vmbenchv1.BenchmarkIozone:         Storage,
	vmbenchv1.BenchmarkFio:            Storage,
	vmbenchv1.BenchmarkIperf3:         Network,
	vmbenchv1.BenchmarkPing:           Network,
	vmbenchv1.BenchmarkNetperf:        Network,
	vmbenchv1.BenchmarkNetcat:         Network,
}

// hpccResource is the resource of one HPCC metric: STREAM and RandomAccess measure memory, the
// PingPong and Ring tests measure MPI's interconnect, the rest (HPL, DGEMM, FFT, PTRANS) compute.
func hpccResource(metric string) string {
	switch {
	case strings.Contains(metric, "STREAM"), strings.Contains(metric, "RandomAccess"):
		return Memory
	case strings.Contains(metric, "PingPong"), strings.Contains(metric, "Ring"):
		return Network
	}
	return Compute
}

// ResourceOf is the resource that metric of a benchmark of type typ measures; empty for an unknown type.
func ResourceOf(typ vmbenchv1.BenchmarkType, metric string) string {
	if typ == vmbenchv1.BenchmarkHPCC {
		return hpccResource(metric)
	}
	return benchmarkResources[typ]
}

// usageMetrics say what the benchmark tool consumed, not how fast it ran: they keep their verdicts
// but stay out of the geometric means, where an emulated VM's idle CPU would count as a gain.
var usageMetrics = map[string]bool{
	"cpu_usage_percent":  true,
	"max_rss_kb":         true,
	"cpu_host_percent":   true,
	"cpu_remote_percent": true,
}

// benchmarkType is the type of the suite's benchmark called name; a benchmark that only status knows
// is taken to be named after its type.
func benchmarkType(suite *vmbenchv1.BenchmarkSuite, name string) vmbenchv1.BenchmarkType {
	for _, b := range suite.Spec.Benchmarks {
		if b.Name == name {
			return b.Type
		}
	}
	return vmbenchv1.BenchmarkType(name)
}
