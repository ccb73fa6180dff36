package chart

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
	"github.com/vmbench/vmbench/internal/metrics"
)

// prometheusRule is the part of a monitoring.coreos.com/v1 PrometheusRule the chart renders.
type prometheusRule struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       ruleFile       `json:"spec"`
}

// ruleFile is a Prometheus rules file, which is also a PrometheusRule's spec.
type ruleFile struct {
	Groups []ruleGroup `json:"groups"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

var scheduleAlerts = []string{"VMBenchScheduleRegression", "VMBenchScheduleNotSucceeding", "VMBenchScheduleInvalid", "VMBenchScheduleStuck",
	"VMBenchScheduleBaselineDrift"}

// renderRule renders the chart with the PrometheusRule enabled and the given values; nil when the
// chart renders none.
func renderRule(t *testing.T, sets ...string) *prometheusRule {
	t.Helper()
	args := []string{"--set", "prometheusRule.enabled=true"}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	objs := render(t, args...)
	if len(objs["PrometheusRule"]) == 0 {
		return nil
	}
	doc, ok := objs["PrometheusRule"]["vmbench"]
	if !ok {
		t.Fatalf("no PrometheusRule vmbench: %v", objs.names("PrometheusRule"))
	}
	pr := &prometheusRule{}
	if err := yaml.UnmarshalStrict(doc, pr); err != nil {
		t.Fatal(err)
	}
	return pr
}

func (pr *prometheusRule) alerts() map[string]rule {
	out := map[string]rule{}
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r
		}
	}
	return out
}

// promtool finds Prometheus's promtool: the test is skipped without it on a developer's machine and
// fails where VMBENCH_REQUIRE_TOOLS is set (hack/test-tools.sh installs it).
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err == nil {
		return path
	}
	if os.Getenv("VMBENCH_REQUIRE_TOOLS") != "" {
		t.Fatalf("promtool is not on PATH and VMBENCH_REQUIRE_TOOLS is set: run hack/test-tools.sh to install it")
	}
	t.Skip("no promtool here (hack/test-tools.sh installs it)")
	return ""
}

// TestPrometheusRules checks the rendered rules with promtool and runs the unit tests of
// testdata/prometheusrule-tests.yaml on them: each alert fires on its series and not on the others.
func TestPrometheusRules(t *testing.T) {
	bin := promtool(t)
	pr := renderRule(t)
	if pr == nil {
		t.Fatal("prometheusRule.enabled=true renders no PrometheusRule")
	}
	dir := t.TempDir()
	rules, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o600); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("testdata/prometheusrule-tests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yaml"), tests, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "tests.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s\nrules.yaml:\n%s", strings.Join(args, " "), err, out, rules)
		}
	}
	// Every alert has a unit test.
	for _, name := range scheduleAlerts {
		if !strings.Contains(string(tests), "alertname: "+name+"\n") {
			t.Errorf("testdata/prometheusrule-tests.yaml tests no %s", name)
		}
	}
}

// TestPrometheusRulesReadExportedMetrics checks that every metric an alert reads is one the manager
// exports, and every label an alert matches or groups by is one the manager puts on it, with the
// value the alert looks for (T14): renaming a gauge, a label or a label value in the exporter cannot
// leave an alert that never fires.
func TestPrometheusRulesReadExportedMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics.Register(reg)
	now := metav1.NewTime(time.Now())
	sched := &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "chart-test", Name: "nightly", CreationTimestamp: now},
		Status: vmbenchv1.BenchmarkScheduleStatus{LastSuccessfulTime: &now, NextScheduleTime: &now, Records: 1,
			Conditions: []metav1.Condition{{Type: vmbenchv1.ConditionValid, Status: metav1.ConditionFalse, Reason: "InvalidSchedule"}},
			Findings:   []vmbenchv1.Finding{{ID: "a", Arm: vmbenchv1.ArmVM, Regression: true, State: vmbenchv1.FindingUntriaged}},
			Baseline:   &vmbenchv1.BaselineStatus{Suite: "nightly-1", Verdict: vmbenchv1.BaselineWithin}}}
	metrics.RecordSchedule(sched)
	ratio := 1.0
	metrics.RecordScheduleRecord(sched.Namespace, sched.Name, history.Record{Metrics: []history.MetricRecord{
		{Benchmark: "b", Platform: "vm", Metric: "m", N: 1, Ratio: &ratio}}})
	t.Cleanup(func() { metrics.ForgetSchedule(sched.Namespace, sched.Name) })
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// exported: metric name -> label name -> the values it has.
	exported := map[string]map[string][]string{}
	for _, f := range families {
		labels := map[string][]string{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = append(labels[l.GetName()], l.GetValue())
			}
		}
		exported[f.GetName()] = labels
	}
	pr := renderRule(t)
	if pr == nil {
		t.Fatal("prometheusRule.enabled=true renders no PrometheusRule")
	}
	for _, r := range pr.alerts() {
		expr, err := parser.ParseExpr(r.Expr)
		if err != nil {
			t.Errorf("%s: %v", r.Alert, err)
			continue
		}
		var read []string
		var grouping []string
		parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
			switch n := node.(type) {
			case *parser.VectorSelector:
				labels, ok := exported[n.Name]
				if !strings.HasPrefix(n.Name, "vmbench_") {
					t.Errorf("%s reads %q, not a vmbench metric", r.Alert, n.Name)
					return nil
				}
				if !ok {
					t.Errorf("%s reads %s, which the manager does not export", r.Alert, n.Name)
					return nil
				}
				read = append(read, n.Name)
				for _, m := range n.LabelMatchers {
					if m.Name == "__name__" {
						continue
					}
					values, ok := labels[m.Name]
					if !ok {
						t.Errorf("%s matches %s on %s, a label the manager does not put on it (it has %v)", r.Alert, n.Name, m, labelNames(labels))
						continue
					}
					if !slices.ContainsFunc(values, m.Matches) {
						t.Errorf("%s matches %s on %s, which no exported value %v satisfies", r.Alert, n.Name, m, values)
					}
				}
			case *parser.AggregateExpr:
				grouping = append(grouping, n.Grouping...)
			case *parser.BinaryExpr:
				if n.VectorMatching != nil {
					grouping = append(grouping, n.VectorMatching.MatchingLabels...)
				}
			}
			return nil
		})
		if len(read) == 0 {
			t.Errorf("%s reads no vmbench metric: %s", r.Alert, r.Expr)
		}
		for _, label := range grouping {
			for _, name := range read {
				if _, ok := exported[name][label]; !ok {
					t.Errorf("%s groups or matches by %s, a label %s does not have (it has %v)", r.Alert, label, name, labelNames(exported[name]))
				}
			}
		}
	}
}

func labelNames(labels map[string][]string) []string {
	names := slices.Collect(maps.Keys(labels))
	slices.Sort(names)
	return names
}

func TestPrometheusRuleValues(t *testing.T) {
	if objs := render(t); len(objs["PrometheusRule"]) != 0 {
		t.Fatalf("a PrometheusRule by default: %v (clusters without the Prometheus Operator lack its CRD)", objs.names("PrometheusRule"))
	}
	// The schema refuses an alert name it does not know, so that a typo does not leave it enabled.
	if _, stderr, err := helm(t, "template", release, "charts/vmbench", "--set", "prometheusRule.disabled.VMBenchScheduleStuk=true"); err == nil {
		t.Error("helm template accepts prometheusRule.disabled.VMBenchScheduleStuk, a name no alert has")
	} else if !strings.Contains(stderr, "VMBenchScheduleStuk") {
		t.Errorf("helm template refuses prometheusRule.disabled.VMBenchScheduleStuk without naming it: %s", stderr)
	}
	if pr := renderRule(t, "prometheusRule.rules.schedules.enabled=false"); pr != nil {
		t.Errorf("rules.schedules.enabled=false still renders the groups %+v", pr.Spec.Groups)
	}

	pr := renderRule(t)
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" {
		t.Errorf("apiVersion %s kind %s", pr.APIVersion, pr.Kind)
	}
	alerts := pr.alerts()
	runbooks, err := os.ReadFile(filepath.Join(root, "docs", "runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range scheduleAlerts {
		// GitHub's anchor of a heading "## Name" is its name in lower case.
		if !strings.Contains(string(runbooks), "\n## "+name+"\n") {
			t.Errorf("docs/runbooks.md has no section \"## %s\" for the alert's runbook_url", name)
		}
		r, ok := alerts[name]
		if !ok {
			t.Errorf("no alert %s by default; have %v", name, alerts)
			continue
		}
		if r.Labels["severity"] != "warning" {
			t.Errorf("%s: severity %q, want warning", name, r.Labels["severity"])
		}
		want := "https://github.com/vmbench/vmbench/blob/main/docs/runbooks.md#" + strings.ToLower(name)
		if r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", name, r.Annotations["runbook_url"], want)
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: no summary or description: %v", name, r.Annotations)
		}
	}
	if !strings.Contains(alerts["VMBenchScheduleNotSucceeding"].Expr, "> 172800") ||
		!strings.Contains(alerts["VMBenchScheduleStuck"].Expr, "> 3600") {
		t.Errorf("default thresholds are not 2 days and 1 hour: %q, %q", alerts["VMBenchScheduleNotSucceeding"].Expr, alerts["VMBenchScheduleStuck"].Expr)
	}

	pr = renderRule(t, "prometheusRule.disabled.VMBenchScheduleStuck=true",
		"prometheusRule.labels.release=kps",
		"prometheusRule.additionalRuleLabels.team=perf",
		"prometheusRule.severities.VMBenchScheduleRegression=critical",
		"prometheusRule.runbookBaseURL=https://wiki.example.com/vmbench/",
		"prometheusRule.rules.schedules.notSucceedingSeconds=90000",
		"prometheusRule.rules.schedules.stuckSeconds=7200")
	alerts = pr.alerts()
	if _, ok := alerts["VMBenchScheduleStuck"]; ok {
		t.Error("disabled.VMBenchScheduleStuck=true still renders it")
	}
	if len(alerts) != len(scheduleAlerts)-1 {
		t.Errorf("alerts %v, want all but VMBenchScheduleStuck", alerts)
	}
	if labels, _ := pr.Metadata["labels"].(map[string]any); labels["release"] != "kps" {
		t.Errorf("prometheusRule.labels are not on the PrometheusRule: %v", pr.Metadata["labels"])
	}
	for name, r := range alerts {
		if r.Labels["team"] != "perf" {
			t.Errorf("%s: additionalRuleLabels missing: %v", name, r.Labels)
		}
		if want := "https://wiki.example.com/vmbench#" + strings.ToLower(name); r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", name, r.Annotations["runbook_url"], want)
		}
	}
	if s := alerts["VMBenchScheduleRegression"].Labels["severity"]; s != "critical" {
		t.Errorf("severities.VMBenchScheduleRegression=critical gives severity %q", s)
	}
	if s := alerts["VMBenchScheduleNotSucceeding"].Labels["severity"]; s != "warning" {
		t.Errorf("VMBenchScheduleNotSucceeding's severity %q, want the default warning", s)
	}
	if !strings.Contains(alerts["VMBenchScheduleNotSucceeding"].Expr, "> 90000") {
		t.Errorf("notSucceedingSeconds=90000 is not the threshold: %q", alerts["VMBenchScheduleNotSucceeding"].Expr)
	}
	if pr := renderRule(t, "prometheusRule.rules.schedules.stuckSeconds=7200"); !strings.Contains(pr.alerts()["VMBenchScheduleStuck"].Expr, "> 7200") {
		t.Errorf("stuckSeconds=7200 is not the threshold: %q", pr.alerts()["VMBenchScheduleStuck"].Expr)
	}
}
