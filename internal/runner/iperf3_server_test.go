package runner

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// fakeIperf3Env makes the test binary act as iperf3 when it is run under that name (see TestMain):
// FAKE_IPERF3=listen listens on -p after a delay and serves one connection; FAKE_IPERF3=fail exits
// at once, as iperf3 does when its port is taken.
const fakeIperf3Env = "FAKE_IPERF3"

func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "iperf3" {
		os.Exit(fakeIperf3(os.Args[1:], os.Getenv(fakeIperf3Env)))
	}
	os.Exit(m.Run())
}

func fakeIperf3(args []string, mode string) int {
	port := ""
	for i, a := range args {
		if a == "-p" && i+1 < len(args) {
			port = args[i+1]
		}
	}
	if mode != "listen" || port == "" {
		fmt.Fprintln(os.Stderr, "iperf3: error - unable to start listener for connections: Address already in use")
		return 1
	}
	time.Sleep(700 * time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		return 1
	}
	c, err := l.Accept()
	if err == nil {
		_ = c.Close()
	}
	return 0
}

// serverScript runs Iperf3ServerArgv's shell script with the fake iperf3 first on PATH.
func serverScript(t *testing.T, mode string, port int32) (string, error) {
	t.Helper()
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp: the server script reads it (Linux only)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "iperf3")); err != nil {
		t.Fatal(err)
	}
	argv := Iperf3ServerArgv(&vmbenchv1.Iperf3Params{ServerPort: port, Duration: dur(time.Second)})
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), fakeIperf3Env+"="+mode)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func freePort(t *testing.T) int32 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

func TestIperf3ServerStartReturnsOnceItListens(t *testing.T) {
	port := freePort(t)
	out, err := serverScript(t, "listen", port)
	if err != nil {
		t.Fatalf("server start failed: %v: %s", err, out)
	}
	// The fake listens only after 700 ms: a start that returned at once would be refused here.
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(int(port)), time.Second)
	if err != nil {
		t.Fatalf("the start returned but nothing listens on %d: %v", port, err)
	}
	_ = c.Close()
}

func TestIperf3ServerThatExitsFailsTheStart(t *testing.T) {
	port := freePort(t)
	out, err := serverScript(t, "fail", port)
	if err == nil {
		t.Fatalf("server start succeeded with a server that exited: %s", out)
	}
	// Noticed when the server exited, not after the listen wait, which would say "did not listen".
	want := fmt.Sprintf("the iperf3 server on port %d exited before it listened", port)
	if !strings.Contains(out, want) {
		t.Errorf("output %q, want %q", out, want)
	}
}
