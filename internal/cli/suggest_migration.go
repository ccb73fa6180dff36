package cli

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/analysis"
	"github.com/vmbench/vmbench/internal/disruption"
)

// vmbench suggest --migration (issue 32 item 4): which KubeVirt migration settings suit the user's
// own load. A suite whose migration benchmark ran on two or more VM platforms (the cluster's
// settings and MigrationPolicy variants, config/samples/suite-migration-policies.yaml) gets them
// ranked on its own figures; a suite whose migration benchmark ran on one VM platform gets a new
// suite that tries the policy variants beside it.

// ErrNoMigrationResults says that a suite has no migration benchmark results to rank or vary.
var ErrNoMigrationResults = errors.New("no migration results")

// MigrationRank is one VM platform's place among those that ran one migration benchmark (at one
// dirty rate of a sweep).
type MigrationRank struct {
	Line analysis.MigrationLine
	// Policy says what the platform's vm.migrationPolicy sets, or that the cluster's settings
	// applied.
	Policy string
	// TiedWithAbove: its pause and total intervals both overlap those of the platform ranked
	// above it, so the suite did not tell the two apart (more repetitions may).
	TiedWithAbove bool
}

// RankMigrationPolicies ranks, for each migration benchmark (and each rate of a dirty-rate sweep)
// that ran on two or more VM platforms, those platforms: the larger share of migrations completed
// first (a migration that did not converge costs more than any pause), then the shorter mean pause,
// then the shorter mean total time. Groups are in the order of status.results.
func RankMigrationPolicies(suite *vmbenchv1.BenchmarkSuite) [][]MigrationRank {
	policies := map[string]string{}
	for _, p := range suite.Spec.Platforms {
		policies[p.Name] = policyWords(p)
	}
	var order []string
	groups := map[string][]MigrationRank{}
	for _, l := range analysis.MigrationLines(suite) {
		key := l.Benchmark + "\x00" + l.DirtyRate
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		l.Previous = nil // ranked across platforms, not against the rate before
		groups[key] = append(groups[key], MigrationRank{Line: l, Policy: policies[l.Platform]})
	}
	var out [][]MigrationRank
	for _, key := range order {
		g := groups[key]
		if len(g) < 2 {
			continue
		}
		sort.SliceStable(g, func(i, j int) bool { return rankedBefore(g[i].Line, g[j].Line) })
		for i := 1; i < len(g); i++ {
			g[i].TiedWithAbove = overlaps(g[i-1].Line.Pause, g[i].Line.Pause) && overlaps(g[i-1].Line.Total, g[i].Line.Total) &&
				completedShare(g[i-1].Line) == completedShare(g[i].Line)
		}
		out = append(out, g)
	}
	return out
}

func completedShare(l analysis.MigrationLine) float64 {
	if l.Made == 0 {
		return 0
	}
	return float64(l.Completed) / float64(l.Made)
}

// rankedBefore orders two lines: more completed, then shorter pause, then shorter total; a line
// without a figure goes after one with it.
func rankedBefore(a, b analysis.MigrationLine) bool {
	if ca, cb := completedShare(a), completedShare(b); ca != cb {
		return ca > cb
	}
	for _, f := range [][2]*analysis.MigrationFigure{{a.Pause, b.Pause}, {a.Total, b.Total}} {
		switch {
		case f[0] == nil && f[1] == nil:
			continue
		case f[0] == nil:
			return false
		case f[1] == nil:
			return true
		case f[0].Mean != f[1].Mean:
			return f[0].Mean < f[1].Mean
		}
	}
	return false
}

// overlaps says whether two figures' intervals overlap; a figure without an interval (one
// migration) cannot be told apart from any.
func overlaps(a, b *analysis.MigrationFigure) bool {
	if a == nil || b == nil || a.Low == nil || b.Low == nil {
		return true
	}
	return *a.Low <= *b.High && *b.Low <= *a.High
}

