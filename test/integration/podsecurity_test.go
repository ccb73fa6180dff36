package integration

import (
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
)

// enforceRestricted labels the test's namespace as a platform team labels tenants' namespaces.
func (h *harness) enforceRestricted() {
	h.t.Helper()
	ns := &corev1.Namespace{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Name: h.ns}, ns)).To(Succeed())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	h.g.Expect(k8s.Update(h.ctx, ns)).To(Succeed())
}

// podOf is the pod the MPI Operator makes from a replica's template: the template plus the job's
// SSH key Secret, mounted where the MPIJob says.
func podOf(job *mpiv2.MPIJob, role mpiv2.MPIReplicaType, name string) *corev1.Pod {
	tmpl := job.Spec.MPIReplicaSpecs[role].Template.DeepCopy()
	spec := tmpl.Spec
	spec.RestartPolicy = corev1.RestartPolicyNever
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "ssh-auth", VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: job.Name + "-ssh"}}})
	spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts,
		corev1.VolumeMount{Name: "ssh-auth", MountPath: job.Spec.SSHAuthMountPath})
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: job.Namespace, Labels: tmpl.Labels}, Spec: spec}
}

// The API server's own Pod Security admission admits the launcher and worker pods of a container
// run in a namespace that enforces restricted, and refuses the pods as they were, with NET_RAW.
func TestRunnerPodsAreAdmittedWherePodSecurityIsRestricted(t *testing.T) {
	h := newHarness(t)
	h.enforceRestricted()
	h.startManager(allKinds())
	suite := containerOnly(h.suite("psa", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU), bench("ping", vmbenchv1.BenchmarkPing),
		vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone}))
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	job := h.mpiJob("psa-container-1")

	for role, name := range map[mpiv2.MPIReplicaType]string{mpiv2.MPIReplicaTypeLauncher: "launcher", mpiv2.MPIReplicaTypeWorker: "worker"} {
		pod := podOf(job, role, "psa-"+name)
		h.g.Expect(k8s.Create(h.ctx, pod, client.DryRunAll)).To(Succeed(), "%s refused", role)

		old := podOf(job, role, "psa-old-"+name)
		old.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
			Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}}}
		err := k8s.Create(h.ctx, old, client.DryRunAll)
		h.g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the %s pod with NET_RAW was not refused: %v", role, err)
		h.g.Expect(err.Error()).To(ContainSubstring(`violates PodSecurity "restricted:latest"`))
	}
}

func networkPolicy(h *harness, name string) (*networkingv1.NetworkPolicy, error) {
	np := &networkingv1.NetworkPolicy{}
	return np, k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, np)
}

// A started run has its NetworkPolicy, controlled by the suite, selecting the run's pods; it goes
// with the run's other children.
func TestEachRunHasItsNetworkPolicy(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.suite("np", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))).To(Succeed())
	h.mpiJob("np-container-1")
	suite := h.get("np")
	members := map[string]string{vmbenchv1.LabelSuite: "np", vmbenchv1.LabelRun: "np-container-1"}
	np, err := networkPolicy(h, "np-container-1")
	h.g.Expect(err).NotTo(HaveOccurred(), "the container run's NetworkPolicy")
	h.g.Expect(hasOwner(np, suite)).To(BeTrue(), "the NetworkPolicy is controlled by the suite")
	h.g.Expect(np.Spec.PodSelector.MatchLabels).To(Equal(members))
	h.g.Expect(np.Spec.PolicyTypes).To(Equal([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}))
	h.g.Expect(np.Spec.Ingress).To(HaveLen(1))
	h.g.Expect(np.Spec.Ingress[0].From).To(HaveLen(1))
	h.g.Expect(np.Spec.Ingress[0].From[0].PodSelector.MatchLabels).To(Equal(members))

	h.finishContainerRun("np", "np-container-1", 1)
	h.g.Eventually(func() bool {
		_, err := networkPolicy(h, "np-container-1")
		return apierrors.IsNotFound(err)
	}, timeout, interval).Should(BeTrue(), "the finished run's NetworkPolicy is deleted with its children")
	h.g.Eventually(func() error {
		np, err = networkPolicy(h, "np-vm-1")
		return err
	}, timeout, interval).Should(Succeed(), "the VM run's NetworkPolicy")
	h.g.Expect(hasOwner(np, suite)).To(BeTrue())
	h.g.Expect(np.Spec.PodSelector.MatchLabels).To(HaveKeyWithValue(vmbenchv1.LabelRun, "np-vm-1"))
}

