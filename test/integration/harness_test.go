package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

const (
	timeout  = 30 * time.Second
	interval = 100 * time.Millisecond
)

// fakeLogs stands in for the pods/log API, which envtest does not serve (no kubelet).
type fakeLogs struct {
	mu   sync.Mutex
	logs map[string][]byte
	// failures is how many reads of every log fail before reads succeed, as a kubelet that restarts.
	failures int
	reads    int
	// opened are the pods whose logs were opened, in order.
	opened []string
}

func (f *fakeLogs) Open(_ context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	f.opened = append(f.opened, pod)
	b, ok := f.logs[namespace+"/"+pod+"/"+container]
	if f.failures > 0 {
		f.failures--
		// Failures alternate between a refused stream and one that breaks off half-way.
		if f.failures%2 == 1 || !ok {
			return nil, fmt.Errorf("net/http: TLS handshake timeout")
		}
		return io.NopCloser(io.MultiReader(bytes.NewReader(b[:len(b)/2]), brokenStream{})), nil
	}
	if !ok {
		return nil, fmt.Errorf("no log for %s/%s container %s", namespace, pod, container)
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

// brokenStream is a log stream whose connection drops.
type brokenStream struct{}

func (brokenStream) Read([]byte) (int, error) { return 0, errors.New("http2: stream closed") }

func (f *fakeLogs) openedPods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.opened...)
}

func (f *fakeLogs) set(namespace, pod, container string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs[namespace+"/"+pod+"/"+container] = b
}

// harness is one test's namespace and its own manager.
type harness struct {
	t     *testing.T
	g     *WithT
	ctx   context.Context
	ns    string
	clock *clocktesting.FakeClock
	logs  *fakeLogs
	stop  func()
	// configure, when set, changes the reconciler before its manager starts.
	configure func(*suitecontroller.SuiteReconciler)
	// identity, when set, is the rest config the manager speaks with (an impersonated service
	// account); the test's admin config otherwise.
	identity *rest.Config
	// tenants are more namespaces that the manager serves (tenant).
	tenants []string
	// addControllers, when set, adds more controllers to the manager before it starts.
	addControllers func(ctrl.Manager) error
}

// tenant is another namespace that the same manager serves, as another team's would be: the
// returned harness drives suites there. It must be made before startManager.
func (h *harness) tenant() *harness {
	h.t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-tenant-"}}
	h.g.Expect(k8s.Create(h.ctx, ns)).To(Succeed())
	h.tenants = append(h.tenants, ns.Name)
	other := *h
	other.ns, other.stop, other.tenants = ns.Name, nil, nil
	return &other
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-"}}
	g := NewWithT(t)
	g.Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	h := &harness{
		t: t, g: g, ctx: context.Background(), ns: ns.Name,
		clock: clocktesting.NewFakeClock(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)),
		logs:  &fakeLogs{logs: map[string][]byte{}},
	}
	t.Cleanup(func() { h.stopManager() })
	return h
}

func allKinds() map[schema.GroupVersionKind]bool {
	return map[schema.GroupVersionKind]bool{
		mpiv2.SchemeGroupVersion.WithKind("MPIJob"):                      true,
		kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"): true,
	}
}

// startManager runs the controller, watching only this test's namespace, as the manager binary does.
func (h *harness) startManager(available map[schema.GroupVersionKind]bool) {
	h.t.Helper()
	scheme := scheme.New()
	namespaces := map[string]cache.Config{h.ns: {}}
	for _, ns := range h.tenants {
		namespaces[ns] = cache.Config{}
	}
	identity := cfg
	if h.identity != nil {
		identity = h.identity
	}
	mgr, err := ctrl.NewManager(identity, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultNamespaces: namespaces},
	})
	h.g.Expect(err).NotTo(HaveOccurred())
	r := &suitecontroller.SuiteReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    scheme,
		Recorder:  mgr.GetEventRecorder("vmbench"),
		Clock:     h.clock,
		Logs:      h.logs,
		Images: platform.Images{
			Runner: "vmbench/runner:test", VMDisk: "vmbench/vm-disk:test", PullPolicy: corev1.PullIfNotPresent,
		},
		VMNetwork:        platform.VMNetworkPasst,
		ContainerStartup: 10 * time.Minute,
		VMStartup:        20 * time.Minute,
		Available:        available,
		NetworkPolicy:    true,
		MasterKey:        masterKey,
		MaxActiveRuns:    1,
		Namespaces:       append([]string{h.ns}, h.tenants...),
		// The run queue's Leases: the test's own namespace stands for the manager's.
		QueueNamespace: h.ns,
	}
	if h.configure != nil {
		h.configure(r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.g.Expect(r.SetupWithManager(ctx, mgr)).To(Succeed())
	if h.addControllers != nil {
		h.g.Expect(h.addControllers(mgr)).To(Succeed())
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			h.t.Errorf("manager: %v", err)
		}
	}()
	h.stop = func() { cancel(); <-done }
}

