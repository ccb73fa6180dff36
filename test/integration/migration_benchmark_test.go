package integration

import (
	"bytes"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// probeSeries is a probe's table from start for total: 100 ms windows at 1,000 units/s, with a
// 200 ms pause (no work) at each of pauses.
func probeSeries(start time.Time, total time.Duration, pauses ...time.Time) results.Table {
	t := results.Table{Columns: results.ProbeColumns}
	for mono := 0.0; mono < float64(total.Milliseconds()); {
		at := start.Add(time.Duration(mono) * time.Millisecond)
		length, work, gap := 100.0, 100.0, 10.2
		for _, p := range pauses {
			if !at.Before(p) && at.Before(p.Add(100*time.Millisecond)) {
				length, work, gap = 200, 0, 200
			}
		}
		t.Rows = append(t.Rows, []float64{mono, float64(at.UnixMilli()), length, work, gap})
		mono += length
	}
	return t
}

// Issue 32 item 2 (envtest): the manager migrates the master VM of a running migration benchmark
// three times, one migration object after the other, each once the one before ended; the test
// writes what virt-controller and virt-handler would (the object's phase, the VMI's
// migrationState, the target launcher pod), one migration Failed. The suite is Complete with 2
// samples of each figure, 3 of the flag completed, and the failed migration named in KubeVirt's
// words in the run's status and an event; no fourth object. Once the probe started the manager made
// the in-guest probe's peer, a probe worker pod reporting to master.<run>.<ns>.svc:12868, deleted
// with the run; the probe's table has the peer column, so each completed migration has peer_gap_ms
// (900 and 1,500 ms: 1,200 ms), and the status line says "peer lost it for".
func TestMigrationBenchmarkMigratesTheMasterKTimes(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	const name, run = "migb", "migb-vm-1"
	b := vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration,
		Migration: &vmbenchv1.MigrationParams{Count: 3, Interval: vmbenchv1.DurationOf(30 * time.Second), MigrationTimeout: vmbenchv1.DurationOf(30 * time.Second)}}
	master, token := h.migratedMaster(name, b)

	// The probe started 80 s ago on the manager's clock: every migration is due as soon as the one
	// before it ended, and the last still has 30 s of probe after it.
	now := h.clock.Now()
	probeStart := now.Add(-80 * time.Second)
	at := func(s int) *metav1.Time { return &metav1.Time{Time: now.Add(time.Duration(s) * time.Second)} }
	series := probeSeries(probeStart, 110*time.Second, at(-54).Time, at(-7).Time)
	// The VM arm's peer (the probe worker pod outside the VM) lost the VM for 900 ms at the first
	// completed migration (-55 s to -52 s) and 1,500 ms at the last (-10 s to -5 s): the peer column
	// the runner adds, 10 ms elsewhere.
	series.Columns = append(append([]string{}, series.Columns...), results.ProbePeerColumn)
	for i, r := range series.Rows {
		peer, wall := 10.0, time.UnixMilli(int64(r[results.ProbeWall]))
		switch {
		case !wall.Before(at(-52).Time) && wall.Before(at(-52).Add(100*time.Millisecond)):
			peer = 900
		case !wall.Before(at(-6).Time) && wall.Before(at(-6).Add(100*time.Millisecond)):
			peer = 1500
		}
		series.Rows[i] = append(r, peer)
	}
	log := h.probeLog(t, token, run, probeStart, series)
	owner := metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))
	launcher := map[string]string{"kubevirt.io": "virt-launcher"}
	pod := h.launcherPod(name, run, launcher, "guest-console-log", owner, log)
	for _, n := range nodes {
		h.setVMIPhase(run+"-"+n, kubevirtv1.Running)
	}

	// Once the probe started, the manager makes the in-guest probe's peer: one probe worker pod that
	// reports, without the CPU loop, to the master VM by its name in the run's headless Service.
	peer := &corev1.Pod{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-1"}, peer)
	}, timeout, interval).Should(Succeed(), "the VM run's peer probe worker is made once the probe started")
	h.g.Expect(peer.Spec.Containers[0].Command).To(ContainElements("probe-worker", "master."+run+"."+h.ns+".svc:12868", "--load=false"))
	h.g.Expect(peer.Labels).To(HaveKeyWithValue(vmbenchv1.LabelRole, vmbenchv1.RoleProbe))

	proxyErr := "Live migration failed: virError(Code=38, Domain=7, Message='Failed to connect socket to '/var/run/kubevirt/migrationproxy/x-source.sock': No such file or directory')"
	steps := []playedMigration{{-55, -52, false}, {-30, -29, true}, {-10, -5, false}}
	h.playMigrations(name, run, owner, pod, log, steps, proxyErr, at, func(i int, vmim *kubevirtv1.VirtualMachineInstanceMigration) {
		h.g.Expect(vmim.Spec.VMIName).To(Equal(run + "-master"))
		h.g.Expect(metav1.IsControlledBy(vmim, h.get(name))).To(BeTrue(), "the suite owns its migrations")
		// The next one waits for this one to end.
		h.g.Consistently(func() error {
			return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-mig-" + string(rune('2'+i))}, &kubevirtv1.VirtualMachineInstanceMigration{})
		}, 2*time.Second, interval).ShouldNot(Succeed(), "migration %d is not made while %d runs", i+2, i+1)
	})
	h.g.Consistently(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-mig-4"}, &kubevirtv1.VirtualMachineInstanceMigration{})
	}, 2*time.Second, interval).ShouldNot(Succeed(), "count is 3")
	h.setVMIPhase(run+"-master", kubevirtv1.Succeeded)

	s := h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	r := findResult(s, "mig", "vm")
	for _, metric := range []string{"total_seconds", "pause_ms", "dip_percent", "recovery_seconds"} {
		var found bool
		for _, m := range r.Metrics {
			if m.Name == metric {
				found = true
				h.g.Expect(m.Samples).To(HaveLen(2), "%s: one sample per completed migration", metric)
			}
		}
		h.g.Expect(found).To(BeTrue(), "metric %s in %+v", metric, r.Metrics)
	}
	for _, m := range r.Metrics {
		if m.Name == "pause_ms" {
			h.g.Expect(m.Mean).To(Equal(200.0), "the probe's 200 ms pauses")
		}
		if m.Name == "total_seconds" {
			h.g.Expect(m.Mean).To(Equal(4.0), "3 s and 5 s")
		}
	}
	for _, m := range r.Metrics {
		if m.Name == "completed" {
			h.g.Expect(m.Samples).To(HaveLen(3), "completed: one sample per migration, the failed one 0")
		}
	}
	h.g.Expect(r.Failures).To(BeZero(), r.LastError)
	// The peer's figure, one sample per completed migration: 900 and 1,500 ms.
	var peerGap *vmbenchv1.MetricSummary
	for i := range r.Metrics {
		if r.Metrics[i].Name == "peer_gap_ms" {
			peerGap = &r.Metrics[i]
		}
	}
	h.g.Expect(peerGap).NotTo(BeNil(), "peer_gap_ms in %+v", r.Metrics)
	h.g.Expect(peerGap.Samples).To(HaveLen(2))
	h.g.Expect(peerGap.Mean).To(Equal(1200.0), "900 and 1,500 ms")
	// The peer ended with the run.
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: run + "-probe-1"}, &corev1.Pod{})
	}, timeout, interval).ShouldNot(Succeed(), "the peer probe worker is deleted with the run")
	run2 := s.Status.Runs[0]
	h.g.Expect(run2.Phase).To(Equal(vmbenchv1.RunSucceeded), run2.Message)
	h.g.Expect(run2.Migrations[1]).To(And(HaveField("Outcome", vmbenchv1.MigrationFailed), HaveField("Message", proxyErr)))
	for i, m := range run2.Migrations {
		h.g.Expect(m).To(And(HaveField("Trigger", vmbenchv1.MigrationByBenchmark), HaveField("Object", run+"-mig-"+string(rune('1'+i)))),
			"migration %d names the benchmark as what started it", i+1)
	}
	h.expectEvent(timeout, corev1.EventTypeWarning, "VMIMigrationFailed", "virError(Code=38")
	h.g.Expect(s.Status.Runs[0].MigrationsCreated).To(Equal(int32(3)))
	h.g.Expect(s.Status.Runs[0].ProbeStartTime.Time).To(BeTemporally("==", probeStart.Truncate(time.Second)))

	// Status has the report's first-screen line for mig on vm, with its intervals: the two 200 ms
	// pauses, 2 of the 3 migrations completed.
	h.g.Expect(s.Status.MigrationSummaries).To(HaveLen(1), "status.migrationSummaries: %+v", s.Status.MigrationSummaries)
	sum := s.Status.MigrationSummaries[0]
	h.g.Expect(sum).To(And(HaveField("Benchmark", "mig"), HaveField("Platform", "vm"), HaveField("Emulated", false)))
	h.g.Expect(sum.Summary).To(And(HavePrefix("vm: migration: pause 200 ms [200, 200]"), ContainSubstring(", peer lost it for 1200 ms ["),
		HaveSuffix("(2 of 3 completed)")))
	rep, err := report.Build(s)
	h.g.Expect(err).NotTo(HaveOccurred())
	var screen bytes.Buffer
	h.g.Expect(rep.WriteFirstScreen(&screen)).To(Succeed())
	h.g.Expect(strings.Split(screen.String(), "\n")).To(ContainElement(sum.Summary), "the summary is a line of the report's first screen")
}

