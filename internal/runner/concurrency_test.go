package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// barrier lets each of n callers of a group through only once all n have arrived. A runner that
// ran them one after the other would leave the first caller waiting alone; it gives up after
// patience so that such a runner fails the test instead of hanging it.
type barrier struct {
	n        int
	patience time.Duration

	mu     sync.Mutex
	groups map[string]*barrierGroup
}

type barrierGroup struct {
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier {
	return &barrier{n: n, patience: 10 * time.Second, groups: map[string]*barrierGroup{}}
}

// wait returns an error when the other callers of group did not arrive while this one waited.
func (b *barrier) wait(group string) error {
	b.mu.Lock()
	g := b.groups[group]
	if g == nil {
		g = &barrierGroup{all: make(chan struct{})}
		b.groups[group] = g
	}
	g.arrived++
	if g.arrived == b.n {
		close(g.all)
	}
	b.mu.Unlock()
	select {
	case <-g.all:
		return nil
	case <-time.After(b.patience):
		return fmt.Errorf("%s ran without the other nodes", group)
	}
}

// eventLog records what the fake executor was asked to do, in the order it happened.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) list() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.events...)
}

func allNodesMemory() vmbenchv1.Benchmark {
	return vmbenchv1.Benchmark{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory, Concurrency: vmbenchv1.ConcurrencyAllNodes,
		Timeout: dur(time.Minute), SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{BlockSizes: []string{"1K", "1M"}}}
}

func blockSize(argv []string) string {
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, "--memory-block-size="); ok {
			return v
		}
	}
	return "?"
}

// TestAllNodesRunsEveryNodeAtOnce checks that with concurrency AllNodes each block size of
// sysbench-memory runs on all three nodes at the same moment: every execution waits at a barrier
// until the other two have started. The noise of each node is sampled before the first of them
// starts and after the last ends, and every result is marked as concurrent.
func TestAllNodesRunsEveryNodeAtOnce(t *testing.T) {
	r, exec, msgs := testRunner(t)
	r.SampleNoise = true
	plan := testPlan(t, allNodesMemory())
	plan.PlatformType = vmbenchv1.PlatformVM
	gate, log := newBarrier(len(plan.Nodes)), &eventLog{}
	var mu sync.Mutex
	samples := map[string]int{}
	exec.respond = func(node string, argv []string) (reply, bool) {
		switch argv[0] {
		case "sh":
			mu.Lock()
			when := "before"
			if samples[node]%2 == 1 {
				when = "after"
			}
			samples[node]++
			mu.Unlock()
			log.add("sample")
			return reply{stdout: fixture(t, "noise/proc-stat-"+when+".txt")}, true
		case "sysbench":
			bs := blockSize(argv)
			log.add("start " + bs)
			err := gate.wait(bs)
			log.add("end " + bs)
			if err != nil {
				return reply{err: err}, true
			}
		}
		return reply{}, false
	}
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}

	assertSummary(t, summarize(*msgs), []string{
		"started",
		"result mem master ok", "result mem node01 ok", "result mem node02 ok",
		"result mem master ok", "result mem node01 ok", "result mem node02 ok",
		"done",
	})
	for _, m := range *msgs {
		if m.Kind != runplan.KindResult {
			continue
		}
		if !m.Concurrent {
			t.Errorf("%s %s: not marked as concurrent", m.Node, m.Variant)
		}
		if m.Noise == nil || m.Noise.Node != m.Node {
			t.Errorf("%s %s: noise %+v, want one sampled on the node", m.Node, m.Variant, m.Noise)
		}
	}

	// Every node is sampled before any execution of a block size starts and after all of them ended.
	var want []string
	for _, bs := range []string{"1K", "1M"} {
		want = append(want, "sample", "sample", "sample")
		want = append(want, "start "+bs, "start "+bs, "start "+bs)
		want = append(want, "end "+bs, "end "+bs, "end "+bs)
		want = append(want, "sample", "sample", "sample")
	}
	if got := log.list(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("events:\n got %v\nwant %v", got, want)
	}
}