func (h *harness) stopManager() {
	if h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// suite is a BenchmarkSuite that leaves everything it can to the API server's defaults.
func (h *harness) suite(name string, reps int32, benchmarks ...vmbenchv1.Benchmark) *vmbenchv1.BenchmarkSuite {
	return &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns},
		Spec:       vmbenchv1.BenchmarkSuiteSpec{Repetitions: reps, Benchmarks: benchmarks},
	}
}

func bench(name string, t vmbenchv1.BenchmarkType) vmbenchv1.Benchmark {
	return vmbenchv1.Benchmark{Name: name, Type: t}
}

func (h *harness) get(name string) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, s)).To(Succeed())
	return s
}

// eventuallySuite waits until check passes on the suite as the API server has it.
func (h *harness) eventuallySuite(name string, check func(g Gomega, s *vmbenchv1.BenchmarkSuite)) *vmbenchv1.BenchmarkSuite {
	h.t.Helper()
	return eventuallyObject(h, name, check)
}

// eventuallyObject reads the named object of the test's namespace until check passes, and returns
// the object it passed on.
func eventuallyObject[T any, PT interface {
	*T
	client.Object
}](h *harness, name string, check func(g Gomega, o PT)) PT {
	h.t.Helper()
	var got PT
	h.g.Eventually(func(g Gomega) {
		o := PT(new(T))
		g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, o)).To(Succeed())
		check(g, o)
		got = o
	}, timeout, interval).Should(Succeed())
	return got
}

func runPhase(s *vmbenchv1.BenchmarkSuite, run string) vmbenchv1.RunPhase {
	for _, r := range s.Status.Runs {
		if r.Name == run {
			return r.Phase
		}
	}
	return ""
}

// masterKey is the manager's master key in these tests.
var masterKey = platform.MasterKey(bytes.Repeat([]byte("k"), platform.MasterKeySize))

// token is the frame token of a run: the one in the run's Secret, which is derived from the master
// key, the suite's UID and the run's name.
func (h *harness) token(suite, run string) []byte {
	h.t.Helper()
	secret := &corev1.Secret{}
	name := h.runSecretName(run, run+"-auth")
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, secret)
	}, timeout, interval).Should(Succeed())
	auth, err := masterKey.RunAuth(h.get(suite).UID, run, false)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(secret.Data[platform.AuthTokenKey]).To(Equal(auth.Token), "the run's Secret holds its derived token")
	return auth.Token
}

// runnerLog is what a runner prints: progress noise around framed, authenticated messages.
func runnerLog(t *testing.T, key []byte, msgs ...runplan.Message) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("[    0.000000] Linux version 6.1.0 (noise before the runner)\n")
	for i, m := range msgs {
		payload, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&buf, "runner: progress line %d\n", i)
		if err := frame.Write(&buf, key, fmt.Sprintf("%s-%d", m.Run, i), payload, 1); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// fixtureMetrics parses a real tool output from the parsers' fixtures.
func fixtureMetrics(t *testing.T, tool results.Tool, file string) []results.Metric {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("..", "..", "internal", "results", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := results.Parse(tool, out)
	if err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	return ms
}

// fixtureSeries is the time series of a real iperf3 output.
func fixtureSeries(t *testing.T, file string) results.Table {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("..", "..", "internal", "results", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	series, err := results.Iperf3Intervals(out)
	if err != nil {
		t.Fatalf("reading the intervals of %s: %v", file, err)
	}
	return series
}

// scaled returns the metrics with every value multiplied, to tell platforms apart.
func scaled(ms []results.Metric, f float64) []results.Metric {
	out := make([]results.Metric, len(ms))
	for i, m := range ms {
		m.Value *= f
		out[i] = m
	}
	return out
}

// launcherPod creates the pod whose log holds a run's frames, as the Job controller (for the MPI
// Operator's launcher Job) or KubeVirt (a VM's virt-launcher) would: with the labels vmbench's log
// source selects on, controlled by owner. It sets the pod's log.
func (h *harness) launcherPod(suite, run string, extraLabels map[string]string, container string, owner *metav1.OwnerReference, log []byte) *corev1.Pod {
	h.t.Helper()
	labels := map[string]string{vmbenchv1.LabelSuite: suite, vmbenchv1.LabelRun: run, vmbenchv1.LabelRole: vmbenchv1.RoleMaster}
	for k, v := range extraLabels {
		labels[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: run + "-launcher-", Namespace: h.ns, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: container, Image: "x"}}},
	}
	if owner != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	h.g.Expect(k8s.Create(h.ctx, pod)).To(Succeed())
	h.logs.set(h.ns, pod.Name, container, log)
	return pod
}

