//go:build e2e

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// managerUser is the user name of the manager's service account, as the API server authorizes it.
func (e *env) managerUser() string {
	deployments := &appsv1.DeploymentList{}
	e.g.Expect(k8s.List(e.ctx, deployments, client.InNamespace("vmbench-system"),
		client.MatchingLabels{"app.kubernetes.io/name": "vmbench"})).To(Succeed())
	e.g.Expect(deployments.Items).To(HaveLen(1), "the manager's Deployment")
	return "system:serviceaccount:vmbench-system:" + deployments.Items[0].Spec.Template.Spec.ServiceAccountName
}

// can is `kubectl auth can-i --as <user>`: whether the API server would allow the request.
func (e *env) can(user string, attrs authorizationv1.ResourceAttributes) bool {
	review, err := clientset.AuthorizationV1().SubjectAccessReviews().Create(e.ctx, &authorizationv1.SubjectAccessReview{
		Spec: authorizationv1.SubjectAccessReviewSpec{User: user, ResourceAttributes: &attrs},
	}, metav1.CreateOptions{})
	e.g.Expect(err).NotTo(HaveOccurred())
	return review.Status.Allowed
}

// The manager reads no Secret but its master key, which it made on its first start.
func TestManagerReadsNoSecretButItsMasterKey(t *testing.T) {
	e := newEnv(t)
	user := e.managerUser()
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "secrets", Namespace: "kube-system"},
		{Verb: "list", Resource: "secrets"},
		{Verb: "watch", Resource: "secrets"},
		{Verb: "get", Resource: "secrets", Namespace: e.ns},
		{Verb: "list", Resource: "secrets", Namespace: "vmbench-system"},
		// patch and update answer with the Secret, delete and deletecollection (even a dry run) with
		// the Secret or every Secret of the namespace: reads too.
		{Verb: "patch", Resource: "secrets", Namespace: "kube-system"},
		{Verb: "update", Resource: "secrets", Namespace: "kube-system"},
		{Verb: "delete", Resource: "secrets", Namespace: "kube-system"},
		{Verb: "deletecollection", Resource: "secrets", Namespace: "kube-system"},
		{Verb: "patch", Resource: "secrets", Namespace: e.ns},
		{Verb: "deletecollection", Resource: "secrets", Namespace: e.ns},
		{Verb: "patch", Resource: "secrets", Namespace: "vmbench-system", Name: "vmbench-master-key"},
		{Verb: "list", Resource: "namespaces"},
	} {
		e.g.Expect(e.can(user, attrs)).To(BeFalse(), "%s may %s %s in %q", user, attrs.Verb, attrs.Resource, attrs.Namespace)
	}
	for _, attrs := range []authorizationv1.ResourceAttributes{
		{Verb: "get", Resource: "secrets", Namespace: "vmbench-system", Name: "vmbench-master-key"},
		{Verb: "create", Resource: "secrets", Namespace: e.ns},
		{Verb: "get", Resource: "pods", Subresource: "log", Namespace: e.ns},
		{Verb: "update", Group: "vmbench.io", Resource: "benchmarksuites", Subresource: "finalizers", Namespace: e.ns},
		// The suite's namespace, for its Pod Security level; the launcher Job, for the log pod's owner.
		{Verb: "get", Resource: "namespaces", Namespace: e.ns, Name: e.ns},
		{Verb: "get", Group: "batch", Resource: "jobs", Namespace: e.ns},
	} {
		e.g.Expect(e.can(user, attrs)).To(BeTrue(), "%s may not %s %s/%s", user, attrs.Verb, attrs.Resource, attrs.Subresource)
	}
	key := &corev1.Secret{}
	e.g.Expect(k8s.Get(e.ctx, client.ObjectKey{Namespace: "vmbench-system", Name: "vmbench-master-key"}, key)).To(Succeed())
	e.g.Expect(key.Data["key"]).To(HaveLen(32))
}

