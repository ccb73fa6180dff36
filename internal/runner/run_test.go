package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// exitError is what os/exec returns for a non-zero exit.
type exitError int

func (e exitError) Error() string { return "exit status " + itoa(int32(e)) }
func (e exitError) ExitCode() int { return int(e) }

func allBenchmarks() []vmbenchv1.Benchmark {
	return []vmbenchv1.Benchmark{
		{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{MaxPrime: 20000, Duration: dur(10 * time.Second)}},
		{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory, SysbenchMemory: &vmbenchv1.SysbenchMemoryParams{BlockSizes: []string{"1K", "1M"}, TotalSize: "10G", Operation: "write"}},
		{Name: "stress", Type: vmbenchv1.BenchmarkStressNGCPU, StressNGCPU: &vmbenchv1.StressNGCPUParams{Method: "matrixprod", Duration: dur(time.Minute)}},
		{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "512M", RecordSize: "64k",
			Tests: []vmbenchv1.IozoneTest{"write", "read", "random"}, Targets: []vmbenchv1.StorageTarget{"Local", "Shared"}}},
		{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{RW: "randread", BlockSize: "4k", Size: "256m", IODepth: 16,
			IOEngine: "libaio", Direct: ptr(true), NumJobs: 1, Runtime: dur(30 * time.Second), Target: "Local"}},
		{Name: "ping", Type: vmbenchv1.BenchmarkPing, Ping: &vmbenchv1.PingParams{Count: 10,
			Pairs: []vmbenchv1.NodePair{"master-node", "node-master", "node-node"}}},
		{Name: "net", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{Pairs: []vmbenchv1.NodePair{"master-node", "node-node"},
			Duration: dur(10 * time.Second), Parallel: 1, Protocol: "TCP", Port: 5201, ServerPort: 5201}},
		{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{MemoryPercent: 80, NB: 192}},
	}
}

