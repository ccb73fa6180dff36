package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/runplan"
)

const testToken = "0123456789abcdef"

// decodeFrames returns the messages framed in log, failing on any bad frame.
func decodeFrames(t *testing.T, log []byte, key string) ([]string, []runplan.Message) {
	t.Helper()
	ds, err := frame.Scan(bytes.NewReader(log), []byte(key))
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	var ids []string
	var msgs []runplan.Message
	for _, d := range ds {
		var m runplan.Message
		if err := json.Unmarshal(d.Payload, &m); err != nil {
			t.Fatalf("message %s: %v", d.ID, err)
		}
		ids = append(ids, d.ID)
		msgs = append(msgs, m)
	}
	return ids, msgs
}

func TestFrameEmitter(t *testing.T) {
	var out bytes.Buffer
	emit := FrameEmitter(&out, []byte(testToken), 2, "s1")
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, m := range []runplan.Message{
		{Kind: runplan.KindStarted, Run: "r", Time: at, NodesReady: map[string]time.Time{"master": at}},
		{Kind: runplan.KindDone, Run: "r", Time: at, BenchmarkSeconds: 12.5},
		{Kind: runplan.KindDone, Time: at},
	} {
		if err := emit(m); err != nil {
			t.Fatal(err)
		}
	}
	ids, msgs := decodeFrames(t, out.Bytes(), testToken)
	if strings.Join(ids, " ") != "r-s1-1 r-s1-2 norun-s1-3" {
		t.Errorf("ids %v", ids)
	}
	if msgs[1].BenchmarkSeconds != 12.5 || !msgs[0].NodesReady["master"].Equal(at) {
		t.Errorf("messages %+v", msgs)
	}
	if n := strings.Count(out.String(), " H r-s1-1 "); n != 2 {
		t.Errorf("header of r-s1-1 written %d times, want 2", n)
	}
}

func writePlan(t *testing.T, plan runplan.Plan) string {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func testCLI(t *testing.T, env map[string]string) (*CLI, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	clock := newClock()
	return &CLI{
		Stdout: &stdout,
		Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
		NewExecutor: func(runplan.Plan) Executor {
			return &fakeExec{t: t, clock: clock, step: time.Second}
		},
		Runner: Runner{Now: clock.Now, Sleep: clock.sleep, AsRoot: func() bool { return false }},
	}, &stdout, &stderr
}

// session is the message-ID session of a runner started at the test clock's start.
func session() string { return strconv.FormatInt(newClock().Now().UnixNano(), 36) }

func TestCLIRunToStdout(t *testing.T) {
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}})
	c, stdout, stderr := testCLI(t, map[string]string{runplan.TokenEnv: testToken + "\n"})
	if code := c.Main(context.Background(), []string{"run", "--plan", writePlan(t, plan)}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	ids, msgs := decodeFrames(t, stdout.Bytes(), testToken)
	sess := "s1-pod-0-" + session()
	if strings.Join(ids, " ") != strings.Join([]string{sess + "-1", sess + "-2", sess + "-3", sess + "-4", sess + "-5"}, " ") {
		t.Errorf("ids %v", ids)
	}
	assertSummary(t, summarize(msgs), []string{"started", "result cpu master ok", "result cpu node01 ok", "result cpu node02 ok", "done"})
	// On stdout every frame is written once; progress goes to stderr.
	if n := strings.Count(stdout.String(), " H "+sess+"-1 "); n != 1 {
		t.Errorf("header written %d times", n)
	}
	if !strings.Contains(stderr.String(), "cpu on node01: ") {
		t.Errorf("no progress on stderr: %s", stderr)
	}
}

func TestCLIRunToFileWithTokenFile(t *testing.T) {
	plan := testPlan(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "ttyS0")
	c, stdout, stderr := testCLI(t, nil)
	code := c.Main(context.Background(), []string{"run", "--plan", writePlan(t, plan), "--output", out, "--token-file", tokenFile})
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout.Len() != 0 {
		t.Errorf("frames on stdout too: %q", stdout)
	}
	log, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, msgs := decodeFrames(t, log, testToken)
	assertSummary(t, summarize(msgs), []string{"started", "done"})
	// A console gets two copies of every frame by default.
	if n := strings.Count(string(log), " H s1-pod-0-"+session()+"-1 "); n != 2 {
		t.Errorf("header written %d times, want 2", n)
	}
}

func TestCLIWithoutKey(t *testing.T) {
	c, stdout, stderr := testCLI(t, nil)
	code := c.Main(context.Background(), []string{"run", "--plan", "/nonexistent/plan.json", "--token-file", filepath.Join(t.TempDir(), "token")})
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if !strings.Contains(stderr.String(), "no key to sign results with: set $VMBENCH_TOKEN or write it to ") || stdout.Len() != 0 {
		t.Errorf("stderr %q, stdout %q", stderr, stdout)
	}
}

func TestCLIUnreadablePlan(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(bad, []byte(`{"run": "s1-pod-0", "nodes": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, want string
	}{
		{"/nonexistent/plan.json", "reading the plan: open /nonexistent/plan.json: no such file or directory"},
		{bad, "reading the plan " + bad + ": unexpected end of JSON input"},
	} {
		c, stdout, _ := testCLI(t, map[string]string{runplan.TokenEnv: testToken})
		if code := c.Main(context.Background(), []string{"run", "--plan", tc.file}); code != ExitRunFailed {
			t.Errorf("exit %d, want %d", code, ExitRunFailed)
		}
		ids, msgs := decodeFrames(t, stdout.Bytes(), testToken)
		if len(ids) != 2 || !regexp.MustCompile(`^norun-[0-9a-z]+-1$`).MatchString(ids[0]) || !strings.HasSuffix(ids[1], "-2") {
			t.Errorf("ids %v, want norun-<session>-1 and -2", ids)
		}
		assertSummary(t, summarize(msgs), []string{"result   error=" + tc.want, "done"})
	}
}

func TestCLIUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"version"}, ExitOK, "vmbench runner dev (go"},
		{nil, ExitUsage, ""},
		{[]string{"fly"}, ExitUsage, ""},
		{[]string{"run", "--repeat", "-1"}, ExitUsage, ""},
		{[]string{"run", "extra"}, ExitUsage, ""},
		{[]string{"run", "--bogus"}, ExitUsage, ""},
	} {
		c, stdout, _ := testCLI(t, map[string]string{runplan.TokenEnv: testToken})
		if code := c.Main(context.Background(), tc.args); code != tc.code || !strings.HasPrefix(stdout.String(), tc.out) {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, stdout)
		}
	}
}
