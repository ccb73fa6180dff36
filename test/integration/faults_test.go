package integration

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// Faults a real cluster shows and the demo does not: each must be named in the suite's status within
// a reconcile of being visible, and none may lose a result or leave the suite Running with no cause.

func progressing(s *vmbenchv1.BenchmarkSuite) *metav1.Condition {
	c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionProgressing)
	if c == nil {
		return &metav1.Condition{}
	}
	return c
}

// poke changes a label of a run's plan ConfigMap, so that the controller looks again at once after
// the test moved its clock (requeues wait in real time).
func (h *harness) poke(run string) {
	h.t.Helper()
	h.g.Eventually(func() error {
		cm := &corev1.ConfigMap{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-plan"}, cm); err != nil {
			return err
		}
		cm.Labels["poke"] = time.Now().Format("150405.000000")
		return k8s.Update(h.ctx, cm)
	}, timeout, interval).Should(Succeed())
}

func TestTransientLogErrorIsRetriedAndNothingIsLost(t *testing.T) {
	h := newHarness(t)
	h.logs.failures = 3
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("flaky", 1, demoBenchmarks()...)))).To(Succeed())
	h.finishContainerRun("flaky", "flaky-container-1", 1)

	// While the log cannot be read, the run says so and keeps its children, whose log is the only copy.
	s := h.eventuallySuite("flaky", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonLogUnreadable))
	})
	h.g.Expect(progressing(s).Message).To(Or(ContainSubstring("TLS handshake timeout"), ContainSubstring("http2: stream closed")))
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "flaky-container-1"}, &mpiv2.MPIJob{})).To(Succeed())

	// The kubelet answers again: every result is kept.
	s = h.eventuallySuite("flaky", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunSucceeded))
	h.g.Expect(findMetric(findResult(s, "cpu", "container").Metrics, "events_per_second").N).To(Equal(int32(3)))
	h.g.Expect(h.logs.reads).To(BeNumerically(">=", 4), "three failed reads (refused, broken off half-way, refused) and a good one")
}

func TestRejectedChildIsNamedAtOnceAndTheSuiteStillTimesOut(t *testing.T) {
	h := newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.ContainerStartup = 24 * time.Hour }
	// An admission policy that refuses every MPIJob of this namespace, as a cluster's policy engine
	// or a webhook would: the API server refuses the run's MPIJob every time.
	h.denyMPIJobs()
	h.startManager(allKinds())
	suite := containerOnly(h.suite("refused", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))
	suite.Spec.Timeout = vmbenchv1.DurationOf(time.Hour)
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

	s := h.eventuallySuite("refused", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonChildRejected))
	})
	h.g.Expect(progressing(s).Message).To(ContainSubstring("the API server refused MPIJob refused-container-1"))
	h.g.Expect(progressing(s).Message).To(ContainSubstring("benchmarks are not allowed in this namespace"))
	h.g.Expect(s.Status.StartTime).NotTo(BeNil(), "the suite's clock runs although no run could start")
	h.g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(k8s.List(h.ctx, events, client.InNamespace(h.ns))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(HaveField("Reason", failure.ReasonChildRejected), HaveField("Type", corev1.EventTypeWarning))))
	}, timeout, interval).Should(Succeed())

	h.clock.Step(61 * time.Minute)
	h.poke("refused-container-1")
	s = h.eventuallySuite("refused", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed).Reason).To(Equal(vmbenchv1.ReasonSuiteTimeout))
}

func TestUnschedulablePodIsNamedThenFailsTheRunAtTheStartupLimit(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.suite("stuck", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))).To(Succeed())
	h.mpiJob("stuck-container-1")

	// What the MPI Operator and the scheduler would make: a worker that fits no node.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stuck-container-1-worker-0", Namespace: h.ns, Labels: map[string]string{
			vmbenchv1.LabelSuite: "stuck", vmbenchv1.LabelRun: "stuck-container-1", vmbenchv1.LabelRole: vmbenchv1.RoleNode}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "vmbench/runner:test"}}},
	}
	h.g.Expect(k8s.Create(h.ctx, pod)).To(Succeed())
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}}
	h.g.Expect(k8s.Status().Update(h.ctx, pod)).To(Succeed())

	s := h.eventuallySuite("stuck", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonUnschedulable))
	})
	h.g.Expect(progressing(s).Message).To(ContainSubstring("didn't match Pod's node affinity/selector"))
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix("waiting: Unschedulable: pod stuck-container-1-worker-0 cannot be scheduled"))

	// Past --container-startup (10 min here) the run fails with that cause, and the VM run goes on.
	h.clock.Step(11 * time.Minute)
	h.poke("stuck-container-1")
	s = h.eventuallySuite("stuck", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "stuck-container-1")).To(Equal(vmbenchv1.RunFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(ContainSubstring("StartupTimeout: the run's pods did not start within 10m0s: Unschedulable: pod stuck-container-1-worker-0"))
	rf := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionRunsFailed)
	h.g.Expect(rf.Status).To(Equal(metav1.ConditionTrue), "a failed run is a condition while the suite goes on")
	h.g.Expect(rf.Message).To(ContainSubstring("stuck-container-1: StartupTimeout"))
	h.g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteRunning))
}

