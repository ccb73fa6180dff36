package integration

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/internal/history"
)

// spec.triggers.onVersionChange reads, every poll interval, the versions of the nodes that the
// latest complete suite ran on, and starts a suite once when one changed.

// scheduleEvents are the Events of the test's namespace with the reason given.
func (h *harness) scheduleEvents(reason string) []corev1.Event {
	h.t.Helper()
	events := &corev1.EventList{}
	h.g.Expect(k8s.List(h.ctx, events, client.InNamespace(h.ns))).To(Succeed())
	var out []corev1.Event
	for _, e := range events.Items {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

func TestVersionTriggerStartsOneSuiteWhenANodesKernelChanges(t *testing.T) {
	h := newHarness(t)
	nodeName := h.ns + "-n1"
	node := h.node(nodeName, "6.12.48+deb13-amd64", nil)
	poll := 5 * time.Minute
	sched, _ := h.hourly("vtrig", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		// Once a year: no cron start during the test.
		spec.Schedule = "0 0 1 1 *"
		// Allow: only the remembered versions keep a second suite from starting.
		spec.ConcurrencyPolicy = vmbenchv1.ConcurrencyAllow
		spec.Triggers = &vmbenchv1.ScheduleTriggers{OnVersionChange: &vmbenchv1.OnVersionChange{Nodes: true,
			PollInterval: vmbenchv1.DurationOf(poll)}}
	})
	store := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	created := sched.CreationTimestamp.Time
	_, err := store.Append(h.ctx, sched, history.Record{Suite: "vtrig-earlier", UID: "earlier-uid", Scheduled: created.Add(-time.Hour),
		Finished: created.Add(-30 * time.Minute), Phase: vmbenchv1.SuiteComplete, Baseline: "container",
		Environments: []vmbenchv1.RunEnvironment{{ID: "e1", Platform: vmbenchv1.PlatformContainer, Nodes: []vmbenchv1.NodeEnvironment{{
			Name: nodeName, KernelVersion: "6.12.48+deb13-amd64", OSImage: "Debian GNU/Linux 13 (trixie)",
			ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.36.3", Architecture: "amd64"}}}}})
	h.g.Expect(err).NotTo(HaveOccurred())

	// The first check, a poll interval after the schedule was created: nothing changed.
	h.clock.SetTime(created.Add(poll + time.Minute))
	h.startSchedules()
	first := h.eventuallySchedule("vtrig", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastVersionCheck).NotTo(BeNil())
	})
	h.g.Expect(first.Status.LastTrigger).To(BeNil(), "a trigger though nothing changed")
	h.g.Expect(h.suitesOf("vtrig")).To(BeEmpty(), "a suite though nothing changed")

	// The node boots a new kernel; the next check is past its poll interval.
	h.setKernel(node, "6.12.57+deb13-amd64")
	h.clock.SetTime(first.Status.LastVersionCheck.Add(poll + time.Second))
	h.pokeSchedule("vtrig")
	name := suiteAt("vtrig", first.Status.LastVersionCheck.Add(poll).Truncate(time.Minute))
	change := "node " + nodeName + " kernelVersion 6.12.48+deb13-amd64 → 6.12.57+deb13-amd64"
	second := h.eventuallySchedule("vtrig", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastTrigger).NotTo(BeNil())
		g.Expect(s.Status.LastTrigger.Suite).To(Equal(name))
		g.Expect(s.Status.LastTrigger.Changes).To(Equal([]string{change}))
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
	})
	h.g.Expect(h.suitesOf("vtrig")).To(ConsistOf(name))
	suite := h.get(name)
	h.g.Expect(metav1.IsControlledBy(suite, sched)).To(BeTrue(), "the triggered suite is controlled by its schedule")
	h.g.Expect(second.Status.LastScheduleTime).To(BeNil(), "a triggered start moved the cron schedule's lastScheduleTime")
	h.g.Eventually(func() []corev1.Event { return h.scheduleEvents(vmbenchv1.ReasonVersionChanged) }, timeout, interval).Should(
		ConsistOf(HaveField("Message", And(ContainSubstring(name), ContainSubstring(change)))))

	// The next check, while the suite runs: the same versions start no other suite.
	h.clock.SetTime(second.Status.LastVersionCheck.Add(poll + time.Second))
	h.pokeSchedule("vtrig")
	h.eventuallySchedule("vtrig", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastVersionCheck.Time).To(BeTemporally(">", second.Status.LastVersionCheck.Time))
	})
	h.g.Expect(h.suitesOf("vtrig")).To(ConsistOf(name), "a second suite for the same change")
	h.g.Expect(h.scheduleEvents(vmbenchv1.ReasonVersionChanged)).To(HaveLen(1))
}

// The manager's runner image moved to a new tag since the latest complete suite: the first check
// starts one suite, names the change, and the next check starts no other.
func TestVersionTriggerStartsOneSuiteWhenTheRunnerImageTagChanges(t *testing.T) {
	h := newHarness(t)
	poll := 5 * time.Minute
	sched, _ := h.hourly("vimg", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		// Once a year: no cron start during the test.
		spec.Schedule = "0 0 1 1 *"
		spec.ConcurrencyPolicy = vmbenchv1.ConcurrencyAllow
		spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}}
		spec.Triggers = &vmbenchv1.ScheduleTriggers{OnVersionChange: &vmbenchv1.OnVersionChange{RunnerImage: true,
			PollInterval: vmbenchv1.DurationOf(poll)}}
	})
	store := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	created := sched.CreationTimestamp.Time
	_, err := store.Append(h.ctx, sched, history.Record{Suite: "vimg-earlier", UID: "earlier-uid", Scheduled: created.Add(-time.Hour),
		Finished: created.Add(-30 * time.Minute), Phase: vmbenchv1.SuiteComplete, Baseline: "container",
		Environments: []vmbenchv1.RunEnvironment{{ID: "e1", Platform: vmbenchv1.PlatformContainer,
			RunnerImage: "registry.example/vmbench/runner@sha256:0123abcd", RunnerImageRef: "vmbench/runner:previous",
			Nodes: []vmbenchv1.NodeEnvironment{{Name: h.ns + "-n1", KernelVersion: "6.12.48+deb13-amd64"}}}}})
	h.g.Expect(err).NotTo(HaveOccurred())

	h.clock.SetTime(created.Add(poll + time.Minute))
	h.startSchedules()
	name := suiteAt("vimg", created.Add(poll).Truncate(time.Minute))
	// The harness's manager creates runs with vmbench/runner:test.
	change := "runnerImage: vmbench/runner:previous → vmbench/runner:test"
	first := h.eventuallySchedule("vimg", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastTrigger).NotTo(BeNil())
		g.Expect(s.Status.LastTrigger.Suite).To(Equal(name))
		g.Expect(s.Status.LastTrigger.Changes).To(Equal([]string{change}))
	})
	h.g.Expect(h.suitesOf("vimg")).To(ConsistOf(name))
	h.g.Eventually(func() []corev1.Event { return h.scheduleEvents(vmbenchv1.ReasonVersionChanged) }, timeout, interval).Should(
		ConsistOf(HaveField("Message", And(ContainSubstring(name), ContainSubstring(change)))))

	// The next check, while the suite runs: the same change starts no other suite.
	h.clock.SetTime(first.Status.LastVersionCheck.Add(poll + time.Second))
	h.pokeSchedule("vimg")
	h.eventuallySchedule("vimg", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastVersionCheck.Time).To(BeTemporally(">", first.Status.LastVersionCheck.Time))
	})
	h.g.Expect(h.suitesOf("vimg")).To(ConsistOf(name), "a second suite for the same change")
	h.g.Expect(h.scheduleEvents(vmbenchv1.ReasonVersionChanged)).To(HaveLen(1))
}

// The CRD defaults pollInterval to 10m and refuses one under 1m.
func TestVersionTriggerPollIntervalFitsTheCRD(t *testing.T) {
	h := newHarness(t)
	s, _ := h.hourly("vpoll", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		spec.Triggers = &vmbenchv1.ScheduleTriggers{OnVersionChange: &vmbenchv1.OnVersionChange{KubeVirt: true}}
	})
	h.g.Expect(s.Spec.Triggers.OnVersionChange.PollInterval).To(HaveValue(Equal(vmbenchv1.Duration("10m"))))
	bad := s.DeepCopy()
	bad.Spec.Triggers.OnVersionChange.PollInterval = vmbenchv1.DurationOf(30 * time.Second)
	err := k8s.Update(h.ctx, bad)
	h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a pollInterval of 30s was accepted: %v", err)
	h.g.Expect(err.Error()).To(ContainSubstring("1m or more"))
	good := s.DeepCopy()
	good.Spec.Triggers.OnVersionChange.PollInterval = vmbenchv1.DurationOf(time.Minute)
	h.g.Expect(k8s.Update(h.ctx, good)).To(Succeed())
}
