package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// userHZ is the unit of /proc/stat's counters. The kernel exports them in USER_HZ, which is 100 on
// every architecture Linux runs containers and VMs on.
const userHZ = 100

// cgroupMarker separates /proc/stat from the cgroup's usage file in a snapshot's output.
const cgroupMarker = "vmbench-cgroup "

// Where a node's counters are read. In a pod /sys/fs/cgroup is the container's own cgroup.
const (
	procStatFile = "/proc/stat"
	cgroupRoot   = "/sys/fs/cgroup"
)

// cgroupUsageFiles are the container's own CPU usage under the cgroup root, tried in order: cgroup
// v2 (cpu.stat, usage_usec), then cgroup v1 (cpuacct.usage, nanoseconds) in its two usual mount
// layouts.
var cgroupUsageFiles = []string{"cpu.stat", "cpu,cpuacct/cpuacct.usage", "cpuacct/cpuacct.usage"}

// CPUTimes are the counters of /proc/stat's "cpu" line, summed over every CPU, in USER_HZ ticks.
type CPUTimes struct {
	// Busy is user, nice, system, irq and softirq time (guest time is part of user).
	Busy uint64
	// Steal is time a hypervisor gave to someone else.
	Steal uint64
	// Total is Busy, Steal, idle and iowait.
	Total uint64
	// CPUs is the number of "cpuN" lines.
	CPUs int
}

// ParseProcStat reads the aggregate "cpu" line of /proc/stat and counts the per-CPU lines.
func ParseProcStat(b []byte) (CPUTimes, error) {
	var t CPUTimes
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		if fields[0] != "cpu" {
			if _, err := strconv.Atoi(fields[0][3:]); err == nil {
				t.CPUs++
			}
			continue
		}
		// user nice system idle iowait irq softirq steal [guest guest_nice]; kernels before 2.6.11
		// had no steal column, and none that runs Kubernetes lacks it.
		if len(fields) < 9 {
			return CPUTimes{}, fmt.Errorf("/proc/stat: the cpu line has %d counters, want at least 8: %q", len(fields)-1, sc.Text())
		}
		var v [8]uint64
		for i := range v {
			n, err := strconv.ParseUint(fields[i+1], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("/proc/stat: counter %d of the cpu line is %q, not a number", i+1, fields[i+1])
			}
			v[i] = n
		}
		user, nice, system, idle, iowait, irq, softirq, steal := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
		t.Busy = user + nice + system + irq + softirq
		t.Steal = steal
		t.Total = t.Busy + steal + idle + iowait
		found = true
	}
	if !found {
		return CPUTimes{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	return t, nil
}

// ParseCgroupUsage reads a cgroup's CPU usage from file, named by its path: cpu.stat (cgroup v2,
// usage_usec) or cpuacct.usage (cgroup v1, nanoseconds).
func ParseCgroupUsage(file string, b []byte) (time.Duration, error) {
	switch {
	case strings.HasSuffix(file, "/cpu.stat"):
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) == 2 && fields[0] == "usage_usec" {
				us, err := strconv.ParseUint(fields[1], 10, 63)
				if err != nil || us > math.MaxInt64/uint64(time.Microsecond) {
					return 0, fmt.Errorf("%s: usage_usec is %q, not a number of microseconds", file, fields[1])
				}
				return time.Duration(us) * time.Microsecond, nil
			}
		}
		return 0, fmt.Errorf("%s: no usage_usec line", file)
	case strings.HasSuffix(file, "/cpuacct.usage"):
		s := strings.TrimSpace(string(b))
		ns, err := strconv.ParseInt(s, 10, 64)
		if err != nil || ns < 0 {
			return 0, fmt.Errorf("%s: %q is not a number of nanoseconds", file, s)
		}
		return time.Duration(ns), nil
	}
	return 0, fmt.Errorf("%s: not a cgroup CPU usage file", file)
}

// noiseSnapshot is one sample of a node's counters.
type noiseSnapshot struct {
	cpu CPUTimes
	// own is the container's CPU usage; hasOwn is false where it was not read.
	own    time.Duration
	hasOwn bool
}

// snapshotCommand prints /proc/stat and, when own is set, the first readable cgroup usage file
// after a marker line that names it: one command, so that a sample costs one ssh round trip.
func snapshotCommand(own bool) Command {
	return Command{Argv: []string{"sh", "-c", snapshotScript(procStatFile, cgroupRoot, own)}}
}

