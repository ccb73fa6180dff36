package suite

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/platform"
)

// TestPeerWhileProbing protects the VM arm's peer on the manager's side: once the probe started it
// makes <run>-probe-1 once (a second pass makes no other); a creation the API server refuses, and a
// worker the scheduler cannot place, are named in the run's message (with the figure the benchmark
// goes on without) and in one ProbePeerMissing event however many passes see them, and nothing fails;
// a worker placed since clears the message; past the probe's end nothing is made.
func TestPeerWhileProbing(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "pp", Namespace: "bench", UID: "u-pp"}}
	run := platform.Run{Suite: suite, Name: "pp-vm-1", Platform: vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM}}
	params := *vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{}}.WithDefaults().Migration
	active := func() *vmbenchv1.RunStatus {
		return &vmbenchv1.RunStatus{Name: run.Name, ProbeStartTime: &metav1.Time{Time: now.Add(-10 * time.Second)}}
	}
	reconciler := func(c client.Client) (*SuiteReconciler, *events.FakeRecorder) {
		rec := events.NewFakeRecorder(10)
		return &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New(), Recorder: rec}, rec
	}

	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	r, _ := reconciler(c)
	a := active()
	r.peerWhileProbing(ctx, suite, a, run, params, now)
	r.peerWhileProbing(ctx, suite, a, run, params, now.Add(time.Second))
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods); err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "pp-vm-1-probe-1" || a.Message != "" {
		t.Fatalf("pods %v (%v), message %q; want pp-vm-1-probe-1 alone and no message", pods.Items, err, a.Message)
	}
	if !metav1.IsControlledBy(&pods.Items[0], suite) {
		t.Error("the peer is not the suite's: it would outlive a deleted suite")
	}

	// Refused: named once, nothing fails.
	refused := apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "pp-vm-1-probe-1", errors.New("denied by a policy"))
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return refused },
	}).Build()
	r, rec := reconciler(c)
	a = active()
	r.peerWhileProbing(ctx, suite, a, run, params, now)
	r.peerWhileProbing(ctx, suite, a, run, params, now.Add(time.Second))
	if !strings.Contains(a.Message, "pp-vm-1-probe-1 (the in-guest probe's peer) was not made") || !strings.Contains(a.Message, "denied by a policy") ||
		!strings.Contains(a.Message, "goes on without the peer's figure (peer_gap_ms)") {
		t.Errorf("refused: message %q", a.Message)
	}
	if n := len(rec.Events); n != 1 {
		t.Errorf("refused twice: %d events, want one", n)
	} else if e := <-rec.Events; !strings.Contains(e, "ProbePeerMissing") {
		t.Errorf("event %q, want ProbePeerMissing", e)
	}

	// Unschedulable, then placed.
	pod := platform.ProbeWorkerPod(run, 1, time.Minute, "")
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(suite, vmbenchv1.GroupVersion.WithKind("BenchmarkSuite"))}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 Insufficient cpu."}}
	c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod).WithStatusSubresource(pod).Build()
	r, _ = reconciler(c)
	a = active()
	r.peerWhileProbing(ctx, suite, a, run, params, now)
	if !strings.Contains(a.Message, "cannot be placed: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.") {
		t.Errorf("unschedulable: message %q", a.Message)
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	if err := c.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	r.peerWhileProbing(ctx, suite, a, run, params, now)
	if a.Message != "" {
		t.Errorf("placed since: message %q, want it cleared", a.Message)
	}

	// Past the probe's end: nothing made.
	c = fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	r, _ = reconciler(c)
	r.peerWhileProbing(ctx, suite, active(), run, params, now.Add(params.ProbeDuration()))
	if err := c.List(ctx, pods); err != nil || len(pods.Items) != 0 {
		t.Errorf("after the probe: pods %v (%v), want none", pods.Items, err)
	}
}
