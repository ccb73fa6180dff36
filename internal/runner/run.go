// Package runner is the program on a run's master node: it waits for the other nodes, runs every
// benchmark of the plan with the same methodology on pods and VMs, parses the tools' outputs with
// package results and reports runplan.Messages, which cmd/runner writes as frames.
//
// Metric names are those of package results, with two prefixes where one benchmark produces
// several results per node:
//   - sysbench-memory: "bs<block size>_" for every block size, e.g. bs1K_mib_per_second;
//   - iozone with two targets: "local_" or "shared_", e.g. shared_write. With one target the
//     names stay bare, so that they match runs of other suites.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Defaults of a Runner's knobs.
const (
	DefaultWaitTimeout      = 15 * time.Minute
	DefaultBenchmarkTimeout = 30 * time.Minute
	// RawTailBytes is how much of a tool's output a result keeps for people to read.
	RawTailBytes = 4096
)

// Runner runs one plan. Every field but Exec and Emit may be left zero.
type Runner struct {
	// Exec runs the commands.
	Exec Executor
	// Emit reports a message; an error from it stops the run, since nothing could be reported.
	Emit func(runplan.Message) error
	// Now is the clock of messages and measured seconds (time.Now when nil).
	Now func() time.Time
	// Sleep waits between retries (a context-aware time.Sleep when nil).
	Sleep func(ctx context.Context, d time.Duration) error
	// WaitTimeout bounds the wait for all nodes to answer (DefaultWaitTimeout when zero).
	WaitTimeout time.Duration
	// Progress receives human-readable progress lines (discarded when nil).
	Progress io.Writer
	// AsRoot says whether the runner runs as root, which mpirun must be told (os.Geteuid()==0
	// when nil).
	AsRoot func() bool
	// SampleNoise samples each execution's node before and after it runs (package runplan's Noise).
	SampleNoise bool
	// ReadCPUSets reads every node's CPU list before the first benchmark, for the Started message.
	ReadCPUSets bool
}

// Run runs plan with exec and reports through emit, with the default clock and timeouts.
func Run(ctx context.Context, plan runplan.Plan, exec Executor, emit func(runplan.Message) error) error {
	return (&Runner{Exec: exec, Emit: emit}).Run(ctx, plan)
}

// Run waits for every node, reports Started, runs every execution of every benchmark one after the
// other (the nodes of a run may share CPUs, so parallel executions would disturb each other),
// reports each as a Result and finally reports Done. A failed execution becomes a Result with an
// error and never stops the run. Run returns an error only when the run could not take place (an
// invalid plan, nodes that never answered), after reporting it as a Result without a benchmark
// followed by Done, or when ctx ends or Emit fails.
func (r *Runner) Run(ctx context.Context, plan runplan.Plan) error {
	if err := ValidatePlan(plan); err != nil {
		return r.abort(plan.Run, err)
	}
	ready, err := r.waitForNodes(ctx, plan)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return r.abort(plan.Run, err)
	}
	started := runplan.Message{Kind: runplan.KindStarted, NodesReady: ready, Virtualization: r.virtualization(ctx, plan)}
	if r.ReadCPUSets {
		started.CPUSets = r.cpuSets(ctx, plan)
	}
	if err := r.emit(plan.Run, started); err != nil {
		return err
	}

	start := r.now()
	for _, b := range plan.Benchmarks {
		execs, err := r.executions(plan, b)
		if err != nil {
			r.progressf("%s: %v", b.Name, err)
			if err := r.emit(plan.Run, runplan.Message{Kind: runplan.KindResult, Benchmark: b.Name, Error: err.Error()}); err != nil {
				return err
			}
			continue
		}
		for _, e := range execs {
			if err := ctx.Err(); err != nil {
				return err
			}
			msg := r.execute(ctx, plan, b, e)
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.emit(plan.Run, msg); err != nil {
				return err
			}
		}
	}
	return r.emit(plan.Run, runplan.Message{Kind: runplan.KindDone, BenchmarkSeconds: r.now().Sub(start).Seconds()})
}

