package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/suitefile"
	"github.com/vmbench/vmbench/internal/tables"
)

// The report command doubles as a kubectl plugin: installed on PATH as kubectl-vmbench (a copy or a
// symlink), `kubectl vmbench report demo -n bench` runs it with the arguments after "vmbench", which
// main already takes from os.Args[1:]; only the usage text changes its program name.

// ReportSynopsis is the one-line usage of the report verb.
const ReportSynopsis = "report (<suite> [-n namespace] [--kubeconfig path] [--context name] | -f suite.yaml) [--csv FILE] [--json FILE] [--html FILE] [--plots DIR] [--tolerance PERCENT] [--noise-threshold PCT] [--drop-noisy] [--drop-migrated] [--baseline SUITE]"

func reportUsage(w io.Writer, prog string) {
	fmt.Fprintf(w, `usage: %[1]s report <suite> [-n namespace] [--kubeconfig path] [--context name] [output flags]
       %[1]s report -f suite.yaml [output flags]

Compares every platform of a BenchmarkSuite with its baseline platform. It opens with one sentence per
platform (the geometric mean of its ratios with a 95%% interval, its verdicts, its worst metric), a
context line and a table per benchmark and resource; then, per metric: mean ± 95%% CI (Student t) and
coefficient of variation over repetitions (a repetition's nodes are averaged first), the ratio in the
higher-is-better sense with its 95%% interval (Welch on the log scale), Welch's t-test with its p-value
raw and Holm-Bonferroni-adjusted over every comparison of the report, the minimum detectable effect
(power 0.8) and a verdict: slower, faster, equivalent or inconclusive. Emulated VM rows are marked
"(emulated)".

input:
  <suite>                 read the suite from the cluster (kubeconfig from --kubeconfig, KUBECONFIG,
                          ~/.kube/config, or the in-cluster service account, as kubectl does)
  -n, --namespace NS      namespace of <suite> and --baseline (default: the context's namespace)
  --kubeconfig PATH       kubeconfig file
  --context NAME          kubeconfig context
  -f, --file FILE         read a saved suite instead (YAML or JSON, "-" for stdin), e.g. the output of
                          kubectl get benchmarksuite demo -o yaml; with the suite's ConfigMaps beside it
                          (a List, or more YAML documents) the plots from its whole result tables too:
                          { kubectl get benchmarksuite demo -o yaml; echo ---;
                            kubectl get configmap -l vmbench.io/suite=demo,vmbench.io/tables-of -o yaml; }

output:
  --csv FILE              also write the table's rows as CSV
  --json FILE             also write the table's rows as a JSON array
  --html FILE             also write the whole report as one self-contained HTML page (inline SVG
                          forest plots and CSS; it loads nothing from anywhere)
  --plots DIR             write PNG plots into DIR: means and box plots per benchmark, HPL over N,
                          iozone heatmaps (auto mode), iperf3 samples and bandwidth over time
  --svg                   with --plots, an SVG next to every PNG

noise:
  --noise-threshold PCT   mark rows with samples measured while the node's noise (CPU used by others
                          plus steal in pods, steal in VMs) exceeded PCT percent of its CPU (default 10)
  --drop-noisy            leave those samples out of the statistics, and say how many
  --drop-migrated         leave out the samples measured during a live migration of a run's VMs
                          (samples[].migrated), and say how many

verdicts:
  --tolerance PERCENT     the band around a ratio of 1 inside which a metric whose whole 95%% interval
                          falls is "equivalent" (default: the suite's spec.report.tolerancePercent, else 5);
                          with --baseline, also how far a metric may move in its bad direction

regression gate:
  --baseline SUITE        compare with another suite in the cluster, metric by metric
  --baseline-file FILE    compare with a saved suite
                          exit status 3 when any metric regressed beyond --tolerance

exit status: 0 ok, 1 error, 2 usage error, 3 regression against the baseline suite.

As a kubectl plugin: put the binary on PATH as kubectl-vmbench (a copy or a symlink), then
  kubectl vmbench report demo -n bench
`, prog)
}

type reportOptions struct {
	suite, file                 string
	namespace, kubeconfig, kctx string
	csv, json, plots, html      string
	svg                         bool
	baseline, baselineFile      string
	tolerance                   float64
	noiseThreshold              float64
	dropNoisy                   bool
	dropMigrated                bool
	// toleranceSet is true when --tolerance was given: it then overrides spec.report.tolerancePercent.
	toleranceSet bool
}

