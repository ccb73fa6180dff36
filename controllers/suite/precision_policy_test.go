package suite

import (
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
)

// precisionSuite is a one-platform suite with a ±5% target on hpcc/HPL, at least 2 and at most 4
// repetitions, whose status lists planned runs in the given phases and, per repetition, the
// values its nodes measured.
func precisionSuite(planned int32, phases []vmbenchv1.RunPhase, values [][]float64) *vmbenchv1.BenchmarkSuite {
	suite := testSuite()
	suite.Spec.Platforms = []vmbenchv1.Platform{containerPlatform}
	suite.Spec.Repetitions = 2
	suite.Spec.Precision = &vmbenchv1.PrecisionSpec{HalfWidthPercent: 5, MaxRepetitions: 4, Metrics: []string{"hpcc/HPL"}}
	suite.Status.Precision = &vmbenchv1.PrecisionStatus{Repetitions: planned}
	syncRuns(&suite.Status, plannedRuns(suite))
	for i := range suite.Status.Runs {
		suite.Status.Runs[i].Phase = phases[i]
	}
	m := vmbenchv1.MetricSummary{Name: "HPL", Unit: "Gflop/s", Direction: vmbenchv1.HigherIsBetter}
	for rep, vs := range values {
		for _, v := range vs {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Repetition: int32(rep + 1), Node: "node", Value: v})
			m.N, m.Mean, m.StdDev = summary.Combine(m.N, m.Mean, m.StdDev, v)
		}
	}
	suite.Status.Results = []vmbenchv1.BenchmarkResult{{Benchmark: "hpcc", Platform: "container", Metrics: []vmbenchv1.MetricSummary{m}}}
	return suite
}

func succeeded(n int) []vmbenchv1.RunPhase {
	out := make([]vmbenchv1.RunPhase, n)
	for i := range out {
		out[i] = vmbenchv1.RunSucceeded
	}
	return out
}

func TestHalfWidthPercent(t *testing.T) {
	tests := []struct {
		name   string
		values [][]float64
		want   float64
		known  bool
	}{
		// Repetition means 100 and 102: mean 101, sd √2, standard error 1, t(0.975, 1 df) 12.7062:
		// 12.7062 / 101 = 12.58%.
		{name: "two repetitions", values: [][]float64{{100}, {102}}, want: 12.5804, known: true},
		// 100, 101, 99: mean 100, sd 1, standard error 1/√3 = 0.57735, t(0.975, 2 df) 4.30265: 2.484%.
		{name: "three repetitions", values: [][]float64{{100}, {101}, {99}}, want: 2.4841, known: true},
		// The nodes of a repetition are averaged first: (98+102)/2 = 100 and (100+104)/2 = 102 give
		// 12.58% as above. Taken as four independent samples they would give 4.07%.
		{name: "the repetition is the unit", values: [][]float64{{98, 102}, {100, 104}}, want: 12.5804, known: true},
		{name: "no spread is 0 whatever the mean", values: [][]float64{{0}, {0}, {0}}, want: 0, known: true},
		{name: "mean 0 with spread has no relative width", values: [][]float64{{-1}, {1}}},
		{name: "one repetition has no interval", values: [][]float64{{100, 104}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := precisionSuite(2, succeeded(2), tt.values).Status.Results[0].Metrics[0]
			got, why := halfWidthPercent(m)
			if (why == "") != tt.known {
				t.Fatalf("known = %v (%q), want %v", why == "", why, tt.known)
			}
			if math.Abs(got-tt.want) > 1e-3 {
				t.Errorf("half-width = %.4f%%, want %.4f%%", got, tt.want)
			}
		})
	}
}

