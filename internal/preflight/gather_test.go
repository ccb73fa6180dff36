package preflight

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/vmbench/vmbench/internal/platform"
)

// fakeCluster is the kind cluster of the e2e as fake clients: every API, the chart's manager, KubeVirt
// under emulation, and a kubelet that pulls images named in pulls as it is told.
type fakeCluster struct {
	kube *fake.Clientset
	// pulls says what the kubelet does with an image: a waiting reason, or "" to run it.
	pulls map[string]string
	mu    sync.Mutex
}

func newFakeCluster(t *testing.T, objs ...runtime.Object) *fakeCluster {
	t.Helper()
	ns := namespace(nil)
	manager := deployment("vmbench-manager", nil, 1, "--runner-image=vmbench/runner:dev", "--vm-disk-image=vmbench/vm-disk:dev", "--image-pull-policy=IfNotPresent")
	base := []runtime.Object{ns, &manager, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Provisioner: "rancher.io/local-path"}}
	for _, n := range kindNodes(t) {
		base = append(base, n.DeepCopy())
	}
	f := &fakeCluster{kube: fake.NewClientset(append(base, objs...)...), pulls: map[string]string{}}
	f.kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: "vmbench.io/v1alpha1", APIResources: []metav1.APIResource{{Name: "benchmarksuites", Namespaced: true, Kind: "BenchmarkSuite"}}},
		{GroupVersion: "kubeflow.org/v2beta1", APIResources: []metav1.APIResource{{Name: "mpijobs", Namespaced: true, Kind: "MPIJob"}}},
		{GroupVersion: "kubevirt.io/v1", APIResources: []metav1.APIResource{{Name: "virtualmachineinstances", Namespaced: true, Kind: "VirtualMachineInstance"},
			{Name: "kubevirts", Namespaced: true, Kind: "KubeVirt"}}},
	}
	// The tracker does not generate names.
	f.kube.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if pod.Name == "" {
			pod.Name = pod.GenerateName + "x1"
		}
		return false, nil, nil
	})
	// The kubelet: a pod read back shows the outcome of its image's pull.
	f.kube.PrependReactor("get", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		get := action.(k8stesting.GetAction)
		obj, err := f.kube.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), get.GetNamespace(), get.GetName())
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		f.mu.Lock()
		reason, known := f.pulls[pod.Spec.Containers[0].Image]
		f.mu.Unlock()
		pod.Spec.NodeName = "vmbench-worker"
		switch {
		case !known:
			return true, pod, nil
		case reason == "":
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pull", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}}}
		default:
			pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "pull", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "from the fake kubelet"}}}}
		}
		return true, pod, nil
	})
	return f
}

func kubeVirtCR(emulation bool) *unstructured.Unstructured {
	kv := &unstructured.Unstructured{}
	kv.SetAPIVersion("kubevirt.io/v1")
	kv.SetKind("KubeVirt")
	kv.SetNamespace("kubevirt")
	kv.SetName("kubevirt")
	_ = unstructured.SetNestedField(kv.Object, emulation, "spec", "configuration", "developerConfiguration", "useEmulation")
	return kv
}

func (f *fakeCluster) clients() Clients {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{KubeVirtResource: "KubeVirtList"}, kubeVirtCR(true))
	return Clients{Kube: f.kube, Dynamic: dyn, KubeletConfig: func(context.Context, string) ([]byte, error) { return nil, errForbidden }}
}

