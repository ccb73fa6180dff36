package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// netReplies answers netperf with the TCP_RR or TCP_STREAM fixture and the netcat sender with dd's
// summary of 1 GiB; the server starts and stops (sh) succeed by default.
func netReplies(t *testing.T) func(node string, argv []string) (reply, bool) {
	return func(node string, argv []string) (reply, bool) {
		joined := strings.Join(argv, " ")
		switch {
		case argv[0] == "netperf" && strings.Contains(joined, "-t TCP_RR"):
			return reply{stdout: fixture(t, "netperf-tcp-rr.txt")}, true
		case argv[0] == "netperf":
			return reply{stdout: fixture(t, "netperf-tcp-stream.txt")}, true
		case argv[0] == "sh" && strings.Contains(joined, "dd if=/dev/zero"):
			return reply{stderr: fixture(t, "netcat-dd-1G.txt")}, true
		}
		return reply{}, false
	}
}

func TestNetperfAndNetcatRunServerThenClientPerPair(t *testing.T) {
	r, exec, msgs := testRunner(t)
	exec.respond = netReplies(t)
	plan := testPlan(t,
		vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf, Netperf: &vmbenchv1.NetperfParams{
			Tests: []vmbenchv1.NetperfTest{vmbenchv1.NetperfTCPRR, vmbenchv1.NetperfTCPStream}, Duration: dur(5 * time.Second),
			Confidence: &vmbenchv1.NetperfConfidence{Level: 99, WidthPercent: 2, MinIterations: 4, MaxIterations: 6},
			Pairs:      []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode}}},
		vmbenchv1.Benchmark{Name: "nc", Type: vmbenchv1.BenchmarkNetcat, Timeout: dur(10 * time.Minute), Netcat: &vmbenchv1.NetcatParams{
			Size: "100Mi", Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToNode}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}

	local := plan.LocalDir
	netserver := strings.Join(NetserverArgv(plan.Benchmarks[0].Netperf, local+"/vmbench-netserver.pid"), " ")
	stopNetserver := strings.Join(stopServerArgv(local+"/vmbench-netserver.pid"), " ")
	receiver := strings.Join(NetcatReceiverArgv(10*time.Minute, local+"/vmbench-nc.pid"), " ")
	stopReceiver := strings.Join(stopServerArgv(local+"/vmbench-nc.pid"), " ")
	var want []string
	for _, n := range []string{"master", "node01", "node02"} {
		want = append(want, n+": true")
	}
	want = append(want, "master: systemd-detect-virt")
	for _, test := range []string{"TCP_RR", "TCP_STREAM"} {
		selectors := "THROUGHPUT,THROUGHPUT_UNITS,MEAN_LATENCY,P50_LATENCY,P90_LATENCY,P99_LATENCY,CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID"
		if test == "TCP_STREAM" {
			selectors = "THROUGHPUT,THROUGHPUT_UNITS,CONFIDENCE_LEVEL,CONFIDENCE_INTERVAL,CONFIDENCE_ITERATION,THROUGHPUT_CONFID"
		}
		for _, dst := range []struct{ name, address string }{{"node01", "10.0.0.2"}, {"node02", "10.0.0.3"}} {
			want = append(want, dst.name+": "+netserver,
				"master: netperf -H "+dst.address+" -p 12865 -t "+test+" -l 5 -I 99,2 -i 6,4 -- -P ,12866 -o "+selectors,
				dst.name+": "+stopNetserver)
		}
	}
	want = append(want, "node02: "+receiver,
		"node01: sh -c LC_ALL=C dd if=/dev/zero bs=1M count=100 | nc -N -v '10.0.0.3' 12867",
		"node02: "+stopReceiver)
	if got := exec.commands(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands differ:\n%s", diffLines(got, want))
	}

	wantResults := []struct{ benchmark, node, variant, metric string }{
		{"np", "master-node01", "tcp_rr", "tcp_rr_transactions_per_second"},
		{"np", "master-node02", "tcp_rr", "tcp_rr_latency_p99_us"},
		{"np", "master-node01", "tcp_stream", "tcp_stream_bits_per_second"},
		{"np", "master-node02", "tcp_stream", "tcp_stream_confidence_achieved"},
		{"nc", "node01-node02", "", "bytes_per_second"},
	}
	results := (*msgs)[1 : len(*msgs)-1]
	if len(results) != len(wantResults) {
		t.Fatalf("%d results, want %d: %+v", len(results), len(wantResults), results)
	}
	for i, w := range wantResults {
		m := results[i]
		if m.Kind != runplan.KindResult || m.Benchmark != w.benchmark || m.Node != w.node || m.Variant != w.variant || m.Error != "" {
			t.Errorf("result %d = %s %s %s variant %q error %q, want %s %s variant %q", i, m.Kind, m.Benchmark, m.Node, m.Variant, m.Error, w.benchmark, w.node, w.variant)
			continue
		}
		if !hasMetric(m, w.metric) {
			t.Errorf("result %d (%s on %s) lacks %s: %v", i, m.Benchmark, m.Node, w.metric, m.Metrics)
		}
	}
}

