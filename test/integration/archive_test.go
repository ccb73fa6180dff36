package integration

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	archivecontroller "github.com/vmbench/vmbench/controllers/archive"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/archive"
	"github.com/vmbench/vmbench/internal/archive/archivetest"
)

// The archive runs against a real S3-compatible server (SeaweedFS, built by hack/seaweedfs.sh):
// a finished suite's status and result tables are written there, with the chart's RBAC, read back
// equal to the cluster's, and stay when the suite is deleted.

const archivePrefix = "vmbench/test"

// withArchive adds the archive's controller, writing to store, to the harness's manager.
func (h *harness) withArchive(store archive.Store) {
	h.addControllers = func(mgr ctrl.Manager) error {
		return (&archivecontroller.ArchiveReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store,
			Prefix: archivePrefix, Recorder: mgr.GetEventRecorder("vmbench")}).SetupWithManager(mgr)
	}
}

// expectEvent waits for an event of the namespace of the given type and reason whose note holds
// every want, and returns it.
func (h *harness) expectEvent(within time.Duration, eventType, reason string, want ...string) corev1.Event {
	h.t.Helper()
	var found corev1.Event
	h.g.Eventually(func(g Gomega) {
		events := &corev1.EventList{}
		g.Expect(k8s.List(h.ctx, events, client.InNamespace(h.ns))).To(Succeed())
		matchers := []types.GomegaMatcher{HaveField("Reason", reason), HaveField("Type", eventType)}
		for _, w := range want {
			matchers = append(matchers, HaveField("Message", ContainSubstring(w)))
		}
		i := slices.IndexFunc(events.Items, func(e corev1.Event) bool {
			ok, _ := And(matchers...).Match(e)
			return ok
		})
		g.Expect(i).NotTo(Equal(-1), "no %s event %s with %q among %d", eventType, reason, want, len(events.Items))
		found = events.Items[i]
	}, within, interval).Should(Succeed())
	return found
}

// finishArchivedSuite runs a container-only suite of the demo benchmarks to Complete: its iperf3
// time series make a tables ConfigMap.
func (h *harness) finishArchivedSuite(name string) *vmbenchv1.BenchmarkSuite {
	h.t.Helper()
	h.g.Expect(k8s.Create(h.ctx, containerOnly(h.suite(name, 1, demoBenchmarks()...)))).To(Succeed())
	h.finishContainerRun(name, name+"-container-1", 1)
	return h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
}

// speakAsTheChartsManager makes the harness's manager speak as the chart's service account, with
// the chart's exact RBAC, which the archive does not add to.
func (h *harness) speakAsTheChartsManager() {
	h.t.Helper()
	release := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-system-"}}
	h.g.Expect(k8s.Create(h.ctx, release)).To(Succeed())
	rbac, _, sa := renderManagerAccess(h.t, "archive", release.Name)
	createAll(h.t, h.g, rbac)
	manager := asServiceAccount(h.g, release.Name, sa)
	h.g.Eventually(func() error {
		_, err := manager.CoreV1().ConfigMaps(h.ns).List(h.ctx, metav1.ListOptions{})
		return err
	}, timeout, interval).Should(Succeed(), "the chart's RBAC is in force")
	h.identity = serviceAccountConfig(release.Name, sa)
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.QueueNamespace = release.Name }
}