// containerLauncherPod is the launcher pod of a container run, controlled by its launcher Job.
func (h *harness) containerLauncherPod(suite, run string, log []byte) *corev1.Pod {
	h.t.Helper()
	return h.launcherPod(suite, run, map[string]string{mpiv2.JobRoleLabel: "launcher"}, "launcher", h.launcherJob(run), log)
}

// launcherJob creates, once, the Job <run>-launcher that the MPI Operator makes for an MPIJob and
// that controls the launcher pod, and returns the controller reference such a pod carries.
func (h *harness) launcherJob(run string) *metav1.OwnerReference {
	h.t.Helper()
	job := &batchv1.Job{}
	key := client.ObjectKey{Namespace: h.ns, Name: run + "-launcher"}
	if err := k8s.Get(h.ctx, key, job); apierrors.IsNotFound(err) {
		mpiJob := h.mpiJob(run)
		job = &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: h.ns, OwnerReferences: []metav1.OwnerReference{
				*metav1.NewControllerRef(mpiJob, mpiv2.SchemeGroupVersion.WithKind("MPIJob"))}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "launcher", Image: "x"}}}}},
		}
		h.g.Expect(k8s.Create(h.ctx, job)).To(Succeed())
	} else {
		h.g.Expect(err).NotTo(HaveOccurred())
	}
	return metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))
}

func (h *harness) mpiJob(name string) *mpiv2.MPIJob {
	h.t.Helper()
	job := &mpiv2.MPIJob{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, job)
	}, timeout, interval).Should(Succeed())
	return job
}

// setMPIJobCondition does what the MPI Operator does when a job ends.
func (h *harness) setMPIJobCondition(name string, t mpiv2.JobConditionType, reason, msg string) {
	h.t.Helper()
	h.g.Eventually(func() error {
		job := &mpiv2.MPIJob{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, job); err != nil {
			return err
		}
		now := metav1.Now()
		job.Status.Conditions = append(job.Status.Conditions, mpiv2.JobCondition{
			Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastUpdateTime: now, LastTransitionTime: now,
		})
		return k8s.Status().Update(h.ctx, job)
	}, timeout, interval).Should(Succeed())
}

// setVMIPhase does what KubeVirt does as a VM boots and powers off. The VMI CRD has no status
// subresource, so status is written with the object.
func (h *harness) setVMIPhase(name string, phase kubevirtv1.VirtualMachineInstancePhase) {
	h.t.Helper()
	h.g.Eventually(func() error {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, vmi); err != nil {
			return err
		}
		vmi.Status.Phase = phase
		vmi.Status.PhaseTransitionTimestamps = append(vmi.Status.PhaseTransitionTimestamps,
			kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: phase, PhaseTransitionTimestamp: metav1.Now()})
		return k8s.Update(h.ctx, vmi)
	}, timeout, interval).Should(Succeed())
}

// seriesOf counts the series of a metric family that belong to one suite.
func seriesOf(t *testing.T, family, ns, suite string) int {
	t.Helper()
	families, err := registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			if labelValue(m, "namespace") == ns && labelValue(m, "suite") == suite {
				n++
			}
		}
	}
	return n
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// runSecretName is the name of one of a run's Secrets (base: <run>-auth, or <vmi>-cloudinit): base
// and a hash of the UID of the run's ConfigMap that owns its Secrets, once that exists.
func (h *harness) runSecretName(run, base string) string {
	h.t.Helper()
	owner := &corev1.ConfigMap{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-secrets"}, owner)
	}, timeout, interval).Should(Succeed(), "the ConfigMap that owns run %s's Secrets", run)
	return platform.SecretName(platform.Run{SecretsOwner: owner.UID}, base)
}

// ownedBySecretsOwner reports whether a Secret is controlled by its run's ConfigMap
// <run>-secrets, of the given UID.
func ownedBySecretsOwner(secret *corev1.Secret, run string, owner types.UID) bool {
	ref := metav1.GetControllerOf(secret)
	return ref != nil && ref.Kind == "ConfigMap" && ref.Name == run+"-secrets" && ref.UID == owner
}

func hasOwner(obj client.Object, suite *vmbenchv1.BenchmarkSuite) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && ref.UID == suite.UID && ptr.Deref(ref.BlockOwnerDeletion, false)
}