func TestRunAllBenchmarks(t *testing.T) {
	r, exec, msgs := testRunner(t)
	plan := testPlan(t, allBenchmarks()...)
	var hpccDir string
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] != "mpirun" {
			return reply{}, false
		}
		hpccDir = exec.calls[len(exec.calls)-1].dir
		input, err := os.ReadFile(filepath.Join(hpccDir, "hpccinf.txt"))
		want := HPCCInput(HPCCLayout{Ns: []int32{25344}, NBs: []int32{192}, Grids: []vmbenchv1.HPLGrid{{P: 2, Q: 3}}})
		if err != nil || string(input) != want {
			t.Errorf("hpccinf.txt when mpirun starts: %v\n%s", err, input)
		}
		// The recorded run's point, N=3000 NB=96 on 1x2, becomes the one asked for, as HPL prints it.
		out := strings.Replace(fixture(t, "hpcc-np2.txt"), "WR11C2R4        3000    96     1     2", "WR11C2R4       25344   192     2     3", 1)
		return reply{stdout: "mpirun console\n", files: map[string]string{"hpccoutf.txt": out}}, true
	}

	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatalf("Run: %v", err)
	}

	local := plan.LocalDir
	var want []string
	add := func(node string, cmds ...string) {
		for _, c := range cmds {
			want = append(want, node+": "+strings.ReplaceAll(c, "$L", local))
		}
	}
	all := []string{"master", "node01", "node02"}
	for _, n := range all {
		add(n, "true")
	}
	add("master", "systemd-detect-virt")
	// The Shared target's mount, as the last node sees it.
	add("node02", "cat /proc/self/mountinfo")
	for _, n := range all {
		add(n, "sysbench cpu --cpu-max-prime=20000 --threads=2 --time=10 run")
	}
	for _, bs := range []string{"1K", "1M"} {
		for _, n := range all {
			add(n, "sysbench memory --memory-block-size="+bs+" --memory-total-size=10G --memory-oper=write --threads=2 run")
		}
	}
	for _, n := range all {
		add(n, "stress-ng --cpu 2 --cpu-method matrixprod --timeout 60s --metrics-brief --yaml $L/vmbench-stress-ng.yaml",
			"cat $L/vmbench-stress-ng.yaml", "rm -f $L/vmbench-stress-ng.yaml")
	}
	for _, n := range all {
		add(n, "mkdir -p $L", "iozone -s 512M -r 64k -i 0 -i 1 -i 2 -e -R -f $L/iozone.tmp", "rm -f $L/iozone.tmp")
	}
	for _, n := range all {
		d := "/shared/s1-pod-0/" + n
		add(n, "mkdir -p "+d, "iozone -s 512M -r 64k -i 0 -i 1 -i 2 -e -R -f "+d+"/iozone.tmp", "rm -f "+d+"/iozone.tmp")
	}
	for _, n := range all {
		add(n, "mkdir -p $L", "fio --name=vmbench --filename=$L/fio.dat --rw=randread --bs=4k --size=256m --iodepth=16 --ioengine=libaio --direct=1 --numjobs=1 --runtime=30s --time_based --group_reporting --output-format=json", "rm -f $L/fio.dat")
	}
	add("master", "ping -c 10 10.0.0.2", "ping -c 10 10.0.0.3")
	add("node01", "ping -c 10 10.0.0.1")
	add("node02", "ping -c 10 10.0.0.1")
	add("node01", "ping -c 10 10.0.0.3")
	server := strings.Join(Iperf3ServerArgv(&vmbenchv1.Iperf3Params{Duration: dur(10 * time.Second)}), " ")
	add("node01", server)
	add("master", "iperf3 -c 10.0.0.2 -p 5201 -t 10 -i 1 -P 1 -J")
	add("node02", server)
	add("master", "iperf3 -c 10.0.0.3 -p 5201 -t 10 -i 1 -P 1 -J")
	add("node02", server)
	add("node01", "iperf3 -c 10.0.0.3 -p 5201 -t 10 -i 1 -P 1 -J")
	add("master", "mpirun -np 6 --host 10.0.0.1:2,10.0.0.2:2,10.0.0.3:2 --bind-to none --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1 -x LC_ALL=C hpcc")

	got := exec.commands()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands differ:\n%s", diffLines(got, want))
	}
	if !strings.HasPrefix(hpccDir, local+string(filepath.Separator)) {
		t.Errorf("hpcc ran in %q, want a fresh directory in %s", hpccDir, local)
	}
	if _, err := os.Stat(hpccDir); !os.IsNotExist(err) {
		t.Errorf("hpcc's directory was left behind: %v", err)
	}

	ms := *msgs
	start := newClock().Now()
	first := ms[0]
	if first.Kind != runplan.KindStarted || first.Virtualization != "kvm" || first.Run != "s1-pod-0" {
		t.Fatalf("first message %+v", first)
	}
	if first.SharedMount != "ext4 /dev/vda" || first.SharedServer != "" {
		t.Errorf("started with shared mount %q and server %q, want the fixture's bind mount at /shared and no server", first.SharedMount, first.SharedServer)
	}
	for i, n := range all {
		if want := start.Add(time.Duration(2*(i+1)) * time.Second); !first.NodesReady[n].Equal(want) {
			t.Errorf("%s ready at %v, want %v", n, first.NodesReady[n], want)
		}
	}

	wantResults := []struct {
		benchmark, node, metric string
		seconds                 float64
	}{
		{"cpu", "master", "events_per_second", 2}, {"cpu", "node01", "events_per_second", 2}, {"cpu", "node02", "events_per_second", 2},
		{"mem", "master", "bs1K_mib_per_second", 2}, {"mem", "node01", "bs1K_mib_per_second", 2}, {"mem", "node02", "bs1K_mib_per_second", 2},
		{"mem", "master", "bs1M_mib_per_second", 2}, {"mem", "node01", "bs1M_mib_per_second", 2}, {"mem", "node02", "bs1M_mib_per_second", 2},
		// stress-ng and its cat; the removal is cleanup and not measured.
		{"stress", "master", "bogo_ops_per_second_real", 4}, {"stress", "node01", "bogo_ops_per_second_real", 4}, {"stress", "node02", "bogo_ops_per_second_real", 4},
		{"io", "master", "local_write", 4}, {"io", "node01", "local_write", 4}, {"io", "node02", "local_write", 4},
		{"io", "master", "shared_write", 4}, {"io", "node01", "shared_write", 4}, {"io", "node02", "shared_write", 4},
		{"fio", "master", "read_iops", 4}, {"fio", "node01", "read_iops", 4}, {"fio", "node02", "read_iops", 4},
		{"ping", "master-node01", "rtt_avg_ms", 2}, {"ping", "master-node02", "rtt_avg_ms", 2},
		{"ping", "node01-master", "rtt_avg_ms", 2}, {"ping", "node02-master", "rtt_avg_ms", 2}, {"ping", "node01-node02", "rtt_avg_ms", 2},
		{"net", "master-node01", "bits_per_second", 4}, {"net", "master-node02", "bits_per_second", 4}, {"net", "node01-node02", "bits_per_second", 4},
		{"hpcc", "master", "HPL_Tflops", 2},
	}
	results := ms[1 : len(ms)-1]
	if len(results) != len(wantResults) {
		t.Fatalf("%d results, want %d", len(results), len(wantResults))
	}
	for i, w := range wantResults {
		m := results[i]
		if m.Kind != runplan.KindResult || m.Benchmark != w.benchmark || m.Node != w.node || m.Error != "" || m.Seconds != w.seconds {
			t.Errorf("result %d = %s %s %s %q %vs, want %s %s %vs", i, m.Kind, m.Benchmark, m.Node, m.Error, m.Seconds, w.benchmark, w.node, w.seconds)
			continue
		}
		if !hasMetric(m, w.metric) {
			t.Errorf("result %d (%s on %s) lacks %s: %v", i, m.Benchmark, m.Node, w.metric, m.Metrics)
		}
		// The variant is the metric prefix without its underscore: it tells the controller that
		// bs1K and bs1M on one node are two executions, not one measured twice.
		if want, _, ok := strings.Cut(w.metric, "_"); ok && (w.benchmark == "mem" || w.benchmark == "io") && m.Variant != want {
			t.Errorf("result %d (%s on %s) variant %q, want %q", i, m.Benchmark, m.Node, m.Variant, want)
		} else if w.benchmark != "mem" && w.benchmark != "io" && m.Variant != "" {
			t.Errorf("result %d (%s on %s) variant %q, want none", i, m.Benchmark, m.Node, m.Variant)
		}
		if m.RawTail == "" || len(m.RawTail) > RawTailBytes {
			t.Errorf("result %d raw tail of %d bytes", i, len(m.RawTail))
		}
	}
	// HPCC's raw tail is the end of hpccoutf.txt, which follows mpirun's console output.
	if out := fixture(t, "hpcc-np2.txt"); results[len(results)-1].RawTail != out[len(out)-RawTailBytes:] {
		t.Errorf("hpcc raw tail: %q", results[len(results)-1].RawTail)
	}
	for _, m := range results[:3] {
		if hasMetric(m, "bs1K_events_per_second") {
			t.Errorf("sysbench cpu metrics must not be prefixed")
		}
	}

	done := ms[len(ms)-1]
	// Waiting for nodes, detecting virtualization and reading the Shared target's mount come before
	// the benchmarks; then every command took 2 s.
	benchCalls := len(want) - 5
	if done.Kind != runplan.KindDone || done.BenchmarkSeconds != float64(2*benchCalls) {
		t.Errorf("done = %+v, want %d benchmark seconds", done, 2*benchCalls)
	}
	for _, m := range ms {
		if m.Run != "s1-pod-0" || m.Time.IsZero() {
			t.Errorf("message %s without run or time", m.Kind)
		}
	}
}