// Pod Security's refusal of the launcher pod does not heal by waiting: the run fails at once, with
// the Job controller's words, long before --container-startup.
func TestPodSecurityRefusalOfTheLauncherFailsTheRunAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("psa", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.mpiJob("psa-container-1")
	// What the Job controller records when Pod Security refuses the launcher pod.
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "psa-container-1-launcher.1", Namespace: h.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "psa-container-1-launcher", Namespace: h.ns, APIVersion: "batch/v1"},
		Type:           corev1.EventTypeWarning, Reason: "FailedCreate",
		Message:       `Error creating: pods "psa-container-1-launcher-abcde" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true`,
		LastTimestamp: metav1.NewTime(h.clock.Now().Add(time.Second)),
		Source:        corev1.EventSource{Component: "job-controller"},
	}
	h.g.Expect(k8s.Create(h.ctx, event)).To(Succeed())
	h.poke("psa-container-1")
	s := h.eventuallySuite("psa", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "psa-container-1")).To(Equal(vmbenchv1.RunFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix(`FailedCreate: Job psa-container-1-launcher: FailedCreate: Error creating: ` +
		`pods "psa-container-1-launcher-abcde" is forbidden: violates PodSecurity`))
	h.g.Expect(s.Status.Runs[0].CompletionTime.Time).To(BeTemporally("==", h.clock.Now()), "failed without waiting for the startup limit")
}

// In a busy namespace the Warning events are read in bounded pages; the run's FailedCreate still
// names the cause when hundreds of other objects' warnings come before it in the list.
func TestFailedCreateIsFoundAmongManyWarningEvents(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	for i := range 600 {
		h.g.Expect(k8s.Create(h.ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("a-busy-app-%03d.1", i), Namespace: h.ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("a-busy-app-%03d", i), Namespace: h.ns, APIVersion: "v1"},
			Type:           corev1.EventTypeWarning, Reason: "BackOff", Message: "Back-off restarting failed container",
			LastTimestamp: metav1.NewTime(h.clock.Now().Add(time.Second)),
		})).To(Succeed())
	}
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("psa", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.mpiJob("psa-container-1")
	h.g.Expect(k8s.Create(h.ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "psa-container-1-launcher.1", Namespace: h.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "psa-container-1-launcher", Namespace: h.ns, APIVersion: "batch/v1"},
		Type:           corev1.EventTypeWarning, Reason: "FailedCreate",
		Message:       `Error creating: pods "psa-container-1-launcher-abcde" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=10, limited: pods=10`,
		LastTimestamp: metav1.NewTime(h.clock.Now().Add(time.Second)),
		Source:        corev1.EventSource{Component: "job-controller"},
	})).To(Succeed())
	h.poke("psa-container-1")
	s := h.eventuallySuite("psa", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonFailedCreate))
	})
	h.g.Expect(progressing(s).Message).To(ContainSubstring("Job psa-container-1-launcher: FailedCreate: Error creating: " +
		`pods "psa-container-1-launcher-abcde" is forbidden: exceeded quota: pods`))
}

