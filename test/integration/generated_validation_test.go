package integration

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// A variant changes one position of a valid suite.
type variant struct {
	label string
	apply func(s *vmbenchv1.BenchmarkSuite)
	// serverOnly marks a value that only the CRD refuses: a duration longer than the CRD's 16
	// characters that Go still parses, which the controller can use.
	serverOnly bool
}

// A position is one field of a suite, the bad values it must refuse and good values it must take.
// Every bad value is paired with a good value at the same position, its valid twin, so that the
// generated cases fail when a rule is missing and when one is too strict.
type position struct {
	path string // the field path the API server's message must name
	bad  []variant
	good []variant
}

type generatedCase struct {
	name      string
	path      string
	bad, good *vmbenchv1.BenchmarkSuite
	goChecks  bool
}

// benchmarkSlots is how many benchmarks a generated suite has; the one under test takes each slot
// in turn, the others are fillers.
const benchmarkSlots = 3

// generatedBase is a valid suite whose benchmarks are fillers of types that have no parameter
// under test.
func generatedBase(ns string) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	s.Name, s.Namespace = "generated", ns
	s.Spec.Repetitions = 1
	for i := range benchmarkSlots {
		s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: fmt.Sprintf("filler%d", i), Type: vmbenchv1.BenchmarkPing})
	}
	return s
}

// fullBenchmark is a benchmark of type t with every parameter block field the rules look at set
// to a good value, and a timeout of 2h, above every good tool duration.
func fullBenchmark(t vmbenchv1.BenchmarkType) vmbenchv1.Benchmark {
	b := vmbenchv1.Benchmark{Name: "target", Type: t, Timeout: ptr.To[vmbenchv1.Duration]("2h")}
	switch t {
	case vmbenchv1.BenchmarkHPCC:
		b.HPCC = &vmbenchv1.HPCCParams{}
	case vmbenchv1.BenchmarkSysbenchCPU:
		b.SysbenchCPU = &vmbenchv1.SysbenchCPUParams{Duration: ptr.To[vmbenchv1.Duration]("10s")}
	case vmbenchv1.BenchmarkSysbenchMemory:
		b.SysbenchMemory = &vmbenchv1.SysbenchMemoryParams{TotalSize: "10G"}
	case vmbenchv1.BenchmarkStressNGCPU:
		b.StressNGCPU = &vmbenchv1.StressNGCPUParams{Duration: ptr.To[vmbenchv1.Duration]("10s")}
	case vmbenchv1.BenchmarkStressNGVM:
		b.StressNGVM = &vmbenchv1.StressNGVMParams{Bytes: "512M", Duration: ptr.To[vmbenchv1.Duration]("10s")}
	case vmbenchv1.BenchmarkIozone:
		b.Iozone = &vmbenchv1.IozoneParams{FileSize: "512M", RecordSize: "64k"}
	case vmbenchv1.BenchmarkIperf3:
		b.Iperf3 = &vmbenchv1.Iperf3Params{Duration: ptr.To[vmbenchv1.Duration]("10s")}
	case vmbenchv1.BenchmarkPing:
		b.Ping = &vmbenchv1.PingParams{}
	case vmbenchv1.BenchmarkFio:
		b.Fio = &vmbenchv1.FioParams{Size: "256m", BlockSize: "4k", Runtime: ptr.To[vmbenchv1.Duration]("10s")}
	case vmbenchv1.BenchmarkNetperf:
		b.Netperf = &vmbenchv1.NetperfParams{Duration: ptr.To[vmbenchv1.Duration]("10s")}
	case vmbenchv1.BenchmarkNetcat:
		b.Netcat = &vmbenchv1.NetcatParams{Size: "1Gi"}
	}
	return b
}