func hasMetric(m runplan.Message, name string) bool {
	for _, x := range m.Metrics {
		if x.Name == name {
			return true
		}
	}
	return false
}

func diffLines(got, want []string) string {
	var b strings.Builder
	for i := 0; i < len(got) || i < len(want); i++ {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "! "
		}
		b.WriteString(mark + g + "    | want " + w + "\n")
	}
	return b.String()
}

func TestFailedExecutionDoesNotStopTheRun(t *testing.T) {
	r, exec, msgs := testRunner(t)
	exec.respond = func(node string, argv []string) (reply, bool) {
		switch {
		case argv[0] == "sysbench" && node == "node01":
			return reply{stdout: "sysbench 1.0.20\n", stderr: "FATAL: invalid option\nmore context\n", err: exitError(1)}, true
		case argv[0] == "ping" && node == "node02":
			return reply{stdout: "garbage that is no ping output\n"}, true
		}
		return reply{}, false
	}
	plan := testPlan(t,
		vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}},
		vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing, Ping: &vmbenchv1.PingParams{Pairs: []vmbenchv1.NodePair{"node-master"}}},
	)
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatalf("Run: %v", err)
	}
	got := summarize(*msgs)
	want := []string{
		"started",
		"result cpu master ok",
		"result cpu node01 error=sysbench failed (exit status 1): FATAL: invalid option\nmore context",
		"result cpu node02 ok",
		"result ping node01-master ok",
		"result ping node02-master error=parsing the output: ",
		"done",
	}
	assertSummary(t, got, want)
	failed := (*msgs)[2]
	if len(failed.Metrics) != 0 || !strings.Contains(failed.RawTail, "sysbench 1.0.20") || !strings.Contains(failed.RawTail, "FATAL") {
		t.Errorf("failed result keeps metrics %v or lacks the raw tail %q", failed.Metrics, failed.RawTail)
	}
}

