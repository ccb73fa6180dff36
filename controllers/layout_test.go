package controllers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
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

// In each reconciler package the files read top-down: the controller file calls its policies, and
// no other file of the package calls back into the controller file. Of what the controller file
// declares, other files may use only the reconciler type itself (as the receiver of their methods)
// and what controller-runtime calls (Reconcile, SetupWithManager).
func TestControllerFilesAreReadTopDown(t *testing.T) {
	for _, c := range []struct{ dir, file, reconciler string }{
		{"suite", "suite_controller.go", "SuiteReconciler"},
		{"schedule", "schedule_controller.go", "ScheduleReconciler"},
		{"archive", "archive_controller.go", "ArchiveReconciler"},
	} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, c.dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		declared := map[string]bool{}
		for _, pkg := range pkgs {
			for path, f := range pkg.Files {
				if filepath.Base(path) != c.file {
					continue
				}
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						declared[d.Name.Name] = true
					case *ast.GenDecl:
						for _, s := range d.Specs {
							switch s := s.(type) {
							case *ast.TypeSpec:
								declared[s.Name.Name] = true
							case *ast.ValueSpec:
								for _, n := range s.Names {
									declared[n.Name] = true
								}
							}
						}
					}
				}
			}
		}
		if len(declared) == 0 {
			t.Fatalf("%s/%s declares nothing: has it moved?", c.dir, c.file)
		}
		for _, allowed := range []string{c.reconciler, "Reconcile", "SetupWithManager"} {
			delete(declared, allowed)
		}
		for _, pkg := range pkgs {
			for path, f := range pkg.Files {
				if filepath.Base(path) == c.file {
					continue
				}
				ast.Inspect(f, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && id != f.Name && declared[id.Name] && id.Obj == nil {
						t.Errorf("%s uses %s of %s: move it down to the policy that needs it, so that the controller file alone calls its policies",
							fset.Position(id.Pos()), id.Name, c.file)
					}
					return true
				})
			}
		}
	}
}
