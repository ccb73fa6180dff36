package report

import (
	"fmt"

	"github.com/vmbench/vmbench/internal/analysis"
)

// RatioMethod says how the ratio and its interval are computed, for every output that shows them.
const RatioMethod = "RATIO is platform/baseline in the higher-is-better sense (baseline/platform for a lower-is-better metric: " +
	"below 1 is worse), the ratio of the geometric means of the repetition means; its 95% interval is Welch's on the " +
	"logarithms of the repetition means, exponentiated"

// formatSpeed prints a ratio with three significant digits and the times sign: 0.871×, 42.5×, 0.00667×.
func formatSpeed(v float64) string {
	return trimFloat3(v) + "×"
}

// trimFloat3 is analysis.Float3: three significant digits, whole above 100.
func trimFloat3(v float64) string { return analysis.Float3(v) }

// formatInterval prints [lo, hi] with the precision of formatSpeed, or the reason there is none.
func formatInterval(lo, hi *float64) string { return analysis.FormatInterval(lo, hi) }

// changeMark is benchstat's mark: "~" where no difference is shown (equivalent or inconclusive), the
// change in percent where the verdict is slower or faster.
func changeMark(row Row) string {
	if (row.Verdict == Slower || row.Verdict == Faster) && row.SpeedRatio != nil {
		return fmt.Sprintf("%+.1f%%", (*row.SpeedRatio-1)*100)
	}
	return "~"
}
