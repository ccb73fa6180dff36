package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/platform"
)

// TestRunStartRoundTrips pins the requests a run's start makes to the API server, in the rounds
// they go in: each round is held until all of its requests wait at once, and only then answered.
// A run's start is the slowest reconcile of a burst, and its time is its rounds one after the other
// (docs/performance.md, "Fourth pass": 10 rounds for a container run before, 4 now, and the status
// write after them). A request made one after another again, or a new one, fails the test: the
// round it belongs to never fills, or a round comes that is not listed.
func TestRunStartRoundTrips(t *testing.T) {
	suite := keyedSuite()
	suite.Status.StartTime = &metav1.Time{Time: time.Now()}
	syncRuns(&suite.Status, plannedRuns(suite))
	authOf := func(run string) string {
		return platform.SecretName(platform.Run{Name: run, SecretsOwner: types.UID("uid-" + run + "-secrets")}, run+"-auth")
	}
	cloudInitOf := func(run, vmi string) string {
		return platform.SecretName(platform.Run{Name: run, SecretsOwner: types.UID("uid-" + run + "-secrets")}, vmi+"-cloudinit")
	}
	for _, tc := range []struct {
		run    string
		rounds [][]string
	}{{
		run: "demo-container-1",
		rounds: [][]string{
			// Is the cache's suite the API server's (staleCache), and is each child's name free
			// (checkOwners)?
			{"get BenchmarkSuite demo", "get ConfigMap demo-container-1-plan", "get MPIJob demo-container-1",
				"get NetworkPolicy demo-container-1", "get PodDisruptionBudget demo-container-1"},
			// The ConfigMap that owns the run's Secrets: their names come from its UID.
			{"create ConfigMap demo-container-1-secrets"},
			// What the workload needs: its keys, its plan, the policy that fences its pods, its
			// disruption budget.
			{"apply ConfigMap demo-container-1-plan", "apply NetworkPolicy demo-container-1",
				"apply PodDisruptionBudget demo-container-1", "create Secret " + authOf("demo-container-1")},
			// The workload.
			{"apply MPIJob demo-container-1"},
		},
	}, {
		run: "demo-vm-1",
		rounds: [][]string{
			{"get BenchmarkSuite demo", "get NetworkPolicy demo-vm-1", "get Service demo-vm-1",
				"get VirtualMachineInstance demo-vm-1-master", "get VirtualMachineInstance demo-vm-1-node01",
				"get VirtualMachineInstance demo-vm-1-node02"},
			// KubeVirt's configuration (emulation, network binding, virt-launcher), then whether
			// the namespace's Pod Security level admits virt-launcher pods.
			{"list KubeVirt"},
			{"get Namespace bench"},
			{"create ConfigMap demo-vm-1-secrets"},
			{"apply NetworkPolicy demo-vm-1", "apply Service demo-vm-1", "create Secret " + authOf("demo-vm-1"),
				"create Secret " + cloudInitOf("demo-vm-1", "demo-vm-1-master"), "create Secret " + cloudInitOf("demo-vm-1", "demo-vm-1-node01"),
				"create Secret " + cloudInitOf("demo-vm-1", "demo-vm-1-node02")},
			{"apply VirtualMachineInstance demo-vm-1-master", "apply VirtualMachineInstance demo-vm-1-node01",
				"apply VirtualMachineInstance demo-vm-1-node02"},
		},
	}} {
		t.Run(tc.run, func(t *testing.T) {
			g := newRoundGate()
			r := gatedReconciler(t, g, suite, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}})
			s := &vmbenchv1.BenchmarkSuite{}
			if err := r.Get(context.Background(), client.ObjectKeyFromObject(suite), s); err != nil {
				t.Fatal(err)
			}
			planned := plannedByName(s, tc.run)
			run, err := r.platformRun(s, planned, DefaultedBenchmarks(s))
			if err != nil {
				t.Fatal(err)
			}
			adapter, err := platform.For(planned.Platform.Type)
			if err != nil {
				t.Fatal(err)
			}
			active := &s.Status.Runs[slices.IndexFunc(s.Status.Runs, func(r vmbenchv1.RunStatus) bool { return r.Name == tc.run })]
			ended := make(chan struct{})
			var st step
			go func() {
				defer close(ended)
				now := time.Now()
				st, err = r.startRun(context.Background(), s, active, adapter, run, now, now.Add(time.Hour), time.Hour)
			}()
			defer func() { g.releaseAll(); <-ended }()
			for i, want := range tc.rounds {
				got := g.next(len(want), ended)
				if !slices.Equal(got, want) {
					t.Fatalf("round %d of %d: the start made %q at once, want %q", i+1, len(tc.rounds), got, want)
				}
			}
			if more := g.next(1, ended); len(more) > 0 {
				t.Fatalf("after the %d rounds the start made another: %q", len(tc.rounds), more)
			}
			<-ended
			if err != nil || active.Phase != vmbenchv1.RunRunning || st.waiting != nil {
				t.Fatalf("the start = %v, %v, run phase %s (%s); want the run Running", st, err, active.Phase, active.Message)
			}
		})
	}
}