func TestRunningRunWithoutStartTimeGoesOn(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("restored", 1, demoBenchmarks()...)))).To(Succeed())
	h.eventuallySuite("restored", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "restored-container-1")).To(Equal(vmbenchv1.RunRunning))
	})
	// A status restored from a backup, or edited by hand, without the run's start time.
	h.g.Eventually(func() error {
		s := h.get("restored")
		s.Status.Runs[0].StartTime = nil
		return k8s.Status().Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	h.poke("restored-container-1")
	h.finishContainerRun("restored", "restored-container-1", 1)
	s := h.eventuallySuite("restored", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(s.Status.Runs[0].StartTime).NotTo(BeNil())
}

func TestSameNameRecreationNeverAdoptsThePredecessorsChildren(t *testing.T) {
	h := newHarness(t)
	// With a run slot, the second suite would wait in line until the first one's MPIJob is gone
	// (queue_test.go); without, it meets that MPIJob when it starts its run.
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.MaxActiveRuns = 0 }
	h.startManager(allKinds())
	first := containerOnly(h.suite("again", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))
	h.g.Expect(k8s.Create(h.ctx, first)).To(Succeed())
	old := h.mpiJob("again-container-1")

	// envtest runs no garbage collector: the first suite's children outlive it, as they do for a
	// while on a real cluster.
	h.g.Expect(k8s.Delete(h.ctx, first)).To(Succeed())
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKeyFromObject(first), &vmbenchv1.BenchmarkSuite{}))
	}, timeout, interval).Should(BeTrue())
	second := containerOnly(h.suite("again", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))
	h.g.Expect(k8s.Create(h.ctx, second)).To(Succeed())

	s := h.eventuallySuite("again", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonChildOfAnotherSuite))
	})
	h.g.Expect(progressing(s).Message).To(ContainSubstring(string(old.OwnerReferences[0].UID)))
	h.g.Consistently(func(g Gomega) {
		job := &mpiv2.MPIJob{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(old), job)).To(Succeed())
		g.Expect(job.UID).To(Equal(old.UID))
		g.Expect(metav1.GetControllerOf(job).UID).To(Equal(old.OwnerReferences[0].UID), "never adopted")
	}, 2*time.Second, interval).Should(Succeed())

	// The run's Secret, which the manager cannot read, is named after the UID of the ConfigMap that
	// owns it: the new suite's run makes a ConfigMap of its own, so its Secret has another name, and
	// the old one is never written.
	oldName := h.runSecretName("again-container-1", "again-container-1-auth")
	oldSecret := &corev1.Secret{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: oldName}, oldSecret)).To(Succeed())

	// Once the old children are gone, the new suite's run starts with children of its own.
	h.g.Expect(k8s.Delete(h.ctx, old)).To(Succeed())
	h.g.Expect(k8s.DeleteAllOf(h.ctx, &corev1.ConfigMap{}, client.InNamespace(h.ns), client.MatchingLabels{vmbenchv1.LabelRun: "again-container-1"})).To(Succeed())
	h.g.Expect(k8s.Delete(h.ctx, &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "again-container-1", Namespace: h.ns}})).To(Succeed())
	h.g.Expect(k8s.Delete(h.ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "again-container-1", Namespace: h.ns}})).To(Succeed())
	h.g.Eventually(func(g Gomega) {
		owner := &corev1.ConfigMap{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "again-container-1-secrets"}, owner)).To(Succeed())
		g.Expect(hasOwner(owner, h.get("again"))).To(BeTrue())
		secret := &corev1.Secret{}
		name := platform.SecretName(platform.Run{SecretsOwner: owner.UID}, "again-container-1-auth")
		g.Expect(name).NotTo(Equal(oldName))
		g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, secret)).To(Succeed())
		g.Expect(ownedBySecretsOwner(secret, "again-container-1", owner.UID)).To(BeTrue())
	}, timeout, interval).Should(Succeed())
	unchanged := &corev1.Secret{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(oldSecret), unchanged)).To(Succeed())
	h.g.Expect(unchanged.ResourceVersion).To(Equal(oldSecret.ResourceVersion), "the old run's Secret is never written")
	h.g.Eventually(func(g Gomega) {
		job := &mpiv2.MPIJob{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(old), job)).To(Succeed())
		g.Expect(hasOwner(job, h.get("again"))).To(BeTrue())
	}, timeout, interval).Should(Succeed())
}

func findResult(s *vmbenchv1.BenchmarkSuite, benchmark, platform string) vmbenchv1.BenchmarkResult {
	for _, r := range s.Status.Results {
		if r.Benchmark == benchmark && r.Platform == platform {
			return r
		}
	}
	return vmbenchv1.BenchmarkResult{}
}

// denyMPIJobs installs a ValidatingAdmissionPolicy that refuses MPIJobs in the test's namespace, and
// waits until the API server enforces it.
func (h *harness) denyMPIJobs() {
	h.t.Helper()
	h.refuseInNamespace("deny-mpijobs", admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
		Rule:       admissionv1.Rule{APIGroups: []string{"kubeflow.org"}, APIVersions: []string{"*"}, Resources: []string{"mpijobs"}},
	}, "benchmarks are not allowed in this namespace")
	probe := &mpiv2.MPIJob{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: h.ns}, Spec: mpiv2.MPIJobSpec{
		MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{mpiv2.MPIReplicaTypeLauncher: {Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}}}}}}}
	h.g.Eventually(func() error {
		return k8s.Create(h.ctx, probe.DeepCopy(), client.DryRunAll)
	}, timeout, interval).Should(MatchError(ContainSubstring("benchmarks are not allowed")), "the policy is enforced")
}

// refuseInNamespace installs a ValidatingAdmissionPolicy, bound to the test's namespace only, that
// refuses every request the rule matches with the message, and removes it when the test ends. The
// caller waits until the API server enforces it.
func (h *harness) refuseInNamespace(prefix string, rule admissionv1.RuleWithOperations, message string) {
	h.t.Helper()
	h.enforceInNamespace(&admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: prefix},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: rule}}},
			Validations:      []admissionv1.Validation{{Expression: "false", Message: message}},
		},
	})
}

