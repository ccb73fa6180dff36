package runner

import (
	"fmt"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Pair is one direction of network traffic: the tool runs on Src and targets Dst.
type Pair struct {
	Src, Dst runplan.Node
}

// Label names the pair in results, e.g. "master-node01".
func (p Pair) Label() string { return p.Src.Name + "-" + p.Dst.Name }

// Pairs expands one direction kind over nodes (nodes[0] is the master, the rest are workers):
//   - master-node: the master to each worker;
//   - node-master: each worker to the master;
//   - node-node: each worker to the next one, in a ring that closes only with 3 or more workers
//     (with 2 the closing pair would repeat the first in reverse).
//
// A kind that yields no pair for these nodes returns an error that says why.
func Pairs(kind vmbenchv1.NodePair, nodes []runplan.Node) ([]Pair, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s: the run has no nodes", kind)
	}
	master, workers := nodes[0], nodes[1:]
	var pairs []Pair
	switch kind {
	case vmbenchv1.PairMasterToNode:
		for _, w := range workers {
			pairs = append(pairs, Pair{Src: master, Dst: w})
		}
	case vmbenchv1.PairNodeToMaster:
		for _, w := range workers {
			pairs = append(pairs, Pair{Src: w, Dst: master})
		}
	case vmbenchv1.PairNodeToNode:
		if len(workers) < 2 {
			return nil, fmt.Errorf("%s: skipped, it needs at least 2 worker nodes and the run has %d", kind, len(workers))
		}
		for i, w := range workers {
			if i == len(workers)-1 && len(workers) == 2 {
				break
			}
			pairs = append(pairs, Pair{Src: w, Dst: workers[(i+1)%len(workers)]})
		}
	default:
		return nil, fmt.Errorf("unknown node pair %q", kind)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%s: skipped, the run has no worker nodes", kind)
	}
	return pairs, nil
}
