package suite

import (
	"os"
	"path/filepath"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// The largest sweep the API admits keeps every point in status under the name the parser gave it, so
// that the report recovers N, NB, P and Q, beside HPCC's own figures, and nothing is left out.
func TestFinishRunKeepsEveryPointOfTheLargestHPLSweep(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "results", "testdata", "hpcc-sweep-np2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := results.ParseHPCC(raw)
	if err != nil {
		t.Fatal(err)
	}
	var ms []results.Metric
	for _, m := range parsed {
		if !results.IsHPLPointMetric(m.Name) {
			ms = append(ms, m)
		}
	}
	named := len(ms)
	// The studies' sweep: Ns 1024 to 8192, NBs 32 to 256, P=2 Q=3, at the API's limit of points.
	for _, n := range []int{1024, 2048, 4096, 8192} {
		for _, nb := range []int{32, 64, 128, 256} {
			p := results.HPLPoint{N: n, NB: nb, P: 2, Q: 3}
			ms = append(ms, results.Metric{Name: results.HPLPointMetric(p), Value: float64(n) / 1000, Unit: "Gflop/s", Direction: results.HigherIsBetter})
		}
	}
	if len(ms)-named != vmbenchv1.MaxHPLPoints {
		t.Fatalf("%d points, want the API's maximum %d", len(ms)-named, vmbenchv1.MaxHPLPoints)
	}
	if len(ms) > summary.MaxMetricsPerEntry {
		t.Fatalf("HPCC's %d figures and %d points are %d metrics, more than status keeps per benchmark (%d): lower MaxHPLPoints",
			named, vmbenchv1.MaxHPLPoints, len(ms), summary.MaxMetricsPerEntry)
	}

	st := &vmbenchv1.BenchmarkSuiteStatus{}
	run := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	summary.FinishRun(st, run, vmbenchv1.PlatformContainer, []vmbenchv1.Benchmark{{Name: "hpl", Type: vmbenchv1.BenchmarkHPCC}}, summary.RunCompletion{
		Report: summary.RunReport{Done: &runplan.Message{Kind: runplan.KindDone},
			Results: []runplan.Message{{Kind: runplan.KindResult, Benchmark: "hpl", Node: "node01", Metrics: ms}}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
	})
	got := st.Results[0].Metrics
	if len(got) != len(ms) {
		t.Fatalf("kept %d metrics of %d", len(got), len(ms))
	}
	for i, m := range got {
		if m.Name != ms[i].Name {
			t.Errorf("metric %d stored as %q, want %q", i, m.Name, ms[i].Name)
		}
		if len(m.Samples) != 1 || m.Samples[0].Node != "node01" {
			t.Errorf("%s samples %+v, want one on node01, rank 0's node", m.Name, m.Samples)
		}
	}
	if p, ok := results.ParseHPLPointMetric(got[len(got)-1].Name); !ok || p != (results.HPLPoint{N: 8192, NB: 256, P: 2, Q: 3}) {
		t.Errorf("last point %q recovers as %+v, %v", got[len(got)-1].Name, p, ok)
	}
	if w := warnings(vmbenchv1.BenchmarkSuiteSpec{}, st, ""); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}
