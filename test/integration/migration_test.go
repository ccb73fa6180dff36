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

// migratedMaster starts a one-repetition VM suite of the benchmarks (the demo's when none) and
// returns its master VMI and run token.
func (h *harness) migratedMaster(name string, benchmarks ...vmbenchv1.Benchmark) (*kubevirtv1.VirtualMachineInstance, []byte) {
	h.t.Helper()
	if len(benchmarks) == 0 {
		benchmarks = demoBenchmarks()
	}
	suite := h.suite(name, 1, benchmarks...)
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
	created := master.CreationTimestamp.Time
	msgs := runMessages(t, "mig-vm-1", 1, "kvm", created)
	// Message i is sent 10·i s after the VMI's creation, at the end of its execution (10 s for
	// cpu and net, 200 s for hpcc); the migration runs from 45 s to 65 s: the net results 5, 6 and
	// 7 and the hpcc result overlap it.
	for i := range msgs {
		msgs[i].Time = created.Add(time.Duration(10*i) * time.Second)
	}
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
	// A node drain moves the master: KubeVirt's evacuation controller makes the migration object,
	// marked as an evacuation, and the run names it so (migration_trigger.go).
	vmim := &kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: "kubevirt-evacuation-x7k2p", Namespace: master.Namespace,
		Labels:      map[string]string{kubevirtv1.MigrationSelectorLabel: master.Name},
		Annotations: map[string]string{kubevirtv1.EvacuationMigrationAnnotation: "worker-a"}}, Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: master.Name}}
	h.g.Expect(k8s.Create(h.ctx, vmim)).To(Succeed())
	vmimUID := string(vmim.UID)
	owner := metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))
	src := h.launcherPod("mig", "mig-vm-1", map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log", owner, source.Bytes())
	dst := h.launcherPod("mig", "mig-vm-1", map[string]string{"kubevirt.io": "virt-launcher", "kubevirt.io/migrationJobUID": vmimUID},
		"guest-console-log", owner, target.Bytes())
	// A pod that claims the VMI as its controller, UID and all, but that KubeVirt never named as a
	// launcher of it: its log (a cut frame, which would fail the run) is not read.
	forged := h.lookalike(src, owner, p[cut][:len(p[cut])/3])
	start := metav1.NewTime(created.Add(45 * time.Second))
	end := metav1.NewTime(created.Add(65 * time.Second))
	h.setMigrationState("mig-vm-1-master", &kubevirtv1.VirtualMachineInstanceMigrationState{
		SourcePod: src.Name, TargetPod: dst.Name, SourceNode: "worker-a", TargetNode: "worker-b",
		StartTimestamp: &start, EndTimestamp: &end, Completed: true, Mode: kubevirtv1.MigrationPreCopy, MigrationUID: vmim.UID})
	for _, n := range nodes[1:] {
		h.setVMIPhase("mig-vm-1-"+n, kubevirtv1.Running)
	}
	h.setVMIPhase("mig-vm-1-master", kubevirtv1.Running)
	h.eventuallySuite("mig", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Runs).NotTo(BeEmpty())
		g.Expect(s.Status.Runs[0].Migrations).To(HaveLen(1))
	})
	// The drain evicts the source once the VMI left it: that is no failure of the run.
	src.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget,
		Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI", Message: "Eviction API: evicting", LastTransitionTime: metav1.Now()}}}
	h.g.Expect(k8s.Status().Update(h.ctx, src)).To(Succeed())
	h.setVMIPhase("mig-vm-1-master", kubevirtv1.Succeeded)

	s := h.eventuallySuite("mig", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	h.g.Expect(h.logs.openedPods()).To(ContainElements(src.Name, dst.Name))
	h.g.Expect(h.logs.openedPods()).NotTo(ContainElement(forged.Name))
	// Every result counted once: 3 cpu nodes, 5 net pairs (one of them the cut message), 1 hpcc.
	// Samples measured while the migration ran are marked: 3 of the 5 net pairs, and hpcc.
	for _, c := range []struct {
		benchmark         string
		samples, migrated int
	}{{"cpu", len(nodes), 0}, {"net", 5, 3}, {"hpcc", 1, 1}} {
		r := findResult(s, c.benchmark, "vm")
		h.g.Expect(r.Metrics).NotTo(BeEmpty(), c.benchmark)
		for _, m := range r.Metrics {
			h.g.Expect(m.Samples).To(HaveLen(c.samples), "%s %s: each execution once, none lost, none twice", c.benchmark, m.Name)
			migrated := 0
			for _, sample := range m.Samples {
				if sample.Migrated {
					migrated++
				}
			}
			h.g.Expect(migrated).To(Equal(c.migrated), "%s %s: samples marked as measured during the migration", c.benchmark, m.Name)
		}
	}
	run := s.Status.Runs[0]
	h.g.Expect(run.Phase).To(Equal(vmbenchv1.RunSucceeded), run.Message)
	h.g.Expect(run.Migrations).To(HaveLen(1))
	h.g.Expect(run.Migrations[0]).To(And(HaveField("VMI", "mig-vm-1-master"), HaveField("SourceNode", "worker-a"), HaveField("TargetNode", "worker-b"),
		HaveField("SourcePod", src.Name), HaveField("TargetPod", dst.Name), HaveField("Mode", "PreCopy"),
		HaveField("Outcome", vmbenchv1.MigrationCompleted), HaveField("UID", vmimUID),
		HaveField("Trigger", vmbenchv1.MigrationByEvacuation), HaveField("Object", vmim.Name)))
	h.g.Expect(run.Migrations[0].EndTime.Sub(run.Migrations[0].StartTime.Time)).To(Equal(20 * time.Second))
	h.expectEvent(timeout, corev1.EventTypeNormal, "VMIMigrated", "run mig-vm-1: VMI mig-vm-1-master migration "+vmimUID+
		" from node worker-a to node worker-b (PreCopy) took 20s, started by a drain of node worker-a (KubeVirt's evacuation), kubevirt-evacuation-x7k2p: Completed")
}

