package suite

import (
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/runqueue"
	"github.com/vmbench/vmbench/controllers/runqueue/runqueuetest"
)

func TestEffectiveTimeout(t *testing.T) {
	spec := func(d time.Duration) vmbenchv1.BenchmarkSuiteSpec {
		return vmbenchv1.BenchmarkSuiteSpec{Timeout: ptr.To(vmbenchv1.Duration(d.String()))}
	}
	for _, tt := range []struct {
		timeout, max, want time.Duration
	}{
		{720 * time.Hour, 24 * time.Hour, 24 * time.Hour},
		{2 * time.Hour, 24 * time.Hour, 2 * time.Hour},
		{720 * time.Hour, 0, 720 * time.Hour},
		{24 * time.Hour, 24 * time.Hour, 24 * time.Hour},
	} {
		if got := effectiveTimeout(spec(tt.timeout), tt.max); got != tt.want {
			t.Errorf("timeout %s, maximum %s: %s, want %s", tt.timeout, tt.max, got, tt.want)
		}
	}
}

func TestSetQueued(t *testing.T) {
	wait := &runqueue.Admission{Position: 2, Limits: runqueue.Limits{Slots: 1}, Taken: 1}
	long := vmbenchv1.BenchmarkSuiteSpec{Timeout: ptr.To(vmbenchv1.Duration("720h"))}
	tests := []struct {
		name         string
		start        *metav1.Time
		wait         *runqueue.Admission
		invalid      error
		spec         vmbenchv1.BenchmarkSuiteSpec
		wantStatus   metav1.ConditionStatus
		wantReason   string
		wantMessage  string
		wantPosition int32
	}{
		{"waiting", nil, wait, nil, long, metav1.ConditionTrue, vmbenchv1.ReasonWaitingForRun, "2nd in line", 2},
		{"admitted", &metav1.Time{Time: runqueuetest.Epoch}, nil, nil, vmbenchv1.BenchmarkSuiteSpec{}, metav1.ConditionFalse, vmbenchv1.ReasonAdmitted,
			"admitted at 2026-11-24T10:00:00Z; spec.timeout counts from then", 0},
		{"admitted with a timeout above the maximum", &metav1.Time{Time: runqueuetest.Epoch}, nil, nil, long, metav1.ConditionFalse, vmbenchv1.ReasonAdmitted,
			"the suite ends at 2026-11-25T10:00:00Z at the latest: spec.timeout 720h0m0s is above the cluster's maximum suite duration 24h0m0s " +
				"(the manager's --max-suite-duration, Helm value maxSuiteDuration), so the maximum applies; set spec.timeout to 24h0m0s or less", 0},
		{"invalid spec", nil, nil, errors.New("bad"), long, metav1.ConditionFalse, vmbenchv1.ReasonInvalidSpec, "does not wait", 0},
		{"ended before its admission", nil, nil, nil, long, metav1.ConditionFalse, ReasonEndedByAdmin,
			"ended by the annotation vmbench.io/queue=end before it was admitted", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{StartTime: tt.start, QueuePosition: 7}
			if tt.wantReason == ReasonEndedByAdmin {
				st.Runs = []vmbenchv1.RunStatus{{Name: "x-container-1", Phase: vmbenchv1.RunFailed, Message: endedMessage}}
			}
			setQueued(st, tt.wait, tt.invalid, 3, tt.spec, 24*time.Hour)
			c := meta.FindStatusCondition(st.Conditions, vmbenchv1.ConditionQueued)
			if c == nil || c.Status != tt.wantStatus || c.Reason != tt.wantReason || !strings.Contains(c.Message, tt.wantMessage) || c.ObservedGeneration != 3 {
				t.Errorf("condition %+v, want %s %s containing %q", c, tt.wantStatus, tt.wantReason, tt.wantMessage)
			}
			if st.QueuePosition != tt.wantPosition {
				t.Errorf("queue position %d, want %d", st.QueuePosition, tt.wantPosition)
			}
		})
	}
}
