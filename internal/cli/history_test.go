package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/history"
)

// historyNoise is a fixed pattern of run-to-run noise on the log scale (about ±0.4%).
var historyNoise = []float64{0.004, -0.003, 0.002, -0.004, 0.003, -0.002, 0.001, -0.001, 0.0035, -0.0025, 0.0015, -0.0035}

// syntheticHistory makes n records of schedule nightly: the stream Triad on pods (the baseline)
// and on vm, 5 repetitions each at 1% spread. From record stepAt on (when 0 <= stepAt < n) the vm
// arm is stepFactor times what it was; from record kvAt on the VMs ran on KubeVirt v1.6.0.
func syntheticHistory(n, stepAt int, stepFactor float64, kvAt int) []history.Record {
	var out []history.Record
	for i := range n {
		pods := math.Log(100) + historyNoise[i%len(historyNoise)]
		vm := math.Log(90) - historyNoise[(i+5)%len(historyNoise)]
		if stepAt >= 0 && i >= stepAt {
			vm += math.Log(stepFactor)
		}
		kv := "v1.5.0"
		if kvAt >= 0 && i >= kvAt {
			kv = "v1.6.0"
		}
		ratio := math.Exp(vm - pods)
		low, high := ratio*math.Exp(-0.0146), ratio*math.Exp(0.0146)
		v := 0.0001
		scheduled := time.Date(2026, 11, 1+i, 2, 0, 0, 0, time.UTC)
		out = append(out, history.Record{
			Suite: fmt.Sprintf("nightly-%02d", i), UID: types.UID(fmt.Sprintf("uid-%d", i)),
			Scheduled: scheduled, Finished: scheduled.Add(time.Hour), Phase: vmbenchv1.SuiteComplete,
			Baseline: "pods", ParametersHash: "p1",
			Environments: []vmbenchv1.RunEnvironment{
				{ID: "c", Platform: vmbenchv1.PlatformContainer, Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.1.0"}}},
				{ID: "v", Platform: vmbenchv1.PlatformVM, KubeVirtVersion: kv, Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.1.0"}}},
			},
			Metrics: []history.MetricRecord{
				{Benchmark: "stream", Platform: "pods", Metric: "Triad_MBps", Direction: vmbenchv1.HigherIsBetter, N: 5, Samples: 10, MeanLog: &pods, VarLog: &v},
				{Benchmark: "stream", Platform: "vm", Metric: "Triad_MBps", Direction: vmbenchv1.HigherIsBetter, N: 5, Samples: 10, MeanLog: &vm, VarLog: &v,
					Ratio: &ratio, RatioLow: &low, RatioHigh: &high},
			},
		})
	}
	return out
}

func jsonLines(t *testing.T, records []history.Record) string {
	t.Helper()
	var b strings.Builder
	for _, r := range records {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func writeHistoryFile(t *testing.T, records []history.Record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.jsonl")
	if err := os.WriteFile(path, []byte(jsonLines(t, records)), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runHistory(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = History(context.Background(), "vmbench", args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// seriesLine returns the text output's line of a platform's series.
func seriesLine(t *testing.T, out, platform string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "stream" && f[2] == platform {
			return l
		}
	}
	t.Fatalf("no series line of %s in:\n%s", platform, out)
	return ""
}

func TestHistoryTextFindsAStepAndAnEnvironmentChange(t *testing.T) {
	path := writeHistoryFile(t, syntheticHistory(10, 6, 0.95, 6))
	code, out, stderr := runHistory("nightly", "-f", path)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	wantHeader := "schedule nightly: 10 records, nightly-00 (2026-11-01T02:00:00Z) to nightly-09 (2026-11-10T02:00:00Z)\n" +
		"parameters: p1 (10 records, analysed)\n" +
		"environment changes:\n" +
		"  nightly-06: kubeVirtVersion: v1.5.0 → v1.6.0\n"
	if !strings.HasPrefix(out, wantHeader) {
		t.Errorf("header:\n%s\nwant it to start with:\n%s", out, wantHeader)
	}
	vm := seriesLine(t, out, "vm")
	if !strings.Contains(vm, "Changed at nightly-06 (−5.0%, p<0.0001)") {
		t.Errorf("vm series: %q, want a drop found at nightly-06", vm)
	}
	for _, want := range []string{" 10 ", "[", "1.0%"} {
		if !strings.Contains(vm, want) {
			t.Errorf("vm series: %q, want %q in it", vm, want)
		}
	}
	// The last 8 ratios, oldest first: 2..9, the step from record 6.
	fields := strings.Fields(vm)
	trend := strings.Join(fields[7:15], " ")
	if trend != fmt.Sprintf("%s %s %s %s %s %s %s %s", ratioText(2, false), ratioText(3, false), ratioText(4, false), ratioText(5, false),
		ratioText(6, true), ratioText(7, true), ratioText(8, true), ratioText(9, true)) {
		t.Errorf("vm trend %q", trend)
	}
	if pods := seriesLine(t, out, "pods"); !strings.Contains(pods, "Stable") || !strings.Contains(pods, "  -  ") {
		t.Errorf("pods (baseline) series: %q, want Stable and no ratio", pods)
	}
}

// ratioText is the ratio of record i of syntheticHistory as the trend shows it.
func ratioText(i int, stepped bool) string {
	d := -historyNoise[(i+5)%len(historyNoise)] - historyNoise[i%len(historyNoise)]
	r := 0.9 * math.Exp(d)
	if stepped {
		r *= 0.95
	}
	return fmt.Sprintf("%.2f", r)
}

func TestHistoryTextWithoutChange(t *testing.T) {
	path := writeHistoryFile(t, syntheticHistory(10, -1, 1, -1))
	code, out, stderr := runHistory("-f", path, "nightly")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, "\nenvironment changes: none\n") {
		t.Errorf("want no environment change in:\n%s", out)
	}
	if vm := seriesLine(t, out, "vm"); !strings.HasSuffix(strings.TrimSpace(vm), "Stable") {
		t.Errorf("vm series: %q, want Stable", vm)
	}
}

func TestHistoryTextShortHistory(t *testing.T) {
	path := writeHistoryFile(t, syntheticHistory(3, -1, 1, -1))
	_, out, _ := runHistory("-f", path)
	if vm := seriesLine(t, out, "vm"); !strings.Contains(vm, "InsufficientHistory (3 of 5 runs)") {
		t.Errorf("vm series: %q", vm)
	}
}

// twoRecords have round numbers, so the rows are known without running anything.
func twoRecords() []history.Record {
	f := func(v float64) *float64 { return &v }
	s := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	return []history.Record{
		{Suite: "nightly-a", Scheduled: s, Finished: s.Add(90 * time.Minute), Baseline: "pods", Metrics: []history.MetricRecord{
			{Benchmark: "stream", Platform: "pods", Metric: "Triad_MBps", N: 3, MeanLog: f(4.5), VarLog: f(0.25)},
			{Benchmark: "stream", Platform: "vm", Metric: "Triad_MBps", N: 3, MeanLog: f(4.25), VarLog: f(0.5), Ratio: f(0.75), RatioLow: f(0.5), RatioHigh: f(1.125)},
		}},
		{Suite: "nightly-b", Scheduled: s.Add(24 * time.Hour), Baseline: "pods", Metrics: []history.MetricRecord{
			{Benchmark: "fio", Platform: "vm", Metric: "read_iops", N: 1},
		}},
	}
}

func TestHistoryCSV(t *testing.T) {
	path := writeHistoryFile(t, twoRecords())
	code, out, stderr := runHistory("-f", path, "-o", "csv")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "suite,scheduled,finished,benchmark,platform,metric,n,meanLog,varLog,ratio,low,high\n" +
		"nightly-a,2026-11-01T02:00:00Z,2026-11-01T03:30:00Z,stream,pods,Triad_MBps,3,4.5,0.25,,,\n" +
		"nightly-a,2026-11-01T02:00:00Z,2026-11-01T03:30:00Z,stream,vm,Triad_MBps,3,4.25,0.5,0.75,0.5,1.125\n" +
		"nightly-b,2026-11-02T02:00:00Z,,fio,vm,read_iops,1,,,,,\n"
	if out != want {
		t.Errorf("csv:\n%s\nwant:\n%s", out, want)
	}
}

func TestHistoryJSON(t *testing.T) {
	path := writeHistoryFile(t, twoRecords()[1:])
	code, out, stderr := runHistory("-f", path, "--output", "json")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := `[
  {
    "suite": "nightly-b",
    "scheduled": "2026-11-02T02:00:00Z",
    "finished": "",
    "benchmark": "fio",
    "platform": "vm",
    "metric": "read_iops",
    "n": 1,
    "meanLog": null,
    "varLog": null,
    "ratio": null,
    "low": null,
    "high": null
  }
]
`
	if out != want {
		t.Errorf("json:\n%s\nwant:\n%s", out, want)
	}
}

// historyCluster serves a schedule and ConfigMaps to the history command instead of an API server.
func historyCluster(t *testing.T, objs ...*corev1.ConfigMap) {
	t.Helper()
	schedule := &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "bench", UID: "sched-uid"}}
	builder := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(schedule)
	for _, o := range objs {
		builder = builder.WithObjects(o)
	}
	c := builder.Build()
	saved := NewClusterReader
	NewClusterReader = func(_, _, namespace string) (*ClusterReader, error) {
		if namespace == "" {
			namespace = "default"
		}
		return &ClusterReader{Client: c, Namespace: namespace}, nil
	}
	t.Cleanup(func() { NewClusterReader = saved })
}

func historyConfigMap(t *testing.T, name string, owner types.UID, records []history.Record) *corev1.ConfigMap {
	yes := true
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench",
			Labels: map[string]string{vmbenchv1.LabelHistoryOf: "nightly"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSchedule",
				Name: "nightly", UID: owner, Controller: &yes}}},
		Data: map[string]string{history.DataKey: jsonLines(t, records)},
	}
}

func TestHistoryFromCluster(t *testing.T) {
	recs := syntheticHistory(4, -1, 1, -1)
	historyCluster(t,
		// Index 10 sorts before 2 by name: the order must be the index's.
		historyConfigMap(t, "nightly-history-10", "sched-uid", recs[2:]),
		historyConfigMap(t, "nightly-history-2", "sched-uid", recs[:2]),
		// Labelled, but controlled by something else: not history.
		historyConfigMap(t, "nightly-history-3", "other-uid", syntheticHistory(1, -1, 1, -1)),
	)
	code, out, stderr := runHistory("nightly", "-n", "bench", "-o", "csv")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var suites []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		suites = append(suites, strings.SplitN(l, ",", 2)[0])
	}
	if got, want := strings.Join(suites, " "), "nightly-00 nightly-00 nightly-01 nightly-01 nightly-02 nightly-02 nightly-03 nightly-03"; got != want {
		t.Errorf("suites of the rows: %s, want %s", got, want)
	}
	code, out, _ = runHistory("nightly", "-n", "bench")
	if code != ExitOK || !strings.HasPrefix(out, "schedule bench/nightly: 4 records, nightly-00") {
		t.Errorf("exit %d, text:\n%s", code, out)
	}
}

