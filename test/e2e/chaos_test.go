//go:build e2e && chaos

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestManagerKilledAtRandomLosesNothingAndRunsNothingTwice deletes the manager's pod every 8-20 s
// while a container suite of four short runs goes on. Every kill lands wherever the controller
// happens to be: admitting the suite, starting a run, collecting it, writing status, deleting
// children. In the end every metric has exactly one sample per repetition and node: none lost,
// none twice.
//
// make test-e2e runs it after the rest of the e2e, on the same cluster (the kills would disturb the
// other tests), in about two minutes; make test-chaos runs it alone. The suite is kept small for CI
// time: two nodes, sysbench-cpu for 3 s and three pings a run, about 25 s a run without kills.
func TestManagerKilledAtRandomLosesNothingAndRunsNothingTwice(t *testing.T) {
	e := newEnv(t)
	const reps = 4
	suite := containerOnly(e.sample("suite-quick.yaml", "chaos"))
	suite.Spec.Repetitions = reps
	suite.Spec.Cluster.Nodes = 2
	suite.Spec.Benchmarks = []vmbenchv1.Benchmark{
		{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: vmbenchv1.DurationOf(3 * time.Second)}},
		{Name: "ping", Type: vmbenchv1.BenchmarkPing, Ping: &vmbenchv1.PingParams{Count: 3, Pairs: []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode}}},
	}
	e.g.Expect(k8s.Create(e.ctx, suite)).To(Succeed())

	ctx, stop := context.WithCancel(e.ctx)
	kills := make(chan int)
	go func() {
		n := 0
		defer func() { kills <- n }()
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(8+rand.IntN(13)) * time.Second):
			}
			pods := &corev1.PodList{}
			if err := k8s.List(ctx, pods, client.InNamespace("vmbench-system"), managerPods); err != nil {
				continue
			}
			for i := range pods.Items {
				if pods.Items[i].DeletionTimestamp == nil && k8s.Delete(ctx, &pods.Items[i]) == nil {
					n++
					e.t.Logf("%s killed manager pod %s (%d)", time.Now().Format(time.TimeOnly), pods.Items[i].Name, n)
				}
			}
		}
	}()
	s := e.waitEnded("chaos", 10*time.Minute)
	stop()
	killed := <-kills
	e.keep(s)
	e.t.Logf("manager killed %d times during the suite", killed)
	e.g.Expect(killed).To(BeNumerically(">", 0))
	e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
		"Failed: %v", meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))

	want := map[string]int{"cpu": reps * int(suite.Spec.Cluster.NodeCount()), "ping": reps * int(suite.Spec.Cluster.NodeCount()-1)}
	for _, r := range s.Status.Results {
		for _, m := range r.Metrics {
			e.g.Expect(int(m.N)).To(Equal(want[r.Benchmark]), "%s %s: one sample per repetition and node", r.Benchmark, m.Name)
			seen := map[string]bool{}
			for _, smp := range m.Samples {
				key := fmt.Sprintf("%s in repetition %d", smp.Node, smp.Repetition)
				e.g.Expect(seen[key]).To(BeFalse(), "%s %s: %s twice", r.Benchmark, m.Name, key)
				seen[key] = true
			}
		}
	}
	e.g.Expect(s.Status.Results).To(HaveLen(2))
}