// Issue 32 item 6 (envtest): a failed and an aborted migration, written in migrationState as
// virt-controller does, and a VMI that KubeVirt says cannot migrate, are named in the run's status
// and events in KubeVirt's words, and none of them fails the run: the VMs still run where they were.
func TestFailedAbortedAndNotMigratableVMIsAreNamed(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	master, _ := h.migratedMaster("nomig")
	for _, n := range nodes {
		h.setVMIPhase("nomig-vm-1-"+n, kubevirtv1.Running)
	}
	h.eventuallySuite("nomig", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Runs).NotTo(BeEmpty())
		g.Expect(s.Status.Runs[0].Phase).To(Equal(vmbenchv1.RunRunning))
	})
	start := metav1.NewTime(master.CreationTimestamp.Add(10 * time.Second))
	end := metav1.NewTime(start.Add(28 * time.Second))
	const proxyErr = "Live migration failed virError(Code=38, Domain=7, Message='Failed to connect socket to " +
		"'/var/run/kubevirt/migrationproxy/0c4f-source.sock': No such file or directory')"
	h.setMigrationState("nomig-vm-1-node01", &kubevirtv1.VirtualMachineInstanceMigrationState{
		MigrationUID: "vmim-failed", SourcePod: "virt-launcher-nomig-vm-1-node01-aaaaa", TargetPod: "virt-launcher-nomig-vm-1-node01-bbbbb",
		SourceNode: "worker-a", TargetNode: "worker-b", StartTimestamp: &start, EndTimestamp: &end, Mode: kubevirtv1.MigrationPreCopy,
		Completed: true, Failed: true, FailureReason: proxyErr})
	h.setMigrationState("nomig-vm-1-node02", &kubevirtv1.VirtualMachineInstanceMigrationState{
		MigrationUID: "vmim-aborted", SourcePod: "virt-launcher-nomig-vm-1-node02-ccccc", TargetPod: "virt-launcher-nomig-vm-1-node02-ddddd",
		SourceNode: "worker-b", TargetNode: "worker-a", StartTimestamp: &start, EndTimestamp: &end, Mode: kubevirtv1.MigrationPreCopy,
		Completed: true, Failed: true, AbortRequested: true, AbortStatus: kubevirtv1.MigrationAbortSucceeded})
	const notShared = "cannot migrate VMI: PVC nomig-data is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)"
	h.g.Eventually(func() error {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "nomig-vm-1-master"}, vmi); err != nil {
			return err
		}
		vmi.Status.Conditions = append(vmi.Status.Conditions, kubevirtv1.VirtualMachineInstanceCondition{
			Type: kubevirtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse, Reason: "DisksNotLiveMigratable", Message: notShared})
		return k8s.Update(h.ctx, vmi)
	}, timeout, interval).Should(Succeed())

	s := h.eventuallySuite("nomig", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Runs[0].Migrations).To(HaveLen(2))
		g.Expect(s.Status.Runs[0].NotMigratable).NotTo(BeEmpty())
	})
	run := s.Status.Runs[0]
	h.g.Expect(run.Phase).To(Equal(vmbenchv1.RunRunning), "a migration that failed leaves the VM where it ran: the run goes on")
	h.g.Expect(run.Migrations[0]).To(And(HaveField("VMI", "nomig-vm-1-node01"), HaveField("Outcome", vmbenchv1.MigrationFailed), HaveField("Message", proxyErr)))
	h.g.Expect(run.Migrations[1]).To(And(HaveField("VMI", "nomig-vm-1-node02"), HaveField("Outcome", vmbenchv1.MigrationAborted),
		HaveField("Message", "KubeVirt aborted the migration (abortStatus Succeeded)")))
	h.g.Expect(run.NotMigratable).To(HavePrefix("VMI nomig-vm-1-master: DisksNotLiveMigratable: " + notShared))
	h.expectEvent(timeout, corev1.EventTypeWarning, "VMIMigrationFailed", "VMI nomig-vm-1-node01 migration vmim-failed from node worker-a to node worker-b (PreCopy) took 28s, started by an unknown cause (its migration object was gone when the manager looked): Failed: "+proxyErr)
	h.expectEvent(timeout, corev1.EventTypeWarning, "VMIMigrationAborted", "VMI nomig-vm-1-node02", "Aborted: KubeVirt aborted the migration")
	h.expectEvent(timeout, corev1.EventTypeWarning, "VMINotLiveMigratable", "VMI nomig-vm-1-master: DisksNotLiveMigratable: "+notShared)
}

