package v1alpha1

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// validSuite has every field FirstInvalidValue looks at set to a good value.
func validSuite() *BenchmarkSuite {
	return &BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "bench"},
		Spec: BenchmarkSuiteSpec{
			Platforms: []Platform{{Name: "container", Type: PlatformContainer, RuntimeClassName: ptr.To("kata.v2")}, {Name: "vm2", Type: PlatformVM}},
			Baseline:  "container",
			Cluster:   ClusterShape{Nodes: 3, CPU: 2, Memory: qty("64Gi"), CPURequest: qty("500m"), MemoryRequest: qty("1Gi")},
			Benchmarks: []Benchmark{
				{Name: "cpu", Type: BenchmarkSysbenchCPU, Timeout: dur(time.Minute), SysbenchCPU: &SysbenchCPUParams{Duration: dur(59 * time.Second)}},
				{Name: "mem", Type: BenchmarkSysbenchMemory, Concurrency: ConcurrencyAllNodes, SysbenchMemory: &SysbenchMemoryParams{TotalSize: "1T"}},
				{Name: "stress-cpu", Type: BenchmarkStressNGCPU, Timeout: dur(2 * time.Hour), StressNGCPU: &StressNGCPUParams{Duration: dur(time.Hour)}},
				{Name: "stress-vm", Type: BenchmarkStressNGVM, StressNGVM: &StressNGVMParams{Bytes: "64G", Duration: dur(time.Second)}},
				{Name: "disk", Type: BenchmarkIozone, Iozone: &IozoneParams{FileSize: "9999999", RecordSize: "16m"}},
				{Name: "net", Type: BenchmarkIperf3, Timeout: dur(24 * time.Hour), Iperf3: &Iperf3Params{Duration: dur(10 * time.Second)}},
				{Name: "fio", Type: BenchmarkFio, Timeout: dur(10 * time.Second), Fio: &FioParams{Size: "16g", BlockSize: "16384k", Runtime: dur(9 * time.Second)}},
				{Name: "disk-auto", Type: BenchmarkIozone, Iozone: &IozoneParams{Auto: true, MinFileSize: "64", MaxFileSize: "16g"}},
			},
			Repetitions: 1,
			Placement: Placement{
				NodeSelector: map[string]LabelValue{"vmbench.io/pool": "bench", "kubernetes.io/arch": "amd64", "dedicated": ""},
				Tolerations: []Toleration{
					{Key: "vmbench.io/dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
					{Key: "pool", Operator: corev1.TolerationOpEqual, Value: "bench"},
					{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)},
				},
			},
			SharedStorage: &SharedStorage{StorageClassName: "nfs-client", Size: qty("1Ti")},
			Timeout:       dur(720 * time.Hour),
		},
	}
}

func TestFirstInvalidValueAcceptsGoodValues(t *testing.T) {
	if err := FirstInvalidValue(validSuite()); err != nil {
		t.Fatalf("FirstInvalidValue() = %v, want nil", err)
	}
	if err := FirstInvalidValue(&BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "a"}}); err != nil {
		t.Fatalf("FirstInvalidValue() of an empty spec = %v, want nil: defaults are not its business", err)
	}
}

// VM platforms share the master VM's disk over NFS: the Shared target needs no storage class there.
func TestFirstInvalidValueAcceptsSharedOnVMsWithoutStorageClass(t *testing.T) {
	s := validSuite()
	s.Spec.SharedStorage = nil
	s.Spec.Platforms = []Platform{{Name: "vm", Type: PlatformVM}, {Name: "vm2", Type: PlatformVM}}
	s.Spec.Baseline = "vm"
	s.Spec.Benchmarks[4].Iozone.Targets = []StorageTarget{StorageLocal, StorageRootFS, StorageShared}
	if err := FirstInvalidValue(s); err != nil {
		t.Fatalf("FirstInvalidValue() = %v, want nil", err)
	}
}

func TestFirstInvalidValueAcceptsTheSamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "suite*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := &BenchmarkSuite{}
		if err := yaml.UnmarshalStrict(raw, s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := FirstInvalidValue(s); err != nil {
			t.Errorf("%s: FirstInvalidValue() = %v", f, err)
		}
	}
}

