package runner

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// The command builders below are pure: they turn a benchmark's parameters and the plan's sizes into
// argv. Zero values that the CRD defaults would have filled are replaced by the same defaults, so
// that a hand-written plan behaves like one from the controller.

// SysbenchCPUArgv is `sysbench cpu`; threads 0 means one per CPU of the node's limit.
func SysbenchCPUArgv(p *vmbenchv1.SysbenchCPUParams, cpu int32) []string {
	return []string{"sysbench", "cpu",
		"--cpu-max-prime=" + itoa(or(p.MaxPrime, 20000)),
		"--threads=" + itoa(or(p.Threads, cpu)),
		"--time=" + itoa(seconds(p.Duration, 10*time.Second)),
		"run"}
}

// SysbenchMemoryArgv is `sysbench memory` for one block size.
func SysbenchMemoryArgv(p *vmbenchv1.SysbenchMemoryParams, blockSize string, cpu int32) []string {
	return []string{"sysbench", "memory",
		"--memory-block-size=" + blockSize,
		"--memory-total-size=" + orString(p.TotalSize, "10G"),
		"--memory-oper=" + orString(p.Operation, "write"),
		"--threads=" + itoa(or(p.Threads, cpu)),
		"run"}
}

// StressNGCPUArgv is the stress-ng cpu stressor; workers 0 means one per CPU of the node's limit,
// never stress-ng's own 0, which counts the host's CPUs in a pod. The figures go to yamlFile,
// because stress-ng prints its text on stderr among other messages.
func StressNGCPUArgv(p *vmbenchv1.StressNGCPUParams, cpu int32, yamlFile string) []string {
	return []string{"stress-ng",
		"--cpu", itoa(or(p.Workers, cpu)),
		"--cpu-method", orString(p.Method, "matrixprod"),
		"--timeout", itoa(seconds(p.Duration, 60*time.Second)) + "s",
		"--metrics-brief",
		"--yaml", yamlFile}
}

// StressNGVMArgv is the stress-ng vm stressor. A share such as "50%" is turned into a size of the
// node's memory limit here, because stress-ng computes its own percentages from sysinfo(2), which
// in a pod reports the host's memory and would get the pod killed.
func StressNGVMArgv(p *vmbenchv1.StressNGVMParams, memoryBytes int64, yamlFile string) ([]string, error) {
	bytes := orString(p.Bytes, "50%")
	if pct, ok := strings.CutSuffix(bytes, "%"); ok {
		n, err := strconv.ParseInt(pct, 10, 64)
		if err != nil || n < 1 || n > 100 {
			return nil, fmt.Errorf("stress-ng-vm: bytes %q is not a percentage between 1%% and 100%%", bytes)
		}
		if memoryBytes <= 0 {
			return nil, fmt.Errorf("stress-ng-vm: bytes %q needs the plan's memory limit, which is not set", bytes)
		}
		bytes = strconv.FormatInt(max(memoryBytes*n/100>>20, 1), 10) + "M"
	}
	return []string{"stress-ng",
		"--vm", itoa(or(p.Workers, 1)),
		"--vm-bytes", bytes,
		"--timeout", itoa(seconds(p.Duration, 60*time.Second)) + "s",
		"--metrics-brief",
		"--yaml", yamlFile}, nil
}

// IozoneArgv runs the requested iozone test groups on dir/iozone.tmp. Write (-i 0) is always
// included because the read tests read the file it writes. -e counts the final flush, so a write
// is measured to the disk rather than to the page cache; -R adds the "Excel" tables that the
// parser falls back to.
func IozoneArgv(p *vmbenchv1.IozoneParams, dir string) []string {
	argv := []string{"iozone",
		"-s", orString(p.FileSize, "512M"),
		"-r", orString(p.RecordSize, "64k"),
		"-i", "0"}
	tests := p.Tests
	if len(tests) == 0 {
		tests = []vmbenchv1.IozoneTest{"write", "read", "random"}
	}
	for _, t := range []struct {
		name vmbenchv1.IozoneTest
		flag string
	}{{"read", "1"}, {"random", "2"}} {
		for _, want := range tests {
			if want == t.name {
				argv = append(argv, "-i", t.flag)
				break
			}
		}
	}
	if p.DirectIO {
		argv = append(argv, "-I")
	}
	return append(argv, "-e", "-R", "-f", path.Join(dir, "iozone.tmp"))
}

