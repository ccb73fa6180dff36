package integration

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// childLog records, from watches opened before the suite exists, every creation and deletion of the
// MPIJobs and VMIs of a namespace, each with the resource version the API server gave it.
type childLog struct {
	mu     sync.Mutex
	events []childEvent
}

type childEvent struct {
	rv   uint64
	verb string // "created" or "deleted"
	kind string
	run  string
}

// watchChildren opens the watches; they end with the test.
func (h *harness) watchChildren() *childLog {
	h.t.Helper()
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme.New()})
	h.g.Expect(err).NotTo(HaveOccurred())
	l := &childLog{}
	for _, list := range []client.ObjectList{&mpiv2.MPIJobList{}, &kubevirtv1.VirtualMachineInstanceList{}} {
		w, err := wc.Watch(h.ctx, list, client.InNamespace(h.ns))
		h.g.Expect(err).NotTo(HaveOccurred())
		h.t.Cleanup(w.Stop)
		go func() {
			for e := range w.ResultChan() {
				obj, ok := e.Object.(client.Object)
				if !ok || (e.Type != watch.Added && e.Type != watch.Deleted) {
					continue
				}
				rv, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
				if err != nil {
					h.t.Errorf("resource version %q of %s: %v", obj.GetResourceVersion(), obj.GetName(), err)
					continue
				}
				verb := "created"
				if e.Type == watch.Deleted {
					verb = "deleted"
				}
				kind := "MPIJob"
				if _, vmi := obj.(*kubevirtv1.VirtualMachineInstance); vmi {
					kind = "VMIs"
				}
				l.mu.Lock()
				l.events = append(l.events, childEvent{rv: rv, verb: verb, kind: kind, run: obj.GetLabels()[vmbenchv1.LabelRun]})
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// sequence is what happened to the runs' children in the API server's order: one etcd numbers every
// write of every kind, so the resource versions of these watches' events order them across kinds.
// Consecutive events of the same run's children with the same verb are told once.
func (l *childLog) sequence() []string {
	l.mu.Lock()
	events := append([]childEvent(nil), l.events...)
	l.mu.Unlock()
	sort.Slice(events, func(i, j int) bool { return events[i].rv < events[j].rv })
	var out []string
	for _, e := range events {
		s := fmt.Sprintf("%s %s %s", e.kind, e.run, e.verb)
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}

// Two platforms and two repetitions run container-1, vm-1, vm-2, container-2 (the order flips every
// repetition), each run only once the previous run's MPIJob or VMIs are gone, and every repetition's
// samples land with their platform and repetition.
func TestTwoPlatformsTwoRepetitionsRunInterleaved(t *testing.T) {
	h := newHarness(t)
	children := h.watchChildren()
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.suite("abba", 2, demoBenchmarks()...))).To(Succeed())

	// Each run's figures are the fixture's times a factor of its own.
	factors := map[string]float64{"abba-container-1": 1, "abba-vm-1": 0.5, "abba-vm-2": 0.6, "abba-container-2": 1.1}
	// Children go slowly on a real cluster (virt-controller's finalizer on VMIs): each run's are
	// held by a finalizer after its cleanup deleted them, and the next run must not start meanwhile.
	h.holdDeletion(h.mpiJob("abba-container-1"))
	h.finishContainerRun("abba", "abba-container-1", factors["abba-container-1"])
	h.releaseOnceDeleted("abba", vmiExists(h, "abba-vm-1-master"), h.mpiJob("abba-container-1"))

	vm1 := h.runVMIs("abba-vm-1")
	h.holdDeletion(vm1...)
	h.finishVMRun("abba", "abba-vm-1", factors["abba-vm-1"], "kvm")
	h.releaseOnceDeleted("abba", vmiExists(h, "abba-vm-2-master"), vm1...)

	vm2 := h.runVMIs("abba-vm-2")
	h.holdDeletion(vm2...)
	h.finishVMRun("abba", "abba-vm-2", factors["abba-vm-2"], "kvm")
	h.releaseOnceDeleted("abba", func() bool {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "abba-container-2"}, &mpiv2.MPIJob{}) == nil
	}, vm2...)

	h.finishContainerRun("abba", "abba-container-2", factors["abba-container-2"])

	s := h.eventuallySuite("abba", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	var runs []string
	for _, r := range s.Status.Runs {
		runs = append(runs, r.Name)
		h.g.Expect(r.Phase).To(Equal(vmbenchv1.RunSucceeded), "%s: %s", r.Name, r.Message)
	}
	h.g.Expect(runs).To(Equal([]string{"abba-container-1", "abba-vm-1", "abba-vm-2", "abba-container-2"}))
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "abba-container-2"}, &mpiv2.MPIJob{}))
	}, timeout, interval).Should(BeTrue(), "the last run's MPIJob goes with its cleanup")
	h.g.Eventually(children.sequence, timeout, interval).Should(Equal([]string{
		"MPIJob abba-container-1 created", "MPIJob abba-container-1 deleted",
		"VMIs abba-vm-1 created", "VMIs abba-vm-1 deleted",
		"VMIs abba-vm-2 created", "VMIs abba-vm-2 deleted",
		"MPIJob abba-container-2 created", "MPIJob abba-container-2 deleted",
	}), "each run's children are created only after the previous run's are gone")

	// N per platform: 3 nodes × 2 repetitions of sysbench, HPCC once per repetition; each
	// repetition's samples are its own run's.
	sysbench := fixtureMetrics(t, results.SysbenchCPU, "sysbench-cpu.txt")
	var eps float64
	for _, m := range sysbench {
		if m.Name == "events_per_second" {
			eps = m.Value
		}
	}
	h.g.Expect(eps).To(BeNumerically(">", 0))
	for _, p := range []string{"container", "vm"} {
		cpu := findMetric(findResult(s, "cpu", p).Metrics, "events_per_second")
		h.g.Expect(cpu).NotTo(BeNil(), "cpu on %s", p)
		h.g.Expect(cpu.N).To(Equal(int32(6)), "cpu on %s", p)
		h.g.Expect(cpu.Samples).To(HaveLen(6), "cpu on %s", p)
		for _, sample := range cpu.Samples {
			run := fmt.Sprintf("abba-%s-%d", p, sample.Repetition)
			h.g.Expect(sample.Value).To(BeNumerically("~", eps*factors[run], eps*1e-6), "%s repetition %d node %s", p, sample.Repetition, sample.Node)
		}
		hpcc := findResult(s, "hpcc", p)
		h.g.Expect(hpcc.Metrics).NotTo(BeEmpty(), "hpcc on %s", p)
		h.g.Expect(hpcc.Metrics[0].N).To(Equal(int32(2)), "hpcc on %s: one value per repetition", p)
	}
	ratio := findRatio(s.Status.Ratios, "cpu", "events_per_second")
	h.g.Expect(ratio).NotTo(BeNil())
	h.g.Expect(ratio.Ratio).To(BeNumerically("~", (0.5+0.6)/(1+1.1), 0.001), "mean of the VM runs over the mean of the container runs")
}

