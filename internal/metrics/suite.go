package metrics

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
)

// A suite's series come in two kinds. The summary is always exported while the suite exists: its
// phase, the headline ratio, and per platform the geometric means and verdict counts of
// vmbench report. The detail, one series per metric of every benchmark and platform (up to about
// 10,000 for the largest suite), is exported while the suite runs and for Options.DetailRetention
// after it ends, or for the suite's whole life with Options.Detail. Prometheus keeps what it
// scraped; the exporter does not need to keep every finished suite's detail active forever.

const (
	// DefaultMaxSeriesPerSuite is the default of Options.MaxSeriesPerSuite.
	DefaultMaxSeriesPerSuite = 2000
	// MinMaxSeriesPerSuite is the lowest cap allowed: it holds the summary of the largest suite
	// (TestWorstCaseSuiteSummaryFitsTheFloor).
	MinMaxSeriesPerSuite = 500
	// DefaultDetailRetention is the default of Options.DetailRetention.
	DefaultDetailRetention = time.Hour
)

// Options say how many of a suite's series are exported, and for how long.
type Options struct {
	// Detail exports the per-metric series for the suite's whole life, not only while it runs and
	// for DetailRetention after it ends.
	Detail bool
	// DetailRetention is how long after a suite ended its per-metric series stay.
	DetailRetention time.Duration
	// MaxSeriesPerSuite caps the series of one suite, summary and detail together; the metrics past
	// it are dropped and counted in vmbench_metric_series_dropped_total.
	MaxSeriesPerSuite int
	// CertDir holds tls.crt and tls.key, the certificate the secure metrics endpoint serves; empty
	// for a self-signed one.
	CertDir string
}

// DefaultOptions are the manager's defaults.
func DefaultOptions() Options {
	return Options{DetailRetention: DefaultDetailRetention, MaxSeriesPerSuite: DefaultMaxSeriesPerSuite}
}

// Validate says what is wrong with the options, naming the manager's flag.
func (o Options) Validate() error {
	if o.MaxSeriesPerSuite < MinMaxSeriesPerSuite {
		return fmt.Errorf("--metrics-max-series-per-suite=%d: use at least %d, which holds the summary series of the largest suite",
			o.MaxSeriesPerSuite, MinMaxSeriesPerSuite)
	}
	if o.DetailRetention < 0 {
		return fmt.Errorf("--metrics-detail-retention=%s: use 0 (detail only while a suite runs) or a positive duration", o.DetailRetention)
	}
	return CheckCertDir(o.CertDir)
}

