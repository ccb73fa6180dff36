package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmbench/vmbench/internal/runplan"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "''",
		"iperf3":                "iperf3",
		"--filename=/d/fio.dat": "--filename=/d/fio.dat",
		"10.0.0.1:2,10.0.0.2:2": "10.0.0.1:2,10.0.0.2:2",
		"a b":                   "'a b'",
		"it's":                  `'it'\''s'`,
		"$HOME;rm -rf /":        "'$HOME;rm -rf /'",
		"nohup x >/dev/null &":  "'nohup x >/dev/null &'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRemoteCommand(t *testing.T) {
	cmd := Command{Argv: []string{"sh", "-c", "echo 'hi' &"}, Dir: "/work dir"}
	if got, want := RemoteCommand(context.Background(), cmd), `cd '/work dir' && exec env LC_ALL=C sh -c 'echo '\''hi'\'' &'`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if got, want := RemoteCommand(ctx, Command{Argv: []string{"true"}}), "exec timeout -k 10 90 env LC_ALL=C true"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSSHArgv(t *testing.T) {
	want := "ssh -p 2222 -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/etc/ssh/vmbench/known_hosts " +
		"-o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=10 -o LogLevel=ERROR node01.svc -- exec env LC_ALL=C true"
	if got := strings.Join(SSHArgv("node01.svc", 2222, runplan.KnownHostsFile, "exec env LC_ALL=C true"), " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Without a known_hosts of the run's, host keys are still checked, against ssh's own files.
	want = "ssh -p 2222 -o BatchMode=yes -o StrictHostKeyChecking=yes -o ConnectTimeout=10 -o LogLevel=ERROR node01.svc -- true"
	if got := strings.Join(SSHArgv("node01.svc", 2222, "", "true"), " "); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestSystemExecutorLocal(t *testing.T) {
	e := NewSystemExecutor(runplan.Plan{Nodes: []runplan.Node{{Name: "master", Address: "m"}}})
	dir := t.TempDir()
	stdout, stderr, err := e.Run(context.Background(), runplan.Node{Name: "master"},
		Command{Argv: []string{"sh", "-c", `echo "$LC_ALL"; pwd; echo oops >&2; exit 3`}, Dir: dir})
	if exitCode(err) != 3 {
		t.Fatalf("err = %v, want exit status 3", err)
	}
	if got, want := string(stdout), "C\n"+dir+"\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	if string(stderr) != "oops\n" {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestSystemExecutorStopsTheWholeProcessGroup(t *testing.T) {
	e := NewSystemExecutor(runplan.Plan{Nodes: []runplan.Node{{Name: "master", Address: "m"}}})
	// If only the shell were stopped, its background child would keep stdout open until the
	// grace period ran out.
	e.StopGrace = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := e.Run(ctx, runplan.Node{Name: "master"}, Command{Argv: []string{"sh", "-c", "sleep 60 & sleep 60; wait"}})
	if err == nil {
		t.Fatal("no error from a stopped command")
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopping took %v", d)
	}
}

func TestSystemExecutorRemote(t *testing.T) {
	// A stand-in for ssh records its arguments and runs the remote command line with a shell, as
	// sshd would, which checks the quoting end to end.
	bin := t.TempDir()
	argsFile := filepath.Join(bin, "args")
	fakeSSH := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + argsFile + "\nfor last; do :; done\nexec sh -c \"$last\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fakeSSH), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	e := NewSystemExecutor(runplan.Plan{Nodes: []runplan.Node{{Name: "master", Address: "m"}}, KnownHostsFile: "/run/known_hosts"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	stdout, _, err := e.Run(ctx, runplan.Node{Name: "node01", Address: "10.0.0.2"},
		Command{Argv: []string{"sh", "-c", `printf '%s|' "$LC_ALL" "$(pwd)" "$0"`, "it's $x"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(stdout), "C|"+dir+"|it's $x|"; got != want {
		t.Errorf("remote output %q, want %q", got, want)
	}
	args, _ := os.ReadFile(argsFile)
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	wantPrefix := "-p 2222 -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/run/known_hosts -o GlobalKnownHostsFile=/dev/null " +
		"-o ConnectTimeout=10 -o LogLevel=ERROR 10.0.0.2 --"
	if got := strings.Join(lines[:len(lines)-1], " "); got != wantPrefix {
		t.Errorf("ssh arguments %q", got)
	}
	if remote := lines[len(lines)-1]; !strings.HasPrefix(remote, "cd "+dir+" && exec timeout -k 10 ") {
		t.Errorf("remote command %q", remote)
	}
}

func TestSystemExecutorAllLocalNeverUsesSSH(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte("#!/bin/sh\necho ssh was used >&2\nexit 255\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	e := NewSystemExecutor(runplan.Plan{Nodes: []runplan.Node{{Name: "master", Address: "localhost"}, {Name: "node01", Address: "localhost"}}})
	e.AllLocal = true
	dir := t.TempDir()
	stdout, stderr, err := e.Run(context.Background(), runplan.Node{Name: "node01", Address: "localhost"},
		Command{Argv: []string{"sh", "-c", "pwd"}, Dir: dir})
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	if got := string(stdout); got != dir+"\n" {
		t.Errorf("stdout = %q, want %q", got, dir+"\n")
	}
}

// The run's token is in the runner's environment (the launcher reads it from its Secret), but no
// tool's: a tool that prints its environment cannot leak it into the run's raw outputs.
func TestSystemExecutorKeepsTheTokenFromTools(t *testing.T) {
	t.Setenv(runplan.TokenEnv, "secret-token")
	t.Setenv("VMBENCH_TEST_OTHER", "kept")
	e := NewSystemExecutor(runplan.Plan{Nodes: []runplan.Node{{Name: "master", Address: "m"}}})
	stdout, _, err := e.Run(context.Background(), runplan.Node{Name: "master"}, Command{Argv: []string{"env"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stdout), "secret-token") || strings.Contains(string(stdout), runplan.TokenEnv+"=") {
		t.Errorf("the tool saw the run's token:\n%s", stdout)
	}
	if !strings.Contains(string(stdout), "VMBENCH_TEST_OTHER=kept") {
		t.Errorf("the tool lost the rest of the environment:\n%s", stdout)
	}
}