func TestGather(t *testing.T) {
	q := quota("compute", rl("pods", "20"), nil)
	q.Namespace = "bench"
	f := newFakeCluster(t, &q)
	cl := Gather(context.Background(), f.clients(), "bench", "vmbench-system")

	if cl.APIsErr != nil || len(cl.APIs) != 3 || cl.APIs["mpijobs.kubeflow.org"][0] != "v2beta1" {
		t.Errorf("APIs %v, %v", cl.APIs, cl.APIsErr)
	}
	if len(cl.Nodes) != 3 || cl.Namespace == nil || len(cl.Quotas) != 1 || len(cl.StorageClasses) != 1 {
		t.Errorf("nodes %d, namespace %v, quotas %d, classes %d", len(cl.Nodes), cl.Namespace, len(cl.Quotas), len(cl.StorageClasses))
	}
	if !cmp.Equal(cl.KubeVirt, KubeVirtConfig{Found: true, Emulation: true, Features: platform.KubeVirtFeatures{Found: true}}) || cl.KubeVirtErr != nil {
		t.Errorf("KubeVirt %+v, %v", cl.KubeVirt, cl.KubeVirtErr)
	}
	if cl.Manager == nil || cl.Manager.RunnerImage != "vmbench/runner:dev" || cl.ManagerNamespace != "vmbench-system" {
		t.Errorf("manager %+v", cl.Manager)
	}
	if cl.CPUManagerErr == nil || !strings.Contains(cl.CPUManagerErr.Error(), "nodes/proxy") {
		t.Errorf("a kubelet that cannot be read: %v", cl.CPUManagerErr)
	}

	f.kube.PrependReactor("list", "resourcequotas", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, errForbidden })
	missing := Gather(context.Background(), f.clients(), "elsewhere", "vmbench-system")
	if missing.Namespace != nil || missing.NamespaceErr == nil || missing.QuotasErr != nil {
		t.Errorf("a missing namespace: %v, its quotas are not read: %v", missing.NamespaceErr, missing.QuotasErr)
	}
	forbidden := Gather(context.Background(), f.clients(), "bench", "vmbench-system")
	if forbidden.QuotasErr == nil {
		t.Error("a forbidden quota list left no error")
	}
	report := Run(needsOf(t, quick(t), true), forbidden)
	expect(t, byName(report, "quota"), Warn, "cannot read the namespace's ResourceQuotas")
}

func TestPullImagesCleansUp(t *testing.T) {
	f := newFakeCluster(t)
	f.pulls["reg.example/runner:v1"] = ""
	f.pulls["reg.example/vm-disk:v1"] = "ErrImagePull"
	needs := needsOf(t, quick(t), true)
	needs.Images.Runner, needs.Images.VMDisk = "reg.example/runner:v1", "reg.example/vm-disk:v1"
	checks := PullImages(context.Background(), f.kube, needs, ImagesOf(needs), time.Second, time.Millisecond)
	expect(t, byName(checks, "image/runner"), Pass, "reg.example/runner:v1 pulled on node vmbench-worker")
	expect(t, byName(checks, "image/vm-disk"), Fail, "reg.example/vm-disk:v1 cannot be pulled on node vmbench-worker: ErrImagePull: from the fake kubelet")

	// An image that never decides times out, and an interrupted preflight deletes its pod too.
	slow := Image{Role: "runner", Ref: "reg.example/slow:v1", PullPolicy: corev1.PullAlways}
	expect(t, PullImages(context.Background(), f.kube, needs, []Image{slow}, 20*time.Millisecond, time.Millisecond)[0], Warn, "still being pulled after 20ms")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	expect(t, PullImages(ctx, f.kube, needs, []Image{slow}, time.Minute, time.Millisecond)[0], Warn, "interrupted")

	pods, err := f.kube.CoreV1().Pods("bench").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(pods.Items) != 0 {
		t.Errorf("pods left behind: %v %v", pods, err)
	}
	deletes := 0
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			deletes++
		}
	}
	if deletes != 4 {
		t.Errorf("%d pods deleted, want 4", deletes)
	}

	// A namespace made a moment ago has no default service account yet.
	young := newFakeCluster(t)
	young.pulls["reg.example/runner:v1"] = ""
	attempts := 0
	young.kube.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if attempts++; attempts < 3 {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x",
				errors.New(`error looking up service account bench/default: serviceaccount "default" not found`))
		}
		return false, nil, nil
	})
	expect(t, PullImages(context.Background(), young.kube, needs, ImagesOf(needs)[:1], time.Second, time.Millisecond)[0], Pass, "pulled")

	refused := newFakeCluster(t)
	refused.kube.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, errForbidden })
	expect(t, PullImages(context.Background(), refused.kube, needs, []Image{slow}, time.Second, time.Millisecond)[0], Warn, "cannot create a pod to pull reg.example/slow:v1")
}

