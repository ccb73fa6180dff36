//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/cli"
	"github.com/vmbench/vmbench/internal/dashboards"
)

// The Prometheus of hack/kind/prometheus.sh, reached through the API server's service proxy, and
// vmbench's metrics Service (the Helm release of hack/install.sh).
const (
	prometheusAPI   = "/api/v1/namespaces/vmbench-monitoring/services/prometheus:9090/proxy/api/v1/"
	metricsEndpoint = "/api/v1/namespaces/vmbench-system/services/vmbench-metrics:metrics/proxy/metrics"
)

// promSample is one series of an instant vector.
type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// prometheus calls the Prometheus HTTP API at path (query, label/<name>/values, targets, ...) and
// decodes its data into out.
func (e *env) prometheus(path string, params url.Values, out any) error {
	req := clientset.CoreV1().RESTClient().Get().AbsPath(prometheusAPI + path)
	for k, vs := range params {
		for _, v := range vs {
			req = req.Param(k, v)
		}
	}
	raw, err := req.DoRaw(e.ctx)
	if err != nil {
		return fmt.Errorf("prometheus %s %v: %w: %s", path, params, err, raw)
	}
	var resp struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("prometheus %s: %w: %s", path, err, raw)
	}
	if resp.Status != "success" {
		return fmt.Errorf("prometheus %s %v: %s", path, params, resp.Error)
	}
	return json.Unmarshal(resp.Data, out)
}

// query runs an instant PromQL query; a result that is not a vector is an error, since every
// query here selects series.
func (e *env) query(q string) ([]promSample, error) {
	var data struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := e.prometheus("query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: result type %s, want vector", q, data.ResultType)
	}
	var out []promSample
	return out, json.Unmarshal(data.Result, &out)
}

// suiteLines returns the lines of vmbench's metrics endpoint that belong to the suite ns/name.
func (e *env) suiteLines(ns, name string) []string {
	raw, err := clientset.CoreV1().RESTClient().Get().AbsPath(metricsEndpoint).DoRaw(e.ctx)
	e.g.Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, line := range bytes.Split(raw, []byte("\n")) {
		if bytes.Contains(line, []byte(`namespace="`+ns+`"`)) && bytes.Contains(line, []byte(`suite="`+name+`"`)) {
			out = append(out, string(line))
		}
	}
	return out
}

// dumpPrometheus logs Prometheus's scrape targets, for a failed test.
func (e *env) dumpPrometheus() {
	var targets any
	if err := e.prometheus("targets", nil, &targets); err != nil {
		e.t.Logf("---- prometheus targets: %v", err)
		return
	}
	out, _ := json.MarshalIndent(targets, "", "  ")
	e.t.Logf("---- prometheus targets ----\n%s", out)
}

var labelValues = regexp.MustCompile(`^label_values\((.*),\s*(\w+)\)$`)

