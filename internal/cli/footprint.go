package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/kubeconfig"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// `vmbench footprint` prints what the manager itself cost while a suite ran, from the process_*
// metrics that controller-runtime's registry serves on the manager's metrics endpoint and that a
// Prometheus scrapes: peak resident memory, and CPU on average and at the busiest minute.

// FootprintSynopsis is the one-line usage of the footprint verb.
const FootprintSynopsis = "footprint (<suite> [-n namespace] [--kubeconfig path] [--context name] | -f suite.yaml) [--prometheus NS/SERVICE:PORT | --prometheus-url URL] [--job NAME] [-o text|json]"

const (
	// defaultPrometheus is the Prometheus of hack/kind/prometheus.sh, reached through the API
	// server's service proxy.
	defaultPrometheus = "vmbench-monitoring/prometheus:9090"
	// defaultJob is the scrape job of the manager in that Prometheus; a ServiceMonitor's job is the
	// Service's name (vmbench-metrics).
	defaultJob = "vmbench"
	// peakRateWindow is the window of the busiest-minute CPU rate; it needs two scrapes, so a
	// scrape interval of at most 30 s.
	peakRateWindow = time.Minute
)

func footprintUsage(w io.Writer, prog string) {
	fmt.Fprintf(w, `usage: %[1]s footprint <suite> [-n namespace] [--kubeconfig path] [--context name] [prometheus flags]
       %[1]s footprint -f suite.yaml [prometheus flags]

Prints the vmbench manager's own CPU and memory while the suite ran (from its first run's start to
its last run's completion, or to now while it runs), from the manager's process_* metrics in
Prometheus: peak resident memory (process_resident_memory_bytes), CPU seconds and average cores
(process_cpu_seconds_total), and the busiest minute's cores.

input:
  <suite>                 read the suite from the cluster (kubeconfig as kubectl finds it)
  -n, --namespace NS      namespace of <suite> (default: the context's namespace)
  --kubeconfig PATH       kubeconfig file
  --context NAME          kubeconfig context
  -f, --file FILE         read a saved suite instead (YAML or JSON, "-" for stdin)

prometheus:
  --prometheus NS/SVC:PORT  a Prometheus Service, reached through the API server's service proxy
                            (default %[2]s, the one of make demo)
  --prometheus-url URL      a Prometheus reached directly instead, e.g. http://localhost:9090
                            after kubectl port-forward
  --job NAME                the manager's scrape job (default %[3]s; with the Helm chart's
                            ServiceMonitor it is vmbench-metrics)

output:
  -o, --output FORMAT       text (default) or json: the same figures unrounded, for scripts

exit status: 0 ok, 1 error (no such series in Prometheus included), 2 usage error.
`, prog, defaultPrometheus, defaultJob)
}

type footprintOptions struct {
	suite, file                 string
	namespace, kubeconfig, kctx string
	prometheus, prometheusURL   string
	job                         string
	output                      string
}

// footprint is what Prometheus says about the manager over the window.
type footprint struct {
	PeakRSSBytes float64
	CPUSeconds   float64
	PeakCores    float64
	// Processes counts the manager processes seen (a restart or a second replica makes more).
	Processes int
}

// promQuery runs an instant PromQL query at a time and returns Prometheus's JSON answer.
type promQuery func(ctx context.Context, query string, at time.Time) ([]byte, error)

