package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vmbench/vmbench/internal/runplan"
)

// Command is one program to run on a node.
type Command struct {
	// Argv is the program and its arguments; it is never interpreted by a shell on the runner's
	// side, and is quoted for the remote shell when it runs over ssh.
	Argv []string
	// Dir is the working directory, or "" for the executor's default. HPCC needs it: it reads
	// hpccinf.txt from and writes hpccoutf.txt to rank 0's working directory.
	Dir string
}

// Executor runs commands on the nodes of a run. Tests replace it with a fake that returns recorded
// tool outputs.
type Executor interface {
	// Run runs cmd on node with LC_ALL=C and returns its output. err is non-nil when the command
	// could not run or exited non-zero; stdout and stderr hold whatever it wrote anyway. When ctx
	// ends, the command is stopped.
	Run(ctx context.Context, node runplan.Node, cmd Command) (stdout, stderr []byte, err error)
}

// SystemExecutor runs commands on the master with os/exec and on the other nodes through ssh, with
// the passwordless keys that the MPI Operator (pods) or cloud-init (VMs) installed.
type SystemExecutor struct {
	// Master is the name of the node the runner runs on.
	Master string
	// AllLocal runs every node's commands here, never over ssh: the nodes of a plan for this one
	// machine (vmbench host) are names for its roles, not other machines.
	AllLocal bool
	// SSHPort is the port of the other nodes' sshd.
	SSHPort int32
	// KnownHostsFile pins the other nodes' host key; "" leaves ssh's default files.
	KnownHostsFile string
	// StopGrace is how long a stopped command may take to exit after SIGTERM before it is killed.
	StopGrace time.Duration
}

// NewSystemExecutor returns the executor for plan: Nodes[0] runs locally.
func NewSystemExecutor(plan runplan.Plan) *SystemExecutor {
	e := &SystemExecutor{SSHPort: plan.SSHPort, KnownHostsFile: plan.KnownHostsFile, StopGrace: 10 * time.Second}
	if len(plan.Nodes) > 0 {
		e.Master = plan.Nodes[0].Name
	}
	if e.SSHPort == 0 {
		e.SSHPort = runplan.DefaultSSHPort
	}
	return e
}

// Run implements Executor.
func (e *SystemExecutor) Run(ctx context.Context, node runplan.Node, cmd Command) ([]byte, []byte, error) {
	if len(cmd.Argv) == 0 {
		return nil, nil, errors.New("empty command")
	}
	var c *exec.Cmd
	if e.AllLocal || node.Name == e.Master {
		c = exec.CommandContext(ctx, cmd.Argv[0], cmd.Argv[1:]...)
		c.Dir = cmd.Dir
	} else {
		argv := SSHArgv(node.Address, e.SSHPort, e.KnownHostsFile, RemoteCommand(ctx, cmd))
		c = exec.CommandContext(ctx, argv[0], argv[1:]...)
	}
	c.Env = append(toolEnv(os.Environ()), "LC_ALL=C")
	// Its own process group lets a timeout stop the whole tree (mpirun's children, a shell's
	// children), and SIGTERM first lets mpirun tear down its remote ranks.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	c.WaitDelay = e.StopGrace
	// What the command prints is kept up to MaxOutputBytes a stream (capture.go).
	stdout, stderr := newCapture(MaxOutputBytes), newCapture(MaxOutputBytes)
	c.Stdout, c.Stderr = stdout, stderr
	err := c.Run()
	if err == nil {
		err = errors.Join(stdout.err("stdout"), stderr.err("stderr"))
	}
	return stdout.Bytes(), stderr.Bytes(), err
}

// SSHArgv is the ssh command line that runs remote (a shell command line) on address. The node's
// host key must be the one knownHosts pins (strict checking, whatever ssh_config says); an empty
// knownHosts leaves ssh's default known_hosts files. LogLevel=ERROR keeps ssh's informational lines
// out of the tools' stderr, and still prints why a host key was refused.
func SSHArgv(address string, port int32, knownHosts, remote string) []string {
	argv := []string{
		"ssh", "-p", strconv.Itoa(int(port)),
		"-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=yes",
	}
	if knownHosts != "" {
		argv = append(argv, "-o", "UserKnownHostsFile="+knownHosts, "-o", "GlobalKnownHostsFile=/dev/null")
	}
	return append(argv,
		"-o", "ConnectTimeout=10",
		"-o", "LogLevel=ERROR",
		address, "--", remote,
	)
}

// RemoteCommand is the shell command line that runs cmd on another node. When ctx has a deadline,
// coreutils' timeout enforces it on the remote side as well: killing the local ssh client does not
// stop the remote program, which would otherwise keep loading a node that the next benchmark
// measures.
func RemoteCommand(ctx context.Context, cmd Command) string {
	var b strings.Builder
	if cmd.Dir != "" {
		b.WriteString("cd " + ShellQuote(cmd.Dir) + " && ")
	}
	b.WriteString("exec ")
	if deadline, ok := ctx.Deadline(); ok {
		secs := int(math.Ceil(time.Until(deadline).Seconds()))
		fmt.Fprintf(&b, "timeout -k 10 %d ", max(secs, 1))
	}
	b.WriteString("env LC_ALL=C")
	for _, a := range cmd.Argv {
		b.WriteString(" " + ShellQuote(a))
	}
	return b.String()
}

// ShellQuote quotes s for a POSIX shell. Words made only of safe characters stay bare, which keeps
// logged command lines readable.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && !strings.ContainsRune("-_./=:,+%@", r) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// toolEnv is the runner's environment without the run's token: a tool that prints its environment
// (or a crash dump that does) must not put the key that signs the results into its output, which
// the run keeps in its raw outputs.
func toolEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name != runplan.TokenEnv {
			out = append(out, kv)
		}
	}
	return out
}
