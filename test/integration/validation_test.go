package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The API server itself refuses bad suites, through the CRD's enums, patterns and CEL rules, and says
// what to change.
func TestInvalidSuitesAreRejectedWithAReadableMessage(t *testing.T) {
	h := newHarness(t)
	cpu := func() vmbenchv1.Benchmark { return bench("cpu", vmbenchv1.BenchmarkSysbenchCPU) }
	cases := []struct {
		name   string
		mutate func(s *vmbenchv1.BenchmarkSuite)
		want   string
	}{
		{"unknown benchmark type", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Type = "linpack" },
			`Unsupported value: "linpack": supported values: "hpcc", "sysbench-cpu"`},
		{"parameters of another type", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].HPCC = &vmbenchv1.HPCCParams{} },
			"hpcc parameters need type: hpcc"},
		{"all nodes at once for hpcc", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks[0] = bench("hpl", vmbenchv1.BenchmarkHPCC)
			s.Spec.Benchmarks[0].Concurrency = vmbenchv1.ConcurrencyAllNodes
		}, "spec.benchmarks[0].concurrency: Invalid value: concurrency AllNodes needs a tool that runs on each node by itself (sysbench-cpu, sysbench-memory, stress-ng-cpu, stress-ng-vm, iozone, fio): hpcc already spans all nodes and iperf3, ping, netperf and netcat measure pairs of nodes"},
		{"unknown concurrency", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Concurrency = "Parallel" },
			`Unsupported value: "Parallel": supported values: "OneNodeAtATime", "AllNodes"`},
		{"no benchmarks", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks = nil },
			"spec.benchmarks: Required value"},
		{"duplicate benchmark names", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks = append(s.Spec.Benchmarks, cpu()) },
			`spec.benchmarks[1]: Duplicate value: {"name":"cpu"}`},
		{"benchmark name not a DNS label", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Name = "CPU_test" },
			"spec.benchmarks[0].name: Invalid value: \"CPU_test\": spec.benchmarks[0].name in body should match"},
		{"suite name too long", func(s *vmbenchv1.BenchmarkSuite) { s.Name = "a-suite-name-that-is-much-too-long-for-children" },
			"metadata.name must be at most 30 characters"},
		{"unknown platform type", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: "Docker"}}
		}, `Unsupported value: "Docker": supported values: "Container", "VM", "Host"`},
		{"runtimeClassName on a VM", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM, RuntimeClassName: ptr.To("kata")}}
		}, "runtimeClassName is only allowed on platforms of type Container"},
		{"baseline that is no platform", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Baseline = "bare" },
			"spec.baseline must name one of spec.platforms"},
		{"too many repetitions", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Repetitions = 31 },
			"spec.repetitions: Invalid value: 31: spec.repetitions in body should be less than or equal to 30"},
		{"network benchmark on one node", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 1
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, bench("net", vmbenchv1.BenchmarkIperf3))
		}, "iperf3, ping, netperf and netcat measure between nodes: set spec.cluster.nodes to 2 or more"},
		{"netcat on one node", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 1
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, bench("nc", vmbenchv1.BenchmarkNetcat))
		}, "iperf3, ping, netperf and netcat measure between nodes: set spec.cluster.nodes to 2 or more"},
		{"netperf parameters on another type", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Netperf = &vmbenchv1.NetperfParams{} },
			"netperf parameters need type: netperf"},
		{"netcat parameters on another type", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Netcat = &vmbenchv1.NetcatParams{} },
			"netcat parameters need type: netcat"},
		{"netperf node-node pair with one worker", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 2
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf, Netperf: &vmbenchv1.NetperfParams{}})
		}, "the node-node pair needs two workers: set spec.cluster.nodes to 3 or more"},
		{"netcat node-node pair with one worker", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 2
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "nc", Type: vmbenchv1.BenchmarkNetcat,
				Netcat: &vmbenchv1.NetcatParams{Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToNode}}})
		}, "the node-node pair needs two workers: set spec.cluster.nodes to 3 or more"},
		{"netperf test that is none", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf,
				Netperf: &vmbenchv1.NetperfParams{Tests: []vmbenchv1.NetperfTest{"UDP_RR"}}})
		}, `spec.benchmarks[1].netperf.tests[0]: Unsupported value: "UDP_RR": supported values: "TCP_RR", "TCP_STREAM"`},
		{"netperf confidence level of 90", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf,
				Netperf: &vmbenchv1.NetperfParams{Confidence: &vmbenchv1.NetperfConfidence{Level: 90}}})
		}, `spec.benchmarks[1].netperf.confidence.level: Unsupported value: 90: supported values: "95", "99"`},
		{"netperf confidence wider than 50%", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf,
				Netperf: &vmbenchv1.NetperfParams{Confidence: &vmbenchv1.NetperfConfidence{WidthPercent: 60}}})
		}, "spec.benchmarks[1].netperf.confidence.widthPercent in body should be less than or equal to 50"},
		{"netperf beyond 30 iterations", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf,
				Netperf: &vmbenchv1.NetperfParams{Confidence: &vmbenchv1.NetperfConfidence{MaxIterations: 31}}})
		}, "spec.benchmarks[1].netperf.confidence.maxIterations in body should be less than or equal to 30"},
		{"netperf with more minimum than maximum iterations", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf,
				Netperf: &vmbenchv1.NetperfParams{Confidence: &vmbenchv1.NetperfConfidence{MinIterations: 20}}})
		}, "spec.benchmarks[1].netperf.confidence: Invalid value: set confidence.minIterations at most confidence.maxIterations"},
		{"netcat transfer above 16Gi", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "nc", Type: vmbenchv1.BenchmarkNetcat,
				Netcat: &vmbenchv1.NetcatParams{Size: "32Gi"}})
		}, "spec.benchmarks[1].netcat.size: Invalid value: \"32Gi\": set netcat.size between 1Mi and 16Gi"},
		{"shared storage target without shared storage", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone,
				Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageShared}}})
		}, "a benchmark uses the Shared storage target, which pods of Container and Host platforms mount as a ReadWriteMany volume: " +
			"set spec.sharedStorage.storageClassName to a ReadWriteMany storage class, or use the Local or RootFS target " +
			"(VM platforms need no storage class: their master VM exports its disk over NFS)"},
		{"shared storage target of a Host platform beside VMs, without shared storage", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}, {Name: "host", Type: vmbenchv1.PlatformHost}}
			s.Spec.Baseline = "vm"
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio,
				Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}})
		}, "a benchmark uses the Shared storage target, which pods of Container and Host platforms mount"},
		{"unknown storage target", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio,
				Fio: &vmbenchv1.FioParams{Target: "Overlay"}})
		}, `spec.benchmarks[1].fio.target: Unsupported value: "Overlay": supported values: "Local", "Shared", "RootFS"`},
		{"four iozone targets", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone,
				Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "RootFS", "Shared", "Local"}}})
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "vmbench-shared"}
		}, "spec.benchmarks[1].iozone.targets: Too many: 4: must have at most 3 items"},
		{"HPL grid that does not match the ranks", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC,
				HPCC: &vmbenchv1.HPCCParams{P: ptr.To[int32](2), Q: ptr.To[int32](2)}})
		}, "hpcc p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes"},
		{"HPL grid with only p", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC,
				HPCC: &vmbenchv1.HPCCParams{P: ptr.To[int32](3)}})
		}, "set both hpcc.p and hpcc.q, or neither"},
		{"negative thread count", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks[0].SysbenchCPU = &vmbenchv1.SysbenchCPUParams{Threads: -1}
		}, "spec.benchmarks[0].sysbenchCPU.threads in body should be greater than or equal to 0"},
		{"fio block size that is no size", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio,
				Fio: &vmbenchv1.FioParams{BlockSize: "4 KiB"}})
		}, "spec.benchmarks[1].fio.blockSize in body should match"},
		{"iperf3 on a privileged port", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3,
				Iperf3: &vmbenchv1.Iperf3Params{ServerPort: 80}})
		}, "spec.benchmarks[1].iperf3.serverPort in body should be greater than or equal to 1024"},
		{"node-node pair with one worker", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes = 2
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{}})
		}, "the node-node pair needs two workers: set spec.cluster.nodes to 3 or more"},
		{"VM with more than 64 CPUs", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.CPU = 65 },
			"spec.cluster.cpu in body should be less than or equal to 64"},
		{"suite timeout in days", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Timeout = ptr.To[vmbenchv1.Duration]("1d") },
			"spec.timeout: Invalid value: \"1d\": must be a duration such as 90s, 45m or 1h30m: a number and a unit h, m or s, without a sign (write a day as 24h)"},
		{"negative benchmark timeout", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Timeout = ptr.To[vmbenchv1.Duration]("-1h") },
			"spec.benchmarks[0].timeout: Invalid value: \"-1h\": must be a duration such as 90s"},
		{"duration longer than 16 characters", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Timeout = ptr.To[vmbenchv1.Duration]("1h1m1s1ms1us1ns1h") },
			"spec.timeout: Too long: may not be more than 16 bytes"},
		{"suite timeout above 720h", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Timeout = ptr.To[vmbenchv1.Duration]("721h") },
			"spec.timeout: Invalid value: \"721h\": set spec.timeout between 1m and 720h (30 days)"},
		{"benchmark timeout below 10s", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0].Timeout = ptr.To[vmbenchv1.Duration]("5s") },
			"spec.benchmarks[0].timeout: Invalid value: \"5s\": set timeout between 10s and 24h, the longest one execution of this benchmark may take"},
		{"tool duration above 1h", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks[0].SysbenchCPU = &vmbenchv1.SysbenchCPUParams{Duration: ptr.To[vmbenchv1.Duration]("2h")}
		}, "spec.benchmarks[0].sysbenchCPU.duration: Invalid value: \"2h\": set duration between 1s and 1h"},
		{"tool duration not below the benchmark's timeout", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks[0].SysbenchCPU = &vmbenchv1.SysbenchCPUParams{Duration: ptr.To[vmbenchv1.Duration]("45m")}
		}, "spec.benchmarks[0].sysbenchCPU.duration: Invalid value: sysbenchCPU.duration must be shorter than the benchmark's timeout, which bounds each execution: lower sysbenchCPU.duration or raise timeout"},
		{"suite name starting with a digit", func(s *vmbenchv1.BenchmarkSuite) { s.Name = "1abc" },
			"metadata.name must be a DNS-1035 label, because it names the suite's Services and MPIJobs"},
		{"suite name with a dot", func(s *vmbenchv1.BenchmarkSuite) { s.Name = "a.b" },
			"metadata.name must be a DNS-1035 label"},
		{"platform name with a dash", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm-container", Type: vmbenchv1.PlatformContainer}}
			s.Spec.Baseline = "vm-container"
		}, "spec.platforms[0].name: Invalid value: \"vm-container\": a platform name is lowercase letters and digits, starting with a letter, without '-': run names are <suite>-<platform>-<repetition>"},
		{"runtime class that is no name", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer, RuntimeClassName: ptr.To("Kata")}}
		}, "spec.platforms[0].runtimeClassName: Invalid value: \"Kata\": runtimeClassName must name a RuntimeClass"},
		{"cluster memory below 256Mi", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.Memory = ptr.To(resource.MustParse("100Mi")) },
			"spec.cluster.memory: Invalid value: \"100Mi\": set cluster.memory between 256Mi and 256Gi"},
		{"cluster memory above 256Gi", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.Memory = ptr.To(resource.MustParse("1Ti")) },
			"set cluster.memory between 256Mi and 256Gi"},
		{"zero CPU request", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("0")) },
			"spec.cluster.cpuRequest: Invalid value: \"0\": set cluster.cpuRequest above 0, for example 500m, or remove it"},
		{"negative memory request", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("-1Gi")) },
			"spec.cluster.memoryRequest: Invalid value: \"-1Gi\": set cluster.memoryRequest above 0, for example 1Gi, or remove it"},
		{"dedicated CPUs with a lowered cpu request", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.DedicatedCPUs = true
			s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("1"))
		}, "spec.cluster: Invalid value: cluster.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or set dedicatedCPUs to false"},
		{"dedicated CPUs with a lowered memory request", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.DedicatedCPUs = true
			s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("1Gi"))
		}, "cluster.dedicatedCPUs needs requests equal to limits"},
		{"shared storage above 1Ti", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("2Ti"))}
		}, "spec.sharedStorage.size: Invalid value: \"2Ti\": set sharedStorage.size above 0 and at most 1Ti"},
		{"storage class that is no name", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "NFS_client"}
		}, "spec.sharedStorage.storageClassName: Invalid value: \"NFS_client\": storageClassName must name a StorageClass"},
		{"iozone file above 16G", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "32G"}})
		}, "spec.benchmarks[1].iozone.fileSize: Invalid value: \"32G\": fileSize must be at most 16G, written to the node's disk: lower it, for example to 1G"},
		{"iozone record above 16M", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{RecordSize: "1g"}})
		}, "spec.benchmarks[1].iozone.recordSize: Invalid value: \"1g\": recordSize must be at most 16M (a number without a unit counts KiB): lower it, for example to 64k"},
		{"iozone auto with a file size", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Auto: true, FileSize: "1G"}})
		}, "spec.benchmarks[1].iozone.fileSize: Invalid value: fileSize does not apply with auto: true, which runs every file size from minFileSize to maxFileSize (iozone -a -n -g): remove fileSize, or set auto to false"},
		{"iozone auto with a record size", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Auto: true, RecordSize: "4k"}})
		}, "spec.benchmarks[1].iozone.recordSize: Invalid value: recordSize does not apply with auto: true, which runs every record size from 4k to 16M that fits each file: remove recordSize, or set auto to false"},
		{"iozone maxFileSize without auto", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{MaxFileSize: "1G"}})
		}, "spec.benchmarks[1].iozone.maxFileSize: Invalid value: maxFileSize applies to auto: true only (iozone -a -g): set auto to true, or remove maxFileSize and set fileSize for a single file size"},
		{"iozone minFileSize with auto false", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{MinFileSize: "1m"}})
		}, "spec.benchmarks[1].iozone.minFileSize: Invalid value: minFileSize applies to auto: true only (iozone -a -n)"},
		{"iozone auto maximum above 16G", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "32g"}})
		}, "spec.benchmarks[1].iozone.maxFileSize: Invalid value: \"32g\": maxFileSize must be between 64k and 16G (a number without a unit counts KiB), written to the node's disk: for example 1G"},
		{"iozone auto minimum above the default maximum", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Auto: true, MinFileSize: "1g"}})
		}, "spec.benchmarks[1].iozone.minFileSize: Invalid value: minFileSize must not be above maxFileSize (512M when left out): lower minFileSize or raise maxFileSize"},
		{"fio file above 16G", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Size: "17g"}})
		}, "spec.benchmarks[1].fio.size: Invalid value: \"17g\": size must be at most 16G, written to the node's disk"},
		{"fio block above 16M", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{BlockSize: "32m"}})
		}, "spec.benchmarks[1].fio.blockSize: Invalid value: \"32m\": blockSize must be at most 16M: lower it, for example to 4k"},
		{"stress-ng vm bytes above 64G", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "vm", Type: vmbenchv1.BenchmarkStressNGVM, StressNGVM: &vmbenchv1.StressNGVMParams{Bytes: "65G"}})
		}, "spec.benchmarks[1].stressNGVM.bytes: Invalid value: \"65G\": bytes must be at most 64G, which the workers share, or a share of the memory such as 50%: lower it"},
		{"memory traffic above 1T", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory, SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{TotalSize: "2T"}})
		}, "spec.benchmarks[1].sysbenchMemory.totalSize: Invalid value: \"2T\": totalSize must be at most 1T of memory traffic per execution: lower it, for example to 10G"},
		{"toleration without a key", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Operator: corev1.TolerationOpExists}}
		}, "spec.placement.tolerations[0].key: Invalid value: a toleration without a key tolerates every taint, the control plane's included: set key to the key of the taint to tolerate"},
		{"toleration operator", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Operator: "In"}}
		}, "spec.placement.tolerations[0].operator: Invalid value: set operator to Exists or Equal"},
		{"toleration effect", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Effect: "NoExec"}}
		}, "spec.placement.tolerations[0].effect: Invalid value: set effect to NoSchedule, PreferNoSchedule or NoExecute, or leave it out to tolerate every effect"},
		{"toleration Exists with a value", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists, Value: "bench"}}
		}, "spec.placement.tolerations[0].value: Invalid value: operator Exists matches any value: remove value, or set operator to Equal"},
		{"tolerationSeconds without NoExecute", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](60)}}
		}, "spec.placement.tolerations[0].tolerationSeconds: Invalid value: tolerationSeconds applies only to effect NoExecute"},
		{"node selector key that is no label name", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"vmbench.io/my pool": "bench"}
		}, "spec.placement.nodeSelector: Invalid value: every nodeSelector key must be a label name such as vmbench.io/pool"},
		{"node selector value that is no label value", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"vmbench.io/pool": "-bench"}
		}, "spec.placement.nodeSelector[vmbench.io/pool]: Invalid value: \"-bench\": a nodeSelector value must be a label value"},
		{"more than 16 node selector entries", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{}
			for i := range 17 {
				s.Spec.Placement.NodeSelector[fmt.Sprintf("vmbench.io/l%d", i)] = "x"
			}
		}, "spec.placement.nodeSelector: Too many: 17: must have at most 16 items"},
		{"precision with one repetition", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Precision = precisionOn("cpu") },
			"spec.precision needs spec.repetitions of 2 or more, the minimum number of repetitions: one repetition has no confidence interval"},
		{"precision cap below the minimum", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions, s.Spec.Precision = 5, precisionOn("cpu")
		}, "spec.precision.maxRepetitions must be at least spec.repetitions, the minimum: raise maxRepetitions or lower repetitions"},
		{"precision cap above 30", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions, s.Spec.Precision = 2, precisionOn("cpu")
			s.Spec.Precision.MaxRepetitions = 31
		}, "spec.precision.maxRepetitions: Invalid value: 31: spec.precision.maxRepetitions in body should be less than or equal to 30"},
		{"precision target of 0", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions, s.Spec.Precision = 2, precisionOn("cpu")
			s.Spec.Precision.HalfWidthPercent = 0
		}, "set spec.precision.halfWidthPercent between 0.5 and 50"},
		{"precision on no metric", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions, s.Spec.Precision = 2, precisionOn()
		}, "spec.precision.metrics"},
		{"precision metric of no benchmark", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions, s.Spec.Precision = 2, precisionOn("cpu/events_per_second", "hpl/HPL_Tflops")
		}, "every spec.precision.metrics entry must be a benchmark's name, or a benchmark's name, '/' and one of its metrics (for example hpl/HPL_Tflops): name a benchmark of spec.benchmarks"},
		{"precision metric that only starts like a benchmark", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Repetitions, s.Spec.Precision = 2, precisionOn("cpus")
		}, "every spec.precision.metrics entry must be a benchmark's name"},
	}
	cases = append(cases, vmSettingsRejections()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := h.suite("invalid", 1, cpu())
			tc.mutate(s)
			err := k8s.Create(h.ctx, s)
			g.Expect(err).To(HaveOccurred(), "the API server accepted it")
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
		})
	}
	if len(cases) < 10 {
		t.Fatalf("only %d invalid specs", len(cases))
	}
}