// summarize shortens messages to "kind benchmark node ok|error=...".
func summarize(ms []runplan.Message) []string {
	var out []string
	for _, m := range ms {
		s := string(m.Kind)
		if m.Kind == runplan.KindResult {
			s += " " + m.Benchmark + " " + m.Node
			if m.Error != "" {
				s += " error=" + m.Error
			} else {
				s += " ok"
			}
		}
		out = append(out, s)
	}
	return out
}

// assertSummary compares summaries; a wanted line ending in ": " matches as a prefix.
func assertSummary(t *testing.T, got, want []string) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(want); i++ {
		if strings.HasSuffix(want[i], ": ") {
			ok = strings.HasPrefix(got[i], want[i])
		} else {
			ok = got[i] == want[i]
		}
	}
	if !ok {
		t.Errorf("messages:\n%s", diffLines(got, want))
	}
}

func TestTimeout(t *testing.T) {
	r, exec, msgs := testRunner(t)
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "fio" && node == "master" {
			return reply{block: true}, true
		}
		return reply{}, false
	}
	plan := testPlan(t,
		vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Timeout: dur(50 * time.Millisecond), Fio: &vmbenchv1.FioParams{Target: "Local"}},
	)
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertSummary(t, summarize(*msgs), []string{
		"started",
		"result fio master error=timed out after 50ms",
		"result fio node01 ok",
		"result fio node02 ok",
		"done",
	})
	// The file of the stopped fio is removed all the same.
	cmds := exec.commands()
	if cmds[6] != "master: rm -f "+plan.LocalDir+"/fio.dat" {
		t.Errorf("after the timeout: %q", cmds[6])
	}
}

func TestCanceledRunStops(t *testing.T) {
	r, exec, msgs := testRunner(t)
	ctx, cancel := context.WithCancel(context.Background())
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "sysbench" {
			cancel()
			return reply{err: context.Canceled}, true
		}
		return reply{}, false
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}})
	if err := r.Run(ctx, plan); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
	assertSummary(t, summarize(*msgs), []string{"started"})
}

func TestIperf3WaitsForItsServer(t *testing.T) {
	r, exec, msgs := testRunner(t)
	attempts := 0
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "iperf3" {
			attempts++
			if attempts < 3 {
				return reply{stdout: fixture(t, "iperf3-error-no-server.json")}, true
			}
		}
		return reply{}, false
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3,
		Iperf3: &vmbenchv1.Iperf3Params{Pairs: []vmbenchv1.NodePair{"node-node"}, Port: 5201, ServerPort: 5201}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	assertSummary(t, summarize(*msgs), []string{"started", "result net node01-node02 ok", "done"})
	if attempts != 3 {
		t.Errorf("%d client attempts, want 3", attempts)
	}
}

func TestIperf3RefusedResultsInAnError(t *testing.T) {
	for _, tc := range []struct {
		name         string
		port         int32
		wantAttempts int
	}{
		// A client on another port than the server's measures nothing: no waiting.
		{"wrong port", 5301, 1},
		// A server that never listens: the client gives up after the connect window (2 s per
		// attempt on the fake clock, plus 0.5 s between attempts).
		{"server never listens", 5201, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, exec, msgs := testRunner(t)
			attempts := 0
			exec.respond = func(node string, argv []string) (reply, bool) {
				if argv[0] == "iperf3" {
					attempts++
					return reply{stdout: fixture(t, "iperf3-error-no-server.json")}, true
				}
				return reply{}, false
			}
			plan := testPlan(t, vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3,
				Iperf3: &vmbenchv1.Iperf3Params{Pairs: []vmbenchv1.NodePair{"master-node"}, Port: tc.port, ServerPort: 5201}})
			if err := r.Run(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			ms := *msgs
			for _, m := range ms[1:3] {
				if !strings.Contains(m.Error, "Connection refused") || len(m.Metrics) != 0 {
					t.Errorf("%s: error %q, metrics %v", m.Node, m.Error, m.Metrics)
				}
			}
			if attempts != 2*tc.wantAttempts {
				t.Errorf("%d client attempts for 2 pairs, want %d", attempts, 2*tc.wantAttempts)
			}
		})
	}
}

