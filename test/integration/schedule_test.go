package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/platform"
)

// The schedule controller runs alone in these tests, in a manager of its own with the harness's
// clock: the suites it starts are driven to their end by hand, as the suite controller would.

// startSchedules runs the schedule controller on the test's namespace until the test ends or the
// returned stop is called.
func (h *harness) startSchedules(store ...schedulecontroller.HistoryStore) (stop func()) {
	h.t.Helper()
	scheme := scheme.New()
	identity := cfg
	if h.identity != nil {
		identity = h.identity
	}
	mgr, err := ctrl.NewManager(identity, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{h.ns: {}}},
	})
	h.g.Expect(err).NotTo(HaveOccurred())
	r := &schedulecontroller.ScheduleReconciler{
		Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorder("vmbench"), Clock: h.clock,
		History: &schedulecontroller.ConfigMapHistory{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: scheme, Key: masterKey,
			Recorder: mgr.GetEventRecorder("vmbench")},
	}
	r.APIReader = mgr.GetAPIReader()
	// The images the harness's suite controller creates runs with.
	r.Images = platform.Images{Runner: "vmbench/runner:test", VMDisk: "vmbench/vm-disk:test"}
	if len(store) > 0 {
		r.History = store[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.g.Expect(r.SetupWithManager(ctx, mgr)).To(Succeed())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			h.t.Errorf("manager: %v", err)
		}
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	h.t.Cleanup(stop)
	return stop
}

// hourly creates a schedule of a suite every full hour and returns it with its first due time: the
// first full hour after its creation, as the API server stamped it.
func (h *harness) hourly(name string, change func(*vmbenchv1.BenchmarkScheduleSpec)) (*vmbenchv1.BenchmarkSchedule, time.Time) {
	h.t.Helper()
	s := &vmbenchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns},
		Spec: vmbenchv1.BenchmarkScheduleSpec{
			Schedule: "0 * * * *",
			SuiteTemplate: vmbenchv1.SuiteTemplate{
				Metadata: vmbenchv1.SuiteTemplateMetadata{Labels: map[string]string{"team": "platform"}},
				Spec:     vmbenchv1.BenchmarkSuiteSpec{Repetitions: 2, Benchmarks: []vmbenchv1.Benchmark{bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)}},
			},
		},
	}
	if change != nil {
		change(&s.Spec)
	}
	h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed())
	return s, s.CreationTimestamp.Truncate(time.Hour).Add(time.Hour)
}

// pokeSchedule changes an annotation of the schedule, so that its controller looks again at once
// after the test moved the clock (the controller's own requeue waits in real time).
func (h *harness) pokeSchedule(name string) {
	h.t.Helper()
	poke[vmbenchv1.BenchmarkSchedule](h, name)
}

// poke sets the annotation "poke" of the named object of the test's namespace to a new value, so
// that the controller that watches the kind reconciles it at once; a conflict is retried.
func poke[T any, PT interface {
	*T
	client.Object
}](h *harness, name string) {
	h.t.Helper()
	h.g.Eventually(func() error {
		o := PT(new(T))
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, o); err != nil {
			return err
		}
		annotations := o.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations["poke"] = strconv.FormatInt(time.Now().UnixNano(), 10)
		o.SetAnnotations(annotations)
		return k8s.Update(h.ctx, o)
	}, timeout, interval).Should(Succeed())
}

// eventuallySchedule waits until check passes on the schedule as the API server has it.
func (h *harness) eventuallySchedule(name string, check func(g Gomega, s *vmbenchv1.BenchmarkSchedule)) *vmbenchv1.BenchmarkSchedule {
	h.t.Helper()
	return eventuallyObject(h, name, check)
}

// suitesOf lists the suites labelled with the schedule, by name.
func (h *harness) suitesOf(schedule string) []string {
	h.t.Helper()
	var list vmbenchv1.BenchmarkSuiteList
	h.g.Expect(k8s.List(h.ctx, &list, client.InNamespace(h.ns), client.MatchingLabels{vmbenchv1.LabelSchedule: schedule})).To(Succeed())
	var names []string
	for _, s := range list.Items {
		names = append(names, s.Name)
	}
	return names
}

