package main

import (
	"context"
	"io"

	"github.com/vmbench/vmbench/internal/cli"
)

// runSuggest implements `vmbench suggest` (internal/cli holds its body).
func runSuggest(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.SuggestCommand(context.Background(), programName(), args, stdin, stdout, stderr)
}
