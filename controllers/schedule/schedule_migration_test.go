package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
	"github.com/vmbench/vmbench/internal/history"
)

// migrationFigure is one figure of the migration benchmark as the manager writes it into a suite's
// results (controllers/suite's migrationResults): its name, unit, direction and level.
type migrationFigure struct {
	name, unit string
	dir        vmbenchv1.Direction
	level      float64
}

// migrationFigures are the figures of a healthy migration of a small VM.
var migrationFigures = []migrationFigure{
	{disruption.MetricPause, "ms", vmbenchv1.LowerIsBetter, 300},
	{disruption.MetricBackgroundGap, "ms", vmbenchv1.LowerIsBetter, 30},
	{disruption.MetricTotal, "s", vmbenchv1.LowerIsBetter, 8},
	{disruption.MetricDip, "%", vmbenchv1.LowerIsBetter, 40},
	{disruption.MetricRecovery, "s", vmbenchv1.LowerIsBetter, 1.5},
	{disruption.MetricCompleted, "bool", vmbenchv1.HigherIsBetter, 1},
}

// migrationHistory is the history of runs nightly migration suites on one VM platform, each of 2
// repetitions of 3 migrations with 5% noise per migration; from suite at on, figure moved is
// multiplied by factor (for completed: one migration of each repetition does not complete). The
// records are made from the suites' statuses, as the manager makes them.
func migrationHistory(runs, at int, moved string, factor float64, seed uint64) []history.Record {
	rng := rand.New(rand.NewPCG(seed, 32))
	var out []history.Record
	for i := range runs {
		s := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nightly-%02d", i),
			CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 24 * time.Hour))}}
		s.Spec.Baseline = "vm"
		s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
		s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "mig", Type: vmbenchv1.BenchmarkMigration}}
		s.Status.ParametersHash = "h1"
		res := vmbenchv1.BenchmarkResult{Benchmark: "mig", Platform: "vm"}
		for _, f := range migrationFigures {
			m := vmbenchv1.MetricSummary{Name: f.name, Unit: f.unit, Direction: f.dir}
			var values []float64
			for rep := range 2 {
				for k := range 3 {
					v := f.level * math.Exp(0.05*rng.NormFloat64())
					if f.name == disruption.MetricCompleted {
						v = 1
						if i >= at && f.name == moved && k == 0 {
							v = 0
						}
					} else if i >= at && f.name == moved {
						v *= factor
					}
					m.Samples = append(m.Samples, vmbenchv1.Sample{Repetition: int32(rep), Node: "master", Value: v, Migrated: true})
					values = append(values, v)
				}
			}
			m.N = int32(len(values))
			for _, v := range values {
				m.Mean += v / float64(len(values))
			}
			res.Metrics = append(res.Metrics, m)
		}
		s.Status.Results = []vmbenchv1.BenchmarkResult{res}
		out = append(out, recordOf(s, vmbenchv1.SuiteComplete))
	}
	return out
}

// Protects the schedule history of the migration benchmark: a migration figure that moves across
// records (a KubeVirt upgrade that doubles the pause, or that makes a migration in three fail)
// becomes a finding like any other metric's, with the direction that makes it a regression (pause,
// total time, dip and time back at rate lower-is-better; completed higher-is-better), and the same
// move the other way is an improvement, not a regression; steady figures give (almost) none.
func TestMigrationFiguresBecomeFindings(t *testing.T) {
	platforms := map[string]vmbenchv1.PlatformType{"vm": vmbenchv1.PlatformVM}
	for _, tc := range []struct {
		moved      string
		factor     float64
		direction  string
		regression bool
	}{
		{disruption.MetricPause, 2, "up", true},
		{disruption.MetricPause, 0.5, "down", false},
		{disruption.MetricBackgroundGap, 2, "up", true},
		{disruption.MetricTotal, 1.5, "up", true},
		{disruption.MetricDip, 1.5, "up", true},
		{disruption.MetricRecovery, 2, "up", true},
		{disruption.MetricCompleted, 0, "down", true},
	} {
		t.Run(fmt.Sprintf("%s×%g", tc.moved, tc.factor), func(t *testing.T) {
			found, _, err := analyzeHistory(migrationHistory(16, 8, tc.moved, tc.factor, 1), platforms)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 {
				t.Fatalf("%d findings, want 1: %+v", len(found), found)
			}
			f := found[0]
			if f.Benchmark != "mig" || f.Metric != tc.moved || f.Platform != "vm" || f.Arm != vmbenchv1.ArmVM {
				t.Errorf("finding on %s/%s/%s/%s, want mig/%s/vm/vm", f.Benchmark, f.Metric, f.Platform, f.Arm, tc.moved)
			}
			if f.Direction != tc.direction || f.Regression != tc.regression {
				t.Errorf("direction %s regression %v, want %s %v", f.Direction, f.Regression, tc.direction, tc.regression)
			}
			if f.Before != "nightly-07" || f.After != "nightly-08" {
				t.Errorf("change between %s and %s, want nightly-07 and nightly-08", f.Before, f.After)
			}
		})
	}
	// Steady migrations: the detector's false alarms stay rare (measured: none in 200 histories of 6
	// series each, seeds 1-200, and 1 in another draw of the noise; the bound allows two).
	alarms := 0
	for seed := uint64(1); seed <= 200; seed++ {
		found, _, err := analyzeHistory(migrationHistory(16, 16, "", 1, seed), platforms)
		if err != nil {
			t.Fatal(err)
		}
		alarms += len(found)
	}
	if alarms > 2 {
		t.Errorf("steady migrations gave %d findings over 200 histories, want at most 2", alarms)
	}
}
