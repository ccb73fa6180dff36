package summary

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Protects the marking of samples measured during a live migration: the execution's window
// [time - seconds, time] against the migration's [start, end], bounds included.
func TestMigratedDuring(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	at := func(s int) *metav1.Time { v := metav1.NewTime(t0.Add(time.Duration(s) * time.Second)); return &v }
	mig := []vmbenchv1.RunMigration{{StartTime: at(100), EndTime: at(130)}}
	result := func(end int, seconds float64) runplan.Message {
		return runplan.Message{Time: t0.Add(time.Duration(end) * time.Second), Seconds: seconds}
	}
	tests := []struct {
		name       string
		m          runplan.Message
		migrations []vmbenchv1.RunMigration
		want       bool
	}{
		{"ended before the migration started", result(99, 10), mig, false},
		{"ended as it started", result(100, 10), mig, true},
		{"inside it", result(120, 5), mig, true},
		{"began as it ended", result(140, 10), mig, true},
		{"began after it ended", result(141, 10), mig, false},
		{"a migration still running overlaps from its start", result(500, 1), []vmbenchv1.RunMigration{{StartTime: at(100)}}, true},
		{"a migration without a start overlaps nothing", result(120, 5), []vmbenchv1.RunMigration{{EndTime: at(130)}}, false},
		{"a result without a time overlaps any migration", runplan.Message{}, mig, true},
		{"no migration", result(120, 5), nil, false},
	}
	for _, tt := range tests {
		if got := MigratedDuring(tt.m, tt.migrations); got != tt.want {
			t.Errorf("%s: MigratedDuring = %v, want %v", tt.name, got, tt.want)
		}
	}
}
