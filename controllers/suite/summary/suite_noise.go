package summary

import (
	"fmt"
	"sort"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/runplan"
)

// nodeNoise sums up the noise the runner sampled around each execution, per sampled node. Only the
// results that status keeps count (latestResults), so that an execution measured again is counted
// once.
func NodeNoise(results []runplan.Message) []vmbenchv1.NodeNoise {
	type acc struct {
		others, steal, maxLevel float64
		withOthers, n           int32
	}
	byNode := map[string]*acc{}
	for _, m := range results {
		if m.Noise == nil || m.Noise.Node == "" || noiseError(m.Noise) != "" {
			continue
		}
		a := byNode[m.Noise.Node]
		if a == nil {
			a = &acc{}
			byNode[m.Noise.Node] = a
		}
		a.n++
		a.steal += m.Noise.StealPercent
		if m.Noise.OthersPercent != nil {
			a.withOthers++
			a.others += *m.Noise.OthersPercent
		}
		a.maxLevel = max(a.maxLevel, m.Noise.Level())
	}
	out := make([]vmbenchv1.NodeNoise, 0, len(byNode))
	for node, a := range byNode {
		nn := vmbenchv1.NodeNoise{
			Node:         conditions.Truncate(node, maxRunNode),
			StealPercent: Round(a.steal/float64(a.n), 1),
			MaxPercent:   Round(a.maxLevel, 1),
			Samples:      a.n,
		}
		if a.withOthers > 0 {
			others := Round(a.others/float64(a.withOthers), 1)
			nn.OthersPercent = &others
		}
		out = append(out, nn)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	if len(out) > maxRunNodes {
		out = out[:maxRunNodes]
	}
	return out
}

// sampleNoise is the noise level recorded with a sample, rounded to keep the status small.
func sampleNoise(m runplan.Message) *float64 {
	if m.Noise == nil {
		return nil
	}
	level := Round(m.Noise.Level(), 1)
	return &level
}

// Limits of a run's per-node lists in the status schema.
const (
	maxRunNode    = 16
	maxRunNodes   = 8
	maxCPUSetList = 64
)

// nodeCPUs records what every node saw of its CPUs, and whether they were pinned. A pod is pinned
// when its CPU list has exactly the CPUs it asked for and the node has more online: the kubelet's
// static CPU manager gave it cores of its own. A kubelet without it leaves the pod on the shared pool
// (every online CPU). A VM's guest sees only its vCPUs, so there the evidence is KubeVirt's:
// a VMI with dedicatedCpuPlacement (cluster.dedicatedCPUs or the platform's vm.dedicatedCPUs, which
// dedicatedVM says) is only placed on a node whose kubelet pins.
func NodeCPUs(sets map[string]runplan.CPUSet, platformType vmbenchv1.PlatformType, shape vmbenchv1.ClusterShape, dedicatedVM bool) []vmbenchv1.NodeCPUs {
	out := make([]vmbenchv1.NodeCPUs, 0, len(sets))
	for node, set := range sets {
		nc := vmbenchv1.NodeCPUs{Node: conditions.Truncate(node, maxRunNode), Allowed: conditions.Truncate(set.Allowed, maxCPUSetList), Online: int32(set.Online)}
		if platformType == vmbenchv1.PlatformVM {
			nc.Pinned = dedicatedVM
		} else {
			nc.Pinned = Pinned(set, shape.CPULimit())
		}
		out = append(out, nc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	if len(out) > maxRunNodes {
		out = out[:maxRunNodes]
	}
	return out
}

// pinned decides from a pod's CPU list whether it had exclusive CPUs: exactly want of them, fewer
// than the node has online. A list that cannot be read is never taken for pinning.
func Pinned(set runplan.CPUSet, want int32) bool {
	n, err := runplan.CountCPUs(set.Allowed)
	return err == nil && n == int(want) && n < set.Online
}

// pinningWarning names the first run and node where dedicated CPUs were asked for and not granted,
// with what the runner saw and what to change; "" when every node was pinned or none was asked.
func PinningWarning(spec vmbenchv1.BenchmarkSuiteSpec, st *vmbenchv1.BenchmarkSuiteStatus) string {
	if !spec.Cluster.DedicatedCPUs {
		return ""
	}
	var missing []string
	first, firstCompacted := "", ""
	for _, r := range st.Runs {
		for _, c := range r.CPUs {
			if c.Pinned {
				continue
			}
			missing = append(missing, r.Name+"/"+c.Node)
			if first == "" {
				first = fmt.Sprintf("run %s node %s could run on CPUs %s of %d online", r.Name, c.Node, c.Allowed, c.Online)
			}
		}
		// A compacted run kept only the names of its unpinned nodes; the CPU list is told from a run
		// that still has it.
		if r.Compacted != nil {
			for _, node := range r.Compacted.Unpinned {
				missing = append(missing, r.Name+"/"+node)
				if firstCompacted == "" {
					firstCompacted = fmt.Sprintf("run %s node %s was not pinned (its CPU list was compacted)", r.Name, node)
				}
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	if first == "" {
		first = firstCompacted
	}
	return conditions.Truncate(fmt.Sprintf("cluster.dedicatedCPUs was asked for, but %d run nodes were not pinned (%s): %s; "+
		"the node's kubelet needs --cpu-manager-policy=static (and, for VMs, KubeVirt's CPUManager feature gate), "+
		"or restrict the suite to such nodes with placement.nodeSelector; figures from these nodes are not from dedicated cores",
		len(missing), strings.Join(missing, ", "), first), 1024)
}