// snapshotScript is snapshotCommand's shell script over the given files, which tests point at
// fixtures.
func snapshotScript(procStat, cgroupDir string, own bool) string {
	script := "cat " + ShellQuote(procStat)
	if own {
		files := make([]string, len(cgroupUsageFiles))
		for i, f := range cgroupUsageFiles {
			files[i] = ShellQuote(cgroupDir + "/" + f)
		}
		script += "; for f in " + strings.Join(files, " ") +
			`; do if [ -r "$f" ]; then echo "` + cgroupMarker + `$f"; cat "$f"; break; fi; done`
	}
	return script
}

// parseSnapshot reads the output of snapshotCommand. A cgroup part that cannot be read leaves
// hasOwn false rather than failing: busy and steal are still worth having.
func parseSnapshot(out []byte) (noiseSnapshot, error) {
	stat, cgroup, _ := bytes.Cut(out, []byte(cgroupMarker))
	cpu, err := ParseProcStat(stat)
	if err != nil {
		return noiseSnapshot{}, err
	}
	s := noiseSnapshot{cpu: cpu}
	if len(cgroup) > 0 {
		file, content, _ := bytes.Cut(cgroup, []byte("\n"))
		if own, err := ParseCgroupUsage(strings.TrimSpace(string(file)), content); err == nil {
			s.own, s.hasOwn = own, true
		}
	}
	return s, nil
}

// NoiseBetween is the noise of the interval between two snapshots; ok is false when the counters did
// not advance (or went back, after a reboot), so that no percentage can be formed.
func noiseBetween(before, after noiseSnapshot) (runplan.Noise, bool) {
	if after.cpu.Total <= before.cpu.Total || after.cpu.Busy < before.cpu.Busy || after.cpu.Steal < before.cpu.Steal {
		return runplan.Noise{}, false
	}
	total := float64(after.cpu.Total - before.cpu.Total)
	busy := float64(after.cpu.Busy - before.cpu.Busy)
	n := runplan.Noise{
		BusyPercent:  round1(100 * busy / total),
		StealPercent: round1(100 * float64(after.cpu.Steal-before.cpu.Steal) / total),
		CPUs:         after.cpu.CPUs,
	}
	if before.hasOwn && after.hasOwn && after.own >= before.own {
		ownTicks := (after.own - before.own).Seconds() * userHZ
		// The counters are sampled a few milliseconds apart, so the cgroup may show a little more
		// than the node's busy time: that is no one else's CPU.
		others := round1(max(0, 100*(busy-ownTicks)/total))
		n.OthersPercent = &others
	}
	return n, true
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// noiseProbeTimeout bounds one snapshot, so that a node that stopped answering delays the run
// little; its execution reports its own failure.
const noiseProbeTimeout = 30 * time.Second

// snapshot samples node's counters; ok is false when it could not, which only costs the noise figure.
func (r *Runner) snapshot(ctx context.Context, node runplan.Node, own bool) (noiseSnapshot, bool) {
	sctx, cancel := context.WithTimeout(ctx, noiseProbeTimeout)
	defer cancel()
	stdout, stderr, err := r.Exec.Run(sctx, node, snapshotCommand(own))
	if err != nil {
		r.progressf("sampling the noise on %s: %v", node.Name, commandError(snapshotCommand(own), err, stdout, stderr))
		return noiseSnapshot{}, false
	}
	s, err := parseSnapshot(stdout)
	if err != nil {
		r.progressf("sampling the noise on %s: %v", node.Name, err)
		return noiseSnapshot{}, false
	}
	return s, true
}

// ownCgroup says whether the container's own usage can be told apart on plan's nodes: in pods,
// where /sys/fs/cgroup is the container's cgroup; not in VMs, where it is the guest's root.
func ownCgroup(plan runplan.Plan) bool {
	return plan.PlatformType != vmbenchv1.PlatformVM
}

// noiseNode is the node whose noise an execution labelled label is sampled on: the node itself, the
// sending side of a pair ("node01-master"), or the master for cluster-wide tools.
func noiseNode(plan runplan.Plan, label string) runplan.Node {
	for _, n := range plan.Nodes {
		if n.Name == label {
			return n
		}
	}
	if src, _, ok := strings.Cut(label, "-"); ok {
		for _, n := range plan.Nodes {
			if n.Name == src {
				return n
			}
		}
	}
	return plan.Nodes[0]
}