var (
	detailLabels  = []string{"namespace", "suite", "benchmark", "platform", "metric", "unit", "direction", "emulated"}
	ratioLabels   = []string{"namespace", "suite", "benchmark", "metric", "platform", "baseline", "emulated"}
	summaryLabels = []string{"namespace", "suite", "platform", "baseline", "emulated", "kind", "group"}

	resultValueDesc = prometheus.NewDesc("vmbench_result_value",
		"Mean of a parsed benchmark metric, per suite, benchmark and platform; exported while the suite runs and for a retention after it ends "+
			"(the manager's --metrics-detail-retention), or always with --metrics-detail. "+
			"Labels: namespace, suite, benchmark, platform, metric, unit, direction (HigherIsBetter|LowerIsBetter), emulated (true|false).",
		detailLabels, nil)
	resultStdDevDesc = prometheus.NewDesc("vmbench_result_stddev",
		"Sample standard deviation of a parsed benchmark metric. Labels and lifetime as vmbench_result_value.", detailLabels, nil)
	resultSamplesDesc = prometheus.NewDesc("vmbench_result_samples",
		"Number of samples behind vmbench_result_value. Labels and lifetime as vmbench_result_value.", detailLabels, nil)
	resultRatioDesc = prometheus.NewDesc("vmbench_result_ratio",
		"A platform's mean divided by the baseline platform's mean; lifetime as vmbench_result_value. "+
			"Labels: namespace, suite, benchmark, metric, platform, baseline, emulated (true|false).", ratioLabels, nil)
	resultOverheadDesc = prometheus.NewDesc("vmbench_result_overhead_percent",
		"How much worse a platform is than the baseline, in percent, whichever way the metric improves (negative: better). "+
			"Labels and lifetime as vmbench_result_ratio.", ratioLabels, nil)

	suitePhaseDesc = prometheus.NewDesc("vmbench_suite_phase",
		"1 for the suite's current phase, 0 for the others. Labels: namespace, suite, phase (Pending|Running|Complete|Failed).",
		[]string{"namespace", "suite", "phase"}, nil)
	launcherCPUDesc = prometheus.NewDesc("vmbench_vm_launcher_overhead_cpu_cores",
		"CPU that Kubernetes reserved for one VM beyond its guest (virt-launcher pod's requests minus the guest's), "+
			"the largest over the platform's runs. Labels: namespace, suite, platform.", []string{"namespace", "suite", "platform"}, nil)
	launcherMemoryDesc = prometheus.NewDesc("vmbench_vm_launcher_overhead_memory_bytes",
		"Memory that Kubernetes reserved for one VM beyond its guest, as vmbench_vm_launcher_overhead_cpu_cores. Labels as it.",
		[]string{"namespace", "suite", "platform"}, nil)
	headlineDesc = prometheus.NewDesc("vmbench_suite_headline_ratio",
		"The suite's headline ratio (kubectl get's HEADLINE): the headline metric's mean on a platform divided by the baseline's. "+
			"Labels as vmbench_result_ratio.", ratioLabels, nil)
	summaryRatioDesc = prometheus.NewDesc("vmbench_summary_ratio",
		"Geometric mean of a platform's ratios to the baseline in the higher-is-better sense (below 1: slower), as vmbench report's summary. "+
			"Labels: namespace, suite, platform, baseline, emulated (true|false), kind (benchmark|resource|overall), "+
			"group (the benchmark's name; compute|memory|storage|network; overall).", summaryLabels, nil)
	summaryLowDesc = prometheus.NewDesc("vmbench_summary_ratio_low",
		"Lower bound of vmbench_summary_ratio's 95% interval; absent without 2 repetitions a side. Labels as it.", summaryLabels, nil)
	summaryHighDesc = prometheus.NewDesc("vmbench_summary_ratio_high",
		"Upper bound of vmbench_summary_ratio's 95% interval; absent without 2 repetitions a side. Labels as it.", summaryLabels, nil)
	summaryVerdictsDesc = prometheus.NewDesc("vmbench_summary_verdicts",
		"Metrics of a summary group by vmbench report's verdict. Labels as vmbench_summary_ratio and verdict (slower|equivalent|faster|inconclusive).",
		append(append([]string{}, summaryLabels...), "verdict"), nil)
	suiteDroppedDesc = prometheus.NewDesc("vmbench_suite_series_dropped",
		"Series of the suite not exported: past the manager's --metrics-max-series-per-suite, or whose labels collide once sanitised. "+
			"Labels: namespace, suite.", []string{"namespace", "suite"}, nil)

	seriesDropped = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "vmbench_metric_series_dropped_total",
		Help: "Series of suites that were not exported, as vmbench_suite_series_dropped, counted when first dropped.",
	})
)

// suiteSeries is what one suite exports.
type suiteSeries struct {
	summary []prometheus.Metric
	detail  []prometheus.Metric
	// dropped counts the series beyond the cap or colliding once sanitised.
	dropped int
	// ended is when the suite ended; zero while it runs.
	ended time.Time
	// summaries are the series of vmbench report's summaries, built again only when the inputs
	// of the report (reportInputs) change: for the largest suite the report takes a second of CPU.
	summaries     [][]pending
	summariesFrom [sha256.Size]byte
}