// holdFinalizer keeps a deleted child in the API server, as virt-controller's finalizer keeps a VMI
// until its virt-launcher pod is gone.
const holdFinalizer = "vmbench.io/test-hold"

// holdDeletion adds holdFinalizer to the objects.
func (h *harness) holdDeletion(objs ...client.Object) {
	h.t.Helper()
	for _, obj := range objs {
		h.g.Eventually(func() error {
			if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			controllerutil.AddFinalizer(obj, holdFinalizer)
			return k8s.Update(h.ctx, obj)
		}, timeout, interval).Should(Succeed())
	}
}

// releaseOnceDeleted waits until the manager deleted the held objects and then reconciled the
// suite once more, checks for a while that the next run has not started beside them (next reports
// whether it has), then lets them go.
func (h *harness) releaseOnceDeleted(suite string, next func() bool, objs ...client.Object) {
	h.t.Helper()
	for _, obj := range objs {
		h.g.Eventually(func(g Gomega) {
			g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			g.Expect(obj.GetDeletionTimestamp()).NotTo(BeNil(), "%s is deleted by its run's cleanup", obj.GetName())
		}, timeout, interval).Should(Succeed())
	}
	h.suiteReconciled(suite)
	h.g.Expect(next()).To(BeFalse(), "the next run started while the previous run's children were still there")
	h.g.Consistently(next, 2*time.Second, interval).Should(BeFalse(), "the next run started while the previous run's children were still there")
	for _, obj := range objs {
		h.g.Eventually(func() error {
			if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
				return err
			}
			controllerutil.RemoveFinalizer(obj, holdFinalizer)
			return k8s.Update(h.ctx, obj)
		}, timeout, interval).Should(Succeed())
	}
}

