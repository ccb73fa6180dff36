package suite

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// TestNextMigration protects the migrations' timing: the first one 20 s into the probe, the next
// one interval after the one before, never two at once, a timed-out one aborted, none started too
// late to see its recovery, and done after Count.
func TestNextMigration(t *testing.T) {
	p := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkMigration}.WithDefaults().Migration // 3 × 60 s, timeout 50 s
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for name, tc := range map[string]struct {
		made []madeMigration
		now  time.Time
		want migrationStep
	}{
		"before the lead-in":   {nil, at(5), migrationStep{action: migrationWait, at: at(20)}},
		"first due":            {nil, at(20), migrationStep{action: migrationCreate, index: 1}},
		"first running":        {[]madeMigration{{created: at(21)}}, at(40), migrationStep{action: migrationWait, at: at(71)}},
		"first timed out":      {[]madeMigration{{created: at(21)}}, at(71), migrationStep{action: migrationAbort, index: 1}},
		"second not yet due":   {[]madeMigration{{created: at(21), ended: true}}, at(45), migrationStep{action: migrationWait, at: at(80)}},
		"second due":           {[]madeMigration{{created: at(21), ended: true}}, at(80), migrationStep{action: migrationCreate, index: 2}},
		"third late but fits":  {[]madeMigration{{created: at(21), ended: true}, {created: at(81), ended: true}}, at(160), migrationStep{action: migrationCreate, index: 3}},
		"third too late":       {[]madeMigration{{created: at(21), ended: true}, {created: at(81), ended: true}}, at(175), migrationStep{action: migrationsDone}},
		"all made and ended":   {[]madeMigration{{ended: true}, {ended: true}, {ended: true}}, at(150), migrationStep{action: migrationsDone}},
		"a later one still on": {[]madeMigration{{ended: true}, {created: at(90)}}, at(100), migrationStep{action: migrationWait, at: at(140)}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := nextMigration(t0, *p, tc.made, tc.now); got != tc.want {
				t.Errorf("nextMigration = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestMigrationObject protects the migration object: a deterministic name per run and index, the
// suite's and run's labels, the master VMI.
func TestMigrationObject(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}}
	m := migrationObject(suite, "s-vm-0", "s-vm-0-master", 2)
	if m.Name != "s-vm-0-mig-2" || m.Namespace != "ns" || m.Spec.VMIName != "s-vm-0-master" ||
		m.Labels[vmbenchv1.LabelSuite] != "s" || m.Labels[vmbenchv1.LabelRun] != "s-vm-0" || m.Kind != "VirtualMachineInstanceMigration" {
		t.Errorf("migration object %+v", m)
	}
}

// TestMigrationResults protects the figures of each migration: from a probe of 100 ms windows at
// 1,000 units/s with a 300 ms pause at 32 s (in migration 1, 30 s to 33 s) and 5 windows at half
// rate after it, migration 1 has total 3 s, pause 300 ms, dip 68.75% (550 units lost of 800) for
// 0.8 s; migration 2 (90 s
// to 95 s, no disturbance) pause at the tick, no dip; migration 3 failed and is an error in
// KubeVirt's words; a migration of another VMI, or one a drain started, is not the benchmark's.
func TestMigrationResults(t *testing.T) {
	probe, migrations := migratedProbe()
	got := migrationResults(probe, "s-vm-0-master", migrations, nil)
	checkMigrationResults(t, got)
	for i, m := range got {
		if want := "migration" + string(rune('1'+i)); m.Variant != want {
			t.Errorf("result %d: variant %q, want %q (one sample per migration)", i, m.Variant, want)
		}
	}
	// A drain's migration of the master between the benchmark's own is not one of its samples.
	drained := append([]vmbenchv1.RunMigration{}, migrations[:1]...)
	drain := migrations[0]
	drain.UID, drain.Trigger, drain.Object = "u-drain", vmbenchv1.MigrationByEvacuation, "kubevirt-evacuation-x"
	drained = append(append(drained, drain), migrations[1:]...)
	checkMigrationResults(t, migrationResults(probe, "s-vm-0-master", drained, nil))
	none := migrationResults(probe, "s-vm-0-master", nil, nil)
	if len(none) != 1 || !strings.Contains(none[0].Error, "no migration of VMI s-vm-0-master") {
		t.Errorf("no migration recorded: %+v, want one error result", none)
	}
}

// TestMigrationResultsPerDirtyRate protects the sweep's keys: with dirtyRates ["0", "64Mi",
// "256Mi"], the master's migration k has its figures named for dirtyRates[k-1] (pause_ms_at_0,
// total_seconds_at_64Mi, ...), the achieved rate beside them (0 before 60 s, then 1 MiB a window
// is 10 MiB/s; 0 is a figure, not a broken sample), and the
// failed third one completed_at_256Mi = 0 with its rate before KubeVirt's words and the rate the
// writer achieved before it; no plain figure. The probe's table has the peer column, so each
// completed migration has the peer's figure too (peer_gap_ms_at_0 = 1,200 ms): 9 figures a rate.
func TestMigrationResultsPerDirtyRate(t *testing.T) {
	probe, migrations := migratedProbe()
	tab := *probe.Table
	// With the VM arm's peer column last: the peer lost the VM for 1,200 ms in the window ending
	// at 33.5 s (migration 1, 30 s to 33 s), 10 ms otherwise.
	tab.Columns = append(append([]string{}, results.ProbeDirtyColumns...), results.ProbePeerColumn)
	rows := make([][]float64, len(tab.Rows))
	for i, r := range tab.Rows {
		dirtied := 0.0 // at rate 0 until 60 s, then 1 MiB a window
		if r[results.ProbeMono] >= 60_000 {
			dirtied = 1 << 20
		}
		peer := 10.0
		if r[results.ProbeMono] == 33_400 {
			peer = 1200
		}
		rows[i] = append(append([]float64{}, r...), dirtied, 10<<20, peer)
	}
	tab.Rows = rows
	probe.Table = &tab
	params := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{
		DirtyRates: []resource.Quantity{resource.MustParse("0"), resource.MustParse("64Mi"), resource.MustParse("256Mi")}}}.WithDefaults().Migration
	got := migrationResults(probe, "s-vm-0-master", migrations, params)
	if len(got) != 3 {
		t.Fatalf("%d results, want 3", len(got))
	}
	value := func(m runplan.Message, name string) (float64, bool) {
		for _, x := range m.Metrics {
			if x.Name == name {
				return x.Value, true
			}
		}
		return 0, false
	}
	for i, rate := range []string{"0", "64Mi"} {
		for name, want := range map[string]float64{
			metricMigrationCompleted: 1, metricMigrationTotal: []float64{3, 5}[i], metricMigrationPause: []float64{300, 10.2}[i],
			metricMigrationDirtyRate: []float64{0, 10}[i], metricMigrationPeerGap: []float64{1200, 10}[i],
		} {
			key := disruption.RateMetric(name, rate)
			if v, ok := value(got[i], key); !ok || math.Abs(v-want) > 1e-6 {
				t.Errorf("migration %d: %s = %v (present %v), want %v", i+1, key, v, ok, want)
			}
		}
		if _, ok := value(got[i], metricMigrationPause); ok {
			t.Errorf("migration %d has the plain %s beside the per-rate one", i+1, metricMigrationPause)
		}
		if e := summary.SampleError(got[i]); e != "" {
			t.Errorf("migration %d is refused as a sample: %s (the achieved rate at 0 is 0 MiB/s, a valid figure)", i+1, e)
		}
		if len(got[i].Metrics) != len(disruption.Figures) {
			t.Errorf("migration %d: %d figures, want %d (every figure once, at its rate)", i+1, len(got[i].Metrics), len(disruption.Figures))
		}
	}
	if v, ok := value(got[2], "dirtied_mib_per_s_at_256Mi"); !ok || v != 10 {
		t.Errorf("migration 3: achieved rate %v (present %v), want 10 MiB/s before it, though it failed", v, ok)
	}
	if v, ok := value(got[2], "completed_at_256Mi"); !ok || v != 0 || len(got[2].Metrics) != 2 ||
		!strings.HasPrefix(got[2].RawTail, "at dirty rate 256Mi/s: ") || !strings.Contains(got[2].RawTail, "virError(Code=38") {
		t.Errorf("migration 3: metrics %+v, raw %q; want completed_at_256Mi = 0 and the achieved rate, its rate and KubeVirt's words", got[2].Metrics, got[2].RawTail)
	}
}

// TestMigrationResultsPerDirtyRateByObject protects the rate of each migration where the run
// recorded its object: a drain's migration of the master between the benchmark's first and second
// is no sample (startedElsewhere), and does not shift the benchmark's second (object s-vm-0-mig-2)
// off 64Mi.
func TestMigrationResultsPerDirtyRateByObject(t *testing.T) {
	probe, migrations := migratedProbe()
	migrations[0].Object = "s-vm-0-mig-1"
	drain := migrations[0]
	drain.Object, drain.Trigger, drain.UID = "kubevirt-evacuation-x7k2", vmbenchv1.MigrationByEvacuation, "drain"
	drain.StartTime, drain.EndTime = &metav1.Time{Time: migrations[0].StartTime.Add(20 * time.Second)}, &metav1.Time{Time: migrations[0].EndTime.Add(20 * time.Second)}
	migrations[2].Object = "s-vm-0-mig-2"
	migrations[3].Object = "s-vm-0-mig-3"
	migrations = append(migrations[:1], append([]vmbenchv1.RunMigration{drain}, migrations[1:]...)...)
	params := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkMigration, Migration: &vmbenchv1.MigrationParams{
		DirtyRates: []resource.Quantity{resource.MustParse("0"), resource.MustParse("64Mi"), resource.MustParse("256Mi")}}}.WithDefaults().Migration
	got := migrationResults(probe, "s-vm-0-master", migrations, params)
	if len(got) != 3 {
		t.Fatalf("%d results, want 3 (the benchmark's, not the drain's)", len(got))
	}
	has := func(m runplan.Message, name string) bool {
		for _, x := range m.Metrics {
			if x.Name == name {
				return true
			}
		}
		return false
	}
	// The drain's (second recorded) is left out; the benchmark's keep their rates by their objects.
	for i, want := range []string{"total_seconds_at_0", "total_seconds_at_64Mi", "completed_at_256Mi"} {
		if !has(got[i], want) {
			t.Errorf("result %d: metrics %+v, want %s", i+1, got[i].Metrics, want)
		}
	}
}