func TestFinishedSuiteIsArchivedAndOutlivesIt(t *testing.T) {
	server := archivetest.Start(t)
	store := server.Client(t, archivetest.Archive, archivetest.Bucket)
	h := newHarness(t)
	h.speakAsTheChartsManager()
	h.withArchive(store)
	h.startManager(allKinds())
	suite := h.finishArchivedSuite("kept")
	dir := archive.SuiteDir(archivePrefix, h.ns, "kept", string(suite.UID))
	h.expectEvent(timeout, corev1.EventTypeNormal, archivecontroller.ReasonArchived,
		"results archived to s3://"+archivetest.Bucket+"/"+dir+"/ at "+server.Endpoint, "suite.json and 1 result-table ConfigMaps")

	// What the cluster has, to compare the archive with.
	suite = h.get("kept")
	tables := &corev1.ConfigMapList{}
	h.g.Expect(k8s.List(h.ctx, tables, client.InNamespace(h.ns), client.HasLabels{vmbenchv1.LabelTablesOf})).To(Succeed())
	h.g.Expect(tables.Items).To(HaveLen(1), "the run's iperf3 time series")
	h.g.Expect(tables.Items[0].Data).To(HaveLen(5))

	expectArchived := func() {
		h.t.Helper()
		keys, err := store.List(h.ctx, dir+"/")
		h.g.Expect(err).NotTo(HaveOccurred())
		h.g.Expect(keys).To(ConsistOf(archive.SuiteKey(dir), archive.TableKey(dir, tables.Items[0].Name)),
			"suite.json and the tables, and not the raw outputs")
		body, err := store.Get(h.ctx, archive.SuiteKey(dir))
		h.g.Expect(err).NotTo(HaveOccurred())
		var archived vmbenchv1.BenchmarkSuite
		h.g.Expect(json.Unmarshal(body, &archived)).To(Succeed())
		h.g.Expect(archived.Kind).To(Equal("BenchmarkSuite"))
		h.g.Expect(archived.ManagedFields).To(BeNil())
		h.g.Expect(archived.UID).To(Equal(suite.UID))
		h.g.Expect(archived.Spec).To(Equal(suite.Spec))
		h.g.Expect(archived.Status).To(Equal(suite.Status), "the archived status is the cluster's")
		h.g.Expect(archived.Status.Results).NotTo(BeEmpty())

		body, err = store.Get(h.ctx, archive.TableKey(dir, tables.Items[0].Name))
		h.g.Expect(err).NotTo(HaveOccurred())
		var table corev1.ConfigMap
		h.g.Expect(json.Unmarshal(body, &table)).To(Succeed())
		h.g.Expect(table.Kind).To(Equal("ConfigMap"))
		h.g.Expect(table.Data).To(Equal(tables.Items[0].Data))
		h.g.Expect(table.Labels).To(Equal(tables.Items[0].Labels))
		h.g.Expect(table.OwnerReferences).To(Equal(tables.Items[0].OwnerReferences))
	}
	expectArchived()

	h.g.Expect(k8s.Delete(h.ctx, suite)).To(Succeed())
	h.g.Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(h.ctx, client.ObjectKeyFromObject(suite), &vmbenchv1.BenchmarkSuite{}))
	}, timeout, interval).Should(BeTrue())
	expectArchived()
}

// With the server down, the suite says why it is not archived; once the server is back, the
// backoff brings the suite back and it is archived.
func TestArchiveFailureIsAnEventUntilTheServerIsBack(t *testing.T) {
	server := archivetest.Start(t)
	store := server.Client(t, archivetest.Archive, archivetest.Bucket)
	server.Stop()
	h := newHarness(t)
	h.withArchive(store)
	h.startManager(allKinds())
	suite := h.finishArchivedSuite("down")
	h.expectEvent(timeout, corev1.EventTypeWarning, archivecontroller.ReasonArchiveFailed, "the suite's results are not archived yet",
		"S3 HeadObject of s3://"+archivetest.Bucket+"/"+archive.SuiteDir(archivePrefix, h.ns, "down", string(suite.UID))+"/suite.json at "+server.Endpoint,
		"the endpoint is unreachable: check the endpoint "+server.Endpoint)

	server.Restart()
	h.expectEvent(2*time.Minute, corev1.EventTypeNormal, archivecontroller.ReasonArchived, "results archived to s3://"+archivetest.Bucket)
	found, err := store.Exists(h.ctx, archive.SuiteKey(archive.SuiteDir(archivePrefix, h.ns, "down", string(suite.UID))))
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(found).To(BeTrue())
}

