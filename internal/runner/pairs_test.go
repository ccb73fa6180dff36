package runner

import (
	"fmt"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

func nodes(n int) []runplan.Node {
	out := []runplan.Node{{Name: "master", Address: "m"}}
	for i := 1; i < n; i++ {
		out = append(out, runplan.Node{Name: fmt.Sprintf("node%02d", i), Address: fmt.Sprintf("n%d", i)})
	}
	return out
}

func TestPairs(t *testing.T) {
	for _, tc := range []struct {
		kind    vmbenchv1.NodePair
		nodes   int
		want    string
		wantErr string
	}{
		{vmbenchv1.PairMasterToNode, 3, "master-node01 master-node02", ""},
		{vmbenchv1.PairNodeToMaster, 3, "node01-master node02-master", ""},
		{vmbenchv1.PairNodeToNode, 3, "node01-node02", ""},
		{vmbenchv1.PairNodeToNode, 4, "node01-node02 node02-node03 node03-node01", ""},
		{vmbenchv1.PairNodeToNode, 5, "node01-node02 node02-node03 node03-node04 node04-node01", ""},
		{vmbenchv1.PairMasterToNode, 2, "master-node01", ""},
		{vmbenchv1.PairNodeToNode, 2, "", "node-node: skipped, it needs at least 2 worker nodes and the run has 1"},
		{vmbenchv1.PairMasterToNode, 1, "", "master-node: skipped, the run has no worker nodes"},
		{vmbenchv1.PairNodeToMaster, 1, "", "node-master: skipped, the run has no worker nodes"},
		{"sideways", 3, "", `unknown node pair "sideways"`},
	} {
		ps, err := Pairs(tc.kind, nodes(tc.nodes))
		var labels []string
		for _, p := range ps {
			labels = append(labels, p.Label())
		}
		got := strings.Join(labels, " ")
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tc.want || gotErr != tc.wantErr {
			t.Errorf("%s with %d nodes: got %q, %q; want %q, %q", tc.kind, tc.nodes, got, gotErr, tc.want, tc.wantErr)
		}
	}
	// The pair runs on its source and targets the destination's address.
	ps, _ := Pairs(vmbenchv1.PairNodeToMaster, nodes(2))
	if ps[0].Src.Address != "n1" || ps[0].Dst.Address != "m" {
		t.Errorf("pair %+v", ps[0])
	}
}