// The defaults a user sees in the stored object are exactly the ones the runner gets for a benchmark
// whose parameter block was left out.
func TestServerDefaultsMatchGoDefaults(t *testing.T) {
	h := newHarness(t)
	s := h.suite("defaults", 0,
		vmbenchv1.Benchmark{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{}},
		vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}},
		vmbenchv1.Benchmark{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory, SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{}},
		vmbenchv1.Benchmark{Name: "stress-cpu", Type: vmbenchv1.BenchmarkStressNGCPU, StressNGCPU: &vmbenchv1.StressNGCPUParams{}},
		vmbenchv1.Benchmark{Name: "stress-vm", Type: vmbenchv1.BenchmarkStressNGVM, StressNGVM: &vmbenchv1.StressNGVMParams{}},
		vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{}},
		vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{}},
		vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing, Ping: &vmbenchv1.PingParams{}},
		vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{}},
		vmbenchv1.Benchmark{Name: "netperf", Type: vmbenchv1.BenchmarkNetperf, Netperf: &vmbenchv1.NetperfParams{}},
		vmbenchv1.Benchmark{Name: "netcat", Type: vmbenchv1.BenchmarkNetcat, Netcat: &vmbenchv1.NetcatParams{}},
	)
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	stored := h.get("defaults")
	for _, b := range stored.Spec.Benchmarks {
		want := vmbenchv1.Benchmark{Name: b.Name, Type: b.Type}.WithDefaults()
		if want.Iozone != nil {
			// No marker default: auto: true excludes them, and a marker default cannot depend on auto.
			want.Iozone.FileSize, want.Iozone.RecordSize = "", ""
		}
		h.g.Expect(b).To(Equal(want), b.Name)
	}
	spec := stored.Spec
	h.g.Expect(spec.Platforms).To(Equal([]vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM}}))
	h.g.Expect(spec.Baseline).To(Equal("container"))
	h.g.Expect(spec.Repetitions).To(Equal(int32(3)))
	// Go's defaults (what `vmbench host -f`, `preflight -f` and `report -f` apply without a server) are
	// those of the zero value: a marker default that differs from them fails here.
	h.g.Expect(spec.Cluster.Nodes).To(Equal(vmbenchv1.ClusterShape{}.NodeCount()))
	h.g.Expect(spec.Cluster.CPU).To(Equal(vmbenchv1.ClusterShape{}.CPULimit()))
	h.g.Expect(spec.Cluster.Memory.Cmp(vmbenchv1.DefaultMemory)).To(Equal(0))
	h.g.Expect(spec.Timeout.Duration()).To(Equal(vmbenchv1.BenchmarkSuiteSpec{}.SuiteTimeout()))
}

