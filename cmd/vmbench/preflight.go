package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vmbench/vmbench/internal/preflight"
)

// runPreflight implements `vmbench preflight`: whether the cluster can run a suite, check by check.
// An interrupt still deletes the pods that pull the images.
func runPreflight(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return preflight.Command(ctx, programName(), args, stdin, stdout, stderr)
}
