//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestMigrationBenchmarkMovesTheMasterThreeTimesAndLosesNoFrame is issue 32's kind case, one small
// VM suite: a single 1-CPU VM runs a sysbench before the migration benchmark and another after it;
// the manager live-migrates the VM three times while the in-guest probe runs (between the two kind
// workers), and the run completes with each migration's total time and the pause the guest saw,
// and with every result frame counted once although they left through four virt-launcher pods in
// turn: the first sysbench's through the first, the probe's and the second sysbench's through the
// last. What the figures mean under emulation: docs/migration.md.
//
// KubeVirt 1.7 itself, on this emulated cluster, once failed the VMI at the end of a migration that
// had completed (CI, 2026-11-30: the source's virt-handler gave up waiting a minute for the target's to
// report the guest). vmbench names that in the run's cause ("which KubeVirt marked failed", unit-tested
// in controllers/suite/failure); the case then runs once more in a new namespace, after printing the
// first attempt as a failure would. Any other failure, or this one twice, fails the case.
func TestMigrationBenchmarkMovesTheMasterThreeTimesAndLosesNoFrame(t *testing.T) {
	e, ended := runMigrationCase(t)
	if cause := kubevirtHandOverFailure(ended); cause != "" {
		e.dump()
		t.Logf("==== KubeVirt failed the VMI at the end of a live migration (%s); the case runs once more in a new namespace", cause)
		_ = k8s.Delete(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}})
		e, ended = runMigrationCase(t)
	}
	checkMigrationCase(e, ended)
}

// kubevirtHandOverFailure is the Failed condition's message when the suite failed because KubeVirt
// failed its VMI at the end of a live migration (failure.migrationEnd's words), else "".
func kubevirtHandOverFailure(s *vmbenchv1.BenchmarkSuite) string {
	c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
	if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "which KubeVirt marked failed") {
		return ""
	}
	return c.Message
}

// runMigrationCase creates the case's suite in a namespace of its own and waits for its end.
func runMigrationCase(t *testing.T) (*env, *vmbenchv1.BenchmarkSuite) {
	e := newEnv(t)
	s := e.sample("suite-quick.yaml", "migrate")
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
	s.Spec.Baseline = "vm"
	s.Spec.Repetitions = 1
	s.Spec.Cluster.Nodes = 1
	// Under emulation a migration of this VM took 25-30 s on the kind cluster (hack/kind/README.md):
	// each gets 50 s, and the next starts a minute after the one before.
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{
		{Name: "cpu-before", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: ptr.To(vmbenchv1.Duration("3s"))}},
		{Name: "mig", Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{Count: 3,
			Interval: ptr.To(vmbenchv1.Duration("60s")), MigrationTimeout: ptr.To(vmbenchv1.Duration("50s"))}},
		{Name: "cpu-after", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: ptr.To(vmbenchv1.Duration("3s"))}},
	}
	s.Spec.SharedStorage = nil
	e.g.Expect(k8s.Create(e.ctx, s)).To(Succeed())
	ended := e.waitEnded("migrate", 25*time.Minute)
	e.keep(ended)
	return e, ended
}

