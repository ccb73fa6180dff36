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
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/report"
	"github.com/vmbench/vmbench/internal/tables"
)

// reduced shrinks a study sample to what a 2-core CI machine runs in minutes: pods only, one
// repetition, 1-CPU nodes, small sizes and short durations, one node pair; the designs stay: sweeps,
// automatic mode, targets, concurrency and confidence iteration.
func reduced(s *vmbenchv1.BenchmarkSuite) *vmbenchv1.BenchmarkSuite {
	containerOnly(s)
	s.Spec.Repetitions = 1
	s.Spec.Cluster = vmbenchv1.ClusterShape{Nodes: 3, CPU: 1, Memory: ptr.To(resource.MustParse("1Gi")),
		CPURequest: ptr.To(resource.MustParse("100m")), MemoryRequest: ptr.To(resource.MustParse("1Gi"))}
	if s.Spec.SharedStorage != nil {
		s.Spec.SharedStorage.Size = ptr.To(resource.MustParse("1Gi"))
	}
	short := func(d string) *vmbenchv1.Duration { v := vmbenchv1.Duration(d); return &v }
	pair := []vmbenchv1.NodePair{vmbenchv1.PairMasterToNode}
	for i := range s.Spec.Benchmarks {
		b := &s.Spec.Benchmarks[i]
		b.Timeout = short("10m")
		switch {
		case b.HPCC != nil && len(b.HPCC.ProblemSizes) > 0:
			b.HPCC.ProblemSizes, b.HPCC.BlockSizes, b.HPCC.Grids = []int32{256, 512}, []int32{32, 64}, nil
		case b.HPCC != nil:
			b.HPCC.N, b.HPCC.NB = ptr.To(int32(256)), 32
		case b.Iozone != nil && b.Iozone.Auto:
			b.Iozone.MinFileSize, b.Iozone.MaxFileSize, b.Iozone.Tests = "64k", "1m", []vmbenchv1.IozoneTest{"write", "read"}
		case b.Iozone != nil:
			b.Iozone.FileSize, b.Iozone.Tests = "4M", []vmbenchv1.IozoneTest{"write", "read"}
		case b.Fio != nil:
			b.Fio.Size = "8m"
		case b.SysbenchCPU != nil || b.Type == vmbenchv1.BenchmarkSysbenchCPU:
			b.SysbenchCPU = &vmbenchv1.SysbenchCPUParams{Duration: short("2s")}
		case b.SysbenchMemory != nil || b.Type == vmbenchv1.BenchmarkSysbenchMemory:
			b.SysbenchMemory = &vmbenchv1.SysbenchMemoryParams{BlockSizes: []string{"1M"}, TotalSize: "256M"}
		case b.StressNGCPU != nil:
			b.StressNGCPU.Duration = short("2s")
		case b.Iperf3 != nil:
			b.Iperf3.Duration, b.Iperf3.Pairs = short("3s"), pair
		case b.Netperf != nil:
			b.Netperf.Duration, b.Netperf.Pairs = short("2s"), pair
			b.Netperf.Confidence = &vmbenchv1.NetperfConfidence{Level: 95, WidthPercent: 50, MinIterations: 3, MaxIterations: 3}
		case b.Netcat != nil:
			b.Netcat.Size, b.Netcat.Pairs = "16Mi", pair
		}
	}
	return s
}

