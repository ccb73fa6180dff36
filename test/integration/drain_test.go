package integration

import (
	"strings"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
)

// A node drain during a container run (issue 32): `kubectl drain` cordons the node, then asks the
// eviction API for each of its pods. No kube-controller-manager runs here, so the tests write the
// PodDisruptionBudget's status as its disruption controller would, and cordon the node by hand.

// drainHarness starts the manager reading a running run's nodes every second, and makes the two
// nodes of a run's pods.
func drainHarness(t *testing.T) (h *harness, launcherNode, workerNode string) {
	h = newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.CordonPoll = time.Second }
	h.startManager(allKinds())
	launcherNode, workerNode = h.ns+"-node-a", h.ns+"-node-b"
	h.node(launcherNode, "6.12.48+deb13-amd64", nil)
	h.node(workerNode, "6.12.48+deb13-amd64", nil)
	return h, launcherNode, workerNode
}

// startDrainRun starts a one-benchmark container run of suite name, its launcher and worker pods
// running on the two nodes, and waits until it is Running.
func (h *harness) startDrainRun(name string, disruption vmbenchv1.DisruptionPolicy, launcherNode, workerNode string) string {
	h.t.Helper()
	suite := containerOnly(h.suite(name, 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))
	suite.Spec.Cluster.Disruption = disruption
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	run := name + "-container-1"
	job := h.mpiJob(run)
	h.runPodsOn(name, run, launcherNode, workerNode, runnerLog(h.t, h.token(name, run), runMessages(h.t, run, 1, "kvm", job.CreationTimestamp.Time)...))
	h.setMPIJobCondition(run, mpiv2.JobRunning, "MPIJobRunning", "MPIJob is running")
	h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(vmbenchv1.ReasonRunning))
	})
	return run
}

// cordon marks a node unschedulable, as `kubectl drain` (and `kubectl cordon`) does first.
func (h *harness) cordon(name string) {
	h.t.Helper()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	h.g.Expect(k8s.Patch(h.ctx, node, client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"unschedulable":true}}`)))).To(Succeed())
}

// evict asks the eviction API to evict a pod, as `kubectl drain` does for each pod of the node.
func (h *harness) evict(pod string) error {
	h.t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	h.g.Expect(err).NotTo(HaveOccurred())
	return cs.CoreV1().Pods(h.ns).EvictV1(h.ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: h.ns}})
}

// With the default setting the run's PodDisruptionBudget holds the drain: the API server refuses
// the eviction of a worker (429, the budget named), the cordon is named in the run's status and a
// NodeDraining event with what vmbench does, the run completes with its results, and the budget
// goes with the run.
func TestDrainDuringAContainerRunWaitsForTheRun(t *testing.T) {
	h, launcherNode, workerNode := drainHarness(t)
	run := h.startDrainRun("hold", "", launcherNode, workerNode)
	s := h.get("hold")
	h.g.Expect(s.Spec.Cluster.Disruption).To(Equal(vmbenchv1.DisruptionWaitForRun), "the API server's default")

	pdb := &policyv1.PodDisruptionBudget{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run}, pdb)).To(Succeed(), "the run's PodDisruptionBudget while it runs")
	h.g.Expect(metav1.GetControllerOf(pdb).UID).To(Equal(s.UID), "owned by the suite like the run's other children")
	h.g.Expect(*pdb.Spec.MinAvailable).To(Equal(intstr.FromInt32(3)))
	h.g.Expect(pdb.Spec.Selector.MatchLabels).To(Equal(map[string]string{vmbenchv1.LabelSuite: "hold", vmbenchv1.LabelRun: run}))

	// What the disruption controller writes for the run's two pods, started but not yet ready, under
	// minAvailable 3: none of them may go.
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, ExpectedPods: 2, CurrentHealthy: 0, DesiredHealthy: 3,
		DisruptionsAllowed: 0, Conditions: []metav1.Condition{{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionFalse,
			Reason: policyv1.InsufficientPodsReason, Message: "", ObservedGeneration: pdb.Generation, LastTransitionTime: metav1.Now()}}}
	h.g.Expect(k8s.Status().Update(h.ctx, pdb)).To(Succeed())

	h.cordon(workerNode)
	err := h.evict(run + "-worker-0")
	h.g.Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "the eviction is refused with 429, not %v", err)
	h.g.Expect(err.Error()).To(ContainSubstring("Cannot evict pod as it would violate the pod's disruption budget"))
	worker := &corev1.Pod{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-worker-0"}, worker)).To(Succeed())
	h.g.Expect(worker.DeletionTimestamp).To(BeNil(), "the worker stays")

	want := "cordoned while the run ran (a node drain): node " + workerNode + "; the run's PodDisruptionBudget " + run +
		" refuses the eviction of its pods until the run ends, at the latest at its deadline "
	s = h.eventuallySuite("hold", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, run).Disruption).To(HavePrefix(want))
	})
	h.g.Expect(runOf(s, run).Phase).To(Equal(vmbenchv1.RunRunning))
	h.expectEvent(timeout, corev1.EventTypeWarning, "NodeDraining", "run "+run+": "+want)

	h.setMPIJobCondition(run, mpiv2.JobSucceeded, "MPIJobSucceeded", "MPIJob succeeded")
	s = h.eventuallySuite("hold", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, run)).To(Equal(vmbenchv1.RunSucceeded))
	})
	h.g.Expect(runOf(s, run).Disruption).To(HavePrefix(want), "the drain stays named with the run")
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run}, &policyv1.PodDisruptionBudget{}))
	}, timeout, interval).Should(BeTrue(), "the PodDisruptionBudget goes when the run ends, with the suite still there")
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "hold"}, &vmbenchv1.BenchmarkSuite{})).To(Succeed())
}

// With Allow the run has no PodDisruptionBudget: the cordon is named with what follows, the
// eviction goes through, and the run fails at once, the eviction and its node named.
func TestDrainDuringAContainerRunWithAllowFailsTheRunNamed(t *testing.T) {
	h, launcherNode, workerNode := drainHarness(t)
	run := h.startDrainRun("allow", vmbenchv1.DisruptionAllow, launcherNode, workerNode)
	err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run}, &policyv1.PodDisruptionBudget{})
	h.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no PodDisruptionBudget with Allow: %v", err)

	h.cordon(workerNode)
	s := h.eventuallySuite("allow", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runOf(s, run).Disruption).To(Equal("cordoned while the run ran (a node drain): node " + workerNode +
			"; spec.cluster.disruption is Allow: the drain evicts the run's pods and the run fails; set it to WaitForRun to hold drains until a run ends"))
	})
	h.g.Expect(runOf(s, run).Phase).To(Equal(vmbenchv1.RunRunning))

	h.g.Expect(h.evict(run + "-worker-0")).To(Succeed())
	h.expectRunFailedNow("allow", run, "Evicted: pod "+run+"-worker-0 (worker) on node "+workerNode+
		" was evicted through the eviction API (EvictionByEvictionAPI: Eviction API: evicting), as a node drain (kubectl drain) evicts: "+
		"the run's results are lost and later runs go on")
	h.g.Expect(strings.Contains(runOf(h.get("allow"), run).Message, "spec.cluster.disruption WaitForRun")).To(BeTrue())
}
