package main

import (
	"context"
	"io"

	"github.com/vmbench/vmbench/internal/cli"
)

// runFootprint implements `vmbench footprint` (internal/cli holds its body).
func runFootprint(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Footprint(context.Background(), programName(), args, stdin, stdout, stderr)
}
