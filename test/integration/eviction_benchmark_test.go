package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The container arm of the migration benchmark (issue 32 item 2), on envtest: no kubelet, scheduler
// or ReplicaSet controller runs here, so the test binds the probe worker pods the manager makes to
// nodes and marks them Ready, and the API server's own Eviction API answers the manager's evictions.

// evictionRun starts a Container run of a suite whose only benchmark is a migration benchmark of
// count evictions, 30 s apart, its launcher's log holding the probe's frames (series, started at
// probeStart), and waits until it is Running. It returns the run's name.
func (h *harness) evictionRun(name string, count int32, probeStart time.Time, series func() []byte, nodeA, nodeB string) string {
	h.t.Helper()
	b := vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration,
		Migration: &vmbenchv1.MigrationParams{Count: count, Interval: vmbenchv1.DurationOf(30 * time.Second), MigrationTimeout: vmbenchv1.DurationOf(30 * time.Second)}}
	suite := containerOnly(h.suite(name, 1, b))
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	run := name + "-container-1"
	h.mpiJob(run)
	h.runPodsOn(name, run, nodeA, nodeB, series())
	h.setMPIJobCondition(run, mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")
	return run
}

// probeWorker waits for the manager's probe worker pod name and returns it.
func (h *harness) probeWorker(name string) *corev1.Pod {
	h.t.Helper()
	pod := &corev1.Pod{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, pod)
	}, timeout, interval).Should(Succeed(), "probe worker %s is made", name)
	return pod
}

// placeProbeWorker plays the scheduler and the kubelet: it binds pod to node and marks it Running
// and Ready at readyAt.
func (h *harness) placeProbeWorker(pod *corev1.Pod, node string, readyAt time.Time) {
	h.t.Helper()
	h.g.Expect(k8s.SubResource("binding").Create(h.ctx, pod, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
		Target: corev1.ObjectReference{Kind: "Node", Name: node}})).To(Succeed())
	h.g.Eventually(func() error {
		fresh := &corev1.Pod{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(pod), fresh); err != nil {
			return err
		}
		at := metav1.NewTime(readyAt)
		fresh.Status.Phase = corev1.PodRunning
		fresh.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at},
		}
		return k8s.Status().Update(h.ctx, fresh)
	}, timeout, interval).Should(Succeed())
}

