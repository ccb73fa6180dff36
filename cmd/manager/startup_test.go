package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// syncBuffer is a log sink that the manager's goroutines and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// On a cluster with neither the MPI Operator nor KubeVirt (an API server with vmbench's CRD alone),
// the manager starts, says which platform types are unavailable and why, and fails each run of
// those types with that cause instead of waiting for children that cannot exist.
func TestManagerStartsWithoutMPIOperatorAndKubeVirt(t *testing.T) {
	logs := &syncBuffer{}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	cfg, k8s, _ := startAPIServer(t, []string{"config/crd/bases"}, "vmbench-system", "bench")
	ctx, cancel := context.WithCancel(context.Background())

	o := validOptions()
	o.metricsAddr, o.probeAddr, o.containerStart, o.vmStart = "0", "0", time.Minute, time.Minute
	mgr, err := newManager(ctx, cfg, o)
	if err != nil {
		cancel()
		t.Fatalf("the manager does not start without the MPIJob and VirtualMachineInstance APIs: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	for _, want := range []string{
		"platforms of type Container and Host are unavailable: the MPIJob API (kubeflow.org/v2beta1) is not served; install the MPI Operator",
		"platforms of type VM are unavailable: the VirtualMachineInstance API (kubevirt.io/v1) is not served; install KubeVirt",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the manager's log does not say %q:\n%s", want, logs.String())
		}
	}

	// The sample suite, once with its container platform and once with its VM platform.
	sample, err := os.ReadFile(filepath.Join(repoRoot, "config", "samples", "suite-quick.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[vmbenchv1.PlatformType]string{
		vmbenchv1.PlatformContainer: "PlatformUnavailable: the MPIJob API (kubeflow.org/v2beta1) is not installed in this cluster",
		vmbenchv1.PlatformVM:        "PlatformUnavailable: the VirtualMachineInstance API (kubevirt.io/v1) is not installed in this cluster",
	}
	for platformType := range want {
		suite := &vmbenchv1.BenchmarkSuite{}
		if err := yaml.UnmarshalStrict(sample, suite); err != nil {
			t.Fatal(err)
		}
		suite.Name, suite.Namespace = strings.ToLower(string(platformType)), "bench"
		for _, p := range suite.Spec.Platforms {
			if p.Type == platformType {
				suite.Spec.Platforms, suite.Spec.Baseline = []vmbenchv1.Platform{p}, p.Name
				break
			}
		}
		if err := k8s.Create(ctx, suite); err != nil {
			t.Fatal(err)
		}
	}
	for platformType, message := range want {
		key := client.ObjectKey{Namespace: "bench", Name: strings.ToLower(string(platformType))}
		var got string
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			suite := &vmbenchv1.BenchmarkSuite{}
			if err := k8s.Get(ctx, key, suite); err != nil {
				t.Fatal(err)
			}
			if len(suite.Status.Runs) > 0 && suite.Status.Runs[0].Phase == vmbenchv1.RunFailed {
				got = suite.Status.Runs[0].Message
				break
			}
		}
		if !strings.HasPrefix(got, message) {
			t.Errorf("%s suite: first run's message %q, want one starting %q", platformType, got, message)
		}
	}
}

// repoRoot is the repository's root, from this package's directory.
var repoRoot = filepath.Join("..", "..")

// startAPIServer starts envtest's API server with the CRDs of the given directories (relative to the
// repository's root) and the given namespaces, and stops it when the test ends. It says how many
// CRDs it loaded.
func startAPIServer(t *testing.T, crdDirs []string, namespaces ...string) (*rest.Config, client.Client, int) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-unit`, which provides kube-apiserver and etcd under bin/k8s")
	}
	env := &envtest.Environment{ErrorIfCRDPathMissing: true}
	for _, dir := range crdDirs {
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, filepath.Join(repoRoot, dir))
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	return cfg, k8s, len(env.CRDs)
}