var allBenchmarkTypes = []vmbenchv1.BenchmarkType{
	vmbenchv1.BenchmarkHPCC, vmbenchv1.BenchmarkSysbenchCPU, vmbenchv1.BenchmarkSysbenchMemory,
	vmbenchv1.BenchmarkStressNGCPU, vmbenchv1.BenchmarkStressNGVM, vmbenchv1.BenchmarkIozone,
	vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkPing, vmbenchv1.BenchmarkFio,
	vmbenchv1.BenchmarkNetperf, vmbenchv1.BenchmarkNetcat,
}

// Values that are no duration the CRD accepts, whatever the field's bounds.
var badDurationSyntax = []string{"1d", "2d", "soon", "-1h", "+5m", "1.5.h", "", "10", "1 h", " 10s", "10s ",
	"h", "1e3s", "10S", "1H", "0x10s", "1,5h", "1µs", "1m1", "ten", "1h-30m", "--1s", "1w", ".5h"}

// durationVariants builds the variants of a duration field, set by set: its syntax errors, the
// given out-of-range values, and the good values.
func durationVariants(set func(*vmbenchv1.BenchmarkSuite, *vmbenchv1.Duration), outOfRange, good []string) (bad, ok []variant) {
	mk := func(v string) variant {
		return variant{label: fmt.Sprintf("%q", v), apply: func(s *vmbenchv1.BenchmarkSuite) { set(s, ptr.To(vmbenchv1.Duration(v))) }}
	}
	for _, v := range badDurationSyntax {
		bad = append(bad, mk(v))
	}
	for _, v := range outOfRange {
		bad = append(bad, mk(v))
	}
	long := mk("1h1m1s1ms1us1ns1h") // 17 characters
	long.serverOnly = true
	bad = append(bad, long)
	for _, v := range good {
		ok = append(ok, mk(v))
	}
	return bad, ok
}

// toolDuration returns the duration field of the parameter block of b, if its type has one.
func toolDuration(b *vmbenchv1.Benchmark) (field string, d **vmbenchv1.Duration) {
	switch {
	case b.SysbenchCPU != nil:
		return "sysbenchCPU.duration", &b.SysbenchCPU.Duration
	case b.StressNGCPU != nil:
		return "stressNGCPU.duration", &b.StressNGCPU.Duration
	case b.StressNGVM != nil:
		return "stressNGVM.duration", &b.StressNGVM.Duration
	case b.Iperf3 != nil:
		return "iperf3.duration", &b.Iperf3.Duration
	case b.Fio != nil:
		return "fio.runtime", &b.Fio.Runtime
	case b.Netperf != nil:
		return "netperf.duration", &b.Netperf.Duration
	}
	return "", nil
}

func stringVariants(set func(*vmbenchv1.BenchmarkSuite, string), values ...string) []variant {
	var out []variant
	for _, v := range values {
		out = append(out, variant{label: fmt.Sprintf("%q", v), apply: func(s *vmbenchv1.BenchmarkSuite) { set(s, v) }})
	}
	return out
}

func quantityVariants(set func(*vmbenchv1.BenchmarkSuite, *resource.Quantity), values ...string) []variant {
	return stringVariants(func(s *vmbenchv1.BenchmarkSuite, v string) { set(s, ptr.To(resource.MustParse(v))) }, values...)
}

