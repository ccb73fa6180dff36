package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The manager links no plotting, fonts or k8s.io/apiserver: they doubled its binary and, with its
// file pages, its RSS (docs/performance.md). The report's statistics are in internal/analysis, the
// metrics endpoint's authentication in internal/metrics.
func TestManagerLinksNoPlottingNorAPIServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"gonum.org/v1/plot", "codeberg.org/go-fonts/", "github.com/vmbench/vmbench/internal/report", "k8s.io/apiserver/"} {
			if dep == strings.TrimSuffix(banned, "/") || strings.HasPrefix(dep, banned) {
				t.Errorf("the manager links %s: use internal/analysis for statistics, not internal/report", dep)
			}
		}
	}
}