func suiteAt(schedule string, t time.Time) string {
	return schedule + "-" + strconv.FormatInt(t.Unix()/60, 10)
}

func skipped(g Gomega, s *vmbenchv1.BenchmarkSchedule, reason string) {
	c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionStartSkipped)
	g.Expect(c).NotTo(BeNil())
	g.Expect(c.Reason).To(Equal(reason), c.Message)
}

// finishSuite ends a scheduled suite as the suite controller would, with one metric per platform.
func (h *harness) finishSuite(name string, phase vmbenchv1.SuitePhase) {
	h.t.Helper()
	h.g.Eventually(func() error {
		s := &vmbenchv1.BenchmarkSuite{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, s); err != nil {
			return err
		}
		cond := vmbenchv1.ConditionComplete
		if phase == vmbenchv1.SuiteFailed {
			cond = vmbenchv1.ConditionFailed
		}
		meta.SetStatusCondition(&s.Status.Conditions, metav1.Condition{Type: cond, Status: metav1.ConditionTrue, Reason: vmbenchv1.ReasonFinished, Message: "done"})
		s.Status.Phase = phase
		s.Status.CompletionTime = &metav1.Time{Time: h.clock.Now()}
		metric := func(base float64) []vmbenchv1.MetricSummary {
			return []vmbenchv1.MetricSummary{{Name: "events_per_second", Unit: "events/s", Direction: vmbenchv1.HigherIsBetter, N: 2, Mean: base,
				Samples: []vmbenchv1.Sample{{Repetition: 1, Node: "master", Value: base * 0.99}, {Repetition: 2, Node: "master", Value: base * 1.01}}}}
		}
		s.Status.Results = []vmbenchv1.BenchmarkResult{
			{Benchmark: "cpu", Platform: "container", Metrics: metric(1000)},
			{Benchmark: "cpu", Platform: "vm", Metrics: metric(900)},
		}
		return k8s.Status().Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
}

func TestScheduleForbidWaitsForTheUnfinishedSuite(t *testing.T) {
	h := newHarness(t)
	sched, first := h.hourly("forbid", nil)
	h.clock.SetTime(first.Add(-time.Second))
	h.startSchedules()
	h.eventuallySchedule("forbid", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.NextScheduleTime).NotTo(BeNil())
		g.Expect(s.Status.NextScheduleTime.Time).To(BeTemporally("==", first))
		skipped(g, s, vmbenchv1.ReasonNothingDue)
	})
	h.g.Expect(h.suitesOf("forbid")).To(BeEmpty(), "a suite before the first scheduled time")

	h.clock.SetTime(first)
	h.pokeSchedule("forbid")
	one := suiteAt("forbid", first)
	h.eventuallySchedule("forbid", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastScheduleTime).NotTo(BeNil())
		g.Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", first))
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", one)))
		skipped(g, s, vmbenchv1.ReasonStarted)
	})
	suite := h.get(one)
	h.g.Expect(metav1.IsControlledBy(suite, sched)).To(BeTrue(), "the suite is controlled by its schedule")
	h.g.Expect(suite.Labels).To(HaveKeyWithValue(vmbenchv1.LabelSchedule, "forbid"))
	h.g.Expect(suite.Labels).To(HaveKeyWithValue("team", "platform"))
	h.g.Expect(suite.Spec.Benchmarks).To(HaveLen(1))

	// The next hour, the suite of the first is still unfinished: the start waits, and says why.
	second := first.Add(time.Hour)
	h.clock.SetTime(second)
	h.pokeSchedule("forbid")
	h.eventuallySchedule("forbid", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		skipped(g, s, vmbenchv1.ReasonConcurrencyForbid)
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionStartSkipped)
		g.Expect(c.Message).To(And(ContainSubstring(one), ContainSubstring("Allow")))
	})
	h.g.Expect(h.suitesOf("forbid")).To(ConsistOf(one))

	// Once it ends, the waiting start happens (no startingDeadlineSeconds), and the ended suite is
	// recorded.
	h.finishSuite(one, vmbenchv1.SuiteComplete)
	h.eventuallySchedule("forbid", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", suiteAt("forbid", second))))
		g.Expect(s.Status.Records).To(Equal(int32(1)))
		g.Expect(s.Status.LastSuccessfulTime).NotTo(BeNil())
	})
	h.g.Expect(h.suitesOf("forbid")).To(ConsistOf(one, suiteAt("forbid", second)))
}