func TestNextRepetitions(t *testing.T) {
	wide := [][]float64{{100}, {102}}         // ±12.58%, above the 5% target
	narrow := [][]float64{{100}, {101}, {99}} // ±2.48%, within it
	tests := []struct {
		name    string
		planned int32
		phases  []vmbenchv1.RunPhase
		values  [][]float64
		metrics []string
		message string
		want    int32
	}{
		{name: "above the target after every run grows by one", planned: 2, phases: succeeded(2), values: wide, want: 3},
		{name: "a benchmark name covers its metrics", planned: 2, phases: succeeded(2), values: wide, metrics: []string{"hpcc"}, want: 3},
		{name: "within the target stays", planned: 3, phases: succeeded(3), values: narrow, want: 3},
		{name: "at the cap stays", planned: 4, phases: succeeded(4), values: [][]float64{{100}, {110}, {90}, {100}}, want: 4},
		{name: "a run still pending waits", planned: 2, phases: []vmbenchv1.RunPhase{vmbenchv1.RunSucceeded, vmbenchv1.RunPending}, values: wide[:1], want: 2},
		{name: "a failed run ends the growth", planned: 3, phases: []vmbenchv1.RunPhase{vmbenchv1.RunSucceeded, vmbenchv1.RunSucceeded, vmbenchv1.RunFailed}, values: wide, want: 3},
		{name: "a failed benchmark ends the growth", planned: 2, phases: succeeded(2), values: wide, message: "hpcc failed on node01", want: 2},
		{name: "a metric without results does not grow", planned: 2, phases: succeeded(2), values: wide, metrics: []string{"hpcc/PTRANS"}, want: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := precisionSuite(tt.planned, tt.phases, tt.values)
			if tt.metrics != nil {
				suite.Spec.Precision.Metrics = tt.metrics
			}
			suite.Status.Runs[len(suite.Status.Runs)-1].Message = tt.message
			if got := nextRepetitions(suite, judgePrecision(suite)); got != tt.want {
				t.Errorf("nextRepetitions = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestApplyPrecisionPlansTheNextRepetitionInterleaved(t *testing.T) {
	suite := precisionSuite(2, succeeded(2), [][]float64{{100}, {102}})
	suite.Spec.Platforms = []vmbenchv1.Platform{containerPlatform, vmPlatform}
	suite.Spec.Precision.MaxRepetitions = 3
	syncRuns(&suite.Status, plannedRuns(suite))
	for i := range suite.Status.Runs {
		suite.Status.Runs[i].Phase = vmbenchv1.RunSucceeded
	}
	vm := suite.Status.Results[0]
	vm.Platform = "vm"
	suite.Status.Results = append(suite.Status.Results, vm)

	applyPrecision(suite)
	var names []string
	for _, r := range suite.Status.Runs {
		names = append(names, r.Name+"="+string(r.Phase))
	}
	want := "demo-container-1=Succeeded demo-vm-1=Succeeded demo-vm-2=Succeeded demo-container-2=Succeeded demo-container-3=Pending demo-vm-3=Pending"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("runs = %s\nwant   %s", got, want)
	}
	if suite.Status.Precision.Repetitions != 3 {
		t.Errorf("status.precision.repetitions = %d, want 3", suite.Status.Precision.Repetitions)
	}
	// The cap holds even against a status edited past it.
	suite.Status.Precision.Repetitions = 9
	if got := len(plannedRuns(suite)); got != 6 {
		t.Errorf("%d runs planned past the cap, want 6", got)
	}
}

func TestSetPrecisionReached(t *testing.T) {
	tests := []struct {
		name    string
		planned int32
		phases  []vmbenchv1.RunPhase
		values  [][]float64
		phase   vmbenchv1.SuitePhase
		status  metav1.ConditionStatus
		reason  string
		reached bool
		message []string
	}{
		{name: "running", planned: 2, phases: []vmbenchv1.RunPhase{vmbenchv1.RunSucceeded, vmbenchv1.RunRunning}, values: [][]float64{{100}},
			phase: vmbenchv1.SuiteRunning, status: metav1.ConditionUnknown, reason: vmbenchv1.ReasonMeasuring,
			message: []string{"repetition 2 of at most 4", "container hpcc/HPL unknown"}},
		{name: "reached", planned: 3, phases: succeeded(3), values: [][]float64{{100}, {101}, {99}},
			phase: vmbenchv1.SuiteComplete, status: metav1.ConditionTrue, reason: vmbenchv1.ReasonTargetReached, reached: true,
			message: []string{"within ±5% after 3 repetitions", "container hpcc/HPL ±2.48%"}},
		// 100, 110, 90, 100: mean 100, sd 8.165, standard error 4.0825, t(0.975, 3 df) 3.1824: ±12.99%.
		{name: "capped", planned: 4, phases: succeeded(4), values: [][]float64{{100}, {110}, {90}, {100}},
			phase: vmbenchv1.SuiteComplete, status: metav1.ConditionFalse, reason: vmbenchv1.ReasonMaxRepetitionsReached,
			message: []string{"after 4 repetitions", "container hpcc/HPL ±13%", "raise maxRepetitions", "halfWidthPercent", "cluster.dedicatedCPUs"}},
		{name: "failed", planned: 2, phases: []vmbenchv1.RunPhase{vmbenchv1.RunSucceeded, vmbenchv1.RunFailed}, values: [][]float64{{100}},
			phase: vmbenchv1.SuiteFailed, status: metav1.ConditionFalse, reason: vmbenchv1.ReasonPrecisionNotMeasured,
			message: []string{"ended with failures", "container hpcc/HPL (1 repetition(s), an interval needs 2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := precisionSuite(tt.planned, tt.phases, tt.values)
			suite.Status.Phase = tt.phase
			j := applyPrecision(suite)
			setPrecisionReached(suite, j)
			c := meta.FindStatusCondition(suite.Status.Conditions, vmbenchv1.ConditionPrecisionReached)
			if c == nil || c.Status != tt.status || c.Reason != tt.reason {
				t.Fatalf("PrecisionReached = %+v, want %s %s", c, tt.status, tt.reason)
			}
			for _, m := range tt.message {
				if !strings.Contains(c.Message, m) {
					t.Errorf("message %q lacks %q", c.Message, m)
				}
			}
			if got := suite.Status.Precision.Platforms[0].Reached; got != tt.reached {
				t.Errorf("reached = %v, want %v", got, tt.reached)
			}
		})
	}
}

func TestSetPrecisionReachedOnlyWithPrecision(t *testing.T) {
	suite := testSuite()
	meta.SetStatusCondition(&suite.Status.Conditions, metav1.Condition{Type: vmbenchv1.ConditionPrecisionReached, Status: metav1.ConditionTrue, Reason: "x"})
	suite.Status.Precision = &vmbenchv1.PrecisionStatus{Repetitions: 5}
	setPrecisionReached(suite, applyPrecision(suite))
	if suite.Status.Precision != nil || meta.FindStatusCondition(suite.Status.Conditions, vmbenchv1.ConditionPrecisionReached) != nil {
		t.Errorf("a suite without spec.precision kept %+v and %+v", suite.Status.Precision, suite.Status.Conditions)
	}
	if got := len(plannedRuns(suite)); got != 6 {
		t.Errorf("%d runs planned, want spec.repetitions 3 × 2 platforms", got)
	}
}

func TestPrecisionProblem(t *testing.T) {
	tests := []struct {
		name string
		edit func(*vmbenchv1.BenchmarkSuite)
		want string
	}{
		{name: "valid", edit: func(*vmbenchv1.BenchmarkSuite) {}},
		{name: "one repetition", edit: func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Repetitions = 1 }, want: "repetitions of 2 or more"},
		{name: "cap below the minimum", edit: func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Repetitions = 5 }, want: "below spec.repetitions 5"},
		{name: "every platform at the most repetitions", edit: func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Precision.MaxRepetitions = 30
			s.Spec.Platforms = []vmbenchv1.Platform{containerPlatform, vmPlatform, hostPlatform, {Name: "kata", Type: vmbenchv1.PlatformContainer}}
		}},
		{name: "unknown benchmark", edit: func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Precision.Metrics = []string{"hpl/HPL"} }, want: `"hpl/HPL" names no benchmark`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			suite := precisionSuite(2, succeeded(2), nil)
			tt.edit(suite)
			err := precisionProblem(suite)
			if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("precisionProblem = %v, want %q", err, tt.want)
			}
		})
	}
}