// Issue 32 item 2 (envtest), the container arm: once the probe started, the manager makes the probe
// worker; it evicts it twice through the Eviction API (the pod terminating, as the API server leaves
// a bound pod for its kubelet) and each time makes the replacement off the evicted pod's node. Each
// eviction is recorded from the eviction to the replacement Ready; the suite is Complete with two
// samples of each figure, the workers are deleted with the run, and no third eviction is made.
func TestEvictionBenchmarkEvictsTheProbeWorkerKTimes(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	nodeA, nodeB, nodeC := h.ns+"-node-a", h.ns+"-node-b", h.ns+"-node-c"
	for _, n := range []string{nodeA, nodeB, nodeC} {
		h.node(n, "6.12.48+deb13-amd64", nil)
	}
	const name = "evict"
	now := h.clock.Now()
	// The probe started 50 s ago: both evictions are due (lead-in 20 s, interval 30 s), and the
	// probe runs 30 s more. Its series pauses for 200 ms after each eviction (the second 13 s later).
	probeStart := now.Add(-50 * time.Second)
	series := probeSeries(probeStart, 80*time.Second, now.Add(500*time.Millisecond), now.Add(13500*time.Millisecond))
	run := h.evictionRun(name, 2, probeStart, func() []byte {
		return h.probeLog(t, h.token(name, name+"-container-1"), name+"-container-1", probeStart, series)
	}, nodeA, nodeB)

	first := h.probeWorker(run + "-probe-1")
	s := h.get(name)
	h.g.Expect(metav1.IsControlledBy(first, s)).To(BeTrue(), "the suite controls its probe worker")
	h.g.Expect(first.Labels).To(And(HaveKeyWithValue(vmbenchv1.LabelRun, run), HaveKeyWithValue(vmbenchv1.LabelRole, vmbenchv1.RoleProbe)))
	h.g.Expect(first.Spec.Affinity).To(BeNil(), "the first worker goes anywhere")
	h.placeProbeWorker(first, nodeB, now.Add(-40*time.Second))
	h.poke(run)

	// Eviction 1: the worker terminates and its replacement avoids its node.
	second := h.probeWorker(run + "-probe-2")
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
	h.g.Expect(first.DeletionTimestamp).NotTo(BeNil(), "the evicted worker is terminating")
	terms := second.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	h.g.Expect(terms).To(HaveLen(1))
	h.g.Expect(terms[0].MatchFields).To(ConsistOf(corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{nodeB}}))
	h.g.Consistently(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-3"}, &corev1.Pod{})
	}, 2*time.Second, interval).ShouldNot(Succeed(), "eviction 2 waits for eviction 1's replacement to be Ready")
	h.placeProbeWorker(second, nodeC, now.Add(1500*time.Millisecond))
	h.poke(run)
	h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, run).Migrations).To(ContainElement(And(HaveField("Outcome", vmbenchv1.MigrationCompleted), HaveField("TargetPod", run+"-probe-2"))))
	})

	// Eviction 2 waits until the replacement has reported for the 11 s the dip's baseline needs:
	// not 10 s after the first eviction on the manager's clock, but 13 s after it.
	h.clock.Step(10 * time.Second)
	h.poke(run)
	h.g.Consistently(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-3"}, &corev1.Pod{})
	}, 2*time.Second, interval).ShouldNot(Succeed(), "eviction 2 waits for its baseline")
	h.clock.Step(3 * time.Second)
	h.poke(run)
	third := h.probeWorker(run + "-probe-3")
	h.g.Expect(third.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields[0].Values).To(Equal([]string{nodeC}))
	h.placeProbeWorker(third, nodeA, now.Add(14500*time.Millisecond))
	h.poke(run)
	s = h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, run).Migrations).To(HaveLen(2))
		g.Expect(runOf(s, run).Migrations[1].Outcome).To(Equal(vmbenchv1.MigrationCompleted))
	})
	for i, m := range runOf(s, run).Migrations {
		h.g.Expect(m).To(And(HaveField("Mode", vmbenchv1.MigrationModeEviction), HaveField("Trigger", vmbenchv1.MigrationByBenchmark), HaveField("VMI", "")),
			"eviction %d", i+1)
	}
	h.g.Expect(runOf(s, run).Migrations[0]).To(And(HaveField("SourcePod", run+"-probe-1"), HaveField("SourceNode", nodeB), HaveField("TargetNode", nodeC)))
	h.g.Expect(runOf(s, run).Migrations[1]).To(And(HaveField("SourcePod", run+"-probe-2"), HaveField("SourceNode", nodeC), HaveField("TargetNode", nodeA)))
	h.g.Expect(runOf(s, run).Migrations[0].EndTime.Sub(runOf(s, run).Migrations[0].StartTime.Time)).To(BeNumerically("~", 1500*time.Millisecond, time.Second),
		"from the eviction (the manager's clock) to the replacement Ready")
	h.g.Consistently(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-4"}, &corev1.Pod{})
	}, 2*time.Second, interval).ShouldNot(Succeed(), "count is 2")

	h.setMPIJobCondition(run, mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
	s = h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	r := findResult(s, "mig", "container")
	h.g.Expect(r.Failures).To(BeZero(), r.LastError)
	means := map[string]float64{}
	for _, m := range r.Metrics {
		h.g.Expect(m.Samples).To(HaveLen(2), "%s: one sample per eviction", m.Name)
		means[m.Name] = m.Mean
	}
	h.g.Expect(means).To(HaveKey("recovery_seconds"))
	h.g.Expect(means).To(HaveKey("dip_percent"))
	h.g.Expect(means).NotTo(HaveKey("clock_step_ms"), "the master's clock does not stop for an eviction")
	h.g.Expect(means["pause_ms"]).To(Equal(200.0), "the probe's 200 ms gaps")
	h.g.Expect(means["completed"]).To(Equal(1.0))
	h.g.Expect(means["total_seconds"]).To(BeNumerically("~", 1.5, 0.6), "eviction to replacement Ready")
	h.g.Expect(means).To(HaveKey("back_at_rate_seconds"))
	h.g.Expect(means["back_at_rate_seconds"]).To(BeNumerically(">", 0), "the load was back at rate after each eviction, not before it")

	// Status has the report's first-screen line for mig on container, a pod eviction's.
	h.g.Expect(s.Status.MigrationSummaries).To(HaveLen(1), "status.migrationSummaries: %+v", s.Status.MigrationSummaries)
	h.g.Expect(s.Status.MigrationSummaries[0].Summary).To(And(HavePrefix("container: pod eviction: back at rate after "),
		ContainSubstring(", work lost "), HaveSuffix("; 2 of 2 completed)")))

	h.g.Eventually(func(g Gomega) {
		p := &corev1.Pod{}
		err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-3"}, p)
		g.Expect(apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)).To(BeTrue(), "the last worker goes with the run: %v", err)
	}, timeout, interval).Should(Succeed())
}

