package runplan

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Noise is what a node did besides the benchmark during one execution, from the difference of two
// samples taken just before and just after it. Percentages are of the node's whole CPU time (every
// CPU that /proc/stat counts), so 25 on a 4-CPU node is one CPU's worth.
type Noise struct {
	// Node is the node that was sampled: the execution's node, a pair's sending side, or the master
	// for tools that run across all nodes.
	Node string `json:"node"`
	// BusyPercent is the node's CPU time spent running anything, the benchmark included: in a pod the
	// host's, since /proc/stat in a container shows the host's counters; in a VM the guest's.
	BusyPercent float64 `json:"busyPercent"`
	// StealPercent is the time the node's CPUs waited for a hypervisor that ran something else: in a VM
	// the host's other tenants and its own work; in a pod the steal of a host that is itself a VM.
	StealPercent float64 `json:"stealPercent"`
	// OthersPercent is the CPU time of everything outside the benchmark's own container: BusyPercent
	// less the container's cgroup usage. Only pods have it: a pod sees only the processes of its own
	// pid namespace, so the host's other processes are counted through the cgroup instead, and a VM
	// guest cannot see its host at all. nil where it was not measured.
	OthersPercent *float64 `json:"othersPercent,omitempty"`
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int `json:"cpus,omitempty"`
}

// Level is the one figure by which an execution is called noisy: CPU taken by others plus steal
// where others' CPU was measured (pods), steal alone where it was not (VMs).
func (n Noise) Level() float64 {
	if n.OthersPercent != nil {
		return *n.OthersPercent + n.StealPercent
	}
	return n.StealPercent
}

// CPUSet is the CPUs a node's processes may run on, as the runner saw them.
type CPUSet struct {
	// Allowed is Cpus_allowed_list of /proc/self/status, e.g. "2-3" or "0-7".
	Allowed string `json:"allowed"`
	// Online is the number of CPUs the node has online.
	Online int `json:"online"`
}

// CountCPUs counts the CPUs of a kernel CPU list such as "0-3,8,10-11".
func CountCPUs(list string) (int, error) {
	list = strings.TrimSpace(list)
	if list == "" {
		return 0, errors.New("empty CPU list")
	}
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return 0, fmt.Errorf("CPU list %q: %q is not a CPU number", list, lo)
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return 0, fmt.Errorf("CPU list %q: %q is not a range of CPUs", list, part)
			}
		}
		n += last - first + 1
	}
	return n, nil
}
