//go:build e2e

package e2e

import (
	"bytes"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/cli"
	"github.com/vmbench/vmbench/internal/history"
)

// TestScheduleKeepsAHistoryOfItsSuites runs a schedule every minute of a small container suite
// until three suites finished: each left a record, with the suite's parameters hash and the
// environment its run ran on, in the schedule's history ConfigMaps; finished suites beyond the
// history limit are deleted while their records stay; and `vmbench history` reads the records back
// from the cluster.
func TestScheduleKeepsAHistoryOfItsSuites(t *testing.T) {
	e := newEnv(t)
	suite := containerOnly(e.sample("suite-quick.yaml", "unused"))
	// A second container platform and 2 repetitions give the records a ratio with its interval and
	// noise, which the schedule board shows (checkScheduleBoards).
	suite.Spec.Platforms = append(suite.Spec.Platforms, vmbenchv1.Platform{Name: "container2", Type: vmbenchv1.PlatformContainer})
	suite.Spec.Repetitions = 2
	suite.Spec.Cluster.Nodes = 1
	suite.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU,
		SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: vmbenchv1.DurationOf(3 * time.Second)}}}
	schedule := &vmbenchv1.BenchmarkSchedule{
		ObjectMeta: metav1.ObjectMeta{Name: "track", Namespace: e.ns},
		Spec: vmbenchv1.BenchmarkScheduleSpec{Schedule: "* * * * *", ConcurrencyPolicy: vmbenchv1.ConcurrencyForbid,
			SuccessfulHistoryLimit: ptr.To[int32](2), SuiteTemplate: vmbenchv1.SuiteTemplate{Spec: suite.Spec}},
	}
	e.g.Expect(k8s.Create(e.ctx, schedule)).To(Succeed())
	// An every-minute schedule runs only under a manager whose --min-schedule-interval is 1m.
	e.g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(e.ctx, client.ObjectKeyFromObject(schedule), schedule)).To(Succeed())
		valid := meta.FindStatusCondition(schedule.Status.Conditions, vmbenchv1.ConditionValid)
		g.Expect(valid).NotTo(BeNil())
		g.Expect(valid.Status).To(Equal(metav1.ConditionTrue),
			"%s: install the chart with minScheduleInterval=1m, as hack/install.sh does", valid.Message)
	}, time.Minute, 2*time.Second).Should(Succeed())
	// After the first record, the manager's runner image moves to a second tag of the same image,
	// as an upgrade that retags an image does (runner_tag_test.go).
	e.g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(e.ctx, client.ObjectKeyFromObject(schedule), schedule)).To(Succeed())
		g.Expect(schedule.Status.Records).To(BeNumerically(">=", 1))
	}, 5*time.Minute, 5*time.Second).Should(Succeed(), "the schedule's first suite finished and was recorded")
	change := e.changeRunnerTag()

	e.g.Eventually(func(g Gomega) {
		g.Expect(k8s.Get(e.ctx, client.ObjectKeyFromObject(schedule), schedule)).To(Succeed())
		e.t.Logf("%s schedule track: %d records, last start %v, active %v", time.Now().Format(time.TimeOnly),
			schedule.Status.Records, schedule.Status.LastScheduleTime, schedule.Status.Active)
		g.Expect(schedule.Status.Records).To(BeNumerically(">=", 3))
	}, 10*time.Minute, 10*time.Second).Should(Succeed(), "three suites of the schedule finished and were recorded")
	e.g.Eventually(func(g Gomega) {
		cms := &corev1.ConfigMapList{}
		g.Expect(k8s.List(e.ctx, cms, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelHistoryOf: "track"})).To(Succeed())
		records, err := history.FromConfigMaps("track", schedule.UID, cms.Items)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(records).To(ContainElement(HaveField("Scheduled", BeTemporally(">", change.done))))
	}, 5*time.Minute, 10*time.Second).Should(Succeed(), "a suite scheduled after the runner image's new tag finished and was recorded")
	// No more starts: what follows reads a history that no longer grows.
	e.g.Expect(k8s.Get(e.ctx, client.ObjectKeyFromObject(schedule), schedule)).To(Succeed())
	schedule.Spec.Suspend = ptr.To(true)
	e.g.Expect(k8s.Update(e.ctx, schedule)).To(Succeed())

	cms := &corev1.ConfigMapList{}
	e.g.Expect(k8s.List(e.ctx, cms, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelHistoryOf: "track"})).To(Succeed())
	records, err := history.FromConfigMaps("track", schedule.UID, cms.Items)
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(len(records)).To(BeNumerically(">=", 3))
	for _, r := range records {
		e.g.Expect(r.Phase).To(Equal(vmbenchv1.SuiteComplete), "suite %s", r.Suite)
		e.g.Expect(r.ParametersHash).To(Equal(records[0].ParametersHash), "suite %s: one suite spec, one hash", r.Suite)
		e.g.Expect(r.ParametersHash).NotTo(BeEmpty(), "suite %s", r.Suite)
		e.g.Expect(r.Environments).NotTo(BeEmpty(), "suite %s records what it ran on", r.Suite)
		e.g.Expect(r.Environments[0].Nodes).NotTo(BeEmpty(), "suite %s", r.Suite)
		e.g.Expect(r.Metrics).NotTo(BeEmpty(), "suite %s", r.Suite)
	}
	e.expectRunnerTagChange(records, change)

	// Finished suites beyond the history limit go; their records stay.
	e.g.Eventually(func(g Gomega) {
		suites := &vmbenchv1.BenchmarkSuiteList{}
		g.Expect(k8s.List(e.ctx, suites, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelSchedule: "track"})).To(Succeed())
		g.Expect(len(suites.Items)).To(BeNumerically("<=", 2), "suites kept: %d", len(suites.Items))
	}, 2*time.Minute, 5*time.Second).Should(Succeed())

	var stdout, stderr bytes.Buffer
	code := cli.History(e.ctx, "vmbench", []string{"track", "-n", e.ns, "--kubeconfig", kubeconfigPath}, nil, &stdout, &stderr)
	e.t.Logf("---- vmbench history track ----\n%s", stdout.String())
	e.g.Expect(code).To(Equal(cli.ExitOK), "vmbench history: %s", stderr.String())
	e.g.Expect(stdout.String()).To(MatchRegexp(`(?m)^schedule \S*track: %d records`, len(records)))
	e.g.Expect(stdout.String()).To(MatchRegexp(`(?m)^cpu\s+events_per_second\s+container\s+%d\s`, len(records)))
	e.g.Expect(stdout.String()).To(MatchRegexp(`(?m)^  \S+: %s: %s → %s$`, regexp.QuoteMeta(historyRunnerImageRef),
		regexp.QuoteMeta(change.from), regexp.QuoteMeta(change.to)), "the runner image's new tag among the environment changes")

	e.checkScheduleBoards("track", change.done)
}
