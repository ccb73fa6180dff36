package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// pairs expands the pair kinds; a kind without pairs becomes one failed execution named after it.
func pairs(kinds []vmbenchv1.NodePair, nodes []runplan.Node, each func(Pair) execution) []execution {
	if len(kinds) == 0 {
		kinds = []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode, vmbenchv1.PairNodeToMaster, vmbenchv1.PairNodeToNode}
	}
	var out []execution
	for _, k := range kinds {
		ps, err := Pairs(k, nodes)
		if err != nil {
			out = append(out, failed(string(k), err))
			continue
		}
		for _, p := range ps {
			out = append(out, each(p))
		}
	}
	return out
}

func (r *Runner) ping(plan runplan.Plan, p *vmbenchv1.PingParams) []execution {
	return pairs(p.Pairs, plan.Nodes, func(pair Pair) execution {
		return execution{label: pair.Label(), tool: results.Ping,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				stdout, stderr, err := r.Exec.Run(ctx, pair.Src, Command{Argv: PingArgv(p, pair.Dst.Address)})
				raw := append(append([]byte{}, stdout...), stderr...)
				// ping exits 1 when no reply came back, which is a measurement (100% loss), not
				// a failure of the tool.
				if err != nil && exitCode(err) != 1 {
					return stdout, raw, commandError(Command{Argv: []string{"ping"}}, err, stdout, stderr)
				}
				return stdout, raw, nil
			}}
	})
}

// exitCode is the exit status carried by err, or -1.
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	return -1
}

// Retry policy of a client whose server was started in the background just before it: the first
// connections may be refused until it listens.
const (
	connectWindow = 5 * time.Second
	retryInterval = 500 * time.Millisecond
)

// untilAccepted runs the client cmd on node, again while its output says refused and the connect
// window lasts; with retry false it runs once, as the refusal is then the result.
func (r *Runner) untilAccepted(ctx context.Context, node runplan.Node, cmd Command, retry bool, refused ...string) ([]byte, []byte, error) {
	first := r.now()
	for {
		stdout, stderr, err := r.Exec.Run(ctx, node, cmd)
		raw := append(append([]byte{}, stdout...), stderr...)
		again := false
		for _, s := range refused {
			again = again || bytes.Contains(raw, []byte(s))
		}
		if !retry || !again || r.now().Sub(first) >= connectWindow || r.sleep(ctx, retryInterval) != nil {
			return stdout, stderr, err
		}
	}
}

func (r *Runner) iperf3(plan runplan.Plan, p *vmbenchv1.Iperf3Params) []execution {
	return pairs(p.Pairs, plan.Nodes, func(pair Pair) execution {
		return execution{label: pair.Label(), tool: results.Iperf3, parse: parseIperf3,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				if _, raw, err := r.tool(ctx, pair.Dst, Command{Argv: Iperf3ServerArgv(p)}); err != nil {
					return nil, raw, fmt.Errorf("starting the iperf3 server on %s: %w", pair.Dst.Name, err)
				}
				client := Command{Argv: Iperf3ClientArgv(p, pair.Dst.Address)}
				// Only a client aimed at the server's port waits for it: with another port the
				// refusal is the result.
				retry := or(p.Port, 5201) == or(p.ServerPort, 5201)
				stdout, stderr, err := r.untilAccepted(ctx, pair.Src, client, retry, "Connection refused")
				raw := append(append([]byte{}, stdout...), stderr...)
				if err != nil {
					return stdout, raw, commandError(client, err, stdout, stderr)
				}
				// iperf3 exits 0 even when it could not connect: the parser reports the report's
				// "error" key.
				return stdout, raw, nil
			}}
	})
}

// netperf runs every test on every pair, each test in its own execution (prefixed tcp_rr_ and
// tcp_stream_ when there are two, so that their confidence figures keep apart). netserver is
// started on the far node before each test and stopped after it.
func (r *Runner) netperf(plan runplan.Plan, p *vmbenchv1.NetperfParams) []execution {
	tests := p.Tests
	if len(tests) == 0 {
		tests = []vmbenchv1.NetperfTest{vmbenchv1.NetperfTCPRR, vmbenchv1.NetperfTCPStream}
	}
	pidFile := path.Join(scratchDir(plan), "vmbench-netserver.pid")
	var out []execution
	for _, test := range tests {
		prefix := ""
		if len(tests) > 1 {
			prefix = strings.ToLower(string(test)) + "_"
		}
		out = append(out, pairs(p.Pairs, plan.Nodes, func(pair Pair) execution {
			return execution{label: pair.Label(), prefix: prefix, tool: results.Netperf,
				run: func(ctx context.Context) ([]byte, []byte, error) {
					if _, raw, err := r.tool(ctx, pair.Dst, Command{Argv: NetserverArgv(p, pidFile)}); err != nil {
						return nil, raw, fmt.Errorf("starting netserver on %s: %w", pair.Dst.Name, err)
					}
					client := Command{Argv: NetperfClientArgv(p, test, pair.Dst.Address)}
					stdout, stderr, err := r.untilAccepted(ctx, pair.Src, client, true, "Connection refused", "are you sure there is a netserver")
					raw := append(append([]byte{}, stdout...), stderr...)
					if err != nil {
						// The parser names netperf's own error better than the exit status does.
						if _, perr := results.ParseNetperf(raw); perr != nil {
							return raw, raw, perr
						}
						return stdout, raw, commandError(client, err, stdout, stderr)
					}
					return stdout, raw, nil
				},
				cleanup: r.stopServer(pair.Dst, pidFile)}
		})...)
	}
	return out
}

// netcat sends a fixed amount of data on every pair to an nc receiver started on the far node.
// dd's summary on stderr is the result, so stdout and stderr are parsed together.
func (r *Runner) netcat(plan runplan.Plan, p *vmbenchv1.NetcatParams, timeout time.Duration) []execution {
	pidFile := path.Join(scratchDir(plan), "vmbench-nc.pid")
	return pairs(p.Pairs, plan.Nodes, func(pair Pair) execution {
		argv, err := NetcatSenderArgv(p, pair.Dst.Address)
		if err != nil {
			return failed(pair.Label(), err)
		}
		return execution{label: pair.Label(), tool: results.Netcat,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				if _, raw, err := r.tool(ctx, pair.Dst, Command{Argv: NetcatReceiverArgv(timeout, pidFile)}); err != nil {
					return nil, raw, fmt.Errorf("starting the nc receiver on %s: %w", pair.Dst.Name, err)
				}
				sender := Command{Argv: argv}
				stdout, stderr, err := r.untilAccepted(ctx, pair.Src, sender, true, "Connection refused")
				raw := append(append([]byte{}, stdout...), stderr...)
				if err != nil {
					// A refused or cut transfer: the parser says which, from nc's and dd's words.
					if _, perr := results.ParseNetcat(raw); perr != nil {
						return raw, raw, perr
					}
					return raw, raw, commandError(Command{Argv: []string{"dd | nc"}}, err, stdout, stderr)
				}
				return raw, raw, nil
			},
			cleanup: r.stopServer(pair.Dst, pidFile)}
	})
}

// stopServer returns a cleanup that stops the server started with pidFile on node.
func (r *Runner) stopServer(n runplan.Node, pidFile string) func(context.Context) {
	return func(ctx context.Context) {
		if _, stderr, err := r.Exec.Run(ctx, n, Command{Argv: stopServerArgv(pidFile)}); err != nil {
			r.progressf("stopping the server of %s on %s: %v %s", pidFile, n.Name, err, bytes.TrimSpace(stderr))
		}
	}
}
