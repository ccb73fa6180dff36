package main

import (
	"context"
	"fmt"
	"io"
	"os"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/cli"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// runReport implements `vmbench report` (internal/cli holds its body).
func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Report(context.Background(), programName(), args, stdin, stdout, stderr)
}

// readSuiteFile decodes a saved suite: one BenchmarkSuite, or a list (kubectl get -o yaml without a
// name) from which name picks one.
func readSuiteFile(path, name string, stdin io.Reader) (*vmbenchv1.BenchmarkSuite, error) {
	return suitefile.Read(path, name, stdin)
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