// A ping that got no reply at all measured nothing: it fails with the cause, while a ping that never
// started (unknown host) fails with ping's own error.
func TestPingWithoutRepliesFails(t *testing.T) {
	r, exec, msgs := testRunner(t)
	lost := "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n\n--- 10.0.0.2 ping statistics ---\n3 packets transmitted, 0 received, 100% packet loss, time 2049ms\n\n"
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "ping" {
			if argv[3] == "10.0.0.2" {
				return reply{stdout: lost, err: exitError(1)}, true
			}
			return reply{stderr: "ping: unknown host", err: exitError(2)}, true
		}
		return reply{}, false
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing,
		Ping: &vmbenchv1.PingParams{Count: 3, Pairs: []vmbenchv1.NodePair{"master-node"}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	assertSummary(t, summarize(*msgs), []string{
		"started",
		"result ping master-node01 error=parsing the output: ping: no reply at all (3 packets transmitted, 0 received, 100% packet loss, time 2049ms): the target does not answer ICMP echo; check the network between the nodes (for VMs, the binding and ICMP in pods)",
		"result ping master-node02 error=ping failed (exit status 2): ping: unknown host",
		"done",
	})
	if ms := (*msgs)[1].Metrics; len(ms) != 0 {
		t.Errorf("metrics %v for a ping without replies", ms)
	}
}

func TestBenchmarksThatCannotRun(t *testing.T) {
	r, _, msgs := testRunner(t)
	plan := testPlan(t,
		vmbenchv1.Benchmark{Name: "no-params", Type: vmbenchv1.BenchmarkSysbenchCPU},
		vmbenchv1.Benchmark{Name: "no-hpcc", Type: vmbenchv1.BenchmarkHPCC},
		vmbenchv1.Benchmark{Name: "odd", Type: "dhrystone"},
		vmbenchv1.Benchmark{Name: "grid", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptr[int32](1000), P: ptr[int32](1), Q: ptr[int32](2)}},
		vmbenchv1.Benchmark{Name: "vm", Type: vmbenchv1.BenchmarkStressNGVM, StressNGVM: &vmbenchv1.StressNGVMParams{Bytes: "250%"}},
		vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}},
	)
	plan.Nodes = plan.Nodes[:2]
	plan.SharedDir = ""
	plan.Benchmarks = append(plan.Benchmarks,
		vmbenchv1.Benchmark{Name: "shared", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: "Shared"}},
		vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing, Ping: &vmbenchv1.PingParams{Pairs: []vmbenchv1.NodePair{"node-node", "master-node"}}},
	)
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	assertSummary(t, summarize(*msgs), []string{
		"started",
		"result no-params  error=benchmark no-params of type sysbench-cpu has no sysbenchCPU parameters",
		"result no-hpcc  error=benchmark no-hpcc of type hpcc has no hpcc parameters",
		`result odd  error=benchmark odd has unknown type "dhrystone"`,
		"result grid master error=hpcc: process grid 1x2 needs 2 ranks, but the run has 4 (2 per node on 2 nodes)",
		"result vm master error=stress-ng-vm: bytes \"250%\" is not a percentage between 1% and 100%",
		"result vm node01 error=stress-ng-vm: bytes \"250%\" is not a percentage between 1% and 100%",
		"result cpu master ok",
		"result cpu node01 ok",
		"result shared master error=target Shared, but the suite has no shared storage",
		"result shared node01 error=target Shared, but the suite has no shared storage",
		"result ping node-node error=node-node: skipped, it needs at least 2 worker nodes and the run has 1",
		"result ping master-node01 ok",
		"done",
	})
}

func TestNodesThatNeverAnswer(t *testing.T) {
	r, exec, msgs := testRunner(t)
	r.WaitTimeout = time.Minute
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "true" && node == "node02" {
			return reply{stderr: "ssh: connect to host 10.0.0.3 port 2222: Connection refused\n", err: exitError(255)}, true
		}
		return reply{}, false
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}})
	err := r.Run(context.Background(), plan)
	if err == nil || !strings.Contains(err.Error(), "node02 (10.0.0.3): true failed (exit status 255): ssh: connect to host 10.0.0.3 port 2222: Connection refused") {
		t.Fatalf("Run = %v", err)
	}
	assertSummary(t, summarize(*msgs), []string{"result   error=nodes did not answer within 1m0s: node02 (10.0.0.3): ", "done"})
	// The ready nodes are probed once, node02 with growing backoff until the minute is over:
	// 6 s for the first round, then 1+2, 2+2, 4+2, 8+2, 15+2, 15+2 s ... past 60 s.
	probes := 0
	for _, c := range exec.commands() {
		if c == "node02: true" {
			probes++
		}
		if strings.HasPrefix(c, "node01") && c != "node01: true" {
			t.Errorf("benchmark ran: %s", c)
		}
	}
	if probes != 7 {
		t.Errorf("node02 probed %d times, want 7", probes)
	}
}

