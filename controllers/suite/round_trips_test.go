package suite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// (docs/performance.md, "Fourth pass": 9 rounds for a container run and 15 for a VM run before, 4
// now, and the status write after them). A request made one after another again, or a new one, fails the test: the
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
			// Also KubeVirt's configuration (emulation, network binding, virt-launcher), and the
			// namespace, whose Pod Security level must admit virt-launcher pods.
			{"get BenchmarkSuite demo", "get Namespace bench", "get NetworkPolicy demo-vm-1", "get Service demo-vm-1",
				"get VirtualMachineInstance demo-vm-1-master", "get VirtualMachineInstance demo-vm-1-node01",
				"get VirtualMachineInstance demo-vm-1-node02", "list KubeVirt"},
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

// TestRunEndRoundTrips pins the requests of the reconcile that ends a run besides its status write,
// in rounds as TestRunStartRoundTrips does: the launcher Job that must control the log's pod is read
// while the pods are listed, and the run's children are deleted at once (docs/performance.md, "Fourth
// pass": 2 rounds before the status write and 5 after it before, 1 and 1 now). A deletion that fails
// answers for the first child in order, as one after the other did.
func TestRunEndRoundTrips(t *testing.T) {
	suite := keyedSuite()
	runName := "demo-container-1"
	keys := mustFrameKeys(t, suite, runName)
	mpiJob := &mpiv2.MPIJob{TypeMeta: metav1.TypeMeta{APIVersion: mpiv2.SchemeGroupVersion.String(), Kind: "MPIJob"},
		ObjectMeta: metav1.ObjectMeta{Name: runName, Namespace: suite.Namespace, UID: "mpijob-uid"}}
	launcher := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: runName + "-launcher", Namespace: suite.Namespace, UID: "job-uid",
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(mpiJob, mpiv2.SchemeGroupVersion.WithKind("MPIJob"))}}}
	src := platform.MPIJobAdapter{}.LogSource(platform.Run{Suite: suite, Name: runName})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: runName + "-launcher-abcde", Namespace: suite.Namespace, Labels: src.Selector,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(launcher, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	// The run's children as the cache lists them (listChildren): the kinds cached as metadata only,
	// then the MPIJob.
	var children []client.Object
	for _, c := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), runName + "-plan"},
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), runName + "-secrets"},
		{networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), runName},
		{policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), runName},
	} {
		child := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: suite.Namespace}}
		child.SetGroupVersionKind(c.gvk)
		children = append(children, child)
	}
	children = append(children, mpiJob)

	g := newRoundGate()
	r := gatedReconciler(t, g, launcher, pod)
	r.Logs = logsOf{pod.Name: runnerOutput(t, keys.tokens[runName], runOf(runName)...)}
	for _, step := range []struct {
		name   string
		do     func() error
		rounds [][]string
	}{{
		name: "the log's pod",
		do: func() error {
			report, err := r.readReport(context.Background(), suite, src, children, nil, keys, true)
			if err == nil && report.Done == nil {
				err = fmt.Errorf("the report has no Done: %+v", report)
			}
			return err
		},
		rounds: [][]string{{"get Job demo-container-1-launcher", "list Pod"}},
	}, {
		name: "the children's deletion",
		do:   func() error { return r.deleteRun(context.Background(), runName, children) },
		rounds: [][]string{{"delete ConfigMap demo-container-1-plan", "delete ConfigMap demo-container-1-secrets", "delete MPIJob demo-container-1",
			"delete NetworkPolicy demo-container-1", "delete PodDisruptionBudget demo-container-1"}},
	}} {
		ended := make(chan struct{})
		var err error
		go func() {
			defer close(ended)
			err = step.do()
		}()
		for i, want := range step.rounds {
			if got := g.next(len(want), ended); !slices.Equal(got, want) {
				g.releaseAll()
				<-ended
				t.Fatalf("%s, round %d of %d: %q at once, want %q", step.name, i+1, len(step.rounds), got, want)
			}
		}
		if more := g.next(1, ended); len(more) > 0 {
			g.releaseAll()
			<-ended
			t.Fatalf("%s: after the %d rounds another: %q", step.name, len(step.rounds), more)
		}
		<-ended
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
	}

	failing := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Delete: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.DeleteOption) error {
			if kind := obj.GetObjectKind().GroupVersionKind().Kind; kind == "NetworkPolicy" || kind == "PodDisruptionBudget" {
				return errors.New("connection refused: " + kind)
			}
			return nil
		},
	}).Build()
	r = &SuiteReconciler{Client: failing, APIReader: failing, Scheme: scheme.New()}
	err := r.deleteRun(context.Background(), runName, children)
	if err == nil || !strings.Contains(err.Error(), "connection refused: NetworkPolicy") || strings.Contains(err.Error(), "PodDisruptionBudget") {
		t.Fatalf("deleteRun with the NetworkPolicy and the PodDisruptionBudget failing = %v; want the NetworkPolicy's error, the first in order", err)
	}
}

