package v1alpha1

import "fmt"

// crossFieldProblem applies in Go the cross-field rules of the ValidatingAdmissionPolicy
// vmbench-suite-spec that no other check of FirstInvalidValue or the manager's validateSpec covers:
// the baseline among the platforms, the nodes the network benchmarks need, and the HPL grids against
// the number of MPI ranks. Where that policy is not installed, a suite that breaks one is refused here
// (condition InvalidSpec) instead of at its create; the message is the policy's, after the field.
func crossFieldProblem(spec *BenchmarkSuiteSpec) error {
	baseline := spec.Baseline
	if baseline == "" {
		baseline = "container"
	}
	platforms := spec.Platforms
	if len(platforms) == 0 {
		platforms = []Platform{{Name: "container", Type: PlatformContainer}, {Name: "vm", Type: PlatformVM}}
	}
	named := false
	for _, p := range platforms {
		named = named || p.Name == baseline
	}
	if !named {
		return fmt.Errorf("spec.baseline: %q: spec.baseline must name one of spec.platforms", baseline)
	}
	nodes := spec.Cluster.NodeCount()
	for i, b := range spec.Benchmarks {
		path := fmt.Sprintf("spec.benchmarks[%d]", i)
		switch b.Type {
		case BenchmarkIperf3, BenchmarkPing, BenchmarkNetperf, BenchmarkNetcat:
			if nodes < 2 {
				return fmt.Errorf("%s.type: %s on %d node(s): iperf3, ping, netperf and netcat measure between nodes: set spec.cluster.nodes to 2 or more, or remove those benchmarks",
					path, b.Type, nodes)
			}
		}
		var pairs []NodePair
		switch {
		case b.Iperf3 != nil:
			pairs = b.Iperf3.Pairs
		case b.Ping != nil:
			pairs = b.Ping.Pairs
		case b.Netperf != nil:
			pairs = b.Netperf.Pairs
		case b.Netcat != nil:
			pairs = b.Netcat.Pairs
		}
		for _, p := range pairs {
			if p == PairNodeToNode && nodes < 3 {
				return fmt.Errorf("%s: the node-node pair needs two workers: set spec.cluster.nodes to 3 or more, or list only master-node and node-master in pairs", path)
			}
		}
		if b.HPCC == nil {
			continue
		}
		ranks := spec.Cluster.CPULimit()
		if b.HPCC.RanksPerNode != nil {
			ranks = *b.HPCC.RanksPerNode
		}
		ranks *= b.HPCC.NodesTakingPart(nodes)
		if b.HPCC.P != nil && b.HPCC.Q != nil && *b.HPCC.P**b.HPCC.Q != ranks {
			return fmt.Errorf("%s.hpcc: p %d * q %d is not %d: hpcc p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers): change hpcc.p and hpcc.q, or leave both out for the squarest grid",
				path, *b.HPCC.P, *b.HPCC.Q, ranks)
		}
		for j, g := range b.HPCC.Grids {
			if g.P*g.Q != ranks {
				return fmt.Errorf("%s.hpcc.grids[%d]: p %d * q %d is not %d: every hpcc.grids entry's p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers): HPCC runs its built-in defaults instead of the file when a grid needs more ranks, and leaves ranks idle when it needs fewer; change the grids",
					path, j, g.P, g.Q, ranks)
			}
		}
	}
	return nil
}