func TestHistoryErrors(t *testing.T) {
	historyCluster(t, historyConfigMap(t, "nightly-history-0", "other-uid", syntheticHistory(2, -1, 1, -1)))
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"suite\":\"a\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"missing", "-n", "bench"}, ExitError, `benchmarkschedule "missing" not found in namespace "bench": list them with kubectl get benchmarkschedules -n bench`},
		{[]string{"nightly", "-n", "bench"}, ExitError, "schedule nightly has no history records: the schedule has not finished a suite yet"},
		{[]string{"nightly", "-f", empty}, ExitError, "the schedule has not finished a suite yet"},
		{[]string{"-f", bad}, ExitError, "line 2 is not a history record"},
		{[]string{"nightly", "-n", "bench", "-o", "xml"}, ExitUsage, `-o takes text, json or csv, got "xml"`},
		{[]string{"a", "b"}, ExitUsage, "one schedule at a time"},
		{nil, ExitUsage, "name a schedule"},
	}
	for _, tc := range tests {
		code, _, stderr := runHistory(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr, tc.code, tc.err)
		}
	}
}

// A step of both arms is no step of their ratio: the ratio series stays Stable, the baseline's own
// series changes.
func TestHistoryStepOfBothArms(t *testing.T) {
	recs := syntheticHistory(10, 6, 0.95, -1)
	for i := 6; i < len(recs); i++ {
		*recs[i].Metrics[0].MeanLog += math.Log(0.95)
	}
	_, out, _ := runHistory("-f", writeHistoryFile(t, recs))
	if vm := seriesLine(t, out, "vm"); !strings.HasSuffix(strings.TrimSpace(vm), "Stable") {
		t.Errorf("vm series: %q, want Stable", vm)
	}
	if pods := seriesLine(t, out, "pods"); !strings.Contains(pods, "Changed at nightly-06 (−5.0%") {
		t.Errorf("pods series: %q, want a drop at nightly-06", pods)
	}
}