// TestMigrationSamplesInStatus protects the way from the collected report to status: the probe's
// result becomes 2 samples of each figure (an interval over the 2 completed migrations) and 3 of
// the flag completed (one 0), each with its direction, none marked as measured during a migration;
// nothing failed.
func TestMigrationSamplesInStatus(t *testing.T) {
	probe, migrations := migratedProbe()
	benchmarks := []vmbenchv1.Benchmark{vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration}.WithDefaults()}
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "s-vm-0", Platform: "vm", Repetition: 0, Migrations: migrations}
	report := summary.RunReport{Started: &runplan.Message{Kind: runplan.KindStarted}, Results: []runplan.Message{probe},
		Done: &runplan.Message{Kind: runplan.KindDone}}
	failed := summary.FinishRun(st, run, vmbenchv1.PlatformVM, benchmarks, summary.RunCompletion{
		Report: withMigrationResults(report, benchmarks, run, vmbenchv1.PlatformVM), Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}})
	res := summary.ResultFor(st, "mig", "vm")
	for _, name := range []string{metricMigrationTotal, metricMigrationPause, metricMigrationGap, metricMigrationDip, metricMigrationRecovery} {
		m := summary.FindMetric(res.Metrics, name)
		if m == nil || m.N != 2 {
			t.Errorf("metric %s: %+v, want 2 samples", name, m)
		}
	}
	if m := summary.FindMetric(res.Metrics, metricMigrationTotal); m != nil && math.Abs(m.Mean-4) > 1e-9 {
		t.Errorf("total_seconds mean %v, want 4 (3 s and 5 s)", m.Mean)
	}
	if m := summary.FindMetric(res.Metrics, metricMigrationCompleted); m == nil || m.N != 3 {
		t.Errorf("completed: %+v, want 3 samples", m)
	}
	// Its samples fall inside the migrations they measure, yet are not marked as measured during
	// one: --drop-migrated would otherwise drop the benchmark's whole answer.
	for _, m := range res.Metrics {
		for _, sample := range m.Samples {
			if sample.Migrated {
				t.Errorf("metric %s: a sample of the migration benchmark is marked migrated", m.Name)
			}
		}
	}
	// The direction the schedule history and the report judge each figure by: all lower-is-better
	// but the flag completed.
	for _, name := range []string{metricMigrationTotal, metricMigrationPause, metricMigrationStep, metricMigrationDip, metricMigrationRecovery, metricMigrationCompleted} {
		want := vmbenchv1.LowerIsBetter
		if name == metricMigrationCompleted {
			want = vmbenchv1.HigherIsBetter
		}
		if m := summary.FindMetric(res.Metrics, name); m == nil || m.Direction != want {
			t.Errorf("metric %s: %+v, want direction %s", name, m, want)
		}
	}
	if res.Failures != 0 || run.Phase != vmbenchv1.RunSucceeded || len(failed) != 0 {
		t.Errorf("failures %d (%q), run phase %s, failed benchmarks %v; want none, Succeeded", res.Failures, res.LastError, run.Phase, failed)
	}
}

