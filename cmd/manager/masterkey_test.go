package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/masterkey"
)

// ownProcess names the test that runs in the process it is set in.
const ownProcess = "VMBENCH_TEST_OWN_PROCESS"

// inOwnProcess says whether the test runs in a process of its own; when not, it runs the test again
// in a new process, fails with its output if that fails, and the caller returns.
func inOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(ownProcess) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), ownProcess+"="+t.Name())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	return false
}

// The master key Secret is deleted after its first use: the manager starts all the same, makes no
// new key, and a suite stays in line saying MasterKeyMissing. A process registers the controller's
// name once, so this test runs newManager in a process of its own.
func TestManagerStartsWithoutItsDeletedMasterKey(t *testing.T) {
	if !inOwnProcess(t) {
		return
	}
	cfg, k8s, _ := startAPIServer(t, []string{"config/crd/bases"}, "vmbench-system", "bench")
	ctx, cancel := context.WithCancel(context.Background())
	o := validOptions()
	o.metricsAddr, o.probeAddr, o.containerStart, o.vmStart = "0", "0", time.Minute, time.Minute
	ref, _ := o.masterKey()
	// The first start: the key is minted and recorded. Then the Secret goes.
	if _, err := masterkey.LoadMasterKey(ctx, k8s, ref); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace}}); err != nil {
		t.Fatal(err)
	}

	mgr, err := newManager(ctx, cfg, o)
	if err != nil {
		cancel()
		t.Fatalf("the manager does not start without its master key: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	if err := k8s.Get(ctx, ref, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the master key Secret after the start: %v; want none made", err)
	}

	sample, err := os.ReadFile(filepath.Join(repoRoot, "config", "samples", "suite-quick.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	suite := &vmbenchv1.BenchmarkSuite{}
	if err := yaml.UnmarshalStrict(sample, suite); err != nil {
		t.Fatal(err)
	}
	suite.Name, suite.Namespace = "waits", "bench"
	if err := k8s.Create(ctx, suite); err != nil {
		t.Fatal(err)
	}
	var queued *metav1.Condition
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(suite), suite); err != nil {
			t.Fatal(err)
		}
		if queued = meta.FindStatusCondition(suite.Status.Conditions, vmbenchv1.ConditionQueued); queued != nil {
			break
		}
	}
	want := "the suite stays in line until the manager has its master key: the master key Secret vmbench-system/vmbench-master-key is missing"
	if queued == nil || queued.Reason != masterkey.ReasonMasterKeyMissing || !strings.HasPrefix(queued.Message, want) {
		t.Errorf("Queued = %+v, want reason %s and a message starting %q", queued, masterkey.ReasonMasterKeyMissing, want)
	}
	if suite.Status.StartTime != nil {
		t.Error("the suite was admitted without a master key")
	}
}