// TestPrometheusHasTheSuiteAndEveryDashboardQuery runs a small suite of two container platforms (so
// that it has ratios and overheads, as a VM/container suite does) and checks the real Prometheus of
// the cluster: it holds the suite's results, every template variable of every dashboard offers the
// suite's values, every dashboard query returns data for them, and the suite's series go stale once
// the suite is deleted.
func TestPrometheusHasTheSuiteAndEveryDashboardQuery(t *testing.T) {
	e := newEnv(t, podSecurityRestricted)
	t.Cleanup(func() {
		if t.Failed() {
			e.dumpPrometheus()
		}
	})
	const name = "prom"
	suite := &vmbenchv1.BenchmarkSuite{}
	suite.Name, suite.Namespace = name, e.ns
	suite.Spec = vmbenchv1.BenchmarkSuiteSpec{
		Platforms: []vmbenchv1.Platform{
			{Name: "container", Type: vmbenchv1.PlatformContainer},
			{Name: "container2", Type: vmbenchv1.PlatformContainer},
		},
		Baseline:    "container",
		Repetitions: 1,
		Cluster: vmbenchv1.ClusterShape{
			Nodes: 1, CPU: 1, Memory: ptr.To(resource.MustParse("512Mi")),
			CPURequest: ptr.To(resource.MustParse("100m")), MemoryRequest: ptr.To(resource.MustParse("256Mi")),
		},
		Benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU,
			SysbenchCPU: &vmbenchv1.SysbenchCPUParams{Duration: vmbenchv1.DurationOf(3 * time.Second)}}},
	}
	e.g.Expect(k8s.Create(e.ctx, suite)).To(Succeed())
	s := e.waitEnded(name, 20*time.Minute)
	e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
		"Failed: %v", meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))

	// What the suite's status says Prometheus must hold: one value series per platform and metric.
	want := map[string]bool{}
	metric := ""
	for _, r := range s.Status.Results {
		for _, m := range r.Metrics {
			want[r.Platform+"/"+m.Name] = true
			metric = m.Name
		}
	}
	e.g.Expect(want).To(HaveLen(2*len(s.Status.Results[0].Metrics)), "results of both platforms: %+v", s.Status.Results)
	e.g.Expect(s.Status.Ratios).NotTo(BeEmpty(), "container2/container ratios")
	e.g.Expect(e.suiteLines(e.ns, name)).NotTo(BeEmpty(), "the metrics endpoint has no series of the suite")

	sel := fmt.Sprintf(`namespace=%q, suite=%q`, e.ns, name)
	e.g.Eventually(func(g Gomega) {
		got, err := e.query(`vmbench_result_value{` + sel + `}`)
		g.Expect(err).NotTo(HaveOccurred())
		have := map[string]bool{}
		for _, smp := range got {
			have[smp.Metric["platform"]+"/"+smp.Metric["metric"]] = true
		}
		g.Expect(have).To(Equal(want))
	}, 2*time.Minute, 5*time.Second).Should(Succeed(), "Prometheus has the suite's result series")

	// `vmbench footprint prom -n <ns>` with its defaults (this Prometheus, job vmbench), through the
	// function the verb calls: the manager's own memory and CPU while the suite's runs went on.
	var fp cli.FootprintJSON
	e.g.Eventually(func(g Gomega) {
		var stdout, stderr bytes.Buffer
		code := cli.Footprint(e.ctx, "vmbench", []string{name, "-n", e.ns, "--kubeconfig", kubeconfigPath, "-o", "json"}, nil, &stdout, &stderr)
		g.Expect(code).To(Equal(cli.ExitOK), "vmbench footprint %s -n %s: %s", name, e.ns, stderr.String())
		g.Expect(json.Unmarshal(stdout.Bytes(), &fp)).To(Succeed(), stdout.String())
	}, time.Minute, 5*time.Second).Should(Succeed())
	t.Logf("vmbench footprint: %+v", fp)
	e.g.Expect(fp.Suite).To(Equal(e.ns + "/" + name))
	e.g.Expect(fp.PeakRSSBytes).To(BeNumerically(">", 0), "peak RSS")
	e.g.Expect(fp.CPUSeconds).To(BeNumerically(">", 0), "CPU-seconds")
	e.g.Expect(fp.Processes).To(BeNumerically(">=", 1), "manager processes")
	e.g.Expect(fp.End.After(fp.Start)).To(BeTrue(), "window %s - %s", fp.Start, fp.End)

	// The values a person picks on the boards for this suite.
	values := map[string]string{
		dashboards.VarNamespace: e.ns, dashboards.VarSuite: name, dashboards.VarBenchmark: "cpu",
		dashboards.VarMetric: metric, dashboards.VarPlatform: "container2",
	}
	for _, b := range dashboards.Boards() {
		d, err := b.Build()
		e.g.Expect(err).NotTo(HaveOccurred())
		// Each query variable, expanded with the ones before it, offers the suite's value.
		for _, v := range dashboards.Variables(d) {
			if v.Type != "query" {
				continue
			}
			m := labelValues.FindStringSubmatch(v.Query)
			e.g.Expect(m).NotTo(BeNil(), "%s: variable %s is no label_values query: %s", b.File, v.Name, v.Query)
			selector := dashboards.Expand(m[1], values)
			var offered []string
			e.g.Expect(e.prometheus("label/"+m[2]+"/values", url.Values{"match[]": {selector}}, &offered)).To(Succeed())
			e.g.Expect(offered).To(ContainElement(values[v.Name]), "%s: variable %s (%s)", b.File, v.Name, selector)
		}
		queries := dashboards.Queries(d)
		e.g.Expect(queries).NotTo(BeEmpty(), b.File)
		for _, q := range queries {
			expanded := dashboards.Expand(q, values)
			e.g.Expect(dashboards.VariableRefs(expanded)).To(BeEmpty(), "%s: unexpanded variables in %s", b.File, expanded)
			got, err := e.query(expanded)
			e.g.Expect(err).NotTo(HaveOccurred(), b.File)
			e.g.Expect(got).NotTo(BeEmpty(), "%s: no data for %s", b.File, expanded)
			t.Logf("%s: %d series: %s", b.File, len(got), expanded)
		}
	}

	// Deleting the suite removes its series from the endpoint; the next scrape then marks them stale
	// in Prometheus, so that neither the latest samples nor a lookback window show them any more.
	deleted := time.Now()
	e.g.Expect(k8s.Delete(e.ctx, s)).To(Succeed())
	e.g.Eventually(func() []string { return e.suiteLines(e.ns, name) }, 2*time.Minute, 2*time.Second).Should(BeEmpty(),
		"the metrics endpoint still has the deleted suite's series")
	perSuite := `{__name__=~"vmbench_.+", ` + sel + `}`
	e.g.Eventually(func(g Gomega) {
		got, err := e.query(perSuite)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(BeEmpty())
		absent, err := e.query(`absent(vmbench_result_value{` + sel + `})`)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(absent).To(HaveLen(1))
	}, time.Minute, 5*time.Second).Should(Succeed(), "Prometheus still has the deleted suite's series")
	t.Logf("the deleted suite's series were gone from Prometheus after %s", time.Since(deleted).Round(time.Second))
}