// A spec that only the controller refuses (a VM platform with a memory request below its guest
// memory, which KubeVirt commits when the VM boots) gets an InvalidSpec condition; fixing the spec
// lets the suite start, and once it has started its experiment can no longer change.
func TestInvalidSpecWaitsForAFixAndThenFreezes(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	s := h.suite("fixme", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("1Gi"))
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	bad := h.eventuallySuite("fixme", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionFailed)).To(BeTrue())
	})
	failed := meta.FindStatusCondition(bad.Status.Conditions, vmbenchv1.ConditionFailed)
	h.g.Expect(failed.Reason).To(Equal(vmbenchv1.ReasonInvalidSpec))
	h.g.Expect(failed.Message).To(Equal("platform vm: a VM's guest memory is committed when it boots, so cluster.memoryRequest below cluster.memory cannot hold; remove cluster.memoryRequest"))
	h.g.Expect(bad.Status.StartTime).To(BeNil(), "nothing ran")
	list := &corev1.ConfigMapList{}
	h.g.Expect(k8s.List(h.ctx, list, client.InNamespace(h.ns), client.HasLabels{vmbenchv1.LabelRun})).To(Succeed())
	h.g.Expect(list.Items).To(BeEmpty(), "no half-created run")

	bad.Spec.Cluster.MemoryRequest = nil
	bad.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("1"))
	h.g.Expect(k8s.Update(h.ctx, bad)).To(Succeed())
	started := h.eventuallySuite("fixme", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "fixme-container-1")).To(Equal(vmbenchv1.RunRunning))
		g.Expect(s.Status.Warnings).To(ContainElement(ContainSubstring("not in Guaranteed QoS")))
	})
	h.g.Expect(meta.IsStatusConditionTrue(started.Status.Conditions, vmbenchv1.ConditionFailed)).To(BeFalse())

	// The controller writes status meanwhile, so an update from a stale copy may meet a conflict
	// first; from a fresh copy the API server must refuse it for the immutability rule.
	h.g.Eventually(func(g Gomega) {
		fresh := &vmbenchv1.BenchmarkSuite{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(started), fresh)).To(Succeed())
		fresh.Spec.Repetitions = 2
		err := k8s.Update(h.ctx, fresh)
		g.Expect(err).To(HaveOccurred())
		g.Expect(err.Error()).To(ContainSubstring("cannot change once the first run has started"))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// Every sample a user may apply is accepted as it is.
func TestSamplesAreValid(t *testing.T) {
	h := newHarness(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "suite*.yaml"))
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(files).NotTo(BeEmpty())
	for _, f := range files {
		raw, err := os.ReadFile(f)
		h.g.Expect(err).NotTo(HaveOccurred())
		s := &vmbenchv1.BenchmarkSuite{}
		h.g.Expect(yaml.UnmarshalStrict(raw, s)).To(Succeed(), f)
		s.Namespace = h.ns
		h.g.Expect(k8s.Create(h.ctx, s, client.DryRunAll)).To(Succeed(), f)
	}
}

