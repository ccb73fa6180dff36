package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmbench/vmbench/internal/dashboards"
)

func TestRunWritesEveryBoard(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	var stdout bytes.Buffer
	if err := run([]string{"-out", dir}, &stdout); err != nil {
		t.Fatal(err)
	}
	want, err := dashboards.RenderAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range dashboards.All() {
		got, err := os.ReadFile(filepath.Join(dir, b.File))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want[b.File]) {
			t.Errorf("%s differs from dashboards.RenderAll", b.File)
		}
		if !strings.Contains(stdout.String(), filepath.Join(dir, b.File)) {
			t.Errorf("stdout %q does not name %s", stdout.String(), b.File)
		}
	}
}

func TestRunRejectsArguments(t *testing.T) {
	if err := run([]string{"-out", t.TempDir(), "extra"}, &bytes.Buffer{}); err == nil {
		t.Error("run accepted a positional argument")
	}
}
