package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// heapLimit is what the manager's heap must stay under in TestManagerHeapUnderTenantInput: far
// below the chart's memory limit (256 MiB), far above what the test measures (see
// docs/performance.md).
const heapLimit = 128 << 20

// ownProcessEnv is set in the process TestManagerHeapUnderTenantInput starts for itself.
const ownProcessEnv = "VMBENCH_HEAP_TEST_PROCESS"

// logs stands in for the pods/log API, which envtest does not serve: a pod's log is made by a
// function as it is read, so that the test holds none of it.
type logs struct {
	mu     sync.Mutex
	byPod  map[string]func() io.Reader
	opened atomic.Int32
}

func (l *logs) Open(_ context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	open, ok := l.byPod[namespace+"/"+pod+"/"+container]
	if !ok {
		return nil, fmt.Errorf("no log for %s/%s container %s", namespace, pod, container)
	}
	l.opened.Add(1)
	return io.NopCloser(open()), nil
}

func (l *logs) set(namespace, pod, container string, open func() io.Reader) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byPod[namespace+"/"+pod+"/"+container] = open
}

// craftedLog is size bytes of frame lines with valid checksums, each of its own message ID: what
// anyone can write into a launcher's log (kubectl exec), made line by line as it is read.
type craftedLog struct {
	run       string
	size, off int
	i         int
	line      []byte
}

func (c *craftedLog) Read(p []byte) (int, error) {
	if c.off >= c.size {
		return 0, io.EOF
	}
	if len(c.line) == 0 {
		body := fmt.Sprintf("D %s-x-%d 1/1 %s", c.run, c.i, strings.Repeat("A", frame.ChunkChars))
		c.line = fmt.Appendf(c.line[:0], "%s %08x %s\n", frame.Marker, crc32.ChecksumIEEE([]byte(body)), body)
		c.i++
	}
	n := copy(p, c.line)
	c.line = c.line[n:]
	c.off += n
	return n, nil
}

// heapSampler records the largest Go heap (live objects and garbage not yet swept) seen every 20 ms.
type heapSampler struct {
	peak atomic.Uint64
	stop chan struct{}
	done chan struct{}
}

func sampleHeap() *heapSampler {
	s := &heapSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *heapSampler) end() uint64 { close(s.stop); <-s.done; return s.peak.Load() }

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The real manager, against a real kube-apiserver, with a thousand ConfigMaps of 100 KiB that
// carry the suite label in another tenant's namespace, and a 64 MiB crafted launcher log: its heap
// stays far under its limit, the crafted run fails with a cause that names what was too large, and
// the next suite runs to the end.
//
// It runs in a process of its own, so that the heap it measures is this manager's alone (and the
// controller's name is not taken by another test's manager).
func TestManagerHeapUnderTenantInput(t *testing.T) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run `make test-unit`, which provides kube-apiserver and etcd under bin/k8s")
	}
	if os.Getenv(ownProcessEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestManagerHeapUnderTenantInput$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), ownProcessEnv+"=1")
		out, err := cmd.CombinedOutput()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "memory_test.go") {
				t.Log(strings.TrimSpace(line))
			}
		}
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		return
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	cfg, k8s, n := startAPIServer(t, []string{"config/crd/bases", "bin/crds"}, "vmbench-system", "bench", "tenant")
	if n < 3 {
		t.Fatalf("envtest loaded %d CRDs, want BenchmarkSuite, MPIJob and VirtualMachineInstance: run `make envtest-crds`", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The flood: anyone who may create ConfigMaps can label them as a suite's.
	start := time.Now()
	fill := strings.Repeat("x", 100<<10)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 1000; i += 8 {
				cm := &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%d", i), Namespace: "tenant",
						Labels: map[string]string{vmbenchv1.LabelSuite: "x"}},
					Data: map[string]string{"fill": fill},
				}
				if err := k8s.Create(ctx, cm); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("creating the labelled ConfigMaps: %v", err)
	}
	t.Logf("1000 labelled ConfigMaps of 100 KiB created in %s", time.Since(start).Round(time.Millisecond))

	base := liveHeap()
	sampler := sampleHeap()
	fake := &logs{byPod: map[string]func() io.Reader{}}
	o := validOptions()
	o.metricsAddr, o.probeAddr, o.containerStart, o.vmStart = "0", "0", time.Minute, time.Minute
	o.maxActiveRuns, o.logs = 1, fake
	mgr, err := newManager(ctx, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})

	// Two suites; with one run slot, "next" waits for "crafted".
	for _, name := range []string{"crafted", "next"} {
		suite := &vmbenchv1.BenchmarkSuite{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench"},
			Spec: vmbenchv1.BenchmarkSuiteSpec{Repetitions: 1,
				Platforms:  []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}},
				Benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}},
		}
		if err := k8s.Create(ctx, suite); err != nil {
			t.Fatal(err)
		}
	}
	d := driver{t: t, ctx: ctx, k8s: k8s, logs: fake}
	d.finish("crafted-container-1", func() io.Reader { return &craftedLog{run: "crafted-container-1", size: 64 << 20} })
	crafted := d.waitEnded("crafted")
	// envtest runs no garbage collector: the ended run's pods and MPIJob, which hold the run slot
	// until they are gone, are deleted as it would delete them.
	for _, obj := range []client.Object{&corev1.Pod{}, &mpiv2.MPIJob{}} {
		if err := k8s.DeleteAllOf(ctx, obj, client.InNamespace("bench"), client.MatchingLabels{vmbenchv1.LabelSuite: "crafted"},
			client.GracePeriodSeconds(0)); err != nil {
			t.Fatal(err)
		}
	}

	out, err := os.ReadFile(filepath.Join(repoRoot, "internal", "results", "testdata", "sysbench-cpu.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sysbench, err := results.Parse(results.SysbenchCPU, out)
	if err != nil {
		t.Fatal(err)
	}
	run := "next-container-1"
	token := d.token(run)
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run}}
	for _, n := range []string{"master", "node01", "node02"} {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "cpu", Node: n, Metrics: sysbench})
	}
	msgs = append(msgs, runplan.Message{Kind: runplan.KindDone, Run: run})
	var good bytes.Buffer
	for i, m := range msgs {
		payload, _ := json.Marshal(m)
		if err := frame.Write(&good, token, fmt.Sprintf("%s-s-%d", run, i), payload, 1); err != nil {
			t.Fatal(err)
		}
	}
	d.finish(run, func() io.Reader { return bytes.NewReader(good.Bytes()) })
	next := d.waitEnded("next")
	peak := sampler.end()
	live := liveHeap()

	t.Logf("heap: %.1f MiB live before the manager started; peak %.1f MiB (live and unswept) while it ran; %.1f MiB live at the end",
		float64(base)/(1<<20), float64(peak)/(1<<20), float64(live)/(1<<20))
	if peak > heapLimit {
		t.Errorf("the heap reached %.1f MiB, more than %d MiB", float64(peak)/(1<<20), heapLimit>>20)
	}
	if crafted.Status.Phase != vmbenchv1.SuiteFailed || len(crafted.Status.Runs) != 1 ||
		!strings.Contains(crafted.Status.Runs[0].Message, "result frames too large: frame: the log is too large to read: the log holds more than 4096 distinct messages") {
		t.Errorf("crafted suite: phase %s, runs %+v; want Failed with its run's frames too large", crafted.Status.Phase, crafted.Status.Runs)
	}
	if next.Status.Phase != vmbenchv1.SuiteComplete {
		t.Errorf("next suite: phase %s, runs %+v; want Complete", next.Status.Phase, next.Status.Runs)
	}
}

