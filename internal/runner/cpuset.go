package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vmbench/vmbench/internal/runplan"
)

// cpuSetCommand prints the CPU list the node's processes may run on (the command's own, which it
// inherits from the container or the guest) and the node's online CPUs.
var cpuSetCommand = Command{Argv: []string{"sh", "-c", "grep Cpus_allowed_list /proc/self/status; cat /sys/devices/system/cpu/online"}}

// ParseCPUSet reads the output of cpuSetCommand: a "Cpus_allowed_list:" line from /proc/self/status
// and the online list from /sys/devices/system/cpu/online.
func ParseCPUSet(out []byte) (runplan.CPUSet, error) {
	var set runplan.CPUSet
	online := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			set.Allowed = strings.TrimSpace(v)
		} else if line != "" && online == "" {
			online = line
		}
	}
	if set.Allowed == "" {
		return set, errors.New("no Cpus_allowed_list line in /proc/self/status")
	}
	if _, err := runplan.CountCPUs(set.Allowed); err != nil {
		return set, fmt.Errorf("the Cpus_allowed_list line of /proc/self/status: %w", err)
	}
	n, err := runplan.CountCPUs(online)
	if err != nil {
		return set, fmt.Errorf("/sys/devices/system/cpu/online: %w", err)
	}
	set.Online = n
	return set, nil
}

// cpuSets reads every node's CPU list; a node that cannot tell is left out, and so is never
// counted as pinned.
func (r *Runner) cpuSets(ctx context.Context, plan runplan.Plan) map[string]runplan.CPUSet {
	sets := map[string]runplan.CPUSet{}
	for _, n := range plan.Nodes {
		cctx, cancel := context.WithTimeout(ctx, probeTimeout)
		stdout, stderr, err := r.Exec.Run(cctx, n, cpuSetCommand)
		cancel()
		if err != nil {
			r.progressf("reading the CPU list of %s: %v", n.Name, commandError(cpuSetCommand, err, stdout, stderr))
			continue
		}
		set, err := ParseCPUSet(stdout)
		if err != nil {
			r.progressf("reading the CPU list of %s: %v", n.Name, err)
			continue
		}
		r.progressf("node %s may run on CPUs %s of %d online", n.Name, set.Allowed, set.Online)
		sets[n.Name] = set
	}
	if len(sets) == 0 {
		return nil
	}
	return sets
}