// newPromQuery is replaced by tests.
var newPromQuery = func(o footprintOptions) (promQuery, error) {
	if o.prometheusURL != "" {
		return httpPromQuery(o.prometheusURL), nil
	}
	cfg, _, err := kubeconfig.Load(o.kubeconfig, o.kctx, o.namespace)
	if err != nil {
		return nil, fmt.Errorf("no cluster to reach Prometheus through (use --kubeconfig, KUBECONFIG, or --prometheus-url): %v", firstLine(err))
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	ns, svc, err := splitService(o.prometheus)
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("/api/v1/namespaces/%s/services/%s/proxy/api/v1/query", ns, svc)
	return func(ctx context.Context, query string, at time.Time) ([]byte, error) {
		body, err := cs.CoreV1().RESTClient().Get().AbsPath(path).
			Param("query", query).Param("time", promTime(at)).DoRaw(ctx)
		// Prometheus answers a bad query with an error status and a JSON body that says why; any other
		// failure (no such Service, no endpoint) is the API server's.
		if err != nil && !strings.Contains(string(body), `"errorType"`) {
			return nil, fmt.Errorf("prometheus %s/%s through the API server: %v", ns, svc, firstLine(err))
		}
		return body, nil
	}, nil
}

func httpPromQuery(base string) promQuery {
	client := &http.Client{Timeout: clusterTimeout}
	return func(ctx context.Context, query string, at time.Time) ([]byte, error) {
		u := strings.TrimSuffix(base, "/") + "/api/v1/query?" + url.Values{"query": {query}, "time": {promTime(at)}}.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("prometheus at %s: %w", base, err)
		}
		defer func() { _ = resp.Body.Close() }()
		return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	}
}

func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// splitService reads NS/SERVICE:PORT.
func splitService(s string) (namespace, service string, err error) {
	ns, svc, ok := strings.Cut(s, "/")
	if !ok || ns == "" || svc == "" || !strings.Contains(svc, ":") {
		return "", "", fmt.Errorf("--prometheus wants NAMESPACE/SERVICE:PORT, e.g. %s; got %q", defaultPrometheus, s)
	}
	return ns, svc, nil
}

// Footprint runs `vmbench footprint` with args (after the verb) and returns its exit code; prog is
// the program's name for the usage texts.
func Footprint(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	opts, code, ok := parseFootprintArgs(args, stdout, stderr, prog)
	if !ok {
		return code
	}
	fail := failTo(stderr)
	ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
	defer cancel()

	var suite *vmbenchv1.BenchmarkSuite
	var err error
	if opts.file != "" {
		suite, err = suitefile.Read(opts.file, opts.suite, stdin)
	} else {
		var cluster *ClusterReader
		if cluster, err = NewClusterReader(opts.kubeconfig, opts.kctx, opts.namespace); err == nil {
			suite, err = cluster.Get(ctx, opts.suite)
		}
	}
	if err != nil {
		return fail(err)
	}
	start, end, err := suiteWindow(suite, time.Now())
	if err != nil {
		return fail(err)
	}
	query, err := newPromQuery(opts)
	if err != nil {
		return fail(err)
	}
	fp, err := measureFootprint(ctx, query, opts.job, start, end)
	if err != nil {
		return fail(err)
	}
	if opts.output == "json" {
		err = writeFootprintJSON(stdout, suiteName(suite), opts.job, start, end, fp)
	} else {
		writeFootprint(stdout, suiteName(suite), opts.job, start, end, fp)
	}
	if err != nil {
		return fail(err)
	}
	return ExitOK
}