// driver plays the MPI Operator for one run: its launcher Job and pod, the pod's log, the MPIJob's
// end.
type driver struct {
	t    *testing.T
	ctx  context.Context
	k8s  client.Client
	logs *logs
}

func (d driver) eventually(what string, f func() error) {
	d.t.Helper()
	var err error
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	d.t.Fatalf("%s: %v", what, err)
}

func (d driver) token(run string) []byte {
	d.t.Helper()
	// The run's Secret is named after the UID of the run's ConfigMap that owns it.
	owner := &corev1.ConfigMap{}
	d.eventually("the ConfigMap that owns the run's Secrets", func() error {
		return d.k8s.Get(d.ctx, client.ObjectKey{Namespace: "bench", Name: run + "-secrets"}, owner)
	})
	name := platform.SecretName(platform.Run{SecretsOwner: owner.UID}, run+"-auth")
	secret := &corev1.Secret{}
	d.eventually("the run's Secret", func() error {
		return d.k8s.Get(d.ctx, client.ObjectKey{Namespace: "bench", Name: name}, secret)
	})
	return secret.Data[platform.AuthTokenKey]
}

func (d driver) finish(run string, log func() io.Reader) {
	d.t.Helper()
	job := &mpiv2.MPIJob{}
	d.eventually("the run's MPIJob", func() error {
		return d.k8s.Get(d.ctx, client.ObjectKey{Namespace: "bench", Name: run}, job)
	})
	launcher := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-launcher", Namespace: "bench", OwnerReferences: []metav1.OwnerReference{
			*metav1.NewControllerRef(job, mpiv2.SchemeGroupVersion.WithKind("MPIJob"))}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "launcher", Image: "x"}}}}},
	}
	if err := d.k8s.Create(d.ctx, launcher); err != nil {
		d.t.Fatal(err)
	}
	suite := strings.TrimSuffix(run, "-container-1")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: run + "-launcher-x", Namespace: "bench",
			Labels: map[string]string{vmbenchv1.LabelSuite: suite, vmbenchv1.LabelRun: run, vmbenchv1.LabelRole: vmbenchv1.RoleMaster,
				mpiv2.JobRoleLabel: "launcher"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(launcher, batchv1.SchemeGroupVersion.WithKind("Job"))}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "launcher", Image: "x"}}},
	}
	if err := d.k8s.Create(d.ctx, pod); err != nil {
		d.t.Fatal(err)
	}
	d.logs.set("bench", pod.Name, "launcher", log)
	d.eventually("the MPIJob's end", func() error {
		if err := d.k8s.Get(d.ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return err
		}
		now := metav1.Now()
		job.Status.Conditions = append(job.Status.Conditions, mpiv2.JobCondition{Type: mpiv2.JobSucceeded, Status: corev1.ConditionTrue,
			Reason: "MPIJobSucceeded", LastUpdateTime: now, LastTransitionTime: now})
		return d.k8s.Status().Update(d.ctx, job)
	})
}

func (d driver) waitEnded(name string) *vmbenchv1.BenchmarkSuite {
	d.t.Helper()
	suite := &vmbenchv1.BenchmarkSuite{}
	d.eventually("suite "+name+" ends", func() error {
		if err := d.k8s.Get(d.ctx, client.ObjectKey{Namespace: "bench", Name: name}, suite); err != nil {
			return err
		}
		if suite.Status.Phase != vmbenchv1.SuiteComplete && suite.Status.Phase != vmbenchv1.SuiteFailed {
			return fmt.Errorf("phase %q, runs %+v", suite.Status.Phase, suite.Status.Runs)
		}
		return nil
	})
	return suite
}