// The target pod of a migration that failed never ran the guest and may have no log (a target that
// could not pull its image): the run's frames are read from the first launcher pod alone, and the
// run completes.
func TestFailedMigrationsTargetIsNotRead(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	master, token := h.migratedMaster("failmig")
	owner := metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))
	src := h.launcherPod("failmig", "failmig-vm-1", map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log", owner,
		runnerLog(t, token, runMessages(t, "failmig-vm-1", 1, "kvm", master.CreationTimestamp.Time)...))
	dst := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "virt-launcher-failmig-", Namespace: h.ns, Labels: src.Labels, OwnerReferences: []metav1.OwnerReference{*owner}},
		Spec:       *src.Spec.DeepCopy(),
	}
	h.g.Expect(k8s.Create(h.ctx, dst)).To(Succeed()) // no log: the fake kubelet answers "no log"
	h.setMigrationState("failmig-vm-1-master", &kubevirtv1.VirtualMachineInstanceMigrationState{
		MigrationUID: "vmim-1", SourcePod: src.Name, TargetPod: dst.Name, SourceNode: "worker-a", TargetNode: "worker-b",
		Mode: kubevirtv1.MigrationPreCopy, Completed: true, Failed: true,
		FailureReason: "Back-off pulling image \"registry:5000/vmbench/vm-disk@sha256:0c4f\""})
	for _, n := range nodes[1:] {
		h.setVMIPhase("failmig-vm-1-"+n, kubevirtv1.Running)
	}
	h.setVMIPhase("failmig-vm-1-master", kubevirtv1.Succeeded)

	s := h.eventuallySuite("failmig", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	h.g.Expect(h.logs.openedPods()).NotTo(ContainElement(dst.Name))
	h.g.Expect(s.Status.Runs[0].Migrations).To(ConsistOf(And(HaveField("Outcome", vmbenchv1.MigrationFailed),
		HaveField("Message", "Back-off pulling image \"registry:5000/vmbench/vm-disk@sha256:0c4f\""))))
}