func parseFootprintArgs(args []string, stdout, stderr io.Writer, prog string) (footprintOptions, int, bool) {
	var o footprintOptions
	fs := flag.NewFlagSet("footprint", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	suiteSourceFlags(fs, &o.file, &o.namespace, &o.kubeconfig, &o.kctx)
	fs.StringVar(&o.prometheus, "prometheus", defaultPrometheus, "")
	fs.StringVar(&o.prometheusURL, "prometheus-url", "", "")
	fs.StringVar(&o.job, "job", defaultJob, "")
	o.output = "text"
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&o.output, n, o.output, "")
	}
	usageError := func(format string, a ...any) (footprintOptions, int, bool) {
		return o, verbUsageError(stderr, prog, "footprint", format, a...), false
	}
	positional, code, ok := parseVerbArgs(fs, args, prog, "footprint", stdout, stderr, footprintUsage)
	if !ok {
		return o, code, false
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	switch {
	case len(positional) > 1:
		return usageError("one suite at a time, got %s", strings.Join(positional, " "))
	case len(positional) == 1:
		o.suite = positional[0]
	}
	switch {
	case o.suite == "" && o.file == "":
		return usageError("name a suite, or read one from a file with -f")
	case explicit["prometheus"] && o.prometheusURL != "":
		return usageError("--prometheus and --prometheus-url are alternatives, give one")
	case o.job == "" || strings.ContainsAny(o.job, `"\`):
		return usageError("--job wants the scrape job's name, got %q", o.job)
	case o.output != "text" && o.output != "json":
		return usageError("-o %s: use text or json", o.output)
	}
	if o.prometheusURL == "" {
		if _, _, err := splitService(o.prometheus); err != nil {
			return usageError("%v", err)
		}
	}
	return o, ExitOK, true
}

// suiteWindow is when the suite's runs were active: from the first run's start to the last run's
// completion, or to now while a run is still going. It falls back to the suite's own start and
// completion when no run has times.
func suiteWindow(s *vmbenchv1.BenchmarkSuite, now time.Time) (start, end time.Time, err error) {
	running := s.Status.Phase != vmbenchv1.SuiteComplete && s.Status.Phase != vmbenchv1.SuiteFailed
	for _, r := range s.Status.Runs {
		if r.StartTime != nil && (start.IsZero() || r.StartTime.Time.Before(start)) {
			start = r.StartTime.Time
		}
		switch {
		case r.CompletionTime != nil && r.CompletionTime.After(end):
			end = r.CompletionTime.Time
		case r.StartTime != nil && r.CompletionTime == nil:
			running = true
		}
	}
	if start.IsZero() && s.Status.StartTime != nil {
		start = s.Status.StartTime.Time
	}
	if end.IsZero() && s.Status.CompletionTime != nil {
		end = s.Status.CompletionTime.Time
	}
	if running || end.IsZero() {
		end = now
	}
	switch {
	case start.IsZero():
		return start, end, fmt.Errorf("suite %s has not started: no run has a start time", suiteName(s))
	case !end.After(start):
		return start, end, fmt.Errorf("suite %s ran from %s to %s: no time to measure", suiteName(s), start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	return start, end, nil
}

// footprintQueries are the PromQL queries of measureFootprint over a window ending at the query's
// evaluation time.
func footprintQueries(job string, window time.Duration) (rss, cpuSeconds, peakCores, processes string) {
	sel := fmt.Sprintf(`{job=%q}`, job)
	w := promDuration(window)
	rss = fmt.Sprintf("max(max_over_time(process_resident_memory_bytes%s[%s]))", sel, w)
	// increase() handles a counter reset when the manager restarted within the window.
	cpuSeconds = fmt.Sprintf("sum(increase(process_cpu_seconds_total%s[%s]))", sel, w)
	peakCores = fmt.Sprintf("max(max_over_time(rate(process_cpu_seconds_total%s[%s])[%s:15s]))", sel, promDuration(peakRateWindow), w)
	processes = fmt.Sprintf("count(max_over_time(process_start_time_seconds%s[%s]))", sel, w)
	return rss, cpuSeconds, peakCores, processes
}

// promDuration is a PromQL range in whole seconds, rounded up.
func promDuration(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10) + "s"
}

// errNoSeries is a query that matched nothing.
var errNoSeries = errors.New("no series")

// parsePromScalar reads the single value of an instant vector from Prometheus's JSON answer.
func parsePromScalar(body []byte) (float64, error) {
	var resp struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
		Data      struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Value [2]json.RawMessage `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return 0, fmt.Errorf("not an answer of the Prometheus HTTP API (%w): %.120q", err, body)
	}
	switch {
	case resp.Status != "success":
		return 0, fmt.Errorf("prometheus: %s: %s", resp.ErrorType, resp.Error)
	case resp.Data.ResultType != "vector":
		return 0, fmt.Errorf("prometheus answered a %q, not an instant vector", resp.Data.ResultType)
	case len(resp.Data.Result) == 0:
		return 0, errNoSeries
	case len(resp.Data.Result) > 1:
		return 0, fmt.Errorf("prometheus answered %d series where the query aggregates to one", len(resp.Data.Result))
	}
	var text string
	if err := json.Unmarshal(resp.Data.Result[0].Value[1], &text); err != nil {
		return 0, fmt.Errorf("prometheus sample value %s is not a string: %w", resp.Data.Result[0].Value[1], err)
	}
	v, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("prometheus sample value %q: %w", text, err)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, fmt.Errorf("prometheus sample value %q is not a number", text)
	}
	return v, nil
}