// playedMigration is one migration a test plays as KubeVirt would: its start and end in seconds
// from the test's clock, and whether it failed.
type playedMigration struct {
	start, end int
	failed     bool
}

// playMigrations plays the run's migrations of its master VMI in turn, as virt-controller and
// virt-handler would: it waits for each migration object the manager makes (check, where given,
// looks at it first), writes its phase and the VMI's migrationState (with failReason for a failed
// one, a new launcher pod holding log for a completed one, which becomes the next one's source),
// and waits until the run recorded it.
func (h *harness) playMigrations(name, run string, owner *metav1.OwnerReference, first *corev1.Pod, log []byte, steps []playedMigration,
	failReason string, at func(int) *metav1.Time, check func(i int, vmim *kubevirtv1.VirtualMachineInstanceMigration)) {
	h.t.Helper()
	source := first
	for i, s := range steps {
		vmim := &kubevirtv1.VirtualMachineInstanceMigration{}
		key := client.ObjectKey{Namespace: h.ns, Name: run + "-mig-" + string(rune('1'+i))}
		h.g.Eventually(func() error { return k8s.Get(h.ctx, key, vmim) }, timeout, interval).Should(Succeed(), "migration %d is created", i+1)
		if check != nil {
			check(i, vmim)
		}
		state := &kubevirtv1.VirtualMachineInstanceMigrationState{MigrationUID: vmim.UID, SourcePod: source.Name, SourceNode: "worker-a",
			TargetNode: "worker-b", StartTimestamp: at(s.start), EndTimestamp: at(s.end), Mode: kubevirtv1.MigrationPreCopy, Completed: !s.failed}
		phase := kubevirtv1.MigrationSucceeded
		if s.failed {
			state.Failed, state.FailureReason, state.TargetPod, phase = true, failReason, run+"-launcher-never", kubevirtv1.MigrationFailed
		} else {
			target := h.launcherPod(name, run, map[string]string{"kubevirt.io": "virt-launcher", "kubevirt.io/migrationJobUID": string(vmim.UID)},
				"guest-console-log", owner, log)
			state.TargetPod = target.Name
			source = target
		}
		vmim.Status.Phase = phase
		h.g.Expect(k8s.Update(h.ctx, vmim)).To(Succeed())
		h.setMigrationState(run+"-master", state)
		h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
			g.Expect(s.Status.Runs[0].Migrations).To(HaveLen(i + 1))
		})
	}
}

// probeLog is the guest's console log of a run whose only benchmark is the migration benchmark mig:
// the runner's start, the probe's start, the probe's result (its 110 s series, parsed as the runner
// would) and the runner's Done, each an authenticated frame under token.
func (h *harness) probeLog(t *testing.T, token []byte, run string, probeStart time.Time, series results.Table) []byte {
	t.Helper()
	ms, err := results.ParseProbe(series.CSV())
	h.g.Expect(err).NotTo(HaveOccurred())
	msgs := []runplan.Message{
		{Kind: runplan.KindStarted, Run: run, Time: probeStart.Add(-time.Second), Virtualization: "kvm"},
		{Kind: runplan.KindProbeStarted, Run: run, Time: probeStart, Benchmark: "mig", Node: "master", Seconds: 110},
		{Kind: runplan.KindResult, Run: run, Time: probeStart.Add(110 * time.Second), Benchmark: "mig", Node: "master", Metrics: ms, Seconds: 110, Table: &series},
		{Kind: runplan.KindDone, Run: run, Time: probeStart.Add(111 * time.Second), BenchmarkSeconds: 111},
	}
	var log bytes.Buffer
	for _, p := range framePieces(t, token, msgs...) {
		log.Write(p)
	}
	return log.Bytes()
}