func TestScheduleReplaceAndAllow(t *testing.T) {
	h := newHarness(t)
	_, first := h.hourly("swap", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.ConcurrencyPolicy = vmbenchv1.ConcurrencyReplace })
	_, firstAllow := h.hourly("both", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.ConcurrencyPolicy = vmbenchv1.ConcurrencyAllow })
	// Created across a full hour, the first schedule's first time passes unstarted: only the most
	// recent is due.
	if firstAllow.After(first) {
		first = firstAllow
	}
	h.clock.SetTime(first)
	h.startSchedules()
	for _, name := range []string{"swap", "both"} {
		h.eventuallySchedule(name, func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
			g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", suiteAt(name, first))))
		})
	}
	second := first.Add(time.Hour)
	h.clock.SetTime(second)
	h.pokeSchedule("swap")
	h.pokeSchedule("both")
	// Replace: the unfinished suite goes, the new one starts.
	h.eventuallySchedule("swap", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", suiteAt("swap", second))))
	})
	h.g.Eventually(func() []string { return h.suitesOf("swap") }, timeout, interval).Should(ConsistOf(suiteAt("swap", second)))
	// Allow: both run, and wait in the run queue as any suites.
	h.eventuallySchedule("both", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", suiteAt("both", first)), HaveField("Name", suiteAt("both", second))))
	})
}

func TestScheduleSuspendStartsNothing(t *testing.T) {
	h := newHarness(t)
	_, first := h.hourly("paused", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.Suspend = ptr.To(true) })
	h.clock.SetTime(first.Add(time.Minute))
	h.startSchedules()
	h.eventuallySchedule("paused", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionSuspended)).To(BeTrue())
		skipped(g, s, vmbenchv1.ReasonScheduleSuspended)
	})
	h.g.Expect(h.suitesOf("paused")).To(BeEmpty(), "a suite started while suspended")

	// Resumed, the start missed while suspended happens: there is no starting deadline.
	h.g.Eventually(func() error {
		s := &vmbenchv1.BenchmarkSchedule{}
		if err := k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "paused"}, s); err != nil {
			return err
		}
		s.Spec.Suspend = ptr.To(false)
		return k8s.Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	h.eventuallySchedule("paused", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionSuspended)).To(BeFalse())
		skipped(g, s, vmbenchv1.ReasonStarted)
	})
	h.g.Expect(h.suitesOf("paused")).To(ConsistOf(suiteAt("paused", first)))
}