// TestAppliedChildrenAnswerForTheFirstChildInOrder: the children applied at once answer as applied
// one after the other did, with the first child's cause or error in order, and the workload is not
// applied once what it needs failed.
func TestAppliedChildrenAnswerForTheFirstChildInOrder(t *testing.T) {
	suite := keyedSuite()
	child := func(obj client.Object, gvk schema.GroupVersionKind, name string) client.Object {
		obj.SetName(name)
		obj.SetNamespace(suite.Namespace)
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{OwnerReferences: []metav1.OwnerReference{{Name: "r-secrets", UID: "cm"}}}}
	objs := []client.Object{
		child(secret, corev1.SchemeGroupVersion.WithKind("Secret"), "r-auth"),
		child(&corev1.ConfigMap{}, corev1.SchemeGroupVersion.WithKind("ConfigMap"), "r-plan"),
		child(&networkingv1.NetworkPolicy{}, networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"), "r"),
		child(&policyv1.PodDisruptionBudget{}, policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"), "r"),
		child(&mpiv2.MPIJob{}, mpiv2.SchemeGroupVersion.WithKind("MPIJob"), "r"),
	}
	workload := []schema.GroupVersionKind{mpiv2.SchemeGroupVersion.WithKind("MPIJob")}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "r", errors.New("quota"))
	for _, tc := range []struct {
		name     string
		fail     map[string]error
		wantHeld string
		wantErr  string
	}{
		{name: "a refusal after an error: the error, first in order", fail: map[string]error{"NetworkPolicy": errors.New("connection refused"), "PodDisruptionBudget": forbidden},
			wantErr: "applying NetworkPolicy r: connection refused"},
		{name: "an error after a refusal: the refusal, first in order", fail: map[string]error{"ConfigMap": forbidden, "NetworkPolicy": errors.New("connection refused")},
			wantHeld: "the API server refused ConfigMap r-plan"},
		{name: "the workload refused", fail: map[string]error{"MPIJob": forbidden}, wantHeld: "the API server refused MPIJob r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var applied []string
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
				Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return nil },
				Apply: func(_ context.Context, _ client.WithWatch, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
					u := &unstructured.Unstructured{Object: obj.(interface{ UnstructuredContent() map[string]any }).UnstructuredContent()}
					mu.Lock()
					applied = append(applied, u.GetKind())
					mu.Unlock()
					return tc.fail[u.GetKind()]
				},
			}).Build()
			r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New()}
			held, err := r.applyChildren(context.Background(), suite, objs, workload, &childOwners{r: r, suite: suite})
			switch {
			case tc.wantErr != "" && (held != nil || err == nil || err.Error() != tc.wantErr):
				t.Fatalf("applyChildren = %v, %v; want the error %q", held, err, tc.wantErr)
			case tc.wantHeld != "" && (err != nil || held == nil || !strings.HasPrefix(held.Message, tc.wantHeld)):
				t.Fatalf("applyChildren = %v, %v; want the cause %q", held, err, tc.wantHeld)
			}
			if slices.Contains(applied, "MPIJob") != (tc.fail["MPIJob"] != nil) {
				t.Errorf("applied %q: the MPIJob is applied only once what it needs is", applied)
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