// generatedPositions lists every position a rule guards, with bad and good values.
func generatedPositions() []position {
	var ps []position

	// Durations: the suite's timeout, every benchmark type's timeout and tool duration, in every slot.
	bad, good := durationVariants(func(s *vmbenchv1.BenchmarkSuite, d *vmbenchv1.Duration) { s.Spec.Timeout = d },
		[]string{"0s", "59s", "59.9s", "721h", "1000h", "999999h"}, []string{"1m", "720h", "6h", "1h30m", "2.5h", "90s"})
	ps = append(ps, position{path: "spec.timeout", bad: bad, good: good})
	for _, t := range allBenchmarkTypes {
		for slot := range benchmarkSlots {
			at := func(s *vmbenchv1.BenchmarkSuite) *vmbenchv1.Benchmark {
				s.Spec.Benchmarks[slot] = fullBenchmark(t)
				return &s.Spec.Benchmarks[slot]
			}
			path := fmt.Sprintf("spec.benchmarks[%d]", slot)
			bad, good := durationVariants(func(s *vmbenchv1.BenchmarkSuite, d *vmbenchv1.Duration) {
				b := at(s)
				b.Timeout = d
				if _, tool := toolDuration(b); tool != nil {
					*tool = ptr.To[vmbenchv1.Duration]("1s") // below every good timeout
				}
			}, []string{"0s", "9s", "9.999s", "24h1s", "25h", "999999h"}, []string{"10s", "24h", "45m", "1h0m0s", "30m"})
			ps = append(ps, position{path: path + ".timeout", bad: bad, good: good})

			field, _ := toolDuration(ptr.To(fullBenchmark(t)))
			if field == "" {
				continue
			}
			setTool := func(s *vmbenchv1.BenchmarkSuite, d *vmbenchv1.Duration) {
				_, tool := toolDuration(at(s))
				*tool = d
			}
			bad, good = durationVariants(setTool, []string{"0s", "999ms", "500ms", "1h1s", "61m", "2h", "999999h"},
				[]string{"1s", "1h", "5s", "1m30s", "59m59s"})
			ps = append(ps, position{path: path + "." + field, bad: bad, good: good})

			// The tool's duration must be below the benchmark's timeout of 30s.
			cross := func(v string) variant {
				return variant{label: fmt.Sprintf("%q under a timeout of 30s", v), apply: func(s *vmbenchv1.BenchmarkSuite) {
					b := at(s)
					b.Timeout = ptr.To[vmbenchv1.Duration]("30s")
					_, tool := toolDuration(b)
					*tool = ptr.To(vmbenchv1.Duration(v))
				}}
			}
			ps = append(ps, position{path: path + "." + field,
				bad:  []variant{cross("30s"), cross("31s"), cross("45s"), cross("1m"), cross("1h")},
				good: []variant{cross("29s"), cross("29.999s"), cross("1s"), cross("15s")}})
		}
	}

	// Sizes, in every slot.
	sizes := []struct {
		typ       vmbenchv1.BenchmarkType
		field     string
		set       func(b *vmbenchv1.Benchmark, v string)
		bad, good []string
	}{
		{vmbenchv1.BenchmarkIozone, "iozone.fileSize", func(b *vmbenchv1.Benchmark, v string) { b.Iozone.FileSize = v },
			[]string{"17G", "32g", "16385M", "9999999g", "16385m"}, []string{"16G", "16384M", "9999999", "1g", "512M"}},
		{vmbenchv1.BenchmarkIozone, "iozone.recordSize", func(b *vmbenchv1.Benchmark, v string) { b.Iozone.RecordSize = v },
			[]string{"1G", "1g", "17M", "16385k", "16385", "9999999"}, []string{"16M", "16384k", "16384", "64k", "1m", "4"}},
		{vmbenchv1.BenchmarkFio, "fio.size", func(b *vmbenchv1.Benchmark, v string) { b.Fio.Size = v },
			[]string{"17g", "16385m", "100G", "9999999M"}, []string{"16g", "16384m", "9999999", "1G"}},
		{vmbenchv1.BenchmarkFio, "fio.blockSize", func(b *vmbenchv1.Benchmark, v string) { b.Fio.BlockSize = v },
			[]string{"1g", "17m", "16385k", "32M"}, []string{"16m", "16384k", "9999999", "4k"}},
		{vmbenchv1.BenchmarkStressNGVM, "stressNGVM.bytes", func(b *vmbenchv1.Benchmark, v string) { b.StressNGVM.Bytes = v },
			[]string{"65G", "65537M", "100G", "9999999G", "100%"}, []string{"64G", "65536M", "9999999K", "50%", "99%"}},
		{vmbenchv1.BenchmarkSysbenchMemory, "sysbenchMemory.totalSize", func(b *vmbenchv1.Benchmark, v string) { b.SysbenchMemory.TotalSize = v },
			[]string{"2T", "1025G", "1048577M", "9999999T"}, []string{"1T", "1024G", "1048576M", "9999999K", "10G"}},
	}
	for _, sz := range sizes {
		for slot := range benchmarkSlots {
			set := func(s *vmbenchv1.BenchmarkSuite, v string) {
				s.Spec.Benchmarks[slot] = fullBenchmark(sz.typ)
				sz.set(&s.Spec.Benchmarks[slot], v)
				if sz.typ == vmbenchv1.BenchmarkStressNGVM {
					// Nodes large enough for the 64G bound: bytes above a node's memory are refused too.
					s.Spec.Cluster.Memory = ptr.To(resource.MustParse("256Gi"))
				}
			}
			ps = append(ps, position{path: fmt.Sprintf("spec.benchmarks[%d].%s", slot, sz.field),
				bad: stringVariants(set, sz.bad...), good: stringVariants(set, sz.good...)})
		}
	}

	// iozone's automatic mode: its range's bounds and order, and which sizes go with which mode, in
	// every slot.
	for slot := range benchmarkSlots {
		path := fmt.Sprintf("spec.benchmarks[%d].iozone", slot)
		iozone := func(label string, p vmbenchv1.IozoneParams) variant {
			return variant{label: label, apply: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Benchmarks[slot] = fullBenchmark(vmbenchv1.BenchmarkIozone)
				s.Spec.Benchmarks[slot].Iozone = &p
			}}
		}
		auto := func(minimum, maximum string) variant {
			return iozone(fmt.Sprintf("auto from %q to %q", minimum, maximum), vmbenchv1.IozoneParams{Auto: true, MinFileSize: minimum, MaxFileSize: maximum})
		}
		ps = append(ps,
			position{path: path + ".maxFileSize",
				bad:  []variant{auto("", "63k"), auto("", "63"), auto("", "17g"), auto("", "16385M"), auto("", "9999999g"), auto("", "1 G"), auto("", "0"), auto("", "64kb")},
				good: []variant{auto("", "64k"), auto("", "64"), auto("", "16g"), auto("", "16384M"), auto("", "1G"), auto("", "9999999"), auto("", "4m")}},
			position{path: path + ".minFileSize",
				bad: []variant{auto("63k", ""), auto("17G", "16G"), auto("1g", ""), auto("513m", ""), auto("2m", "1m"), auto("1025", "1m"), auto("4G", "3g"), auto("1.5m", "")},
				good: []variant{auto("64k", ""), auto("16G", "16G"), auto("512m", ""), auto("524288", ""), auto("1m", "1m"), auto("1024", "1m"),
					auto("3g", "3g"), auto("64", "64k")}},
			position{path: path + ".fileSize",
				bad:  []variant{iozone("auto with fileSize 512M", vmbenchv1.IozoneParams{Auto: true, FileSize: "512M"})},
				good: []variant{iozone("fileSize 512M", vmbenchv1.IozoneParams{FileSize: "512M"})}},
			position{path: path + ".recordSize",
				bad:  []variant{iozone("auto with recordSize 64k", vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "1g", RecordSize: "64k"})},
				good: []variant{iozone("recordSize 64k", vmbenchv1.IozoneParams{RecordSize: "64k"})}},
			position{path: path + ".maxFileSize",
				bad:  []variant{iozone("maxFileSize without auto", vmbenchv1.IozoneParams{MaxFileSize: "1g"})},
				good: []variant{iozone("maxFileSize with auto", vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "1g"})}},
			position{path: path + ".minFileSize",
				bad:  []variant{iozone("minFileSize with auto false", vmbenchv1.IozoneParams{MinFileSize: "1m", FileSize: "1g"})},
				good: []variant{iozone("minFileSize with auto", vmbenchv1.IozoneParams{Auto: true, MinFileSize: "1m"})}},
		)
	}

	// netcat's size and netperf's confidence iterations, in every slot.
	for slot := range benchmarkSlots {
		path := fmt.Sprintf("spec.benchmarks[%d]", slot)
		setSize := func(s *vmbenchv1.BenchmarkSuite, v string) {
			s.Spec.Benchmarks[slot] = fullBenchmark(vmbenchv1.BenchmarkNetcat)
			s.Spec.Benchmarks[slot].Netcat.Size = v
		}
		ps = append(ps, position{path: path + ".netcat.size",
			bad:  stringVariants(setSize, "0", "1", "1023Ki", "1M", "17Gi", "16385Mi", "1Ti", "-1Gi", "1 Gi", "1GiB", "1e9", "0x10", "00000000000000001Gi"),
			good: stringVariants(setSize, "1Mi", "16Gi", "1Gi", "1G", "100Mi", "17G", "1048576", "1.5Gi", "2000000k")})
		iterations := func(minimum, maximum int32) variant {
			return variant{label: fmt.Sprintf("minIterations %d, maxIterations %d", minimum, maximum), apply: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Benchmarks[slot] = fullBenchmark(vmbenchv1.BenchmarkNetperf)
				s.Spec.Benchmarks[slot].Netperf.Confidence = &vmbenchv1.NetperfConfidence{MinIterations: minimum, MaxIterations: maximum}
			}}
		}
		ps = append(ps, position{path: path + ".netperf.confidence",
			// 0 is left out: the default maxIterations is 10 and the default minIterations 3.
			bad:  []variant{iterations(5, 4), iterations(30, 3), iterations(11, 0), iterations(4, 3)},
			good: []variant{iterations(3, 3), iterations(30, 30), iterations(10, 0), iterations(0, 3), iterations(5, 20)}})
	}

	// Concurrency AllNodes only for the tools that run on each node by itself, in every slot.
	for slot := range benchmarkSlots {
		concurrency := func(t vmbenchv1.BenchmarkType, c vmbenchv1.Concurrency) variant {
			return variant{label: fmt.Sprintf("%s on %s", c, t), apply: func(s *vmbenchv1.BenchmarkSuite) {
				s.Spec.Benchmarks[slot] = fullBenchmark(t)
				s.Spec.Benchmarks[slot].Concurrency = c
			}}
		}
		var bad, good []variant
		for _, t := range allBenchmarkTypes {
			if t.RunsPerNode() {
				good = append(good, concurrency(t, vmbenchv1.ConcurrencyAllNodes))
			} else {
				bad = append(bad, concurrency(t, vmbenchv1.ConcurrencyAllNodes))
				good = append(good, concurrency(t, vmbenchv1.ConcurrencyOneNodeAtATime))
			}
		}
		ps = append(ps, position{path: fmt.Sprintf("spec.benchmarks[%d].concurrency", slot), bad: bad, good: good})
	}

	// Names.
	ps = append(ps, position{path: "metadata.name",
		bad: stringVariants(func(s *vmbenchv1.BenchmarkSuite, v string) { s.Name = v },
			"1abc", "a.b", "9", "-a", "a-", "ab.cd", "a.b-c", strings.Repeat("a", 31), "x1.y2"),
		good: stringVariants(func(s *vmbenchv1.BenchmarkSuite, v string) { s.Name = v },
			"abc", "a-b", "a", "a1", strings.Repeat("a", 30))})
	for slot := range 2 {
		set := func(s *vmbenchv1.BenchmarkSuite, v string) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}}
			s.Spec.Platforms[slot].Name = v
			s.Spec.Baseline = s.Spec.Platforms[0].Name
		}
		ps = append(ps, position{path: fmt.Sprintf("spec.platforms[%d].name", slot),
			bad:  stringVariants(set, "x-vm", "vm-container", "vm-", "1vm", "9", "kata-v2", "abcdefghijklm"),
			good: stringVariants(set, "xvm", "vmcontainer", "vm2", "v1", "kata", "abcdefghijkl")})
	}
	setClass := func(s *vmbenchv1.BenchmarkSuite, v string) {
		s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer, RuntimeClassName: ptr.To(v)}}
	}
	ps = append(ps, position{path: "spec.platforms[0].runtimeClassName",
		bad:  stringVariants(setClass, "Kata", "kata_v2", "-kata", "kata.", "kata..v2", "kata v2"),
		good: stringVariants(setClass, "kata", "kata-v2", "kata.v2", "gvisor", "runsc", "k8s.io")})
	setStorage := func(s *vmbenchv1.BenchmarkSuite, v string) {
		s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: v}
	}
	ps = append(ps, position{path: "spec.sharedStorage.storageClassName",
		bad:  stringVariants(setStorage, "NFS", "nfs_client", "-nfs", "nfs.", "nfs..client", "nfs client"),
		good: stringVariants(setStorage, "nfs", "nfs-client", "nfs.csi.k8s.io", "standard", "rwx", "a")})

	// Quantities.
	ps = append(ps,
		position{path: "spec.cluster.memory",
			bad:  quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) { s.Spec.Cluster.Memory = q }, "0", "-2Gi", "1", "100Mi", "255Mi", "257Gi", "1Ti", "1E"),
			good: quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) { s.Spec.Cluster.Memory = q }, "256Mi", "256Gi", "2Gi", "1G", "512Mi")},
		position{path: "spec.cluster.cpuRequest",
			bad:  quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) { s.Spec.Cluster.CPURequest = q }, "0", "-1", "-500m", "0m"),
			good: quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) { s.Spec.Cluster.CPURequest = q }, "500m", "1", "1m", "2")},
		position{path: "spec.cluster.memoryRequest",
			bad:  quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) { s.Spec.Cluster.MemoryRequest = q }, "0", "-1Gi", "0Gi", "-1"),
			good: quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) { s.Spec.Cluster.MemoryRequest = q }, "1Gi", "2Gi", "512Mi", "1")},
		position{path: "spec.sharedStorage.size",
			bad: quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) {
				s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: q}
			}, "0", "-1Gi", "2Ti", "1025Gi", "1P"),
			good: quantityVariants(func(s *vmbenchv1.BenchmarkSuite, q *resource.Quantity) {
				s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: q}
			}, "4Gi", "1Ti", "1", "100G", "1024Gi")},
	)

	// Tolerations, each in every slot of three.
	badTolerations := []vmbenchv1.Toleration{
		{Operator: corev1.TolerationOpExists},
		{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Operator: corev1.TolerationOpEqual, Value: "x"},
		{Key: "pool", Operator: "In"},
		{Key: "pool", Operator: "exists"},
		{Key: "pool", Effect: "NoExec"},
		{Key: "pool", Effect: "noschedule"},
		{Key: "pool", Operator: corev1.TolerationOpExists, Value: "bench"},
		{Key: "pool", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](5)},
		{Key: "pool", TolerationSeconds: ptr.To[int64](5)},
		// Keys and values the pod API refuses.
		{Key: "a b", Operator: corev1.TolerationOpExists},
		{Key: "-pool", Operator: corev1.TolerationOpExists},
		{Key: "pool-", Operator: corev1.TolerationOpExists},
		{Key: "Vmbench.io/pool", Operator: corev1.TolerationOpExists},
		{Key: "vmbench.io/a/b", Operator: corev1.TolerationOpExists},
		{Key: "vmbench.io/", Operator: corev1.TolerationOpExists},
		{Key: "vmbench.io/" + strings.Repeat("b", 64), Operator: corev1.TolerationOpExists},
		{Key: strings.Repeat("a", 254) + "/b", Operator: corev1.TolerationOpExists},
		{Key: "pool", Value: "a b"},
		{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "-bench"},
		{Key: "pool", Value: strings.Repeat("v", 64)},
		{Key: "pool", Value: "x/y"},
	}
	goodTolerations := []vmbenchv1.Toleration{
		{Key: "pool", Operator: corev1.TolerationOpExists},
		{Key: "pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "x"},
		{Key: "pool", Operator: corev1.TolerationOpEqual},
		{Key: "vmbench.io/dedicated", Operator: corev1.TolerationOpExists},
		{Key: "pool", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "pool", Effect: corev1.TaintEffectNoSchedule},
		{Key: "pool", Value: "bench"},
		{Key: "pool", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](5)},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
		{Key: "A_b.C-1", Operator: corev1.TolerationOpExists},
		{Key: "vmbench.io/" + strings.Repeat("b", 63), Operator: corev1.TolerationOpExists},
		{Key: strings.Repeat("a", 253) + "/b", Operator: corev1.TolerationOpExists},
		{Key: "pool", Value: "x.Y_z-1"},
		{Key: "pool", Operator: corev1.TolerationOpEqual, Value: strings.Repeat("v", 63)},
		{Key: "pool", Value: "1"},
	}
	for slot := range 3 {
		mk := func(ts []vmbenchv1.Toleration) []variant {
			var out []variant
			for _, t := range ts {
				out = append(out, variant{label: fmt.Sprintf("%+v", t), apply: func(s *vmbenchv1.BenchmarkSuite) {
					s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{
						{Key: "a", Operator: corev1.TolerationOpExists}, {Key: "b", Operator: corev1.TolerationOpExists}, {Key: "c", Operator: corev1.TolerationOpExists}}
					s.Spec.Placement.Tolerations[slot] = t
				}})
			}
			return out
		}
		ps = append(ps, position{path: fmt.Sprintf("spec.placement.tolerations[%d]", slot), bad: mk(badTolerations), good: mk(goodTolerations)})
	}

	// Node selectors: keys, values and the number of entries.
	selector := func(k, v string) func(*vmbenchv1.BenchmarkSuite) {
		return func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"kubernetes.io/os": "linux", k: vmbenchv1.LabelValue(v)}
		}
	}
	var badKeys, goodKeys, badValues, goodValues []variant
	for _, k := range []string{"a b", "-a", "a-", "_a", "a/", "/a", "A.io/b", "a/b/c", "a..b/c", strings.Repeat("a", 64),
		strings.Repeat("a", 254) + "/b", "vmbench.io/" + strings.Repeat("b", 64), "pool!", "ä"} {
		badKeys = append(badKeys, variant{label: fmt.Sprintf("key %q", k), apply: selector(k, "x")})
	}
	for _, k := range []string{"a", "pool", "a_b", "a.b", "A", "vmbench.io/pool", strings.Repeat("a", 63), strings.Repeat("a", 253) + "/b",
		"vmbench.io/" + strings.Repeat("b", 63), "node-role.kubernetes.io/worker"} {
		goodKeys = append(goodKeys, variant{label: fmt.Sprintf("key %q", k), apply: selector(k, "x")})
	}
	for _, v := range []string{"-x", "x-", "_x", "a b", "ä", strings.Repeat("v", 64), "x/y", "x!"} {
		badValues = append(badValues, variant{label: fmt.Sprintf("value %q", v), apply: selector("vmbench.io/pool", v)})
	}
	for _, v := range []string{"", "x", "X", "x.y_z-1", strings.Repeat("v", 63), "1"} {
		goodValues = append(goodValues, variant{label: fmt.Sprintf("value %q", v), apply: selector("vmbench.io/pool", v)})
	}
	entries := func(n int) variant {
		return variant{label: fmt.Sprintf("%d entries", n), apply: func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{}
			for i := range n {
				s.Spec.Placement.NodeSelector[fmt.Sprintf("vmbench.io/l%d", i)] = "x"
			}
		}}
	}
	ps = append(ps,
		position{path: "spec.placement.nodeSelector", bad: badKeys, good: goodKeys},
		position{path: "spec.placement.nodeSelector", bad: badValues, good: goodValues},
		position{path: "spec.placement.nodeSelector", bad: []variant{entries(17), entries(20), entries(64)}, good: []variant{entries(16), entries(1), entries(8)}},
	)
	return append(ps, vmSettingsPositions()...)
}