func TestNodesThatAnswerLate(t *testing.T) {
	r, exec, msgs := testRunner(t)
	probes := 0
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "true" && node == "node01" {
			probes++
			if probes < 3 {
				return reply{err: exitError(255)}, true
			}
		}
		return reply{}, false
	}
	plan := testPlan(t)
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	started := (*msgs)[0]
	// master and node02 answer at 2 s and 6 s; node01 on its third probe: after the first round
	// (6 s), 1 s of backoff and a probe (9 s), 2 s of backoff and a probe (13 s).
	base := newClock().Now()
	for n, s := range map[string]int{"master": 2, "node01": 13, "node02": 6} {
		if got := started.NodesReady[n].Sub(base); got != time.Duration(s)*time.Second {
			t.Errorf("%s ready after %v, want %ds", n, got, s)
		}
	}
}

func TestInvalidPlan(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*runplan.Plan)
		want string
	}{
		{"no nodes", func(p *runplan.Plan) { p.Nodes = nil }, "plan: no nodes"},
		{"no run", func(p *runplan.Plan) { p.Run = "" }, "plan: run is empty"},
		{"duplicate", func(p *runplan.Plan) { p.Nodes[2].Name = "node01" }, `plan: node name "node01" appears twice`},
		{"no address", func(p *runplan.Plan) { p.Nodes[1].Address = "" }, "plan: node 1 needs a name and an address"},
		{"no cpu", func(p *runplan.Plan) { p.CPU = 0 }, "plan: cpu is 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, exec, msgs := testRunner(t)
			plan := testPlan(t)
			tc.edit(&plan)
			if err := r.Run(context.Background(), plan); err == nil || err.Error() != tc.want {
				t.Fatalf("Run = %v, want %s", err, tc.want)
			}
			assertSummary(t, summarize(*msgs), []string{"result   error=" + tc.want, "done"})
			if len(exec.commands()) != 0 {
				t.Errorf("ran %v", exec.commands())
			}
		})
	}
}

func TestTail(t *testing.T) {
	if got := tail([]byte("short"), 10); got != "short" {
		t.Errorf("tail = %q", got)
	}
	// "é" is two bytes; cutting inside it must drop the half.
	if got := tail([]byte("aéz"), 2); got != "z" {
		t.Errorf("tail = %q", got)
	}
	if got := tail([]byte("aéz"), 3); got != "éz" {
		t.Errorf("tail = %q", got)
	}
}

func TestNodeReadyCheckGatesTheOtherNodes(t *testing.T) {
	r, exec, msgs := testRunner(t)
	// node01 answers over ssh at once, but its setup finishes only at the third probe.
	checks := 0
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] != "test" {
			return reply{}, false
		}
		if node == "node01" {
			if checks++; checks < 3 {
				return reply{err: exitError(1)}, true
			}
		}
		return reply{}, true
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}})
	plan.NodeReadyCheck = []string{"test", "-e", "/var/lib/cloud/instance/boot-finished"}
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if checks != 3 {
		t.Errorf("node01 checked %d times, want 3", checks)
	}
	cmds := exec.commands()
	if !slices.Contains(cmds, "master: true") || slices.Contains(cmds, "master: test -e /var/lib/cloud/instance/boot-finished") {
		t.Errorf("the master, which runs the runner before its own setup ends, must only be probed with true: %q", cmds)
	}
	// The first benchmark starts after node01 is ready.
	first := slices.IndexFunc(cmds, func(c string) bool { return strings.Contains(c, "sysbench") })
	last := -1
	for i, c := range cmds {
		if c == "node01: test -e /var/lib/cloud/instance/boot-finished" {
			last = i
		}
	}
	if first < last {
		t.Errorf("a benchmark ran before node01 was ready: %q", cmds)
	}
	assertSummary(t, summarize(*msgs)[:1], []string{"started"})
}
