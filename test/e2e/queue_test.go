//go:build e2e

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestSuitesAppliedAtOnceNeverOverlap applies two small container suites at once: with the manager's
// default --max-active-runs=1 the second waits in line, and its run starts only after the first one's
// results were collected, as the runs' times in status show.
func TestSuitesAppliedAtOnceNeverOverlap(t *testing.T) {
	e := newEnv(t)
	small := func(name string) *vmbenchv1.BenchmarkSuite {
		s := containerOnly(e.sample("suite-quick.yaml", name))
		s.Spec.Repetitions = 1
		s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU,
			SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: vmbenchv1.DurationOf(5 * time.Second)}}}
		return s
	}
	// Created in this order, and "one" sorts before "two" should both have the same second.
	e.g.Expect(k8s.Create(e.ctx, small("one"))).To(Succeed())
	e.g.Expect(k8s.Create(e.ctx, small("two"))).To(Succeed())

	e.g.Eventually(func(g Gomega) {
		s := &vmbenchv1.BenchmarkSuite{}
		g.Expect(k8s.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "two"}, s)).To(Succeed())
		c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionQueued)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionTrue), c.Message)
		g.Expect(c.Message).To(ContainSubstring("1st in line"))
		g.Expect(c.Message).To(ContainSubstring("1 of 1 slots of the cluster are taken (by this namespace: one)"))
		g.Expect(s.Status.QueuePosition).To(Equal(int32(1)))
	}, 2*time.Minute, time.Second).Should(Succeed(), "two waits behind one")

	one := e.waitEnded("one", 10*time.Minute)
	two := e.waitEnded("two", 10*time.Minute)
	for _, s := range []*vmbenchv1.BenchmarkSuite{one, two} {
		e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
			"%s failed: %v", s.Name, meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))
		e.g.Expect(s.Status.Runs).To(HaveLen(1))
		e.g.Expect(s.Status.QueuePosition).To(BeZero())
	}
	first, second := one.Status.Runs[0], two.Status.Runs[0]
	e.t.Logf("run %s %s - %s; run %s %s - %s", first.Name, first.StartTime, first.CompletionTime, second.Name, second.StartTime, second.CompletionTime)
	e.g.Expect(second.StartTime.Time).NotTo(BeTemporally("<", first.CompletionTime.Time),
		"run %s started at %s, before run %s ended at %s", second.Name, second.StartTime, first.Name, first.CompletionTime)
	e.g.Expect(two.Status.StartTime.Time).NotTo(BeTemporally("<", first.CompletionTime.Time), "two was admitted while one ran")

	// Each run recorded what else its nodes did while sysbench ran on them: other processes' CPU and
	// steal, per node, and every sample its own figure.
	for _, s := range []*vmbenchv1.BenchmarkSuite{one, two} {
		run := s.Status.Runs[0]
		e.g.Expect(run.Noise).To(HaveLen(int(s.Spec.Cluster.NodeCount())), "noise of %s", run.Name)
		for _, n := range run.Noise {
			e.g.Expect(n.Samples).To(BeNumerically(">", 0), "%s %s", run.Name, n.Node)
			e.g.Expect(n.OthersPercent).NotTo(BeNil(), "%s %s", run.Name, n.Node)
			e.g.Expect(n.MaxPercent).To(BeNumerically("<=", 100), "%s %s", run.Name, n.Node)
		}
		for _, r := range s.Status.Results {
			for _, m := range r.Metrics {
				for _, sample := range m.Samples {
					e.g.Expect(sample.Noise).NotTo(BeNil(), "%s %s %s on %s has no noise figure", s.Name, r.Benchmark, m.Name, sample.Node)
				}
			}
		}
	}
}
