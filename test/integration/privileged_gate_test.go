package integration

import (
	"testing"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// N12: the namespace's permission for privileged platforms is checked by the controller before each
// run, not only by the admission policy when the suite is created: a Host suite admitted while its
// namespace carried vmbench.io/privileged-platforms=true starts no run once the label is gone, and
// says what an admin must do. Without the check the run's MPIJob (hostNetwork pods) is created.
func TestHostRunIsNotStartedOnceTheNamespaceLostThePermission(t *testing.T) {
	h := newHarness(t)
	setLabel := func(value string) { h.labelNamespace(privilegedLabel, value) }
	hostSuite := func(name string) *vmbenchv1.BenchmarkSuite {
		s := h.suite(name, 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
		s.Spec.Platforms = []vmbenchv1.Platform{{Name: "host", Type: vmbenchv1.PlatformHost}}
		s.Spec.Baseline = "host"
		return s
	}

	// Admitted while the namespace had the label; the label goes before the run starts.
	setLabel("true")
	h.g.Expect(k8s.Create(h.ctx, hostSuite("gate"))).To(Succeed())
	setLabel("")
	h.startManager(allKinds())

	s := h.eventuallySuite("gate", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "gate-host-1")).To(Equal(vmbenchv1.RunFailed))
	})
	msg := runOf(s, "gate-host-1").Message
	for _, want := range []string{
		"PrivilegedPlatformNotAllowed: platform host is of type Host",
		"namespace " + h.ns + " does not carry that label now",
		"ask a cluster admin to run: kubectl label namespace " + h.ns + " " + privilegedLabel + "=true",
	} {
		h.g.Expect(msg).To(ContainSubstring(want))
	}
	failed := h.eventuallySuite("gate", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionFailed)).To(BeTrue())
	})
	h.g.Expect(meta.FindStatusCondition(failed.Status.Conditions, vmbenchv1.ConditionFailed).Message).To(ContainSubstring(privilegedLabel))
	// Nothing of the run was created: no MPIJob, no owner of its Secrets.
	h.g.Expect(apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "gate-host-1"}, &mpiv2.MPIJob{}))).To(BeTrue())
	h.g.Expect(apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "gate-host-1-secrets"}, &corev1.ConfigMap{}))).To(BeTrue())

	// With the label back, a Host run starts.
	setLabel("true")
	h.g.Expect(k8s.Create(h.ctx, hostSuite("allowed"))).To(Succeed())
	h.mpiJob("allowed-host-1")
}