// runVMIs waits for a VM run's three VMIs.
func (h *harness) runVMIs(run string) []client.Object {
	h.t.Helper()
	var out []client.Object
	for _, n := range nodes {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		h.g.Eventually(func() error {
			return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-" + n}, vmi)
		}, timeout, interval).Should(Succeed())
		out = append(out, vmi)
	}
	return out
}

func vmiExists(h *harness, name string) func() bool {
	return func() bool {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &kubevirtv1.VirtualMachineInstance{}) == nil
	}
}

// finishVMCPURun plays KubeVirt for a VM run of the cpu benchmark alone: every VM measures the
// fixture's values times factor, then the master powers off.
func (h *harness) finishVMCPURun(suite, run string, factor float64) {
	h.t.Helper()
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-master"}, master)
	}, timeout, interval).Should(Succeed())
	sysbench := fixtureMetrics(h.t, results.SysbenchCPU, "sysbench-cpu.txt")
	msgs := []runplan.Message{{Kind: runplan.KindStarted, Run: run, Virtualization: "kvm"}}
	for _, n := range nodes {
		msgs = append(msgs, runplan.Message{Kind: runplan.KindResult, Run: run, Benchmark: "cpu", Node: n, Metrics: scaled(sysbench, factor), Seconds: 10})
	}
	msgs = append(msgs, runplan.Message{Kind: runplan.KindDone, Run: run, BenchmarkSeconds: 30})
	h.launcherPod(suite, run, map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log",
		metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")), runnerLog(h.t, h.token(suite, run), msgs...))
	for _, n := range nodes[1:] {
		h.setVMIPhase(run+"-"+n, kubevirtv1.Running)
	}
	h.setVMIPhase(run+"-master", kubevirtv1.Succeeded)
}

// With spec.precision on both platforms, a platform above the target grows the suite by whole
// interleaved repetitions: container-1, vm-1, vm-2, container-2, then container-3, vm-3 (an odd
// repetition goes in the spec's order), up to maxRepetitions. The container's repetitions are 0.2%
// apart (within ±5%); the VM's are 0.5, 0.6 and 0.55 of the fixture: mean 0.55, sd 0.05, standard
// error 0.0289, t(0.975, 2 df) 4.303: ±22.6%.
func TestPrecisionOnTwoPlatformsGrowsByInterleavedRepetitions(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	suite := h.suite("grow", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	suite.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 3, Metrics: []string{"cpu/events_per_second"}}
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

	factors := map[string]float64{"grow-container-1": 1, "grow-vm-1": 0.5, "grow-vm-2": 0.6, "grow-container-2": 1.002,
		"grow-container-3": 1.001, "grow-vm-3": 0.55}
	order := []string{"grow-container-1", "grow-vm-1", "grow-vm-2", "grow-container-2", "grow-container-3", "grow-vm-3"}
	for _, run := range order {
		if strings.Contains(run, "-vm-") {
			h.finishVMCPURun("grow", run, factors[run])
		} else {
			h.finishCPURun("grow", run, factors[run])
		}
	}
	s := h.eventuallySuite("grow", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	var runs []string
	for _, r := range s.Status.Runs {
		runs = append(runs, r.Name)
		h.g.Expect(r.Phase).To(Equal(vmbenchv1.RunSucceeded), "%s: %s", r.Name, r.Message)
	}
	h.g.Expect(runs).To(Equal(order), "no repetition past the cap, in interleaved order")
	for _, p := range []string{"container", "vm"} {
		eps := findMetric(findResult(s, "cpu", p).Metrics, "events_per_second")
		h.g.Expect(eps).NotTo(BeNil(), p)
		h.g.Expect(eps.N).To(Equal(int32(9)), "%s: 3 nodes × 3 repetitions", p)
	}
	c := precisionReached(s)
	h.g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
	h.g.Expect(c.Reason).To(Equal(vmbenchv1.ReasonMaxRepetitionsReached))
	h.g.Expect(c.Message).To(ContainSubstring("vm cpu/events_per_second ±22.6%"))
	h.g.Expect(c.Message).NotTo(ContainSubstring("container cpu/events_per_second"), "the container reached the target")
	h.g.Expect(s.Status.Precision.Repetitions).To(Equal(int32(3)))
}
