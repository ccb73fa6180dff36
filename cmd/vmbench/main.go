// Command vmbench is the command-line companion of the vmbench operator. It
// works on benchmark outputs collected from VMs and containers, e.g.
//
//	vmbench parse fio fio-output.json
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes shared by all subcommands.
const (
	exitOK    = 0
	exitError = 1
	// exitUsage follows the convention of flag.ExitOnError and most shells'
	// builtins for invalid invocations.
	exitUsage = 2
)

// subcommand is one verb of the CLI. run receives the arguments after the
// verb and returns the process exit code.
type subcommand struct {
	name     string
	synopsis string
	summary  string
	run      func(args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// subcommands is a slice rather than a map so that help lists the verbs in
// a fixed order; add new verbs here.
var subcommands = []subcommand{
	{name: "parse", synopsis: parseSynopsis, summary: "print the metrics in a benchmark tool's output as JSON", run: runParse},
	{name: "host", synopsis: hostSynopsis, summary: "run a suite's benchmarks on this machine, outside Kubernetes, and compare a saved suite's platforms with it", run: runHost},
	{name: "report", synopsis: reportSynopsis, summary: "compare a BenchmarkSuite's platforms (95% CIs, Welch's test), write CSV/JSON/plots, gate on regressions", run: runReport},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes the command line args (without the program name) and returns
// the exit code; it never calls os.Exit so that tests can drive it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		printUsage(stdout)
		return exitOK
	}
	for _, sc := range subcommands {
		if sc.name == args[0] {
			return sc.run(args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "vmbench: unknown command %q\n", args[0])
	printUsage(stderr)
	return exitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: vmbench <command> [arguments]")
	fmt.Fprintln(w, "commands:")
	for _, sc := range subcommands {
		fmt.Fprintf(w, "  vmbench %s\n      %s\n", sc.synopsis, sc.summary)
	}
}