// generatedCases pairs every bad variant with a good one of the same position.
func generatedCases(ns string) []generatedCase {
	var cases []generatedCase
	for _, p := range generatedPositions() {
		for i, b := range p.bad {
			g := p.good[i%len(p.good)]
			bad, good := generatedBase(ns), generatedBase(ns)
			b.apply(bad)
			g.apply(good)
			cases = append(cases, generatedCase{name: p.path + " = " + b.label, path: p.path, bad: bad, good: good, goChecks: !b.serverOnly})
		}
		// Good values that no bad one was paired with are checked too.
		for i := len(p.bad); i < len(p.good); i++ {
			good := generatedBase(ns)
			p.good[i].apply(good)
			cases = append(cases, generatedCase{name: p.path + " = " + p.good[i].label, path: p.path, good: good})
		}
	}
	return cases
}

// Every generated bad value is refused by the API server with a message that names its field, and
// by the controller's own check (FirstInvalidValue); the valid twin of each, a good value at the
// same position, passes both.
func TestGeneratedInvalidSpecsAreRefused(t *testing.T) {
	h := newHarness(t)
	start := time.Now()
	cases := generatedCases(h.ns)

	distinct := map[string]bool{}
	for _, c := range cases {
		if c.bad == nil {
			continue
		}
		raw, err := json.Marshal(c.bad)
		h.g.Expect(err).NotTo(HaveOccurred())
		distinct[string(raw)] = true
	}
	if len(distinct) < 1000 {
		t.Fatalf("only %d distinct invalid specs", len(distinct))
	}

	type result struct {
		c               generatedCase
		badErr, goodErr error
		goBad, goGood   error
	}
	results := make([]result, len(cases))
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i := range work {
				c := cases[i]
				r := result{c: c}
				if c.bad != nil {
					r.badErr = k8s.Create(h.ctx, c.bad.DeepCopy(), client.DryRunAll)
					r.goBad = vmbenchv1.FirstInvalidValue(c.bad)
				}
				stored := c.good.DeepCopy()
				if r.goodErr = k8s.Create(h.ctx, stored, client.DryRunAll); r.goodErr == nil {
					// The controller sees the suite with the API server's defaults filled in.
					r.goGood = vmbenchv1.FirstInvalidValue(stored)
				}
				results[i] = r
			}
		})
	}
	for i := range cases {
		work <- i
	}
	close(work)
	wg.Wait()

	bad := 0
	for _, r := range results {
		c := r.c
		if r.goodErr != nil {
			t.Errorf("%s: the valid twin was refused: %v", c.name, r.goodErr)
		} else if r.goGood != nil {
			t.Errorf("%s: the valid twin was accepted by the API server but refused by FirstInvalidValue: %v", c.name, r.goGood)
		}
		if c.bad == nil {
			continue
		}
		bad++
		switch {
		case r.badErr == nil:
			t.Errorf("%s: the API server accepted it", c.name)
		case !strings.Contains(r.badErr.Error(), c.path):
			t.Errorf("%s: the API server's message does not name %s: %v", c.name, c.path, r.badErr)
		}
		if c.goChecks && (r.goBad == nil || !strings.Contains(r.goBad.Error(), c.path)) {
			t.Errorf("%s: FirstInvalidValue() = %v, want an error naming %s", c.name, r.goBad, c.path)
		}
	}

	list := &vmbenchv1.BenchmarkSuiteList{}
	h.g.Expect(k8s.List(h.ctx, list, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(list.Items).To(BeEmpty(), "a dry run stores nothing")
	t.Logf("checked %d generated invalid specs (%d distinct) and %d valid twins against the API server and FirstInvalidValue in %s",
		bad, len(distinct), len(cases), time.Since(start).Round(time.Millisecond))
}