// S8 against a real server: with the store down, a schedule keeps its finished suite beyond the
// history limit and its condition and a Warning name it; once the store is back, the archive writes
// the suite whole and marks it, and only then does the schedule delete it.
func TestScheduleKeepsASuiteUntilItIsArchived(t *testing.T) {
	server := archivetest.Start(t)
	store := server.Client(t, archivetest.Archive, archivetest.Bucket)
	server.Stop()
	h := newHarness(t)
	h.addControllers = func(mgr ctrl.Manager) error {
		if err := (&archivecontroller.ArchiveReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Store: store,
			Prefix: archivePrefix, Recorder: mgr.GetEventRecorder("vmbench")}).SetupWithManager(mgr); err != nil {
			return err
		}
		scheme := mgr.GetScheme()
		schedules := &schedulecontroller.ScheduleReconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorder("vmbench"),
			Clock: h.clock, APIReader: mgr.GetAPIReader(), Archive: true,
			History: &schedulecontroller.ConfigMapHistory{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: scheme, Key: masterKey}}
		return schedules.SetupWithManager(h.ctx, mgr)
	}
	h.startManager(allKinds())

	// A suspended schedule that keeps no complete suite; its suite is made by hand, as it would.
	sched := &vmbenchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "kept", Namespace: h.ns},
		Spec: vmbenchv1.BenchmarkScheduleSpec{Schedule: "0 3 * * *", Suspend: ptr.To(true), SuccessfulHistoryLimit: ptr.To[int32](0),
			SuiteTemplate: vmbenchv1.SuiteTemplate{Spec: vmbenchv1.BenchmarkSuiteSpec{Repetitions: 1, Benchmarks: demoBenchmarks()}}},
	}
	h.g.Expect(k8s.Create(h.ctx, sched)).To(Succeed())
	suite := containerOnly(h.suite("kept-1", 1, demoBenchmarks()...))
	suite.OwnerReferences = []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
		Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}}
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	h.finishContainerRun(suite.Name, suite.Name+"-container-1", 1)

	awaiting := func(g Gomega) *metav1.Condition {
		got := &vmbenchv1.BenchmarkSchedule{}
		g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(sched), got)).To(Succeed())
		return meta.FindStatusCondition(got.Status.Conditions, vmbenchv1.ConditionAwaitingArchive)
	}
	h.g.Eventually(func(g Gomega) {
		c := awaiting(g)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
		g.Expect(c.Message).To(ContainSubstring("kept until the archive holds them whole: kept-1."))
	}, timeout, interval).Should(Succeed())
	h.expectEvent(timeout, corev1.EventTypeWarning, vmbenchv1.ReasonAwaitingArchive, "kept-1")
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(suite), &vmbenchv1.BenchmarkSuite{})).To(Succeed(),
		"the schedule deleted a suite the archive does not hold")
	kept := h.get(suite.Name)
	h.g.Expect(kept.Annotations).To(HaveKeyWithValue(vmbenchv1.AnnotationRecorded, "true"), "recorded, so only the archive holds it back")

	server.Restart()
	dir := archive.SuiteDir(archivePrefix, h.ns, suite.Name, string(kept.UID))
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKeyFromObject(suite), &vmbenchv1.BenchmarkSuite{})
	}, 3*time.Minute, interval).Should(Satisfy(apierrors.IsNotFound), "the archived suite is deleted")
	found, err := store.Exists(h.ctx, archive.SuiteKey(dir))
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(found).To(BeTrue(), "deleted only after its suite.json was written")
	keys, err := store.List(h.ctx, dir+"/tables/")
	h.g.Expect(err).NotTo(HaveOccurred())
	h.g.Expect(keys).To(HaveLen(1), "and its table")
	h.g.Eventually(func(g Gomega) {
		c := awaiting(g)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
	}, timeout, interval).Should(Succeed())
}