// policyWords says what a platform's vm.migrationPolicy sets.
func policyWords(p vmbenchv1.Platform) string {
	if p.VM == nil || p.VM.MigrationPolicy == nil {
		return "the cluster's migration settings"
	}
	mp := p.VM.MigrationPolicy
	var parts []string
	if mp.BandwidthPerMigration != nil {
		parts = append(parts, "bandwidthPerMigration "+mp.BandwidthPerMigration.String())
	}
	if mp.CompletionTimeoutPerGiB != nil {
		parts = append(parts, fmt.Sprintf("completionTimeoutPerGiB %d", *mp.CompletionTimeoutPerGiB))
	}
	if mp.AllowAutoConverge != nil {
		parts = append(parts, fmt.Sprintf("allowAutoConverge %t", *mp.AllowAutoConverge))
	}
	if mp.AllowPostCopy != nil {
		parts = append(parts, fmt.Sprintf("allowPostCopy %t", *mp.AllowPostCopy))
	}
	if len(parts) == 0 {
		return "a MigrationPolicy that changes nothing"
	}
	return "MigrationPolicy " + strings.Join(parts, ", ")
}

// WriteMigrationRanking writes the ranked groups for a reader.
func WriteMigrationRanking(w io.Writer, suite string, groups [][]MigrationRank) error {
	var b strings.Builder
	for i, g := range groups {
		if i > 0 {
			b.WriteString("\n")
		}
		what := g[0].Line.Benchmark
		if r := g[0].Line.DirtyRate; r != "" {
			what += " at dirty rate " + r + "/s"
		}
		fmt.Fprintf(&b, "Suite %s, migration benchmark %s: %d VM platforms ranked by the share of migrations completed, then the mean pause, then the mean total time (each migration one sample; 95%% intervals):\n",
			suite, what, len(g))
		for j, r := range g {
			fmt.Fprintf(&b, "%d. %s; %s", j+1, r.Line.Text(false), r.Policy)
			if r.TiedWithAbove {
				fmt.Fprintf(&b, "; not told apart from %s (their pause and total intervals overlap: raise spec.repetitions)", g[j-1].Line.Platform)
			}
			b.WriteString("\n")
		}
		if g[0].Line.Emulated {
			b.WriteString("Emulated VMs (QEMU without KVM): the order holds for this cluster as it ran, not for KVM hardware.\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// migrationVariants are the MigrationPolicy variants suggest adds beside a VM platform, most
// telling first: auto-converge and post-copy, the two ways KubeVirt makes a busy guest's migration
// converge (at the price of a throttled guest, or of a guest lost if the network fails), then a cap
// on the bandwidth, which shows what a shared network's limit costs.
var migrationVariants = []struct {
	suffix string
	policy vmbenchv1.VMMigrationPolicy
	why    string
}{
	{"conv", vmbenchv1.VMMigrationPolicy{AllowAutoConverge: ptr.To(true)}, "auto-converge: QEMU throttles the vCPUs until the guest dirties memory slower than it is sent"},
	{"post", vmbenchv1.VMMigrationPolicy{AllowPostCopy: ptr.To(true)}, "post-copy: the guest resumes on the target when a migration does not converge, and fetches its pages after"},
	{"cap", vmbenchv1.VMMigrationPolicy{BandwidthPerMigration: ptr.To(resource.MustParse("32Mi"))}, "a cap of 32Mi a second on one migration's bandwidth, half of KubeVirt's default"},
}

// SuggestMigrationPolicies writes a suite that tries the MigrationPolicy variants beside the VM
// platform that ran the suite's migration benchmark, with that benchmark alone: the platform as it
// was (its own policy, or the cluster's settings) and one variant per setting of migrationVariants,
// up to the 4 platforms a suite may have. It fails when the migration benchmark ran on no VM
// platform (ErrNoMigrationResults).
func SuggestMigrationPolicies(suite *vmbenchv1.BenchmarkSuite, name string) (*Suggestion, error) {
	if name == "" {
		name = suite.Name + "-migpol"
	}
	if len(name) > maxSuiteName {
		return nil, fmt.Errorf("the suggested suite's name %q is longer than the %d characters a suite's name may have: give a shorter one with --name", name, maxSuiteName)
	}
	lines := analysis.MigrationLines(suite)
	if len(lines) == 0 {
		return nil, fmt.Errorf("suite %s: %w: it has no results of a migration benchmark; run one first (config/samples/suite-migration-policies.yaml, docs/migration.md)", suite.Name, ErrNoMigrationResults)
	}
	var base vmbenchv1.Platform
	for _, p := range suite.Spec.Platforms {
		if p.Name == lines[0].Platform {
			base = p
		}
	}
	if base.Name == "" {
		return nil, fmt.Errorf("suite %s: platform %s of its migration results is not in its spec", suite.Name, lines[0].Platform)
	}
	var benchmarks []vmbenchv1.Benchmark
	for _, b := range suite.Spec.Benchmarks {
		if b.Name == lines[0].Benchmark {
			benchmarks = append(benchmarks, b)
		}
	}
	out := &Suggestion{Purpose: "to measure what it does to the migrations of this load (rank them after with vmbench suggest --migration)", Suite: &vmbenchv1.BenchmarkSuite{
		TypeMeta:   metav1.TypeMeta{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSuite"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: suite.Namespace},
	}}
	spec := vmbenchv1.BenchmarkSuiteSpec{Platforms: []vmbenchv1.Platform{base}, Baseline: base.Name, Cluster: suite.Spec.Cluster,
		Benchmarks: benchmarks, Repetitions: suite.Spec.Repetitions, Placement: suite.Spec.Placement, Timeout: suite.Spec.Timeout}
	taken := map[string]bool{base.Name: true}
	for _, v := range migrationVariants {
		if len(spec.Platforms) == maxPlatforms {
			break
		}
		p := *base.DeepCopy()
		if p.VM == nil {
			p.VM = &vmbenchv1.VMSettings{}
		}
		policy := v.policy
		if p.VM.MigrationPolicy != nil {
			// The base platform's own settings stay; the variant changes only its one.
			merged := *p.VM.MigrationPolicy.DeepCopy()
			switch {
			case policy.AllowAutoConverge != nil:
				merged.AllowAutoConverge = policy.AllowAutoConverge
			case policy.AllowPostCopy != nil:
				merged.AllowPostCopy = policy.AllowPostCopy
			case policy.BandwidthPerMigration != nil:
				merged.BandwidthPerMigration = policy.BandwidthPerMigration
			}
			if merged == *p.VM.MigrationPolicy {
				out.Notices = append(out.Notices, fmt.Sprintf("platform %s already has %s; no variant for it", base.Name, v.why))
				continue
			}
			policy = merged
		}
		p.VM.MigrationPolicy = &policy
		p.Name = variantName(base.Name, v.suffix, taken)
		taken[p.Name] = true
		spec.Platforms = append(spec.Platforms, p)
		out.Variants = append(out.Variants, Variant{Platform: p.Name, Of: base.Name, Causes: []string{v.why},
			Fields: []string{"migrationPolicy"}, Metrics: []string{lines[0].Benchmark + " " + disruption.MetricPause,
				lines[0].Benchmark + " " + disruption.MetricTotal, lines[0].Benchmark + " " + disruption.MetricDip}})
	}
	if lines[0].Emulated {
		out.Notices = append(out.Notices, fmt.Sprintf("platform %s ran emulated (QEMU without KVM): the variants' order will hold for this cluster as it runs, not for KVM hardware", base.Name))
	}
	if spec.Repetitions < 2 {
		spec.Repetitions = 2
		out.Notices = append(out.Notices, "repetitions raised to 2, so that each platform's figures have an interval over more than one run's migrations")
	}
	out.Suite.Spec = spec
	if err := vmbenchv1.FirstInvalidValue(out.Suite); err != nil {
		return nil, fmt.Errorf("the suggested suite would be refused: %w; write it by hand from config/samples/suite-migration-policies.yaml", err)
	}
	return out, nil
}