// runCommand runs the command against the fake cluster.
func runCommand(t *testing.T, f *fakeCluster, args ...string) (int, string, string) {
	t.Helper()
	saved, savedPoll := Connect, pollInterval
	Connect = func(_, _, namespace string) (Clients, string, error) {
		if namespace == "" {
			namespace = "default"
		}
		return f.clients(), namespace, nil
	}
	pollInterval = time.Millisecond
	t.Cleanup(func() { Connect, pollInterval = saved, savedPoll })
	var stdout, stderr bytes.Buffer
	code := Command(context.Background(), "vmbench", args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestCommandQuickSamplePasses(t *testing.T) {
	f := newFakeCluster(t)
	f.pulls["vmbench/runner:dev"] = ""
	f.pulls["vmbench/vm-disk:dev"] = "RunContainerError"
	code, out, errOut := runCommand(t, f, "-f", quickSample, "-n", "bench")
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	t.Log("\n" + out)
	for _, want := range []string{
		`Preflight in namespace "bench" of suite quick: 3 nodes of 1 CPU, 1Gi (requests 100m CPU, 1Gi)`,
		"CHECK ", "api/mpijobs ", "fit/container ", "kvm ", "warn ", "image/vm-disk ", "pass",
		" 0 fail,",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestCommandTooMuchCPUFails(t *testing.T) {
	raw, err := os.ReadFile(quickSample)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Replace(strings.Replace(string(raw), "cpu: 1\n", "cpu: 64\n", 1), "cpuRequest: 100m", "cpuRequest: \"64\"", 1)
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCommand(t, newFakeCluster(t), "-f", path, "-n", "bench", "--skip-image-check", "-o", "json")
	if code != ExitFailed {
		t.Fatalf("exit %d, want %d\n%s", code, ExitFailed, out)
	}
	var report struct {
		Failed bool
		Checks []Check
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil || !report.Failed {
		t.Fatalf("json %v:\n%s", err, out)
	}
	for _, name := range []string{"fit/container", "fit/vm"} {
		expect(t, byName(report.Checks, name), Fail, "no node has 64 CPUs allocatable: node vmbench-worker 2, node vmbench-worker2 2")
	}
	expect(t, byName(report.Checks, "image/runner"), Skip, "--skip-image-check")
}

func TestCommandDefaultSuiteAndErrors(t *testing.T) {
	f := newFakeCluster(t)
	// The API's default shape does not fit kind's two 2-CPU workers: the reason the quick sample exists.
	code, out, _ := runCommand(t, f, "-n", "bench", "--skip-image-check")
	if code != ExitFailed || !strings.Contains(out, "the default suite: 3 nodes of 2 CPUs, 2Gi") ||
		!strings.Contains(out, "the run's 3 pods of 2 CPUs, 2Gi need room for 3, the nodes have room for 2") {
		t.Errorf("default suite: exit %d\n%s", code, out)
	}
	code, out, _ = runCommand(t, f, "-n", "nowhere", "--skip-image-check")
	if code != ExitFailed || !strings.Contains(out, `namespace "nowhere" not found`) {
		t.Errorf("missing namespace: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{{"-o", "yaml"}, {"extra"}, {"--image-timeout", "0s"}, {"--bogus"}} {
		if code, _, errOut := runCommand(t, f, args...); code != ExitUsage || !strings.Contains(errOut, "preflight -h") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	if code, out, _ := runCommand(t, f, "-h"); code != ExitOK || !strings.Contains(out, "exit status: 0 when no check failed") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
	if code, _, errOut := runCommand(t, f, "-f", "/does/not/exist.yaml"); code != ExitFailed || !strings.Contains(errOut, "exist.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut)
	}
}
