package integration

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/controllers/suite/failure"
)

// vmiUnschedulable writes a VMI's status as virt-controller does while the scheduler cannot place
// its virt-launcher pod: phase Scheduling, and the pod's PodScheduled condition copied with the
// scheduler's message. Each call writes the VMI, so the manager looks again.
func (h *harness) vmiUnschedulable(name, schedulerMessage string) {
	h.t.Helper()
	h.g.Eventually(func() error {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, vmi); err != nil {
			return err
		}
		now := metav1.Now()
		if vmi.Status.Phase != kubevirtv1.Scheduling {
			vmi.Status.Phase = kubevirtv1.Scheduling
			vmi.Status.PhaseTransitionTimestamps = append(vmi.Status.PhaseTransitionTimestamps,
				kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: kubevirtv1.Pending, PhaseTransitionTimestamp: now},
				kubevirtv1.VirtualMachineInstancePhaseTransitionTimestamp{Phase: kubevirtv1.Scheduling, PhaseTransitionTimestamp: now})
		}
		vmi.Status.Conditions = []kubevirtv1.VirtualMachineInstanceCondition{
			{Type: kubevirtv1.VirtualMachineInstanceReady, Status: corev1.ConditionFalse, Reason: "GuestNotRunning",
				Message: "Guest VM is not reported as running", LastTransitionTime: now},
			{Type: kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: schedulerMessage, LastTransitionTime: now},
		}
		return k8s.Update(h.ctx, vmi)
	}, timeout, interval).Should(Succeed())
}

// A cluster whose nodes offer no KVM device (no /dev/kvm, so KubeVirt's device plugin offers no
// devices.kubevirt.io/kvm) and whose KubeVirt does not emulate: the VMs cannot be placed, and the
// suite says what that means and what to do, then fails the run at --vm-startup with the same words.
func TestNoKVMIsNamedForWhatItMeans(t *testing.T) {
	const noKVM = "0/3 nodes are available: 3 Insufficient devices.kubevirt.io/kvm. preemption: 0/3 nodes are available: " +
		"3 No preemption victims found for incoming pod."
	h := newHarness(t)
	h.kubeVirtCR(true, false)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.Emulation = suitecontroller.EmulationAllow }
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, vmOnly(h.suite("nokvm", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	h.vmiUnschedulable("nokvm-vm-1-master", noKVM)

	s := h.eventuallySuite("nokvm", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonNoKVM), progressing(s).Message)
	})
	for _, msg := range []string{progressing(s).Message, s.Status.Runs[0].Message} {
		h.g.Expect(msg).To(And(
			ContainSubstring("VMI nokvm-vm-1-master cannot be scheduled: "+noKVM),
			ContainSubstring("no node that could take the VMs offers devices.kubevirt.io/kvm"),
			ContainSubstring("run them on nodes with /dev/kvm"),
			ContainSubstring("set spec.configuration.developerConfiguration.useEmulation: true in the KubeVirt CR"),
			ContainSubstring("the VM figures then measure emulation, not VM overhead"),
			ContainSubstring(`marked emulated: true, "(emulated)" in the headline`),
			Not(ContainSubstring("--emulation=forbid"))))
	}
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix("waiting: NoKVM: VMI nokvm-vm-1-master cannot be scheduled"))
	h.g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(k8s.List(h.ctx, events, client.InNamespace(h.ns))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(HaveField("Reason", failure.ReasonNoKVM), HaveField("Type", corev1.EventTypeWarning),
			HaveField("Message", ContainSubstring("useEmulation")))))
	}, timeout, interval).Should(Succeed())

	// Past --vm-startup (20 min here) the run fails with the same words. A node without KVM joined
	// meanwhile: the scheduler's new message is a change the manager looks at.
	h.clock.Step(21 * time.Minute)
	h.vmiUnschedulable("nokvm-vm-1-master", strings.ReplaceAll(noKVM, "3", "4"))
	s = h.eventuallySuite("nokvm", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix("StartupTimeout: the run's VMs did not start within 20m0s: NoKVM: VMI nokvm-vm-1-master cannot be scheduled: 0/4 nodes are available"))
	h.g.Expect(s.Status.Runs[0].Message).To(ContainSubstring("useEmulation: true in the KubeVirt CR"))
	h.g.Expect(meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed).Message).To(ContainSubstring("not VM overhead"))
}

// --vm-startup, not --container-startup, is a VM run's startup limit: past the container limit the
// VM run still waits and says why; past the VM limit it fails, naming the VM limit.
func TestVMRunFailsAtTheVMStartupLimit(t *testing.T) {
	h := newHarness(t)
	h.configure = func(r *suitecontroller.SuiteReconciler) {
		r.ContainerStartup, r.VMStartup = 10*time.Minute, 20*time.Minute
	}
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, vmOnly(h.suite("slowvm", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))))).To(Succeed())
	start := h.clock.Now()
	h.vmiUnschedulable("slowvm-vm-1-master", "0/3 nodes are available: 3 Insufficient memory.")

	s := h.eventuallySuite("slowvm", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(progressing(s).Reason).To(Equal(failure.ReasonUnschedulable))
	})
	h.g.Expect(s.Status.Runs[0].StartTime.Time).To(BeTemporally("==", start))
	h.g.Expect(s.Status.Runs[0].Message).To(Equal("waiting: Unschedulable: VMI slowvm-vm-1-master cannot be scheduled: 0/3 nodes are available: " +
		"3 Insufficient memory.; the run fails if it has not started by " + start.Add(20*time.Minute).UTC().Format(time.RFC3339)))

	// Past the container limit, before the VM limit: the scheduler's new words show that the manager
	// looked at the run on the new time, and the run still waits.
	h.clock.Step(15 * time.Minute)
	h.vmiUnschedulable("slowvm-vm-1-master", "0/3 nodes are available: 3 Insufficient cpu.")
	s = h.eventuallySuite("slowvm", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Runs[0].Message).To(ContainSubstring("Insufficient cpu"), "the run was failed before the VM startup limit: %s", s.Status.Runs[0].Message)
	})
	h.g.Expect(runPhase(s, "slowvm-vm-1")).To(Equal(vmbenchv1.RunRunning))
	h.g.Expect(progressing(s).Reason).To(Equal(failure.ReasonUnschedulable))

	// Past the VM limit the run fails, with the VM limit and the cause.
	h.clock.Step(6 * time.Minute)
	h.vmiUnschedulable("slowvm-vm-1-master", "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory.")
	s = h.eventuallySuite("slowvm", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "slowvm-vm-1")).To(Equal(vmbenchv1.RunFailed))
	})
	h.g.Expect(s.Status.Runs[0].Message).To(HavePrefix("StartupTimeout: the run's VMs did not start within 20m0s: Unschedulable: " +
		"VMI slowvm-vm-1-master cannot be scheduled: 0/3 nodes are available: 3 Insufficient cpu"))
	h.g.Expect(s.Status.Runs[0].CompletionTime.Time).To(BeTemporally("==", start.Add(21*time.Minute)))
}
