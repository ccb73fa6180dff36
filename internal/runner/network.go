package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

// iperf3 retry policy: the server was started in the background just before the client, so the
// first connections may be refused until it listens.
const (
	iperf3ConnectWindow = 5 * time.Second
	iperf3RetryInterval = 500 * time.Millisecond
)

func (r *Runner) iperf3(plan runplan.Plan, p *vmbenchv1.Iperf3Params) []execution {
	return pairs(p.Pairs, plan.Nodes, func(pair Pair) execution {
		return execution{label: pair.Label(), tool: results.Iperf3,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				if _, raw, err := r.tool(ctx, pair.Dst, Command{Argv: Iperf3ServerArgv(p)}); err != nil {
					return nil, raw, fmt.Errorf("starting the iperf3 server on %s: %w", pair.Dst.Name, err)
				}
				client := Command{Argv: Iperf3ClientArgv(p, pair.Dst.Address)}
				// Only a client aimed at the server's port waits for it: with another port the
				// refusal is the result.
				retry := or(p.Port, 5201) == or(p.ServerPort, 5201)
				first := r.now()
				for {
					stdout, raw, err := r.tool(ctx, pair.Src, client)
					refused := bytes.Contains(raw, []byte("Connection refused"))
					if !retry || !refused || r.now().Sub(first) >= iperf3ConnectWindow {
						// iperf3 exits 0 even when it could not connect: the parser reports the
						// report's "error" key.
						return stdout, raw, err
					}
					if r.sleep(ctx, iperf3RetryInterval) != nil {
						return stdout, raw, err
					}
				}
			}}
	})
}
