package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers"
	"github.com/vmbench/vmbench/internal/kubeconfig"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/suitefile"
	"github.com/vmbench/vmbench/internal/tables"
)

// The report command doubles as a kubectl plugin: installed on PATH as kubectl-vmbench (a copy or a
// symlink), `kubectl vmbench report demo -n bench` runs it with the arguments after "vmbench", which
// main already takes from os.Args[1:]; only the usage text changes its program name.

const reportSynopsis = "report (<suite> [-n namespace] [--kubeconfig path] [--context name] | -f suite.yaml) [--csv FILE] [--json FILE] [--html FILE] [--plots DIR] [--tolerance PERCENT] [--noise-threshold PCT] [--drop-noisy] [--baseline SUITE]"

// exitRegression tells a CI job that --baseline found a metric that got worse beyond --tolerance.
const exitRegression = 3

// clusterTimeout bounds the reads from the API server.
const clusterTimeout = 30 * time.Second

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
	// toleranceSet is true when --tolerance was given: it then overrides spec.report.tolerancePercent.
	toleranceSet bool
}

// runReport implements `vmbench report`.
func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog := programName()
	opts, code, ok := parseReportArgs(args, stdout, stderr, prog)
	if !ok {
		return code
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}

	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	var cluster *clusterReader
	if opts.file == "" || opts.baseline != "" {
		c, err := newClusterReader(opts.kubeconfig, opts.kctx, opts.namespace)
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
		suite, err = cluster.get(ctx, opts.suite)
	}
	if err != nil {
		return fail(err)
	}
	var tableNotes []string
	if opts.file == "" {
		if configMaps, err = cluster.tables(ctx, suite.Name); err != nil {
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
	var buildOpts report.Options
	if opts.toleranceSet {
		buildOpts.Tolerance = pointerTo(opts.tolerance / 100)
	}
	rep, err := report.BuildWith(reported, buildOpts)
	if err != nil {
		return fail(err)
	}
	rep.Notes = append(rep.Notes, report.NoiseNotes(noisy, opts.noiseThreshold, dropped, opts.dropNoisy)...)
	rep.Notes = append(rep.Notes, tableNotes...)
	table := *rep
	table.Rows = report.MarkNoisy(rep.Rows, noisy)

	var comparison *report.Comparison
	if opts.baseline != "" || opts.baselineFile != "" {
		var base *vmbenchv1.BenchmarkSuite
		if opts.baselineFile != "" {
			base, err = readSuiteFile(opts.baselineFile, "", stdin)
		} else {
			base, err = cluster.get(ctx, opts.baseline)
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
			return exitRegression
		}
	}
	return exitOK
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

	usageError := func(format string, a ...any) (reportOptions, int, bool) {
		fmt.Fprintf(stderr, "vmbench: report: "+format+"\n", a...)
		fmt.Fprintf(stderr, "run '%s report -h' for usage\n", prog)
		return o, exitUsage, false
	}
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			reportUsage(stdout, prog)
			return o, exitOK, false
		}
		return usageError("%v", err)
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
	return o, exitOK, true
}

// readSuiteFile decodes a saved suite: one BenchmarkSuite, or a list (kubectl get -o yaml without a
// name) from which name picks one.
func readSuiteFile(path, name string, stdin io.Reader) (*vmbenchv1.BenchmarkSuite, error) {
	return suitefile.Read(path, name, stdin)
}

func pointerTo[T any](v T) *T { return &v }

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

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

// clusterReader reads suites from the API server.
type clusterReader struct {
	client    client.Reader
	namespace string
}

// newClusterReader is replaced by tests with a fake client.
var newClusterReader = func(kubeconfigPath, kubeContext, namespace string) (*clusterReader, error) {
	cfg, namespace, err := kubeconfig.Load(kubeconfigPath, kubeContext, namespace)
	if err != nil {
		return nil, fmt.Errorf("no cluster to read the suite from (use --kubeconfig, KUBECONFIG, or -f to read a file): %v", firstLine(err))
	}
	c, err := client.New(cfg, client.Options{Scheme: controllers.NewScheme()})
	if err != nil {
		return nil, err
	}
	return &clusterReader{client: c, namespace: namespace}, nil
}

// tables reads the ConfigMaps that keep the whole result tables of the suite's runs. An error says
// that they could not be read and the report goes on without them.
func (r *clusterReader) tables(ctx context.Context, suite string) ([]corev1.ConfigMap, error) {
	selector, err := labels.Parse(fmt.Sprintf("%s=%s,%s", vmbenchv1.LabelSuite, suite, vmbenchv1.LabelTablesOf))
	if err != nil {
		return nil, fmt.Errorf("the result tables of suite %q: %w", suite, err)
	}
	list := &corev1.ConfigMapList{}
	if err := r.client.List(ctx, list, client.InNamespace(r.namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("the result tables of suite %q were not read, so their plots are missing (list configmaps in namespace %q): %v",
			suite, r.namespace, firstLine(err))
	}
	return list.Items, nil
}

func (r *clusterReader) get(ctx context.Context, name string) (*vmbenchv1.BenchmarkSuite, error) {
	var suite vmbenchv1.BenchmarkSuite
	err := r.client.Get(ctx, types.NamespacedName{Namespace: r.namespace, Name: name}, &suite)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("benchmarksuite %q not found in namespace %q", name, r.namespace)
	case meta.IsNoMatchError(err):
		return nil, errors.New("this cluster does not know BenchmarkSuites: the vmbench CRDs are not installed")
	case err != nil:
		return nil, fmt.Errorf("reading benchmarksuite %q in namespace %q: %v", name, r.namespace, firstLine(err))
	}
	return &suite, nil
}
