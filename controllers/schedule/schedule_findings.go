package schedule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/detect"
	"github.com/vmbench/vmbench/internal/history"
)

// MaxFindings is how many findings a schedule's status keeps; the oldest go first.
const MaxFindings = 32

// findingSeries is one series of the history: a platform's own results for one benchmark and
// metric (an arm), or that platform's log-ratio to the baseline platform.
type findingSeries struct {
	Benchmark, Metric, Platform string
	Arm                         vmbenchv1.FindingArm
	// Ratio is true for the log-ratio series.
	Ratio bool
	Sense detect.Sense
	Runs  []detect.Run
	// Record is, per run, the index of its record in the records analysed.
	Record []int
}

func (s *findingSeries) name() string {
	return fmt.Sprintf("%s %s on %s (%s)", s.Benchmark, s.Metric, s.Platform, s.Arm)
}

// currentSeries keeps the records a series is made of: the complete ones under the newest
// parameters hash, from the last record under another hash on (a new hash starts a new series).
// The history holds at most MaxHistoryRecords records, which bounds all that follows.
func currentSeries(records []history.Record) []history.Record {
	var complete []history.Record
	for _, r := range records {
		if r.Phase == vmbenchv1.SuiteComplete {
			complete = append(complete, r)
		}
	}
	if len(complete) == 0 {
		return nil
	}
	hash := complete[len(complete)-1].ParametersHash
	start := len(complete) - 1
	for start > 0 && complete[start-1].ParametersHash == hash {
		start--
	}
	return complete[start:]
}

// armOf is the arm of a platform: its type from the schedule's suite template, in lower case.
func armOf(platforms map[string]vmbenchv1.PlatformType, platform string) vmbenchv1.FindingArm {
	switch platforms[platform] {
	case vmbenchv1.PlatformVM:
		return vmbenchv1.ArmVM
	case vmbenchv1.PlatformHost:
		return vmbenchv1.ArmHost
	default:
		return vmbenchv1.ArmContainer
	}
}

