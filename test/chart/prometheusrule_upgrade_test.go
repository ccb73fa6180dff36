package chart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/metrics"
)

// An upgrade that moved 200 series is one finding, and the alert fires for it: the manager's own
// series for a status holding one confirmed finding that lists 16 of 200 regressed series (and an
// improvement triaged away) are given to promtool, and VMBenchScheduleRegression fires once, for 1
// finding, not for 200.
func TestPrometheusRuleFiresForAGroupedFinding(t *testing.T) {
	bin := promtool(t)
	pr := renderRule(t)
	if pr == nil {
		t.Fatal("prometheusRule.enabled=true renders no PrometheusRule")
	}
	f := vmbenchv1.Finding{ID: "0123456789abcdef", Benchmark: "stress-ng", Metric: "m000", Platform: "vm", Arm: vmbenchv1.ArmVM,
		Before: "upgrade-1", After: "upgrade-2", Time: metav1.NewTime(time.Unix(0, 0)), Direction: "down", Regression: true, Ratio: 0.92,
		State: vmbenchv1.FindingUntriaged, Confirmation: vmbenchv1.ConfirmationConfirmed, SeriesCount: 200, Regressions: 200}
	for i := range vmbenchv1.MaxFindingSeries {
		f.Series = append(f.Series, vmbenchv1.FindingSeries{Benchmark: "stress-ng", Metric: fmt.Sprintf("m%03d", i), Platform: "vm",
			Arm: vmbenchv1.ArmVM, Direction: "down", Regression: true, Ratio: 0.92})
	}
	sched := &vmbenchv1.BenchmarkSchedule{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "upgrade"},
		Status: vmbenchv1.BenchmarkScheduleStatus{Records: 3, Findings: []vmbenchv1.Finding{f}}}
	reg := prometheus.NewRegistry()
	metrics.Register(reg)
	metrics.RecordSchedule(sched)
	t.Cleanup(func() { metrics.ForgetSchedule(sched.Namespace, sched.Name) })
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	// The open findings as the manager exports them, steady for 30 minutes.
	var input []string
	for _, fam := range families {
		if fam.GetName() != "vmbench_schedule_findings_open" {
			continue
		}
		for _, m := range fam.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			input = append(input, fmt.Sprintf("      - series: '%s{%s}'\n        values: '%gx30'", fam.GetName(), strings.Join(labels, ","),
				m.GetGauge().GetValue()))
		}
	}
	if len(input) == 0 {
		t.Fatal("the manager exports no vmbench_schedule_findings_open for the schedule")
	}
	tests := `rule_files:
  - rules.yaml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
` + strings.Join(input, "\n") + `
    alert_rule_test:
      - eval_time: 10m
        alertname: VMBenchScheduleRegression
        exp_alerts:
          - exp_labels:
              severity: warning
              namespace: bench
              schedule: upgrade
            exp_annotations:
              summary: "BenchmarkSchedule bench/upgrade has untriaged regressions."
              description: "The history of BenchmarkSchedule upgrade in namespace bench shows 1 regression finding(s) nobody has triaged (status.findings in state Untriaged). Look at them with ` + "`kubectl describe bsched -n bench upgrade`" + ` and ` + "`vmbench history upgrade -n bench`" + `, then fix the cause or triage each finding in the schedule's spec.triage (Acknowledged, Expected or Invalid)."
              runbook_url: https://github.com/vmbench/vmbench/blob/main/docs/runbooks.md#vmbenchscheduleregression
`
	dir := t.TempDir()
	rules, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"rules.yaml": rules, "tests.yaml": []byte(tests)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "test", "rules", "tests.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s\ntests.yaml:\n%s", err, out, tests)
	}
}