func precisionOn(metrics ...string) *vmbenchv1.PrecisionSpec {
	return &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 4, Metrics: metrics}
}

// The storage targets as the API takes them: every target, the Shared one on VM platforms without
// spec.sharedStorage (the master VM exports its disk over NFS), and fio without a runtime, which the
// API server leaves without one (bounded by size) while a runtime given is kept (time-based).
func TestStorageTargetsAreAccepted(t *testing.T) {
	h := newHarness(t)
	disk := vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "RootFS", "Shared"}}}
	sized := vmbenchv1.Benchmark{Name: "fio-size", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageRootFS}}
	timed := vmbenchv1.Benchmark{Name: "fio-time", Type: vmbenchv1.BenchmarkFio,
		Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared, Runtime: ptr.To[vmbenchv1.Duration]("30s")}}

	vms := h.suite("vms", 1, disk, sized, timed)
	vms.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}, {Name: "tuned", Type: vmbenchv1.PlatformVM}}
	vms.Spec.Baseline = "vm"
	h.g.Expect(k8s.Create(h.ctx, vms)).To(Succeed(), "the Shared target on VM platforms alone needs no spec.sharedStorage")
	stored := h.get("vms")
	h.g.Expect(stored.Spec.Benchmarks[1].Fio.Runtime).To(BeNil(), "fio without a runtime is bounded by its size")
	h.g.Expect(stored.Spec.Benchmarks[1].Fio.Size).To(Equal("256m"))
	h.g.Expect(stored.Spec.Benchmarks[2].Fio.Runtime).To(Equal(ptr.To[vmbenchv1.Duration]("30s")))

	both := h.suite("both", 1, disk, sized, timed)
	both.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "vmbench-shared"}
	h.g.Expect(k8s.Create(h.ctx, both, client.DryRunAll)).To(Succeed(), "containers and VMs with spec.sharedStorage")
}

// A precision target on a benchmark, or on one of its metrics, is accepted.
func TestPrecisionIsAccepted(t *testing.T) {
	h := newHarness(t)
	s := h.suite("precise", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	s.Spec.Precision = precisionOn("cpu", "cpu/events_per_second")
	s.Spec.Precision.MaxRepetitions = 20
	h.g.Expect(k8s.Create(h.ctx, s, client.DryRunAll)).To(Succeed())
}

// cluster.dedicatedCPUs with requests equal to limits (none lowered) is accepted.
func TestDedicatedCPUsAreAccepted(t *testing.T) {
	h := newHarness(t)
	s := h.suite("dedicated", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	s.Spec.Cluster.DedicatedCPUs = true
	h.g.Expect(k8s.Create(h.ctx, s, client.DryRunAll)).To(Succeed())
}