// FioArgv is one fio job on dir/fio.dat; --group_reporting merges numjobs into one result.
func FioArgv(p *vmbenchv1.FioParams, dir string) []string {
	direct := "1"
	if p.Direct != nil && !*p.Direct {
		direct = "0"
	}
	return []string{"fio",
		"--name=vmbench",
		"--filename=" + path.Join(dir, "fio.dat"),
		"--rw=" + orString(p.RW, "randread"),
		"--bs=" + orString(p.BlockSize, "4k"),
		"--size=" + orString(p.Size, "256m"),
		"--iodepth=" + itoa(or(p.IODepth, 16)),
		"--ioengine=" + orString(p.IOEngine, "libaio"),
		"--direct=" + direct,
		"--numjobs=" + itoa(or(p.NumJobs, 1)),
		"--runtime=" + itoa(seconds(p.Runtime, 30*time.Second)) + "s",
		"--time_based",
		"--group_reporting",
		"--output-format=json"}
}

// PingArgv pings address from the node it runs on.
func PingArgv(p *vmbenchv1.PingParams, address string) []string {
	return []string{"ping", "-c", itoa(or(p.Count, 10)), address}
}

// iperf3ServerGrace is how long a server outlives the measurement it was started for, when no
// client ever came (a wrong port): the server is one-off (-1) and exits after one test anyway.
const iperf3ServerGrace = 60 * time.Second

// iperf3ListenWait bounds the wait for a new server to listen. Under emulation its start takes
// seconds; a client that comes earlier is refused, or with passt (which accepts on the guest's
// behalf and then resets) sees "control socket has closed unexpectedly".
const iperf3ListenWait = 30 * time.Second

// Iperf3ServerArgv starts a one-off iperf3 server in the background and returns once it listens
// (a LISTEN socket on its port in /proc/net/tcp or tcp6), or fails when it exits first or does not
// listen within iperf3ListenWait. nohup and the redirections detach it from the ssh session, and
// timeout bounds a server no client reaches.
func Iperf3ServerArgv(p *vmbenchv1.Iperf3Params) []string {
	lifetime := seconds(p.Duration, 10*time.Second) + int32(iperf3ServerGrace/time.Second)
	port := or(p.ServerPort, 5201)
	tries := int(iperf3ListenWait / (100 * time.Millisecond))
	script := fmt.Sprintf(`nohup timeout %d iperf3 -s -1 -p %d >/dev/null 2>&1 &
pid=$! i=0
until grep -q ':%04X [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "the iperf3 server on port %d exited before it listened" >&2; exit 1; }
  i=$((i + 1)); [ "$i" -lt %d ] || { echo "the iperf3 server on port %d did not listen within %s" >&2; exit 1; }
  sleep 0.1
done`, lifetime, port, port, port, tries, port, iperf3ListenWait)
	return []string{"sh", "-c", script}
}

// Iperf3ClientArgv measures from the node it runs on to address. UDP runs with -b 0 (no rate
// limit), because iperf3's default of 1 Mbit/s would measure the default, not the network.
func Iperf3ClientArgv(p *vmbenchv1.Iperf3Params, address string) []string {
	argv := []string{"iperf3", "-c", address,
		"-p", itoa(or(p.Port, 5201)),
		"-t", itoa(seconds(p.Duration, 10*time.Second)),
		"-P", itoa(or(p.Parallel, 1))}
	if strings.EqualFold(p.Protocol, "UDP") {
		argv = append(argv, "-u", "-b", "0")
	}
	return append(argv, "-J")
}

// seconds is d in whole seconds, rounded up and at least 1, as the tools take integers.
func seconds(d *vmbenchv1.Duration, def time.Duration) int32 {
	v := def
	if d != nil && d.Duration() > 0 {
		v = d.Duration()
	}
	return int32(max(math.Ceil(v.Seconds()), 1))
}

func or(v, def int32) int32 {
	if v == 0 {
		return def
	}
	return v
}

func orString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }
