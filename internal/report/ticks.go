package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks puts about five labelled ticks at multiples of 1, 2 or 5 times a power of ten, all
// printed with the same number of decimals, and a minor tick between them.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * pow
	for _, m := range []float64{1, 2, 5} {
		if raw <= m*pow*1.5 {
			step = m * pow
			break
		}
	}
	// Large values get an SI prefix (400k, 3.5M) rather than a row of zeros.
	scale, suffix := siPrefix(math.Max(math.Abs(lo), math.Abs(hi)))
	decimals := max(0, -int(math.Floor(math.Log10(step/scale))))
	var ticks []plot.Tick
	first := math.Ceil(lo/step - 1e-9)
	for i := 0; ; i++ {
		v := (first + float64(i)) * step
		if v > hi+step*1e-9 {
			break
		}
		label := strconv.FormatFloat(v/scale, 'f', decimals, 64) + suffix
		if v == 0 {
			label = "0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
		if half := v + step/2; half < hi {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}

// logTicks labels every power of ten and the 2 and 5 between them, so that a log axis over less
// than a decade still has labels.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= min && v <= max {
				ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return ticks
}
