package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/internal/history"
)

// S1: 120 ConfigMaps of 900 KiB that carry a schedule's history label but are nobody's history
// (a namespace editor may make them) are listed as metadata and never fetched: one history read
// raises the heap by under 32 MiB (it rose by 350 MiB when they were read in full), and a Warning
// event names them.
func TestHistoryReadIgnoresLabelledConfigMapsWithinMemory(t *testing.T) {
	h := newHarness(t)
	sched, _ := h.hourly("hist", func(spec *vmbenchv1.BenchmarkScheduleSpec) { spec.Schedule = "0 0 1 1 *" })
	writer := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	for _, rec := range syntheticRecords("hist", 3, func(int) float64 { return 900 }, 1) {
		_, err := writer.Append(h.ctx, sched, rec)
		h.g.Expect(err).NotTo(HaveOccurred())
	}
	createUnownedHistory(h, strings.Repeat("x", 900<<10))
	rec := events.NewFakeRecorder(10)
	reader := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey, Recorder: rec}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	recs, err := reader.List(h.ctx, sched)
	runtime.ReadMemStats(&after)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(recs).To(HaveLen(3))
	heap := int64(after.HeapInuse) - int64(before.HeapInuse)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("one history read beside 120 labelled ConfigMaps of 900 KiB: heap in use %+d KiB, allocated %d KiB", heap>>10, allocated>>10)
	h.g.Expect(heap).To(BeNumerically("<", 32<<20), "heap in use grew by %d MiB in one history read", heap>>20)
	h.g.Expect(allocated).To(BeNumerically("<", 32<<20), "one history read allocated %d MiB", allocated>>20)

	var notes []string
	for len(rec.Events) > 0 {
		notes = append(notes, <-rec.Events)
	}
	h.g.Expect(notes).To(ConsistOf(And(ContainSubstring("Warning "+vmbenchv1.ReasonHistoryIgnored),
		ContainSubstring("120 ConfigMaps labelled vmbench.io/history-of=hist"), ContainSubstring("hist-unowned-000"),
		ContainSubstring("hist-unowned-009"), ContainSubstring("and 110 more"))))
	// Read again: not told again.
	_, err = reader.List(h.ctx, sched)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(rec.Events).To(BeEmpty())
}

// S5: lines a tenant writes into the schedule's own history ConfigMap (new records of a 50% drop on
// a node whose kernel "changed", and a signed line with its value changed) change no finding, no
// baseline verdict and no version trigger; the Warning event on the schedule says which ConfigMap
// held them.
func TestHistoryLinesATenantWroteChangeNothing(t *testing.T) {
	h := newHarness(t)
	nodeName := h.ns + "-n1"
	h.node(nodeName, "6.12.57+deb13-amd64", nil)
	poll := 5 * time.Minute
	sched, _ := h.hourly("forge", func(spec *vmbenchv1.BenchmarkScheduleSpec) {
		spec.Schedule = "0 0 1 1 *"
		spec.ConcurrencyPolicy = vmbenchv1.ConcurrencyAllow
		spec.Baseline = &vmbenchv1.ScheduleBaseline{Suite: "forge-past-00"}
		spec.Triggers = &vmbenchv1.ScheduleTriggers{OnVersionChange: &vmbenchv1.OnVersionChange{Nodes: true,
			PollInterval: vmbenchv1.DurationOf(poll)}}
	})
	h.appendHistory(sched, syntheticRecords("forge", 16, func(int) float64 { return 900 }, 3))
	h.clock.SetTime(sched.CreationTimestamp.Add(poll + time.Minute))
	now, latest := h.finishLatest(sched)

	// The tenant's lines: 8 records after the latest suite, the VM arm at half, run on the node with
	// another kernel; and the second signed line with its VM arm halved.
	cm := &corev1.ConfigMap{}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "forge-history-0"}, cm)).To(Succeed())
	var forged []string
	for i, rec := range syntheticRecords("forged", 8, func(int) float64 { return 450 }, 4) {
		rec.Scheduled = now.Add(time.Duration(i) * time.Minute)
		rec.Finished = rec.Scheduled.Add(time.Second)
		rec.Environments = []vmbenchv1.RunEnvironment{{ID: "e1", Platform: vmbenchv1.PlatformContainer,
			Nodes: []vmbenchv1.NodeEnvironment{{Name: nodeName, KernelVersion: "6.12.48+deb13-amd64"}}}}
		b, err := json.Marshal(rec)
		h.g.Expect(err).NotTo(HaveOccurred())
		forged = append(forged, string(b))
	}
	lines := strings.SplitN(cm.Data[history.DataKey], "\n", 3)
	var second history.Record
	h.g.Expect(json.Unmarshal([]byte(lines[1]), &second)).To(Succeed())
	changed, err := json.Marshal(*second.Metrics[1].MeanLog - 0.69)
	h.g.Expect(err).NotTo(HaveOccurred())
	was, err := json.Marshal(*second.Metrics[1].MeanLog)
	h.g.Expect(err).NotTo(HaveOccurred())
	lines[1] = strings.Replace(lines[1], string(was), string(changed), 1)
	cm.Data[history.DataKey] = lines[0] + "\n" + lines[1] + "\n" + lines[2] + strings.Join(forged, "\n") + "\n"
	h.g.Expect(k8s.Update(h.ctx, cm)).To(Succeed())

	h.startSchedules()
	got := h.eventuallySchedule("forge", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.Records).To(BeNumerically(">", 0))
		g.Expect(s.Status.LastVersionCheck).NotTo(BeNil())
		g.Expect(s.Status.Baseline).NotTo(BeNil())
		g.Expect(meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionRegressed)).NotTo(BeNil())
	})
	h.g.Expect(got.Status.Findings).To(BeEmpty(), "the tenant's records made a finding")
	h.g.Expect(got.Status.Baseline.Verdict).NotTo(Equal(vmbenchv1.BaselineDrifted), "the tenant's records made the baseline drift")
	h.g.Expect(got.Status.LastTrigger).To(BeNil(), "the tenant's node versions triggered a suite")
	h.g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, vmbenchv1.ConditionRegressed)).To(BeFalse())
	h.g.Expect(h.suitesOf("forge")).To(ConsistOf(latest), "a suite started from the tenant's lines")
	// 15 of the manager's records left unchanged, and the latest suite's.
	h.g.Expect(got.Status.Records).To(Equal(int32(16)))
	h.g.Eventually(func() []corev1.Event { return h.scheduleEvents(vmbenchv1.ReasonHistoryIgnored) }, timeout, interval).Should(
		ConsistOf(And(HaveField("Type", corev1.EventTypeWarning),
			HaveField("Message", And(ContainSubstring("8 lines of ConfigMap forge-history-0 carry no signature"),
				ContainSubstring("1 lines of ConfigMap forge-history-0 fail the signature check"))))))
	recs := h.historyRecords(sched)
	h.g.Expect(recs).To(HaveLen(16), "the history holds the manager's records but the changed one, and none of the tenant's")
}

