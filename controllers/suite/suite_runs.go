package suite

import (
	"fmt"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// plannedRun is one platform running every benchmark once.
type plannedRun struct {
	Name       string
	Platform   vmbenchv1.Platform
	Repetition int32
}

// runName is the deterministic name of a run and of its children, so that a retried reconcile never
// creates a second copy.
func runName(suite, platform string, repetition int32) string {
	return fmt.Sprintf("%s-%s-%d", suite, platform, repetition)
}

// plannedRuns lists every run in execution order. Platforms alternate within each repetition and the
// order flips every repetition (A B, B A, A B, ...), so that slow drift of the host, such as a warming
// page cache or a neighbour starting, weighs on every platform alike. With spec.precision the
// repetitions grow one at a time (precision_policy.go), keeping that order.
func plannedRuns(suite *vmbenchv1.BenchmarkSuite) []plannedRun {
	platforms := suite.Spec.Platforms
	reps := plannedRepetitions(suite)
	runs := make([]plannedRun, 0, int(reps)*len(platforms))
	for rep := int32(1); rep <= reps; rep++ {
		for i := range platforms {
			p := platforms[i]
			if rep%2 == 0 {
				p = platforms[len(platforms)-1-i]
			}
			runs = append(runs, plannedRun{Name: runName(suite.Name, p.Name, rep), Platform: p, Repetition: rep})
		}
	}
	return runs
}

// DefaultedBenchmarks are the suite's benchmarks with every default applied. The default pairs of a
// left-out iperf3, ping, netperf or netcat block include node-node only where there are two workers to pair; an
// explicit node-node on a smaller cluster is refused by the CRD.
func DefaultedBenchmarks(suite *vmbenchv1.BenchmarkSuite) []vmbenchv1.Benchmark {
	out := make([]vmbenchv1.Benchmark, len(suite.Spec.Benchmarks))
	small := suite.Spec.Cluster.NodeCount() < 3
	for i, b := range suite.Spec.Benchmarks {
		out[i] = b.WithDefaults()
		if small && b.Iperf3 == nil && out[i].Iperf3 != nil {
			out[i].Iperf3.Pairs = withoutNodeToNode(out[i].Iperf3.Pairs)
		}
		if small && b.Ping == nil && out[i].Ping != nil {
			out[i].Ping.Pairs = withoutNodeToNode(out[i].Ping.Pairs)
		}
		if small && b.Netperf == nil && out[i].Netperf != nil {
			out[i].Netperf.Pairs = withoutNodeToNode(out[i].Netperf.Pairs)
		}
		if small && b.Netcat == nil && out[i].Netcat != nil {
			out[i].Netcat.Pairs = withoutNodeToNode(out[i].Netcat.Pairs)
		}
	}
	return out
}

func withoutNodeToNode(pairs []vmbenchv1.NodePair) []vmbenchv1.NodePair {
	var out []vmbenchv1.NodePair
	for _, p := range pairs {
		if p != vmbenchv1.PairNodeToNode {
			out = append(out, p)
		}
	}
	return out
}

// executions is how many times one run executes a benchmark one after the other: once per node,
// block size, target, pair or netperf test; with concurrency AllNodes the nodes run at the same
// moment and count once. It bounds the run's deadline, so it errs on the high side.
func executions(b vmbenchv1.Benchmark, nodes int32) int64 {
	n := int64(nodes)
	if b.Concurrency == vmbenchv1.ConcurrencyAllNodes && b.Type.RunsPerNode() {
		n = 1
	}
	switch b.Type {
	case vmbenchv1.BenchmarkHPCC, vmbenchv1.BenchmarkMigration:
		return 1
	case vmbenchv1.BenchmarkSysbenchMemory:
		return n * int64(len(b.SysbenchMemory.BlockSizes))
	case vmbenchv1.BenchmarkIozone:
		return n * int64(len(b.Iozone.Targets))
	case vmbenchv1.BenchmarkIperf3:
		return n * int64(len(b.Iperf3.Pairs))
	case vmbenchv1.BenchmarkPing:
		return n * int64(len(b.Ping.Pairs))
	case vmbenchv1.BenchmarkNetperf:
		return n * int64(len(b.Netperf.Pairs)) * int64(len(b.Netperf.Tests))
	case vmbenchv1.BenchmarkNetcat:
		return n * int64(len(b.Netcat.Pairs))
	}
	return n
}

// runDeadline bounds a run: the time to start its cluster plus every execution's timeout. The runner
// enforces each timeout itself; this is the backstop for a runner that hangs or never starts.
func runDeadline(startup time.Duration, benchmarks []vmbenchv1.Benchmark, nodes int32) time.Duration {
	d := startup
	for _, b := range benchmarks {
		d += time.Duration(executions(b, nodes)) * b.Timeout.Duration()
	}
	return d
}

// validateSpec finds what the CRD's rules cannot see. The message says what to change.
func validateSpec(suite *vmbenchv1.BenchmarkSuite, benchmarks []vmbenchv1.Benchmark) error {
	if err := vmbenchv1.FirstInvalidValue(suite); err != nil {
		return err
	}
	if err := precisionProblem(suite); err != nil {
		return err
	}
	shape := suite.Spec.Cluster
	for _, b := range benchmarks {
		if b.HPCC == nil {
			continue
		}
		nodes := b.HPCC.NodesTakingPart(shape.NodeCount())
		if nodes < 1 {
			return fmt.Errorf("benchmark %s: hpcc.nodes Workers runs HPCC on every node but the master, and the cluster has %d node(s): set spec.cluster.nodes to 2 or more, or hpcc.nodes to All",
				b.Name, shape.NodeCount())
		}
	}
	for _, p := range suite.Spec.Platforms {
		if p.Type == vmbenchv1.PlatformVM && !shape.Guaranteed() && shape.MemoryRequest != nil && shape.MemoryRequest.Cmp(shape.MemoryLimit()) < 0 {
			return fmt.Errorf("platform %s: a VM's guest memory is committed when it boots, so cluster.memoryRequest below cluster.memory cannot hold; remove cluster.memoryRequest", p.Name)
		}
	}
	return nil
}

// syncRuns makes status list every planned run in order, keeping what is known of each.
func syncRuns(st *vmbenchv1.BenchmarkSuiteStatus, planned []plannedRun) {
	known := make(map[string]vmbenchv1.RunStatus, len(st.Runs))
	for _, r := range st.Runs {
		known[r.Name] = r
	}
	runs := make([]vmbenchv1.RunStatus, 0, len(planned))
	for _, p := range planned {
		r, ok := known[p.Name]
		if !ok {
			r = vmbenchv1.RunStatus{Name: p.Name, Platform: p.Platform.Name, Repetition: p.Repetition, Phase: vmbenchv1.RunPending}
		}
		runs = append(runs, r)
	}
	st.Runs = runs
}

func plannedByName(suite *vmbenchv1.BenchmarkSuite, name string) plannedRun {
	for _, p := range plannedRuns(suite) {
		if p.Name == name {
			return p
		}
	}
	return plannedRun{}
}
