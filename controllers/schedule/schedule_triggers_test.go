package schedule

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/platform"
)

func triggerNode(name, kernel string) vmbenchv1.NodeEnvironment {
	return vmbenchv1.NodeEnvironment{Name: name, KernelVersion: kernel, OSImage: "Debian GNU/Linux 13 (trixie)",
		ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.36.3", Architecture: "amd64"}
}

func TestVersionChanges(t *testing.T) {
	recorded := []vmbenchv1.RunEnvironment{
		{Platform: vmbenchv1.PlatformContainer, Nodes: []vmbenchv1.NodeEnvironment{triggerNode("n1", "6.1"), triggerNode("n2", "6.1")}},
		{Platform: vmbenchv1.PlatformVM, KubeVirtVersion: "v1.5.0", Nodes: []vmbenchv1.NodeEnvironment{triggerNode("n1", "6.1")}},
	}
	same := currentVersions{Nodes: map[string]vmbenchv1.NodeEnvironment{"n1": triggerNode("n1", "6.1"), "n2": triggerNode("n2", "6.1")},
		KubeVirt: "v1.5.0"}
	upgraded := func(change func(*currentVersions)) currentVersions {
		c := currentVersions{Nodes: map[string]vmbenchv1.NodeEnvironment{"n1": triggerNode("n1", "6.1"), "n2": triggerNode("n2", "6.1")},
			KubeVirt: "v1.5.0"}
		change(&c)
		return c
	}
	both := vmbenchv1.OnVersionChange{KubeVirt: true, Nodes: true}
	tests := []struct {
		name  string
		watch vmbenchv1.OnVersionChange
		cur   currentVersions
		want  []string
	}{
		{"nothing changed", both, same, nil},
		{"a kernel, named once though two environments ran on the node", both, upgraded(func(c *currentVersions) {
			c.Nodes["n1"] = triggerNode("n1", "6.8")
		}), []string{"node n1 kernelVersion 6.1 → 6.8"}},
		{"OS image, runtime and kubelet", both, upgraded(func(c *currentVersions) {
			n := triggerNode("n2", "6.1")
			n.OSImage, n.ContainerRuntimeVersion, n.KubeletVersion = "Debian GNU/Linux 14 (forky)", "containerd://2.2.0", "v1.37.0"
			c.Nodes["n2"] = n
		}), []string{"node n2 osImage Debian GNU/Linux 13 (trixie) → Debian GNU/Linux 14 (forky)",
			"node n2 containerRuntimeVersion containerd://2.1.4 → containerd://2.2.0", "node n2 kubeletVersion v1.36.3 → v1.37.0"}},
		{"KubeVirt", both, upgraded(func(c *currentVersions) { c.KubeVirt = "v1.6.0" }), []string{"kubeVirtVersion v1.5.0 → v1.6.0"}},
		{"KubeVirt not watched", vmbenchv1.OnVersionChange{Nodes: true}, upgraded(func(c *currentVersions) { c.KubeVirt = "v1.6.0" }), nil},
		{"nodes not watched", vmbenchv1.OnVersionChange{KubeVirt: true}, upgraded(func(c *currentVersions) {
			c.Nodes["n1"] = triggerNode("n1", "6.8")
		}), nil},
		{"a node that is gone is no change", both, upgraded(func(c *currentVersions) { delete(c.Nodes, "n2") }), nil},
		{"KubeVirt unread is no change", both, upgraded(func(c *currentVersions) { c.KubeVirt = "" }), nil},
		{"a version the kubelet no longer reports is no change", both, upgraded(func(c *currentVersions) {
			n := triggerNode("n1", "")
			c.Nodes["n1"] = n
		}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionChanges(tt.watch, recorded, tt.cur); !slices.Equal(got, tt.want) {
				t.Errorf("versionChanges() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLatestCompleteSkipsFailedRecords(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 20, h, 0, 0, 0, time.UTC) }
	recs := []history.Record{{Suite: "a", Phase: vmbenchv1.SuiteComplete, Scheduled: at(1)},
		{Suite: "b", Phase: vmbenchv1.SuiteComplete, Scheduled: at(3)}, {Suite: "c", Phase: vmbenchv1.SuiteFailed, Scheduled: at(4)},
		{Suite: "d", Phase: vmbenchv1.SuiteComplete, Scheduled: at(2)}}
	if got := latestComplete(recs); got == nil || got.Suite != "b" {
		t.Errorf("latestComplete() = %+v, want b", got)
	}
	if got := latestComplete(recs[2:3]); got != nil {
		t.Errorf("latestComplete() of a failed record only = %+v, want none", got)
	}
}

func TestTriggerTimeIsAfterTheLatestCronStart(t *testing.T) {
	due := time.Date(2026, 11, 20, 10, 7, 30, 0, time.UTC)
	if got := triggerTime(due, nil); !got.Equal(due.Truncate(time.Minute)) {
		t.Errorf("triggerTime() = %v, want the due minute", got)
	}
	cron := metav1.NewTime(time.Date(2026, 11, 20, 10, 7, 0, 0, time.UTC))
	if got := triggerTime(due, &cron); !got.Equal(cron.Add(time.Minute)) {
		t.Errorf("triggerTime() = %v, want the minute after the cron start %v", got, cron)
	}
}

func TestVersionPollHasADefaultAndAMinimum(t *testing.T) {
	if got := versionPoll(vmbenchv1.OnVersionChange{}); got != 10*time.Minute {
		t.Errorf("default poll = %v, want 10m", got)
	}
	if got := versionPoll(vmbenchv1.OnVersionChange{PollInterval: vmbenchv1.DurationOf(5 * time.Second)}); got != time.Minute {
		t.Errorf("poll of 5s = %v, want the minimum 1m", got)
	}
	if got := versionPoll(vmbenchv1.OnVersionChange{PollInterval: vmbenchv1.DurationOf(time.Hour)}); got != time.Hour {
		t.Errorf("poll of 1h = %v", got)
	}
}

// A check happens only once the poll interval passed, the reconcile comes back when it is due, and
// without a complete record nothing is compared.
func TestVersionCheckWaitsForThePollIntervalAndARecord(t *testing.T) {
	ctx := context.Background()
	scheme := scheme.New()
	created := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, withRecord := range []bool{true, false} {
		sched := testSchedule()
		sched.CreationTimestamp = metav1.NewTime(created)
		sched.Spec.Schedule = "0 0 1 1 *"
		sched.Spec.Triggers = &vmbenchv1.ScheduleTriggers{OnVersionChange: &vmbenchv1.OnVersionChange{Nodes: true}}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
		node.Status.NodeInfo = corev1.NodeSystemInfo{KernelVersion: "6.8", OSImage: "Debian GNU/Linux 13 (trixie)",
			ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.36.3"}
		c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(sched, node).WithStatusSubresource(sched).
			WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
		store := &memHistory{}
		if withRecord {
			store.records = []history.Record{{Suite: "nightly-1", Phase: vmbenchv1.SuiteComplete, Scheduled: created.Add(-time.Hour),
				Environments: []vmbenchv1.RunEnvironment{{Platform: vmbenchv1.PlatformContainer,
					Nodes: []vmbenchv1.NodeEnvironment{triggerNode("n1", "6.1")}}}}}
		}
		clk := clocktesting.NewFakePassiveClock(created.Add(4 * time.Minute))
		r := &ScheduleReconciler{Client: c, Scheme: scheme, History: store, Clock: clk}
		req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}
		res, err := r.Reconcile(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != 6*time.Minute {
			t.Errorf("record %v: RequeueAfter = %v, want 6m, when the first check is due", withRecord, res.RequeueAfter)
		}
		var suites vmbenchv1.BenchmarkSuiteList
		if err := c.List(ctx, &suites); err != nil {
			t.Fatal(err)
		}
		if len(suites.Items) != 0 {
			t.Fatalf("record %v: a suite before the poll interval passed", withRecord)
		}
		clk.SetTime(created.Add(10 * time.Minute))
		if res, err = r.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != 10*time.Minute {
			t.Errorf("record %v: RequeueAfter = %v, want 10m, the next check", withRecord, res.RequeueAfter)
		}
		got := &vmbenchv1.BenchmarkSchedule{}
		if err := c.Get(ctx, req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		if err := c.List(ctx, &suites); err != nil {
			t.Fatal(err)
		}
		if got.Status.LastVersionCheck == nil {
			t.Errorf("record %v: no lastVersionCheck after the check", withRecord)
		}
		want := scheduledSuiteName("nightly", created.Add(10*time.Minute))
		switch {
		case withRecord && (len(suites.Items) != 1 || suites.Items[0].Name != want || got.Status.LastTrigger == nil ||
			got.Status.LastTrigger.Suite != want || !slices.Equal(got.Status.LastTrigger.Changes, []string{"node n1 kernelVersion 6.1 → 6.8"})):
			t.Errorf("suites %d, lastTrigger %+v; want suite %s started for the kernel", len(suites.Items), got.Status.LastTrigger, want)
		case !withRecord && (len(suites.Items) != 0 || got.Status.LastTrigger != nil):
			t.Errorf("without a record: %d suites, lastTrigger %+v; want none", len(suites.Items), got.Status.LastTrigger)
		}
	}
}

// triggerFixture is a schedule whose record says node n1 ran kernel 6.1, while n1 now runs 6.8, and
// a reconciler of it at the time the first check is due.
func triggerFixture(t *testing.T, objs ...client.Object) (*ScheduleReconciler, client.Client, *events.FakeRecorder, *clocktesting.FakePassiveClock, ctrl.Request, time.Time) {
	t.Helper()
	scheme := scheme.New()
	created := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	sched := testSchedule()
	sched.CreationTimestamp = metav1.NewTime(created)
	sched.Spec.Schedule = "0 0 1 1 *"
	sched.Spec.Triggers = &vmbenchv1.ScheduleTriggers{OnVersionChange: &vmbenchv1.OnVersionChange{Nodes: true}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	node.Status.NodeInfo = corev1.NodeSystemInfo{KernelVersion: "6.8", OSImage: "Debian GNU/Linux 13 (trixie)",
		ContainerRuntimeVersion: "containerd://2.1.4", KubeletVersion: "v1.36.3"}
	for _, o := range objs {
		o.SetNamespace("bench")
		o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
			Name: sched.Name, UID: sched.UID, Controller: ptr.To(true)}})
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(append(objs, sched, node)...).WithStatusSubresource(sched).
		WithIndex(&vmbenchv1.BenchmarkSuite{}, scheduleOwnerIndex, indexScheduleOwner).Build()
	store := &memHistory{records: []history.Record{{Suite: "nightly-1", Phase: vmbenchv1.SuiteComplete, Scheduled: created.Add(-time.Hour),
		Environments: []vmbenchv1.RunEnvironment{{Platform: vmbenchv1.PlatformContainer, Nodes: []vmbenchv1.NodeEnvironment{triggerNode("n1", "6.1")}}}}}}
	rec := events.NewFakeRecorder(20)
	due := created.Add(defaultVersionPoll)
	clk := clocktesting.NewFakePassiveClock(due)
	r := &ScheduleReconciler{Client: c, Scheme: scheme, Recorder: rec, History: store, Clock: clk}
	return r, c, rec, clk, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(sched)}, due
}

func suiteNamesIn(t *testing.T, c client.Client) []string {
	t.Helper()
	var suites vmbenchv1.BenchmarkSuiteList
	if err := c.List(context.Background(), &suites); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range suites.Items {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	return names
}

// A check done again after its status write was lost finds the suite it started instead of making
// another: the name is the due check's, not the clock's.
func TestVersionTriggerAfterALostStatusWriteStartsNoSecondSuite(t *testing.T) {
	ctx := context.Background()
	r, c, _, clk, req, due := triggerFixture(t)
	// Allow: only the name keeps a second suite from starting.
	sched := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(ctx, req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	sched.Spec.ConcurrencyPolicy = vmbenchv1.ConcurrencyAllow
	if err := c.Update(ctx, sched); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := scheduledSuiteName("nightly", due)
	if got := suiteNamesIn(t, c); !slices.Equal(got, []string{want}) {
		t.Fatalf("suites %q, want %s", got, want)
	}
	// The status write is lost: lastVersionCheck and lastTrigger are as before.
	got := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	got.Status.LastVersionCheck, got.Status.LastTrigger = nil, nil
	if err := c.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(due.Add(3 * time.Minute))
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := suiteNamesIn(t, c); !slices.Equal(got, []string{want}) {
		t.Errorf("suites %q after the check was done again, want only %s", got, want)
	}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.LastTrigger == nil || got.Status.LastTrigger.Suite != want {
		t.Errorf("lastTrigger %+v, want it to name %s again", got.Status.LastTrigger, want)
	}
}

// Under Forbid a change waits while a suite of the schedule is unfinished, and says so.
func TestVersionTriggerWaitsUnderForbid(t *testing.T) {
	ctx := context.Background()
	running := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "nightly-running"}}
	r, c, rec, _, req, _ := triggerFixture(t, running)
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := suiteNamesIn(t, c); !slices.Equal(got, []string{"nightly-running"}) {
		t.Errorf("suites %q, want only the running one under Forbid", got)
	}
	got := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(ctx, req.NamespacedName, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.LastTrigger != nil || got.Status.LastVersionCheck == nil {
		t.Errorf("lastTrigger %+v, lastVersionCheck %v; want no trigger, and the check done", got.Status.LastTrigger, got.Status.LastVersionCheck)
	}
	waits := 0
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.Contains(e, vmbenchv1.ReasonVersionChangeWaits) {
			waits++
			if !strings.Contains(e, "nightly-running") || !strings.Contains(e, "kernelVersion 6.1 → 6.8") {
				t.Errorf("event %q does not name the running suite and the change", e)
			}
		}
	}
	if waits != 1 {
		t.Errorf("%d VersionChangeWaits events, want 1", waits)
	}
}

// KubeVirt's version is read from the KubeVirt CR and compared with the record's VM environment.
func TestVersionTriggerReadsKubeVirtsVersion(t *testing.T) {
	ctx := context.Background()
	kv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
		"metadata": map[string]any{"name": "kubevirt", "namespace": "kubevirt"},
		"status":   map[string]any{"observedKubeVirtVersion": "v1.6.0"}}}
	r, c, _, _, req, due := triggerFixture(t)
	if err := c.Create(ctx, kv); err != nil {
		t.Fatal(err)
	}
	sched := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(ctx, req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	sched.Spec.Triggers.OnVersionChange = &vmbenchv1.OnVersionChange{KubeVirt: true}
	if err := c.Update(ctx, sched); err != nil {
		t.Fatal(err)
	}
	r.History.(*memHistory).records[0].Environments = append(r.History.(*memHistory).records[0].Environments,
		vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformVM, KubeVirtVersion: "v1.5.0", Nodes: []vmbenchv1.NodeEnvironment{triggerNode("n1", "6.1")}})
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	want := scheduledSuiteName("nightly", due)
	if sched.Status.LastTrigger == nil || sched.Status.LastTrigger.Suite != want ||
		!slices.Equal(sched.Status.LastTrigger.Changes, []string{"kubeVirtVersion v1.5.0 → v1.6.0"}) {
		t.Errorf("lastTrigger %+v, want suite %s for KubeVirt's version alone (nodes are not watched)", sched.Status.LastTrigger, want)
	}
}

// The runner image: the reference the next suite would be created with against the record's, per
// platform type; a record or a manager that does not know one is no change.
func TestRunnerImageChanges(t *testing.T) {
	recorded := []vmbenchv1.RunEnvironment{
		{Platform: vmbenchv1.PlatformContainer, RunnerImage: "vmbench/runner@sha256:1", RunnerImageRef: "vmbench/runner:a"},
		{Platform: vmbenchv1.PlatformVM, RunnerImage: "vmbench/vm-disk@sha256:2", RunnerImageRef: "vmbench/vm-disk:a"},
	}
	watch := vmbenchv1.OnVersionChange{RunnerImage: true}
	next := func(runner, disk string) currentVersions {
		return currentVersions{RunnerImages: map[vmbenchv1.PlatformType]string{vmbenchv1.PlatformContainer: runner, vmbenchv1.PlatformVM: disk}}
	}
	tests := []struct {
		name  string
		watch vmbenchv1.OnVersionChange
		envs  []vmbenchv1.RunEnvironment
		cur   currentVersions
		want  []string
	}{
		{"the same references", watch, recorded, next("vmbench/runner:a", "vmbench/vm-disk:a"), nil},
		{"a new runner tag", watch, recorded, next("vmbench/runner:b", "vmbench/vm-disk:a"), []string{"runnerImage: vmbench/runner:a → vmbench/runner:b"}},
		{"a new disk tag", watch, recorded, next("vmbench/runner:a", "vmbench/vm-disk:b"), []string{"runnerImage: vmbench/vm-disk:a → vmbench/vm-disk:b"}},
		{"not watched", vmbenchv1.OnVersionChange{Nodes: true}, recorded, next("vmbench/runner:b", "vmbench/vm-disk:a"), nil},
		{"the next suite has no VM platform", watch, recorded, currentVersions{RunnerImages: map[vmbenchv1.PlatformType]string{
			vmbenchv1.PlatformContainer: "vmbench/runner:a"}}, nil},
		{"a record made before references were recorded", watch, []vmbenchv1.RunEnvironment{{Platform: vmbenchv1.PlatformContainer,
			RunnerImage: "vmbench/runner@sha256:1"}}, next("vmbench/runner:b", "vmbench/vm-disk:b"), nil},
		{"named once though two environments had it", watch, append(recorded, recorded[0]), next("vmbench/runner:b", "vmbench/vm-disk:a"),
			[]string{"runnerImage: vmbench/runner:a → vmbench/runner:b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionChanges(tt.watch, tt.envs, tt.cur); !slices.Equal(got, tt.want) {
				t.Errorf("versionChanges() = %q, want %q", got, tt.want)
			}
		})
	}
}

// The next suite's runner images are the manager's, by the template's platform types; the API
// server's default platforms when the template names none.
func TestNextRunnerImages(t *testing.T) {
	images := platform.Images{Runner: "vmbench/runner:b", VMDisk: "vmbench/vm-disk:b"}
	both := map[vmbenchv1.PlatformType]string{vmbenchv1.PlatformContainer: "vmbench/runner:b", vmbenchv1.PlatformVM: "vmbench/vm-disk:b"}
	if got := nextRunnerImages(vmbenchv1.BenchmarkSuiteSpec{}, images); !maps.Equal(got, both) {
		t.Errorf("default platforms: %v, want %v", got, both)
	}
	spec := vmbenchv1.BenchmarkSuiteSpec{Platforms: []vmbenchv1.Platform{{Name: "host", Type: vmbenchv1.PlatformHost}}}
	if got := nextRunnerImages(spec, images); !maps.Equal(got, map[vmbenchv1.PlatformType]string{vmbenchv1.PlatformHost: "vmbench/runner:b"}) {
		t.Errorf("a host platform: %v, want the runner image", got)
	}
}

// A new runner image tag in the manager starts one suite, named in the event VersionChanged; the
// same change starts no other, and once a suite recorded the new tag nothing changed.
func TestVersionTriggerComparesTheRunnerImage(t *testing.T) {
	ctx := context.Background()
	r, c, rec, clk, req, due := triggerFixture(t)
	r.Images = platform.Images{Runner: "vmbench/runner:b", VMDisk: "vmbench/vm-disk:a"}
	sched := &vmbenchv1.BenchmarkSchedule{}
	if err := c.Get(ctx, req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	// Allow: only the remembered change keeps a second suite from starting.
	sched.Spec.ConcurrencyPolicy = vmbenchv1.ConcurrencyAllow
	sched.Spec.SuiteTemplate.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}}
	// The runner image alone: the node's new kernel in the fixture is not watched.
	sched.Spec.Triggers.OnVersionChange = &vmbenchv1.OnVersionChange{RunnerImage: true}
	if err := c.Update(ctx, sched); err != nil {
		t.Fatal(err)
	}
	store := r.History.(*memHistory)
	store.records[0].Environments[0].RunnerImage = "vmbench/runner@sha256:1"
	store.records[0].Environments[0].RunnerImageRef = "vmbench/runner:a"
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	want := scheduledSuiteName("nightly", due)
	change := "runnerImage: vmbench/runner:a → vmbench/runner:b"
	if err := c.Get(ctx, req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	if got := suiteNamesIn(t, c); !slices.Equal(got, []string{want}) {
		t.Fatalf("suites %q, want %s", got, want)
	}
	if lt := sched.Status.LastTrigger; lt == nil || lt.Suite != want || !slices.Equal(lt.Changes, []string{change}) {
		t.Errorf("lastTrigger %+v, want suite %s for %q", lt, want, change)
	}
	changed := 0
	for len(rec.Events) > 0 {
		if e := <-rec.Events; strings.Contains(e, vmbenchv1.ReasonVersionChanged) {
			changed++
			if !strings.Contains(e, want) || !strings.Contains(e, change) {
				t.Errorf("event %q does not name the suite and the change", e)
			}
		}
	}
	if changed != 1 {
		t.Errorf("%d VersionChanged events, want 1", changed)
	}

	// The next check while that suite runs: the same change starts no other.
	clk.SetTime(sched.Status.LastVersionCheck.Add(defaultVersionPoll + time.Second))
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := suiteNamesIn(t, c); !slices.Equal(got, []string{want}) {
		t.Fatalf("suites %q after the next check, want only %s", got, want)
	}

	// The triggered suite completed with the new tag: no change is left, whatever the old trigger.
	store.records = append(store.records, history.Record{Suite: want, Phase: vmbenchv1.SuiteComplete, Scheduled: due,
		Environments: []vmbenchv1.RunEnvironment{{Platform: vmbenchv1.PlatformContainer, RunnerImage: "vmbench/runner@sha256:1",
			RunnerImageRef: "vmbench/runner:b"}}})
	if err := c.Get(ctx, req.NamespacedName, sched); err != nil {
		t.Fatal(err)
	}
	sched.Status.LastTrigger = nil
	if err := c.Status().Update(ctx, sched); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(sched.Status.LastVersionCheck.Add(defaultVersionPoll + time.Second))
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := suiteNamesIn(t, c); !slices.Equal(got, []string{want}) {
		t.Errorf("suites %q once the new tag was recorded, want only %s", got, want)
	}
}