// suiteCollector exports every suite's series, deciding at each scrape whether the detail is due.
type suiteCollector struct {
	mu     sync.RWMutex
	opts   Options
	now    func() time.Time
	suites map[string]*suiteSeries
}

var suites = &suiteCollector{opts: DefaultOptions(), now: time.Now, suites: map[string]*suiteSeries{}}

// Configure sets the options of every suite recorded from now on.
func Configure(o Options) {
	suites.mu.Lock()
	defer suites.mu.Unlock()
	suites.opts = o
}

func suiteKey(namespace, name string) string { return namespace + "/" + name }

func (c *suiteCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{resultValueDesc, resultStdDevDesc, resultSamplesDesc, resultRatioDesc, resultOverheadDesc,
		suitePhaseDesc, launcherCPUDesc, launcherMemoryDesc, headlineDesc, summaryRatioDesc, summaryLowDesc, summaryHighDesc,
		summaryVerdictsDesc, suiteDroppedDesc} {
		ch <- d
	}
}

func (c *suiteCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	now := c.now()
	for _, s := range c.suites {
		for _, m := range s.summary {
			ch <- m
		}
		if c.opts.Detail || s.ended.IsZero() || now.Before(s.ended.Add(c.opts.DetailRetention)) {
			for _, m := range s.detail {
				ch <- m
			}
		}
	}
}

// record builds the suite's series outside the lock, so that a scrape does not wait for the
// report; the reconciles of one suite never run at once.
func (c *suiteCollector) record(s *vmbenchv1.BenchmarkSuite) {
	key := suiteKey(s.Namespace, s.Name)
	c.mu.RLock()
	had, opts := c.suites[key], c.opts
	c.mu.RUnlock()
	inputs := reportInputs(s)
	var summaries [][]pending
	if had != nil && had.summariesFrom == inputs {
		summaries = had.summaries
	} else {
		summaries = reportSummaries(s)
	}
	next := buildSeries(s, summaries, opts.MaxSeriesPerSuite)
	next.summaries, next.summariesFrom = summaries, inputs

	c.mu.Lock()
	defer c.mu.Unlock()
	// The retention counts on the exporter's own clock from when it saw the suite end; a suite
	// first seen ended (after a restart of the manager) ended at its completion time.
	switch {
	case s.Status.Phase != vmbenchv1.SuiteComplete && s.Status.Phase != vmbenchv1.SuiteFailed:
	case had != nil && !had.ended.IsZero():
		next.ended = had.ended
	case had == nil && s.Status.CompletionTime != nil:
		next.ended = s.Status.CompletionTime.Time
	default:
		next.ended = c.now()
	}
	if had == nil || next.dropped > had.dropped {
		prev := 0
		if had != nil {
			prev = had.dropped
		}
		seriesDropped.Add(float64(next.dropped - prev))
	}
	c.suites[key] = next
}

func (c *suiteCollector) forget(namespace, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.suites, suiteKey(namespace, name))
}

// budget admits series up to a cap and once per label set, counting the rest.
type budget struct {
	left    int
	seen    map[string]bool
	dropped int
}

// admit reserves room for a group of series that go together (the mean, spread and count of one
// metric, its ratio and overhead) and keeps those whose labels were not seen: all or none.
func (b *budget) admit(group []pending) []prometheus.Metric {
	var fresh []pending
	for _, p := range group {
		k := p.key()
		if b.seen[k] {
			b.dropped++
			continue
		}
		fresh = append(fresh, p)
	}
	if len(fresh) > b.left {
		b.dropped += len(fresh)
		return nil
	}
	out := make([]prometheus.Metric, 0, len(fresh))
	for _, p := range fresh {
		m, err := prometheus.NewConstMetric(p.desc, prometheus.GaugeValue, p.value, p.labels...)
		if err != nil {
			b.dropped++
			continue
		}
		b.seen[p.key()] = true
		b.left--
		out = append(out, m)
	}
	return out
}

// pending is a series not yet admitted.
type pending struct {
	desc   *prometheus.Desc
	value  float64
	labels []string
}