// The history policy of config/admission (the chart's, for vmbench-system/vmbench-manager), as the
// API server enforces it: a tenant whom RBAC lets write ConfigMaps may not create one labelled
// vmbench.io/history-of, put the label on one, or change a labelled one's data; the manager may. A
// tenant may still annotate or delete one: that forges nothing.
func TestOnlyTheManagerWritesScheduleHistory(t *testing.T) {
	h := newHarness(t)
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "admission", "schedule_history.yaml"))
	h.g.Expect(err).NotTo(HaveOccurred())
	doc, _, _ := strings.Cut(string(raw), "\n---\n")
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	h.g.Expect(yaml.UnmarshalStrict([]byte(doc), policy)).To(Succeed())
	h.enforceInNamespace(policy)

	manager, jane := h.managerAndTenant("configmap-writer", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
		Verbs: []string{"get", "create", "update", "patch", "delete"}})
	labelled := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: h.ns,
			Labels: map[string]string{vmbenchv1.LabelHistoryOf: "nightly"}}, Data: map[string]string{history.DataKey: "{}\n"}}
	}
	// A new policy takes a moment to be enforced.
	h.g.Eventually(func() error { return jane.Create(h.ctx, labelled("nightly-history-9")) }, timeout, interval).Should(MatchError(And(
		ContainSubstring("vmbench manager (system:serviceaccount:vmbench-system:vmbench-manager) alone writes"),
		ContainSubstring("tenant-jane may not create ConfigMap "+h.ns+"/nightly-history-9"))))

	// Putting the label on a ConfigMap of hers is refused; her ConfigMaps without it are hers.
	own := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "notes", Namespace: h.ns}, Data: map[string]string{"a": "b"}}
	h.g.Expect(jane.Create(h.ctx, own)).To(Succeed())
	own.Labels = map[string]string{vmbenchv1.LabelHistoryOf: "nightly"}
	h.g.Expect(jane.Update(h.ctx, own)).To(MatchError(ContainSubstring("may not update ConfigMap")))

	// The manager writes the history; the tenant may not change its lines or labels.
	hist := labelled("nightly-history-0")
	h.g.Expect(manager.Create(h.ctx, hist)).To(Succeed())
	hist.Data[history.DataKey] += `{"suite":"forged"}` + "\n"
	h.g.Expect(jane.Update(h.ctx, hist)).To(MatchError(ContainSubstring("may not update ConfigMap")))
	h.g.Expect(jane.Get(h.ctx, client.ObjectKeyFromObject(hist), hist)).To(Succeed())
	hist.Labels["extra"] = "x"
	h.g.Expect(jane.Update(h.ctx, hist)).To(MatchError(ContainSubstring("may not update ConfigMap")))
	h.g.Expect(jane.Get(h.ctx, client.ObjectKeyFromObject(hist), hist)).To(Succeed())
	hist.Data[history.DataKey] += `{"suite":"next"}` + "\n"
	h.g.Expect(manager.Update(h.ctx, hist)).To(Succeed())
	// Annotations (as owner-reference edits of the garbage collector) change no line: admitted, as
	// is a delete.
	h.g.Expect(jane.Get(h.ctx, client.ObjectKeyFromObject(hist), hist)).To(Succeed())
	hist.Annotations = map[string]string{"note": "seen"}
	h.g.Expect(jane.Update(h.ctx, hist)).To(Succeed())
	h.g.Expect(jane.Delete(h.ctx, hist)).To(Succeed())
}

// createUnownedHistory creates 120 ConfigMaps labelled as schedule hist's history, owned by nobody,
// each holding filler; the filler is not kept past the call, so the heap measured after it holds
// none of it.
func createUnownedHistory(h *harness, filler string) {
	for i := range 120 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("hist-unowned-%03d", i), Namespace: h.ns,
			Labels: map[string]string{vmbenchv1.LabelHistoryOf: "hist"}}, Data: map[string]string{history.DataKey: filler}}
		h.g.Expect(k8s.Create(h.ctx, cm)).To(Succeed())
	}
}
