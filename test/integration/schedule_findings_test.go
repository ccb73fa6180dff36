package integration

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The CRD takes the findings the manager writes and the triage users write, and refuses a triage
// that is not a decision.
func TestScheduleFindingsAndTriageFitTheCRD(t *testing.T) {
	h := newHarness(t)
	s, _ := h.hourly("findings", nil)
	f := vmbenchv1.Finding{ID: "3f9c2a1b7d4e5f60", Benchmark: "cpu", Metric: "events-per-second", Platform: "vm", Arm: vmbenchv1.ArmVM,
		Before: "findings-29929620", After: "findings-29929680", Time: metav1.NewTime(time.Date(2026, 11, 22, 11, 0, 0, 0, time.UTC)),
		Direction: "down", Regression: true, Ratio: 0.95, RatioLow: 0.94, RatioHigh: 0.96, PValue: 1e-6, State: vmbenchv1.FindingUntriaged,
		Explanation:        "the VM arm (vm) moved: look at KubeVirt, QEMU, virt-launcher",
		EnvironmentChanges: []string{"kernelVersion: 6.1.0 → 6.8.0"}}
	orig := s.DeepCopy()
	s.Status.Findings = []vmbenchv1.Finding{f}
	h.g.Expect(k8s.Status().Patch(h.ctx, s, client.MergeFrom(orig))).To(Succeed())

	orig = s.DeepCopy()
	s.Spec.Triage = []vmbenchv1.FindingTriage{{ID: f.ID, State: vmbenchv1.FindingAcknowledged, Reason: "kernel regression, tracked upstream",
		Expires: &metav1.Time{Time: time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)}}}
	h.g.Expect(k8s.Patch(h.ctx, s, client.MergeFrom(orig))).To(Succeed())

	got := &vmbenchv1.BenchmarkSchedule{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(s), got)).To(Succeed())
	h.g.Expect(got.Status.Findings).To(HaveLen(1))
	h.g.Expect(got.Status.Findings[0].EnvironmentChanges).To(Equal(f.EnvironmentChanges))
	h.g.Expect(got.Spec.Triage).To(HaveLen(1))

	bad := got.DeepCopy()
	bad.Spec.Triage[0].State = vmbenchv1.FindingUntriaged
	err := k8s.Update(h.ctx, bad)
	h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a triage state Untriaged was accepted: %v", err)
}