func TestScheduleSkipsAStartPastItsDeadline(t *testing.T) {
	h := newHarness(t)
	_, first := h.hourly("late", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.StartingDeadlineSeconds = ptr.To[int64](600) })
	// The manager comes up half an hour after the first start was due: later than 10 minutes.
	h.clock.SetTime(first.Add(30 * time.Minute))
	h.startSchedules()
	h.eventuallySchedule("late", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		skipped(g, s, vmbenchv1.ReasonMissedDeadline)
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionStartSkipped)
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		// The time is in a field, not in the message, so that a start waiting through several due
		// times is told once.
		g.Expect(c.Message).To(ContainSubstring("status.skippedScheduleTime"))
		g.Expect(s.Status.SkippedScheduleTime).NotTo(BeNil())
		g.Expect(s.Status.SkippedScheduleTime.Time).To(BeTemporally("==", first))
	})
	h.g.Expect(h.suitesOf("late")).To(BeEmpty(), "a start later than its deadline")
	h.g.Eventually(func(g Gomega) {
		var events corev1.EventList
		g.Expect(k8s.List(h.ctx, &events, client.InNamespace(h.ns))).To(Succeed())
		g.Expect(events.Items).To(ContainElement(And(HaveField("Reason", vmbenchv1.ReasonMissedDeadline),
			HaveField("InvolvedObject.Name", "late"))))
	}, timeout, interval).Should(Succeed())

	// The next start is on time.
	next := first.Add(time.Hour)
	h.clock.SetTime(next.Add(time.Minute))
	h.pokeSchedule("late")
	h.eventuallySchedule("late", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) { skipped(g, s, vmbenchv1.ReasonStarted) })
	h.g.Expect(h.suitesOf("late")).To(ConsistOf(suiteAt("late", next)))
}

func TestScheduleKeepsRecordsAfterItsSuitesAreGone(t *testing.T) {
	h := newHarness(t)
	sched, first := h.hourly("kept", func(s *vmbenchv1.BenchmarkScheduleSpec) {
		s.SuccessfulHistoryLimit, s.FailedHistoryLimit = ptr.To[int32](1), ptr.To[int32](1)
	})
	h.startSchedules()
	outcomes := []vmbenchv1.SuitePhase{vmbenchv1.SuiteComplete, vmbenchv1.SuiteFailed, vmbenchv1.SuiteComplete}
	var names []string
	for i, phase := range outcomes {
		at := first.Add(time.Duration(i) * time.Hour)
		name := suiteAt("kept", at)
		names = append(names, name)
		h.clock.SetTime(at)
		h.pokeSchedule("kept")
		h.eventuallySchedule("kept", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
			g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
		})
		h.finishSuite(name, phase)
		h.eventuallySchedule("kept", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
			g.Expect(s.Status.Records).To(Equal(int32(i + 1)))
			g.Expect(s.Status.Active).To(BeEmpty())
		})
	}
	// One complete and one failed suite are kept: the first complete one went, after its record.
	h.g.Eventually(func() []string { return h.suitesOf("kept") }, timeout, interval).Should(ConsistOf(names[1], names[2]))

	// Deleting the suites leaves the records, which the schedule owns.
	h.g.Expect(k8s.DeleteAllOf(h.ctx, &vmbenchv1.BenchmarkSuite{}, client.InNamespace(h.ns))).To(Succeed())
	h.g.Eventually(func() []string { return h.suitesOf("kept") }, timeout, interval).Should(BeEmpty())
	h.pokeSchedule("kept")
	h.eventuallySchedule("kept", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Records).To(Equal(int32(3)))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionHistoryRecorded)).To(BeTrue())
	})
	store := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	recs, err := store.List(h.ctx, h.getSchedule("kept"))
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(recs).To(HaveLen(3))
	for i, rec := range recs {
		h.g.Expect(rec.Suite).To(Equal(names[i]))
		h.g.Expect(rec.Phase).To(Equal(outcomes[i]))
		h.g.Expect(rec.Metrics).To(ContainElement(And(HaveField("Platform", "vm"), HaveField("Ratio", HaveValue(BeNumerically("~", 0.9, 1e-9))))))
	}
	var cms corev1.ConfigMapList
	h.g.Expect(k8s.List(h.ctx, &cms, client.InNamespace(h.ns), client.MatchingLabels{vmbenchv1.LabelHistoryOf: "kept"})).To(Succeed())
	h.g.Expect(cms.Items).NotTo(BeEmpty())
	for i := range cms.Items {
		h.g.Expect(metav1.IsControlledBy(&cms.Items[i], sched)).To(BeTrue(), "history ConfigMap %s is the schedule's", cms.Items[i].Name)
		h.g.Expect(cms.Items[i].OwnerReferences).To(HaveLen(1), "history ConfigMap %s has no other owner, such as a suite", cms.Items[i].Name)
	}
}

