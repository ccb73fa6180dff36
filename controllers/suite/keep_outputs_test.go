package suite

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/controllers/suite/summary"
)

// keepWith is a reconciler whose every apply ends with err.
func keepWith(err error) *SuiteReconciler {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
			return err
		},
	}).Build()
	return &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}
}

func TestKeepOutputsRetriesOnlyWhatMayHealAndOnlyUntilCollectRetry(t *testing.T) {
	suite := testSuite()
	suite.UID = "suite-uid"
	raw := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-raw", Namespace: "bench"}, Data: map[string]string{"x.txt": "x"}}
	tablesMap := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-tables", Namespace: "bench"},
		Data:       map[string]string{"net.master-node01.csv": "a\n1\n", "net.node01-master.csv": "a\n1\n", "disk.master.local.csv": "a\n1\n"}}
	outs := sideOutputs(raw, summary.RunTables{Maps: []*corev1.ConfigMap{tablesMap}})
	ended := finishNow
	retryEnd := ended.Add(collectRetry)
	gr := schema.GroupResource{Resource: "configmaps"}

	unavailable := apierrors.NewServiceUnavailable("etcd leader changed")
	got := keepWith(unavailable).keepOutputs(t.Context(), suite, "demo-container-1", outs, ended.Add(time.Minute), retryEnd)
	if got.retry == nil || got.retry.Reason != ReasonOutputsUnwritable || len(got.notKept) != 0 ||
		!strings.Contains(got.retry.Message, "writing ConfigMap demo-container-1-raw (the run's raw outputs) of run demo-container-1 failed, retrying until") {
		t.Errorf("a 503 within collectRetry: %+v", got)
	}
	got = keepWith(unavailable).keepOutputs(t.Context(), suite, "demo-container-1", outs, retryEnd, retryEnd)
	if got.retry != nil || len(got.notKept) != 2 || !strings.Contains(got.notKept[0], "was not written: gave up after 10m0s") {
		t.Errorf("a 503 at the end of collectRetry: %+v", got)
	}
	if got.lost["net"] != 2 || got.lost["disk"] != 1 {
		t.Errorf("tables lost %v, want net 2, disk 1", got.lost)
	}

	quota := apierrors.NewForbidden(gr, "demo-container-1-raw", quotaExceeded())
	got = keepWith(quota).keepOutputs(t.Context(), suite, "demo-container-1", outs, ended.Add(time.Minute), retryEnd)
	if got.retry != nil || len(got.notKept) != 2 || !strings.Contains(got.notKept[0], "exceeded quota") ||
		!strings.Contains(got.notKept[0], "raise its count/configmaps") {
		t.Errorf("a quota refusal is not retried: %+v", got)
	}

	webhook := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "demo-container-1-raw", nil)
	got = keepWith(webhook).keepOutputs(t.Context(), suite, "demo-container-1", outs, ended.Add(time.Minute), retryEnd)
	if got.retry != nil || len(got.notKept) != 2 || !strings.Contains(got.notKept[0], "ask the cluster's admins to admit vmbench's ConfigMaps") {
		t.Errorf("a refusal for good: %+v", got)
	}

	got = keepWith(nil).keepOutputs(t.Context(), suite, "demo-container-1", outs, ended.Add(time.Minute), retryEnd)
	if got.retry != nil || len(got.notKept) != 0 || len(got.lost) != 0 {
		t.Errorf("written: %+v", got)
	}
}

func quotaExceeded() error {
	return errorString("exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=0, limited: count/configmaps=0")
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestNotKeptWarning(t *testing.T) {
	st := &vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{{Name: "a-1"}, {Name: "a-2", NotKept: "ConfigMap a-2-raw (the run's raw outputs) was not written: x"}}}
	if got, want := notKeptWarning(st), "run a-2 kept its results in status, but not all its raw outputs or tables: ConfigMap a-2-raw (the run's raw outputs) was not written: x"; got != want {
		t.Errorf("notKeptWarning() = %q, want %q", got, want)
	}
	st.Runs[0].NotKept = "ConfigMap a-1-tables (the run's result tables) was not written: y"
	if got := notKeptWarning(st); !strings.HasPrefix(got, "runs a-1, a-2 kept their results in status, but not all their raw outputs or tables "+
		"(status.runs[].notKept says why for each); run a-1: ConfigMap a-1-tables") {
		t.Errorf("notKeptWarning() = %q", got)
	}
	if got := notKeptWarning(&vmbenchv1.BenchmarkSuiteStatus{Runs: []vmbenchv1.RunStatus{{Name: "a-1"}}}); got != "" {
		t.Errorf("nothing lost, warning %q", got)
	}
}
