package suite

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// warmConversions converts, once at start, a run's children of every platform type as apply
// converts them. The first conversion of a Go type to unstructured builds the converter's
// reflection caches for every type it reaches; for a VirtualMachineInstance or an MPIJob (with its
// pod templates) that took 19-25 ms in a burst, and was paid by the first run's start of each
// platform type, the slowest reconcile of the manager's life (docs/performance.md, "Eighth pass").
// It returns the kinds it converted.
func warmConversions() ([]schema.GroupVersionKind, error) {
	var kinds []schema.GroupVersionKind
	for _, t := range []vmbenchv1.PlatformType{vmbenchv1.PlatformContainer, vmbenchv1.PlatformHost, vmbenchv1.PlatformVM} {
		adapter, err := platform.For(t)
		if err != nil {
			return nil, err
		}
		objs, err := adapter.Build(warmRun(t))
		if err != nil {
			return nil, fmt.Errorf("building a %s run to warm the conversions: %w", t, err)
		}
		for _, obj := range objs {
			if _, ok := obj.(*corev1.Secret); ok {
				continue // created as typed objects (createSecret), never converted
			}
			if _, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj); err != nil {
				return nil, fmt.Errorf("converting %T to warm the conversions: %w", obj, err)
			}
			kinds = append(kinds, obj.GetObjectKind().GroupVersionKind())
		}
	}
	return kinds, nil
}

// warmRun is a run with the most that a suite can give its children: every benchmark, a placement,
// shared storage and iozone on it.
func warmRun(t vmbenchv1.PlatformType) platform.Run {
	memory, storage := resource.MustParse("2Gi"), resource.MustParse("4Gi")
	p := vmbenchv1.Platform{Name: "warm", Type: t}
	var benchmarks []vmbenchv1.Benchmark
	for _, b := range []vmbenchv1.BenchmarkType{vmbenchv1.BenchmarkHPCC, vmbenchv1.BenchmarkSysbenchCPU, vmbenchv1.BenchmarkSysbenchMemory,
		vmbenchv1.BenchmarkStressNGCPU, vmbenchv1.BenchmarkStressNGVM, vmbenchv1.BenchmarkIozone, vmbenchv1.BenchmarkIperf3,
		vmbenchv1.BenchmarkPing, vmbenchv1.BenchmarkFio} {
		benchmarks = append(benchmarks, vmbenchv1.Benchmark{Name: string(b), Type: b}.WithDefaults())
	}
	for i := range benchmarks {
		if io := benchmarks[i].Iozone; io != nil { // on both targets: a Container run's shared claim too
			io.Targets = []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}
		}
	}
	suite := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "warm", Namespace: "warm", UID: "warm"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms:  []vmbenchv1.Platform{p},
			Baseline:   p.Name,
			Cluster:    vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: &memory},
			Benchmarks: benchmarks,
			Placement: vmbenchv1.Placement{
				NodeSelector: map[string]vmbenchv1.LabelValue{"vmbench.io/pool": "warm"},
				Tolerations:  []vmbenchv1.Toleration{{Key: "vmbench.io/pool", Operator: "Exists", Effect: "NoSchedule"}},
			},
			SharedStorage: &vmbenchv1.SharedStorage{StorageClassName: "warm", Size: &storage},
		},
	}
	run := platform.Run{Suite: suite, Name: "warm-1", Platform: p, Repetition: 1, Benchmarks: benchmarks,
		SecretsOwner: "warm", NetworkPolicy: true, VMNetwork: platform.VMNetworkPasst, Deadline: time.Hour,
		// Stand-ins of the right shape: nothing built here leaves the process.
		Auth: platform.Auth{Token: []byte("warm"), SSHPrivateKey: []byte("warm"), SSHPublicKey: []byte("warm"),
			SSHHostKey: []byte("warm"), SSHHostPublicKey: []byte("warm"), KnownHosts: []byte("warm")},
		Images: platform.Images{Runner: "warm", VMDisk: "warm"}}
	run.AuthSecret = runAuthSecretName(run)
	return run
}
