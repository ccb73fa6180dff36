package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/disruption"
)

// migrationPolicySuite is a finished suite whose migration benchmark mig ran on the VM platforms
// given, each with its flags (1 completed, 0 not), pauses (ms) and totals (s), one sample a
// migration; the platforms' policies as in config/samples/suite-migration-policies.yaml.
func migrationPolicySuite(results map[string][3][]float64, names ...string) *vmbenchv1.BenchmarkSuite {
	s := &vmbenchv1.BenchmarkSuite{}
	s.APIVersion, s.Kind = vmbenchv1.GroupVersion.String(), "BenchmarkSuite"
	s.Name, s.Namespace = "migpol", "bench"
	policies := map[string]*vmbenchv1.VMMigrationPolicy{
		"vmconverge": {AllowAutoConverge: ptr.To(true), CompletionTimeoutPerGiB: ptr.To(int64(40))},
		"vmpostcopy": {AllowPostCopy: ptr.To(true)},
		"vmcapped":   {BandwidthPerMigration: ptr.To(resource.MustParse("64Mi"))},
	}
	for _, n := range names {
		p := vmbenchv1.Platform{Name: n, Type: vmbenchv1.PlatformVM}
		if mp := policies[n]; mp != nil {
			p.VM = &vmbenchv1.VMSettings{MigrationPolicy: mp}
		}
		s.Spec.Platforms = append(s.Spec.Platforms, p)
	}
	s.Spec.Baseline = names[0]
	s.Spec.Repetitions = 2
	s.Spec.Cluster = vmbenchv1.ClusterShape{Nodes: 1, CPU: 2, Memory: ptr.To(resource.MustParse("2Gi"))}
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{vmbenchv1.Benchmark{Name: "mig", Type: vmbenchv1.BenchmarkMigration}.WithDefaults()}
	metric := func(name string, v []float64) vmbenchv1.MetricSummary {
		m := vmbenchv1.MetricSummary{Name: name, N: int32(len(v))}
		for _, x := range v {
			m.Samples = append(m.Samples, vmbenchv1.Sample{Value: x})
		}
		return m
	}
	for _, n := range names {
		r, ok := results[n]
		if !ok {
			continue
		}
		s.Status.Results = append(s.Status.Results, vmbenchv1.BenchmarkResult{Benchmark: "mig", Platform: n, Metrics: []vmbenchv1.MetricSummary{
			metric(disruption.MetricCompleted, r[0]), metric(disruption.MetricPause, r[1]), metric(disruption.MetricTotal, r[2])}})
	}
	return s
}

// Protects issue 32 item 4 (vmbench suggest ranks the MigrationPolicy variants on the user's own
// load): the platform whose migrations all completed comes before a faster one that lost one; among
// those that all completed the shorter pause first; two whose pause and total intervals overlap are
// said not to be told apart; each names its policy.
func TestRankMigrationPolicies(t *testing.T) {
	suite := migrationPolicySuite(map[string][3][]float64{
		"vmdefault":  {{1, 1, 1}, {700, 760, 640}, {12, 11, 13}},
		"vmconverge": {{1, 1, 1}, {300, 320, 280}, {20, 22, 21}},
		"vmpostcopy": {{1, 1, 1}, {310, 330, 290}, {19, 21, 20}},
		"vmcapped":   {{1, 0, 1}, {100, 110}, {30, 31}},
	}, "vmdefault", "vmconverge", "vmpostcopy", "vmcapped")
	groups := RankMigrationPolicies(suite)
	if len(groups) != 1 || len(groups[0]) != 4 {
		t.Fatalf("groups %+v, want one of 4 platforms", groups)
	}
	var order []string
	for _, r := range groups[0] {
		order = append(order, r.Line.Platform)
	}
	if strings.Join(order, " ") != "vmconverge vmpostcopy vmdefault vmcapped" {
		t.Errorf("ranked %v, want vmconverge vmpostcopy vmdefault vmcapped (all completed first, then the shorter pause)", order)
	}
	g := groups[0]
	if g[0].TiedWithAbove || !g[1].TiedWithAbove || g[2].TiedWithAbove || g[3].TiedWithAbove {
		t.Errorf("ties %v %v %v %v, want only vmpostcopy tied with vmconverge", g[0].TiedWithAbove, g[1].TiedWithAbove, g[2].TiedWithAbove, g[3].TiedWithAbove)
	}
	if g[0].Policy != "MigrationPolicy completionTimeoutPerGiB 40, allowAutoConverge true" || g[2].Policy != "the cluster's migration settings" {
		t.Errorf("policies %q, %q", g[0].Policy, g[2].Policy)
	}
	var out bytes.Buffer
	if err := WriteMigrationRanking(&out, suite.Name, groups); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"Suite migpol, migration benchmark mig: 4 VM platforms ranked by the share of migrations completed",
		"1. vmconverge: migration: pause 300 ms [250, 350], total 21 s [18.5, 23.5]",
		"(3 of 3 completed); MigrationPolicy completionTimeoutPerGiB 40, allowAutoConverge true\n",
		"2. vmpostcopy: migration: pause 310 ms",
		"not told apart from vmconverge (their pause and total intervals overlap: raise spec.repetitions)\n",
		"4. vmcapped: migration: pause 105 ms",
		"(2 of 3 completed); MigrationPolicy bandwidthPerMigration 64Mi\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the ranking lacks %q:\n%s", want, text)
		}
	}
	// One platform alone is nothing to rank.
	if got := RankMigrationPolicies(migrationPolicySuite(map[string][3][]float64{"vmdefault": {{1}, {700}, {12}}}, "vmdefault")); len(got) != 0 {
		t.Errorf("one platform ranked: %+v", got)
	}
}

