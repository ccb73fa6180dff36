package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const stressNGTwoStressorsYAML = `---
system-info:
      stress-ng-version: 0.15.06
      date-yyyy-mm-dd: 2026:11:22
      epoch-secs: 1795315515
metrics:
    - stressor: cpu
      bogo-ops: 2531
      bogo-ops-per-second-usr-sys-time: 975.917849
      bogo-ops-per-second-real-time: 252.526892
      wall-clock-time: 10.022695
      user-time: 2.561664
      system-time: 0.031792
      cpu-usage-per-instance: 12.937917
      max-rss: 3200
    - stressor: null
      bogo-ops: 100
      bogo-ops-per-second-usr-sys-time: 2e3
      bogo-ops-per-second-real-time: 10
      cpu-usage-per-instance: 1.5
      max-rss: 1024
...
`

func TestParseStressNG(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  []Metric
	}{
		{"YAML, --metrics-brief", readFixture(t, "stress-ng-cpu-matrixprod-yaml.yaml"), []Metric{
			m("bogo_ops_per_second_real", 252.526892, "bogo-ops/s", HigherIsBetter),
			m("bogo_ops_per_second_usr_sys", 975.917849, "bogo-ops/s", HigherIsBetter),
			m("cpu_usage_percent", 12.937917, "%", LowerIsBetter),
			m("max_rss_kb", 3200, "KiB", LowerIsBetter),
		}},
		{"YAML, --metrics", readFixture(t, "stress-ng-vm-metrics-yaml.yaml"), []Metric{
			m("bogo_ops_per_second_real", 3041.164374, "bogo-ops/s", HigherIsBetter),
			m("bogo_ops_per_second_usr_sys", 17673.967921, "bogo-ops/s", HigherIsBetter),
			m("cpu_usage_percent", 17.207027, "%", LowerIsBetter),
			m("max_rss_kb", 263952, "KiB", LowerIsBetter),
		}},
		{"stderr table, --metrics-brief", readFixture(t, "stress-ng-cpu-matrixprod.txt"), []Metric{
			m("bogo_ops_per_second_real", 247.52, "bogo-ops/s", HigherIsBetter),
			m("bogo_ops_per_second_usr_sys", 1109.71, "bogo-ops/s", HigherIsBetter),
		}},
		{"stderr table, --metrics", readFixture(t, "stress-ng-vm-metrics-yaml.txt"), []Metric{
			m("bogo_ops_per_second_real", 3041.16, "bogo-ops/s", HigherIsBetter),
			m("bogo_ops_per_second_usr_sys", 17673.97, "bogo-ops/s", HigherIsBetter),
			m("cpu_usage_percent", 17.21, "%", LowerIsBetter),
			m("max_rss_kb", 263952, "KiB", LowerIsBetter),
		}},
		{"stderr log and YAML in one capture prefer the YAML",
			append(readFixture(t, "stress-ng-cpu-matrixprod-yaml.txt"), readFixture(t, "stress-ng-cpu-matrixprod-yaml.yaml")...),
			[]Metric{
				m("bogo_ops_per_second_real", 252.526892, "bogo-ops/s", HigherIsBetter),
				m("bogo_ops_per_second_usr_sys", 975.917849, "bogo-ops/s", HigherIsBetter),
				m("cpu_usage_percent", 12.937917, "%", LowerIsBetter),
				m("max_rss_kb", 3200, "KiB", LowerIsBetter),
			}},
		// The stressor called "null" must stay a name, not become YAML null.
		{"several stressors get prefixes", []byte(stressNGTwoStressorsYAML), []Metric{
			m("cpu_bogo_ops_per_second_real", 252.526892, "bogo-ops/s", HigherIsBetter),
			m("cpu_bogo_ops_per_second_usr_sys", 975.917849, "bogo-ops/s", HigherIsBetter),
			m("cpu_cpu_usage_percent", 12.937917, "%", LowerIsBetter),
			m("cpu_max_rss_kb", 3200, "KiB", LowerIsBetter),
			m("null_bogo_ops_per_second_real", 10, "bogo-ops/s", HigherIsBetter),
			m("null_bogo_ops_per_second_usr_sys", 2000, "bogo-ops/s", HigherIsBetter),
			m("null_cpu_usage_percent", 1.5, "%", LowerIsBetter),
			m("null_max_rss_kb", 1024, "KiB", LowerIsBetter),
		}},
		{"two stressors in a real stderr table", readFixture(t, "stress-ng-cpu-vm-brief.txt"), []Metric{
			m("cpu_bogo_ops_per_second_real", 344.19, "bogo-ops/s", HigherIsBetter),
			m("cpu_bogo_ops_per_second_usr_sys", 2121.05, "bogo-ops/s", HigherIsBetter),
			m("vm_bogo_ops_per_second_real", 9421.07, "bogo-ops/s", HigherIsBetter),
			m("vm_bogo_ops_per_second_usr_sys", 44341.24, "bogo-ops/s", HigherIsBetter),
		}},
		// The "miscellaneous metrics" lines after the table start with a stressor's name but are no rows.
		{"--metrics with miscellaneous metrics after the table", readFixture(t, "stress-ng-cpu-matrix-metrics.txt"), []Metric{
			m("cpu_bogo_ops_per_second_real", 176.75, "bogo-ops/s", HigherIsBetter),
			m("cpu_bogo_ops_per_second_usr_sys", 1267.03, "bogo-ops/s", HigherIsBetter),
			m("cpu_cpu_usage_percent", 13.95, "%", LowerIsBetter),
			m("cpu_max_rss_kb", 3116, "KiB", LowerIsBetter),
			m("matrix_bogo_ops_per_second_real", 1200.33, "bogo-ops/s", HigherIsBetter),
			m("matrix_bogo_ops_per_second_usr_sys", 8320.62, "bogo-ops/s", HigherIsBetter),
			m("matrix_cpu_usage_percent", 14.43, "%", LowerIsBetter),
			m("matrix_max_rss_kb", 2860, "KiB", LowerIsBetter),
		}},
		{"YAML with a stressor's extra keys", readFixture(t, "stress-ng-cpu-matrix-metrics-yaml.yaml"), []Metric{
			m("cpu_bogo_ops_per_second_real", 212.026538, "bogo-ops/s", HigherIsBetter),
			m("cpu_bogo_ops_per_second_usr_sys", 2038.662981, "bogo-ops/s", HigherIsBetter),
			m("cpu_cpu_usage_percent", 10.400274, "%", LowerIsBetter),
			m("cpu_max_rss_kb", 6564, "KiB", LowerIsBetter),
			m("matrix_bogo_ops_per_second_real", 1026.933893, "bogo-ops/s", HigherIsBetter),
			m("matrix_bogo_ops_per_second_usr_sys", 8380.90264, "bogo-ops/s", HigherIsBetter),
			m("matrix_cpu_usage_percent", 12.253261, "%", LowerIsBetter),
			m("matrix_max_rss_kb", 2856, "KiB", LowerIsBetter),
		}},
		{"several stressors in the stderr table", []byte(
			"stress-ng: metrc: [1] stressor       bogo ops real time  usr time  sys time   bogo ops/s     bogo ops/s\n" +
				"stress-ng: metrc: [1]                           (secs)    (secs)    (secs)   (real time) (usr+sys time)\n" +
				"stress-ng: metrc: [1] cpu                2481     10.02      2.22      0.02       247.52        1109.71\n" +
				"stress-ng: metrc: [1] af-alg               10     10.00      0.10      0.10         1.00          50.00\n"),
			[]Metric{
				m("cpu_bogo_ops_per_second_real", 247.52, "bogo-ops/s", HigherIsBetter),
				m("cpu_bogo_ops_per_second_usr_sys", 1109.71, "bogo-ops/s", HigherIsBetter),
				m("af_alg_bogo_ops_per_second_real", 1, "bogo-ops/s", HigherIsBetter),
				m("af_alg_bogo_ops_per_second_usr_sys", 50, "bogo-ops/s", HigherIsBetter),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := ParseStressNG(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			checkMetrics(t, ms)
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseStressNGErrors(t *testing.T) {
	tests := []struct {
		name  string
		input []byte
		want  string
	}{
		{"YAML without metrics section", readFixture(t, "stress-ng-cpu-yaml-nometrics.yaml"), "run stress-ng with --metrics-brief"},
		{"stderr log without metrics", readFixture(t, "stress-ng-cpu-yaml-nometrics.txt"), "run stress-ng with --metrics-brief"},
		{"empty metrics section", []byte("---\nsystem-info:\n  cpus: 2\nmetrics:\n...\n"), "metrics section is empty"},
		{"metrics without figures", []byte("---\nmetrics:\n  - stressor: cpu\n    bogo-ops: 1\n...\n"), "the entry of stressor \"cpu\" has no bogo-ops-per-second-real-time"},
		{"stressor failure", []byte("stress-ng: info:  [1] dispatching hogs: 1 foo\nstress-ng: error: [1] foo: cannot open /dev/foo\n"), "stress-ng reported an error: error: [1] foo: cannot open /dev/foo"},
		{"not YAML", []byte("Segmentation fault (core dumped)\n"), "neither stress-ng YAML nor a text report"},
		{"other YAML", []byte("apiVersion: v1\nkind: Pod\n"), "is this stress-ng --yaml output?"},
		{"empty", []byte(""), "stress-ng: empty output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseError(t, ParseStressNG, tt.input, tt.want)
		})
	}
}
