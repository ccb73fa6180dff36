package integration

import (
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// A check that nothing more happens (a Consistently) proves nothing unless the manager has looked
// in the meantime: on a loaded machine a restarted manager, or a reconcile after a poke, may take
// longer than the check. The witnesses below erase a status field that every pass of the
// reconciler writes and nothing reads, change an annotation so that the reconciler looks, and wait
// until the field is back. The pass that wrote it read the object after the erase and wrote the
// status last, after every child it created or deleted, so what that pass would have done is done
// once the witness returns.

// scheduleReconciled returns once the schedule controller ran a whole pass over the schedule that
// started after the call: it erases status.nextScheduleTime (every pass of a valid, unsuspended
// schedule sets it) and waits until the manager wrote it back.
func (h *harness) scheduleReconciled(name string) {
	h.t.Helper()
	s := &vmbenchv1.BenchmarkSchedule{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, s)).To(Succeed())
	h.g.Expect(s.Spec.Suspend == nil || !*s.Spec.Suspend).To(BeTrue(), "a suspended schedule has no nextScheduleTime to witness a pass by")
	h.g.Expect(k8s.Status().Patch(h.ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"status":{"nextScheduleTime":null}}`)))).To(Succeed())
	h.pokeSchedule(name)
	h.eventuallySchedule(name, func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.NextScheduleTime).NotTo(BeNil(), "the schedule controller wrote status.nextScheduleTime back")
	})
}

// suiteReconciled returns once the suite controller ran a whole pass over the suite that started
// after the call: it erases status.observedGeneration (every pass sets it) and waits until the
// manager wrote it back.
func (h *harness) suiteReconciled(name string) {
	h.t.Helper()
	s := h.get(name)
	h.g.Expect(k8s.Status().Patch(h.ctx, s, client.RawPatch(types.MergePatchType, []byte(`{"status":{"observedGeneration":null}}`)))).To(Succeed())
	poke[vmbenchv1.BenchmarkSuite](h, name)
	h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.ObservedGeneration).To(Equal(s.Generation), "the suite controller wrote status.observedGeneration back")
	})
}
