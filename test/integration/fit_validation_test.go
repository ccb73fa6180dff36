package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func hpl(p vmbenchv1.HPCCParams) vmbenchv1.Benchmark {
	return vmbenchv1.Benchmark{Name: "hpl", Type: vmbenchv1.BenchmarkHPCC, HPCC: &p}
}

func memoryBlocks(sizes ...string) vmbenchv1.Benchmark {
	return vmbenchv1.Benchmark{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory, SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{BlockSizes: sizes}}
}

func vmBytes(bytes string) vmbenchv1.Benchmark {
	return vmbenchv1.Benchmark{Name: "stress", Type: vmbenchv1.BenchmarkStressNGVM, StressNGVM: &vmbenchv1.StressNGVMParams{Bytes: bytes, Workers: 4}}
}

// fitCase is a suite of the default shape (3 nodes of 2 CPUs and 2Gi) changed by mutate.
type fitCase struct {
	name   string
	mutate func(s *vmbenchv1.BenchmarkSuite)
	want   []string
}

func with(b vmbenchv1.Benchmark) func(s *vmbenchv1.BenchmarkSuite) {
	return func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks = append(s.Spec.Benchmarks, b) }
}

// What a node of the suite's cluster cannot hold, or its pods cannot be given, is refused at
// admission with the field and the largest value that fits; the values just inside each bound
// are accepted, and FirstInvalidValue (vmbench preflight -f, and suites stored before the rules)
// agrees with the API server on every case.
func TestSpecsThatCannotFitAreRefused(t *testing.T) {
	h := newHarness(t)
	refused := []fitCase{
		{"cpu request above the CPU limit", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("3")) },
			[]string{"spec.cluster.cpuRequest: Invalid value",
				"cluster.cpuRequest 3 is above cluster.cpu, the CPU limit of each node: set cluster.cpuRequest to 2 or less, or remove it"}},
		{"cpu request a millicore above 4 CPUs", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.CPU, s.Spec.Cluster.CPURequest = 4, ptr.To(resource.MustParse("4001m"))
		}, []string{"spec.cluster.cpuRequest: Invalid value", "cluster.cpuRequest 4001m is above cluster.cpu, the CPU limit of each node: set cluster.cpuRequest to 4 or less"}},
		{"memory request of 64Gi above the default 2Gi", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("64Gi")) },
			[]string{"spec.cluster.memoryRequest: Invalid value",
				"cluster.memoryRequest 64Gi is above cluster.memory, the memory limit of each node: set cluster.memoryRequest to 2Gi or less, or remove it"}},
		{"memory request a byte above the limit", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Memory, s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("1Gi")), ptr.To(resource.MustParse("1073741825"))
		}, []string{"cluster.memoryRequest 1073741825 is above cluster.memory, the memory limit of each node: set cluster.memoryRequest to 1Gi or less"}},
		{"HPL problem size whose matrix exceeds 3 x 2Gi", with(hpl(vmbenchv1.HPCCParams{N: ptr.To[int32](150000)})),
			[]string{"spec.benchmarks: Invalid value",
				"benchmark hpl: hpcc.problemSize 150000 needs 167.6 GiB of matrix (8·N² bytes), more than hpcc.memoryPercent 80% of the memory of the 3 node(s) taking part, " +
					"each of cluster.memory 2Gi: set problem sizes of at most 25381, or raise cluster.memory or cluster.nodes"}},
		{"HPL problem size one above the largest that fits", with(hpl(vmbenchv1.HPCCParams{N: ptr.To[int32](25382)})),
			[]string{"benchmark hpl: hpcc.problemSize 25382 needs 4.8 GiB of matrix", "set problem sizes of at most 25381"}},
		{"HPL sweep on the workers with one size too large", with(hpl(vmbenchv1.HPCCParams{ProblemSizes: []int32{1000, 16385, 2000}, MemoryPercent: 50, Nodes: vmbenchv1.HPCCWorkers})),
			[]string{"benchmark hpl: hpcc.problemSizes entry 16385 needs 2.0 GiB of matrix (8·N² bytes), more than hpcc.memoryPercent 50% of the memory of the 2 node(s) taking part, " +
				"each of cluster.memory 2Gi: set problem sizes of at most 16384"}},
		{"HPL without a problem size on too little memory for one block", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, ptr.To(resource.MustParse("256Mi"))
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, hpl(vmbenchv1.HPCCParams{MemoryPercent: 1, BlockSizes: []int32{64, 1024}}))
		}, []string{"benchmark hpl: without hpcc.problemSize, N is derived from hpcc.memoryPercent 1% of the memory of the 1 node(s) taking part, each of cluster.memory 256Mi, " +
			"and that matrix is narrower than one block of 1024: set hpcc.problemSize, block sizes of at most 579, or raise cluster.memory or hpcc.memoryPercent"}},
		{"sysbench block larger than the node", with(memoryBlocks("1K", "4G")),
			[]string{"benchmark mem: sysbenchMemory.blockSizes holds a block size above cluster.memory 2Gi, the memory limit of each node, and sysbench allocates the whole block: use block sizes of at most 2Gi"}},
		{"sysbench block that is no power of two", with(memoryBlocks("1K", "3K")),
			[]string{"spec.benchmarks[1].sysbenchMemory.blockSizes[1]: Invalid value: \"3K\": a sysbench memory block size must be a power of two of at least 8 bytes, such as 4K, 1M or 1G: sysbench refuses any other"}},
		{"sysbench block of 4 bytes", with(memoryBlocks("4")),
			[]string{"spec.benchmarks[1].sysbenchMemory.blockSizes[0]: Invalid value: \"4\": a sysbench memory block size must be a power of two of at least 8 bytes"}},
		{"stress-ng bytes larger than the node", with(vmBytes("3G")),
			[]string{"benchmark stress: stressNGVM.bytes 3G is more than cluster.memory 2Gi, the memory limit of each node, and the stress-ng workers allocate all of it between them: " +
				"set bytes to at most 2Gi, or a share such as 50%"}},
		{"stress-ng bytes a mebibyte above 1536Mi", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Memory = ptr.To(resource.MustParse("1536Mi"))
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmBytes("1537M"))
		}, []string{"benchmark stress: stressNGVM.bytes 1537M is more than cluster.memory 1536Mi", "set bytes to at most 1536Mi"}},
		{"iozone file on the Shared target larger than the claim", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs"}
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone,
				Iozone: &vmbenchv1.IozoneParams{FileSize: "5g", Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}})
		}, []string{"spec.sharedStorage: Invalid value",
			"benchmark disk writes more to the Shared target than sharedStorage.size 4Gi holds, the ReadWriteMany claim of the pods of Container and Host platforms, " +
				"from 1 node(s) at a time (concurrency OneNodeAtATime): raise sharedStorage.size, or write at most 4Gi from each node"}},
		{"fio jobs of every node at once on the Shared target", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("8Gi"))}
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Concurrency: vmbenchv1.ConcurrencyAllNodes,
				Fio: &vmbenchv1.FioParams{Size: "1g", NumJobs: 3, Target: vmbenchv1.StorageShared}})
		}, []string{"benchmark fio writes more to the Shared target than sharedStorage.size 8Gi holds", "from 3 node(s) at a time (concurrency AllNodes)",
			"or write at most 2730Mi from each node"}},
		{"iozone auto mode up to a file larger than the claim", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("1Gi"))}
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone,
				Iozone: &vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "1048577", Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageShared}}})
		}, []string{"benchmark disk writes more to the Shared target than sharedStorage.size 1Gi holds"}},
		{"toleration key with a space", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "a b", Operator: corev1.TolerationOpExists}}
		}, []string{"spec.placement.tolerations[0].key: Invalid value: \"a b\": a toleration key must be a label name such as vmbench.io/dedicated, as the pod API requires"}},
		{"toleration key with two slashes", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists}, {Key: "vmbench.io/a/b", Operator: corev1.TolerationOpExists}}
		}, []string{"spec.placement.tolerations[1].key: Invalid value: \"vmbench.io/a/b\": a toleration key must be a label name"}},
		{"toleration value that is no label value", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "a b"}}
		}, []string{"spec.placement.tolerations[0].value: Invalid value: \"a b\": a toleration value must be a label value, as the pod API requires: at most 63 letters, digits"}},
		{"toleration value of 64 characters", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: "pool", Value: strings.Repeat("v", 64)}}
		}, []string{"spec.placement.tolerations[0].value: Too long: may not be more than 63 bytes"}},
	}
	accepted := []fitCase{
		{"cpu request equal to the CPU limit", func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("2")) }, nil},
		{"memory request equal to the limit, written otherwise", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("2048Mi"))
		}, nil},
		{"the largest HPL problem size that fits", with(hpl(vmbenchv1.HPCCParams{N: ptr.To[int32](25381)})), nil},
		{"the largest HPL sweep that fits the workers", with(hpl(vmbenchv1.HPCCParams{ProblemSizes: []int32{1000, 16384}, MemoryPercent: 50, Nodes: vmbenchv1.HPCCWorkers})), nil},
		{"the largest HPL problem size on 8 nodes of 256Gi", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 8, ptr.To(resource.MustParse("256Gi"))
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, hpl(vmbenchv1.HPCCParams{N: ptr.To[int32](200000), MemoryPercent: 90}))
		}, nil},
		{"HPL without a problem size with room for one block", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Cluster.Nodes, s.Spec.Cluster.Memory = 1, ptr.To(resource.MustParse("256Mi"))
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, hpl(vmbenchv1.HPCCParams{MemoryPercent: 1, NB: 576}))
		}, nil},
		{"sysbench blocks up to the node's memory", with(memoryBlocks("8", "1K", "1M", "2G")), nil},
		{"stress-ng bytes equal to the node's memory", with(vmBytes("2048M")), nil},
		{"stress-ng share of the memory", with(vmBytes("99%")), nil},
		{"Shared target files that fill the claim", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("3Gi"))}
			s.Spec.Benchmarks = append(s.Spec.Benchmarks,
				vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "3145728", Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageShared}}},
				vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Concurrency: vmbenchv1.ConcurrencyAllNodes,
					Fio: &vmbenchv1.FioParams{Size: "512m", NumJobs: 2, Target: vmbenchv1.StorageShared}})
		}, nil},
		{"a file larger than the claim on VM platforms, which share the master VM's disk", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms, s.Spec.Baseline = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}, "vm"
			s.Spec.SharedStorage = &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("1Gi"))}
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, vmbenchv1.Benchmark{Name: "disk", Type: vmbenchv1.BenchmarkIozone,
				Iozone: &vmbenchv1.IozoneParams{FileSize: "2g", Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageShared}}})
		}, nil},
		{"toleration keys and values the pod API takes", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{
				{Key: "A_b.C-1", Operator: corev1.TolerationOpExists},
				{Key: strings.Repeat("a", 253) + "/" + strings.Repeat("b", 63), Value: strings.Repeat("v", 63)},
				{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "x.Y_z-1"},
			}
		}, nil},
	}
	for _, tc := range append(refused, accepted...) {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			s := h.suite("fit", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
			tc.mutate(s)
			err := k8s.Create(h.ctx, s, client.DryRunAll)
			goErr := vmbenchv1.FirstInvalidValue(s)
			if tc.want == nil {
				g.Expect(err).NotTo(HaveOccurred(), "the API server refused it")
				g.Expect(goErr).NotTo(HaveOccurred(), "FirstInvalidValue refused it")
				return
			}
			g.Expect(err).To(HaveOccurred(), "the API server accepted it")
			for _, want := range tc.want {
				g.Expect(err.Error()).To(ContainSubstring(want))
			}
			g.Expect(goErr).To(HaveOccurred(), "FirstInvalidValue accepted it")
		})
	}
}