func TestScheduleRestartDoesNotStartASuiteTwice(t *testing.T) {
	h := newHarness(t)
	_, first := h.hourly("once", nil)
	h.clock.SetTime(first)
	stop := h.startSchedules()
	name := suiteAt("once", first)
	h.eventuallySchedule("once", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
	})
	stop()
	// The manager stopped after creating the suite but before its status write landed.
	h.g.Eventually(func() error {
		s := h.getSchedule("once")
		s.Status.LastScheduleTime, s.Status.Active = nil, nil
		return k8s.Status().Update(h.ctx, s)
	}, timeout, interval).Should(Succeed())
	h.clock.SetTime(first.Add(2 * time.Minute))
	h.startSchedules()
	h.eventuallySchedule("once", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.LastScheduleTime).NotTo(BeNil())
		g.Expect(s.Status.LastScheduleTime.Time).To(BeTemporally("==", first))
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
	})
	h.g.Expect(h.suitesOf("once")).To(ConsistOf(name))
}

func TestScheduleRefusesAnUnknownTimeZone(t *testing.T) {
	h := newHarness(t)
	_, first := h.hourly("mars", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.TimeZone = ptr.To("Mars/Olympus_Mons") })
	h.clock.SetTime(first)
	h.startSchedules()
	h.eventuallySchedule("mars", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionValid)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(vmbenchv1.ReasonUnknownTimeZone))
		g.Expect(c.Message).To(ContainSubstring("Mars/Olympus_Mons"))
	})
	h.g.Expect(h.suitesOf("mars")).To(BeEmpty())
}

// A suite the API server refuses (here the chart's policy on privileged platforms) is not started,
// and the schedule quotes the refusal.
func TestScheduleSaysWhyItsSuiteWasRefused(t *testing.T) {
	h := newHarness(t)
	policy, binding := renderPrivilegedPlatformsPolicy(t, "kata")
	h.g.Expect(k8s.Create(h.ctx, policy)).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, binding)).To(Succeed())
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), policy)
	})
	hostPlatforms := []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "host", Type: vmbenchv1.PlatformHost}}
	probe := h.suite("probe", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	probe.Spec.Platforms = hostPlatforms
	h.g.Eventually(func() error { return k8s.Create(h.ctx, probe, client.DryRunAll) }, timeout, interval).Should(HaveOccurred(), "the policy is in force")

	_, first := h.hourly("host", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.SuiteTemplate.Spec.Platforms = hostPlatforms })
	h.clock.SetTime(first)
	h.startSchedules()
	h.eventuallySchedule("host", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		skipped(g, s, vmbenchv1.ReasonSuiteNotCreated)
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionStartSkipped)
		g.Expect(c.Message).To(And(ContainSubstring(suiteAt("host", first)), ContainSubstring("platforms of type Host"), ContainSubstring("spec.suiteTemplate")))
		g.Expect(s.Status.LastScheduleTime).To(BeNil())
	})
	h.g.Expect(h.suitesOf("host")).To(BeEmpty())
}

// brokenHistory refuses every write, as an API server that refuses the manager's ConfigMaps would.
type brokenHistory struct {
	schedulecontroller.HistoryStore
}

func (brokenHistory) Append(context.Context, *vmbenchv1.BenchmarkSchedule, history.Record) (int, error) {
	return 0, errors.New(`configmaps "x-history-0" is forbidden: denied by policy`)
}

// List finds the history empty: the schedule reads it once to learn its newest record.
func (brokenHistory) List(context.Context, *vmbenchv1.BenchmarkSchedule) ([]history.Record, error) {
	return nil, nil
}

