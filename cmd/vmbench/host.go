package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/runner"
	"github.com/vmbench/vmbench/internal/runplan"
)

const hostSynopsis = "host -f SUITE [--name NAME] [--dir DIR] [--repetitions N] [--json FILE]"

// hostRunner runs a plan on this machine; tests replace it.
var hostRunner = func(ctx context.Context, plan runplan.Plan, emit func(runplan.Message) error, progress io.Writer) error {
	exec := runner.NewSystemExecutor(plan)
	exec.AllLocal = true
	return (&runner.Runner{Exec: exec, Emit: emit, Progress: progress}).Run(ctx, plan)
}

// hostSample is one value measured on this machine.
type hostSample struct {
	Benchmark  string  `json:"benchmark"`
	Metric     string  `json:"metric"`
	Unit       string  `json:"unit"`
	Direction  string  `json:"direction"`
	Repetition int32   `json:"repetition"`
	Node       string  `json:"node"`
	Value      float64 `json:"value"`
}

// runHost implements `vmbench host`: the suite's benchmarks run on this machine, outside Kubernetes,
// through the same runner and parsers as in pods and VMs, for the bare figure that containers and
// VMs cost against. The suite's nodes become roles of this one machine (every command runs here,
// iperf3 and ping over loopback). A saved suite with results gets a column per platform and its
// ratio to this machine.
func runHost(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("host", flag.ContinueOnError)
	flags.SetOutput(stderr)
	file := flags.String("f", "", "the suite: a manifest such as config/samples/suite-quick.yaml, or a saved suite with results to compare against (- reads stdin)")
	name := flags.String("name", "", "which suite, when the file holds several")
	dir := flags.String("dir", "", "scratch directory for iozone, fio (Local and RootFS targets) and HPCC (default: a new directory under $TMPDIR, removed afterwards)")
	reps := flags.Int("repetitions", 0, "how many times to run every benchmark (default: the suite's repetitions)")
	jsonOut := flags.String("json", "", "also write every sample as JSON to this file")
	flags.Usage = func() {
		fmt.Fprintf(stderr, "usage: vmbench %s\n", hostSynopsis)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if *file == "" || flags.NArg() > 0 {
		fmt.Fprintln(stderr, "vmbench: host needs -f SUITE and no other arguments")
		flags.Usage()
		return exitUsage
	}
	if *reps < 0 {
		fmt.Fprintln(stderr, "vmbench: --repetitions must not be negative")
		return exitUsage
	}
	suite, err := readSuiteFile(*file, *name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	if len(suite.Spec.Benchmarks) == 0 {
		fmt.Fprintf(stderr, "vmbench: suite %s has no benchmarks: list some under spec.benchmarks\n", suite.Name)
		return exitError
	}
	repetitions := int32(*reps)
	if repetitions == 0 {
		repetitions = max(suite.Spec.Repetitions, 1)
	}
	scratch := *dir
	if scratch == "" {
		if scratch, err = os.MkdirTemp("", "vmbench-host-"); err != nil {
			fmt.Fprintf(stderr, "vmbench: %v\n", err)
			return exitError
		}
		defer func() { _ = os.RemoveAll(scratch) }()
	} else if scratch, err = filepath.Abs(scratch); err == nil {
		err = os.MkdirAll(scratch, 0o755)
	}
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: scratch directory: %v\n", err)
		return exitError
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	samples, failures, err := runOnHost(ctx, suite, repetitions, scratch, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	if err := writeHostTable(stdout, suite, samples); err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	if *jsonOut != "" {
		if err := writeFile(*jsonOut, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(samples)
		}); err != nil {
			fmt.Fprintf(stderr, "vmbench: %v\n", err)
			return exitError
		}
	}
	for _, f := range failures {
		fmt.Fprintf(stderr, "vmbench: failed: %s\n", f)
	}
	if len(failures) > 0 {
		return exitError
	}
	return exitOK
}

// runOnHost runs every benchmark of suite repetitions times on this machine and returns the samples
// and the failed executions.
func runOnHost(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, repetitions int32, scratch string, progress io.Writer) ([]hostSample, []string, error) {
	benchmarks := suitecontroller.DefaultedBenchmarks(suite)
	names := platform.NodeNames(suite.Spec.Cluster.NodeCount())
	nodes := make([]runplan.Node, len(names))
	for i, n := range names {
		nodes[i] = runplan.Node{Name: n, Address: "localhost"}
	}
	var samples []hostSample
	var failures []string
	for rep := int32(1); rep <= repetitions; rep++ {
		run := platform.Run{
			Suite:      suite,
			Name:       suite.Name + "-host-" + strconv.Itoa(int(rep)),
			Platform:   vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost},
			Repetition: rep,
			Benchmarks: benchmarks,
		}
		plan := platform.NewPlan(run, nodes, filepath.Join(scratch, run.Name), "", nil)
		// This machine has no container layer or guest disk of its own: RootFS is its disk, as Local is.
		plan.RootFSDir = plan.LocalDir
		if err := os.MkdirAll(plan.LocalDir, 0o755); err != nil {
			return nil, nil, err
		}
		emit := func(m runplan.Message) error {
			if m.Kind != runplan.KindResult {
				return nil
			}
			if m.Error != "" {
				what := m.Benchmark
				if what == "" {
					what = "the run"
				}
				failures = append(failures, fmt.Sprintf("%s on %s (repetition %d): %s", what, m.Node, rep, m.Error))
				return nil
			}
			for _, metric := range m.Metrics {
				samples = append(samples, hostSample{Benchmark: m.Benchmark, Metric: metric.Name, Unit: metric.Unit,
					Direction: string(metric.Direction), Repetition: rep, Node: m.Node, Value: metric.Value})
			}
			return nil
		}
		if err := hostRunner(ctx, plan, emit, progress); err != nil {
			// The runner reported why the run could not take place, unless it was stopped: the next
			// repetition would fail alike.
			if ctx.Err() != nil || len(failures) == 0 {
				return nil, nil, fmt.Errorf("run %s: %w", run.Name, err)
			}
			break
		}
	}
	return samples, failures, nil
}

// writeHostTable prints the mean of every metric on this machine and, for every platform of the
// saved suite that measured the same metric, its mean and its ratio to this machine.
func writeHostTable(w io.Writer, suite *vmbenchv1.BenchmarkSuite, samples []hostSample) error {
	type key struct{ benchmark, metric string }
	var order []key
	values := map[key][]float64{}
	units := map[key]string{}
	for _, s := range samples {
		k := key{s.Benchmark, s.Metric}
		if _, ok := values[k]; !ok {
			order = append(order, k)
		}
		values[k] = append(values[k], s.Value)
		units[k] = s.Unit
	}
	var platforms []string
	measured := map[string]map[key]vmbenchv1.MetricSummary{}
	for _, r := range suite.Status.Results {
		for _, m := range r.Metrics {
			k := key{r.Benchmark, m.Name}
			if _, ok := values[k]; !ok || m.N == 0 {
				continue
			}
			label := r.Platform
			if r.Emulated {
				label += " (emulated)"
			}
			if measured[label] == nil {
				measured[label] = map[key]vmbenchv1.MetricSummary{}
				platforms = append(platforms, label)
			}
			measured[label][k] = m
		}
	}
	slices.Sort(platforms)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "BENCHMARK\tMETRIC\tUNIT\tHOST MEAN ± SD")
	for _, p := range platforms {
		fmt.Fprintf(tw, "\t%s\t%s/HOST", p, p)
	}
	fmt.Fprintln(tw)
	for _, k := range order {
		mean, sd := report.MeanStdDev(values[k])
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s ± %s (n=%d)", k.benchmark, k.metric, units[k], num(mean), num(sd), len(values[k]))
		for _, p := range platforms {
			m, ok := measured[p][k]
			switch {
			case !ok:
				fmt.Fprint(tw, "\t-\t-")
			case mean == 0:
				fmt.Fprintf(tw, "\t%s (n=%d)\tn/a", num(m.Mean), m.N)
			default:
				fmt.Fprintf(tw, "\t%s (n=%d)\t%.3f", num(m.Mean), m.N, m.Mean/mean)
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if slices.ContainsFunc(platforms, func(p string) bool { return strings.HasSuffix(p, " (emulated)") }) {
		_, err := fmt.Fprintln(w, report.EmulatedNote)
		return err
	}
	return nil
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
