//go:build e2e

package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/tables"
)

// studies is what the hand-made studies measured beyond the quick sample, small: an HPL sweep on
// the two workers, iozone's automatic mode, iperf3 over time, netperf and netcat, sysbench on all
// nodes at once, and fio bounded by its size in the container's own writable layer.
const studies = `
apiVersion: vmbench.io/v1alpha1
kind: BenchmarkSuite
metadata: {name: studies}
spec:
  platforms: [{name: container, type: Container}]
  baseline: container
  repetitions: 1
  cluster: {nodes: 3, cpu: 1, memory: 1Gi, cpuRequest: 100m, memoryRequest: 1Gi}
  benchmarks:
    - {name: hpl, type: hpcc, timeout: 10m, hpcc: {nodes: Workers, problemSizes: [256, 512], blockSizes: [32, 64]}}
    - {name: disk, type: iozone, timeout: 5m, iozone: {auto: true, minFileSize: 64k, maxFileSize: 1m, tests: [write, read]}}
    - {name: net, type: iperf3, iperf3: {duration: 3s, pairs: [master-node]}}
    - {name: rr, type: netperf, netperf: {tests: [TCP_RR], duration: 2s, confidence: {minIterations: 3, maxIterations: 3}, pairs: [master-node]}}
    - {name: bulk, type: netcat, netcat: {size: 16Mi, pairs: [master-node]}}
    - {name: cpu, type: sysbench-cpu, concurrency: AllNodes, sysbenchCPU: {duration: 2s}}
    - {name: fio, type: fio, fio: {rw: write, size: 8m, target: RootFS}}
`

// TestStudiesInOneSuite runs the studies' designs in pods, one repetition, and checks that each
// left what the report draws from: every HPL point of the sweep measured on the workers, the whole
// iozone table and iperf3's intervals in the run's table ConfigMaps, and the figures drawn from them.
func TestStudiesInOneSuite(t *testing.T) {
	e := newEnv(t)
	suite := &vmbenchv1.BenchmarkSuite{}
	e.g.Expect(yaml.UnmarshalStrict([]byte(studies), suite)).To(Succeed())
	suite.Namespace = e.ns
	e.g.Expect(k8s.Create(e.ctx, suite)).To(Succeed())
	s := e.waitEnded("studies", 25*time.Minute)
	e.keep(s)
	e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
		"Failed: %v", meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))

	result := func(name string) vmbenchv1.BenchmarkResult {
		for _, r := range s.Status.Results {
			if r.Benchmark == name && r.Platform == "container" {
				return r
			}
		}
		e.t.Fatalf("no result of %s", name)
		return vmbenchv1.BenchmarkResult{}
	}
	for _, b := range suite.Spec.Benchmarks {
		r := result(b.Name)
		e.g.Expect(r.Failures).To(BeZero(), "%s: %s", b.Name, r.LastError)
		e.g.Expect(r.Metrics).NotTo(BeEmpty(), b.Name)
	}

	// The sweep: 2 N x 2 NB on the 1x2 grid of the two workers, each point a metric, and rank 0 on
	// the first worker rather than the master.
	points := 0
	for _, m := range result("hpl").Metrics {
		if strings.HasPrefix(m.Name, "HPL_Gflops_N") {
			points++
			e.g.Expect(m.Mean).To(BeNumerically(">", 0), m.Name)
			e.g.Expect(m.Name).To(HaveSuffix("_P1_Q2"))
			for _, smp := range m.Samples {
				e.g.Expect(smp.Node).To(Equal("node01"), m.Name)
			}
		}
	}
	e.g.Expect(points).To(Equal(4), "HPL points of the sweep")
	e.g.Expect(result("cpu").Concurrent).To(BeTrue(), "sysbench-cpu with concurrency AllNodes")

	// The whole tables: iozone's per node, iperf3's intervals per pair.
	cms := &corev1.ConfigMapList{}
	e.g.Expect(k8s.List(e.ctx, cms, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelSuite: "studies"},
		client.HasLabels{vmbenchv1.LabelTablesOf})).To(Succeed())
	stored, problems := tables.Read("studies", cms.Items)
	e.g.Expect(problems).To(BeEmpty())
	kept := map[string]int{}
	for _, st := range stored {
		kept[st.Benchmark]++
		e.g.Expect(st.Table).NotTo(BeZero(), "table %s %s", st.Benchmark, st.Node)
	}
	e.g.Expect(kept).To(HaveKeyWithValue("disk", int(suite.Spec.Cluster.NodeCount())), "iozone tables, one per node")
	e.g.Expect(kept).To(HaveKeyWithValue("net", 1), "iperf3 interval tables, one per pair")
	for _, r := range s.Status.Results {
		e.g.Expect(r.TablesLost).To(BeZero(), r.Benchmark)
	}

	dir := filepath.Join("..", "..", "bin", "e2e", "studies-plots")
	out, err := report.WritePlots(s, report.PlotOptions{Dir: dir, Tables: stored})
	e.g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, f := range out.Files {
		names = append(names, filepath.Base(f))
	}
	e.t.Logf("plots in %s: %v; notes: %v", dir, names, out.Notes)
	e.g.Expect(names).To(ContainElements("hpl-hpl-sweep.png", "disk-write-heatmap.png", "net-over-time.png"))

	e.g.Expect(k8s.Delete(e.ctx, s)).To(Succeed())
	e.expectNoChildren()
}
