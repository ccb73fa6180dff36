// Command vmbench is the command-line companion of the vmbench operator. It
// works on benchmark outputs collected from VMs and containers, e.g.
//
//	vmbench parse fio fio-output.json
//
// and on the cluster (report, preflight). Installed on PATH as kubectl-vmbench
// (make kubectl-plugin), it also runs as `kubectl vmbench ...`; kubectl passes
// the arguments after "vmbench", so only the usage text changes.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vmbench/vmbench/internal/cli"
	"github.com/vmbench/vmbench/internal/preflight"
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
	{name: "report", synopsis: cli.ReportSynopsis, summary: "compare a BenchmarkSuite's platforms (95% CIs, CoV, Welch's test with Holm's correction, detectable effect), write CSV/JSON/plots, gate on regressions", run: runReport},
	{name: "suggest", synopsis: cli.SuggestSynopsis, summary: "write a suite that tries the likely causes of a suite's VM results below their KVM band as VM variants", run: runSuggest},
	{name: "footprint", synopsis: cli.FootprintSynopsis, summary: "print the manager's own CPU and memory while a suite ran, from its process_* metrics in Prometheus", run: runFootprint},
	{name: "history", synopsis: cli.HistorySynopsis, summary: "show a BenchmarkSchedule's history of finished suites: series, environment changes, change points; JSON/CSV rows", run: runHistory},
	{name: "preflight", synopsis: preflight.Synopsis, summary: "check that the cluster can run a suite: APIs, nodes, KVM, namespace, quotas, storage, images", run: runPreflight},
	{name: "version", synopsis: versionSynopsis, summary: "print the version and the API versions it speaks", run: runVersion},
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
	fmt.Fprintf(stderr, "%s: unknown command %q\n", programName(), args[0])
	printUsage(stderr)
	return exitUsage
}

// invokedAs is the name the program was started under; tests replace it.
var invokedAs = func() string { return os.Args[0] }

// programName is "kubectl vmbench" when the binary runs as a kubectl plugin (installed on PATH as
// kubectl-vmbench), for the usage texts; nothing else changes.
func programName() string {
	if strings.HasPrefix(filepath.Base(invokedAs()), "kubectl-") {
		return "kubectl vmbench"
	}
	return "vmbench"
}

func printUsage(w io.Writer) {
	prog := programName()
	fmt.Fprintf(w, "usage: %s <command> [arguments]\n", prog)
	fmt.Fprintln(w, "commands:")
	for _, sc := range subcommands {
		fmt.Fprintf(w, "  %s %s\n      %s\n", prog, sc.synopsis, sc.summary)
	}
	fmt.Fprintln(w, "verbs that read the cluster take --kubeconfig, --context and -n/--namespace")
}
