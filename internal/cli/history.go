package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/detect"
	"github.com/vmbench/vmbench/internal/history"
)

// HistorySynopsis is the one-line usage of the history verb.
const HistorySynopsis = "history (<schedule> [-n namespace] [--kubeconfig path] [--context name] | -f records.jsonl) [-o text|json|csv] [--html FILE]"

// trendRuns is how many of the newest ratios the text output lists per series.
const trendRuns = 8

func historyUsage(w io.Writer, prog string) {
	fmt.Fprintf(w, `usage: %[1]s history <schedule> [-n namespace] [--kubeconfig path] [--context name] [-o text|json|csv] [--html FILE]
       %[1]s history [<schedule>] -f records.jsonl [-o text|json|csv] [--html FILE]

Shows the history a BenchmarkSchedule keeps of its finished suites. The text output opens with the
schedule, its records, the parameter hashes seen and the environment changes between consecutive
Complete records (KubeVirt, images, machine type, kernel, OS image, container runtime, kubelet,
architecture, CPU model; the same comparison the manager's findings make, over all the record's runs
and nodes) as "<suite>: field: old → new";
then one line per benchmark, metric and platform: runs, the latest ratio to the baseline with its 95%%
interval, the last %[2]d ratios oldest first, the coefficient of variation of the platform's repetitions
in the latest run, and the change-point verdict on the log-ratio series (the baseline platform: on its
own values): Stable, Changed at <suite> (+x%%, p), Suspected at <suite>, or InsufficientHistory.
Only the records of the newest parameters hash are analysed: another hash measured something else.

input:
  <schedule>              read the schedule's history ConfigMaps <schedule>-history-<n> from the
                          cluster (kubeconfig from --kubeconfig, KUBECONFIG, ~/.kube/config, or the
                          in-cluster service account, as kubectl does)
  -n, --namespace NS      namespace of <schedule> (default: the context's namespace)
  --kubeconfig PATH       kubeconfig file
  --context NAME          kubeconfig context
  -f, --file FILE         read saved records instead, one JSON record a line ("-" for stdin), e.g.
                          kubectl get cm -n bench -l vmbench.io/history-of=nightly \
                            -o jsonpath='{range .items[*]}{.data.records\.jsonl}{end}'

output:
  -o, --output FORMAT     text (default); json or csv: every record's metric rows (suite, scheduled,
                          finished, benchmark, platform, metric, n, meanLog, varLog, ratio, low, high)
  --html FILE             also write one self-contained HTML page: the text, then per series an inline
                          SVG plot of its ratio with the 95%% band, change points (solid red lines)
                          and environment changes (dashed grey lines); it loads nothing from anywhere

exit status: 0 ok, 1 error, 2 usage error.
`, prog, trendRuns)
}

type historyOptions struct {
	schedule, file              string
	namespace, kubeconfig, kctx string
	output, html                string
}