// A suite whose migration benchmark ran on one VM platform gets a suite that runs it beside the
// auto-converge, post-copy and bandwidth-cap variants of that platform, each changing only its
// setting (a platform's own policy kept), that the API's validation accepts; without migration
// results there is nothing to vary, and the error says what to run.
func TestSuggestMigrationPolicies(t *testing.T) {
	suite := migrationPolicySuite(map[string][3][]float64{"vmcapped": {{1, 1}, {700, 760}, {12, 11}}}, "vmcapped")
	suite.Spec.Repetitions = 1
	s, err := SuggestMigrationPolicies(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	spec := s.Suite.Spec
	if s.Suite.Name != "migpol-migpol" || spec.Baseline != "vmcapped" || len(spec.Benchmarks) != 1 || spec.Benchmarks[0].Name != "mig" || spec.Repetitions != 2 {
		t.Errorf("suite %s: baseline %s, benchmarks %+v, repetitions %d", s.Suite.Name, spec.Baseline, spec.Benchmarks, spec.Repetitions)
	}
	want := map[string]vmbenchv1.VMMigrationPolicy{
		"vmcapped":     {BandwidthPerMigration: ptr.To(resource.MustParse("64Mi"))},
		"vmcappedconv": {BandwidthPerMigration: ptr.To(resource.MustParse("64Mi")), AllowAutoConverge: ptr.To(true)},
		"vmcappedpost": {BandwidthPerMigration: ptr.To(resource.MustParse("64Mi")), AllowPostCopy: ptr.To(true)},
		"vmcappedcap":  {BandwidthPerMigration: ptr.To(resource.MustParse("32Mi"))},
	}
	if len(spec.Platforms) != len(want) {
		t.Fatalf("platforms %+v, want %d", spec.Platforms, len(want))
	}
	for _, p := range spec.Platforms {
		w, ok := want[p.Name]
		gotYAML, _ := yaml.Marshal(p.VM.MigrationPolicy)
		wantYAML, _ := yaml.Marshal(w)
		if !ok || string(gotYAML) != string(wantYAML) {
			t.Errorf("platform %s: policy %s, want %s", p.Name, gotYAML, wantYAML)
		}
	}
	if len(s.Variants) != 3 || !strings.Contains(strings.Join(s.Notices, " "), "repetitions raised to 2") {
		t.Errorf("variants %+v, notices %q", s.Variants, s.Notices)
	}
	var out bytes.Buffer
	if err := WriteSuggestion(&out, s, suite.Name); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "to measure what it does to the migrations of this load") {
		t.Errorf("header: %s", out.String())
	}

	bare := migrationPolicySuite(nil, "vmdefault")
	if _, err := SuggestMigrationPolicies(bare, ""); !errors.Is(err, ErrNoMigrationResults) || !strings.Contains(err.Error(), "suite-migration-policies.yaml") {
		t.Errorf("no migration results: %v", err)
	}
}

// The verb: --migration ranks a suite of several VM platforms on stdout, and writes a suite of
// variants for a suite of one.
func TestSuggestCommandMigration(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, s any) string {
		raw, err := yaml.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ranked := write("ranked.yaml", migrationPolicySuite(map[string][3][]float64{
		"vmdefault": {{1, 1}, {700, 760}, {12, 11}}, "vmpostcopy": {{1, 1}, {300, 320}, {20, 22}}}, "vmdefault", "vmpostcopy"))
	var stdout, stderr bytes.Buffer
	if code := SuggestCommand(context.Background(), "vmbench", []string{"--migration", "-f", ranked}, nil, &stdout, &stderr); code != ExitOK ||
		!strings.Contains(stdout.String(), "1. vmpostcopy") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	single := write("single.yaml", migrationPolicySuite(map[string][3][]float64{"vmdefault": {{1, 1}, {700, 760}, {12, 11}}}, "vmdefault"))
	stdout.Reset()
	stderr.Reset()
	if code := SuggestCommand(context.Background(), "vmbench", []string{"--migration", "-f", single}, nil, &stdout, &stderr); code != ExitOK ||
		!strings.Contains(stdout.String(), "name: vmdefaulpost") || !strings.Contains(stdout.String(), "for mig (3 metrics)") || !strings.Contains(stderr.String(), "3 VM variant(s) of 1 benchmark(s)") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
