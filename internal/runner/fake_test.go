package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// call is one command the fake executor was asked to run.
type call struct {
	node string
	argv string
	dir  string
}

func (c call) String() string { return c.node + ": " + c.argv }

// reply is what the fake returns for a command.
type reply struct {
	stdout, stderr string
	err            error
	// block makes the command run until its context ends, like a hung tool.
	block bool
	// files are written into the command's working directory, as HPCC writes hpccoutf.txt.
	files map[string]string
}

// fakeExec records commands and answers them with fixtures. Every command advances the fake clock
// by step, so measured seconds are deterministic.
type fakeExec struct {
	t     *testing.T
	clock *fakeClock
	step  time.Duration

	mu    sync.Mutex
	calls []call
	// respond picks the reply; when it returns ok=false the default replies apply.
	respond func(node string, argv []string) (reply, bool)
}

func (f *fakeExec) Run(ctx context.Context, node runplan.Node, cmd Command) ([]byte, []byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{node: node.Name, argv: strings.Join(cmd.Argv, " "), dir: cmd.Dir})
	f.mu.Unlock()
	f.clock.advance(f.step)

	rep, ok := reply{}, false
	if f.respond != nil {
		rep, ok = f.respond(node.Name, cmd.Argv)
	}
	if !ok {
		rep = f.defaultReply(cmd.Argv)
	}
	if rep.block {
		<-ctx.Done()
		return nil, []byte("killed"), ctx.Err()
	}
	for name, content := range rep.files {
		if err := os.WriteFile(filepath.Join(cmd.Dir, name), []byte(content), 0o644); err != nil {
			f.t.Errorf("writing %s: %v", name, err)
		}
	}
	return []byte(rep.stdout), []byte(rep.stderr), rep.err
}

// defaultReply answers every tool with a successful recorded output.
func (f *fakeExec) defaultReply(argv []string) reply {
	switch argv[0] {
	case "true", "mkdir", "rm", "sh":
		return reply{}
	case "systemd-detect-virt":
		return reply{stdout: "kvm\n"}
	case "sysbench":
		if argv[1] == "cpu" {
			return reply{stdout: fixture(f.t, "sysbench-cpu.txt")}
		}
		if strings.Contains(strings.Join(argv, " "), "block-size=1M") {
			return reply{stdout: fixture(f.t, "sysbench-memory-1M-t1.txt")}
		}
		return reply{stdout: fixture(f.t, "sysbench-memory-1K-t1.txt")}
	case "stress-ng":
		if argv[1] == "--vm" {
			return reply{stderr: fixture(f.t, "stress-ng-vm-metrics-yaml.txt")}
		}
		return reply{stderr: fixture(f.t, "stress-ng-cpu-matrixprod-yaml.txt")}
	case "cat":
		if argv[1] == "/proc/self/mountinfo" {
			return reply{stdout: fixture(f.t, "mountinfo-bind-shared.txt")}
		}
		return reply{stdout: fixture(f.t, "stress-ng-cpu-matrixprod-yaml.yaml")}
	case "iozone":
		return reply{stdout: fixture(f.t, "iozone-i0i1i2-r64k-s256M-R.txt")}
	case "fio":
		return reply{stdout: fixture(f.t, "fio-randread-4k-qd16.json")}
	case "ping":
		return reply{stdout: fixture(f.t, "ping-c10-loopback.txt")}
	case "iperf3":
		return reply{stdout: fixture(f.t, "iperf3-tcp-5s.json")}
	case "mpirun":
		return reply{files: map[string]string{"hpccoutf.txt": fixture(f.t, "hpcc-np2.txt")}}
	}
	f.t.Errorf("unexpected command %q", argv)
	return reply{err: fmt.Errorf("unexpected command")}
}

func (f *fakeExec) commands() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.String())
	}
	return out
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// sleep advances the clock instead of waiting.
func (c *fakeClock) sleep(_ context.Context, d time.Duration) error {
	c.advance(d)
	return nil
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testPlan is a three-node run whose benchmarks are set by the test.
func testPlan(t *testing.T, benchmarks ...vmbenchv1.Benchmark) runplan.Plan {
	return runplan.Plan{
		Run: "s1-pod-0",
		CPU: 2,
		Nodes: []runplan.Node{
			{Name: "master", Address: "10.0.0.1"},
			{Name: "node01", Address: "10.0.0.2"},
			{Name: "node02", Address: "10.0.0.3"},
		},
		MemoryBytes: 2 << 30,
		LocalDir:    t.TempDir(),
		SharedDir:   "/shared",
		SSHPort:     2222,
		Benchmarks:  benchmarks,
	}
}

// testRunner returns a runner with a fake clock and executor, collecting the messages.
func testRunner(t *testing.T) (*Runner, *fakeExec, *[]runplan.Message) {
	clock := newClock()
	exec := &fakeExec{t: t, clock: clock, step: 2 * time.Second}
	var msgs []runplan.Message
	r := &Runner{
		Exec:   exec,
		Emit:   func(m runplan.Message) error { msgs = append(msgs, m); return nil },
		Now:    clock.Now,
		Sleep:  clock.sleep,
		AsRoot: func() bool { return false },
	}
	return r, exec, &msgs
}

func dur(d time.Duration) *vmbenchv1.Duration { return vmbenchv1.DurationOf(d) }

func ptr[T any](v T) *T { return &v }