// A Host suite is refused, with what to do, in a namespace no admin allowed, and admitted once the
// admin's label is there.
func TestHostSuiteNeedsTheAdminsLabel(t *testing.T) {
	e := newEnv(t)
	s := e.sample("suite-quick.yaml", "host")
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "host", Type: vmbenchv1.PlatformHost}}
	s.Spec.Baseline = "host"
	err := k8s.Create(e.ctx, s.DeepCopy(), client.DryRunAll)
	e.g.Expect(err).To(MatchError(ContainSubstring("kubectl label namespace " + e.ns + " " + vmbenchv1.LabelPrivilegedPlatforms + "=true")))

	ns := &corev1.Namespace{}
	e.g.Expect(k8s.Get(e.ctx, client.ObjectKey{Name: e.ns}, ns)).To(Succeed())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[vmbenchv1.LabelPrivilegedPlatforms] = "true"
	e.g.Expect(k8s.Update(e.ctx, ns)).To(Succeed())
	e.g.Eventually(func() error { return k8s.Create(e.ctx, s.DeepCopy(), client.DryRunAll) }, 30*time.Second, time.Second).Should(Succeed())
}

// A VM suite in a namespace that enforces restricted fails at once, before any VM is made: KubeVirt's
// virt-launcher pods need baseline, and the run's message says which label to set. No VM boots.
func TestVMSuiteWhereVirtLauncherIsRefusedFailsAtOnce(t *testing.T) {
	e := newEnv(t, podSecurityRestricted)
	kubevirts := &unstructured.UnstructuredList{}
	kubevirts.SetGroupVersionKind(platform.KubeVirtListGVK)
	e.g.Expect(k8s.List(e.ctx, kubevirts)).To(Succeed(), "KubeVirt is not installed: make test-e2e installs it")
	e.g.Expect(platform.ClusterVirtLauncher(kubevirts.Items).Seccomp).To(BeNil(),
		"the cluster's KubeVirt gives VMs a seccomp profile, with which restricted admits virt-launcher; this case needs KubeVirt's default")

	s := e.sample("suite-quick.yaml", "novms")
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Baseline = "vm"
	s.Spec.Repetitions = 1
	e.g.Expect(k8s.Create(e.ctx, s)).To(Succeed())
	ended := e.waitEnded("novms", 2*time.Minute)
	e.g.Expect(ended.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	run := ended.Status.Runs[0]
	e.g.Expect(run.Message).To(HavePrefix(vmbenchv1.ReasonNamespaceRefusesVMs + ": namespace " + e.ns + " enforces Pod Security restricted:latest"))
	e.g.Expect(run.Message).To(ContainSubstring("label the namespace pod-security.kubernetes.io/enforce=baseline"))
	e.g.Expect(run.StartTime.Time).To(BeTemporally("==", run.CompletionTime.Time), "the run failed in the reconcile that would have started it")
	failed := meta.FindStatusCondition(ended.Status.Conditions, vmbenchv1.ConditionFailed)
	e.g.Expect(failed).NotTo(BeNil())
	e.g.Expect(failed.Message).To(ContainSubstring(vmbenchv1.ReasonNamespaceRefusesVMs))
	vmis := &kubevirtv1.VirtualMachineInstanceList{}
	e.g.Expect(k8s.List(e.ctx, vmis, client.InNamespace(e.ns))).To(Succeed())
	e.g.Expect(vmis.Items).To(BeEmpty(), "no VM was made")
}

// The quick sample's container path, every benchmark of it (HPCC over MPI and ssh, sysbench,
// stress-ng, iozone, fio, iperf3, ping), reaches Complete in a namespace that enforces Pod Security
// restricted: the runner pods need nothing that profile refuses.
func TestQuickSampleContainersCompleteUnderRestricted(t *testing.T) {
	e := newEnv(t, podSecurityRestricted)
	suite := containerOnly(e.sample("suite-quick.yaml", "strict"))
	suite.Spec.Repetitions = 1
	e.g.Expect(k8s.Create(e.ctx, suite)).To(Succeed())
	s := e.waitEnded("strict", 30*time.Minute)
	e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
		"Failed: %v", meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))
	for _, b := range suite.Spec.Benchmarks {
		e.g.Expect(s.Status.Results).To(ContainElement(And(HaveField("Benchmark", b.Name), HaveField("Platform", "container"),
			HaveField("Failures", int32(0)), HaveField("Metrics", Not(BeEmpty())))), "benchmark %s", b.Name)
	}
	e.g.Expect(k8s.Delete(e.ctx, s)).To(Succeed())
	e.expectNoChildren()
}