// measureFootprint asks Prometheus for the manager's footprint between start and end.
func measureFootprint(ctx context.Context, query promQuery, job string, start, end time.Time) (footprint, error) {
	rss, cpu, peak, procs := footprintQueries(job, end.Sub(start))
	var fp footprint
	var processes float64
	for _, q := range []struct {
		query string
		into  *float64
	}{{rss, &fp.PeakRSSBytes}, {cpu, &fp.CPUSeconds}, {peak, &fp.PeakCores}, {procs, &processes}} {
		body, err := query(ctx, q.query, end)
		if err != nil {
			return fp, err
		}
		v, err := parsePromScalar(body)
		if errors.Is(err, errNoSeries) {
			return fp, fmt.Errorf("prometheus has no %s between %s and %s: is the manager scraped under another job "+
				"(--job, now %q), or is the suite older than Prometheus's retention?", q.query, start.UTC().Format(time.RFC3339),
				end.UTC().Format(time.RFC3339), job)
		}
		if err != nil {
			return fp, fmt.Errorf("%s: %w", q.query, err)
		}
		*q.into = v
	}
	fp.Processes = int(processes)
	return fp, nil
}

func writeFootprint(w io.Writer, suite, job string, start, end time.Time, fp footprint) {
	d := end.Sub(start).Round(time.Second)
	fmt.Fprintf(w, "Manager footprint while suite %s ran, %s to %s (%s), Prometheus job %q:\n", suite,
		start.UTC().Format("2006-01-02 15:04:05"), end.UTC().Format("15:04:05 MST"), d, job)
	fmt.Fprintf(w, "  memory  peak RSS %.1f MiB\n", fp.PeakRSSBytes/(1<<20))
	fmt.Fprintf(w, "  CPU     %.3f cores on average (%.1f CPU-seconds), %.3f cores in the busiest minute\n",
		fp.CPUSeconds/d.Seconds(), fp.CPUSeconds, fp.PeakCores)
	if fp.Processes > 1 {
		fmt.Fprintf(w, "  note    %d manager processes in the window (a restart or a second replica); memory is the largest, CPU their sum\n", fp.Processes)
	}
}

// FootprintJSON is what footprint -o json prints: the text output's figures, unrounded.
type FootprintJSON struct {
	Suite        string    `json:"suite"`
	Job          string    `json:"job"`
	Start        time.Time `json:"start"`
	End          time.Time `json:"end"`
	PeakRSSBytes float64   `json:"peakRSSBytes"`
	CPUSeconds   float64   `json:"cpuSeconds"`
	AverageCores float64   `json:"averageCores"`
	PeakCores    float64   `json:"peakCores"`
	// Processes counts the manager processes seen in the window (a restart or a second replica
	// makes more than one).
	Processes int `json:"processes"`
}

func writeFootprintJSON(w io.Writer, suite, job string, start, end time.Time, fp footprint) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(FootprintJSON{Suite: suite, Job: job, Start: start.UTC(), End: end.UTC(),
		PeakRSSBytes: fp.PeakRSSBytes, CPUSeconds: fp.CPUSeconds, AverageCores: fp.CPUSeconds / end.Sub(start).Seconds(),
		PeakCores: fp.PeakCores, Processes: fp.Processes})
}

func suiteName(s *vmbenchv1.BenchmarkSuite) string {
	if s.Namespace != "" {
		return s.Namespace + "/" + s.Name
	}
	return s.Name
}