// migratedProbe is a probe of 100 ms windows at 1,000 units/s with a 300 ms pause at 32 s and 5
// windows at half rate after it, and the run's migrations: the master's from 30 s to 33 s and from
// 90 s to 95 s (completed), another VMI's, and the master's failed one at 100 s.
func migratedProbe() (runplan.Message, []vmbenchv1.RunMigration) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tab := results.Table{Columns: results.ProbeColumns}
	mono, half := 0.0, 0
	for mono < 120_000 {
		length, work, gap := 100.0, 100.0, 10.2
		switch {
		case mono == 32_000:
			length, work, gap = 300, 0, 300
		case mono > 32_000 && half < 5:
			work, half = 50, half+1
		}
		tab.Rows = append(tab.Rows, []float64{mono, float64(t0.UnixMilli()) + mono, length, work, gap})
		mono += length
	}
	probe := runplan.Message{Kind: runplan.KindResult, Run: "s-vm-0", Benchmark: "mig", Node: "master", Table: &tab}
	ts := func(s int) *metav1.Time { return &metav1.Time{Time: t0.Add(time.Duration(s) * time.Second)} }
	migrations := []vmbenchv1.RunMigration{
		{VMI: "s-vm-0-master", UID: "u1", StartTime: ts(30), EndTime: ts(33), Outcome: vmbenchv1.MigrationCompleted, Mode: "PreCopy"},
		{VMI: "s-vm-0-node01", UID: "other", StartTime: ts(40), EndTime: ts(41), Outcome: vmbenchv1.MigrationCompleted},
		{VMI: "s-vm-0-master", UID: "u2", StartTime: ts(90), EndTime: ts(95), Outcome: vmbenchv1.MigrationCompleted, Mode: "PreCopy"},
		{VMI: "s-vm-0-master", UID: "u3", StartTime: ts(100), EndTime: ts(101), Outcome: vmbenchv1.MigrationFailed,
			Message: "Live migration failed: virError(Code=38, Domain=7, Message='Failed to connect socket')"},
	}
	return probe, migrations
}