// checkMigrationCase checks what the case's suite ended with.
func checkMigrationCase(e *env, ended *vmbenchv1.BenchmarkSuite) {
	emulates := e.clusterEmulates()
	e.g.Expect(meta.IsStatusConditionTrue(ended.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
		"Failed: %v", meta.FindStatusCondition(ended.Status.Conditions, vmbenchv1.ConditionFailed))

	// The run recorded three migrations of its master VMI, each completed, each to another node.
	e.g.Expect(ended.Status.Runs).To(HaveLen(1))
	run := ended.Status.Runs[0]
	e.g.Expect(run.Migrations).To(HaveLen(3), "runs[0].migrations: %+v", run.Migrations)
	pods := map[string]bool{}
	for i, m := range run.Migrations {
		e.t.Logf("migration %d: %s %s -> %s (%s -> %s) %s %s %v..%v", i+1, m.VMI, m.SourceNode, m.TargetNode, m.SourcePod, m.TargetPod,
			m.Mode, m.Outcome, m.StartTime, m.EndTime)
		e.g.Expect(m.VMI).To(Equal(run.Name+"-master"), "migration %d", i+1)
		e.g.Expect(m.Outcome).To(Equal(vmbenchv1.MigrationCompleted), "migration %d: %s", i+1, m.Message)
		e.g.Expect(m.TargetNode).NotTo(Equal(m.SourceNode), "migration %d", i+1)
		// What started it, read from its object, which KubeVirt labelled with the VMI's name.
		e.g.Expect(m.Trigger).To(Equal(vmbenchv1.MigrationByBenchmark), "migration %d (%s)", i+1, m.Object)
		pods[m.SourcePod], pods[m.TargetPod] = true, true
	}
	e.g.Expect(pods).To(HaveLen(4), "the VM ran in four launcher pods in turn: %v", pods)

	// Every figure of the benchmark has a sample per migration; the guest paused (a pause of 0 would
	// mean the ticker never saw the switch-over) for less than a migration takes.
	mig := resultOf(ended, "mig", "vm")
	e.g.Expect(mig).NotTo(BeNil(), "no result of the migration benchmark")
	e.g.Expect(mig.Failures).To(BeZero(), "migration benchmark: %s", mig.LastError)
	e.g.Expect(mig.Emulated).To(Equal(emulates))
	figures := map[string]vmbenchv1.MetricSummary{}
	for _, m := range mig.Metrics {
		figures[m.Name] = m
		e.t.Logf("mig %s: mean %.3g sd %.3g %s over %d", m.Name, m.Mean, m.StdDev, m.Unit, m.N)
		for _, sample := range m.Samples {
			e.g.Expect(sample.Migrated).To(BeFalse(), "mig %s: the benchmark's own samples measure the migrations, and are not marked as disturbed by them", m.Name)
		}
	}
	for _, name := range []string{"completed", "total_seconds", "pause_ms", "background_gap_ms", "clock_step_ms", "dip_percent", "recovery_seconds", "peer_gap_ms"} {
		e.g.Expect(figures).To(HaveKey(name))
		e.g.Expect(figures[name].N).To(BeEquivalentTo(3), "%s: a sample per migration", name)
	}
	e.g.Expect(figures["completed"].Mean).To(BeEquivalentTo(1))
	e.g.Expect(figures["total_seconds"].Mean).To(BeNumerically(">", 0))
	e.g.Expect(figures["pause_ms"].Mean).To(BeNumerically(">", 0))
	e.g.Expect(figures["pause_ms"].Mean).To(BeNumerically("<", 1000*figures["total_seconds"].Mean+1000),
		"the guest cannot pause for longer than its migration took (plus the ticker's second of slack)")
	// The peer (the probe worker pod reporting to the master VM every 10 ms through the run's Service)
	// lost the VM at least as long as the guest was paused: its reports stop with the guest and resume
	// only once it reached the new launcher pod.
	e.g.Expect(figures["peer_gap_ms"].Mean).To(BeNumerically(">", 0))

	// The frames before the migrations (first launcher pod) and after them (last) were each counted
	// once: one sample of each sysbench, and none marked as measured during a migration.
	for _, name := range []string{"cpu-before", "cpu-after"} {
		res := resultOf(ended, name, "vm")
		e.g.Expect(res).NotTo(BeNil(), "no result of %s", name)
		e.g.Expect(res.Failures).To(BeZero(), "%s: %s", name, res.LastError)
		for _, m := range res.Metrics {
			e.g.Expect(m.N).To(BeEquivalentTo(1), "%s %s: one execution, one sample", name, m.Name)
			for _, sample := range m.Samples {
				e.g.Expect(sample.Migrated).To(BeFalse(), "%s %s ran before or after the migrations", name, m.Name)
			}
		}
	}

	// The report's first screen gives the migrations' figures with their intervals over the three.
	out := e.reportOf("migrate")
	interval := `\[[0-9.e+-]+, [0-9.e+-]+\]`
	line := `vm( \(emulated\))?: migration: pause \S+ ms ` + interval + ` \(background gap \S+ ms ` + interval + `\), peer lost it for \S+ ms ` + interval + `, total \S+ s ` + interval + `, ` +
		`dip \S+% ` + interval + ` for \S+ s ` + interval + ` \(3 of 3 completed\)`
	e.g.Expect(firstScreen(out)).To(MatchRegexp(`\n`+line+`\n`), "the migration line, each figure with its interval")
	e.g.Expect(firstScreen(out)).To(ContainSubstring("pod eviction (a Container platform): the probe worker pod evicted"))

	// Status has the same line, with the same figures and intervals: one entry, for mig on vm.
	e.g.Expect(ended.Status.MigrationSummaries).To(HaveLen(1), "status.migrationSummaries: %+v", ended.Status.MigrationSummaries)
	summary := ended.Status.MigrationSummaries[0]
	e.t.Logf("status.migrationSummaries[0]: %+v", summary)
	e.g.Expect(summary.Benchmark).To(Equal("mig"))
	e.g.Expect(summary.Platform).To(Equal("vm"))
	e.g.Expect(summary.Emulated).To(Equal(emulates))
	e.g.Expect(summary.Summary).To(MatchRegexp(`^`+line+`$`), "status.migrationSummaries[0].summary, each figure with its interval")
	e.g.Expect(strings.Split(firstScreen(out), "\n")).To(ContainElement(summary.Summary),
		"status.migrationSummaries[0].summary is the report's first-screen line for mig on vm")

	// The migration objects are the suite's three, each Succeeded in KubeVirt's words, as long as
	// they last: KubeVirt removed them within a minute of the run's VMI (seen on this cluster).
	migrations := &kubevirtv1.VirtualMachineInstanceMigrationList{}
	e.g.Expect(k8s.List(e.ctx, migrations, client.InNamespace(e.ns))).To(Succeed())
	for _, m := range migrations.Items {
		e.g.Expect(m.Name).To(BeElementOf(run.Name+"-mig-1", run.Name+"-mig-2", run.Name+"-mig-3"))
		e.g.Expect(m.Status.Phase).To(Equal(kubevirtv1.MigrationSucceeded), "migration %s", m.Name)
	}
}

// resultOf is the result of benchmark on platform in s, or nil.
func resultOf(s *vmbenchv1.BenchmarkSuite, benchmark, platform string) *vmbenchv1.BenchmarkResult {
	for i := range s.Status.Results {
		if s.Status.Results[i].Benchmark == benchmark && s.Status.Results[i].Platform == platform {
			return &s.Status.Results[i]
		}
	}
	return nil
}