func TestNetperfWithOneTestKeepsBareNames(t *testing.T) {
	r, exec, msgs := testRunner(t)
	exec.respond = netReplies(t)
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf, Netperf: &vmbenchv1.NetperfParams{
		Tests: []vmbenchv1.NetperfTest{vmbenchv1.NetperfTCPStream}, Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToNode}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	m := (*msgs)[1]
	if m.Node != "node01-node02" || m.Variant != "" || m.Error != "" || !hasMetric(m, "bits_per_second") {
		t.Errorf("result %s variant %q error %q metrics %v, want node01-node02 with bits_per_second", m.Node, m.Variant, m.Error, m.Metrics)
	}
	// The left-out confidence block is the API's default: -I 95,5 -i 10,3.
	if cmds := strings.Join(exec.commands(), "\n"); !strings.Contains(cmds, "-l 10 -I 95,5 -i 10,3 --") {
		t.Errorf("netperf without a confidence block ran as:\n%s", cmds)
	}
}

func TestNetperfWaitsForNetserver(t *testing.T) {
	r, exec, msgs := testRunner(t)
	attempts := 0
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] == "netperf" {
			attempts++
			if attempts < 3 {
				return reply{stderr: fixture(t, "netperf-error-no-server.txt"), err: exitError(255)}, true
			}
			return reply{stdout: fixture(t, "netperf-tcp-rr.txt")}, true
		}
		return reply{}, false
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf, Netperf: &vmbenchv1.NetperfParams{
		Tests: []vmbenchv1.NetperfTest{vmbenchv1.NetperfTCPRR}, Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToNode}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	assertSummary(t, summarize(*msgs), []string{"started", "result np node01-node02 ok", "done"})
	if attempts != 3 {
		t.Errorf("%d client attempts, want 3", attempts)
	}
}

func TestNetworkClientsThatNeverConnectFailWithTheToolsWords(t *testing.T) {
	r, exec, msgs := testRunner(t)
	exec.respond = func(node string, argv []string) (reply, bool) {
		switch {
		case argv[0] == "netperf":
			return reply{stderr: fixture(t, "netperf-error-no-server.txt"), err: exitError(255)}, true
		case argv[0] == "sh" && strings.Contains(strings.Join(argv, " "), "dd if=/dev/zero"):
			return reply{stderr: fixture(t, "netcat-error-refused.txt"), err: exitError(1)}, true
		}
		return reply{}, false
	}
	plan := testPlan(t,
		vmbenchv1.Benchmark{Name: "np", Type: vmbenchv1.BenchmarkNetperf, Netperf: &vmbenchv1.NetperfParams{
			Tests: []vmbenchv1.NetperfTest{vmbenchv1.NetperfTCPRR}, Pairs: []vmbenchv1.NodePair{vmbenchv1.PairNodeToMaster}}},
		vmbenchv1.Benchmark{Name: "nc", Type: vmbenchv1.BenchmarkNetcat, Netcat: &vmbenchv1.NetcatParams{
			Pairs: []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	results := (*msgs)[1 : len(*msgs)-1]
	if len(results) != 4 {
		t.Fatalf("%d results, want 4", len(results))
	}
	for _, m := range results {
		want := "netcat: nc reported an error"
		if m.Benchmark == "np" {
			want = "netperf reported an error: establish control"
		}
		if !strings.Contains(m.Error, want) || len(m.Metrics) != 0 {
			t.Errorf("%s on %s: error %q metrics %v, want an error with %q", m.Benchmark, m.Node, m.Error, m.Metrics, want)
		}
	}
	// Every server started is stopped, also after a failed client.
	starts, stops := 0, 0
	for _, c := range exec.commands() {
		if strings.Contains(c, "nohup timeout") {
			starts++
		}
		if strings.Contains(c, ".pid ] && kill") {
			stops++
		}
	}
	if starts != 4 || stops != 4 {
		t.Errorf("%d servers started and %d stopped, want 4 and 4", starts, stops)
	}
}

func TestNetcatSenderRoundsUpToWholeMiB(t *testing.T) {
	for _, tc := range []struct {
		size string
		want string
	}{
		{"1Gi", "count=1024 "},
		{"1G", "count=954 "}, // 10^9 B is 953.67 MiB
		{"1Mi", "count=1 "},
		{"1500Ki", "count=2 "},
	} {
		argv, err := NetcatSenderArgv(&vmbenchv1.NetcatParams{Size: tc.size}, "10.0.0.2")
		if err != nil {
			t.Fatalf("size %s: %v", tc.size, err)
		}
		if got := strings.Join(argv, " "); !strings.Contains(got, tc.want) {
			t.Errorf("size %s: %s, want %s", tc.size, got, tc.want)
		}
	}
}

// A size the CRD would have refused (a plan written by hand) fails each pair with the reason,
// without starting a receiver.
func TestNetcatWithABadSizeFailsEachPair(t *testing.T) {
	r, exec, msgs := testRunner(t)
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "nc", Type: vmbenchv1.BenchmarkNetcat, Netcat: &vmbenchv1.NetcatParams{
		Size: "64Gi", Pairs: []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode}}})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	for _, m := range (*msgs)[1:3] {
		if !strings.Contains(m.Error, "netcat: size 64Gi is not between 1Mi and 16Gi") {
			t.Errorf("%s: error %q", m.Node, m.Error)
		}
	}
	for _, c := range exec.commands() {
		if strings.Contains(c, "nc -d -l") {
			t.Errorf("a receiver was started for a transfer that cannot run: %s", c)
		}
	}
}