func TestFirstInvalidValue(t *testing.T) {
	bench := func(s *BenchmarkSuite, name string) *Benchmark {
		for i := range s.Spec.Benchmarks {
			if s.Spec.Benchmarks[i].Name == name {
				return &s.Spec.Benchmarks[i]
			}
		}
		t.Fatalf("no benchmark %s", name)
		return nil
	}
	tests := []struct {
		name   string
		mutate func(s *BenchmarkSuite)
		want   string
	}{
		{"suite timeout in days", func(s *BenchmarkSuite) { s.Spec.Timeout = ptr.To(Duration("1d")) },
			`spec.timeout: "1d" is not a duration: write it as 24h`},
		{"suite timeout that is no duration", func(s *BenchmarkSuite) { s.Spec.Timeout = ptr.To(Duration("soon")) },
			`spec.timeout: "soon" is not a duration: write it as a number and a unit h, m or s`},
		{"negative suite timeout", func(s *BenchmarkSuite) { s.Spec.Timeout = ptr.To(Duration("-1h")) },
			`spec.timeout: "-1h" is not a duration`},
		{"suite timeout too short", func(s *BenchmarkSuite) { s.Spec.Timeout = ptr.To(Duration("59s")) },
			`spec.timeout: "59s" is not between 1m and 720h: set it in that range`},
		{"suite timeout too long", func(s *BenchmarkSuite) { s.Spec.Timeout = ptr.To(Duration("721h")) },
			`spec.timeout: "721h" is not between 1m and 720h`},
		{"benchmark timeout too short", func(s *BenchmarkSuite) { bench(s, "cpu").Timeout = ptr.To(Duration("9s")) },
			`spec.benchmarks[0].timeout: "9s" is not between 10s and 24h`},
		{"benchmark timeout two dots", func(s *BenchmarkSuite) { bench(s, "net").Timeout = ptr.To(Duration("1.5.h")) },
			`spec.benchmarks[5].timeout: "1.5.h" is not a duration`},
		{"tool duration zero", func(s *BenchmarkSuite) { bench(s, "cpu").SysbenchCPU.Duration = ptr.To(Duration("0s")) },
			`spec.benchmarks[0].sysbenchCPU.duration: "0s" is not between 1s and 1h`},
		{"tool duration too long", func(s *BenchmarkSuite) { bench(s, "stress-cpu").StressNGCPU.Duration = ptr.To(Duration("61m")) },
			`spec.benchmarks[2].stressNGCPU.duration: "61m" is not between 1s and 1h`},
		{"tool duration not below the timeout", func(s *BenchmarkSuite) { bench(s, "fio").Fio.Runtime = ptr.To(Duration("10s")) },
			`spec.benchmarks[6].fio.runtime: "10s" is not shorter than the benchmark's timeout 10s`},
		{"tool duration not below the default timeout", func(s *BenchmarkSuite) { bench(s, "stress-vm").StressNGVM.Duration = ptr.To(Duration("30m")) },
			`spec.benchmarks[3].stressNGVM.duration: "30m" is not shorter than the benchmark's timeout 30m`},
		{"iperf3 duration in days", func(s *BenchmarkSuite) { bench(s, "net").Iperf3.Duration = ptr.To(Duration("1d")) },
			`spec.benchmarks[5].iperf3.duration: "1d" is not a duration: write it as 24h`},
		{"stress-ng vm duration", func(s *BenchmarkSuite) { bench(s, "stress-vm").StressNGVM.Duration = ptr.To(Duration("")) },
			`spec.benchmarks[3].stressNGVM.duration: "" is not a duration`},
		{"all nodes at once for iperf3", func(s *BenchmarkSuite) { bench(s, "net").Concurrency = ConcurrencyAllNodes },
			`spec.benchmarks[5].concurrency: AllNodes needs a tool that runs on each node by itself, and iperf3 does not`},
		{"unknown concurrency", func(s *BenchmarkSuite) { bench(s, "cpu").Concurrency = "Parallel" },
			`spec.benchmarks[0].concurrency: "Parallel" is neither OneNodeAtATime nor AllNodes`},
		{"name starting with a digit", func(s *BenchmarkSuite) { s.Name = "1abc" },
			`metadata.name: "1abc" is not a DNS-1035 label`},
		{"name with a dot", func(s *BenchmarkSuite) { s.Name = "a.b" }, `metadata.name: "a.b" is not a DNS-1035 label`},
		{"name too long", func(s *BenchmarkSuite) { s.Name = strings.Repeat("a", 31) }, "is longer than 30 characters"},
		{"platform name with a dash", func(s *BenchmarkSuite) { s.Spec.Platforms[1].Name = "vm-container" },
			`spec.platforms[1].name: "vm-container" is not lowercase letters and digits, starting with a letter, at most 12 characters: rename it without '-'`},
		{"runtime class with capitals", func(s *BenchmarkSuite) { s.Spec.Platforms[0].RuntimeClassName = ptr.To("Kata") },
			`spec.platforms[0].runtimeClassName: "Kata" is not the name of a RuntimeClass`},
		{"cluster memory too small", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory = qty("255Mi") },
			"spec.cluster.memory: 255Mi is not between 256Mi and 256Gi"},
		{"cluster memory too large", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory = qty("257Gi") },
			"spec.cluster.memory: 257Gi is not between 256Mi and 256Gi"},
		{"zero CPU request", func(s *BenchmarkSuite) { s.Spec.Cluster.CPURequest = qty("0") },
			"spec.cluster.cpuRequest: 0 is not above 0"},
		{"negative memory request", func(s *BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = qty("-1Gi") },
			"spec.cluster.memoryRequest: -1Gi is not above 0"},
		{"iozone file too large", func(s *BenchmarkSuite) { bench(s, "disk").Iozone.FileSize = "17G" },
			`spec.benchmarks[4].iozone.fileSize: "17G" is more than 16G: lower it`},
		{"iozone file in MiB too large", func(s *BenchmarkSuite) { bench(s, "disk").Iozone.FileSize = "16385m" },
			`spec.benchmarks[4].iozone.fileSize: "16385m" is more than 16G`},
		{"iozone record in KiB too large", func(s *BenchmarkSuite) { bench(s, "disk").Iozone.RecordSize = "16385" },
			`spec.benchmarks[4].iozone.recordSize: "16385" is more than 16M`},
		{"iozone auto with a file size", func(s *BenchmarkSuite) { bench(s, "disk-auto").Iozone.FileSize = "1G" },
			`spec.benchmarks[7].iozone.fileSize: does not apply with auto: true, which runs every file size from minFileSize to maxFileSize: remove fileSize, or set auto to false`},
		{"iozone auto with a record size", func(s *BenchmarkSuite) { bench(s, "disk-auto").Iozone.RecordSize = "64k" },
			`spec.benchmarks[7].iozone.recordSize: does not apply with auto: true`},
		{"iozone maxFileSize without auto", func(s *BenchmarkSuite) { bench(s, "disk").Iozone.MaxFileSize = "1G" },
			`spec.benchmarks[4].iozone.maxFileSize: applies to auto: true only (iozone -a -g): set auto to true, or remove maxFileSize and set fileSize for a single file size`},
		{"iozone minFileSize without auto", func(s *BenchmarkSuite) { bench(s, "disk").Iozone.MinFileSize = "64k" },
			`spec.benchmarks[4].iozone.minFileSize: applies to auto: true only (iozone -a -n)`},
		{"iozone auto maximum above 16G", func(s *BenchmarkSuite) { bench(s, "disk-auto").Iozone.MaxFileSize = "16385m" },
			`spec.benchmarks[7].iozone.maxFileSize: "16385m" is not between 64k and 16G: set it in that range`},
		{"iozone auto minimum below 64k", func(s *BenchmarkSuite) { bench(s, "disk-auto").Iozone.MinFileSize = "63k" },
			`spec.benchmarks[7].iozone.minFileSize: "63k" is not between 64k and 16G`},
		{"iozone auto minimum that is no size", func(s *BenchmarkSuite) { bench(s, "disk-auto").Iozone.MinFileSize = "1 GiB" },
			`spec.benchmarks[7].iozone.minFileSize: "1 GiB" is not a size`},
		{"iozone auto minimum above the maximum", func(s *BenchmarkSuite) { bench(s, "disk-auto").Iozone.MinFileSize = "17g" },
			`spec.benchmarks[7].iozone.minFileSize: "17g" is not between 64k and 16G`},
		{"iozone auto minimum above the given maximum", func(s *BenchmarkSuite) {
			bench(s, "disk-auto").Iozone.MinFileSize, bench(s, "disk-auto").Iozone.MaxFileSize = "2m", "1m"
		}, `spec.benchmarks[7].iozone.minFileSize: "2m" is above maxFileSize "1m": lower minFileSize or raise maxFileSize`},
		{"iozone auto minimum above the default maximum", func(s *BenchmarkSuite) {
			bench(s, "disk-auto").Iozone.MinFileSize, bench(s, "disk-auto").Iozone.MaxFileSize = "1G", ""
		}, `spec.benchmarks[7].iozone.minFileSize: "1G" is above maxFileSize "512M"`},
		{"fio file too large", func(s *BenchmarkSuite) { bench(s, "fio").Fio.Size = "16385m" },
			`spec.benchmarks[6].fio.size: "16385m" is more than 16G`},
		{"fio block too large", func(s *BenchmarkSuite) { bench(s, "fio").Fio.BlockSize = "1g" },
			`spec.benchmarks[6].fio.blockSize: "1g" is more than 16M`},
		{"fio block that is no size", func(s *BenchmarkSuite) { bench(s, "fio").Fio.BlockSize = "4 KiB" },
			`spec.benchmarks[6].fio.blockSize: "4 KiB" is not a size`},
		{"stress-ng vm bytes too large", func(s *BenchmarkSuite) { bench(s, "stress-vm").StressNGVM.Bytes = "65537M" },
			`spec.benchmarks[3].stressNGVM.bytes: "65537M" is more than 64G`},
		{"stress-ng vm share of 100%", func(s *BenchmarkSuite) { bench(s, "stress-vm").StressNGVM.Bytes = "100%" },
			`spec.benchmarks[3].stressNGVM.bytes: "100%" is not a size`},
		{"memory traffic too large", func(s *BenchmarkSuite) { bench(s, "mem").SysbenchMemory.TotalSize = "2T" },
			`spec.benchmarks[1].sysbenchMemory.totalSize: "2T" is more than 1T`},
		{"memory traffic beyond int64", func(s *BenchmarkSuite) { bench(s, "mem").SysbenchMemory.TotalSize = "9999999T" },
			`spec.benchmarks[1].sysbenchMemory.totalSize: "9999999T" is more than 1T`},
		{"toleration without a key", func(s *BenchmarkSuite) {
			s.Spec.Placement.Tolerations = append(s.Spec.Placement.Tolerations, Toleration{Operator: corev1.TolerationOpExists})
		}, "spec.placement.tolerations[3].key: a toleration without a key tolerates every taint"},
		{"toleration operator", func(s *BenchmarkSuite) { s.Spec.Placement.Tolerations[0].Operator = "In" },
			`spec.placement.tolerations[0].operator: "In": set operator to Exists or Equal`},
		{"toleration effect", func(s *BenchmarkSuite) { s.Spec.Placement.Tolerations[0].Effect = "NoExec" },
			`spec.placement.tolerations[0].effect: "NoExec": set effect to NoSchedule, PreferNoSchedule or NoExecute`},
		{"Exists with a value", func(s *BenchmarkSuite) { s.Spec.Placement.Tolerations[0].Value = "x" },
			"spec.placement.tolerations[0].value: operator Exists matches any value"},
		{"toleration seconds without NoExecute", func(s *BenchmarkSuite) { s.Spec.Placement.Tolerations[1].TolerationSeconds = ptr.To[int64](5) },
			"spec.placement.tolerations[1].tolerationSeconds: applies only to effect NoExecute"},
		{"fio file on the Shared target larger than the claim", func(s *BenchmarkSuite) {
			s.Spec.SharedStorage.Size = qty("8Gi")
			bench(s, "fio").Fio.Target = StorageShared
		}, "spec.benchmarks[6]: fio writes 16Gi to the Shared target from 1 node(s) at a time (concurrency OneNodeAtATime), more than spec.sharedStorage.size 8Gi holds: " +
			"raise sharedStorage.size, or write at most 8Gi from each node"},
		{"iozone files of every node at once on the Shared target", func(s *BenchmarkSuite) {
			s.Spec.SharedStorage.Size = qty("20Gi")
			bench(s, "disk-auto").Iozone.Targets = []StorageTarget{StorageShared}
			bench(s, "disk-auto").Concurrency = ConcurrencyAllNodes
		}, "spec.benchmarks[7]: disk-auto writes 16Gi to the Shared target from 3 node(s) at a time (concurrency AllNodes), more than spec.sharedStorage.size 20Gi holds: " +
			"raise sharedStorage.size, or write at most 6826Mi from each node"},
		{"toleration key that is no label name", func(s *BenchmarkSuite) { s.Spec.Placement.Tolerations[1].Key = "a b" },
			`spec.placement.tolerations[1].key: "a b" is not a label name`},
		{"toleration value that is no label value", func(s *BenchmarkSuite) { s.Spec.Placement.Tolerations[1].Value = "-bench" },
			`spec.placement.tolerations[1].value: "-bench" is not a label value`},
		{"cpu request above the limit", func(s *BenchmarkSuite) { s.Spec.Cluster.CPURequest = qty("2500m") },
			"cluster.cpuRequest 2500m exceeds cluster.cpu 2: lower cluster.cpuRequest or remove it"},
		{"memory request above the limit", func(s *BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = qty("65Gi") },
			"cluster.memoryRequest 65Gi exceeds cluster.memory 64Gi: lower cluster.memoryRequest or remove it"},
		{"HPL matrix above the nodes' memory", func(s *BenchmarkSuite) {
			s.Spec.Cluster.Memory = qty("2Gi")
			s.Spec.Benchmarks[3].StressNGVM.Bytes = "1G"
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, Benchmark{Name: "hpl", Type: BenchmarkHPCC, HPCC: &HPCCParams{N: ptr.To[int32](150000)}})
		}, "spec.benchmarks[8].hpcc.problemSize: 150000 needs 167.6 GiB of matrix (8·N² bytes), more than hpcc.memoryPercent 80% of the memory of the 3 node(s) taking part, " +
			"each of cluster.memory 2Gi: set problem sizes of at most 25381"},
		{"HPL sweep one above the largest that fits", func(s *BenchmarkSuite) {
			s.Spec.Cluster.Memory = qty("2Gi")
			s.Spec.Benchmarks[3].StressNGVM.Bytes = "1G"
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, Benchmark{Name: "hpl", Type: BenchmarkHPCC,
				HPCC: &HPCCParams{ProblemSizes: []int32{16384, 16385}, MemoryPercent: 50, Nodes: HPCCWorkers}})
		}, "spec.benchmarks[8].hpcc.problemSizes: 16385 needs 2.0 GiB of matrix"},
		{"HPL derived N narrower than one block", func(s *BenchmarkSuite) {
			s.Spec.Cluster = ClusterShape{Nodes: 1, CPU: 1, Memory: qty("256Mi")}
			s.Spec.Benchmarks = []Benchmark{{Name: "hpl", Type: BenchmarkHPCC, HPCC: &HPCCParams{MemoryPercent: 1, NB: 580}}}
		}, "benchmark hpl: 1 nodes of 256Mi leave no room for an HPL matrix at 1% memory and NB=580: set hpcc.problemSize, or raise cluster.memory or hpcc.memoryPercent; block sizes of at most 579 fit"},
		{"sysbench block above the node's memory", func(s *BenchmarkSuite) { bench(s, "mem").SysbenchMemory.BlockSizes = []string{"1K", "128G"} },
			"spec.benchmarks[1].sysbenchMemory.blockSizes: 128G is more than cluster.memory 64Gi, the memory limit of each node, and sysbench allocates the whole block: use block sizes of at most 64Gi"},
		{"sysbench block that is no power of two", func(s *BenchmarkSuite) { bench(s, "mem").SysbenchMemory.BlockSizes = []string{"3K"} },
			`spec.benchmarks[1].sysbenchMemory.blockSizes: "3K" is not a power of two of at least 8 bytes`},
		{"stress-ng bytes above the node's memory", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory = qty("32Gi") },
			"spec.benchmarks[3].stressNGVM.bytes: 64G is more than cluster.memory 32Gi, the memory limit of each node, and the stress-ng workers allocate all of it between them: set bytes to at most 32Gi"},
		{"node selector key", func(s *BenchmarkSuite) { s.Spec.Placement.NodeSelector["a b"] = "c" },
			`spec.placement.nodeSelector: key "a b" is not a label name`},
		{"node selector value", func(s *BenchmarkSuite) { s.Spec.Placement.NodeSelector["pool"] = "-x" },
			`spec.placement.nodeSelector[pool]: "-x" is not a label value`},
		{"too many node selector entries", func(s *BenchmarkSuite) {
			for i := range 17 {
				s.Spec.Placement.NodeSelector[strings.Repeat("k", i+1)] = "v"
			}
		}, "spec.placement.nodeSelector: 20 entries: keep at most 16"},
		{"storage class", func(s *BenchmarkSuite) { s.Spec.SharedStorage.StorageClassName = "NFS" },
			`spec.sharedStorage.storageClassName: "NFS" is not the name of a StorageClass`},
		{"shared storage too large", func(s *BenchmarkSuite) { s.Spec.SharedStorage.Size = qty("1025Gi") },
			"spec.sharedStorage.size: 1025Gi is not above 0 and at most 1Ti"},
		{"shared storage of zero bytes", func(s *BenchmarkSuite) { s.Spec.SharedStorage.Size = qty("0") },
			"spec.sharedStorage.size: 0 is not above 0"},
		{"Shared target of a container platform without shared storage", func(s *BenchmarkSuite) {
			s.Spec.SharedStorage = nil
			bench(s, "fio").Fio.Target = StorageShared
		}, "spec.sharedStorage: a benchmark uses the Shared storage target, which the pods of platform container (spec.platforms[0], type Container) mount"},
		{"Shared target and the default platforms without shared storage", func(s *BenchmarkSuite) {
			s.Spec.SharedStorage, s.Spec.Platforms = nil, nil
			bench(s, "disk").Iozone.Targets = []StorageTarget{StorageLocal, StorageShared}
		}, "spec.sharedStorage: a benchmark uses the Shared storage target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSuite()
			tt.mutate(s)
			err := FirstInvalidValue(s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("FirstInvalidValue() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestSizeBytes(t *testing.T) {
	tests := []struct {
		in   string
		unit int64
		want int64
	}{
		{"512M", 1, 512 << 20}, {"64k", 1, 64 << 10}, {"16g", 1, 16 << 30}, {"1T", 1, 1 << 40},
		{"4096", 1, 4096}, {"4096", 1 << 10, 4 << 20}, {"50%", 1, 0}, {"9999999T", 1, math.MaxInt64},
	}
	for _, tt := range tests {
		got, ok := sizeBytes(tt.in, anySize, tt.unit)
		if !ok || got != tt.want {
			t.Errorf("sizeBytes(%q, %d) = %d, %v, want %d", tt.in, tt.unit, got, ok, tt.want)
		}
	}
	if _, ok := sizeBytes("1.5G", ioSize, 1); ok {
		t.Error("sizeBytes(1.5G) = ok, want refused by the syntax")
	}
}

// anySize accepts every syntax of the size fields, for sizeBytes' arithmetic alone.
var anySize = regexp.MustCompile(`^([1-9][0-9]{0,6}[kmgtKMGT]?|[1-9][0-9]?%)$`)
