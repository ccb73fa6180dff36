package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ConcurrencyPolicy says what a schedule does when a start is due while a suite it started is still
// pending or running.
// +kubebuilder:validation:Enum=Forbid;Allow;Replace
type ConcurrencyPolicy string

const (
	// ConcurrencyForbid starts nothing while a suite of the schedule is unfinished: the due start
	// waits, and is skipped once it is later than startingDeadlineSeconds.
	ConcurrencyForbid ConcurrencyPolicy = "Forbid"
	// ConcurrencyAllow starts the due suite beside the unfinished ones; they wait in the run queue.
	ConcurrencyAllow ConcurrencyPolicy = "Allow"
	// ConcurrencyReplace deletes the unfinished suites and starts the due one.
	ConcurrencyReplace ConcurrencyPolicy = "Replace"
)

// SuiteTemplateMetadata is what a scheduled suite carries in its metadata besides what the
// schedule sets (its name, owner and the label vmbench.io/schedule).
type SuiteTemplateMetadata struct {
	// Labels are copied to every suite the schedule starts.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// Annotations are copied to every suite the schedule starts.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SuiteTemplate is the suite a schedule starts each time.
type SuiteTemplate struct {
	// Metadata holds the labels and annotations of every suite started.
	// +optional
	Metadata SuiteTemplateMetadata `json:"metadata,omitempty"`

	// Spec is the spec of every suite started, as in a BenchmarkSuite.
	// +required
	Spec BenchmarkSuiteSpec `json:"spec"`
}

// BenchmarkScheduleSpec says when to start a suite, which one, and how many finished suites to keep.
type BenchmarkScheduleSpec struct {
	// Schedule is a cron expression of 5 fields (minute hour day-of-month month day-of-week), or
	// one of the descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly,
	// read in spec.timeZone. @every is refused. Two consecutive starts must be at least the
	// manager's minimum interval apart (--min-schedule-interval, 5m unless the installer changed
	// it); a schedule that starts more often sets the condition Valid to False.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="!self.contains('@every')",message="spec.schedule may not use @every: write a cron expression of 5 fields (minute hour day-of-month month day-of-week), or @hourly, @daily, @weekly, @monthly or @yearly"
	// +kubebuilder:validation:XValidation:rule="!self.trim().startsWith('TZ=') && !self.trim().startsWith('CRON_TZ=')",message="spec.schedule may not name a time zone: remove the TZ= or CRON_TZ= prefix and set spec.timeZone instead"
	Schedule string `json:"schedule"`

	// TimeZone is the IANA time zone the schedule is read in, for example Europe/Berlin; UTC when
	// left out. A zone the manager does not know sets the condition Valid to False.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	TimeZone *string `json:"timeZone,omitempty"`

	// ConcurrencyPolicy says what happens when a start is due while a suite of this schedule is
	// unfinished: Forbid (wait, and skip the start once past startingDeadlineSeconds), Allow (start
	// beside it) or Replace (delete it and start the new one).
	// +optional
	// +kubebuilder:default=Forbid
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`

	// MaxActive is how many suites of this schedule may be unfinished at once under
	// concurrencyPolicy Allow; a start due beyond it waits (and is skipped once later than
	// startingDeadlineSeconds), and the condition StartSkipped says so. Confirmation and
	// version-triggered suites count and wait too. Forbid and Replace keep one.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	MaxActive *int32 `json:"maxActive,omitempty"`

	// Suspend, when true, starts no new suite; the suites started before go on.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// StartingDeadlineSeconds is how late a start may still happen, after the manager was down, the
	// schedule suspended or a start forbidden by the concurrency policy; a later start is skipped
	// and said so in the condition StartSkipped. Left out: a missed start happens however late.
	// +optional
	// +kubebuilder:validation:Minimum=0
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`

	// SuiteTemplate is the suite started each time, named <schedule>-<minutes since 1970 of the
	// scheduled time>.
	// +required
	SuiteTemplate SuiteTemplate `json:"suiteTemplate"`

	// SuccessfulHistoryLimit is how many complete suites are kept; older ones are deleted once their
	// record is in the history.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// FailedHistoryLimit is how many failed suites are kept; older ones are deleted once their record
	// is in the history.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`

	// Triage records what people decided about findings in status.findings: a finding triaged
	// Acknowledged (until it expires), Invalid or Expected no longer holds the condition Regressed.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=id
	Triage []FindingTriage `json:"triage,omitempty"`

	// Triggers start a suite besides the cron schedule.
	// +optional
	Triggers *ScheduleTriggers `json:"triggers,omitempty"`

	// Confirmation queues extra suites at once when the history shows a new finding, so that the
	// change is confirmed (or cleared) before it alerts, or a new suspect, so that it is settled
	// without waiting for the schedule. Left out: 2 runs.
	// +optional
	Confirmation *ScheduleConfirmation `json:"confirmation,omitempty"`

	// Baseline pins an approved record of the history: after each record, the newest runs under
	// the same parameters hash are held against it, which catches a slow drift that no single
	// step shows. Edit it to re-pin; the history is kept.
	// +optional
	Baseline *ScheduleBaseline `json:"baseline,omitempty"`
}

// DefaultMaxActive and MaxMaxActive are spec.maxActive's default and maximum: the cron suite and
// the default 2 confirmation runs fit under the default; the maximum leaves room for the most
// confirmation runs (MaxConfirmationRuns), the cron suite and a triggered one, while bounding what
// one schedule adds to the run queue.
const (
	DefaultMaxActive = 3
	MaxMaxActive     = 10
)

// MaxConfirmationRuns bounds spec.confirmation.runs.
const MaxConfirmationRuns = 5

// ScheduleConfirmation says how many suites to queue at once when a new finding appears.
type ScheduleConfirmation struct {
	// MaxSuitesPerDay is the budget of confirmation suites per 24 hours (status.confirmationBudget
	// counts them): a series that flaps between two levels makes a finding at each flip, and
	// unbounded rounds would run extra suites without end and push real records out of the
	// history's 200. Once spent, a new finding alerts at once, as with runs 0, and a new suspect
	// waits for the schedule, until the next period. Left out: 4, two rounds of the default 2 runs
	// a day; 0 queues none.
	// +optional
	// +kubebuilder:default=4
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	MaxSuitesPerDay *int32 `json:"maxSuitesPerDay,omitempty"`

	// Runs is how many suites are queued when the history shows a new finding, and the most
	// queued for a new suspect (which asks for the runs that settle it); 0 turns confirmation off
	// (a finding then alerts at once, a suspect waits for the schedule). The suites start
	// through the concurrency policy: under Forbid and Replace one after the other, under Allow
	// all at once.
	// +optional
	// +kubebuilder:default=2
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=5
	Runs *int32 `json:"runs,omitempty"`
}

// ScheduleBaseline is the approved record that the newest runs are held against.
type ScheduleBaseline struct {
	// Suite names the record: the suite it was made from, as `vmbench history` and
	// status.findings name it. It must be a complete record still in the history.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Suite string `json:"suite"`

	// TolerancePercent is how far, in percent, a metric may fall below the baseline in its bad
	// direction before it counts as drifted; left out, the suite template's
	// spec.report.tolerancePercent, or 5.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self > 0.0 && self <= 50.0",message="set spec.baseline.tolerancePercent above 0 and at most 50"
	TolerancePercent *float64 `json:"tolerancePercent,omitempty"`
}

// ScheduleTriggers are what starts a suite besides the cron schedule.
type ScheduleTriggers struct {
	// OnVersionChange starts a suite when a version under the latest complete suite changed.
	// +optional
	OnVersionChange *OnVersionChange `json:"onVersionChange,omitempty"`
}

// OnVersionChange watches the versions that the latest complete suite of the schedule ran on, and
// starts a suite, under the concurrency policy, when one of them changed.
type OnVersionChange struct {
	// KubeVirt watches the version the KubeVirt CR reports it deployed (status.observedKubeVirtVersion).
	// +optional
	KubeVirt bool `json:"kubeVirt,omitempty"`

	// Nodes watches the kernel, OS image, container runtime and kubelet of the nodes that the latest
	// complete suite ran on.
	// +optional
	Nodes bool `json:"nodes,omitempty"`

	// RunnerImage watches the image reference the next suite's runs would be created with (the
	// manager's --runner-image for container and host platforms, --vm-disk-image for VM platforms:
	// the chart's runnerImage and vmDiskImage) against the one in the latest complete suite's
	// record (environments[].runnerImageRef). References are compared as written: the manager does
	// not ask registries, so a new digest pushed under the same tag starts no suite here; it is seen
	// in the record of the next scheduled run, whose runnerImage (by digest) differs.
	// +optional
	RunnerImage bool `json:"runnerImage,omitempty"`

	// PollInterval is how often the versions are read; at least 1m.
	// +optional
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || duration(self) >= duration('1m')",message="set pollInterval to 1m or more: each check reads the nodes and the KubeVirt CR from the API server"
	PollInterval *Duration `json:"pollInterval,omitempty"`
}

// VersionTrigger is the latest suite started because a watched version changed.
type VersionTrigger struct {
	// Time is when the change was found.
	// +required
	Time metav1.Time `json:"time"`

	// Suite is the suite started for it.
	// +required
	// +kubebuilder:validation:MaxLength=30
	Suite string `json:"suite"`

	// Changes lists what changed, as "node n1 kernelVersion 6.1 → 6.8"; at most 8.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=512
	// +listType=atomic
	Changes []string `json:"changes,omitempty"`

	// Versions is a hash of the versions that started the suite: the same versions start no other
	// suite, while it runs nor after it failed.
	// +optional
	// +kubebuilder:validation:MaxLength=16
	Versions string `json:"versions,omitempty"`
}

// FindingState is what is known of a finding: Untriaged until someone triages it in spec.triage.
type FindingState string

const (
	// FindingUntriaged: nobody has looked at it yet; a regression in this state holds Regressed.
	FindingUntriaged FindingState = "Untriaged"
	// FindingAcknowledged: known and accepted for now, with a reason, until its expiry.
	FindingAcknowledged FindingState = "Acknowledged"
	// FindingInvalid: not a real change (a noisy node, a broken run).
	FindingInvalid FindingState = "Invalid"
	// FindingExpected: a change that was meant, such as an upgrade.
	FindingExpected FindingState = "Expected"
)

// FindingTriage is a decision about one finding.
type FindingTriage struct {
	// ID is the finding's status.findings[].id.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16
	ID string `json:"id"`

	// State is the decision: Acknowledged, Invalid or Expected.
	// +required
	// +kubebuilder:validation:Enum=Acknowledged;Invalid;Expected
	State FindingState `json:"state"`

	// Reason says why, for the next person who looks.
	// +optional
	// +kubebuilder:validation:MaxLength=256
	Reason string `json:"reason,omitempty"`

	// Expires is when an Acknowledged finding alerts again, if still open; never when left out.
	// +optional
	Expires *metav1.Time `json:"expires,omitempty"`
}

// FindingArm names the series a finding is in: one platform's own results (vm, container, host,
// by the platform's type) or the platform's log-ratio to the baseline platform (ratio).
// +kubebuilder:validation:Enum=vm;container;host;ratio
type FindingArm string

// Arms of a finding.
const (
	ArmVM        FindingArm = "vm"
	ArmContainer FindingArm = "container"
	ArmHost      FindingArm = "host"
	ArmRatio     FindingArm = "ratio"
)

// Finding is a change found in the schedule's history: a step in one series between two suites.
type Finding struct {
	// ID identifies the finding: a hash of its series and the suite after the change.
	// +required
	// +kubebuilder:validation:MaxLength=16
	ID string `json:"id"`

	// Benchmark, Metric and Platform name the series; for the arm ratio, Platform is the platform
	// compared with the baseline platform.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Benchmark string `json:"benchmark"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	Metric string `json:"metric"`
	// +required
	// +kubebuilder:validation:MaxLength=64
	Platform string `json:"platform"`

	// Arm is vm, container or host for the platform's own results, ratio for its log-ratio to the
	// baseline platform.
	// +required
	Arm FindingArm `json:"arm"`

	// Before is the last suite before the change, After the first suite after it; Time is when
	// After was scheduled.
	// +required
	// +kubebuilder:validation:MaxLength=64
	Before string `json:"before"`
	// +required
	// +kubebuilder:validation:MaxLength=64
	After string      `json:"after"`
	Time  metav1.Time `json:"time"`

	// Direction is which way the values moved (up or down); Regression says whether that is worse
	// for the metric.
	// +required
	// +kubebuilder:validation:Enum=up;down
	Direction  string `json:"direction"`
	Regression bool   `json:"regression"`

	// Ratio is the level after the change over the level before (1.05 for 5% up), RatioLow and
	// RatioHigh its 95% interval.
	Ratio     float64 `json:"ratio"`
	RatioLow  float64 `json:"ratioLow"`
	RatioHigh float64 `json:"ratioHigh"`

	// PValue is the change's p-value, corrected for the choice of the split.
	PValue float64 `json:"pValue"`

	// State is Untriaged, or the state given in spec.triage while that holds.
	// +required
	// +kubebuilder:validation:Enum=Untriaged;Acknowledged;Invalid;Expected
	State FindingState `json:"state"`

	// Explanation says which arm moved and where to look.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	Explanation string `json:"explanation,omitempty"`

	// EnvironmentChanges lists what differs between the environments of Before and After, as
	// "field: old → new".
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=512
	// +listType=atomic
	EnvironmentChanges []string `json:"environmentChanges,omitempty"`

	// Confirmation is Pending while the confirmation runs queued for the finding have not all
	// been recorded, then Confirmed when the change is still found with them, NotConfirmed when it
	// is not (Confirmed should a later analysis find it again); empty when no confirmation runs were
	// asked (spec.confirmation.runs 0). A Pending or NotConfirmed finding holds no condition
	// Regressed and is not counted as open.
	// +optional
	Confirmation FindingConfirmation `json:"confirmation,omitempty"`

	// SeriesCount counts the series that changed at this finding's suite (After, or one record
	// off), its own included: an upgrade that moves many metrics at once is one finding, as an
	// alert summary groups alerts. The fields above describe the worst of them (the largest
	// regression, or the largest step when none regressed); Series lists them. Absent on findings
	// made before grouping, which are of one series.
	// +optional
	// +kubebuilder:validation:Minimum=0
	SeriesCount int32 `json:"seriesCount,omitempty"`

	// Regressions counts the series of SeriesCount that regressed.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Regressions int32 `json:"regressions,omitempty"`

	// Series lists the series that changed, the worst first (this finding's own series first of
	// all), when more than one did; at most 16, SeriesCount counts the rest too.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Series []FindingSeries `json:"series,omitempty"`
}

// MaxFindingSeries is how many series a finding lists in series; seriesCount counts them all.
const MaxFindingSeries = 16

// FindingSeries is one series that changed at a finding's suite.
type FindingSeries struct {
	// Benchmark, Metric, Platform and Arm name the series, as in a Finding.
	// +required
	// +kubebuilder:validation:MaxLength=128
	Benchmark string `json:"benchmark"`
	// +required
	// +kubebuilder:validation:MaxLength=128
	Metric string `json:"metric"`
	// +required
	// +kubebuilder:validation:MaxLength=64
	Platform string `json:"platform"`
	// +required
	Arm FindingArm `json:"arm"`

	// Direction is which way the values moved (up or down); Regression says whether that is worse
	// for the metric.
	// +required
	// +kubebuilder:validation:Enum=up;down
	Direction  string `json:"direction"`
	Regression bool   `json:"regression"`

	// Ratio is the level after the change over the level before.
	Ratio float64 `json:"ratio"`
}

// FindingConfirmation is what the confirmation runs made of a finding.
// +kubebuilder:validation:Enum=Pending;Confirmed;NotConfirmed
type FindingConfirmation string

// Confirmation states of a finding.
const (
	ConfirmationPending      FindingConfirmation = "Pending"
	ConfirmationConfirmed    FindingConfirmation = "Confirmed"
	ConfirmationNotConfirmed FindingConfirmation = "NotConfirmed"
)

// Open reports whether the finding alerts: Untriaged, and confirmed or never sent to confirmation.
func (f *Finding) Open() bool {
	return f.State == FindingUntriaged && f.Confirmation != ConfirmationPending && f.Confirmation != ConfirmationNotConfirmed
}

// ConfirmationRound is the round of confirmation runs under way.
type ConfirmationRound struct {
	// Findings are the IDs of the findings the runs confirm; empty when the round was queued for
	// suspects only.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=16
	// +listType=atomic
	Findings []string `json:"findings,omitempty"`

	// Suspects are the keys of the suspected changes (condition ChangeSuspected) the runs settle:
	// a hash of the series, '@', and the suite right after the suspected step. They need no
	// verdict: the analysis with the runs' records turns a suspect into a finding (which then gets
	// its own confirmation round) or drops it.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=48
	// +listType=atomic
	Suspects []string `json:"suspects,omitempty"`

	// Suites are the names of the confirmation suites, in the order they start.
	// +required
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:MaxLength=30
	// +listType=atomic
	Suites []string `json:"suites"`

	// Started counts the suites of Suites created so far.
	// +kubebuilder:validation:Minimum=0
	Started int32 `json:"started"`

	// Remaining counts the suites of Suites whose record is not yet in the history.
	// +kubebuilder:validation:Minimum=0
	Remaining int32 `json:"remaining"`
}

// BaselineVerdict is the verdict of the newest runs against the pinned baseline.
// +kubebuilder:validation:Enum=Within;Drifted;Inconclusive;Insufficient
type BaselineVerdict string

// Verdicts against the pinned baseline.
const (
	// BaselineWithin: every series is shown to be within the tolerance of the baseline.
	BaselineWithin BaselineVerdict = "Within"
	// BaselineDrifted: at least one series is shown to be worse than the baseline by more than the
	// tolerance.
	BaselineDrifted BaselineVerdict = "Drifted"
	// BaselineInconclusive: no series drifted, but at least one could not be shown within the
	// tolerance at its noise.
	BaselineInconclusive BaselineVerdict = "Inconclusive"
	// BaselineInsufficient: no verdict: the baseline record is missing, or too few runs since it
	// under its parameters hash.
	BaselineInsufficient BaselineVerdict = "Insufficient"
)

// BaselineSeries is one series held against the baseline.
type BaselineSeries struct {
	// Benchmark, Metric, Platform and Arm name the series, as in a Finding.
	// +kubebuilder:validation:MaxLength=128
	Benchmark string `json:"benchmark"`
	// +kubebuilder:validation:MaxLength=128
	Metric string `json:"metric"`
	// +kubebuilder:validation:MaxLength=64
	Platform string     `json:"platform"`
	Arm      FindingArm `json:"arm"`

	// Verdict is Drifted, Within or Inconclusive.
	Verdict BaselineVerdict `json:"verdict"`

	// Ratio is the newest runs' level over the baseline's in the higher-is-better sense (below 1
	// is worse), RatioLow and RatioHigh its interval at 1 - 2·alpha (90%).
	Ratio     float64 `json:"ratio"`
	RatioLow  float64 `json:"ratioLow"`
	RatioHigh float64 `json:"ratioHigh"`

	// PValue is the Holm-adjusted p-value of the verdict.
	PValue float64 `json:"pValue"`
}

// BaselineStatus is the latest verdict against spec.baseline.
type BaselineStatus struct {
	// Suite is the baseline record's suite, as in spec.baseline.suite when the verdict was made.
	// +kubebuilder:validation:MaxLength=64
	Suite string `json:"suite"`

	// Verdict is Within, Drifted, Inconclusive or Insufficient.
	Verdict BaselineVerdict `json:"verdict"`

	// Runs counts the newest runs held against the baseline.
	// +optional
	Runs int32 `json:"runs,omitempty"`

	// TolerancePercent is the tolerance used.
	// +optional
	TolerancePercent float64 `json:"tolerancePercent,omitempty"`

	// Series are the series not shown within the tolerance (Drifted first, then Inconclusive),
	// at most 16.
	// +optional
	// +kubebuilder:validation:MaxItems=16
	// +listType=atomic
	Series []BaselineSeries `json:"series,omitempty"`
}

// ScheduledSuite names a suite that a schedule started.
type ScheduledSuite struct {
	// Name is the suite's name.
	// +required
	// +kubebuilder:validation:MaxLength=30
	Name string `json:"name"`

	// UID is the suite's UID.
	// +required
	UID types.UID `json:"uid"`
}

// BenchmarkScheduleStatus is what the schedule has started and recorded.
type BenchmarkScheduleStatus struct {
	// ObservedGeneration is the generation that the last error-free reconcile saw.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// Conditions are Valid, Suspended, StartSkipped, HistoryRecorded, ChangeSuspected, Regressed,
	// Drifted and, when the manager archives finished suites, AwaitingArchive.
	// +optional
	// +kubebuilder:validation:MaxItems=12
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Active lists the suites of this schedule that are not finished.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Active []ScheduledSuite `json:"active,omitempty"`

	// SkippedScheduleTime is the scheduled time of the start that the condition StartSkipped is
	// True for: waiting, or skipped; absent when the latest due start happened. The condition's
	// message leaves the time out, so that a start that waits through several due times is told
	// once.
	// +optional
	SkippedScheduleTime *metav1.Time `json:"skippedScheduleTime,omitempty"`

	// LastScheduleTime is the scheduled time of the latest suite started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`

	// LastSuccessfulTime is when the latest complete suite of this schedule ended.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`

	// NextScheduleTime is the next time a suite is due, unless the schedule is suspended or invalid.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`

	// Records counts the records in the schedule's history: one per finished suite, kept in the
	// ConfigMaps labelled vmbench.io/history-of=<schedule> after the suites are deleted.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Records int32 `json:"records,omitempty"`

	// HistorySignedAt is when the manager began counting only signed lines of the schedule's
	// history. Until it is set, the manager's first read adopts the history written before records
	// were signed: each unsigned line that is a record, in the schedule's own history ConfigMaps,
	// is signed and written back (event HistoryAdopted). A schedule without records gets it at its
	// first reconcile and adopts nothing. Once set, unsigned lines are ignored for good.
	// +optional
	HistorySignedAt *metav1.Time `json:"historySignedAt,omitempty"`

	// Findings are the changes found in the history, newest last; at most 32, the oldest go first.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Findings []Finding `json:"findings,omitempty"`

	// LastVersionCheck is when spec.triggers.onVersionChange last read the versions.
	// +optional
	LastVersionCheck *metav1.Time `json:"lastVersionCheck,omitempty"`

	// LastTrigger is the latest suite started because a watched version changed.
	// +optional
	LastTrigger *VersionTrigger `json:"lastTrigger,omitempty"`

	// Confirmation is the round of confirmation runs under way: the findings it confirms and its
	// suites; absent when none is.
	// +optional
	Confirmation *ConfirmationRound `json:"confirmation,omitempty"`

	// SuspectsQueued are the keys (as in status.confirmation.suspects) of the suspected changes
	// that confirmation runs were queued for, newest last; at most 32, the oldest go first. A
	// suspect is queued for once: the same series with its step at the same suite, or one suite
	// off, queues nothing more.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=48
	// +listType=atomic
	SuspectsQueued []string `json:"suspectsQueued,omitempty"`

	// Baseline is the latest verdict of the newest runs against spec.baseline; absent without it.
	// +optional
	Baseline *BaselineStatus `json:"baseline,omitempty"`

	// AnalyzedThrough is the UID of the newest record whose analysis (findings, confirmation and
	// baseline verdict) is in this status: while the history's newest record differs, the next
	// reconcile analyses again, so that a lost status write or a restart loses no analysis.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	AnalyzedThrough string `json:"analyzedThrough,omitempty"`

	// ConfirmationBudget counts the confirmation suites queued in the current period of
	// spec.confirmation.maxSuitesPerDay.
	// +optional
	ConfirmationBudget *ConfirmationBudget `json:"confirmationBudget,omitempty"`
}

// ConfirmationBudget is what is spent of spec.confirmation.maxSuitesPerDay.
type ConfirmationBudget struct {
	// PeriodStart is when the current period of 24 hours began: at the first round queued after
	// the previous period ended.
	// +required
	PeriodStart metav1.Time `json:"periodStart"`

	// Suites counts the confirmation suites queued since PeriodStart.
	// +required
	// +kubebuilder:validation:Minimum=0
	Suites int32 `json:"suites"`
}

// BenchmarkSchedule starts a BenchmarkSuite on a cron schedule and keeps a compact record of every
// finished suite, so that results can be followed over time after the suites are gone.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=bsched,categories=vmbench
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="TimeZone",type=string,JSONPath=`.spec.timeZone`,priority=1
// +kubebuilder:printcolumn:name="Suspend",type=boolean,JSONPath=`.spec.suspend`
// +kubebuilder:printcolumn:name="Last",type=date,JSONPath=`.status.lastScheduleTime`
// +kubebuilder:printcolumn:name="Records",type=integer,JSONPath=`.status.records`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label, as it starts the names of the suites: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 21",message="metadata.name must be at most 21 characters: suites are named <schedule>-<8 digits of minutes>, and a suite's name is at most 30 characters"
type BenchmarkSchedule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is when to start which suite.
	// +required
	Spec BenchmarkScheduleSpec `json:"spec"`

	// Status is what the schedule started and recorded.
	// +optional
	Status BenchmarkScheduleStatus `json:"status,omitempty"`
}

