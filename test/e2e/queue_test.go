//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// TestSuitesAppliedAtOnceNeverOverlap applies two small container suites at once: with the manager's
// default --max-active-runs=1 the second waits in line, and its run starts only after the first one's
// results were collected, as the runs' times in status show, and after the first one's pods are gone,
// in the order in which the API server created and deleted them (status times have one-second
// resolution, which would let a shorter overlap pass).
func TestSuitesAppliedAtOnceNeverOverlap(t *testing.T) {
	e := newEnv(t)
	small := func(name string) *vmbenchv1.BenchmarkSuite {
		s := containerOnly(e.sample("suite-quick.yaml", name))
		s.Spec.Repetitions = 1
		s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU,
			SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: vmbenchv1.DurationOf(5 * time.Second)}}}
		return s
	}
	pods := e.watchSuitePods()
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
	events := pods()
	live := map[string]map[string]bool{"one": {}, "two": {}}
	created := map[string]int{}
	for _, ev := range events {
		e.g.Expect(live).To(HaveKey(ev.suite), "a pod of an unexpected suite: %+v", ev)
		if ev.deleted {
			delete(live[ev.suite], ev.pod)
			continue
		}
		other := map[string]string{"one": "two", "two": "one"}[ev.suite]
		e.g.Expect(live[other]).To(BeEmpty(), "pod %s of suite %s was created while the pods of suite %s were there; pod events: %+v",
			ev.pod, ev.suite, other, events)
		live[ev.suite][ev.pod] = true
		created[ev.suite]++
	}
	e.g.Expect(created).To(And(HaveKey("one"), HaveKey("two")), "pods created per suite; pod events: %+v", events)

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

// podEvent is a pod of a suite created or deleted.
type podEvent struct {
	suite, pod string
	deleted    bool
}

// watchSuitePods records every pod labelled with a suite that is created or deleted in the
// namespace from now on, in the order in which the API server made the changes (one watch, resumed
// where it broke off). The function it returns stops the watch and returns the events; a watch that
// failed fails the test.
func (e *env) watchSuitePods() func() []podEvent {
	list, err := clientset.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: vmbenchv1.LabelSuite})
	e.g.Expect(err).NotTo(HaveOccurred())
	e.g.Expect(list.Items).To(BeEmpty(), "pods of suites before any suite was created")
	ctx, cancel := context.WithCancel(e.ctx)
	w, err := watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = vmbenchv1.LabelSuite
			return clientset.CoreV1().Pods(e.ns).Watch(ctx, o)
		},
	})
	e.g.Expect(err).NotTo(HaveOccurred())
	var (
		mu       sync.Mutex
		events   []podEvent
		failures []string
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			mu.Lock()
			pod, ok := ev.Object.(*corev1.Pod)
			switch {
			case ev.Type == watch.Error || !ok:
				failures = append(failures, fmt.Sprintf("%s %T %+v", ev.Type, ev.Object, ev.Object))
			case ev.Type == watch.Added:
				events = append(events, podEvent{suite: pod.Labels[vmbenchv1.LabelSuite], pod: pod.Name})
			case ev.Type == watch.Deleted:
				events = append(events, podEvent{suite: pod.Labels[vmbenchv1.LabelSuite], pod: pod.Name, deleted: true})
			}
			mu.Unlock()
		}
	}()
	return func() []podEvent {
		cancel()
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		e.g.Expect(failures).To(BeEmpty(), "the watch of the suites' pods broke: its events are not complete")
		return events
	}
}
