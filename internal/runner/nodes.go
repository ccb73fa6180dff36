package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vmbench/vmbench/internal/runplan"
)

// Backoff between rounds of probing the nodes that did not answer yet. Nodes come up within
// seconds (pods) to minutes (VMs under emulation), so the backoff stays short.
const (
	firstProbeBackoff = time.Second
	maxProbeBackoff   = 15 * time.Second
	probeTimeout      = 30 * time.Second
)

// waitForNodes probes every node with `true` (the other nodes with the plan's NodeReadyCheck, if
// any) until all answered or WaitTimeout passed, and returns when each node answered first.
func (r *Runner) waitForNodes(ctx context.Context, plan runplan.Plan) (map[string]time.Time, error) {
	wait := r.WaitTimeout
	if wait <= 0 {
		wait = DefaultWaitTimeout
	}
	deadline := r.now().Add(wait)
	ready := map[string]time.Time{}
	lastErr := map[string]error{}
	for backoff := firstProbeBackoff; ; backoff = min(2*backoff, maxProbeBackoff) {
		for i, n := range plan.Nodes {
			if _, ok := ready[n.Name]; ok {
				continue
			}
			probe := Command{Argv: []string{"true"}}
			if i > 0 && len(plan.NodeReadyCheck) > 0 {
				probe = Command{Argv: plan.NodeReadyCheck}
			}
			pctx, cancel := context.WithTimeout(ctx, probeTimeout)
			stdout, stderr, err := r.Exec.Run(pctx, n, probe)
			cancel()
			if err != nil {
				lastErr[n.Name] = commandError(probe, err, stdout, stderr)
				continue
			}
			ready[n.Name] = r.now()
			r.progressf("node %s (%s) answers", n.Name, n.Address)
		}
		if len(ready) == len(plan.Nodes) {
			return ready, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.now().Before(deadline) {
			var missing []string
			for _, n := range plan.Nodes {
				if _, ok := ready[n.Name]; !ok {
					missing = append(missing, fmt.Sprintf("%s (%s): %v", n.Name, n.Address, lastErr[n.Name]))
				}
			}
			return nil, fmt.Errorf("nodes did not answer within %v: %s", wait, strings.Join(missing, "; "))
		}
		if err := r.sleep(ctx, backoff); err != nil {
			return nil, errors.Join(err, ctx.Err())
		}
	}
}

// virtualization is what systemd-detect-virt sees on the master: "kvm", "qemu", a container
// runtime, or "none", which it prints while exiting non-zero. "" means it could not run.
func (r *Runner) virtualization(ctx context.Context, plan runplan.Plan) string {
	dctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	stdout, _, _ := r.Exec.Run(dctx, plan.Nodes[0], Command{Argv: []string{"systemd-detect-virt"}})
	return strings.TrimSpace(string(stdout))
}
