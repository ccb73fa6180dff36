package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// scaleMetric multiplies every value of one metric, as if the platform had become faster or slower.
func scaleMetric(s *vmbenchv1.BenchmarkSuite, bench, platform, metric string, factor float64) {
	for i := range s.Status.Results {
		res := &s.Status.Results[i]
		if res.Benchmark != bench || res.Platform != platform {
			continue
		}
		for j := range res.Metrics {
			m := &res.Metrics[j]
			if m.Name != metric {
				continue
			}
			for k := range m.Samples {
				m.Samples[k].Value *= factor
			}
			m.Mean *= factor
			m.StdDev *= factor
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name      string
		bench     string
		metric    string
		factor    float64
		tolerance float64
		want      Verdict
		change    float64
	}{
		{"unchanged", "sysbench-cpu", "events_per_second", 1, DefaultTolerance, VerdictOK, 0},
		{"higher is better, 3% drop within 5%", "sysbench-cpu", "events_per_second", 0.97, DefaultTolerance, VerdictOK, -3},
		{"higher is better, 10% drop", "sysbench-cpu", "events_per_second", 0.90, DefaultTolerance, VerdictRegression, -10},
		{"higher is better, 10% drop within 15%", "sysbench-cpu", "events_per_second", 0.90, 0.15, VerdictOK, -10},
		{"higher is better, 10% gain", "sysbench-cpu", "events_per_second", 1.10, DefaultTolerance, VerdictImproved, 10},
		{"lower is better, 6% rise", "sysbench-cpu", "latency_avg_ms", 1.06, DefaultTolerance, VerdictRegression, 6},
		{"lower is better, 10% fall", "sysbench-cpu", "latency_avg_ms", 0.90, DefaultTolerance, VerdictImproved, -10},
		{"trimmed samples, 20% drop", "iozone", "read_65536k_4k", 0.80, DefaultTolerance, VerdictRegression, -20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			current := demoSuite()
			current.Name = "demo-new"
			scaleMetric(current, tt.bench, "container", tt.metric, tt.factor)
			c, err := Compare(current, demoSuite(), tt.tolerance)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Changes) != 2*(31*2+5+40+4) || len(c.Missing) != 0 {
				t.Errorf("%d changes, %d missing", len(c.Changes), len(c.Missing))
			}
			regressions := 0
			if tt.want == VerdictRegression {
				regressions = 1
			}
			if c.Regressions() != regressions {
				t.Errorf("%d regressions, want %d", c.Regressions(), regressions)
			}
			for _, ch := range c.Changes {
				if ch.Benchmark == tt.bench && ch.Metric == tt.metric && ch.Platform == "container" {
					if ch.Verdict != tt.want || ch.ChangePercent == nil || !near(*ch.ChangePercent, tt.change, 1e-6) && tt.change != 0 {
						t.Errorf("verdict %s change %v, want %s %v", ch.Verdict, value(ch.ChangePercent), tt.want, tt.change)
					}
					return
				}
			}
			t.Error("metric not compared")
		})
	}
}

func TestCompareTable(t *testing.T) {
	current := demoSuite()
	current.Name = "demo-new"
	scaleMetric(current, "sysbench-cpu", "container", "events_per_second", 0.9)
	// A VM platform that moved from emulation to KVM is flagged: its change measures the accelerator.
	for i := range current.Status.Runs {
		if current.Status.Runs[i].Platform == "vm" {
			current.Status.Runs[i].Accelerator = vmbenchv1.AcceleratorKVM
		}
	}
	for i := range current.Status.Results {
		current.Status.Results[i].Emulated = false
	}
	// A metric the current suite lost is listed, not counted as a regression.
	for i := range current.Status.Results {
		if current.Status.Results[i].Benchmark == "iperf3" && current.Status.Results[i].Platform == "vm" {
			current.Status.Results[i].Metrics = current.Status.Results[i].Metrics[:3]
		}
	}
	c, err := Compare(current, demoSuite(), DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := c.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"Comparison of bench/demo-new against baseline suite bench/demo; tolerance 5% in each metric's bad direction",
		"note: iperf3/vm/cpu_host_percent is in the baseline suite but not in the current one",
		"(emulation differs): one suite ran this platform's VMs under software emulation",
		"FAIL: 1 of 221 metrics regressed beyond 5%",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}
	var regressed string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "REGRESSION") {
			regressed = strings.Join(strings.Fields(l), " ")
		}
	}
	// n counts repetitions: 3, of three nodes each.
	if want := "sysbench-cpu container events_per_second events/s higher better 1004 (n=3) 903.5 (n=3) -10.0% <0.0001 <0.0001 REGRESSION"; regressed != want {
		t.Errorf("regression line %q\nwant %q", regressed, want)
	}
	tests := 0
	for _, ch := range c.Changes {
		if (ch.PValue == nil) != (ch.PValueHolm == nil) || (ch.PValue != nil && *ch.PValueHolm < *ch.PValue) {
			t.Errorf("%s/%s/%s: p %v, Holm %v", ch.Benchmark, ch.Platform, ch.Metric, value(ch.PValue), value(ch.PValueHolm))
		}
		if ch.PValue != nil {
			tests++
		}
	}
	// hpcc-n8000 has one VM repetition: its 31 metrics on the VM have no test.
	if c.Tests != tests || tests != 221-31 {
		t.Errorf("%d tests (%d with a p-value), want %d", c.Tests, tests, 221-31)
	}
	if want := fmt.Sprintf("P HOLM: adjusted with Holm-Bonferroni over the %d changes with a test", tests); !strings.Contains(text, want) {
		t.Errorf("comparison lacks %q", want)
	}
}

func TestCompareErrors(t *testing.T) {
	empty := demoSuite()
	empty.Status = vmbenchv1.BenchmarkSuiteStatus{}
	other := demoSuite()
	for i := range other.Status.Results {
		other.Status.Results[i].Benchmark += "-renamed"
	}
	tests := []struct {
		name              string
		current, baseline *vmbenchv1.BenchmarkSuite
		tolerance         float64
		want              string
	}{
		{"current without results", empty, demoSuite(), 0.05, "suite bench/demo has no results to compare"},
		{"baseline without results", demoSuite(), empty, 0.05, "suite bench/demo has no results to compare"},
		{"nothing in common", demoSuite(), other, 0.05, "the two suites have no benchmark, platform and metric in common"},
		{"negative tolerance", demoSuite(), demoSuite(), -0.01, "tolerance must not be negative, got -0.01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compare(tt.current, tt.baseline, tt.tolerance); err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