// Report runs `vmbench report` with args (after the verb) and returns its exit code; prog is the
// program's name for the usage texts.
func Report(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, code, ok := parseReportArgs(args, stdout, stderr, prog)
	if !ok {
		return code
	}
	fail := failTo(stderr)

	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()
	var cluster *ClusterReader
	if opts.file == "" || opts.baseline != "" {
		c, err := NewClusterReader(opts.kubeconfig, opts.kctx, opts.namespace)
		if err != nil {
			return fail(err)
		}
		cluster = c
	}

	var suite *vmbenchv1.BenchmarkSuite
	var configMaps []corev1.ConfigMap
	var err error
	if opts.file != "" {
		var saved suitefile.Saved
		saved, err = suitefile.ReadAll(opts.file, opts.suite, stdin)
		suite, configMaps = saved.Suite, saved.ConfigMaps
	} else {
		suite, err = cluster.Get(ctx, opts.suite)
	}
	if err != nil {
		return fail(err)
	}
	var tableNotes []string
	if opts.file == "" {
		if configMaps, err = cluster.Tables(ctx, suite.Name); err != nil {
			tableNotes = append(tableNotes, err.Error())
		}
	}
	stored, problems := tables.Read(suite.Name, suite.UID, configMaps)
	tableNotes = append(tableNotes, report.TableNotes(suite, stored, problems)...)
	noisy := report.NoisySamples(suite, opts.noiseThreshold)
	dropped := 0
	reported := suite
	if opts.dropNoisy {
		reported, dropped, noisy = report.DropNoisy(suite, opts.noiseThreshold)
	}
	migratedDropped := 0
	if opts.dropMigrated {
		reported, migratedDropped, _ = report.DropMigrated(reported)
	}
	var buildOpts report.Options
	if opts.toleranceSet {
		buildOpts.Tolerance = pointerTo(opts.tolerance / 100)
	}
	rep, err := report.BuildWith(reported, buildOpts)
	if err != nil {
		return fail(err)
	}
	rep.Notes = append(rep.Notes, report.NoiseNotes(noisy, opts.noiseThreshold, dropped, opts.dropNoisy)...)
	rep.Notes = append(rep.Notes, report.MigrationNotes(suite, opts.dropMigrated, migratedDropped)...)
	rep.Notes = append(rep.Notes, tableNotes...)
	table := *rep
	table.Rows = report.MarkNoisy(rep.Rows, noisy)

	var comparison *report.Comparison
	if opts.baseline != "" || opts.baselineFile != "" {
		var base *vmbenchv1.BenchmarkSuite
		if opts.baselineFile != "" {
			base, err = suitefile.Read(opts.baselineFile, "", stdin)
		} else {
			base, err = cluster.Get(ctx, opts.baseline)
		}
		if err != nil {
			return fail(fmt.Errorf("baseline suite: %w", err))
		}
		if comparison, err = report.Compare(suite, base, rep.Tolerance); err != nil {
			return fail(err)
		}
	}

	if err := table.WriteTable(stdout); err != nil {
		return fail(err)
	}
	if opts.csv != "" {
		if err := writeFile(opts.csv, rep.WriteCSV); err != nil {
			return fail(err)
		}
	}
	if opts.json != "" {
		if err := writeFile(opts.json, rep.WriteJSON); err != nil {
			return fail(err)
		}
	}
	if opts.html != "" {
		if err := writeFile(opts.html, rep.WriteHTML); err != nil {
			return fail(err)
		}
	}
	if opts.plots != "" {
		out, err := report.WritePlots(reported, report.PlotOptions{Dir: opts.plots, SVG: opts.svg, Tolerance: buildOpts.Tolerance, Tables: stored})
		if out != nil {
			for _, f := range out.Files {
				fmt.Fprintf(stderr, "vmbench: wrote %s\n", f)
			}
			for _, n := range out.Notes {
				fmt.Fprintf(stderr, "vmbench: note: %s\n", n)
			}
		}
		if err != nil {
			return fail(fmt.Errorf("plots: %w", err))
		}
	}
	if comparison != nil {
		fmt.Fprintln(stdout)
		if err := comparison.WriteTable(stdout); err != nil {
			return fail(err)
		}
		if comparison.Regressions() > 0 {
			return ExitRegression
		}
	}
	return ExitOK
}

// parseReportArgs accepts flags before and after the suite name, as kubectl does.
func parseReportArgs(args []string, stdout, stderr io.Writer, prog string) (reportOptions, int, bool) {
	var o reportOptions
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	suiteSourceFlags(fs, &o.file, &o.namespace, &o.kubeconfig, &o.kctx)
	fs.StringVar(&o.csv, "csv", "", "")
	fs.StringVar(&o.json, "json", "", "")
	fs.StringVar(&o.plots, "plots", "", "")
	fs.StringVar(&o.html, "html", "", "")
	fs.BoolVar(&o.svg, "svg", false, "")
	fs.StringVar(&o.baseline, "baseline", "", "")
	fs.StringVar(&o.baselineFile, "baseline-file", "", "")
	fs.Float64Var(&o.tolerance, "tolerance", report.DefaultTolerance*100, "")
	fs.Float64Var(&o.noiseThreshold, "noise-threshold", report.DefaultNoiseThreshold, "")
	fs.BoolVar(&o.dropNoisy, "drop-noisy", false, "")
	fs.BoolVar(&o.dropMigrated, "drop-migrated", false, "")

	usageError := func(format string, a ...any) (reportOptions, int, bool) {
		return o, verbUsageError(stderr, prog, "report", format, a...), false
	}
	positional, code, ok := parseVerbArgs(fs, args, prog, "report", stdout, stderr, reportUsage)
	if !ok {
		return o, code, false
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "tolerance" {
			o.toleranceSet = true
		}
	})
	switch {
	case len(positional) > 1:
		return usageError("one suite at a time, got %s", strings.Join(positional, " "))
	case len(positional) == 1:
		o.suite = positional[0]
	}
	switch {
	case o.suite == "" && o.file == "":
		return usageError("name a suite, or read one from a file with -f")
	case o.baseline != "" && o.baselineFile != "":
		return usageError("--baseline and --baseline-file are alternatives, give one")
	case o.svg && o.plots == "":
		return usageError("--svg needs --plots DIR")
	case o.tolerance < 0:
		return usageError("--tolerance must not be negative, got %g", o.tolerance)
	case o.noiseThreshold < 0 || o.noiseThreshold > 100:
		return usageError("--noise-threshold is a percentage of a node's CPU, between 0 and 100, got %g", o.noiseThreshold)
	case o.file == "-" && o.baselineFile == "-":
		return usageError("only one of -f and --baseline-file can read stdin")
	}
	return o, ExitOK, true
}

func pointerTo[T any](v T) *T { return &v }

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
