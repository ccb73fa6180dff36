package runner

import (
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
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

// IozoneArgv runs the requested iozone test groups on dir/iozone.tmp: at one file and record size,
// or in automatic mode (-a) at every file size from minFileSize (-n) to maxFileSize (-g) with
// every record size iozone takes for it. Write (-i 0) is always included because the read tests
// read the file it writes. -e counts the final flush, so a write is measured to the disk rather
// than to the page cache; -R adds the "Excel" tables that the parser falls back to.
func IozoneArgv(p *vmbenchv1.IozoneParams, dir string) []string {
	argv := []string{"iozone",
		"-s", orString(p.FileSize, vmbenchv1.DefaultIozoneFileSize),
		"-r", orString(p.RecordSize, vmbenchv1.DefaultIozoneRecordSize)}
	if p.Auto {
		argv = []string{"iozone", "-a",
			"-n", orString(p.MinFileSize, vmbenchv1.DefaultIozoneMinFileSize),
			"-g", orString(p.MaxFileSize, vmbenchv1.DefaultIozoneMaxFileSize)}
	}
	argv = append(argv, "-i", "0")
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

// FioArgv is one fio job on dir/fio.dat; --group_reporting merges numjobs into one result. With a
// runtime the job is time-based (--time_based: it goes over the file again until the runtime is
// up); without one, each job ends once it has read or written size, and only the benchmark's
// timeout bounds how long that takes.
func FioArgv(p *vmbenchv1.FioParams, dir string) []string {
	direct := "1"
	if p.Direct != nil && !*p.Direct {
		direct = "0"
	}
	argv := []string{"fio",
		"--name=vmbench",
		"--filename=" + path.Join(dir, "fio.dat"),
		"--rw=" + orString(p.RW, "randread"),
		"--bs=" + orString(p.BlockSize, "4k"),
		"--size=" + orString(p.Size, "256m"),
		"--iodepth=" + itoa(or(p.IODepth, 16)),
		"--ioengine=" + orString(p.IOEngine, "libaio"),
		"--direct=" + direct,
		"--numjobs=" + itoa(or(p.NumJobs, 1))}
	if p.Runtime != nil && p.Runtime.Duration() > 0 {
		argv = append(argv, "--runtime="+itoa(seconds(p.Runtime, 0))+"s", "--time_based")
	}
	return append(argv, "--group_reporting", "--output-format=json")
}

// PingArgv pings address from the node it runs on.
func PingArgv(p *vmbenchv1.PingParams, address string) []string {
	return []string{"ping", "-c", itoa(or(p.Count, 10)), address}
}

// serverGrace is how long a server outlives the measurement it was started for, when no client
// ever came (a wrong port): iperf3's server is one-off (-1) and exits after one test anyway, the
// others are stopped by the execution's cleanup.
const serverGrace = 60 * time.Second

// listenWait bounds the wait for a new server to listen. Under emulation its start takes seconds;
// a client that comes earlier is refused, or with passt (which accepts on the guest's behalf and
// then resets) sees its connection closed.
const listenWait = 30 * time.Second

// backgroundServer starts launch (a command that listens on port and stays in the foreground) in the
// background for at most lifetime seconds and returns once it listens (a LISTEN socket on port in
// /proc/net/tcp or tcp6), or fails when it exits first or does not listen within listenWait.
// nohup and the redirections detach it from the ssh session; timeout bounds a server no client
// reaches. With pidFile set, the pid of the server (of its timeout) is written there, for the
// cleanup to stop it.
func backgroundServer(name, launch string, port, lifetime int32, pidFile string) []string {
	tries := int(listenWait / (100 * time.Millisecond))
	record := ""
	if pidFile != "" {
		record = fmt.Sprintf("echo \"$pid\" > %s\n", pidFile)
	}
	script := fmt.Sprintf(`nohup timeout %d %s >/dev/null 2>&1 &
pid=$! i=0
%suntil grep -q ':%04X [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { echo "%s on port %d exited before it listened" >&2; exit 1; }
  i=$((i + 1)); [ "$i" -lt %d ] || { echo "%s on port %d did not listen within %s" >&2; exit 1; }
  sleep 0.1
done`, lifetime, launch, record, port, name, port, tries, name, port, listenWait)
	return []string{"sh", "-c", script}
}

// stopServerArgv stops the server whose pid backgroundServer wrote to pidFile, if it still runs.
func stopServerArgv(pidFile string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`[ -f %[1]s ] && kill "$(cat %[1]s)" 2>/dev/null; rm -f %[1]s; true`, pidFile)}
}

// Iperf3ServerArgv starts a one-off iperf3 server in the background and returns once it listens
// (see backgroundServer).
func Iperf3ServerArgv(p *vmbenchv1.Iperf3Params) []string {
	lifetime := seconds(p.Duration, 10*time.Second) + int32(serverGrace/time.Second)
	port := or(p.ServerPort, 5201)
	return backgroundServer("the iperf3 server", fmt.Sprintf("iperf3 -s -1 -p %d", port), port, lifetime, "")
}

