package suite

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// storeOnAPIServer creates the suite on a real kube-apiserver with the CRD the chart installs and
// writes its status, so that the worst case is held against the schema's every limit and against
// the size the API server and etcd take, not only against a JSON estimate. It needs envtest's
// binaries (KUBEBUILDER_ASSETS, which make test-unit sets); without them it is skipped on a
// developer's machine and fails where VMBENCH_REQUIRE_TOOLS is set.
func storeOnAPIServer(t *testing.T, suite *vmbenchv1.BenchmarkSuite) {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		if os.Getenv("VMBENCH_REQUIRE_TOOLS") != "" {
			t.Fatal("KUBEBUILDER_ASSETS is not set and VMBENCH_REQUIRE_TOOLS is: run hack/envtest-assets.sh and export its output")
		}
		t.Skip("KUBEBUILDER_ASSETS is not set: the worst case is not written to an API server (make test-unit does)")
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("starting envtest: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stored := suite.DeepCopy()
	stored.Namespace = "default"
	stored.ResourceVersion = ""
	status := stored.Status.DeepCopy()
	if err := c.Create(ctx, stored); err != nil {
		t.Fatalf("the API server refuses the worst-case suite: %v", err)
	}
	stored.Status = *status
	if err := c.Status().Update(ctx, stored); err != nil {
		t.Fatalf("the API server refuses the worst-case status: %v", err)
	}
	back := &vmbenchv1.BenchmarkSuite{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(stored), back); err != nil {
		t.Fatal(err)
	}
	// What was written, as the API would read it back: times in seconds, as metav1.Time marshals.
	written := vmbenchv1.BenchmarkSuiteStatus{}
	raw, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &written); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(written, back.Status); diff != "" {
		t.Errorf("the status read back differs from the one written (-written +read):\n%s", diff)
	}
}