func checkMigrationResults(t *testing.T, got []runplan.Message) {
	t.Helper()
	if len(got) != 3 {
		t.Fatalf("%d results, want 3 (the master's migrations): %+v", len(got), got)
	}
	figures := func(m runplan.Message) map[string]float64 {
		f := map[string]float64{}
		for _, x := range m.Metrics {
			f[x.Name] = x.Value
		}
		return f
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	f1 := figures(got[0])
	near("migration 1 total", f1[metricMigrationTotal], 3)
	near("migration 1 pause", f1[metricMigrationPause], 300)
	near("migration 1 background gap", f1[metricMigrationGap], 10.2)
	near("migration 1 dip", f1[metricMigrationDip], 68.75)
	near("migration 1 recovery", f1[metricMigrationRecovery], 0.8)
	f2 := figures(got[1])
	near("migration 2 total", f2[metricMigrationTotal], 5)
	near("migration 2 pause", f2[metricMigrationPause], 10.2)
	near("migration 2 dip", f2[metricMigrationDip], 0)
	near("migration 1 completed", f1[metricMigrationCompleted], 1)
	if f3 := figures(got[2]); got[2].Error != "" || len(f3) != 1 || f3[metricMigrationCompleted] != 0 ||
		!strings.Contains(got[2].RawTail, "Failed: Live migration failed: virError(Code=38") {
		t.Errorf("migration 3: error %q, metrics %v, raw %q; want completed = 0 alone, with KubeVirt's words", got[2].Error, got[2].Metrics, got[2].RawTail)
	}
}

// TestMadeMigrations protects what counts as made: the status's count (a deleted, timed-out one is
// ended and never made again), the suite's own objects only, and one created before its count was
// written.
func TestMadeMigrations(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "suite-uid"}}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	own := func(i int, phase kubevirtv1.VirtualMachineInstanceMigrationPhase) kubevirtv1.VirtualMachineInstanceMigration {
		m := *migrationObject(suite, "s-vm-0", "s-vm-0-master", i)
		m.CreationTimestamp = metav1.NewTime(t0.Add(time.Duration(i) * time.Minute))
		m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(suite, vmbenchv1.GroupVersion.WithKind("BenchmarkSuite"))}
		m.Status.Phase = phase
		return m
	}
	foreign := own(3, "")
	foreign.OwnerReferences[0].UID = "other"
	items := []kubevirtv1.VirtualMachineInstanceMigration{own(2, kubevirtv1.MigrationSucceeded), own(3, kubevirtv1.MigrationRunning), foreign}
	// Migration 1 was deleted past its timeout; 3 was created but not yet counted.
	got := madeMigrations(suite, "s-vm-0", items, 2)
	want := []madeMigration{{ended: true}, {created: t0.Add(2 * time.Minute), ended: true}, {created: t0.Add(3 * time.Minute)}}
	if len(got) != len(want) {
		t.Fatalf("made %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("migration %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if got := madeMigrations(suite, "s-vm-0", []kubevirtv1.VirtualMachineInstanceMigration{foreign}, 0); len(got) != 0 {
		t.Errorf("another controller's migration counted: %+v", got)
	}
}
