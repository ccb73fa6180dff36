package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vmbench/vmbench/internal/results"
)

const parseSynopsis = "parse <tool> <file|->"

const parseUsage = "usage: vmbench " + parseSynopsis

// runParse implements `vmbench parse <tool> <file>`: it prints the metrics
// parsed from file ("-" reads stdin) as an indented JSON array.
func runParse(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("parse", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprintln(stderr, parseUsage)
		fmt.Fprintf(stderr, "tools: %s\n", toolList())
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if flags.NArg() != 2 {
		fmt.Fprintf(stderr, "vmbench: parse needs a tool and a file, got %d argument(s)\n", flags.NArg())
		flags.Usage()
		return exitUsage
	}
	tool, err := results.ParseTool(flags.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		fmt.Fprintln(stderr, parseUsage)
		return exitUsage
	}
	output, err := readInput(flags.Arg(1), stdin)
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	metrics, err := results.Parse(tool, output)
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	encoded, err := json.MarshalIndent(metrics, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", encoded); err != nil {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return exitError
	}
	return exitOK
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

func toolList() string {
	names := make([]string, 0, len(results.Tools()))
	for _, t := range results.Tools() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