// For a lower-is-better metric, a VM that takes 5% longer is 5% worse: the ratio drops.
func TestHistoryLowerIsBetter(t *testing.T) {
	recs := syntheticHistory(10, 6, 1.05, -1)
	for _, r := range recs {
		for i := range r.Metrics {
			r.Metrics[i].Direction = vmbenchv1.LowerIsBetter
		}
	}
	_, out, _ := runHistory("-f", writeHistoryFile(t, recs))
	if vm := seriesLine(t, out, "vm"); !strings.Contains(vm, "Changed at nightly-06 (−4.8%") {
		t.Errorf("vm series: %q, want a drop of 1/1.05 at nightly-06", vm)
	}
}

func TestHistoryHTML(t *testing.T) {
	page := filepath.Join(t.TempDir(), "history.html")
	code, _, stderr := runHistory("nightly", "-f", writeHistoryFile(t, syntheticHistory(10, 6, 0.95, 4)), "--html", page)
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := string(b)
	if n := strings.Count(out, "<svg "); n != 2 {
		t.Errorf("%d plots, want one per series (2)", n)
	}
	for _, want := range []string{
		`<line class="change" data-suite="nightly-06"`,
		`<line class="env" data-suite="nightly-04"`,
		"<title>nightly-04: kubeVirtVersion: v1.5.0 → v1.6.0</title>",
		`<polygon class="band" points="`,
		"<h2>stream Triad_MBps on vm: ratio to pods</h2>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// One change, in the vm series only; the environment change is marked in both plots.
	if n := strings.Count(out, `class="change"`); n != 1 {
		t.Errorf("%d change lines, want 1", n)
	}
	if n := strings.Count(out, `class="env"`); n != 2 {
		t.Errorf("%d environment lines, want 2", n)
	}
	for _, bad := range []string{"http://", "https://", "<script"} {
		if strings.Contains(strings.ReplaceAll(out, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("page is not self-contained: it has %q", bad)
		}
	}
}

// A new parameters hash starts a new series: the older records are counted, not analysed.
func TestHistoryParameterHashes(t *testing.T) {
	recs := syntheticHistory(10, -1, 1, -1)
	for i := range 3 {
		recs[i].ParametersHash = "p0"
	}
	_, out, _ := runHistory("-f", writeHistoryFile(t, recs))
	if !strings.Contains(out, "\nparameters: p0 (3 records), p1 (7 records, analysed)\n") {
		t.Errorf("want both hashes in the header:\n%s", out)
	}
	if f := strings.Fields(seriesLine(t, out, "vm")); f[3] != "7" {
		t.Errorf("vm series has %s runs, want the 7 of the newest hash", f[3])
	}
}