// roundGate holds every request to the API server until the test releases the round it is in.
type roundGate struct {
	mu      sync.Mutex
	waiting []string
	release chan struct{}
	arrived chan struct{}
}

func newRoundGate() *roundGate {
	return &roundGate{release: make(chan struct{}), arrived: make(chan struct{}, 1)}
}

// pass holds a request until its round is released.
func (g *roundGate) pass(request string) {
	g.mu.Lock()
	g.waiting = append(g.waiting, request)
	release := g.release
	g.mu.Unlock()
	select {
	case g.arrived <- struct{}{}:
	default:
	}
	<-release
}

// next waits until n requests wait at once, then releases them and returns them sorted. It returns
// fewer when the start ended first, or when no more came within roundWait: the code under test went
// on no further, as it waits for one of the requests held.
func (g *roundGate) next(n int, ended <-chan struct{}) []string {
	timeout := time.After(roundWait)
	for {
		g.mu.Lock()
		if len(g.waiting) >= n {
			got := g.waiting
			g.waiting = nil
			close(g.release)
			g.release = make(chan struct{})
			g.mu.Unlock()
			slices.Sort(got)
			return got
		}
		g.mu.Unlock()
		select {
		case <-g.arrived:
		case <-ended:
			g.mu.Lock()
			defer g.mu.Unlock()
			return slices.Sorted(slices.Values(g.waiting))
		case <-timeout:
			g.mu.Lock()
			defer g.mu.Unlock()
			return slices.Sorted(slices.Values(g.waiting))
		}
	}
}

// roundWait is how long a round may take to fill. Requests made at once arrive within microseconds;
// only a test that is to fail waits this long.
const roundWait = 10 * time.Second

// releaseAll lets every request held now or later go, so that the code under test ends.
func (g *roundGate) releaseAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.release)
	g.release = make(chan struct{})
	close(g.release)
}

// gatedReconciler is a reconciler whose requests to the API server (the reads around the cache,
// every write) pass the gate, named by verb, kind and name; reads from its cache do not. The
// writes succeed without being stored; a created object gets the UID uid-<name>. KubeVirt's
// configuration is read as none.
func gatedReconciler(t *testing.T, g *roundGate, objs ...client.Object) *SuiteReconciler {
	t.Helper()
	s := scheme.New()
	base := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	name := func(verb string, obj runtime.Object, key string) string {
		gvk, err := apiutil.GVKForObject(obj, s)
		if err != nil {
			t.Errorf("%s %T %s: %v", verb, obj, key, err)
		}
		return strings.TrimSpace(fmt.Sprintf("%s %s %s", verb, strings.TrimSuffix(gvk.Kind, "List"), key))
	}
	cached := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			g.pass(name("create", obj, obj.GetName()))
			obj.SetUID(types.UID("uid-" + obj.GetName()))
			return nil
		},
		Apply: func(_ context.Context, _ client.WithWatch, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
			u := obj.(interface{ UnstructuredContent() map[string]any })
			o := &unstructured.Unstructured{Object: u.UnstructuredContent()}
			g.pass(fmt.Sprintf("apply %s %s", o.GetKind(), o.GetName()))
			return nil
		},
		Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, _ client.Patch, _ ...client.PatchOption) error {
			g.pass(name("patch", obj, obj.GetName()))
			return nil
		},
		Update: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.UpdateOption) error {
			g.pass(name("update", obj, obj.GetName()))
			return nil
		},
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.DeleteOption) error {
			g.pass(name("delete", obj, obj.GetName()))
			return nil
		},
	})
	uncached := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			g.pass(name("get", obj, key.Name))
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			g.pass(name("list", list, ""))
			if u, ok := list.(*unstructured.UnstructuredList); ok && u.GroupVersionKind() == platform.KubeVirtListGVK {
				return nil
			}
			return c.List(ctx, list, opts...)
		},
	})
	return &SuiteReconciler{
		Client: cached, APIReader: uncached, Scheme: s, MasterKey: testMasterKey, NetworkPolicy: true,
		VMNetwork: platform.VMNetworkPasst, ContainerStartup: time.Hour, VMStartup: time.Hour,
		Available: map[schema.GroupVersionKind]bool{
			mpiv2.SchemeGroupVersion.WithKind("MPIJob"):                      true,
			kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"): true,
		},
	}
}
