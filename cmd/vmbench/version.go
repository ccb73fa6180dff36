package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/vmbench/vmbench/internal/preflight"
)

// version is set at build time: go build -ldflags "-X main.version=v0.1.0" (make build and make
// kubectl-plugin set it from git describe).
var version = "dev"

const versionSynopsis = "version"

// runVersion implements `vmbench version`: the CLI's version and the API versions it speaks.
func runVersion(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintf(stdout, "usage: %s version\nprints the version of %[1]s and the API versions it speaks\n", programName())
			return exitOK
		}
		fmt.Fprintf(stderr, "vmbench: version takes no arguments, got %q\n", args[0])
		return exitUsage
	}
	fmt.Fprintf(stdout, "vmbench %s\n", version)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "API\tKIND\tFOR")
	for _, api := range preflight.APIs() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", api.GroupVersion(), api.Kind, api.For)
	}
	if err := tw.Flush(); err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	return exitOK
}
