package suite

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/platform"
)

// policyRun is a run of a VM platform with a migration policy of the given post-copy setting.
func policyRun(postCopy bool) platform.Run {
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "mp", Namespace: "bench"}}
	return platform.Run{Suite: suite, Name: "mp-vmpc-1", Platform: vmbenchv1.Platform{Name: "vmpc", Type: vmbenchv1.PlatformVM,
		VM: &vmbenchv1.VMSettings{MigrationPolicy: &vmbenchv1.VMMigrationPolicy{AllowPostCopy: ptr.To(postCopy)}}}}
}

func policyReconciler(c client.Client) *SuiteReconciler {
	return &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New(),
		Available: map[schema.GroupVersionKind]bool{migrationPolicyGVK: true}}
}

// A run's start makes its policy once: a retried start keeps the one it made; a policy of the same
// name left with other settings (a deleted suite's of the same name) is replaced, never used; a
// refusal by the API server fails the run with the refusal and what to do, and any other error is
// retried.
func TestEnsureMigrationPolicy(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	r := policyReconciler(c)
	name := platform.MigrationPolicyName("bench", "mp-vmpc-1")

	active := &vmbenchv1.RunStatus{}
	if msg, err := r.ensureMigrationPolicy(ctx, active, policyRun(true)); msg != "" || err != nil || active.MigrationPolicy != name {
		t.Fatalf("first start: %q, %v, recorded %q", msg, err, active.MigrationPolicy)
	}
	again := &vmbenchv1.RunStatus{}
	if msg, err := r.ensureMigrationPolicy(ctx, again, policyRun(true)); msg != "" || err != nil || again.MigrationPolicy != name {
		t.Fatalf("a retried start keeps the policy it made: %q, %v, recorded %q", msg, err, again.MigrationPolicy)
	}

	// Left with post-copy off: removed, and the start retried.
	stale := &vmbenchv1.RunStatus{}
	if msg, err := r.ensureMigrationPolicy(ctx, stale, policyRun(false)); msg != "" || err == nil || !strings.Contains(err.Error(), "being replaced") || stale.MigrationPolicy != "" {
		t.Fatalf("a policy with other settings: %q, %v, recorded %q; want it replaced and the start retried", msg, err, stale.MigrationPolicy)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, &migrationsv1alpha1.MigrationPolicy{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the stale policy is still there: %v", err)
	}
	if msg, err := r.ensureMigrationPolicy(ctx, stale, policyRun(false)); msg != "" || err != nil || stale.MigrationPolicy != name {
		t.Fatalf("the retried start: %q, %v", msg, err)
	}
	got := &migrationsv1alpha1.MigrationPolicy{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, got); err != nil || *got.Spec.AllowPostCopy {
		t.Fatalf("the run's own policy: %v, %+v", err, got.Spec)
	}

	creating := func(err error) *SuiteReconciler {
		return policyReconciler(fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
			Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return err },
		}).Build())
	}
	refused := apierrors.NewForbidden(schema.GroupResource{Group: "migrations.kubevirt.io", Resource: "migrationpolicies"}, name, errors.New("denied by vmbench-manager-children"))
	msg, err := creating(refused).ensureMigrationPolicy(ctx, &vmbenchv1.RunStatus{}, policyRun(true))
	if err != nil || !strings.HasPrefix(msg, "MigrationPolicyUnavailable: the API server refused MigrationPolicy "+name+" of platform vmpc: ") ||
		!strings.Contains(msg, "denied by vmbench-manager-children") || !strings.HasSuffix(msg, "or remove migrationPolicy from platform vmpc") {
		t.Errorf("refused: %q, %v", msg, err)
	}
	if msg, err := creating(errors.New("connection refused")).ensureMigrationPolicy(ctx, &vmbenchv1.RunStatus{}, policyRun(true)); msg != "" || err == nil {
		t.Errorf("a passing fault: %q, %v; want it retried, not the run failed", msg, err)
	}
	// A platform without a policy makes none, even where the API is missing.
	plain := policyRun(true)
	plain.Platform.VM = nil
	if msg, err := (&SuiteReconciler{}).ensureMigrationPolicy(ctx, &vmbenchv1.RunStatus{}, plain); msg != "" || err != nil {
		t.Errorf("no policy: %q, %v", msg, err)
	}
}

