package controllers

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/vmbench/vmbench"

// reconcilers are the reconciler packages; each owns its sub-packages.
var reconcilers = []string{"suite", "schedule", "archive"}

// reconcilerOf is the reconciler package that path belongs to, "" for none.
func reconcilerOf(path string) string {
	for _, r := range reconcilers {
		root := module + "/controllers/" + r
		if path == root || strings.HasPrefix(path, root+"/") {
			return r
		}
	}
	return ""
}

// No reconciler package imports another, directly or through another package; the rooms they share
// import none; and outside controllers/ only cmd/manager links more than one reconciler: it wires
// them together (doc.go, docs/development.md).
func TestNoReconcilerImportsAnother(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		own := reconcilerOf(pkg)
		linked := map[string]bool{}
		for _, dep := range deps {
			if r := reconcilerOf(dep); r != "" && r != own {
				linked[r] = true
			}
		}
		switch {
		case own != "" && len(linked) > 0:
			t.Errorf("%s (the %s reconciler's) imports the %v reconciler: move what they share to a package of its own under controllers/",
				pkg, own, keys(linked))
		case strings.HasPrefix(pkg, module+"/controllers/") && own == "" && len(linked) > 0:
			t.Errorf("%s, which reconcilers share, imports the %v reconciler: a shared package sits below every reconciler", pkg, keys(linked))
		case !strings.HasPrefix(pkg, module+"/controllers/") && pkg != module+"/cmd/manager" && len(linked) > 1:
			t.Errorf("%s links the %v reconcilers: only cmd/manager wires them together", pkg, keys(linked))
		}
		if own != "" {
			checked++
		}
	}
	if checked < len(reconcilers) {
		t.Fatalf("found %d reconciler packages, want at least %d: is the module path %s?", checked, len(reconcilers), module)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
