//go:build e2e

package e2e

import (
	"bytes"
	"strings"

	. "github.com/onsi/gomega"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/cli"
)

// reportOf runs `vmbench report <name> -n <namespace> --kubeconfig <the kind cluster's>` in-process,
// through the function the verb calls, and returns what it printed. It must exit 0 and say nothing
// on stderr.
func (e *env) reportOf(name string) string {
	var stdout, stderr bytes.Buffer
	code := cli.Report(e.ctx, "vmbench", []string{name, "-n", e.ns, "--kubeconfig", kubeconfigPath}, nil, &stdout, &stderr)
	e.g.Expect(code).To(Equal(cli.ExitOK), "vmbench report %s -n %s: stderr %s", name, e.ns, stderr.String())
	e.g.Expect(stderr.String()).To(BeEmpty(), "vmbench report %s -n %s", name, e.ns)
	e.t.Logf("---- vmbench report %s (first screen) ----\n%s", name, firstScreen(stdout.String()))
	return stdout.String()
}

// firstScreen is the report up to its table of every metric.
func firstScreen(out string) string {
	if i := strings.Index(out, "\nEvery metric:"); i >= 0 {
		return out[:i]
	}
	return out
}

// expectHeadlines checks the report's first screen for suite s: it names the suite and its
// baseline, has platform's sentence with its ratio to the baseline, and the summary table has a row
// for each of the suite's benchmarks on platform and the platform's overall row.
func (e *env) expectHeadlines(out string, s *vmbenchv1.BenchmarkSuite, platform string, emulated bool) {
	lines := strings.Split(out, "\n")
	e.g.Expect(lines[0]).To(HavePrefix("Suite %s/%s: every platform against baseline %q;", s.Namespace, s.Name, s.Spec.Baseline))
	name := platform
	if emulated {
		name += " (emulated)"
	}
	e.g.Expect(lines).To(ContainElement(And(HavePrefix(name+": "), ContainSubstring("× "+s.Spec.Baseline+" ["))),
		"the headline sentence of %s:\n%s", name, firstScreen(out))
	rows := map[string]bool{}
	for _, line := range strings.Split(firstScreen(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == platform {
			rows[strings.Join(f[1:3], " ")] = true
		}
	}
	for _, b := range s.Spec.Benchmarks {
		e.g.Expect(rows).To(HaveKey(HavePrefix(b.Name+" ")), "the summary row of %s on %s:\n%s", b.Name, platform, firstScreen(out))
	}
	e.g.Expect(rows).To(HaveKey(HavePrefix("= overall")), "the overall row of %s:\n%s", platform, firstScreen(out))
}