// BenchmarkScheduleList is a list of BenchmarkSchedules.
// +kubebuilder:object:root=true
type BenchmarkScheduleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSchedule `json:"items"`
}

// MaxScheduleNameLength leaves room in a suite's name (MaxSuiteNameLength) for '-' and 8 digits of
// minutes since 1970, which last until the year 2160.
const MaxScheduleNameLength = MaxSuiteNameLength - 9

// LabelSchedule holds, on a suite, the name of the BenchmarkSchedule that started it, and on a
// history ConfigMap, the schedule whose records it holds.
const LabelSchedule = "vmbench.io/schedule"

// LabelHistoryOf marks a ConfigMap that holds records of the history of the schedule it names.
const LabelHistoryOf = "vmbench.io/history-of"

// AnnotationScheduledAt is the scheduled time (RFC 3339) a schedule started a suite for;
// AnnotationRecorded is set to "true" once the suite's record is in the schedule's history.
const (
	AnnotationScheduledAt = "vmbench.io/scheduled-at"
	AnnotationRecorded    = "vmbench.io/recorded"
)

// Condition types of a BenchmarkSchedule. Every reconcile sets the first four; the last two once
// the history was analysed.
const (
	// ConditionValid is False when the schedule or its time zone cannot be read, or when the
	// schedule starts more often than the manager's minimum interval; nothing starts until spec is
	// fixed.
	ConditionValid = "Valid"
	// ConditionSuspended is True while spec.suspend is true.
	ConditionSuspended = "Suspended"
	// ConditionStartSkipped is True when the latest due start did not happen: past its
	// startingDeadlineSeconds, waiting for an unfinished suite under Forbid, waiting for one of
	// spec.maxActive suites under Allow, or refused by the API server; the message says what to
	// change, status.skippedScheduleTime names the time.
	ConditionStartSkipped = "StartSkipped"
	// ConditionHistoryRecorded is True when every finished suite of the schedule is in its
	// history, False with the cause when a record could not be written.
	ConditionHistoryRecorded = "HistoryRecorded"
	// ConditionChangeSuspected is True when the newest runs of a series suggest a change that more
	// runs must confirm; the message names the series.
	ConditionChangeSuspected = "ChangeSuspected"
	// ConditionRegressed is True while a finding that is a regression is Untriaged; the message
	// names the worst one and what to do.
	ConditionRegressed = "Regressed"
	// ConditionDrifted is True when a series has drifted from the baseline pinned in
	// spec.baseline by more than the tolerance; the message names the series and what to do.
	ConditionDrifted = "Drifted"
	// ConditionAwaitingArchive is set only when the manager archives finished suites: True while
	// suites beyond the history limits are kept because the archive does not hold them whole yet;
	// the message names them and what to check.
	ConditionAwaitingArchive = "AwaitingArchive"
)

