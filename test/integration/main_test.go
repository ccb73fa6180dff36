// Package integration runs the suite controller against a real kube-apiserver and etcd (envtest),
// with the real CRDs of BenchmarkSuite, MPIJob and VirtualMachineInstance loaded. Nothing runs the
// children: each test drives their status by hand, step by step, as the MPI Operator and KubeVirt
// would, and feeds the runner's log through a fake log reader.
package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/metrics"
	"github.com/vmbench/vmbench/test/specpolicy"
)

var (
	cfg *rest.Config
	// k8s reads and writes directly, around any cache, so that assertions see the API server's truth.
	k8s      client.Client
	registry = prometheus.NewRegistry()
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS is not set: run `make test`, which provides kube-apiserver and etcd under bin/k8s")
		return 1
	}
	root := filepath.Join("..", "..")
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases"), filepath.Join(root, "bin", "crds")},
		ErrorIfCRDPathMissing: true,
	}
	var err error
	if cfg, err = env.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting envtest:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	if len(env.CRDs) < 3 {
		fmt.Fprintf(os.Stderr, "envtest loaded %d CRDs, want BenchmarkSuite, MPIJob and VirtualMachineInstance: run `make test`, which puts the child CRDs into bin/crds\n", len(env.CRDs))
		return 1
	}
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme.New()}); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	// The cross-field rules of a suite's spec are an admission policy the chart installs, not CRD rules.
	if err := specpolicy.Install(context.Background(), k8s, root); err != nil {
		fmt.Fprintln(os.Stderr, "installing the spec policy:", err)
		return 1
	}
	metrics.Register(registry)
	return m.Run()
}
