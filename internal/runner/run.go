// Package runner is the program on a run's master node: it waits for the other nodes, runs every
// benchmark of the plan with the same methodology on pods and VMs, parses the tools' outputs with
// package results and reports runplan.Messages, which cmd/runner writes as frames.
//
// Metric names are those of package results, with two prefixes where one benchmark produces
// several results per node:
//   - sysbench-memory: "bs<block size>_" for every block size, e.g. bs1K_mib_per_second;
//   - iozone with two or three targets: "local_", "rootfs_" or "shared_", e.g. shared_write. With
//     one target the names stay bare, so that they match runs of other suites.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
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
	// Probe runs the migration benchmark's probe (RunProbe when nil).
	Probe func(ctx context.Context, d time.Duration, schedule []vmbenchv1.DirtyRateStep) ([]byte, error)
	// ReceiveProbe receives a Container run's probe worker's reports (ReceiveProbe when nil).
	ReceiveProbe func(ctx context.Context, addr string, d time.Duration, started func() error) ([]byte, error)

	// sharedErrs is, per node, why the Shared target could not be made ready there, set by Run
	// before the first benchmark: every execution on that target and node reports it.
	sharedErrs map[string]error
}

// Run runs plan with exec and reports through emit, with the default clock and timeouts.
func Run(ctx context.Context, plan runplan.Plan, exec Executor, emit func(runplan.Message) error) error {
	return (&Runner{Exec: exec, Emit: emit}).Run(ctx, plan)
}

// Run waits for every node, reports Started, runs every execution of every benchmark one after the
// other (the nodes of a run may share CPUs, so parallel executions would disturb each other),
// reports each as a Result and finally reports Done. A benchmark with concurrency AllNodes is the
// exception: it runs on every node at the same moment, on purpose (see batches). A failed execution becomes a Result with an
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
	started.SharedServer, started.SharedMount, r.sharedErrs = r.prepareShared(ctx, plan)
	if err := ctx.Err(); err != nil {
		return err
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
		for _, batch := range batches(b, execs) {
			if err := ctx.Err(); err != nil {
				return err
			}
			msgs := r.execute(ctx, plan, b, batch)
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, msg := range msgs {
				if err := r.emit(plan.Run, msg); err != nil {
					return err
				}
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

// batches groups a benchmark's executions into the sets that run at the same moment: each alone,
// or with concurrency AllNodes, the executions of one variant (block size, target) on all nodes.
func batches(b vmbenchv1.Benchmark, execs []execution) [][]execution {
	var out [][]execution
	together := allNodes(b)
	for i, e := range execs {
		if together && i > 0 && execs[i-1].prefix == e.prefix {
			out[len(out)-1] = append(out[len(out)-1], e)
			continue
		}
		out = append(out, []execution{e})
	}
	return out
}

// allNodes says whether b runs on every node at the same moment.
func allNodes(b vmbenchv1.Benchmark) bool {
	return b.Concurrency == vmbenchv1.ConcurrencyAllNodes && b.Type.RunsPerNode()
}

// outcome is what one execution returned.
type outcome struct {
	out, raw []byte
	err      error
	elapsed  time.Duration
	timedOut bool
	noise    *runplan.Noise
}

// execute runs a batch of executions at the same moment, each under the benchmark's timeout, and
// turns each into a Result, in batch order. With noise sampling, every node is sampled before the
// first execution starts and after the last one ended, so that each node's noise covers the whole
// time the batch loaded the nodes.
func (r *Runner) execute(ctx context.Context, plan runplan.Plan, b vmbenchv1.Benchmark, batch []execution) []runplan.Message {
	timeout := DefaultBenchmarkTimeout
	if b.Timeout != nil && b.Timeout.Duration() > 0 {
		timeout = b.Timeout.Duration()
	}
	own := ownCgroup(plan)
	before := make([]noiseSnapshot, len(batch))
	sampled := make([]bool, len(batch))
	if r.SampleNoise {
		for i, e := range batch {
			before[i], sampled[i] = r.snapshot(ctx, noiseNode(plan, e.label), own)
		}
	}
	outcomes := make([]outcome, len(batch))
	if len(batch) == 1 {
		outcomes[0] = r.runExecution(ctx, timeout, batch[0])
	} else {
		var wg sync.WaitGroup
		for i, e := range batch {
			wg.Go(func() { outcomes[i] = r.runExecution(ctx, timeout, e) })
		}
		wg.Wait()
	}
	for i, e := range batch {
		if !sampled[i] {
			continue
		}
		node := noiseNode(plan, e.label)
		if after, ok := r.snapshot(ctx, node, own); ok {
			if n, ok := noiseBetween(before[i], after); ok {
				n.Node = node.Name
				outcomes[i].noise = &n
			}
		}
	}
	msgs := make([]runplan.Message, len(batch))
	for i, e := range batch {
		if e.cleanup != nil {
			// Cleanup gets its own time: after a timeout the execution's context is already over.
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			e.cleanup(cctx)
			cancel()
		}
		msgs[i] = r.result(b, e, timeout, outcomes[i])
		msgs[i].Concurrent = allNodes(b)
	}
	return msgs
}

// runExecution runs e under timeout.
func (r *Runner) runExecution(ctx context.Context, timeout time.Duration, e execution) outcome {
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := r.now()
	out, raw, err := e.run(ectx)
	return outcome{out: out, raw: raw, err: err, elapsed: r.now().Sub(start),
		timedOut: errors.Is(ectx.Err(), context.DeadlineExceeded) && ctx.Err() == nil}
}

// result turns what an execution returned into its Result.
func (r *Runner) result(b vmbenchv1.Benchmark, e execution, timeout time.Duration, o outcome) runplan.Message {
	msg := runplan.Message{
		Kind:      runplan.KindResult,
		Benchmark: b.Name,
		Node:      e.label,
		Variant:   strings.TrimSuffix(e.prefix, "_"),
		Seconds:   o.elapsed.Seconds(),
		RawTail:   tail(o.raw, RawTailBytes),
		Noise:     o.noise,
	}
	switch {
	case o.timedOut:
		msg.Error = "timed out after " + timeout.String()
	case o.err != nil:
		msg.Error = o.err.Error()
	default:
		parse := e.parse
		if parse == nil {
			parse = func(out []byte) (parsed, error) {
				ms, err := results.Parse(e.tool, out)
				return parsed{metrics: ms}, err
			}
		}
		p, err := parse(o.out)
		if err != nil {
			msg.Error = "parsing the output: " + err.Error()
			break
		}
		for i := range p.metrics {
			p.metrics[i].Name = e.prefix + p.metrics[i].Name
		}
		msg.Metrics, msg.Table = p.metrics, p.table
		if p.tableErr != nil {
			msg.TableError = p.tableErr.Error()
		}
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
