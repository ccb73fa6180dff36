// Command dashboards writes vmbench's Grafana dashboards, built in internal/dashboards, as JSON
// files into a directory (make dashboards: charts/vmbench/dashboards).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vmbench/vmbench/internal/dashboards"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dashboards:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dashboards", flag.ContinueOnError)
	out := fs.String("out", "charts/vmbench/dashboards", "directory to write the dashboard JSON files into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	written, err := dashboards.WriteAll(*out)
	for _, path := range written {
		fmt.Fprintln(stdout, "wrote", path)
	}
	return err
}
