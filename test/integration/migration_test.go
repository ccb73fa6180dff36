package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Issue 32 item 1: a VM run whose master VMI is live-migrated keeps every result frame. The frames
// leave through the serial console, whose log the launcher pod of the moment keeps: before the
// switch-over the source's, after it the target's.

// framePieces is runnerLog cut into one piece per message (with its progress line), IDs as
// runnerLog gives them, so that a test can split a log between launcher pods at any message.
func framePieces(t *testing.T, key []byte, msgs ...runplan.Message) [][]byte {
	t.Helper()
	pieces := make([][]byte, 0, len(msgs))
	for i, m := range msgs {
		payload, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		fmt.Fprintf(&buf, "runner: progress line %d\n", i)
		if err := frame.Write(&buf, key, fmt.Sprintf("%s-%d", m.Run, i), payload, 1); err != nil {
			t.Fatal(err)
		}
		pieces = append(pieces, buf.Bytes())
	}
	return pieces
}

// migratedMaster starts a one-repetition VM suite and returns its master VMI and run token.
func (h *harness) migratedMaster(name string) (*kubevirtv1.VirtualMachineInstance, []byte) {
	h.t.Helper()
	suite := h.suite(name, 1, demoBenchmarks()...)
	suite.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	suite.Spec.Baseline = "vm"
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	master := &kubevirtv1.VirtualMachineInstance{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name + "-vm-1-master"}, master)
	}, timeout, interval).Should(Succeed())
	return master, h.token(name, name+"-vm-1")
}

// setMigrationState writes the VMI's status.migrationState as virt-controller and virt-handler do.
func (h *harness) setMigrationState(name string, state *kubevirtv1.VirtualMachineInstanceMigrationState) {
	h.t.Helper()
	h.g.Eventually(func() error {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, vmi); err != nil {
			return err
		}
		vmi.Status.MigrationState = state
		return k8s.Update(h.ctx, vmi)
	}, timeout, interval).Should(Succeed())
}

func TestVMRunSurvivesALiveMigrationOfItsMaster(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	master, token := h.migratedMaster("mig")
	msgs := runMessages(t, "mig-vm-1", 1, "kvm", master.CreationTimestamp.Time)
	p := framePieces(t, token, msgs...)
	const cut = 5 // the switch-over cuts message 5 (a net result) mid-line
	var source, target bytes.Buffer
	source.WriteString("[    0.000000] Linux version 6.1.0 (noise before the runner)\n")
	for _, piece := range p[:cut] {
		source.Write(piece)
	}
	source.Write(p[cut][:len(p[cut])/2])
	// The target's console holds the last two messages before the switch-over again (the runner's
	// second copy of a VM's frames), the cut message whole, and the rest.
	target.WriteString("\x00garbled half line of the switch-over\n")
	for _, piece := range p[cut-2:] {
		target.Write(piece)
	}
	owner := metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))
	src := h.launcherPod("mig", "mig-vm-1", map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log", owner, source.Bytes())
	dst := h.launcherPod("mig", "mig-vm-1", map[string]string{"kubevirt.io": "virt-launcher", "kubevirt.io/migrationJobUID": "vmim-uid"},
		"guest-console-log", owner, target.Bytes())
	// The drain evicts the source once the VMI left it: that is no failure of the run.
	src.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget,
		Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now()}}}
	h.g.Expect(k8s.Status().Update(h.ctx, src)).To(Succeed())
	start := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	end := metav1.NewTime(start.Add(20 * time.Second))
	h.setMigrationState("mig-vm-1-master", &kubevirtv1.VirtualMachineInstanceMigrationState{
		SourcePod: src.Name, TargetPod: dst.Name, SourceNode: "worker-a", TargetNode: "worker-b",
		StartTimestamp: &start, EndTimestamp: &end, Completed: true, Mode: kubevirtv1.MigrationPreCopy, MigrationUID: "vmim-uid"})
	for _, n := range nodes[1:] {
		h.setVMIPhase("mig-vm-1-"+n, kubevirtv1.Running)
	}
	h.setVMIPhase("mig-vm-1-master", kubevirtv1.Succeeded)

	s := h.eventuallySuite("mig", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	h.g.Expect(h.logs.openedPods()).To(ContainElements(src.Name, dst.Name))
	// Every result counted once: 3 cpu nodes, 5 net pairs (one of them the cut message), 1 hpcc.
	for _, c := range []struct {
		benchmark string
		samples   int
	}{{"cpu", len(nodes)}, {"net", 5}, {"hpcc", 1}} {
		r := findResult(s, c.benchmark, "vm")
		h.g.Expect(r.Metrics).NotTo(BeEmpty(), c.benchmark)
		for _, m := range r.Metrics {
			h.g.Expect(m.Samples).To(HaveLen(c.samples), "%s %s: each execution once, none lost, none twice", c.benchmark, m.Name)
		}
	}
	h.g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunSucceeded), s.Status.Runs[0].Message)
}
