package suite

import (
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// The migration benchmark (issue 32 item 2), on the manager's side: once the runner says its probe
// started (a probe-started message), the run's master VMI is migrated Count times, one
// VirtualMachineInstanceMigration after the other, each one interval after the one before and
// bounded by migrationTimeout; and each migration recorded in runs[].migrations becomes one sample
// of each figure, read from the probe's series against KubeVirt's migration times. The functions
// here are pure. The collection uses withMigrationResults; the reconcile step that learns of the
// probe's start, creates the next migration object and deletes a timed-out one is not wired in yet
// (docs/migration.md).

// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstancemigrations,verbs=get;list;watch;create;delete

// migrationName is the name of the run's i-th migration object (from 1): deterministic, so that a
// retried reconcile never migrates twice.
func migrationName(run string, i int) string { return run + "-mig-" + strconv.Itoa(i) }

// migrationObject is the run's i-th migration of vmi, labelled with the suite and run. The caller
// sets the suite as its controller (ctrl.SetControllerReference), so that deleting the suite
// removes it, and an unfinished one is aborted with it.
func migrationObject(suite *vmbenchv1.BenchmarkSuite, run, vmi string, i int) *kubevirtv1.VirtualMachineInstanceMigration {
	return &kubevirtv1.VirtualMachineInstanceMigration{
		TypeMeta: metav1.TypeMeta{APIVersion: kubevirtv1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstanceMigration"},
		ObjectMeta: metav1.ObjectMeta{Name: migrationName(run, i), Namespace: suite.Namespace,
			Labels: map[string]string{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run}},
		Spec: kubevirtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
	}
}

// migrationAction is what the run's migrations need next.
type migrationAction int

const (
	// migrationWait: nothing to do before at (a migration runs, or the next is not due yet).
	migrationWait migrationAction = iota
	// migrationCreate: create migration index.
	migrationCreate
	// migrationAbort: migration index outlived migrationTimeout; delete it (KubeVirt aborts it).
	migrationAbort
	// migrationsDone: every migration was made and ended; nothing more before the run ends.
	migrationsDone
)

// migrationStep is the decision of nextMigration.
type migrationStep struct {
	action migrationAction
	index  int       // the migration (from 1) to create or abort
	at     time.Time // when to look again (migrationWait)
}

// madeMigration is what the manager sees of one of its migration objects.
type madeMigration struct {
	created time.Time
	ended   bool // phase Succeeded or Failed
}

// nextMigration decides the run's next migration step from the probe's start (the runner's clock in
// its probe-started message), the benchmark's parameters (defaults applied), the migrations made so
// far (index 1 first) and now. Migration i is due at probeStart + lead-in + (i-1) × interval, and
// never before migration i-1 ended: one migration at a time. A migration is not started once less
// than half an interval of probe is left, as its recovery could not be measured.
func nextMigration(probeStart time.Time, p vmbenchv1.MigrationParams, made []madeMigration, now time.Time) migrationStep {
	interval, timeout := p.Interval.Duration(), p.MigrationTimeout.Duration()
	probeEnd := probeStart.Add(p.ProbeDuration())
	for i, m := range made {
		if m.ended {
			continue
		}
		deadline := m.created.Add(timeout)
		if !now.Before(deadline) {
			return migrationStep{action: migrationAbort, index: i + 1}
		}
		return migrationStep{action: migrationWait, at: deadline}
	}
	next := len(made) + 1
	if next > int(p.Count) {
		return migrationStep{action: migrationsDone}
	}
	due := probeStart.Add(vmbenchv1.MigrationLeadIn + time.Duration(next-1)*interval)
	from := due
	if now.After(due) {
		from = now
	}
	if probeEnd.Sub(from) < interval/2 {
		return migrationStep{action: migrationsDone}
	}
	if now.Before(due) {
		return migrationStep{action: migrationWait, at: due}
	}
	return migrationStep{action: migrationCreate, index: next}
}

// Names of the migration benchmark's figures, one sample per migration.
const (
	metricMigrationTotal    = "total_seconds"
	metricMigrationPause    = "pause_ms"
	metricMigrationStep     = "clock_step_ms"
	metricMigrationDip      = "dip_percent"
	metricMigrationRecovery = "recovery_seconds"
)

// migrationResults turns the probe's result into one result per migration of vmi recorded in
// migrations (in order): KubeVirt's total time (its whole-second start and end) and, from the
// probe's series, the pause, the clock step, the dip and the time back at rate. A migration that did
// not complete is a result with an error in KubeVirt's words, so that it shows among the failures
// and not in the figures; one still running when the run ended is said so.
func migrationResults(probe runplan.Message, vmi string, migrations []vmbenchv1.RunMigration) []runplan.Message {
	if probe.Error != "" || probe.Table == nil {
		return []runplan.Message{probe}
	}
	windows := disruption.WindowsOf(*probe.Table)
	var out []runplan.Message
	for _, m := range migrations {
		if m.VMI != vmi {
			continue
		}
		// A variant per migration, so that the K results of one node are K samples, not copies of one.
		msg := runplan.Message{Kind: runplan.KindResult, Run: probe.Run, Benchmark: probe.Benchmark, Node: probe.Node, Time: probe.Time,
			Variant: "migration" + strconv.Itoa(len(out)+1)}
		switch {
		case m.Outcome != vmbenchv1.MigrationCompleted:
			msg.Error = migrationWords(m)
		case m.StartTime == nil || m.EndTime == nil:
			msg.Error = describeMigration(m) + ", but KubeVirt's migration state has no start or end time"
		default:
			start, end := m.StartTime.Time, m.EndTime.Time
			e, err := disruption.Analyse(windows, start, end)
			if err != nil {
				msg.Error = fmt.Sprintf("%s: %v", describeMigration(m), err)
				break
			}
			msg.Time, msg.Seconds = end, end.Sub(start).Seconds()
			msg.Metrics = []results.Metric{
				{Name: metricMigrationTotal, Value: end.Sub(start).Seconds(), Unit: "s", Direction: results.LowerIsBetter},
				{Name: metricMigrationPause, Value: e.PauseMs, Unit: "ms", Direction: results.LowerIsBetter},
				{Name: metricMigrationStep, Value: e.ClockStepMs, Unit: "ms", Direction: results.LowerIsBetter},
				{Name: metricMigrationDip, Value: e.DipPercent, Unit: "%", Direction: results.LowerIsBetter},
				{Name: metricMigrationRecovery, Value: e.RecoverySeconds, Unit: "s", Direction: results.LowerIsBetter},
			}
		}
		out = append(out, msg)
	}
	if len(out) == 0 {
		probe.Error = fmt.Sprintf("no migration of VMI %s was recorded while the probe ran: see the run's events and the VirtualMachineInstanceMigration objects %s",
			vmi, migrationName(probe.Run, 1))
		probe.Metrics = nil
		return []runplan.Message{probe}
	}
	return out
}

// withMigrationResults replaces, in a collected report, each result of a migration benchmark (the
// probe's) by one result per migration of the run's master VMI that the run recorded. The probe's
// series stays in the run's tables (summary.ResultTables reads the report before this).
func withMigrationResults(report summary.RunReport, benchmarks []vmbenchv1.Benchmark, run *vmbenchv1.RunStatus) summary.RunReport {
	migration := map[string]bool{}
	for _, b := range benchmarks {
		migration[b.Name] = b.Type == vmbenchv1.BenchmarkMigration
	}
	var out []runplan.Message
	for _, m := range report.Results {
		if !migration[m.Benchmark] {
			out = append(out, m)
			continue
		}
		out = append(out, migrationResults(m, platform.VMIName(run.Name, vmbenchv1.RoleMaster), run.Migrations)...)
	}
	report.Results = out
	return report
}

// migrationWords is how a migration that did not complete ended, in KubeVirt's words
// (describeMigration gives its failure reason or abort status).
func migrationWords(m vmbenchv1.RunMigration) string {
	if m.Outcome == vmbenchv1.MigrationRunning {
		return describeMigration(m) + " when the probe ended (timed out)"
	}
	return describeMigration(m)
}