func (p pending) key() string { return p.desc.String() + "\x00" + strings.Join(p.labels, "\x00") }

// buildSeries lays out a suite's series within maxSeries: the summary first, then the detail metric
// by metric in status order, so that a suite past the cap keeps whole rows of its first benchmarks.
func buildSeries(s *vmbenchv1.BenchmarkSuite, summaries [][]pending, maxSeries int) *suiteSeries {
	ns, name := labelValue(s.Namespace), labelValue(s.Name)
	baseline := labelValue(s.Spec.Baseline)
	b := &budget{left: maxSeries - 1, seen: map[string]bool{}} // one for vmbench_suite_series_dropped
	out := &suiteSeries{}
	add := func(to *[]prometheus.Metric, group ...pending) { *to = append(*to, b.admit(group)...) }

	for _, phase := range []vmbenchv1.SuitePhase{vmbenchv1.SuitePending, vmbenchv1.SuiteRunning, vmbenchv1.SuiteComplete, vmbenchv1.SuiteFailed} {
		v := 0.0
		if s.Status.Phase == phase {
			v = 1
		}
		add(&out.summary, pending{suitePhaseDesc, v, []string{ns, name, string(phase)}})
	}
	for _, o := range launcherOverheads(s) {
		add(&out.summary, pending{launcherCPUDesc, o.cpu, []string{ns, name, o.platform}},
			pending{launcherMemoryDesc, o.memory, []string{ns, name, o.platform}})
	}
	if h := s.Status.Headline; h != nil {
		for _, pr := range s.Status.Ratios {
			if pr.Benchmark != h.Benchmark {
				continue
			}
			for _, r := range pr.Metrics {
				if r.Metric == h.Metric {
					add(&out.summary, pending{headlineDesc, r.Ratio, []string{ns, name, labelValue(pr.Benchmark), labelValue(r.Metric),
						labelValue(pr.Platform), baseline, strconv.FormatBool(pr.Emulated)}})
				}
			}
		}
	}
	for _, group := range summaries {
		add(&out.summary, group...)
	}

	ratios := map[string]vmbenchv1.RatioValue{}
	ratioOf := func(benchmark, platform, metric string) string {
		return benchmark + "\x00" + platform + "\x00" + metric
	}
	emulatedRatio := map[string]bool{}
	for _, pr := range s.Status.Ratios {
		for _, r := range pr.Metrics {
			k := ratioOf(pr.Benchmark, pr.Platform, r.Metric)
			if _, dup := ratios[k]; !dup {
				ratios[k] = r
				emulatedRatio[k] = pr.Emulated
			}
		}
	}
	for _, r := range s.Status.Results {
		bench, platform := labelValue(r.Benchmark), labelValue(r.Platform)
		for _, m := range r.Metrics {
			metric := labelValue(m.Name)
			l := []string{ns, name, bench, platform, metric, labelValue(m.Unit), labelValue(string(m.Direction)), strconv.FormatBool(r.Emulated)}
			group := []pending{{resultValueDesc, m.Mean, l}, {resultStdDevDesc, m.StdDev, l}, {resultSamplesDesc, float64(m.N), l}}
			k := ratioOf(r.Benchmark, r.Platform, m.Name)
			if rv, ok := ratios[k]; ok {
				rl := []string{ns, name, bench, metric, platform, baseline, strconv.FormatBool(emulatedRatio[k])}
				group = append(group, pending{resultRatioDesc, rv.Ratio, rl}, pending{resultOverheadDesc, rv.OverheadPercent, rl})
				delete(ratios, k)
			}
			add(&out.detail, group...)
		}
	}
	// Ratios without a result of their own (a status written by hand) come last.
	for _, pr := range s.Status.Ratios {
		for _, r := range pr.Metrics {
			k := ratioOf(pr.Benchmark, pr.Platform, r.Metric)
			rv, ok := ratios[k]
			if !ok {
				continue
			}
			delete(ratios, k)
			rl := []string{ns, name, labelValue(pr.Benchmark), labelValue(r.Metric), labelValue(pr.Platform), baseline, strconv.FormatBool(pr.Emulated)}
			add(&out.detail, pending{resultRatioDesc, rv.Ratio, rl}, pending{resultOverheadDesc, rv.OverheadPercent, rl})
		}
	}
	out.dropped = b.dropped
	out.summary = append(out.summary, prometheus.MustNewConstMetric(suiteDroppedDesc, prometheus.GaugeValue, float64(b.dropped), ns, name))
	return out
}