// History runs `vmbench history` with args (after the verb) and returns its exit code.
func History(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, code, ok := parseHistoryArgs(args, stdout, stderr, prog)
	if !ok {
		return code
	}
	fail := failTo(stderr)
	var records []history.Record
	namespace := ""
	if opts.file != "" {
		data, err := readInput(opts.file, stdin)
		if err != nil {
			return fail(err)
		}
		if records, err = history.ParseLines(string(data)); err != nil {
			return fail(fmt.Errorf("%s: %w", opts.file, err))
		}
	} else {
		ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
		defer cancel()
		cluster, err := NewClusterReader(opts.kubeconfig, opts.kctx, opts.namespace)
		if err != nil {
			return fail(err)
		}
		namespace = cluster.Namespace
		if records, err = cluster.History(ctx, opts.schedule); err != nil {
			return fail(err)
		}
	}
	name := opts.schedule
	if name == "" {
		name = opts.file
	}
	if len(records) == 0 {
		return fail(fmt.Errorf("schedule %s has no history records: the schedule has not finished a suite yet "+
			"(a record is written when one of its suites ends; see kubectl get benchmarkschedule %s -o yaml, status.active)", name, name))
	}
	var err error
	switch opts.output {
	case "json":
		err = writeHistoryJSON(stdout, records)
	case "csv":
		err = writeHistoryCSV(stdout, records)
	default:
		err = writeHistoryText(stdout, name, namespace, records)
	}
	if err != nil {
		return fail(err)
	}
	if opts.html != "" {
		if err := writeFile(opts.html, func(w io.Writer) error { return writeHistoryHTML(w, name, namespace, records) }); err != nil {
			return fail(err)
		}
	}
	return ExitOK
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

func parseHistoryArgs(args []string, stdout, stderr io.Writer, prog string) (historyOptions, int, bool) {
	var o historyOptions
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	suiteSourceFlags(fs, &o.file, &o.namespace, &o.kubeconfig, &o.kctx)
	fs.StringVar(&o.output, "o", "text", "")
	fs.StringVar(&o.output, "output", "text", "")
	fs.StringVar(&o.html, "html", "", "")
	usageError := func(format string, a ...any) (historyOptions, int, bool) {
		return o, verbUsageError(stderr, prog, "history", format, a...), false
	}
	positional, code, ok := parseVerbArgs(fs, args, prog, "history", stdout, stderr, historyUsage)
	if !ok {
		return o, code, false
	}
	switch {
	case len(positional) > 1:
		return usageError("one schedule at a time, got %s", strings.Join(positional, " "))
	case len(positional) == 1:
		o.schedule = positional[0]
	}
	switch {
	case o.schedule == "" && o.file == "":
		return usageError("name a schedule, or read its records from a file with -f")
	case o.output != "text" && o.output != "json" && o.output != "csv":
		return usageError("-o takes text, json or csv, got %q", o.output)
	}
	return o, ExitOK, true
}

// History reads the records of the schedule name in the reader's namespace, oldest first.
func (r *ClusterReader) History(ctx context.Context, name string) ([]history.Record, error) {
	var schedule vmbenchv1.BenchmarkSchedule
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: name}, &schedule)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("benchmarkschedule %q not found in namespace %q: list them with kubectl get benchmarkschedules -n %s, or give -n",
			name, r.Namespace, r.Namespace)
	case meta.IsNoMatchError(err):
		return nil, errors.New("this cluster does not know BenchmarkSchedules: the vmbench CRDs are not installed or are older than this vmbench")
	case err != nil:
		return nil, fmt.Errorf("reading benchmarkschedule %q in namespace %q: %v", name, r.Namespace, firstLine(err))
	}
	var list corev1.ConfigMapList
	if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace),
		client.MatchingLabels{vmbenchv1.LabelHistoryOf: name}); err != nil {
		return nil, fmt.Errorf("the history of schedule %q was not read (list configmaps in namespace %q): %v", name, r.Namespace, firstLine(err))
	}
	return history.FromConfigMaps(name, schedule.UID, list.Items)
}

// historyColumns are the columns of -o csv and the keys of -o json, in order.
var historyColumns = []string{"suite", "scheduled", "finished", "benchmark", "platform", "metric", "n", "meanLog", "varLog", "ratio", "low", "high"}