// abort reports a run that could not take place: a Result without a benchmark that explains why,
// then Done, so that the controller stops waiting. It returns cause, joined with Emit's error.
func (r *Runner) abort(run string, cause error) error {
	r.progressf("run failed: %v", cause)
	if err := r.emit(run, runplan.Message{Kind: runplan.KindResult, Error: cause.Error()}); err != nil {
		return errors.Join(cause, err)
	}
	if err := r.emit(run, runplan.Message{Kind: runplan.KindDone}); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// ValidatePlan checks what the runner relies on: named, addressed, distinct nodes and a CPU count.
func ValidatePlan(plan runplan.Plan) error {
	if plan.Run == "" {
		return errors.New("plan: run is empty")
	}
	if len(plan.Nodes) == 0 {
		return errors.New("plan: no nodes")
	}
	seen := map[string]bool{}
	for i, n := range plan.Nodes {
		if n.Name == "" || n.Address == "" {
			return fmt.Errorf("plan: node %d needs a name and an address", i)
		}
		if seen[n.Name] {
			return fmt.Errorf("plan: node name %q appears twice", n.Name)
		}
		seen[n.Name] = true
	}
	if plan.CPU < 1 {
		return fmt.Errorf("plan: cpu is %d", plan.CPU)
	}
	return nil
}

// execute runs one execution under the benchmark's timeout and turns it into a Result.
func (r *Runner) execute(ctx context.Context, plan runplan.Plan, b vmbenchv1.Benchmark, e execution) runplan.Message {
	timeout := DefaultBenchmarkTimeout
	if b.Timeout != nil && b.Timeout.Duration() > 0 {
		timeout = b.Timeout.Duration()
	}
	var before noiseSnapshot
	sampled := false
	node, own := noiseNode(plan, e.label), ownCgroup(plan)
	if r.SampleNoise {
		before, sampled = r.snapshot(ctx, node, own)
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	start := r.now()
	out, raw, err := e.run(ectx)
	elapsed := r.now().Sub(start)
	timedOut := errors.Is(ectx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	var noise *runplan.Noise
	if sampled {
		if after, ok := r.snapshot(ctx, node, own); ok {
			if n, ok := noiseBetween(before, after); ok {
				n.Node = node.Name
				noise = &n
			}
		}
	}
	if e.cleanup != nil {
		// Cleanup gets its own time: after a timeout the execution's context is already over.
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		e.cleanup(cctx)
		cancel()
	}

	msg := runplan.Message{
		Kind:      runplan.KindResult,
		Benchmark: b.Name,
		Node:      e.label,
		Variant:   strings.TrimSuffix(e.prefix, "_"),
		Seconds:   elapsed.Seconds(),
		RawTail:   tail(raw, RawTailBytes),
		Noise:     noise,
	}
	switch {
	case timedOut:
		msg.Error = "timed out after " + timeout.String()
	case err != nil:
		msg.Error = err.Error()
	default:
		metrics, err := results.Parse(e.tool, out)
		if err != nil {
			msg.Error = "parsing the output: " + err.Error()
			break
		}
		for i := range metrics {
			metrics[i].Name = e.prefix + metrics[i].Name
		}
		msg.Metrics = metrics
	}
	if msg.Error != "" {
		r.progressf("%s on %s: failed after %.1fs: %s", b.Name, e.label, msg.Seconds, msg.Error)
	} else {
		r.progressf("%s on %s: %d metrics in %.1fs", b.Name, e.label, len(msg.Metrics), msg.Seconds)
	}
	return msg
}

func (r *Runner) emit(run string, msg runplan.Message) error {
	msg.Run = run
	msg.Time = r.now()
	if err := r.Emit(msg); err != nil {
		return fmt.Errorf("reporting a %s message: %w", msg.Kind, err)
	}
	return nil
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) sleep(ctx context.Context, d time.Duration) error {
	if r.Sleep != nil {
		return r.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) asRoot() bool {
	if r.AsRoot != nil {
		return r.AsRoot()
	}
	return os.Geteuid() == 0
}

func (r *Runner) progressf(format string, args ...any) {
	if r.Progress == nil {
		return
	}
	fmt.Fprintf(r.Progress, "%s runner: %s\n", r.now().UTC().Format(time.TimeOnly), fmt.Sprintf(format, args...))
}

// tail is the last n bytes of b, cut at a rune boundary so that the JSON of a message stays valid
// UTF-8 text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return string(b)
}

// commandError describes a command that failed, with the end of what it said: stderr, or stdout
// for tools that print their errors there.
func commandError(cmd Command, err error, stdout, stderr []byte) error {
	said := bytes.TrimSpace(stderr)
	if len(said) == 0 {
		said = bytes.TrimSpace(stdout)
	}
	msg := fmt.Sprintf("%s failed (%v)", cmd.Argv[0], err)
	if len(said) > 0 {
		msg += ": " + strings.TrimSpace(tail(said, 512))
	}
	return errors.New(msg)
}