// enforceInNamespace creates the policy, its name suffixed with the test's namespace, and a binding
// that denies what it refuses in that namespace only (the other tests' managers run as the admin),
// and removes both when the test ends. The caller waits until the API server enforces it.
func (h *harness) enforceInNamespace(policy *admissionv1.ValidatingAdmissionPolicy) {
	h.t.Helper()
	policy.Name += "-" + h.ns
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: h.ns}}},
		},
	}
	h.g.Expect(k8s.Create(h.ctx, policy)).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, binding)).To(Succeed())
	h.t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), policy)
	})
}

// A run that an earlier vmbench started signs its frames with the suite's key, which this vmbench
// does not read: it fails at once with the reason, and the suite goes on.
func TestRunStartedWithTheSuitesKeyFailsClearly(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("upgraded", 2, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.eventuallySuite("upgraded", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "upgraded-container-1")).To(Equal(vmbenchv1.RunRunning))
	})
	// What an earlier vmbench made carries no keys annotation.
	h.g.Eventually(func() error {
		job := h.mpiJob("upgraded-container-1")
		delete(job.Annotations, vmbenchv1.AnnotationKeys)
		return k8s.Update(h.ctx, job)
	}, timeout, interval).Should(Succeed())

	s := h.eventuallySuite("upgraded", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "upgraded-container-1")).To(Equal(vmbenchv1.RunFailed))
		g.Expect(runPhase(s, "upgraded-container-2")).To(Equal(vmbenchv1.RunRunning))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix(suitecontroller.ReasonKeysRetired + ": run upgraded-container-1 was started by an earlier vmbench"))
	h.g.Expect(s.Status.Runs[0].Message).To(ContainSubstring("Secret upgraded-auth"))
	h.finishContainerRun("upgraded", "upgraded-container-2", 1)
	h.eventuallySuite("upgraded", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "upgraded-container-2")).To(Equal(vmbenchv1.RunSucceeded))
	})
}

// A manager stopped between the status write that ends a run and the deletion of the run's
// children, here one whose deletions all fail, loses nothing: the next manager deletes the run's
// children and starts the next run, and the suite ends Complete with the first run's results.
func TestRunEndDeletesTheChildrenAtTheNextReconcile(t *testing.T) {
	h := newHarness(t)
	var refused atomic.Int32
	refusing := rest.CopyConfig(cfg)
	refusing.Wrap(func(rt http.RoundTripper) http.RoundTripper { return refuseDeletes{next: rt, refused: &refused} })
	h.identity = refusing
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.suite("restart", 1, demoBenchmarks()...))).To(Succeed())
	h.mpiJob("restart-container-1")
	h.finishContainerRun("restart", "restart-container-1", 1)
	h.eventuallySuite("restart", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "restart-container-1")).To(Equal(vmbenchv1.RunSucceeded))
	})
	h.g.Eventually(refused.Load, timeout, interval).Should(BeNumerically(">", 0), "the manager got to the deletion of the run's children")
	h.stopManager()
	for _, name := range []string{"restart-container-1-plan", "restart-container-1-secrets"} {
		h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &corev1.ConfigMap{})).To(Succeed(), "%s outlived the first manager", name)
	}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "restart-container-1"}, &mpiv2.MPIJob{})).To(Succeed())

	h.identity = nil
	h.startManager(allKinds())
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "restart-container-1"}, &mpiv2.MPIJob{}))
	}, timeout, interval).Should(BeTrue(), "the next manager deletes the finished run's MPIJob")
	for _, name := range []string{"restart-container-1-plan", "restart-container-1-secrets"} {
		h.g.Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, &corev1.ConfigMap{}))
		}, timeout, interval).Should(BeTrue(), "the next manager deletes %s", name)
	}
	h.finishVMRun("restart", "restart-vm-1", 0.5, "qemu")
	done := h.eventuallySuite("restart", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(done.Status.Progress).To(Equal("2/2"))
	h.g.Expect(findMetric(findResult(done, "cpu", "container").Metrics, "events_per_second").N).To(Equal(int32(3)), "the container run's results were kept")
}

// refuseDeletes fails every DELETE of a manager's client, as a manager stopped before its deletions
// would leave them undone; it counts them.
type refuseDeletes struct {
	next    http.RoundTripper
	refused *atomic.Int32
}

func (r refuseDeletes) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodDelete {
		r.refused.Add(1)
		return nil, fmt.Errorf("refused by the test: %s %s", req.Method, req.URL.Path)
	}
	return r.next.RoundTrip(req)
}