// buildSeries makes the arm series of every benchmark, metric and platform of the records, and
// the log-ratio series of every platform but the baseline.
//
// A ratio run's mean is MeanLog of the platform minus MeanLog of the baseline. The detector takes
// a run's squared standard error as Variance/N (moderated with the series' pooled variance with
// N-1 degrees of freedom, see internal/detect). So that this is VarLog_p/N_p + VarLog_b/N_b, the
// squared standard error of a difference of two independent means, N is the smaller of the two
// (the fewer degrees of freedom, the conservative choice) and Variance is N times that sum.
func buildSeries(records []history.Record, platforms map[string]vmbenchv1.PlatformType) []*findingSeries {
	type key struct {
		benchmark, metric, platform string
		ratio                       bool
	}
	byKey := map[key]*findingSeries{}
	var order []key
	add := func(k key, dir vmbenchv1.Direction, rec int, run detect.Run) {
		s := byKey[k]
		if s == nil {
			s = &findingSeries{Benchmark: k.benchmark, Metric: k.metric, Platform: k.platform, Ratio: k.ratio,
				Arm: armOf(platforms, k.platform), Sense: detect.HigherIsBetter}
			if k.ratio {
				s.Arm = vmbenchv1.ArmRatio
			}
			if dir == vmbenchv1.LowerIsBetter {
				s.Sense = detect.LowerIsBetter
			}
			byKey[k] = s
			order = append(order, k)
		}
		s.Runs = append(s.Runs, run)
		s.Record = append(s.Record, rec)
	}
	for i, r := range records {
		base := map[[2]string]history.MetricRecord{}
		for _, m := range r.Metrics {
			if m.Platform == r.Baseline && usable(m) {
				base[[2]string{m.Benchmark, m.Metric}] = m
			}
		}
		for _, m := range r.Metrics {
			if !usable(m) {
				continue
			}
			run := detect.Run{ID: r.Suite, Time: r.Scheduled, N: m.N, Mean: *m.MeanLog, Variance: varOf(m)}
			add(key{m.Benchmark, m.Metric, m.Platform, false}, m.Direction, i, run)
			b, ok := base[[2]string{m.Benchmark, m.Metric}]
			if !ok || m.Platform == r.Baseline {
				continue
			}
			n := min(m.N, b.N)
			se2 := varOf(m)/float64(m.N) + varOf(b)/float64(b.N)
			add(key{m.Benchmark, m.Metric, m.Platform, true}, m.Direction, i,
				detect.Run{ID: r.Suite, Time: r.Scheduled, N: n, Mean: *m.MeanLog - *b.MeanLog, Variance: float64(n) * se2})
		}
	}
	out := make([]*findingSeries, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

func usable(m history.MetricRecord) bool {
	return m.N >= 1 && m.MeanLog != nil && !math.IsNaN(*m.MeanLog) && !math.IsInf(*m.MeanLog, 0)
}

func varOf(m history.MetricRecord) float64 {
	if m.N < 2 || m.VarLog == nil || !(*m.VarLog >= 0) || math.IsInf(*m.VarLog, 0) {
		return 0
	}
	return *m.VarLog
}

// findingID is a hash of the series and the suite after the change.
func findingID(s *findingSeries, after string) string {
	h := sha256.Sum256([]byte(strings.Join([]string{s.Benchmark, s.Metric, s.Platform, string(s.Arm), after}, "\x00")))
	return hex.EncodeToString(h[:8])
}

// seriesAnalysis is one series and the detector's verdict on it.
type seriesAnalysis struct {
	series   *findingSeries
	analysis detect.Analysis
}

// analyzeHistory runs the detector over every series of the records, once, and returns the
// findings of their changes, oldest first, and every series' analysis (suspectsOf picks the series
// whose newest runs suggest a change; sensitivities reads the noise).
func analyzeHistory(all []history.Record, platforms map[string]vmbenchv1.PlatformType) ([]vmbenchv1.Finding, []seriesAnalysis, error) {
	records := currentSeries(all)
	series := buildSeries(records, platforms)
	results := make([]seriesAnalysis, 0, len(series))
	for _, s := range series {
		a, err := detect.Analyze(s.Runs, s.Sense, detect.DefaultConfig())
		if err != nil {
			return nil, nil, fmt.Errorf("analysing %s: %w", s.name(), err)
		}
		results = append(results, seriesAnalysis{series: s, analysis: a})
	}
	var changes []vmbenchv1.Finding
	for _, res := range results {
		for _, step := range res.analysis.Changes {
			s := res.series
			// A change of the ratio where an arm of it changed too is that arm's finding already:
			// one change, one finding. The ratio's own findings are the moves neither arm shows.
			if rec := s.Record[step.Index]; s.Ratio && (movedNear(results, s.Benchmark, s.Metric, s.Platform, false, rec) ||
				movedNear(results, s.Benchmark, s.Metric, records[0].Baseline, false, rec)) {
				continue
			}
			changes = append(changes, makeFinding(s, step, records, results))
		}
	}
	findings := groupFindings(changes, recordPositions(records))
	sort.SliceStable(findings, func(i, j int) bool { return findings[i].Time.Before(&findings[j].Time) })
	return findings, results, nil
}

// groupFindings makes one finding of the changes of all series at the same record, or one record
// off (a series' split may land a run apart from the others'): an upgrade that moves many metrics
// is one finding, the way an alert summary groups alerts. The finding's own fields are its worst
// series' (the largest regression, else the largest step), its ID that series' as alone; the
// others are listed worst first, at most MaxFindingSeries, and all counted. pos gives each suite's
// record index.
func groupFindings(changes []vmbenchv1.Finding, pos map[string]int) []vmbenchv1.Finding {
	sort.SliceStable(changes, func(i, j int) bool { return pos[changes[i].After] < pos[changes[j].After] })
	var out []vmbenchv1.Finding
	for start := 0; start < len(changes); {
		end := start + 1
		for end < len(changes) && pos[changes[end].After]-pos[changes[start].After] <= 1 {
			end++
		}
		out = append(out, summarize(changes[start:end]))
		start = end
	}
	return out
}

// worseChange orders the changes of a group: regressions first, then the larger step, then by name.
func worseChange(a, b vmbenchv1.Finding) int {
	if a.Regression != b.Regression {
		if a.Regression {
			return -1
		}
		return 1
	}
	if sa, sb := math.Abs(math.Log(a.Ratio)), math.Abs(math.Log(b.Ratio)); sa != sb {
		if sa > sb {
			return -1
		}
		return 1
	}
	return strings.Compare(seriesName(a), seriesName(b))
}

func seriesName(f vmbenchv1.Finding) string {
	return fmt.Sprintf("%s %s on %s (%s)", f.Benchmark, f.Metric, f.Platform, f.Arm)
}

// summarize is the finding of a group of changes at one record.
func summarize(group []vmbenchv1.Finding) vmbenchv1.Finding {
	group = slices.Clone(group)
	slices.SortStableFunc(group, worseChange)
	f := group[0]
	f.SeriesCount = int32(len(group))
	f.Regressions = 0
	f.Series = nil
	for _, g := range group {
		if g.Regression {
			f.Regressions++
		}
	}
	if len(group) > 1 {
		for _, g := range group[:min(len(group), vmbenchv1.MaxFindingSeries)] {
			f.Series = append(f.Series, vmbenchv1.FindingSeries{Benchmark: g.Benchmark, Metric: g.Metric, Platform: g.Platform, Arm: g.Arm,
				Direction: g.Direction, Regression: g.Regression, Ratio: g.Ratio})
		}
	}
	return f
}

// findingSeriesOf are the series a finding names: those listed, or its own.
func findingSeriesOf(f vmbenchv1.Finding) []vmbenchv1.FindingSeries {
	if len(f.Series) > 0 {
		return f.Series
	}
	return []vmbenchv1.FindingSeries{{Benchmark: f.Benchmark, Metric: f.Metric, Platform: f.Platform, Arm: f.Arm, Direction: f.Direction,
		Regression: f.Regression, Ratio: f.Ratio}}
}

func makeFinding(s *findingSeries, step detect.Step, records []history.Record, results []seriesAnalysis) vmbenchv1.Finding {
	after := records[s.Record[step.Index]]
	before := records[s.Record[step.Index-1]]
	return vmbenchv1.Finding{
		ID: findingID(s, after.Suite), Benchmark: s.Benchmark, Metric: s.Metric, Platform: s.Platform, Arm: s.Arm,
		Before: before.Suite, After: after.Suite, Time: metav1.Time{Time: after.Scheduled},
		Direction: string(step.Direction), Regression: step.Regression,
		Ratio: step.Ratio, RatioLow: step.RatioLow, RatioHigh: step.RatioHigh, PValue: step.PValue,
		State: vmbenchv1.FindingUntriaged, SeriesCount: 1, Regressions: int32(boolInt(step.Regression)),
		Explanation:        explainArms(s, s.Record[step.Index], records[0].Baseline, results),
		EnvironmentChanges: history.EnvironmentChanges(before.Environments, after.Environments),
	}
}

// movedNear says whether the series of benchmark, metric and platform (arm or ratio) has a change
// whose first run is within one record of rec.
func movedNear(results []seriesAnalysis, benchmark, metric, platform string, ratio bool, rec int) bool {
	for _, res := range results {
		s := res.series
		if s.Benchmark != benchmark || s.Metric != metric || s.Platform != platform || s.Ratio != ratio {
			continue
		}
		for _, c := range res.analysis.Changes {
			if d := s.Record[c.Index] - rec; d >= -1 && d <= 1 {
				return true
			}
		}
	}
	return false
}

// explainArms says which arm moved at the record rec: the platform's (the VM side, as a rule), the
// baseline's (the container side), or both.
func explainArms(s *findingSeries, rec int, baseline string, results []seriesAnalysis) string {
	if s.Platform == baseline {
		// A change of the baseline arm: did any other platform's arm move with it?
		others := false
		for _, res := range results {
			o := res.series
			if !o.Ratio && o.Benchmark == s.Benchmark && o.Metric == s.Metric && o.Platform != baseline &&
				movedNear(results, o.Benchmark, o.Metric, o.Platform, false, rec) {
				others = true
			}
		}
		if others {
			return bothMoved(false)
		}
		return armMoved(s.Arm, baseline)
	}
	platformMoved := movedNear(results, s.Benchmark, s.Metric, s.Platform, false, rec)
	baseMoved := movedNear(results, s.Benchmark, s.Metric, baseline, false, rec)
	ratioMoved := movedNear(results, s.Benchmark, s.Metric, s.Platform, true, rec)
	switch {
	case platformMoved && baseMoved:
		return bothMoved(ratioMoved)
	case platformMoved:
		return armMoved(armOfSeries(results, s), s.Platform)
	case baseMoved:
		return armMoved(armOfSeries(results, &findingSeries{Benchmark: s.Benchmark, Metric: s.Metric, Platform: baseline}), baseline)
	default:
		return "the ratio moved while neither arm did significantly on its own: small opposite moves of both arms; compare the two suites with vmbench report"
	}
}

// armOfSeries is the arm of the platform's own series.
func armOfSeries(results []seriesAnalysis, s *findingSeries) vmbenchv1.FindingArm {
	for _, res := range results {
		if !res.series.Ratio && res.series.Platform == s.Platform {
			return res.series.Arm
		}
	}
	return vmbenchv1.ArmContainer
}

func bothMoved(ratioMoved bool) string {
	if ratioMoved {
		return "both arms moved, by different amounts: look at the node, kernel and hardware, and at what only one arm runs on"
	}
	return "both arms moved and their ratio held: look at the node, kernel and hardware"
}

func armMoved(arm vmbenchv1.FindingArm, platform string) string {
	switch arm {
	case vmbenchv1.ArmVM:
		return fmt.Sprintf("the VM arm (%s) moved: look at KubeVirt, QEMU, virt-launcher", platform)
	case vmbenchv1.ArmHost:
		return fmt.Sprintf("the host arm (%s) moved: look at the node, kernel and hardware", platform)
	default:
		return fmt.Sprintf("the container arm (%s) moved: look at the container runtime", platform)
	}
}

// mergeFindings adds the findings not in the status yet (sameFinding), keeps the states of the
// ones there (whose list of series grows when more series show the change), and keeps the newest
// MaxFindings. It returns the new ones that are kept.
func mergeFindings(have, found []vmbenchv1.Finding, records []history.Record) ([]vmbenchv1.Finding, []vmbenchv1.Finding) {
	pos := recordPositions(records)
	out := append([]vmbenchv1.Finding(nil), have...)
	var added []vmbenchv1.Finding
	for _, f := range found {
		known := false
		for i := range out {
			h := &out[i]
			if !sameFinding(*h, f, pos) {
				continue
			}
			known = true
			if f.SeriesCount > max(h.SeriesCount, 1) {
				h.SeriesCount, h.Regressions, h.Series = f.SeriesCount, f.Regressions, ownFirst(*h, f.Series)
			}
			break
		}
		if !known {
			out = append(out, f)
			added = append(added, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(&out[j].Time) })
	if len(out) > MaxFindings {
		out = out[len(out)-MaxFindings:]
	}
	kept := added[:0]
	for _, f := range added {
		if slices.ContainsFunc(out, func(o vmbenchv1.Finding) bool { return o.ID == f.ID }) {
			kept = append(kept, f)
		}
	}
	return out, kept
}

// ownFirst is series with the finding's own series first: a finding made before grouping, or whose
// worst series is no longer the group's worst, keeps describing its own series first.
func ownFirst(f vmbenchv1.Finding, series []vmbenchv1.FindingSeries) []vmbenchv1.FindingSeries {
	out := slices.Clone(series)
	i := slices.IndexFunc(out, func(x vmbenchv1.FindingSeries) bool {
		return x.Benchmark == f.Benchmark && x.Metric == f.Metric && x.Platform == f.Platform && x.Arm == f.Arm
	})
	switch {
	case i > 0:
		own := out[i]
		copy(out[1:i+1], out[:i])
		out[0] = own
	case i < 0:
		own := findingSeriesOf(vmbenchv1.Finding{Benchmark: f.Benchmark, Metric: f.Metric, Platform: f.Platform, Arm: f.Arm,
			Direction: f.Direction, Regression: f.Regression, Ratio: f.Ratio})[0]
		out = append([]vmbenchv1.FindingSeries{own}, out[:min(len(out), vmbenchv1.MaxFindingSeries-1)]...)
	}
	return out
}

// sameFinding says whether two findings are one change: the same ID, or suites after within one
// record (pos gives each suite's record index) and a series in common that moved the same way.
func sameFinding(a, b vmbenchv1.Finding, pos map[string]int) bool {
	if a.ID == b.ID {
		return true
	}
	pa, oka := pos[a.After]
	pb, okb := pos[b.After]
	if !oka || !okb || pa-pb < -1 || pa-pb > 1 {
		return false
	}
	for _, x := range findingSeriesOf(a) {
		for _, y := range findingSeriesOf(b) {
			if x.Benchmark == y.Benchmark && x.Metric == y.Metric && x.Platform == y.Platform && x.Arm == y.Arm && x.Direction == y.Direction {
				return true
			}
		}
	}
	return false
}

// findChanges analyses the schedule's history after a record was added: it adds new findings to
// the status, sets ChangeSuspected, and returns an event per new finding. On an error the
// conditions ChangeSuspected and Regressed are removed, so that the next reconcile analyses again.
//
// The confirmation round under way is settled with this analysis once its suites are all recorded,
// and a new round is queued for the findings it adds and the suspects not queued for before
// (spec.confirmation).
func (r *ScheduleReconciler) findChanges(ctx context.Context, sched *vmbenchv1.BenchmarkSchedule, seen scheduleObservation,
	now time.Time) ([]scheduleEvent, error) {
	records, err := r.History.List(ctx, sched)
	var lost map[string]bool
	var newest types.UID
	if err == nil {
		if len(records) > 0 {
			newest = records[len(records)-1].UID
		}
		r.newest.set(sched, newest)
		lost, err = r.lostConfirmations(ctx, sched, seen, records)
	}
	if err == nil {
		var found []vmbenchv1.Finding
		var results []seriesAnalysis
		found, results, err = analyzeHistory(records, templatePlatforms(sched))
		if err == nil {
			suspects := suspectsOf(results)
			recordSensitivity(sched, results)
			recordEnvironmentChange(sched, records)
			var added []vmbenchv1.Finding
			sched.Status.Findings, added = mergeFindings(sched.Status.Findings, found, currentSeries(records))
			events := slices.Concat(confirmLater(sched, found, records), settleConfirmation(sched, found, records, lost))
			queued := queueConfirmation(sched, added, suspects, seen, records, now)
			setChangeSuspected(sched, suspects)
			sched.Status.AnalyzedThrough = string(newest)
			return slices.Concat(events, findingEvents(added), queued), nil
		}
	}
	meta.RemoveStatusCondition(&sched.Status.Conditions, vmbenchv1.ConditionChangeSuspected)
	meta.RemoveStatusCondition(&sched.Status.Conditions, vmbenchv1.ConditionRegressed)
	return []scheduleEvent{{kind: corev1.EventTypeWarning, reason: vmbenchv1.ReasonFindingsNotAnalyzed, action: "Analyze",
		note: fmt.Sprintf("the history was not analysed for changes: %v; it is tried again on the next reconcile", err)}}, err
}

func templatePlatforms(sched *vmbenchv1.BenchmarkSchedule) map[string]vmbenchv1.PlatformType {
	out := map[string]vmbenchv1.PlatformType{}
	for _, p := range sched.Spec.SuiteTemplate.Spec.Platforms {
		out[p.Name] = p.Type
	}
	return out
}

func findingEvents(added []vmbenchv1.Finding) []scheduleEvent {
	var out []scheduleEvent
	for _, f := range added {
		kind := corev1.EventTypeNormal
		if f.Regression && f.Confirmation != vmbenchv1.ConfirmationPending {
			kind = corev1.EventTypeWarning
		}
		note := describeFinding(f)
		if f.Confirmation == vmbenchv1.ConfirmationPending {
			note += "; confirmation runs are queued, and it alerts only if they confirm it"
		}
		out = append(out, scheduleEvent{kind: kind, reason: vmbenchv1.ReasonChangeFound, action: "Analyze", note: note})
	}
	return out
}

// describeFinding is a finding in one sentence, with the series that moved with it.
func describeFinding(f vmbenchv1.Finding) string {
	return describeChange(f) + seriesList(f)
}

// describeChange is a finding's own series and change in one sentence.
func describeChange(f vmbenchv1.Finding) string {
	what := "an improvement"
	if f.Regression {
		what = "a regression"
	}
	s := fmt.Sprintf("%s %s on %s (%s) moved %s, %s, by %+.1f%% (ratio %.3f, 95%% interval %.3f-%.3f, p=%.2g) between suites %s and %s (finding %s): %s",
		f.Benchmark, f.Metric, f.Platform, f.Arm, f.Direction, what, (f.Ratio-1)*100, f.Ratio, f.RatioLow, f.RatioHigh, f.PValue, f.Before, f.After, f.ID, f.Explanation)
	if len(f.EnvironmentChanges) > 0 {
		s += "; environment changes: " + strings.Join(f.EnvironmentChanges, "; ")
	} else {
		s += "; no environment change recorded between the two suites"
	}
	return s
}

// seriesCounted says how many series moved with a finding, in a few words.
func seriesCounted(f vmbenchv1.Finding) string {
	if f.SeriesCount <= 1 {
		return ""
	}
	return fmt.Sprintf("; %d series moved at this suite, %d of them regressions (status.findings[].series lists the worst)", f.SeriesCount, f.Regressions)
}

// seriesList names the series that moved with a finding.
func seriesList(f vmbenchv1.Finding) string {
	s := ""
	if f.SeriesCount > 1 {
		names := make([]string, 0, len(f.Series))
		for _, x := range f.Series[min(1, len(f.Series)):] {
			names = append(names, fmt.Sprintf("%s %s on %s (%s) %+.1f%%", x.Benchmark, x.Metric, x.Platform, x.Arm, (x.Ratio-1)*100))
		}
		s += fmt.Sprintf("; %d series moved at this suite, %d of them regressions; with it: %s", f.SeriesCount, f.Regressions, strings.Join(names, ", "))
		if rest := int(f.SeriesCount) - len(f.Series); rest > 0 {
			s += fmt.Sprintf(" and %d more (status.findings[].seriesCount)", rest)
		}
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setChangeSuspected names the first series whose newest runs suggest a change.
func setChangeSuspected(sched *vmbenchv1.BenchmarkSchedule, suspects []seriesAnalysis) {
	c := metav1.Condition{Type: vmbenchv1.ConditionChangeSuspected, Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNoSuspect,
		Message: "no series of the history suggests a change that is not yet confirmed", ObservedGeneration: sched.Generation}
	if len(suspects) > 0 {
		s, a := suspects[0].series, suspects[0].analysis.Suspect
		c.Status, c.Reason = metav1.ConditionTrue, vmbenchv1.ReasonChangeSuspected
		c.Message = fmt.Sprintf("%s may have moved %s by %+.1f%% from suite %s on (p=%.2g), not yet a change: %s. ",
			s.name(), a.Direction, (a.Ratio-1)*100, a.RunID, a.PValue, strings.Join(a.Reasons, "; "))
		switch round := sched.Status.Confirmation; {
		case round != nil && suspectKnown(round.Suspects, suspects[0]):
			c.Message += fmt.Sprintf("The confirmation suites %s are queued for it (%d not yet recorded): the analysis with their "+
				"records turns it into a finding or clears it; nothing needs doing yet", strings.Join(round.Suites, ", "), round.Remaining)
		case suspectKnown(sched.Status.SuspectsQueued, suspects[0]):
			c.Message += fmt.Sprintf("The confirmation runs queued for it are recorded and did not settle it; about %d more scheduled "+
				"runs will confirm or clear it; nothing needs doing yet", a.ConfirmationRuns)
		default:
			c.Message += fmt.Sprintf("About %d more scheduled runs will confirm or clear it; nothing needs doing yet", a.ConfirmationRuns)
		}
		if len(suspects) > 1 {
			c.Message += fmt.Sprintf(" (%d more series are suspect)", len(suspects)-1)
		}
		c.Message = conditions.Truncate(c.Message, 1024)
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
}

// applyTriage sets each finding's state from spec.triage at now: a triaged finding takes its
// state, an Acknowledged one until it expires. It returns when the next acknowledgement expires
// (zero when none will).
func applyTriage(sched *vmbenchv1.BenchmarkSchedule, now time.Time) time.Time {
	byID := map[string]vmbenchv1.FindingTriage{}
	for _, t := range sched.Spec.Triage {
		byID[t.ID] = t
	}
	var next time.Time
	for i := range sched.Status.Findings {
		f := &sched.Status.Findings[i]
		f.State = vmbenchv1.FindingUntriaged
		t, ok := byID[f.ID]
		if !ok {
			continue
		}
		if t.State == vmbenchv1.FindingAcknowledged && t.Expires != nil {
			if !now.Before(t.Expires.Time) {
				continue
			}
			if next.IsZero() || t.Expires.Time.Before(next) {
				next = t.Expires.Time
			}
		}
		f.State = t.State
	}
	return next
}

// setRegressed is True while a regression finding is Untriaged, naming the worst one (the largest
// step).
func setRegressed(sched *vmbenchv1.BenchmarkSchedule) {
	c := metav1.Condition{Type: vmbenchv1.ConditionRegressed, Status: metav1.ConditionFalse, Reason: vmbenchv1.ReasonNoRegression,
		Message: "no untriaged regression in status.findings", ObservedGeneration: sched.Generation}
	var worst *vmbenchv1.Finding
	open, pending := 0, 0
	for i := range sched.Status.Findings {
		f := &sched.Status.Findings[i]
		if f.Regression && f.State == vmbenchv1.FindingUntriaged && f.Confirmation == vmbenchv1.ConfirmationPending {
			pending++
		}
		if !f.Regression || !f.Open() {
			// Triaged, or waiting for or cleared by its confirmation runs.
			continue
		}
		open++
		if worst == nil || math.Abs(math.Log(f.Ratio)) > math.Abs(math.Log(worst.Ratio)) {
			worst = f
		}
	}
	if pending > 0 {
		c.Message += fmt.Sprintf("; %d regression(s) wait for their confirmation runs (status.confirmation) and count once confirmed", pending)
	}
	if worst != nil {
		c.Status, c.Reason = metav1.ConditionTrue, vmbenchv1.ReasonRegressed
		c.Message = conditions.Truncate(fmt.Sprintf("%d untriaged regression(s); the worst: %s%s. Find the cause, then add {id: %s, state: Acknowledged "+
			"(with a reason and an expiry), Invalid or Expected} to spec.triage", open, describeChange(*worst), seriesCounted(*worst), worst.ID), 1024)
	}
	meta.SetStatusCondition(&sched.Status.Conditions, c)
}

// triageFindings applies spec.triage and sets Regressed; once the history was analysed only. It
// returns how long until an acknowledgement expires, 0 when none will.
func triageFindings(sched *vmbenchv1.BenchmarkSchedule, now time.Time) time.Duration {
	if meta.FindStatusCondition(sched.Status.Conditions, vmbenchv1.ConditionChangeSuspected) == nil {
		return 0
	}
	next := applyTriage(sched, now)
	setRegressed(sched)
	if next.IsZero() {
		return 0
	}
	return max(next.Sub(now), time.Second)
}
