// Package history holds the records a BenchmarkSchedule keeps of its finished suites: compact
// enough to outlive the suites, complete enough to test a later suite against them. The manager
// writes them (controllers/schedule/schedule_history.go); vmbench history reads them.
package history

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Record is what the history keeps of one finished suite of a schedule: per benchmark, platform and
// metric, the number of repetitions and the mean and variance of the logarithms of the repetition
// means, and the ratio to the baseline with its 95% interval, as the report computes them. That is
// enough to test a later suite against it without the suite's samples.
type Record struct {
	// Suite and UID name the suite the record was made from.
	Suite string    `json:"suite"`
	UID   types.UID `json:"uid"`
	// Scheduled is the time the suite was started for; Finished when it ended.
	Scheduled time.Time `json:"scheduled"`
	Finished  time.Time `json:"finished,omitzero"`
	// Phase is Complete or Failed.
	Phase    vmbenchv1.SuitePhase `json:"phase"`
	Baseline string               `json:"baseline"`
	// ParametersHash is the suite's status.parametersHash: records compare only under one hash, and
	// a new hash starts a new series.
	ParametersHash string `json:"parametersHash,omitempty"`
	// Environments are what the suite's runs ran on (status.environments): a change between two
	// records is laid beside a change in their results.
	Environments []vmbenchv1.RunEnvironment `json:"environments,omitempty"`
	Metrics      []MetricRecord             `json:"metrics,omitempty"`
}

// MetricRecord is one metric of one benchmark on one platform in a Record.
type MetricRecord struct {
	Benchmark string              `json:"benchmark"`
	Platform  string              `json:"platform"`
	Metric    string              `json:"metric"`
	Unit      string              `json:"unit,omitempty"`
	Direction vmbenchv1.Direction `json:"direction,omitempty"`
	// N counts repetitions, the unit of the statistics; Samples every value measured.
	N       int `json:"n"`
	Samples int `json:"samples"`
	// MeanLog and VarLog are the mean and sample variance of the natural logarithms of the
	// repetition means; absent when a value is at or below 0.
	MeanLog *float64 `json:"meanLog,omitempty"`
	VarLog  *float64 `json:"varLog,omitempty"`
	// Ratio is this platform over the baseline in the higher-is-better sense; RatioLow and
	// RatioHigh its 95% interval, when both sides have 2 repetitions.
	Ratio     *float64 `json:"ratio,omitempty"`
	RatioLow  *float64 `json:"ratioLow,omitempty"`
	RatioHigh *float64 `json:"ratioHigh,omitempty"`
}
