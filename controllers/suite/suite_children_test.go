package suite

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
)

var (
	mpiJobKind = mpiv2.SchemeGroupVersion.WithKind("MPIJob")
	vmiKind    = kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")
)

// failingMapper answers every mapping with err, as a mapper does when the API server cannot be reached.
type failingMapper struct {
	meta.RESTMapper
	err error
}

func (m failingMapper) RESTMapping(schema.GroupKind, ...string) (*meta.RESTMapping, error) {
	return nil, m.err
}

func TestAvailableKinds(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(mpiJobKind, meta.RESTScopeNamespace)
	got, err := AvailableKinds(mapper)
	if err != nil {
		t.Fatal(err)
	}
	if !got[mpiJobKind] || got[vmiKind] || got[migrationPolicyGVK] {
		t.Errorf("a mapper that knows MPIJob alone: %v", got)
	}
	mapper.Add(migrationPolicyGVK, meta.RESTScopeRoot)
	if got, err := AvailableKinds(mapper); err != nil || !got[migrationPolicyGVK] {
		t.Errorf("a mapper that knows KubeVirt's MigrationPolicy: %v, %v", got, err)
	}

	if got, err := AvailableKinds(failingMapper{err: errors.New("connection refused")}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("a mapper that cannot reach the API server: %v, %v, want the error, not an unavailable platform", got, err)
	}
}

func TestUnavailablePlatforms(t *testing.T) {
	for _, tc := range []struct {
		name      string
		available map[schema.GroupVersionKind]bool
		want      []string
	}{
		{"both served", map[schema.GroupVersionKind]bool{mpiJobKind: true, vmiKind: true}, nil},
		{"no MPI Operator", map[schema.GroupVersionKind]bool{vmiKind: true}, []string{
			"platforms of type Container and Host are unavailable: the MPIJob API (kubeflow.org/v2beta1) is not served; install the MPI Operator (its v2beta1 API) and restart vmbench",
		}},
		{"neither", map[schema.GroupVersionKind]bool{mpiJobKind: false}, []string{
			"platforms of type Container and Host are unavailable: the MPIJob API (kubeflow.org/v2beta1) is not served; install the MPI Operator (its v2beta1 API) and restart vmbench",
			"platforms of type VM are unavailable: the VirtualMachineInstance API (kubevirt.io/v1) is not served; install KubeVirt and restart vmbench",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := UnavailablePlatforms(tc.available)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// The children's owners are read at once, and the answer is the one the reads in order would give:
// the first child that another suite holds, or whose read failed, names the cause; a Secret, which
// the manager may not read, is never read.
func TestCheckOwnersAnswersForTheFirstChildInOrder(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "mine"}}
	other := metav1.OwnerReference{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSuite", Name: "old", UID: "theirs", Controller: ptr.To(true)}
	held := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", OwnerReferences: []metav1.OwnerReference{other}}}
	}
	child := func(obj client.Object, kind string) client.Object {
		obj.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
		return obj
	}
	secret := child(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keys", Namespace: "ns"}}, "Secret")
	children := func(names ...string) []client.Object {
		objs := []client.Object{secret}
		for _, n := range names {
			objs = append(objs, child(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns"}}, "ConfigMap"))
		}
		return objs
	}
	var secretsRead atomic.Int32
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(held("b"), held("c")).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "Secret" {
				secretsRead.Add(1)
			}
			if key.Name == "broken" {
				return errors.New("connection refused")
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}
	ctx := context.Background()

	cause, err := r.checkOwners(ctx, suite, children("a", "b", "c"))
	if err != nil || cause == nil || !strings.Contains(cause.Message, "ConfigMap b exists and is not this suite's") {
		t.Fatalf("want the cause of ConfigMap b, the first held, got %v, %v", cause, err)
	}
	cause, err = r.checkOwners(ctx, suite, children("a", "broken", "c"))
	if cause != nil || err == nil || !strings.Contains(err.Error(), "reading ConfigMap broken") {
		t.Fatalf("want the read error of ConfigMap broken, which comes before c, got %v, %v", cause, err)
	}
	cause, err = r.checkOwners(ctx, suite, children("c", "broken"))
	if err != nil || cause == nil || !strings.Contains(cause.Message, "ConfigMap c") {
		t.Fatalf("want the cause of ConfigMap c, which comes before the failed read, got %v, %v", cause, err)
	}
	if cause, err := r.checkOwners(ctx, suite, children("a", "d")); cause != nil || err != nil {
		t.Fatalf("no child exists: want nothing, got %v, %v", cause, err)
	}
	if n := secretsRead.Load(); n != 0 {
		t.Fatalf("the Secret was read %d times; the manager may not read Secrets", n)
	}
}
