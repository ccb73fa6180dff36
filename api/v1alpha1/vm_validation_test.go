package v1alpha1

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// variantsSuite compares a default VM and a tuned one with a container baseline, every setting of the
// tuned one set to a good value.
func variantsSuite() *BenchmarkSuite {
	return &BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "variants", Namespace: "bench"},
		Spec: BenchmarkSuiteSpec{
			Platforms: []Platform{
				{Name: "container", Type: PlatformContainer},
				{Name: "vmdefault", Type: PlatformVM},
				{Name: "vmtuned", Type: PlatformVM, VM: &VMSettings{NetworkBinding: VMBindingPasst, DiskBus: VMDiskBusVirtio,
					DiskCache: VMDiskCacheNone, DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: VMHugepages1Gi,
					IOThreads: VMIOThreadsAuto, DedicatedIOThread: true}},
			},
			Baseline:    "container",
			Cluster:     ClusterShape{Nodes: 3, CPU: 2, Memory: qty("2Gi")},
			Benchmarks:  []Benchmark{{Name: "hpcc", Type: BenchmarkHPCC}, {Name: "disk", Type: BenchmarkFio}},
			Repetitions: 3,
		},
	}
}

func TestVMSettingsValidation(t *testing.T) {
	if err := FirstInvalidValue(variantsSuite()); err != nil {
		t.Fatalf("FirstInvalidValue() of the good suite = %v", err)
	}
	tuned := func(s *BenchmarkSuite) *VMSettings { return s.Spec.Platforms[2].VM }
	tests := []struct {
		name   string
		mutate func(s *BenchmarkSuite)
		want   string // "" when the suite stays valid
	}{
		{"vm on a container platform", func(s *BenchmarkSuite) { s.Spec.Platforms[0].VM = &VMSettings{} },
			"spec.platforms[0].vm: vm settings are only allowed on platforms of type VM: remove vm or set type: VM"},
		{"empty vm block", func(s *BenchmarkSuite) { s.Spec.Platforms[1].VM = &VMSettings{} }, ""},
		{"unknown network binding", func(s *BenchmarkSuite) { tuned(s).NetworkBinding = "macvtap" },
			`spec.platforms[2].vm.networkBinding: "macvtap" is not one of ["Bridge" "Passt" "Masquerade"]`},
		{"network binding in KubeVirt's spelling", func(s *BenchmarkSuite) { tuned(s).NetworkBinding = "passt" },
			`spec.platforms[2].vm.networkBinding: "passt" is not one of`},
		{"unknown disk bus", func(s *BenchmarkSuite) { tuned(s).DiskBus = "ide" }, `spec.platforms[2].vm.diskBus: "ide" is not one of`},
		{"unknown cache mode", func(s *BenchmarkSuite) { tuned(s).DiskCache = "unsafe" }, `spec.platforms[2].vm.diskCache: "unsafe" is not one of`},
		{"unknown page size", func(s *BenchmarkSuite) { tuned(s).Hugepages = "4Ki" }, `spec.platforms[2].vm.hugepages: "4Ki" is not one of`},
		{"unknown IO thread policy", func(s *BenchmarkSuite) { tuned(s).IOThreads = "supplementalPool" },
			`spec.platforms[2].vm.ioThreads: "supplementalPool" is not one of`},
		{"dedicated IO thread on sata", func(s *BenchmarkSuite) { tuned(s).IOThreads, tuned(s).DiskBus = "", VMDiskBusSATA },
			"spec.platforms[2].vm: dedicatedIOThread needs the virtio disk bus, the only one KubeVirt gives IO threads to: set diskBus to virtio or remove dedicatedIOThread"},
		{"IO threads on scsi", func(s *BenchmarkSuite) { tuned(s).DedicatedIOThread, tuned(s).DiskBus = false, VMDiskBusSCSI },
			"spec.platforms[2].vm: ioThreads serve virtio disks only, and diskBus is scsi: set diskBus to virtio or remove ioThreads"},
		{"sata without IO threads", func(s *BenchmarkSuite) {
			tuned(s).DedicatedIOThread, tuned(s).IOThreads, tuned(s).DiskBus = false, "", VMDiskBusSATA
		}, ""},
		{"emulator thread without dedicated CPUs", func(s *BenchmarkSuite) { tuned(s).DedicatedCPUs = false },
			"spec.platforms[2].vm.isolateEmulatorThread needs dedicated CPUs"},
		{"emulator thread with cluster.dedicatedCPUs", func(s *BenchmarkSuite) {
			tuned(s).DedicatedCPUs, s.Spec.Cluster.DedicatedCPUs = false, true
		}, ""},
		{"dedicated CPUs with a lowered CPU request", func(s *BenchmarkSuite) { s.Spec.Cluster.CPURequest = qty("1") },
			"spec.platforms[2].vm.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or remove vm.dedicatedCPUs"},
		{"dedicated CPUs with a memory request", func(s *BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = qty("2Gi") },
			"spec.platforms[2].vm.dedicatedCPUs needs requests equal to limits"},
		{"1Gi pages under 2.5Gi", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory = qty("2560Mi") },
			"spec.platforms[2].vm.hugepages: cluster.memory 2560Mi is not a multiple of the page size 1Gi, and huge pages back the whole guest memory: set cluster.memory to a multiple of it, for example 2Gi, or use 2Mi pages"},
		{"2Mi pages under 2.5Gi", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory, tuned(s).Hugepages = qty("2560Mi"), VMHugepages2Mi }, ""},
		{"2Mi pages under 1000M", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory, tuned(s).Hugepages = qty("1000M"), VMHugepages2Mi },
			"cluster.memory 1G is not a multiple of the page size 2Mi, and huge pages back the whole guest memory: set cluster.memory to a multiple of it, for example 2Gi"},
		{"1Gi pages under the default memory", func(s *BenchmarkSuite) { s.Spec.Cluster.Memory = nil }, ""},
		{"masquerade with hpcc", func(s *BenchmarkSuite) { tuned(s).NetworkBinding = VMBindingMasquerade },
			"spec.platforms[2].vm.networkBinding: Masquerade hides every VM behind 10.0.2.2, so HPCC's MPI ranks cannot reach each other across VMs: use Bridge or Passt, or remove the hpcc benchmarks"},
		{"masquerade without hpcc", func(s *BenchmarkSuite) {
			tuned(s).NetworkBinding = VMBindingMasquerade
			s.Spec.Benchmarks = s.Spec.Benchmarks[1:]
		}, ""},
		{"masquerade on one node", func(s *BenchmarkSuite) { tuned(s).NetworkBinding, s.Spec.Cluster.Nodes = VMBindingMasquerade, 1 }, ""},
		{"migration policy with every field", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{BandwidthPerMigration: qty("64Mi"), CompletionTimeoutPerGiB: ptrTo[int64](150),
				AllowAutoConverge: ptrTo(true), AllowPostCopy: ptrTo(false)}
		}, ""},
		{"migration policy lifting the bandwidth cap", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{BandwidthPerMigration: qty("0")}
		}, ""},
		{"migration policy that sets nothing", func(s *BenchmarkSuite) { tuned(s).MigrationPolicy = &VMMigrationPolicy{} },
			"spec.platforms[2].vm.migrationPolicy: the policy sets nothing, so its runs would migrate as the cluster's settings say: set bandwidthPerMigration, completionTimeoutPerGiB, allowAutoConverge or allowPostCopy, or remove migrationPolicy"},
		{"negative bandwidth", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{BandwidthPerMigration: qty("-1Mi")}
		}, "spec.platforms[2].vm.migrationPolicy.bandwidthPerMigration: -1Mi is not between 0 (no cap) and 100Gi bytes per second: set a value in that range, such as 64Mi"},
		{"bandwidth above the bound", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{BandwidthPerMigration: qty("101Gi")}
		}, "spec.platforms[2].vm.migrationPolicy.bandwidthPerMigration: 101Gi is not between 0 (no cap) and 100Gi"},
		{"bandwidth at the bound", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{BandwidthPerMigration: qty("100Gi")}
		}, ""},
		{"completion timeout of 0", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{CompletionTimeoutPerGiB: ptrTo[int64](0)}
		}, "spec.platforms[2].vm.migrationPolicy.completionTimeoutPerGiB: 0 is not between 1 and 3600 seconds per GiB of guest memory: set a value in that range (KubeVirt's default is 150)"},
		{"completion timeout above the bound", func(s *BenchmarkSuite) {
			tuned(s).MigrationPolicy = &VMMigrationPolicy{CompletionTimeoutPerGiB: ptrTo[int64](3601)}
		}, "spec.platforms[2].vm.migrationPolicy.completionTimeoutPerGiB: 3601 is not between 1 and 3600"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := variantsSuite()
			tt.mutate(s)
			err := FirstInvalidValue(s)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("FirstInvalidValue() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("FirstInvalidValue() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestDedicatedCPUsOf(t *testing.T) {
	vm := Platform{Name: "vm", Type: PlatformVM, VM: &VMSettings{DedicatedCPUs: true}}
	container := Platform{Name: "container", Type: PlatformContainer, VM: &VMSettings{DedicatedCPUs: true}}
	if !vm.DedicatedCPUsOf(ClusterShape{}) || container.DedicatedCPUsOf(ClusterShape{}) {
		t.Error("vm.dedicatedCPUs pins a VM platform only")
	}
	if !container.DedicatedCPUsOf(ClusterShape{DedicatedCPUs: true}) || (Platform{Type: PlatformVM}).DedicatedCPUsOf(ClusterShape{}) {
		t.Error("cluster.dedicatedCPUs pins every platform, and nothing else does")
	}
}

func ptrTo[T any](v T) *T { return &v }