func TestNoNetworkPolicyWhenTurnedOff(t *testing.T) {
	h := newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.NetworkPolicy = false }
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite("open", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	// A run's NetworkPolicy is applied before its MPIJob.
	h.mpiJob("open-container-1")
	list := &networkingv1.NetworkPolicyList{}
	h.g.Expect(k8s.List(h.ctx, list, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(list.Items).To(BeEmpty())
}

// enforce sets the test namespace's Pod Security enforce level.
func (h *harness) enforce(level string) {
	h.t.Helper()
	h.labelNamespace("pod-security.kubernetes.io/enforce", level)
}

// labelNamespace sets a label of the test namespace, or removes it when value is empty.
func (h *harness) labelNamespace(key, value string) {
	h.t.Helper()
	h.g.Eventually(func() error {
		ns := &corev1.Namespace{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Name: h.ns}, ns); err != nil {
			return err
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		if value == "" {
			delete(ns.Labels, key)
		} else {
			ns.Labels[key] = value
		}
		return k8s.Update(h.ctx, ns)
	}, timeout, interval).Should(Succeed())
}

func vmOnly(s *vmbenchv1.BenchmarkSuite) *vmbenchv1.BenchmarkSuite {
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Baseline = "vm"
	return s
}

// A namespace that enforces restricted cannot host KubeVirt's virt-launcher pods: a VM run there
// fails at once, in the reconcile that would have started it, with what to do; nothing is created.
// The same suite in a baseline namespace starts its VMs.
func TestVMRunWhereVirtLauncherIsRefusedFailsAtOnce(t *testing.T) {
	h := newHarness(t)
	h.enforceRestricted()
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, vmOnly(h.suite("novms", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())

	s := h.eventuallySuite("novms", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	run := s.Status.Runs[0]
	h.g.Expect(run.Phase).To(Equal(vmbenchv1.RunFailed))
	h.g.Expect(run.Message).To(HavePrefix(vmbenchv1.ReasonNamespaceRefusesVMs + ": namespace " + h.ns + " enforces Pod Security restricted:latest"))
	h.g.Expect(run.Message).To(And(ContainSubstring("seccompProfile"), ContainSubstring("virt-launcher needs baseline"),
		ContainSubstring("label the namespace pod-security.kubernetes.io/enforce=baseline")))
	h.g.Expect(run.StartTime.Time).To(Equal(run.CompletionTime.Time), "failed in the reconcile that would have started it")
	failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
	h.g.Expect(failed.Message).To(ContainSubstring(vmbenchv1.ReasonNamespaceRefusesVMs))
	vmis := &kubevirtv1.VirtualMachineInstanceList{}
	h.g.Expect(k8s.List(h.ctx, vmis, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(vmis.Items).To(BeEmpty(), "no VMI is created")
	secrets := &corev1.SecretList{}
	h.g.Expect(k8s.List(h.ctx, secrets, client.InNamespace(h.ns), client.MatchingLabels{vmbenchv1.LabelSuite: "novms"})).To(Succeed())
	h.g.Expect(secrets.Items).To(BeEmpty(), "no Secret is created")

	h.enforce("baseline")
	h.g.Expect(k8s.Create(h.ctx, vmOnly(h.suite("vms", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "vms-vm-1-master"}, &kubevirtv1.VirtualMachineInstance{})
	}, timeout, interval).Should(Succeed(), "baseline admits virt-launcher: the VMs are created")
}

// A virt-launcher pod that Pod Security refuses although the namespace's label allowed it (a stricter
// cluster default, a label changed since) fails the run at once, from virt-controller's event,
// rather than at --vm-startup.
func TestVirtControllersPodSecurityRefusalFailsTheRunAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, vmOnly(h.suite("late", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "late-vm-1-master"}, master)
	}, timeout, interval).Should(Succeed())
	// What virt-controller records when the API server refuses the virt-launcher pod.
	h.g.Expect(k8s.Create(h.ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "late-vm-1-master.1", Namespace: h.ns},
		InvolvedObject: corev1.ObjectReference{Kind: "VirtualMachineInstance", Name: master.Name, Namespace: h.ns, APIVersion: "kubevirt.io/v1", UID: master.UID},
		Type:           corev1.EventTypeWarning, Reason: "FailedCreate",
		Message: `failed to render launch manifest: failed to create pod for vmi ` + h.ns + `/late-vm-1-master, it needs a privileged namespace to run: ` +
			`pods "virt-launcher-late-vm-1-master-" is forbidden: violates PodSecurity "restricted:latest": seccompProfile`,
		LastTimestamp: metav1.NewTime(h.clock.Now().Add(time.Second)),
		Source:        corev1.EventSource{Component: "virtualmachine-controller"},
	})).To(Succeed())
	// Events are not watched: a change of the master VMI brings the suite back, as KubeVirt's
	// status updates do.
	h.g.Eventually(func() error {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: master.Name}, vmi); err != nil {
			return err
		}
		vmi.Labels["poke"] = "1"
		return k8s.Update(h.ctx, vmi)
	}, timeout, interval).Should(Succeed())

	s := h.eventuallySuite("late", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "late-vm-1")).To(Equal(vmbenchv1.RunFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(And(
		HavePrefix(vmbenchv1.ReasonNamespaceRefusesVMs+": VirtualMachineInstance late-vm-1-master: FailedCreate:"),
		ContainSubstring("violates PodSecurity"), ContainSubstring("pod-security.kubernetes.io/enforce=baseline")))
	h.g.Expect(s.Status.Runs[0].CompletionTime.Time).To(BeTemporally("==", h.clock.Now()), "failed without waiting for --vm-startup")
}
