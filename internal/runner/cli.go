package runner

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/vmbench/vmbench/internal/runplan"
)

// Version is the runner's version, set at build time with
// -ldflags "-X github.com/vmbench/vmbench/internal/runner.Version=...".
var Version = "dev"

// Exit codes of the runner command.
const (
	ExitOK = 0
	// ExitRunFailed means the run could not take place: unreadable plan, nodes that never
	// answered. Failed benchmarks do not count: they are in the results.
	ExitRunFailed = 1
	// ExitUsage means the command line or the key is wrong, so nothing could be reported.
	ExitUsage = 2
)

// CLI is the runner command. Its fields are what a test replaces; zero values mean the real thing.
type CLI struct {
	Stdout, Stderr io.Writer
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// NewExecutor returns the executor for a plan (NewSystemExecutor when nil).
	NewExecutor func(runplan.Plan) Executor
	// Runner carries the clock and other knobs; its Exec, Emit, Progress and WaitTimeout are set
	// by Main.
	Runner Runner
}

const usage = `usage:
  runner run [--plan FILE] [--output -|FILE] [--repeat N] [--wait-timeout DURATION] [--token-file FILE]
  runner probe-worker --master HOST:PORT --duration DURATION [--load=false]
  runner version
`

// Main runs the command line args (without the program name) and returns the exit code.
func (c *CLI) Main(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.Stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "version":
		fmt.Fprintf(c.Stdout, "vmbench runner %s (%s)\n", Version, runtime.Version())
		return ExitOK
	case "run":
		return c.run(ctx, args[1:])
	case "probe-worker":
		return c.probeWorker(ctx, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(c.Stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(c.Stderr, "runner: unknown command %q\n%s", args[0], usage)
	return ExitUsage
}

func (c *CLI) run(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("runner run", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	planFile := fs.String("plan", runplan.PlanFile, "the run's plan (JSON)")
	output := fs.String("output", "-", `where frames go: "-" for stdout, or a file such as /dev/ttyS0`)
	repeat := fs.Int("repeat", 0, "copies of every frame; 0 means 1 on stdout and 2 elsewhere (a serial console garbles lines)")
	wait := fs.Duration("wait-timeout", DefaultWaitTimeout, "how long to wait for every node to answer over ssh")
	tokenFile := fs.String("token-file", runplan.TokenFile, "the key's file, read when $"+runplan.TokenEnv+" is empty")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "runner run: unexpected arguments %q\n", fs.Args())
		return ExitUsage
	}
	if *repeat < 0 {
		fmt.Fprintln(c.Stderr, "runner run: --repeat must not be negative")
		return ExitUsage
	}

	key, err := c.key(*tokenFile)
	if err != nil {
		fmt.Fprintf(c.Stderr, "runner: %v\n", err)
		return ExitUsage
	}

	out := c.Stdout
	if *output != "-" {
		f, err := os.OpenFile(*output, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintf(c.Stderr, "runner: opening the output: %v\n", err)
			return ExitUsage
		}
		defer func() { _ = f.Close() }()
		out = f
		if *repeat == 0 {
			*repeat = 2
		}
	}
	if *repeat == 0 {
		*repeat = 1
	}

	r := c.Runner
	r.Emit = FrameEmitter(out, key, *repeat, strconv.FormatInt(r.now().UnixNano(), 36))
	r.Progress = c.Stderr
	r.WaitTimeout = *wait
	r.SampleNoise = true
	r.ReadCPUSets = true

	plan, err := readPlan(*planFile)
	if err != nil {
		if err := r.abort(plan.Run, err); err != nil {
			fmt.Fprintf(c.Stderr, "runner: %v\n", err)
		}
		return ExitRunFailed
	}
	r.Exec = c.executor(plan)
	if err := r.Run(ctx, plan); err != nil {
		fmt.Fprintf(c.Stderr, "runner: %v\n", err)
		return ExitRunFailed
	}
	return ExitOK
}

// key is the suite's token from the environment or, in VMs, from a file.
func (c *CLI) key(tokenFile string) ([]byte, error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if k := strings.TrimSpace(getenv(runplan.TokenEnv)); k != "" {
		return []byte(k), nil
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("reading the key: %w", err)
	}
	if k := strings.TrimSpace(string(b)); k != "" {
		return []byte(k), nil
	}
	return nil, fmt.Errorf("no key to sign results with: set $%s or write it to %s", runplan.TokenEnv, tokenFile)
}

func (c *CLI) executor(plan runplan.Plan) Executor {
	if c.NewExecutor != nil {
		return c.NewExecutor(plan)
	}
	return NewSystemExecutor(plan)
}

// readPlan reads the plan; on a JSON error it still returns what was decoded, so that the failure
// can be reported under the run's name when that much was readable.
func readPlan(file string) (runplan.Plan, error) {
	var plan runplan.Plan
	b, err := os.ReadFile(file)
	if err != nil {
		return plan, fmt.Errorf("reading the plan: %w", err)
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		return plan, fmt.Errorf("reading the plan %s: %w", file, err)
	}
	return plan, nil
}

// probeWorker is the migration benchmark's worker pod on a Container platform: the probe's load,
// reported to the run's master (RunProbeWorker) under the pod's hostname; with --load=false, a VM
// run's peer of the in-guest probe, which reports without the load (RunProbePeer).
func (c *CLI) probeWorker(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("runner probe-worker", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	master := fs.String("master", "", "the run's master, host:port")
	duration := fs.Duration("duration", 0, "how long to run")
	load := fs.Bool("load", true, "run the probe's CPU loop (false: report only, as the in-guest probe's peer of a VM run)")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *master == "" || fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "runner probe-worker: --master HOST:PORT is required, and nothing else: %q\n", fs.Args())
		return ExitUsage
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		fmt.Fprintf(c.Stderr, "runner: %v (%v)\n", errNoWorkerName, err)
		return ExitRunFailed
	}
	run := RunProbeWorker
	if !*load {
		run = RunProbePeer
	}
	if err := run(ctx, *master, name, *duration); err != nil {
		fmt.Fprintf(c.Stderr, "runner: %v\n", err)
		return ExitRunFailed
	}
	return ExitOK
}
