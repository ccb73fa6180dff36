package report

import (
	"fmt"
	"math"
	"strconv"
)

// How the tables write figures: values with SI prefixes, means with their intervals, ratios,
// percentages and p-values, and n/a or - where a figure does not exist.

// ratioCell is the ratio in the higher-is-better sense with its interval: 0.871× [0.84, 0.90].
func ratioCell(row Row) string {
	if row.SpeedRatio == nil {
		if row.RatioNote != "" {
			return "n/a (value <= 0)"
		}
		return "n/a"
	}
	if row.SpeedRatioLow == nil {
		return formatSpeed(*row.SpeedRatio) + " [n/a]¹"
	}
	return formatSpeed(*row.SpeedRatio) + " " + formatInterval(row.SpeedRatioLow, row.SpeedRatioHigh)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// meanCell is the mean with its interval and n, and how many values the repetitions averaged when
// that is more than one per repetition: 1408 ± 38 (n=3, 9 values).
func meanCell(n, values int, mean, ci *float64, trimmed bool) string {
	if mean == nil {
		return "n/a"
	}
	count := strconv.Itoa(n)
	if trimmed {
		count += "*"
	} else if values > n {
		count += fmt.Sprintf(", %d values", values)
	}
	if ci == nil {
		return fmt.Sprintf("%s ± n/a (n=%s)", FormatValue(*mean), count)
	}
	return fmt.Sprintf("%s (n=%s)", FormatMeanCI(*mean, *ci), count)
}

// FormatMeanCI rounds the interval to two significant digits and the mean to the same decimal place,
// both with the mean's SI prefix: 1003.9 ± 4.9, 23.81G ± 0.76G, 0.000861 ± 0.000058.
func FormatMeanCI(mean, ci float64) string {
	if ci <= 0 || math.IsInf(ci, 0) || math.IsNaN(ci) {
		return FormatValue(mean) + " ± 0"
	}
	scale, suffix := siPrefix(mean)
	decimals := 1 - int(math.Floor(math.Log10(ci/scale)))
	decimals = max(0, min(decimals, 12))
	return fmt.Sprintf("%.*f%s ± %.*f%s", decimals, mean/scale, suffix, decimals, ci/scale, suffix)
}

// siPrefix is the prefix FormatValue uses for v.
func siPrefix(v float64) (float64, string) {
	abs := math.Abs(v)
	for _, p := range []struct {
		limit, scale float64
		suffix       string
	}{{1e12, 1e12, "T"}, {1e9, 1e9, "G"}, {1e6, 1e6, "M"}, {1e4, 1e3, "k"}} {
		if abs >= p.limit {
			return p.scale, p.suffix
		}
	}
	return 1, ""
}

// FormatValue prints four significant digits, with an SI prefix on large values so that bit/s and
// KiB/s stay readable: 9.412G, 218.6, 0.001234.
func FormatValue(v float64) string {
	scale, suffix := siPrefix(v)
	return trimFloat(v/scale) + suffix
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func formatRatio(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

func formatPercent(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", *v)
}

func formatP(v *float64) string {
	switch {
	case v == nil:
		return "n/a"
	case *v < 0.0001:
		return "<0.0001"
	}
	return strconv.FormatFloat(*v, 'f', 4, 64)
}

func formatCoV(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// formatMDE is the minimum detectable effect relative to the baseline, or in the metric's unit
// when the baseline mean is 0.
func formatMDE(row Row) string {
	switch {
	case row.MDEPercent != nil:
		return fmt.Sprintf("%.1f%%", *row.MDEPercent)
	case row.MDE != nil:
		return FormatValue(*row.MDE) + " " + row.Unit
	}
	return "n/a"
}

func formatSignificant(v *bool) string {
	switch {
	case v == nil:
		return "n/a"
	case *v:
		return "yes"
	}
	return "no"
}