// TestStudySamples runs the two study samples reduced, in pods, and checks that each design left
// what the report draws from: every HPL point of the sweep, HPCC on the workers only, the tools on
// all nodes at once, the whole iozone tables and iperf3's intervals in the runs' table ConfigMaps,
// netperf and netcat, the storage targets; and that the figures are drawn from them.
func TestStudySamples(t *testing.T) {
	e := newEnv(t)
	cluster := reduced(e.sample("suite-study-3-node-cluster.yaml", "study-cluster"))
	dockerVM := reduced(e.sample("suite-study-docker-vs-vm.yaml", "study-docker-vm"))
	e.g.Expect(k8s.Create(e.ctx, cluster)).To(Succeed())
	e.g.Expect(k8s.Create(e.ctx, dockerVM)).To(Succeed())
	ended := map[string]*vmbenchv1.BenchmarkSuite{}
	for _, spec := range []*vmbenchv1.BenchmarkSuite{cluster, dockerVM} {
		s := e.waitEnded(spec.Name, 30*time.Minute)
		e.keep(s)
		e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
			"%s Failed: %v", spec.Name, meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))
		for _, b := range spec.Spec.Benchmarks {
			r := studyResult(e, s, b.Name)
			e.g.Expect(r.Failures).To(BeZero(), "%s %s: %s", spec.Name, b.Name, r.LastError)
			e.g.Expect(r.Metrics).NotTo(BeEmpty(), "%s %s", spec.Name, b.Name)
			e.g.Expect(r.TablesLost).To(BeZero(), "%s %s", spec.Name, b.Name)
		}
		ended[spec.Name] = s
	}

	// The sweep: 2 N x 2 NB on the squarest grid of 3 ranks (1x3), each point a metric.
	s := ended["study-cluster"]
	points := 0
	for _, m := range studyResult(e, s, "hpl").Metrics {
		if strings.HasPrefix(m.Name, "HPL_Gflops_N") {
			points++
			e.g.Expect(m.Mean).To(BeNumerically(">", 0), m.Name)
			e.g.Expect(m.Name).To(HaveSuffix("_P1_Q3"))
		}
	}
	e.g.Expect(points).To(Equal(4), "HPL points of the sweep")
	// HPCC on the workers: rank 0, which reports, is the first worker rather than the master.
	for _, m := range studyResult(e, s, "hpl-workers").Metrics {
		e.g.Expect(m.Samples).NotTo(BeEmpty(), m.Name)
		for _, smp := range m.Samples {
			e.g.Expect(smp.Node).To(Equal("node01"), m.Name)
		}
	}
	e.g.Expect(studyResult(e, s, "cpu").Concurrent).To(BeTrue(), "sysbench-cpu with concurrency AllNodes")
	e.g.Expect(studyResult(e, s, "stress").Concurrent).To(BeTrue(), "stress-ng-cpu with concurrency AllNodes")

	stored := e.studyTables("study-cluster")
	kept := map[string]int{}
	for _, st := range stored {
		kept[st.Benchmark]++
	}
	nodes := int(cluster.Spec.Cluster.NodeCount())
	e.g.Expect(kept).To(HaveKeyWithValue("disk", 2*nodes), "iozone tables, one per node and target (Local, Shared)")
	e.g.Expect(kept).To(HaveKeyWithValue("net", nodes-1), "iperf3 interval tables, one per pair: master-node is the master to each worker")
	dir := filepath.Join("..", "..", "bin", "e2e", "study-cluster-plots")
	out, err := report.WritePlots(s, report.PlotOptions{Dir: dir, Tables: stored})
	e.g.Expect(err).NotTo(HaveOccurred())
	var names []string
	heatmaps := 0
	for _, f := range out.Files {
		name := filepath.Base(f)
		names = append(names, name)
		if strings.HasPrefix(name, "disk-") && strings.HasSuffix(name, "-heatmap.png") {
			heatmaps++
		}
	}
	e.t.Logf("plots in %s: %v; notes: %v", dir, names, out.Notes)
	e.g.Expect(names).To(ContainElements("hpl-hpl-sweep.png", "net-over-time.png"))
	e.g.Expect(heatmaps).To(BeNumerically(">=", 2), "iozone heatmaps (write and read)")

	// Docker against VM: netperf's transactions, netcat's transfer, the volume against the writable
	// layer.
	s = ended["study-docker-vm"]
	e.g.Expect(studyResult(e, s, "rr").Metrics).To(ContainElement(HaveField("Name", HavePrefix("tcp_rr_"))))
	disk := studyResult(e, s, "disk")
	e.g.Expect(disk.Metrics).To(ContainElements(HaveField("Name", HavePrefix("local_")), HaveField("Name", HavePrefix("rootfs_"))))

	for _, spec := range []*vmbenchv1.BenchmarkSuite{cluster, dockerVM} {
		e.g.Expect(k8s.Delete(e.ctx, ended[spec.Name])).To(Succeed())
	}
	e.expectNoChildren()
}

func studyResult(e *env, s *vmbenchv1.BenchmarkSuite, name string) vmbenchv1.BenchmarkResult {
	for _, r := range s.Status.Results {
		if r.Benchmark == name && r.Platform == "container" {
			return r
		}
	}
	e.t.Fatalf("suite %s has no result of %s", s.Name, name)
	return vmbenchv1.BenchmarkResult{}
}

// studyTables reads the whole result tables of a suite from its ConfigMaps, as vmbench report does.
func (e *env) studyTables(suite string) []tables.Stored {
	cms := &corev1.ConfigMapList{}
	e.g.Expect(k8s.List(e.ctx, cms, client.InNamespace(e.ns), client.MatchingLabels{vmbenchv1.LabelSuite: suite},
		client.HasLabels{vmbenchv1.LabelTablesOf})).To(Succeed())
	owner := &vmbenchv1.BenchmarkSuite{}
	e.g.Expect(k8s.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: suite}, owner)).To(Succeed())
	stored, problems := tables.Read(suite, owner.UID, cms.Items)
	e.g.Expect(problems).To(BeEmpty())
	return stored
}
