package suite

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/analysis"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// The migration benchmark (issue 32 item 2), on the manager's side: once the runner says its probe
// started (a probe-started message), the run's master VMI is migrated Count times, one
// VirtualMachineInstanceMigration after the other, each one interval after the one before and
// bounded by migrationTimeout; and each migration recorded in runs[].migrations becomes one sample
// of each figure, read from the probe's series against KubeVirt's migration times; one that did not
// complete is a sample of the flag completed = 0, so that it is counted and named, not a failure. migrateWhileProbing
// is the step a running run's reconcile takes; the decisions are pure functions below it.

// +kubebuilder:rbac:groups=kubevirt.io,resources=virtualmachineinstancemigrations,verbs=get;list;watch;create;delete

// Polls of the migration step: the runner's log until the probe started, and a migration object
// until it ended (the manager does not watch migration objects: only a running migration benchmark
// needs them, and a watch would need their CRD on every cluster).
const (
	probeStartPoll = 10 * time.Second
	migrationPoll  = 5 * time.Second
)

// migrateWhileProbing runs the migrations of a running VM run's migration benchmark, if it has one
// (a Container run's evictions: evictWhileProbing):
// it learns when the probe started (once, from the runner's log, kept in the run's status), then
// creates the next migration object when due, or deletes one past its timeout. It returns when to
// look again (zero: nothing more to do).
func (r *SuiteReconciler) migrateWhileProbing(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	adapter platform.Adapter, run platform.Run, children []client.Object, benchmarks []vmbenchv1.Benchmark, now time.Time) (time.Time, error) {
	var params *vmbenchv1.MigrationParams
	for _, b := range benchmarks {
		if b.Type == vmbenchv1.BenchmarkMigration && b.Migration != nil {
			params = b.Migration
			break
		}
	}
	if params == nil || (run.Platform.Type != vmbenchv1.PlatformVM && run.Platform.Type != vmbenchv1.PlatformContainer) {
		return time.Time{}, nil
	}
	if active.ProbeStartTime == nil {
		keys, err := r.frameKeysOf(suite, run.Name)
		if err != nil {
			return time.Time{}, err
		}
		src := adapter.LogSource(run)
		report, err := r.readReport(ctx, suite, src, children, movesOf(active, src.Owner.Name), keys, false)
		if err != nil || report.ProbeStarted == nil {
			// The log may not be readable yet, or the probe not started: look again.
			return now.Add(probeStartPoll), nil //nolint:nilerr // an unreadable log is retried, not an error of the run
		}
		active.ProbeStartTime = &metav1.Time{Time: report.ProbeStarted.Time}
	}
	if run.Platform.Type == vmbenchv1.PlatformContainer {
		// A pod is evicted and replaced instead (eviction_benchmark.go).
		return r.evictWhileProbing(ctx, suite, active, run, *params, now)
	}
	// The in-guest probe's peer outside the VM (peer_probe.go).
	r.peerWhileProbing(ctx, suite, active, run, *params, now)
	list := &kubevirtv1.VirtualMachineInstanceMigrationList{}
	if err := r.APIReader.List(ctx, list, client.InNamespace(suite.Namespace), client.MatchingLabels{vmbenchv1.LabelRun: run.Name}); err != nil {
		return time.Time{}, fmt.Errorf("listing the migrations of run %s: %w", run.Name, err)
	}
	made := madeMigrations(suite, run.Name, list.Items, int(active.MigrationsCreated))
	active.MigrationsCreated = int32(len(made))
	step := nextMigration(active.ProbeStartTime.Time, *params, made, now)
	vmi := platform.VMIName(run.Name, vmbenchv1.RoleMaster)
	switch step.action {
	case migrationCreate:
		obj := migrationObject(suite, run.Name, vmi, step.index)
		if err := ctrl.SetControllerReference(suite, obj, r.Scheme); err != nil {
			return time.Time{}, err
		}
		if err := r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return time.Time{}, fmt.Errorf("creating migration %s of VMI %s: %w", obj.Name, vmi, err)
		}
		active.MigrationsCreated = int32(step.index)
		log.FromContext(ctx).Info("migrating the master VMI", "run", run.Name, "migration", obj.Name, "vmi", vmi)
		return now.Add(migrationPoll), nil
	case migrationAbort:
		obj := &kubevirtv1.VirtualMachineInstanceMigration{ObjectMeta: metav1.ObjectMeta{Name: vmbenchv1.MigrationObjectName(run.Name, step.index), Namespace: suite.Namespace}}
		if err := r.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			return time.Time{}, fmt.Errorf("deleting migration %s past its timeout %s: %w", obj.Name, string(*params.MigrationTimeout), err)
		}
		log.FromContext(ctx).Info("a migration outlived its timeout and was deleted", "run", run.Name, "migration", obj.Name)
		return now.Add(migrationPoll), nil
	case migrationWait:
		if next := now.Add(migrationPoll); len(made) > 0 && !made[len(made)-1].ended && next.Before(step.at) {
			return next, nil
		}
		return step.at, nil
	}
	return time.Time{}, nil
}

