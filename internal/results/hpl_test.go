package results

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sweepPoints are the result lines of testdata/hpcc-sweep-np2.txt (Ns 200 400, NBs 32 64, grids 1x2
// and 2x1), as HPL printed them: grids outermost, then N, then NB.
var sweepPoints = []HPLPoint{
	{N: 200, NB: 32, P: 1, Q: 2, Seconds: 0.00, Gflops: 6.897, Passed: true},
	{N: 200, NB: 64, P: 1, Q: 2, Seconds: 0.00, Gflops: 6.981, Passed: true},
	{N: 400, NB: 32, P: 1, Q: 2, Seconds: 0.19, Gflops: 0.2257, Passed: true},
	{N: 400, NB: 64, P: 1, Q: 2, Seconds: 0.07, Gflops: 0.5969, Passed: true},
	{N: 200, NB: 32, P: 2, Q: 1, Seconds: 0.00, Gflops: 5.790, Passed: true},
	{N: 200, NB: 64, P: 2, Q: 1, Seconds: 0.06, Gflops: 0.0856, Passed: true},
	{N: 400, NB: 32, P: 2, Q: 1, Seconds: 0.03, Gflops: 1.378, Passed: true},
	{N: 400, NB: 64, P: 2, Q: 1, Seconds: 0.20, Gflops: 0.2187, Passed: true},
}

func TestHPLPoints(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fixture string
		want    []HPLPoint
	}{
		{"sweep of 2 Ns, 2 NBs and 2 grids", "hpcc-sweep-np2.txt", sweepPoints},
		{"single point", "hpcc-np2.txt", []HPLPoint{{N: 3000, NB: 96, P: 1, Q: 2, Seconds: 48.03, Gflops: 0.375, Passed: true}}},
		{"residual check failed at N=400", "hpcc-sweep-np2-residual-failed.txt", []HPLPoint{
			{N: 200, NB: 32, P: 1, Q: 2, Seconds: 0.00, Gflops: 5.826, Passed: true},
			{N: 400, NB: 32, P: 1, Q: 2, Seconds: 0.09, Gflops: 0.4773, Passed: false},
		}},
		// HPL refused a 2x2 grid on 2 ranks and HPCC ran its defaults (column-major, WC11C2R4): the
		// output shows what ran.
		{"fallback to HPCC's defaults", "hpcc-sweep-np2-grid2x2-fallback.txt", []HPLPoint{
			{N: 3520, NB: 80, P: 1, Q: 2, Seconds: 12.02, Gflops: 2.42, Passed: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := HPLPoints(readFixture(t, tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("HPLPoints mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHPLPointsErrorsAndEdges(t *testing.T) {
	sweep := string(readFixture(t, "hpcc-sweep-np2.txt"))
	hpl := sweep[strings.Index(sweep, hplSectionBegin):strings.Index(sweep, "Begin of Summary section.")]
	t.Run("no HPL section", func(t *testing.T) {
		_, err := HPLPoints(readFixture(t, "hpcc-np2.console.txt"))
		if err == nil || !strings.Contains(err.Error(), `no "Begin of HPL section."`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("HPL section without results", func(t *testing.T) {
		cut := hpl[:strings.Index(hpl, "T/V                N")]
		_, err := HPLPoints([]byte(cut))
		if err == nil || !strings.Contains(err.Error(), "no result line") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cut after a result title", func(t *testing.T) {
		last := strings.LastIndex(hpl, "T/V                N")
		cut := hpl[:last] + "T/V                N    NB     P     Q               Time                 Gflops\n" + strings.Repeat("-", 80) + "\n"
		_, err := HPLPoints([]byte(cut))
		if err == nil || !strings.Contains(err.Error(), "the HPL section ends after a result title (T/V N NB P Q Time Gflops) without its result line") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("cut before the last residual check", func(t *testing.T) {
		last := strings.LastIndex(hpl, "||Ax-b||_oo/")
		got, err := HPLPoints([]byte(hpl[:last]))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 8 || got[7].Passed || !got[6].Passed {
			t.Errorf("got %+v, want 8 points of which only the last is not passed", got)
		}
	})
	t.Run("appended runs use the last HPL section", func(t *testing.T) {
		got, err := HPLPoints([]byte(sweep + string(readFixture(t, "hpcc-np2.txt"))))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].N != 3000 {
			t.Errorf("got %+v, want the single point of the second run", got)
		}
	})
	t.Run("CRLF", func(t *testing.T) {
		got, err := HPLPoints([]byte(strings.ReplaceAll(hpl, "\n", "\r\n")))
		if err != nil || len(got) != len(sweepPoints) || !got[0].Passed {
			t.Errorf("got %+v, %v", got, err)
		}
	})
}

// A sweep keeps HPCC's 31 summary metrics as they are and adds one Gflop/s metric per point, in HPL's
// order; the summary's HPL_Tflops is the fastest point.
func TestParseHPCCSweep(t *testing.T) {
	ms, err := ParseHPCC(readFixture(t, "hpcc-sweep-np2.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, ms)
	if len(ms) != len(hpccMetrics)+len(sweepPoints) {
		t.Fatalf("got %d metrics, want %d summary metrics and %d points", len(ms), len(hpccMetrics), len(sweepPoints))
	}
	for i, km := range hpccMetrics {
		if ms[i].Name != km.key || ms[i].Unit != km.unit {
			t.Errorf("metric %d is %s [%s], want the summary's %s [%s]", i, ms[i].Name, ms[i].Unit, km.key, km.unit)
		}
	}
	var want []Metric
	best := 0.0
	for _, p := range sweepPoints {
		want = append(want, m(HPLPointMetric(p), p.Gflops, "Gflop/s", HigherIsBetter))
		best = math.Max(best, p.Gflops)
	}
	if diff := cmp.Diff(want, ms[len(hpccMetrics):]); diff != "" {
		t.Errorf("point metrics mismatch (-want +got):\n%s", diff)
	}
	if ms[0].Name != "HPL_Tflops" || math.Abs(ms[0].Value*1000-best) > 0.001 {
		t.Errorf("HPL_Tflops = %v, want the fastest point's %v Gflop/s", ms[0].Value, best)
	}
	names := map[string]bool{}
	for _, m := range ms[len(hpccMetrics):] {
		names[m.Name] = true
	}
	for _, name := range []string{"HPL_Gflops_N200_NB32_P1_Q2", "HPL_Gflops_N400_NB64_P2_Q1"} {
		if !names[name] {
			t.Errorf("no metric %s among %v", name, names)
		}
	}
}

func TestParseHPCCFailedResidualNamesThePoint(t *testing.T) {
	_, err := ParseHPCC(readFixture(t, "hpcc-sweep-np2-residual-failed.txt"))
	want := "hpcc: run failed verification (Success=0): HPL N=400 NB=32 P=1 Q=2 failed its residual check"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// One point gives no point metric: HPL_Tflops is that point.
func TestParseHPCCOnePointAddsNoPointMetric(t *testing.T) {
	for _, f := range []string{"hpcc-np2.txt", "hpcc-sweep-np2-grid2x2-fallback.txt"} {
		ms, err := ParseHPCC(readFixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if IsHPLPointMetric(m.Name) {
				t.Errorf("%s: unexpected point metric %s", f, m.Name)
			}
		}
	}
}

func TestHPLPointMetricNames(t *testing.T) {
	for _, tc := range []struct {
		point HPLPoint
		name  string
	}{
		{HPLPoint{N: 200, NB: 32, P: 1, Q: 2}, "HPL_Gflops_N200_NB32_P1_Q2"},
		{HPLPoint{N: 200000, NB: 1024, P: 512, Q: 512}, "HPL_Gflops_N200000_NB1024_P512_Q512"},
	} {
		name := HPLPointMetric(tc.point)
		if name != tc.name {
			t.Errorf("HPLPointMetric(%v) = %s, want %s", tc.point, name, tc.name)
		}
		// Status keeps metric names of up to 64 characters.
		if len(name) > 64 {
			t.Errorf("%s is longer than 64 characters", name)
		}
		back, ok := ParseHPLPointMetric(name)
		if !ok || back != tc.point {
			t.Errorf("ParseHPLPointMetric(%s) = %v, %v", name, back, ok)
		}
	}
	for _, name := range []string{"HPL_Tflops", "HPL_Gflops_N200_NB32_P1", "bs1K_HPL_Gflops_N200_NB32_P1_Q2", "HPL_Gflops_N200_NB32_P1_Q2x", "HPL_Gflops_N_NB32_P1_Q2"} {
		if _, ok := ParseHPLPointMetric(name); ok || IsHPLPointMetric(name) {
			t.Errorf("%s taken for a point metric", name)
		}
	}
}
