package main

import (
	"context"
	"io"

	"github.com/vmbench/vmbench/internal/cli"
)

// runHistory implements `vmbench history` (internal/cli holds its body).
func runHistory(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.History(context.Background(), programName(), args, stdin, stdout, stderr)
}
