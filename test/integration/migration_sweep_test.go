package integration

import (
	"bytes"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/results"
)

// withWriter adds the memory writer's columns to a probe's table, as the runner writes them for
// p's dirty-rate schedule: per window, the set rate's bytes for its length and the set rate.
func withWriter(t results.Table, p vmbenchv1.MigrationParams) results.Table {
	schedule := p.DirtyRateSchedule()
	out := results.Table{Columns: results.ProbeDirtyColumns}
	for _, r := range t.Rows {
		var rate int64
		for _, s := range schedule {
			if time.Duration(r[results.ProbeMono])*time.Millisecond >= s.From {
				rate = s.Bytes
			}
		}
		out.Rows = append(out.Rows, append(append([]float64{}, r...), float64(rate)*r[results.ProbeLength]/1000, float64(rate)))
	}
	return out
}

// Issue 32 item 3 (envtest): a migration benchmark swept over dirty rates 0, 64Mi and 256Mi (count
// 3, interval 30 s) migrates the master three times, as TestMigrationBenchmarkMigratesTheMasterKTimes
// does, the guest's probe carrying its writer's bytes per window; the third migration, at 256Mi,
// Failed (did not converge). The suite is Complete with each figure keyed by its rate (pause_ms_at_0
// 200 ms, total_seconds_at_64Mi 1 s, the writer's achieved 0 and 64 MiB/s, completed_at_256Mi 0),
// no plain pause_ms, and status.migrationSummaries one entry per rate, the 256Mi one in KubeVirt's
// words, each a line of the report's first screen.
func TestMigrationBenchmarkSweepsDirtyRates(t *testing.T) {
	h := newHarness(t)
	h.startManager(allKinds())
	const name, run = "migd", "migd-vm-1"
	params := vmbenchv1.MigrationParams{Count: 3, Interval: vmbenchv1.DurationOf(30 * time.Second), MigrationTimeout: vmbenchv1.DurationOf(30 * time.Second),
		DirtyRates: []resource.Quantity{resource.MustParse("0"), resource.MustParse("64Mi"), resource.MustParse("256Mi")}}
	b := vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration, Migration: &params}
	master, token := h.migratedMaster(name, b)

	// The probe started 80 s ago: migration 1 at its 25 s (rate 0 since its start), 2 at 50 s (64Mi
	// since 35 s), 3 at 70 s (256Mi since 65 s).
	now := h.clock.Now()
	probeStart := now.Add(-80 * time.Second)
	at := func(s int) *metav1.Time { return &metav1.Time{Time: now.Add(time.Duration(s) * time.Second)} }
	series := withWriter(probeSeries(probeStart, 110*time.Second, at(-54).Time, at(-30).Time), *b.WithDefaults().Migration)
	log := h.probeLog(t, token, run, probeStart, series)
	owner := metav1.NewControllerRef(master, kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"))
	pod := h.launcherPod(name, run, map[string]string{"kubevirt.io": "virt-launcher"}, "guest-console-log", owner, log)
	for _, n := range nodes {
		h.setVMIPhase(run+"-"+n, kubevirtv1.Running)
	}

	// Words written for this test in KubeVirt's form (a libvirt error in its failure reason).
	notConverged := "Live migration failed: virError(Code=1, Domain=10, Message='internal error: migration did not converge')"
	h.playMigrations(name, run, owner, pod, log, []playedMigration{{-55, -52, false}, {-30, -29, false}, {-10, -5, true}}, notConverged, at, nil)
	h.setVMIPhase(run+"-master", kubevirtv1.Succeeded)

	s := h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), "runs: %+v", s.Status.Runs)
	})
	r := findResult(s, "mig", "vm")
	h.g.Expect(r.Failures).To(BeZero(), r.LastError)
	figures := map[string]vmbenchv1.MetricSummary{}
	for _, m := range r.Metrics {
		figures[m.Name] = m
	}
	for metric, want := range map[string]float64{
		"pause_ms_at_0": 200, "total_seconds_at_0": 3, "completed_at_0": 1, "dirtied_mib_per_s_at_0": 0,
		"pause_ms_at_64Mi": 200, "total_seconds_at_64Mi": 1, "completed_at_64Mi": 1, "dirtied_mib_per_s_at_64Mi": 64,
		"completed_at_256Mi": 0,
	} {
		m, ok := figures[metric]
		h.g.Expect(ok).To(BeTrue(), "metric %s in %+v", metric, r.Metrics)
		h.g.Expect(m.Samples).To(HaveLen(1), "%s: one migration at each rate", metric)
		h.g.Expect(m.Mean).To(BeNumerically("~", want, 1e-9), metric)
	}
	h.g.Expect(figures).To(HaveKey("dirtied_mib_per_s_at_256Mi"), "the writer's rate before the migration that failed")
	h.g.Expect(figures).NotTo(HaveKey("pause_ms"), "a sweep keeps no figure pooled over its rates")

	h.g.Expect(s.Status.MigrationSummaries).To(HaveLen(3), "status.migrationSummaries: %+v", s.Status.MigrationSummaries)
	for i, rate := range []string{"0", "64Mi", "256Mi"} {
		sum := s.Status.MigrationSummaries[i]
		h.g.Expect(sum).To(And(HaveField("Benchmark", "mig"), HaveField("Platform", "vm"), HaveField("DirtyRate", rate)))
		h.g.Expect(sum.Summary).To(HavePrefix("vm: migration at dirty rate " + rate + "/s"))
	}
	h.g.Expect(s.Status.MigrationSummaries[0].Summary).To(ContainSubstring("(achieved 0 MiB/s): pause 200 ms [n/a] (background gap 10.2 ms [n/a]), total 3 s [n/a]"))
	h.g.Expect(s.Status.MigrationSummaries[1].Summary).To(HaveSuffix("; against 0/s: pause 200 ms → 200 ms, no interval, total 3 s → 1 s, no interval"))
	h.g.Expect(s.Status.MigrationSummaries[2].Summary).To(ContainSubstring("(0 of 1 completed; did not converge: Failed: Live migration failed: virError(Code=1"))
	rep, err := report.Build(s)
	h.g.Expect(err).NotTo(HaveOccurred())
	var screen bytes.Buffer
	h.g.Expect(rep.WriteFirstScreen(&screen)).To(Succeed())
	for _, sum := range s.Status.MigrationSummaries {
		h.g.Expect(strings.Split(screen.String(), "\n")).To(ContainElement(sum.Summary), "each rate's summary is a line of the report's first screen")
	}
}