// TestAllNodesFailureStaysOnItsNode checks that a tool failing or hanging on one node fails that
// node's execution only, under the benchmark's timeout per node, while the other nodes ran with it.
func TestAllNodesFailureStaysOnItsNode(t *testing.T) {
	r, exec, msgs := testRunner(t)
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Concurrency: vmbenchv1.ConcurrencyAllNodes,
		Timeout: dur(50 * time.Millisecond), Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageLocal}})
	// node02 hangs until its timeout; its start still lets the others through the barrier.
	gate := newBarrier(len(plan.Nodes))
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] != "fio" {
			return reply{}, false
		}
		if node == "node02" {
			go func() { _ = gate.wait("fio") }()
			return reply{block: true}, true
		}
		if err := gate.wait("fio"); err != nil {
			return reply{err: err}, true
		}
		if node == "node01" {
			return reply{stderr: "fio: no space left", err: errors.New("exit status 1")}, true
		}
		return reply{}, false
	}
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	assertSummary(t, summarize(*msgs), []string{
		"started",
		"result fio master ok",
		"result fio node01 error=fio failed (exit status 1): fio: no space left",
		"result fio node02 error=timed out after 50ms",
		"done",
	})
	// Each node's file is removed, the hung one's too.
	cmds := strings.Join(exec.commands(), "\n")
	for _, n := range plan.Nodes {
		if rm := n.Name + ": rm -f " + plan.LocalDir + "/fio.dat"; !strings.Contains(cmds, rm) {
			t.Errorf("no %q in\n%s", rm, cmds)
		}
	}
}

// TestOneNodeAtATimeNeverOverlaps checks the default: no two executions of a benchmark run at the
// same moment, with the field set explicitly and left out.
func TestOneNodeAtATimeNeverOverlaps(t *testing.T) {
	for _, c := range []vmbenchv1.Concurrency{"", vmbenchv1.ConcurrencyOneNodeAtATime} {
		t.Run(string(c)+"_", func(t *testing.T) {
			r, exec, msgs := testRunner(t)
			b := allNodesMemory()
			b.Concurrency = c
			var mu sync.Mutex
			running, overlaps := 0, 0
			exec.respond = func(node string, argv []string) (reply, bool) {
				if argv[0] == "sysbench" {
					mu.Lock()
					running++
					if running > 1 {
						overlaps++
					}
					mu.Unlock()
					defer func() { mu.Lock(); running--; mu.Unlock() }()
				}
				return reply{}, false
			}
			if err := r.Run(context.Background(), testPlan(t, b)); err != nil {
				t.Fatal(err)
			}
			if overlaps != 0 {
				t.Errorf("%d executions overlapped", overlaps)
			}
			for _, m := range *msgs {
				if m.Kind == runplan.KindResult && (m.Concurrent || m.Error != "") {
					t.Errorf("%s %s: concurrent=%v error %q", m.Node, m.Variant, m.Concurrent, m.Error)
				}
			}
		})
	}
}

func TestBatches(t *testing.T) {
	execs := []execution{{label: "master", prefix: "bs1K_"}, {label: "node01", prefix: "bs1K_"}, {label: "master", prefix: "bs1M_"}, {label: "node01", prefix: "bs1M_"}}
	shape := func(bs [][]execution) string {
		var parts []string
		for _, b := range bs {
			var labels []string
			for _, e := range b {
				labels = append(labels, e.prefix+e.label)
			}
			parts = append(parts, strings.Join(labels, "+"))
		}
		return strings.Join(parts, " ")
	}
	for _, tc := range []struct {
		name string
		b    vmbenchv1.Benchmark
		want string
	}{
		{"one node at a time", vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory},
			"bs1K_master bs1K_node01 bs1M_master bs1M_node01"},
		{"all nodes, one batch per variant", vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkSysbenchMemory, Concurrency: vmbenchv1.ConcurrencyAllNodes},
			"bs1K_master+bs1K_node01 bs1M_master+bs1M_node01"},
		// Refused by the CRD, but a suite stored before the rule still runs its pairs one by one.
		{"all nodes on a pair tool", vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkPing, Concurrency: vmbenchv1.ConcurrencyAllNodes},
			"bs1K_master bs1K_node01 bs1M_master bs1M_node01"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := shape(batches(tc.b, execs)); got != tc.want {
				t.Errorf("batches() = %s, want %s", got, tc.want)
			}
		})
	}
}
