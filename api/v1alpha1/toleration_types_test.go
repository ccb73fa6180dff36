package v1alpha1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// A pod and a VMI carry every field of every toleration, in order; no tolerations are none.
func TestPodTolerationsKeepEveryField(t *testing.T) {
	p := Placement{Tolerations: []Toleration{
		{Key: "vmbench.io/dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
		{Key: "pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}}
	want := []corev1.Toleration{
		{Key: "vmbench.io/dedicated", Operator: corev1.TolerationOpEqual, Value: "bench", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](30)},
		{Key: "pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if diff := cmp.Diff(want, p.PodTolerations()); diff != "" {
		t.Errorf("PodTolerations() mismatch (-want +got):\n%s", diff)
	}
	if got := (Placement{}).PodTolerations(); got != nil {
		t.Errorf("PodTolerations() of no tolerations = %v, want nil", got)
	}
}