// Condition reasons of a BenchmarkSchedule.
const (
	ReasonValid               = "Valid"
	ReasonInvalidSchedule     = "InvalidSchedule"
	ReasonUnknownTimeZone     = "UnknownTimeZone"
	ReasonSuspended           = "Suspended"
	ReasonNotSuspended        = "NotSuspended"
	ReasonStarted             = "Started"
	ReasonNothingDue          = "NothingDue"
	ReasonMissedDeadline      = "StartingDeadlineExceeded"
	ReasonConcurrencyForbid   = "ConcurrencyForbidden"
	ReasonMaxActive           = "MaxActiveReached"
	ReasonTooFrequent         = "ScheduleTooFrequent"
	ReasonSuiteNotCreated     = "SuiteNotCreated"
	ReasonSuiteNameTaken      = "SuiteNameTaken"
	ReasonScheduleSuspended   = "ScheduleSuspended"
	ReasonHistoryNotWritten   = "HistoryNotWritten"
	ReasonHistoryLimitDeleted = "HistoryLimit"
	// ReasonHistoryIgnored: the history reader ignored ConfigMaps carrying the schedule's history
	// label that are not its history, or lines of its history that the manager did not sign.
	ReasonHistoryIgnored = "HistoryIgnored"
	// ReasonHistoryAdopted: the manager signed, once, the unsigned records of a history written
	// before records were signed (see status.historySignedAt).
	ReasonHistoryAdopted      = "HistoryAdopted"
	ReasonChangeFound         = "ChangeFound"
	ReasonChangeSuspected     = "ChangeSuspected"
	ReasonNoSuspect           = "NoSuspect"
	ReasonRegressed           = "Regressed"
	ReasonNoRegression        = "NoOpenRegression"
	ReasonFindingsNotAnalyzed = "HistoryNotAnalyzed"
	// ReasonAwaitingArchive: suites beyond the history limits are kept until the archive holds them
	// whole; ReasonNothingAwaitsArchive: none is.
	ReasonAwaitingArchive      = "AwaitingArchive"
	ReasonNothingAwaitsArchive = "NothingAwaitsArchive"
)