// A finished suite whose record cannot be written is kept, whatever the history limit, and the
// schedule says why.
func TestScheduleKeepsASuiteItCouldNotRecord(t *testing.T) {
	h := newHarness(t)
	_, first := h.hourly("unrecorded", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.SuccessfulHistoryLimit = ptr.To[int32](0) })
	h.clock.SetTime(first)
	h.startSchedules(brokenHistory{})
	name := suiteAt("unrecorded", first)
	h.eventuallySchedule("unrecorded", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
	})
	h.finishSuite(name, vmbenchv1.SuiteComplete)
	h.eventuallySchedule("unrecorded", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionHistoryRecorded)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(vmbenchv1.ReasonHistoryNotWritten))
		g.Expect(c.Message).To(And(ContainSubstring(name), ContainSubstring("denied by policy"), ContainSubstring("may create and patch ConfigMaps")))
	})
	h.g.Expect(h.suitesOf("unrecorded")).To(ConsistOf(name), "a finished suite deleted before its record was written")
	h.g.Expect(h.get(name).Annotations).NotTo(HaveKey(vmbenchv1.AnnotationRecorded))
}

func TestScheduleSamplesAreAccepted(t *testing.T) {
	h := newHarness(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "schedule*.yaml"))
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(files).NotTo(BeEmpty())
	for _, f := range files {
		b, err := os.ReadFile(f)
		h.g.Expect(err).NotTo(HaveOccurred())
		s := &vmbenchv1.BenchmarkSchedule{}
		h.g.Expect(yaml.UnmarshalStrict(b, s)).To(Succeed(), f)
		s.Namespace = h.ns
		h.g.Expect(k8s.Create(h.ctx, s)).To(Succeed(), f)
	}
	long := &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "a-schedule-name-of-22c", Namespace: h.ns},
		Spec: vmbenchv1.BenchmarkScheduleSpec{Schedule: "@daily", SuiteTemplate: vmbenchv1.SuiteTemplate{
			Spec: vmbenchv1.BenchmarkSuiteSpec{Benchmarks: []vmbenchv1.Benchmark{bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)}}}}}
	err = k8s.Create(h.ctx, long)
	h.g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "a name longer than 21 characters: %v", err)
	h.g.Expect(err.Error()).To(ContainSubstring("at most 21 characters"))
}

// The schedule controller, speaking as the chart's service account with the chart's RBAC and
// policies on its requests, starts a suite, records it and deletes it beyond the history limit:
// every verb it uses is granted, and its history ConfigMaps pass the policy on the manager's writes.
func TestScheduleWithTheChartsRBAC(t *testing.T) {
	h := newHarness(t)
	release := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-system-"}}
	h.g.Expect(k8s.Create(h.ctx, release)).To(Succeed())
	rbac, policy, sa := renderManagerAccess(t, "schedules", release.Name)
	createAll(t, h.g, rbac)
	createAll(t, h.g, policy)
	manager := asServiceAccount(h.g, release.Name, sa)
	h.g.Eventually(func() error {
		_, err := manager.CoreV1().ConfigMaps(h.ns).Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}, timeout, interval).Should(MatchError(ContainSubstring("the vmbench manager writes only objects labelled vmbench.io/suite")),
		"the chart's RBAC and its policy on the manager's writes are in force")
	h.identity = serviceAccountConfig(release.Name, sa)
	_, first := h.hourly("chart", func(s *vmbenchv1.BenchmarkScheduleSpec) { s.SuccessfulHistoryLimit = ptr.To[int32](0) })
	h.clock.SetTime(first)
	h.startSchedules()
	name := suiteAt("chart", first)
	h.eventuallySchedule("chart", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Active).To(ConsistOf(HaveField("Name", name)))
	})
	h.finishSuite(name, vmbenchv1.SuiteComplete)
	h.eventuallySchedule("chart", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Records).To(Equal(int32(1)))
		g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionHistoryRecorded)).To(BeTrue())
	})
	h.g.Eventually(func() []string { return h.suitesOf("chart") }, timeout, interval).Should(BeEmpty(), "the suite beyond the limit of 0")
}

func (h *harness) getSchedule(name string) *vmbenchv1.BenchmarkSchedule {
	h.t.Helper()
	s := &vmbenchv1.BenchmarkSchedule{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: name}, s)).To(Succeed())
	return s
}