// madeMigrations is what the manager sees of the run's created migration objects (created of
// them, as the run's status counts), in index order: only those the suite controls. One that is gone
// or being deleted (past its timeout) counts as ended, so that the next one follows and it is never
// made again.
func madeMigrations(suite *vmbenchv1.BenchmarkSuite, run string, items []kubevirtv1.VirtualMachineInstanceMigration, created int) []madeMigration {
	out := make([]madeMigration, created)
	for i := range out {
		out[i].ended = true
	}
	for i := range items {
		m := &items[i]
		if !metav1.IsControlledBy(m, suite) {
			continue
		}
		n, ok := vmbenchv1.MigrationObjectIndex(run, m.Name)
		if !ok {
			continue
		}
		for n > len(out) {
			// Created, but the status that counts it was not written: it counts from now on.
			out = append(out, madeMigration{ended: true})
		}
		out[n-1] = madeMigration{created: m.CreationTimestamp.Time,
			ended: m.DeletionTimestamp != nil || m.Status.Phase == kubevirtv1.MigrationSucceeded || m.Status.Phase == kubevirtv1.MigrationFailed}
	}
	return out
}

// migrationObject is the run's i-th migration of vmi, labelled with the suite and run. The caller
// sets the suite as its controller (ctrl.SetControllerReference), so that deleting the suite
// removes it, and an unfinished one is aborted with it.
func migrationObject(suite *vmbenchv1.BenchmarkSuite, run, vmi string, i int) *kubevirtv1.VirtualMachineInstanceMigration {
	return &kubevirtv1.VirtualMachineInstanceMigration{
		TypeMeta: metav1.TypeMeta{APIVersion: kubevirtv1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstanceMigration"},
		ObjectMeta: metav1.ObjectMeta{Name: vmbenchv1.MigrationObjectName(run, i), Namespace: suite.Namespace,
			// KubeVirt's own label (its migration controller adds it too): the run's migrations are
			// read by it (migration_trigger.go).
			Labels: map[string]string{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run, kubevirtv1.MigrationSelectorLabel: vmi}},
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
	timeout := p.MigrationTimeout.Duration()
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
	due, late := migrationDue(probeStart, p, next, now)
	if late {
		return migrationStep{action: migrationsDone}
	}
	if now.Before(due) {
		return migrationStep{action: migrationWait, at: due}
	}
	return migrationStep{action: migrationCreate, index: next}
}

// Names of the migration benchmark's figures, one sample per migration.
const (
	metricMigrationCompleted = disruption.MetricCompleted
	metricMigrationTotal     = disruption.MetricTotal
	metricMigrationPause     = disruption.MetricPause
	metricMigrationGap       = disruption.MetricBackgroundGap
	metricMigrationStep      = disruption.MetricClockStep
	metricMigrationDip       = disruption.MetricDip
	metricMigrationRecovery  = disruption.MetricRecovery
	metricMigrationDirtyRate = disruption.MetricDirtyRate
	metricMigrationPeerGap   = disruption.MetricPeerGap
)

// sweepRate is the dirty rate of migration k (from 1) as the spec spells it, where params make a
// dirty-rate sweep.
func sweepRate(params *vmbenchv1.MigrationParams, k int) (string, bool) {
	if params == nil {
		return "", false
	}
	_, name, ok := params.DirtyRateAt(k)
	return name, ok
}

// migrationResults turns the probe's result into one result per migration of vmi recorded in
// migrations (in order; with vmi empty, per eviction of a Container run's probe worker, whose
// total is from the eviction accepted to the replacement Ready, and which has no clock step): KubeVirt's total time (its whole-second start and end) and, from the
// probe's series, the pause, the clock step, the dip and the time back at rate, and the flag
// completed = 1. A migration that did not complete (failed, aborted, or deleted past its timeout) is
// completed = 0 with KubeVirt's words in its raw tail: an outcome, not a broken measurement, so that
// the run and the suite go on; runs[].migrations, its event and the report name it. A completed one
// whose effect cannot be measured (no baseline, never back at rate) is an error.
//
// In a dirty-rate sweep (params with dirtyRates), the benchmark's migration k (its object
// <run>-mig-<k>, else its place among the master's: analysis.MigrationIndex) ran at the rate
// params.DirtyRateAt(k), and each of its figures is named for that rate
// (disruption.RateMetric: pause_ms_at_64Mi), with the rate the guest's writer achieved before it
// (dirtied_mib_per_s_at_64Mi), so that each rate's samples give its own interval.
// A migration something else started (RunMigration.StartedElsewhere: a node drain, KubeVirt's
// update) is not one of the benchmark's samples; the report's migration notes name it.
func migrationResults(probe runplan.Message, vmi string, migrations []vmbenchv1.RunMigration, params *vmbenchv1.MigrationParams) []runplan.Message {
	if probe.Error != "" || probe.Table == nil {
		return []runplan.Message{probe}
	}
	windows := disruption.WindowsOf(*probe.Table)
	var out []runplan.Message
	for _, m := range migrations {
		// A Container run's samples are its probe worker's evictions (vmi empty).
		if (vmi != "" && m.VMI != vmi) || (vmi == "" && m.Mode != vmbenchv1.MigrationModeEviction) || m.StartedElsewhere() {
			continue
		}
		// Migration k of the sweep: by its object's name, else by its place among the master's.
		rate, swept := sweepRate(params, analysis.MigrationIndex(probe.Run, len(out)+1, m))
		// A variant per migration, so that the K results of one node are K samples, not copies of one.
		msg := runplan.Message{Kind: runplan.KindResult, Run: probe.Run, Benchmark: probe.Benchmark, Node: probe.Node, Time: probe.Time,
			Variant: "migration" + strconv.Itoa(len(out)+1)}
		switch {
		case m.Outcome != vmbenchv1.MigrationCompleted:
			// A migration that did not complete is an outcome, not a broken measurement: a flag of 0,
			// with KubeVirt's words in runs[].migrations, its event and the report's notes.
			msg.Metrics = []results.Metric{{Name: metricMigrationCompleted, Value: 0, Unit: results.UnitFlag, Direction: results.HigherIsBetter}}
			msg.RawTail = migrationWords(m)
			if swept {
				msg.RawTail = fmt.Sprintf("at dirty rate %s/s: %s", rate, msg.RawTail)
				// What the guest's writer achieved before it, so that the line can tell a rate
				// the guest never reached from one the migration could not keep up with.
				if m.StartTime != nil {
					if v, ok := disruption.DirtyRateBefore(windows, m.StartTime.Time); ok {
						msg.Metrics = append(msg.Metrics, results.Metric{Name: metricMigrationDirtyRate, Value: v, Unit: "MiB/s", Direction: results.LowerIsBetter})
					}
				}
			}
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
				{Name: metricMigrationCompleted, Value: 1, Unit: results.UnitFlag, Direction: results.HigherIsBetter},
				{Name: metricMigrationTotal, Value: end.Sub(start).Seconds(), Unit: "s", Direction: results.LowerIsBetter},
				{Name: metricMigrationPause, Value: e.PauseMs, Unit: "ms", Direction: results.LowerIsBetter},
				{Name: metricMigrationGap, Value: e.BackgroundGapMs, Unit: "ms", Direction: results.LowerIsBetter},
				{Name: metricMigrationStep, Value: e.ClockStepMs, Unit: "ms", Direction: results.LowerIsBetter},
				{Name: metricMigrationDip, Value: e.DipPercent, Unit: "%", Direction: results.LowerIsBetter},
				{Name: metricMigrationRecovery, Value: e.RecoverySeconds, Unit: "s", Direction: results.LowerIsBetter},
			}
			if vmi != "" && e.HasPeer {
				// A peer outside the VM reported (peer_probe.go): how long it lost the VM.
				msg.Metrics = append(msg.Metrics, results.Metric{Name: metricMigrationPeerGap, Value: e.PeerGapMs, Unit: "ms", Direction: results.LowerIsBetter})
			}
			if vmi == "" {
				// The windows are on the master's clock, which the eviction does not stop: no clock step.
				msg.Metrics = slices.DeleteFunc(msg.Metrics, func(m results.Metric) bool { return m.Name == metricMigrationStep })
				back := 0.0
				if !e.BackAt.IsZero() {
					back = max(e.BackAt.Sub(start).Seconds(), 0)
				}
				msg.Metrics = append(msg.Metrics, results.Metric{Name: disruption.MetricBackAtRate, Value: back, Unit: "s", Direction: results.LowerIsBetter})
			}
			if swept {
				msg.Metrics = append(msg.Metrics, results.Metric{Name: metricMigrationDirtyRate, Value: e.DirtyMiBps, Unit: "MiB/s", Direction: results.LowerIsBetter})
			}
		}
		if swept {
			for i := range msg.Metrics {
				msg.Metrics[i].Name = disruption.RateMetric(msg.Metrics[i].Name, rate)
			}
		}
		out = append(out, msg)
	}
	if len(out) == 0 {
		probe.Error = fmt.Sprintf("no migration of VMI %s was recorded while the probe ran: see the run's events and the VirtualMachineInstanceMigration objects %s",
			vmi, vmbenchv1.MigrationObjectName(probe.Run, 1))
		if vmi == "" {
			probe.Error = fmt.Sprintf("no eviction of the probe worker was recorded while the probe ran: see the run's status (runs[].message) and its pods %s",
				platform.ProbeWorkerName(probe.Run, 1))
		}
		probe.Metrics = nil
		return []runplan.Message{probe}
	}
	return out
}

// withMigrationResults replaces, in a collected report, each result of a migration benchmark (the
// probe's) by one result per migration of the run's master VMI that the run recorded. The probe's
// series stays in the run's tables (summary.ResultTables reads the report before this).
func withMigrationResults(report summary.RunReport, benchmarks []vmbenchv1.Benchmark, run *vmbenchv1.RunStatus, platformType vmbenchv1.PlatformType) summary.RunReport {
	params := analysis.MigrationParamsByName(benchmarks)
	vmi := platform.VMIName(run.Name, vmbenchv1.RoleMaster)
	if platformType == vmbenchv1.PlatformContainer {
		vmi = "" // the probe worker's evictions
	}
	var out []runplan.Message
	for _, m := range report.Results {
		p, ok := params[m.Benchmark]
		if !ok {
			out = append(out, m)
			continue
		}
		out = append(out, migrationResults(m, vmi, run.Migrations, p)...)
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

// migrationDue is when the next-th migration (or eviction: evictions keep the same times) of p is
// due, probeStart + lead-in + (next-1) × interval; late when less than half an interval of the probe
// is left after the later of that time and now, as the recovery after it could not be measured.
func migrationDue(probeStart time.Time, p vmbenchv1.MigrationParams, next int, now time.Time) (due time.Time, late bool) {
	interval := p.Interval.Duration()
	due = probeStart.Add(vmbenchv1.MigrationLeadIn + time.Duration(next-1)*interval)
	from := due
	if now.After(due) {
		from = now
	}
	return due, probeStart.Add(p.ProbeDuration()).Sub(from) < interval/2
}