// The policies of a suite's runs go once the run is over, and all of them once the suite ended,
// is being deleted or is gone; a live run's policy and another suite's stay.
func TestCollectMigrationPolicies(t *testing.T) {
	ctx := context.Background()
	policy := func(ns, suite, run string) *migrationsv1alpha1.MigrationPolicy {
		r := policyRun(true)
		r.Suite = &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: suite, Namespace: ns}}
		r.Name = run
		return platform.MigrationPolicy(r)
	}
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "mp", Namespace: "bench"}}
	suite.Status.Runs = []vmbenchv1.RunStatus{{Name: "mp-vmpc-1", Phase: vmbenchv1.RunSucceeded},
		{Name: "mp-vmpc-2", Phase: vmbenchv1.RunFailed}, {Name: "mp-vmpc-3", Phase: vmbenchv1.RunRunning}, {Name: "mp-vmpc-4", Phase: vmbenchv1.RunPending}}
	key := types.NamespacedName{Namespace: "bench", Name: "mp"}
	remaining := func(s *vmbenchv1.BenchmarkSuite) []string {
		objs := []client.Object{policy("bench", "mp", "mp-vmpc-1"), policy("bench", "mp", "mp-vmpc-2"), policy("bench", "mp", "mp-vmpc-3"),
			policy("bench", "mp", "mp-vmpc-4"), policy("bench", "mp", "mp-vmpc-9"), policy("other", "mp", "mp-vmpc-1"), policy("bench", "mq", "mq-vmpc-1")}
		c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
		if err := policyReconciler(c).collectMigrationPolicies(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		list := &migrationsv1alpha1.MigrationPolicyList{}
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
		var runs []string
		for _, p := range list.Items {
			runs = append(runs, p.Labels[vmbenchv1.LabelSuiteNamespace]+"/"+p.Labels[vmbenchv1.LabelRun])
		}
		sort.Strings(runs)
		return runs
	}
	others := []string{"bench/mq-vmpc-1", "other/mp-vmpc-1"}
	if got := strings.Join(remaining(suite), " "); got != "bench/mp-vmpc-3 bench/mp-vmpc-4 "+strings.Join(others, " ") {
		t.Errorf("a suite that goes on keeps %q, want its pending and running runs' and the others'", got)
	}
	ended := suite.DeepCopy()
	ended.Status.Phase = vmbenchv1.SuiteFailed
	for name, s := range map[string]*vmbenchv1.BenchmarkSuite{"ended": ended, "gone": nil} {
		if got := strings.Join(remaining(s), " "); got != strings.Join(others, " ") {
			t.Errorf("a suite %s keeps %q, want only the other suites'", name, got)
		}
	}
}

// A policy brings back its suite, unless the suite's namespace is not one this manager runs suites
// in (another vmbench's, on the same cluster), or it is not vmbench's.
func TestSuiteOfMigrationPolicy(t *testing.T) {
	run := policyRun(true)
	policy := platform.MigrationPolicy(run)
	want := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "bench", Name: "mp"}}}
	for name, tc := range map[string]struct {
		namespaces []string
		obj        client.Object
		want       []reconcile.Request
	}{
		"every namespace":        {nil, policy, want},
		"its namespace":          {[]string{"team", "bench"}, policy, want},
		"another manager's":      {[]string{"team"}, policy, nil},
		"an administrator's own": {nil, &migrationsv1alpha1.MigrationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "slow"}}, nil},
	} {
		r := &SuiteReconciler{Namespaces: tc.namespaces}
		if got := r.suiteOfMigrationPolicy(context.Background(), tc.obj); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
