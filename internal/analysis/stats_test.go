package analysis

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics themselves are tested through internal/report, which renders them; the
// interpolation of the critical values is internal to this package.

func near(got, want, relTol float64) bool {
	if want == 0 {
		return math.Abs(got) < relTol
	}
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

func TestCriticalValuesInterpolation(t *testing.T) {
	for _, r := range [][2]float64{{1, 2}, {1, 4}, {2, 4}, {2, 18}, {9, 18}, {999, 1998}, {1, 1998}} {
		for _, alpha := range []float64{0.05, 0.05 / 80, 1e-5} {
			c := newCriticalValues(r[0], r[1], alpha)
			for i := 0; i <= 200; i++ {
				df := r[0] + (r[1]-r[0])*float64(i)/200
				want := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - alpha/2)
				if got := c.at(df); !near(got, want, 2e-4) {
					t.Fatalf("df range %v, alpha %g: at df %g the interpolation gives %.8g, the quantile is %.8g", r, alpha, df, got, want)
				}
			}
		}
	}
}