// Reasons of confirmation runs (events) and of the condition Drifted.
const (
	// ReasonConfirmationQueued: confirmation suites were queued for new findings or suspects.
	ReasonConfirmationQueued = "ConfirmationQueued"
	// ReasonConfirmationWaits: a confirmation suite could not be created.
	ReasonConfirmationWaits = "ConfirmationWaits"
	// ReasonChangeConfirmed and ReasonChangeNotConfirmed: the verdict of the confirmation runs.
	ReasonChangeConfirmed    = "ChangeConfirmed"
	ReasonChangeNotConfirmed = "ChangeNotConfirmed"
	// ReasonConfirmationBudgetSpent: spec.confirmation.maxSuitesPerDay is spent, and new findings
	// alert without confirmation runs until the next period.
	ReasonConfirmationBudgetSpent = "ConfirmationBudgetSpent"
	// ReasonStatusNotWritten: the API server refused the schedule's status; the analysis is done
	// again on the next reconcile.
	ReasonStatusNotWritten = "StatusNotWritten"

	ReasonBaselineDrifted      = "BaselineDrifted"
	ReasonBaselineWithin       = "WithinBaseline"
	ReasonBaselineInconclusive = "BaselineInconclusive"
	ReasonBaselineInsufficient = "BaselineInsufficient"
	ReasonBaselineNotFound     = "BaselineNotFound"
)

// Event reasons of spec.triggers.onVersionChange.
const (
	// ReasonVersionChanged: a watched version changed and a suite started for it.
	ReasonVersionChanged = "VersionChanged"
	// ReasonVersionChangeWaits: a watched version changed, and the suite for it waits for the
	// concurrency policy or was refused.
	ReasonVersionChangeWaits = "VersionChangeWaits"
	// ReasonVersionsNotRead: the versions could not be read.
	ReasonVersionsNotRead = "VersionsNotRead"
)

func addScheduleTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &BenchmarkSchedule{}, &BenchmarkScheduleList{})
	return nil
}

func init() {
	SchemeBuilder.Register(addScheduleTypes)
}
