package integration

import (
	"encoding/json"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/internal/history"
)

// Upgrade from a vmbench that wrote unsigned records, against a real API server: the schedule's
// status says it has 4 records and its history ConfigMap holds them as plain JSON lines, beside a
// line signed under another schedule's key. The manager's first reconcile adopts the 4 (signed and
// written back, one HistoryAdopted event, status.historySignedAt set) and not the badly signed one.
func TestScheduleAdoptsTheHistoryAnOlderVmbenchWrote(t *testing.T) {
	h := newHarness(t)
	sched, _ := h.hourly("legacy", func(spec *vmbenchv1.BenchmarkScheduleSpec) { spec.Schedule = "0 0 1 1 *" })
	sched.Status.Records = 4
	h.g.Expect(k8s.Status().Update(h.ctx, sched)).To(Succeed())
	var lines []string
	for _, rec := range syntheticRecords("legacy", 4, func(int) float64 { return 900 }, 5) {
		b, err := json.Marshal(rec)
		h.g.Expect(err).NotTo(HaveOccurred())
		lines = append(lines, string(b))
	}
	otherKey, err := masterKey.HistoryKey("another-schedule")
	h.g.Expect(err).NotTo(HaveOccurred())
	stranger := syntheticRecords("stranger", 1, func(int) float64 { return 450 }, 6)[0]
	badSig, err := history.SignLine(otherKey, stranger)
	h.g.Expect(err).NotTo(HaveOccurred())
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-history-0", Namespace: h.ns,
			Labels: map[string]string{vmbenchv1.LabelHistoryOf: "legacy", vmbenchv1.LabelSuite: ""},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
				Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}},
		Data: map[string]string{history.DataKey: strings.Join(append(lines[:2:2], append([]string{badSig}, lines[2:]...)...), "\n") + "\n"},
	}
	h.g.Expect(k8s.Create(h.ctx, cm)).To(Succeed())

	h.startSchedules()
	got := h.eventuallySchedule("legacy", func(g Gomega, s *vmbenchv1.BenchmarkSchedule) {
		g.Expect(s.Status.HistorySignedAt).NotTo(BeNil())
	})
	store := &schedulecontroller.ConfigMapHistory{Client: k8s, Reader: k8s, Scheme: k8s.Scheme(), Key: masterKey}
	recs, err := store.List(h.ctx, got)
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(recs).To(HaveLen(4), "the 4 unsigned records are adopted, the badly signed line is not")
	for _, r := range recs {
		h.g.Expect(r.Suite).NotTo(Equal(stranger.Suite))
	}
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
	key, err := masterKey.HistoryKey(sched.UID)
	h.g.Expect(err).NotTo(HaveOccurred())
	written := strings.Split(strings.TrimSuffix(cm.Data[history.DataKey], "\n"), "\n")
	h.g.Expect(written).To(HaveLen(4))
	for _, l := range written {
		_, err := history.VerifyLine(key, l)
		h.g.Expect(err).NotTo(HaveOccurred(), "line %q is not signed with the schedule's key", l)
	}
	h.g.Eventually(func() []corev1.Event { return h.scheduleEvents(vmbenchv1.ReasonHistoryAdopted) }, timeout, interval).Should(
		ConsistOf(And(HaveField("Type", corev1.EventTypeNormal), HaveField("Message", ContainSubstring("signed 4 records")))))
}
