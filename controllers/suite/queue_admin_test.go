package suite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runqueue"
	"github.com/vmbench/vmbench/controllers/runqueue/runqueuetest"
	"github.com/vmbench/vmbench/controllers/scheme"
)

// The annotation's end fails the runs that have not ended, keeps the others, and the suite fails
// with reason EndedByAdmin on this and every later reconcile.
func TestEndFailsTheSuiteWithReasonEndedByAdmin(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{
		{Name: "x-container-1", Phase: vmbenchv1.RunSucceeded},
		{Name: "x-vm-1", Phase: vmbenchv1.RunRunning},
		{Name: "x-container-2", Phase: vmbenchv1.RunPending},
	}}
	if !endRuns(st, metav1.Time{Time: runqueuetest.Epoch}) {
		t.Fatal("endRuns ended nothing")
	}
	phases := []vmbenchv1.RunPhase{}
	for _, r := range st.Runs {
		phases = append(phases, r.Phase)
	}
	if diff := cmp.Diff([]vmbenchv1.RunPhase{vmbenchv1.RunSucceeded, vmbenchv1.RunFailed, vmbenchv1.RunFailed}, phases); diff != "" {
		t.Errorf("run phases (-want +got):\n%s", diff)
	}
	for pass := range 2 {
		setConditions(st, suiteState{Now: runqueuetest.Epoch})
		failed := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionFailed)
		if st.Phase != vmbenchv1.SuiteFailed || failed == nil || failed.Reason != ReasonEndedByAdmin ||
			!strings.Contains(failed.Message, "ended by the annotation vmbench.io/queue=end") {
			t.Errorf("pass %d: phase %s, Failed %+v, want Failed with reason %s naming the annotation", pass, st.Phase, failed, ReasonEndedByAdmin)
		}
	}
	if endRuns(st, metav1.Time{Time: runqueuetest.Epoch}) {
		t.Error("endRuns ended runs of an ended suite again")
	}
}

// Requeue: the Lease is marked requeued and holds the slot until the stopped run's pods are gone;
// the running run goes back to Pending with its children deleted; the suite waits in line again,
// behind another namespace's suite that waited, not ahead of it.
func TestRequeueGivesTheSlotBackAndMovesNoOneBack(t *testing.T) {
	ctx := context.Background()
	mine, theirs := runqueuetest.Queued("a", "mine", 0), runqueuetest.Queued("b", "theirs", 100)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "mine-container-1-launcher",
		Labels: map[string]string{vmbenchv1.LabelSuite: "mine", vmbenchv1.LabelRun: "mine-container-1"}}}
	plan := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "mine-container-1-plan",
		Labels:          map[string]string{vmbenchv1.LabelSuite: "mine", vmbenchv1.LabelRun: "mine-container-1"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&mine, vmbenchv1.GroupVersion.WithKind("BenchmarkSuite"))}}}
	b := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(&mine, &theirs, pod, plan)
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Service{}, &corev1.PersistentVolumeClaim{}, &networkingv1.NetworkPolicy{},
		&policyv1.PodDisruptionBudget{}} {
		b = b.WithIndex(obj, ownerIndex, indexOwner)
	}
	c := b.Build()
	r := &SuiteReconciler{Client: c, APIReader: c, MaxActiveRuns: 1, MaxActiveRunsPerNamespace: 1, QueueNamespace: runqueuetest.Namespace}
	if d, _ := admitNow(t, r.runQueue(), c, runqueuetest.Key("a", "mine")); !d.Admitted {
		t.Fatalf("mine: %+v, want admitted", d)
	}
	suite := runqueuetest.GetSuite(t, c, runqueuetest.Key("a", "mine"))
	suite.Status.Runs = []vmbenchv1.RunStatus{{Name: "mine-container-1", Platform: "container", Repetition: 1, Phase: vmbenchv1.RunRunning,
		StartTime: &metav1.Time{Time: runqueuetest.Epoch}, Message: "starting"}}
	if err := r.requeue(ctx, suite); err != nil {
		t.Fatal(err)
	}
	want := vmbenchv1.RunStatus{Name: "mine-container-1", Platform: "container", Repetition: 1, Phase: vmbenchv1.RunPending}
	if diff := cmp.Diff(want, suite.Status.Runs[0]); diff != "" {
		t.Errorf("the stopped run (-want +got):\n%s", diff)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(plan), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the stopped run's children are not deleted: %v", err)
	}
	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: runqueuetest.Namespace, Name: runqueue.SlotLeaseName(mine.UID)}, lease); err != nil ||
		lease.Annotations[runqueue.AnnotationSlotRequeued] != "true" {
		t.Fatalf("the Lease %v (%v), want it marked requeued", lease.Annotations, err)
	}
	// Requeued again: nothing more happens.
	if err := r.requeue(ctx, suite); err != nil {
		t.Fatal(err)
	}

	// Its pod is still there: the slot stays held, and the suite waits.
	if err := c.Update(ctx, suite); err != nil {
		t.Fatal(err)
	}
	d, s := admitNow(t, r.runQueue(), c, runqueuetest.Key("a", "mine"))
	if d.Wait == nil || s.Status.StartTime != nil {
		t.Fatalf("mine after the requeue: %+v (start %v), want a wait", d, s.Status.StartTime)
	}
	if d, _ := admitNow(t, r.runQueue(), c, runqueuetest.Key("b", "theirs")); d.Wait == nil || d.Wait.Draining != 1 {
		t.Fatalf("theirs: %+v, want a wait for mine's pods", d)
	}
	if err := c.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// The slot is free: the other namespace's suite goes first, as "a" had the last turn.
	if d, _ := admitNow(t, r.runQueue(), c, runqueuetest.Key("a", "mine")); d.Wait == nil || d.Wait.Position != 1 {
		t.Fatalf("mine: %+v, want a wait behind theirs", d)
	}
	if d, _ := admitNow(t, r.runQueue(), c, runqueuetest.Key("b", "theirs")); !d.Admitted {
		t.Fatalf("theirs: %+v, want admitted ahead of the requeued suite", d)
	}
}

// admitNow reads the suite and asks the queue to admit it an hour after the suites were created.
func admitNow(t *testing.T, q *runqueue.Queue, c client.Client, k types.NamespacedName) (runqueue.Decision, *vmbenchv1.BenchmarkSuite) {
	t.Helper()
	s := runqueuetest.GetSuite(t, c, k)
	d, err := q.Admit(context.Background(), s, runqueuetest.Epoch.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	return d, s
}