type historyRow struct {
	Suite     string   `json:"suite"`
	Scheduled string   `json:"scheduled"`
	Finished  string   `json:"finished"`
	Benchmark string   `json:"benchmark"`
	Platform  string   `json:"platform"`
	Metric    string   `json:"metric"`
	N         int      `json:"n"`
	MeanLog   *float64 `json:"meanLog"`
	VarLog    *float64 `json:"varLog"`
	Ratio     *float64 `json:"ratio"`
	Low       *float64 `json:"low"`
	High      *float64 `json:"high"`
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func historyRows(records []history.Record) []historyRow {
	var rows []historyRow
	for _, r := range records {
		for _, m := range r.Metrics {
			rows = append(rows, historyRow{Suite: r.Suite, Scheduled: formatTime(r.Scheduled), Finished: formatTime(r.Finished),
				Benchmark: m.Benchmark, Platform: m.Platform, Metric: m.Metric, N: m.N,
				MeanLog: m.MeanLog, VarLog: m.VarLog, Ratio: m.Ratio, Low: m.RatioLow, High: m.RatioHigh})
		}
	}
	return rows
}

func writeHistoryJSON(w io.Writer, records []history.Record) error {
	rows := historyRows(records)
	if rows == nil {
		rows = []historyRow{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func formatOptional(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

func writeHistoryCSV(w io.Writer, records []history.Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(historyColumns); err != nil {
		return err
	}
	for _, r := range historyRows(records) {
		if err := cw.Write([]string{r.Suite, r.Scheduled, r.Finished, r.Benchmark, r.Platform, r.Metric, strconv.Itoa(r.N),
			formatOptional(r.MeanLog), formatOptional(r.VarLog), formatOptional(r.Ratio), formatOptional(r.Low), formatOptional(r.High)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// seriesKey names one series: a metric of a benchmark on a platform.
type seriesKey struct{ benchmark, metric, platform string }

// seriesPoint is one record's entry in a series.
type seriesPoint struct {
	suite    string
	finished time.Time
	metric   history.MetricRecord
	// run is the entry of the detector: the log-ratio to the baseline, or the platform's own
	// logarithms for the baseline; nil when the record lacks what it needs.
	run *detect.Run
}

// buildSeries gathers the series of records, which share one parameters hash.
func buildSeries(records []history.Record) (map[seriesKey][]seriesPoint, []seriesKey) {
	series := map[seriesKey][]seriesPoint{}
	for _, r := range records {
		base := map[[2]string]history.MetricRecord{}
		for _, m := range r.Metrics {
			if m.Platform == r.Baseline {
				base[[2]string{m.Benchmark, m.Metric}] = m
			}
		}
		for _, m := range r.Metrics {
			p := seriesPoint{suite: r.Suite, finished: r.Finished, metric: m}
			if m.MeanLog != nil && m.N >= 1 {
				if m.Platform == r.Baseline {
					p.run = &detect.Run{ID: r.Suite, Time: r.Finished, N: m.N, Mean: *m.MeanLog, Variance: orZero(m.VarLog)}
				} else if b, ok := base[[2]string{m.Benchmark, m.Metric}]; ok && b.MeanLog != nil && b.N >= 1 {
					// The log-ratio in the higher-is-better sense; its squared standard error is the
					// sum of the two sides', carried as a variance over the platform's N.
					d := *m.MeanLog - *b.MeanLog
					if m.Direction == vmbenchv1.LowerIsBetter {
						d = -d
					}
					se2 := orZero(m.VarLog)/float64(m.N) + orZero(b.VarLog)/float64(b.N)
					p.run = &detect.Run{ID: r.Suite, Time: r.Finished, N: m.N, Mean: d, Variance: se2 * float64(m.N)}
					if m.N == 1 {
						p.run.N = 2
						p.run.Variance = se2 * 2
					}
				}
			}
			k := seriesKey{m.Benchmark, m.Metric, m.Platform}
			series[k] = append(series[k], p)
		}
	}
	keys := make([]seriesKey, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.benchmark != b.benchmark {
			return a.benchmark < b.benchmark
		}
		if a.metric != b.metric {
			return a.metric < b.metric
		}
		return a.platform < b.platform
	})
	return series, keys
}

func orZero(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// signedPercent is a ratio as a signed change in percent, with a true minus sign.
func signedPercent(ratio float64) string {
	pct := (ratio - 1) * 100
	if pct < 0 {
		return fmt.Sprintf("−%.1f%%", -pct)
	}
	return fmt.Sprintf("+%.1f%%", pct)
}

func formatP(p float64) string {
	if p < 0.0001 {
		return "p<0.0001"
	}
	return "p=" + strconv.FormatFloat(p, 'g', 2, 64)
}

// analyzeSeries runs the detector on the points that have a run; at maps the index of each run to
// the index of its point.
func analyzeSeries(points []seriesPoint, baseline bool) (a detect.Analysis, at []int, err error) {
	var runs []detect.Run
	for i, p := range points {
		if p.run != nil {
			runs = append(runs, *p.run)
			at = append(at, i)
		}
	}
	sense := detect.HigherIsBetter
	if baseline && len(points) > 0 && points[len(points)-1].metric.Direction == vmbenchv1.LowerIsBetter {
		sense = detect.LowerIsBetter
	}
	a, err = detect.Analyze(runs, sense, detect.DefaultConfig())
	return a, at, err
}

// verdict runs the detector on a series and says its finding in a few words.
func verdict(points []seriesPoint, baseline bool) string {
	a, _, err := analyzeSeries(points, baseline)
	if err != nil {
		return "not analysed: " + err.Error()
	}
	switch a.State {
	case detect.Changed:
		last := a.Changes[len(a.Changes)-1]
		s := fmt.Sprintf("Changed at %s (%s, %s)", last.RunID, signedPercent(last.Ratio), formatP(last.PValue))
		if n := len(a.Changes); n > 1 {
			s += fmt.Sprintf(", %d changes in all", n)
		}
		return s
	case detect.Suspected:
		return fmt.Sprintf("Suspected at %s (%s, %s; %d more runs settle it)", a.Suspect.RunID, signedPercent(a.Suspect.Ratio),
			formatP(a.Suspect.PValue), a.Suspect.ConfirmationRuns)
	case detect.InsufficientHistory:
		return fmt.Sprintf("InsufficientHistory (%d of %d runs)", a.Runs, detect.DefaultConfig().MinHistory)
	}
	return string(a.State)
}

// analysedRecords are the records of the newest parameters hash, the only ones compared.
func analysedRecords(records []history.Record) []history.Record {
	current := records[len(records)-1].ParametersHash
	var out []history.Record
	for _, r := range records {
		if r.ParametersHash == current {
			out = append(out, r)
		}
	}
	return out
}

func writeHistoryText(w io.Writer, name, namespace string, records []history.Record) error {
	where := "schedule " + name
	if namespace != "" {
		where = fmt.Sprintf("schedule %s/%s", namespace, name)
	}
	first, last := records[0], records[len(records)-1]
	fmt.Fprintf(w, "%s: %d records, %s (%s) to %s (%s)\n", where, len(records),
		first.Suite, formatTime(first.Scheduled), last.Suite, formatTime(last.Scheduled))

	// Parameter hashes in order of first appearance; only the newest one's records are analysed.
	var hashes []string
	count := map[string]int{}
	for _, r := range records {
		if count[r.ParametersHash] == 0 {
			hashes = append(hashes, r.ParametersHash)
		}
		count[r.ParametersHash]++
	}
	current := last.ParametersHash
	var parts []string
	for _, h := range hashes {
		label := h
		if label == "" {
			label = "(none)"
		}
		part := fmt.Sprintf("%s (%d records", label, count[h])
		if h == current {
			part += ", analysed"
		}
		parts = append(parts, part+")")
	}
	fmt.Fprintf(w, "parameters: %s\n", strings.Join(parts, ", "))

	changes := environmentChanges(records)
	if len(changes) == 0 {
		fmt.Fprintln(w, "environment changes: none")
	} else {
		fmt.Fprintln(w, "environment changes:")
		for _, c := range changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}

	series, keys := buildSeries(analysedRecords(records))
	fmt.Fprintf(w, "\nratio to baseline %q in the higher-is-better sense with its 95%% interval; last %d ratios, oldest first; CoV of the platform's repetitions in the latest run\n",
		last.Baseline, trendRuns)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tMETRIC\tPLATFORM\tRUNS\tRATIO\t95% INTERVAL\tLAST RATIOS\tCOV\tVERDICT")
	for _, k := range keys {
		points := series[k]
		latest := points[len(points)-1].metric
		baseline := k.platform == last.Baseline
		ratio, interval := "-", "-"
		if latest.Ratio != nil {
			ratio = fmt.Sprintf("%.3f", *latest.Ratio)
		}
		if latest.RatioLow != nil && latest.RatioHigh != nil {
			interval = fmt.Sprintf("[%.3f, %.3f]", *latest.RatioLow, *latest.RatioHigh)
		}
		var trend []string
		for _, p := range points[max(0, len(points)-trendRuns):] {
			if p.metric.Ratio != nil {
				trend = append(trend, fmt.Sprintf("%.2f", *p.metric.Ratio))
			}
		}
		trendText := strings.Join(trend, " ")
		if trendText == "" {
			trendText = "-"
		}
		cov := "-"
		if latest.VarLog != nil && latest.N >= 2 {
			cov = fmt.Sprintf("%.1f%%", math.Sqrt(*latest.VarLog)*100)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", k.benchmark, k.metric, k.platform, len(points),
			ratio, interval, trendText, cov, verdict(points, baseline))
	}
	return tw.Flush()
}

// environmentChanges lists what changed between consecutive Complete records that captured their
// environment, as "<suite>: field: old → new", the suite being the first with the new value. The
// comparison is the manager's own (history.EnvironmentChangesOver), so the CLI shows exactly the
// changes findings and the environment-change metric are built on.
func environmentChanges(records []history.Record) []string {
	var out []string
	for _, c := range history.EnvironmentChangesOver(records) {
		for _, line := range c.Changes {
			out = append(out, records[c.Index].Suite+": "+line)
		}
	}
	return out
}