// reportInputs is a digest of what vmbench report reads to build the summaries.
func reportInputs(s *vmbenchv1.BenchmarkSuite) [sha256.Size]byte {
	b, err := json.Marshal(struct {
		Spec    vmbenchv1.BenchmarkSuiteSpec
		Results []vmbenchv1.BenchmarkResult
		Ratios  []vmbenchv1.PlatformRatios
	}{s.Spec, s.Status.Results, s.Status.Ratios})
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(b)
}

// reportSummaries are the series of vmbench report's summaries: per platform and group (each
// benchmark, each resource, overall) the geometric mean of the ratios with its interval, and the
// count of metrics per verdict, one slice per group. A suite without results to compare has none.
func reportSummaries(s *vmbenchv1.BenchmarkSuite) [][]pending {
	rep, err := analysis.Analyze(s, analysis.Tolerance(s))
	if err != nil {
		return nil
	}
	ns, name, baseline := labelValue(s.Namespace), labelValue(s.Name), labelValue(s.Spec.Baseline)
	var out [][]pending
	for _, ps := range rep.Summaries {
		for _, g := range ps.Groups() {
			l := []string{ns, name, labelValue(ps.Platform), baseline, strconv.FormatBool(ps.Emulated), g.Kind, labelValue(g.Name)}
			with := func(verdict string) []string { return append(l[:len(l):len(l)], verdict) }
			group := []pending{
				{summaryVerdictsDesc, float64(g.Counts.Slower), with(analysis.Slower)},
				{summaryVerdictsDesc, float64(g.Counts.Equivalent), with(analysis.Equivalent)},
				{summaryVerdictsDesc, float64(g.Counts.Faster), with(analysis.Faster)},
				{summaryVerdictsDesc, float64(g.Counts.Inconclusive), with(analysis.Inconclusive)},
			}
			if g.Ratio != nil {
				group = append(group, pending{summaryRatioDesc, *g.Ratio, l})
			}
			if g.Low != nil && g.High != nil {
				group = append(group, pending{summaryLowDesc, *g.Low, l}, pending{summaryHighDesc, *g.High, l})
			}
			out = append(out, group)
		}
	}
	return out
}

type launcherOverhead struct {
	platform    string
	cpu, memory float64
}

// launcherOverheads is the largest virt-launcher overhead per platform over the suite's runs, in
// the order the runs first name the platforms.
func launcherOverheads(s *vmbenchv1.BenchmarkSuite) []launcherOverhead {
	var order []string
	largest := map[string]vmbenchv1.ResourceOverhead{}
	for _, run := range s.Status.Runs {
		o := run.LauncherOverhead
		if o == nil {
			continue
		}
		had, ok := largest[run.Platform]
		if !ok {
			order = append(order, run.Platform)
		}
		if !ok || o.CPU.Cmp(had.CPU) > 0 {
			had.CPU = o.CPU
		}
		if !ok || o.Memory.Cmp(had.Memory) > 0 {
			had.Memory = o.Memory
		}
		largest[run.Platform] = had
	}
	out := make([]launcherOverhead, 0, len(order))
	for _, p := range order {
		o := largest[p]
		out = append(out, launcherOverhead{labelValue(p), o.CPU.AsApproximateFloat64(), o.Memory.AsApproximateFloat64()})
	}
	return out
}