// netperfSelectors are the -o columns that ParseNetperf reads; TCP_STREAM has no latencies.
const (
	netperfConfidenceSelectors = "CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID"
	netperfRRSelectors         = "THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY," + netperfConfidenceSelectors
	netperfStreamSelectors     = "THROUGHPUT,THROUGHPUT_UNITS," + netperfConfidenceSelectors
)

// netperfConfidence is p's confidence block with the API's defaults for what is unset.
func netperfConfidence(p *vmbenchv1.NetperfParams) vmbenchv1.NetperfConfidence {
	c := vmbenchv1.NetperfConfidence{}
	if p.Confidence != nil {
		c = *p.Confidence
	}
	c.Level = or(c.Level, 95)
	c.WidthPercent = or(c.WidthPercent, 5)
	c.MinIterations = or(c.MinIterations, 3)
	c.MaxIterations = max(or(c.MaxIterations, 10), c.MinIterations)
	return c
}

// NetserverArgv starts netserver in the foreground (-D) on the control port, in the background of
// the node (see backgroundServer), for as long as the longest test may take.
func NetserverArgv(p *vmbenchv1.NetperfParams, pidFile string) []string {
	c := netperfConfidence(p)
	lifetime := seconds(p.Duration, 10*time.Second)*c.MaxIterations + int32(serverGrace/time.Second)
	port := int32(runplan.NetperfControlPort)
	return backgroundServer("netserver", fmt.Sprintf("netserver -D -p %d", port), port, lifetime, pidFile)
}

// NetperfClientArgv runs one netperf test from the node it runs on to address, repeated until the
// confidence interval is reached (-I level,width -i max,min), with the data connection on the fixed
// data port (-P ,port) and the figures as CSV (-o).
func NetperfClientArgv(p *vmbenchv1.NetperfParams, test vmbenchv1.NetperfTest, address string) []string {
	c := netperfConfidence(p)
	selectors := netperfRRSelectors
	if test == vmbenchv1.NetperfTCPStream {
		selectors = netperfStreamSelectors
	}
	return []string{"netperf", "-H", address,
		"-p", strconv.Itoa(runplan.NetperfControlPort),
		"-t", string(test),
		"-l", itoa(seconds(p.Duration, 10*time.Second)),
		"-I", itoa(c.Level) + "," + itoa(c.WidthPercent),
		"-i", itoa(c.MaxIterations) + "," + itoa(c.MinIterations),
		"--",
		"-P", "," + strconv.Itoa(runplan.NetperfDataPort),
		"-o", selectors}
}

// NetcatReceiverArgv starts an nc receiver that discards what it gets (see backgroundServer); -d keeps
// it from reading its stdin, so it ends when the sender closes the connection.
func NetcatReceiverArgv(timeout time.Duration, pidFile string) []string {
	port := int32(runplan.NetcatPort)
	lifetime := int32(max(math.Ceil(timeout.Seconds()), 1))
	return backgroundServer("the nc receiver", fmt.Sprintf("nc -d -l %d", port), port, lifetime, pidFile)
}

// NetcatSenderArgv sends p.Size of zeros, rounded up to whole MiB, to the receiver at address; dd's
// summary goes to stderr, which the parser reads. nc -N shuts the connection down at the end of
// its input, so that the receiver sees the end.
func NetcatSenderArgv(p *vmbenchv1.NetcatParams, address string) ([]string, error) {
	size, err := vmbenchv1.NetcatSizeBytes(orString(p.Size, "1Gi"))
	if err != nil {
		return nil, fmt.Errorf("netcat: size %w", err)
	}
	mib := (size + 1<<20 - 1) >> 20
	return []string{"sh", "-c", fmt.Sprintf("LC_ALL=C dd if=/dev/zero bs=1M count=%d | nc -N -v %s %d",
		mib, shellQuote(address), runplan.NetcatPort)}, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// MaxIperf3Intervals bounds the time series of one iperf3 measurement: the interval (-i) is one
// second, or as many whole seconds as keep a measurement within this many intervals (6 s for 1 h).
const MaxIperf3Intervals = 600

// Iperf3ClientArgv measures from the node it runs on to address. UDP runs with -b 0 (no rate
// limit), because iperf3's default of 1 Mbit/s would measure the default, not the network.
func Iperf3ClientArgv(p *vmbenchv1.Iperf3Params, address string) []string {
	duration := seconds(p.Duration, 10*time.Second)
	argv := []string{"iperf3", "-c", address,
		"-p", itoa(or(p.Port, 5201)),
		"-t", itoa(duration),
		"-i", itoa((duration + MaxIperf3Intervals - 1) / MaxIperf3Intervals),
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
