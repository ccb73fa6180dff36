// Command runner runs a vmbench plan on the master node of a run and writes the results as framed,
// authenticated lines to stdout or a serial console. See package runner.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vmbench/vmbench/internal/runner"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := (&runner.CLI{Stdout: os.Stdout, Stderr: os.Stderr}).Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