// Every BenchmarkSuite the documentation shows or the report's fixtures hold is still accepted, as
// the samples are (TestSamplesAreValid).
func TestDocumentedSuitesAreValid(t *testing.T) {
	h := newHarness(t)
	var files []string
	for _, pattern := range []string{"docs/*.yaml", "docs/*/*.yaml", "internal/report/testdata/suite*.yaml"} {
		found, err := filepath.Glob(filepath.Join("..", "..", pattern))
		h.g.Expect(err).NotTo(HaveOccurred())
		files = append(files, found...)
	}
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		h.g.Expect(err).NotTo(HaveOccurred())
		if !strings.Contains(string(raw), "kind: BenchmarkSuite") {
			continue
		}
		s := &vmbenchv1.BenchmarkSuite{}
		h.g.Expect(yaml.Unmarshal(raw, s)).To(Succeed(), f)
		fresh := &vmbenchv1.BenchmarkSuite{TypeMeta: s.TypeMeta, Spec: s.Spec}
		fresh.Name, fresh.Namespace = s.Name, h.ns
		h.g.Expect(k8s.Create(h.ctx, fresh, client.DryRunAll)).To(Succeed(), f)
		h.g.Expect(vmbenchv1.FirstInvalidValue(fresh)).To(Succeed(), f)
		checked++
	}
	if checked < 3 {
		t.Fatalf("only %d documented suites found in %v", checked, files)
	}
}