// An eviction a PodDisruptionBudget refuses (429, as kubectl drain sees it) is recorded Failed with
// the budget named and what to do, in the run's status while it runs; the worker stays, and no
// replacement is made.
func TestEvictionBenchmarkNamesTheBudgetThatRefusedIt(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	nodeA, nodeB := h.ns+"-node-a", h.ns+"-node-b"
	h.node(nodeA, "6.12.48+deb13-amd64", nil)
	h.node(nodeB, "6.12.48+deb13-amd64", nil)
	// A team's budget that happens to select the probe worker, as the disruption controller would
	// have it: no disruption allowed.
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "team-budget", Namespace: h.ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{vmbenchv1.LabelRole: vmbenchv1.RoleProbe}}}}
	h.g.Expect(k8s.Create(h.ctx, pdb)).To(Succeed())
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, ExpectedPods: 1, CurrentHealthy: 1, DesiredHealthy: 1, DisruptionsAllowed: 0}
	h.g.Expect(k8s.Status().Update(h.ctx, pdb)).To(Succeed())

	const name = "refused"
	now := h.clock.Now()
	// The probe (20 s lead-in, one interval of 30 s) started 30 s ago: the eviction is due.
	probeStart := now.Add(-30 * time.Second)
	series := probeSeries(probeStart, 50*time.Second)
	run := h.evictionRun(name, 1, probeStart, func() []byte {
		return h.probeLog(t, h.token(name, name+"-container-1"), name+"-container-1", probeStart, series)
	}, nodeA, nodeB)
	first := h.probeWorker(run + "-probe-1")
	h.placeProbeWorker(first, nodeB, now.Add(-20*time.Second))
	h.poke(run)

	s := h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, run).Migrations).To(HaveLen(1), "run: %+v; progressing: %+v", runOf(s, run), progressing(s))
	})
	m := runOf(s, run).Migrations[0]
	h.g.Expect(m.Outcome).To(Equal(vmbenchv1.MigrationFailed))
	h.g.Expect(m.Message).To(And(ContainSubstring("refused the eviction of probe worker "+run+"-probe-1"), ContainSubstring("team-budget"),
		ContainSubstring("make it select no pod labelled vmbench.io/role=probe")))
	h.g.Expect(runOf(s, run).Message).To(And(HavePrefix("eviction 1 of 1: "), ContainSubstring("team-budget")))
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(first), first)).To(Succeed())
	h.g.Expect(first.DeletionTimestamp).To(BeNil(), "the worker stays")
	h.g.Consistently(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-2"}, &corev1.Pod{})
	}, 2*time.Second, interval).ShouldNot(Succeed(), "no replacement for a worker that was not evicted")

	h.setMPIJobCondition(run, mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
	s = h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	r := findResult(s, "mig", "container")
	h.g.Expect(r.Metrics).To(ContainElement(And(HaveField("Name", "completed"), HaveField("Mean", 0.0))), "the refused eviction is a sample of completed = 0")
}
