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
	// Schedule is a cron expression of 5 fields (minute hour day-of-month month day-of-week), or a
	// descriptor such as @daily, read in spec.timeZone.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
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

	// Conditions are Valid, Suspended, StartSkipped and HistoryRecorded.
	// +optional
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// Active lists the suites of this schedule that are not finished.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	// +listType=atomic
	Active []ScheduledSuite `json:"active,omitempty"`

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

// Condition types of a BenchmarkSchedule. Every reconcile sets all four.
const (
	// ConditionValid is False when the schedule or its time zone cannot be read; nothing starts
	// until spec is fixed.
	ConditionValid = "Valid"
	// ConditionSuspended is True while spec.suspend is true.
	ConditionSuspended = "Suspended"
	// ConditionStartSkipped is True when the latest due start did not happen: past its
	// startingDeadlineSeconds, waiting for an unfinished suite under Forbid, or refused by the API
	// server; the message names the time and what to change.
	ConditionStartSkipped = "StartSkipped"
	// ConditionHistoryRecorded is True when every finished suite of the schedule is in its
	// history, False with the cause when a record could not be written.
	ConditionHistoryRecorded = "HistoryRecorded"
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
	ReasonSuiteNotCreated     = "SuiteNotCreated"
	ReasonSuiteNameTaken      = "SuiteNameTaken"
	ReasonScheduleSuspended   = "ScheduleSuspended"
	ReasonHistoryNotWritten   = "HistoryNotWritten"
	ReasonHistoryLimitDeleted = "HistoryLimit"
)

func addScheduleTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &BenchmarkSchedule{}, &BenchmarkScheduleList{})
	return nil
}

func init() {
	SchemeBuilder.Register(addScheduleTypes)
}
