package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/results"
	"github.com/vmbench/vmbench/internal/runplan"
)

// execution is one run of a tool on one node or pair, reported as one Result.
type execution struct {
	// label is the Result's node: a node name, a pair label such as master-node01, or for HPCC,
	// which spans nodes, the node of rank 0 (master, or node01 with hpcc.nodes Workers).
	label string
	// prefix is put before every metric name (see the package documentation).
	prefix string
	tool   results.Tool
	// parse reads the output when the tool's parser alone is not enough (nil: results.Parse).
	parse func(out []byte) (parsed, error)
	// run returns the output to parse and the output to keep as the raw tail.
	run func(ctx context.Context) (out, raw []byte, err error)
	// cleanup removes files that run leaves behind, also after a failure or timeout.
	cleanup func(ctx context.Context)
}

// parsed is what an execution's output gave: its metrics and, where a tool's output holds more than
// metrics keep, its whole table, or why that table could not be read.
type parsed struct {
	metrics  []results.Metric
	table    *results.Table
	tableErr error
}

// parseIozoneAuto keeps an auto-mode run's whole table and, as metrics, its headline cells.
func parseIozoneAuto(out []byte) (parsed, error) {
	ms, table, err := results.ParseIozoneAuto(out)
	return parsed{metrics: ms, table: table}, err
}

// parseIperf3 adds the time series to iperf3's summary figures; a series that cannot be read does
// not cost the figures, and is reported as such.
func parseIperf3(out []byte) (parsed, error) {
	ms, err := results.ParseIperf3(out)
	if err != nil {
		return parsed{}, err
	}
	series, err := results.Iperf3Intervals(out)
	if err != nil {
		return parsed{metrics: ms, tableErr: err}, nil
	}
	return parsed{metrics: ms, table: &series}, nil
}

// failed is an execution that reports err without running anything, so that a part of a
// benchmark that cannot run shows up in the results instead of silently missing.
func failed(label string, err error) execution {
	return execution{label: label, run: func(context.Context) ([]byte, []byte, error) { return nil, nil, err }}
}

// executions expands a benchmark into its executions, in the order they run. An error means that
// the whole benchmark cannot run.
func (r *Runner) executions(plan runplan.Plan, b vmbenchv1.Benchmark) ([]execution, error) {
	missing := func(block string) error {
		return fmt.Errorf("benchmark %s of type %s has no %s parameters", b.Name, b.Type, block)
	}
	switch b.Type {
	case vmbenchv1.BenchmarkSysbenchCPU:
		if b.SysbenchCPU == nil {
			return nil, missing("sysbenchCPU")
		}
		return r.onEveryNode(plan, "", results.SysbenchCPU, func(runplan.Node) []string {
			return SysbenchCPUArgv(b.SysbenchCPU, plan.CPU)
		}), nil
	case vmbenchv1.BenchmarkSysbenchMemory:
		if b.SysbenchMemory == nil {
			return nil, missing("sysbenchMemory")
		}
		sizes := b.SysbenchMemory.BlockSizes
		if len(sizes) == 0 {
			sizes = []string{"1K", "1M"}
		}
		var out []execution
		for _, bs := range sizes {
			out = append(out, r.onEveryNode(plan, "bs"+bs+"_", results.SysbenchMemory, func(runplan.Node) []string {
				return SysbenchMemoryArgv(b.SysbenchMemory, bs, plan.CPU)
			})...)
		}
		return out, nil
	case vmbenchv1.BenchmarkStressNGCPU:
		if b.StressNGCPU == nil {
			return nil, missing("stressNGCPU")
		}
		return r.stressNG(plan, func(yamlFile string) ([]string, error) {
			return StressNGCPUArgv(b.StressNGCPU, plan.CPU, yamlFile), nil
		}), nil
	case vmbenchv1.BenchmarkStressNGVM:
		if b.StressNGVM == nil {
			return nil, missing("stressNGVM")
		}
		return r.stressNG(plan, func(yamlFile string) ([]string, error) {
			return StressNGVMArgv(b.StressNGVM, plan.MemoryBytes, yamlFile)
		}), nil
	case vmbenchv1.BenchmarkIozone:
		if b.Iozone == nil {
			return nil, missing("iozone")
		}
		return r.iozone(plan, b.Iozone), nil
	case vmbenchv1.BenchmarkFio:
		if b.Fio == nil {
			return nil, missing("fio")
		}
		return r.fio(plan, b.Fio), nil
	case vmbenchv1.BenchmarkPing:
		if b.Ping == nil {
			return nil, missing("ping")
		}
		return r.ping(plan, b.Ping), nil
	case vmbenchv1.BenchmarkIperf3:
		if b.Iperf3 == nil {
			return nil, missing("iperf3")
		}
		return r.iperf3(plan, b.Iperf3), nil
	case vmbenchv1.BenchmarkNetperf:
		if b.Netperf == nil {
			return nil, missing("netperf")
		}
		return r.netperf(plan, b.Netperf), nil
	case vmbenchv1.BenchmarkNetcat:
		if b.Netcat == nil {
			return nil, missing("netcat")
		}
		timeout := DefaultBenchmarkTimeout
		if b.Timeout != nil && b.Timeout.Duration() > 0 {
			timeout = b.Timeout.Duration()
		}
		return r.netcat(plan, b.Netcat, timeout), nil
	case vmbenchv1.BenchmarkMigration:
		if b.Migration == nil {
			return nil, missing("migration")
		}
		return []execution{r.probe(plan, b)}, nil
	case vmbenchv1.BenchmarkHPCC:
		if b.HPCC == nil {
			return nil, missing("hpcc")
		}
		return []execution{r.hpcc(plan, b.HPCC)}, nil
	}
	return nil, fmt.Errorf("benchmark %s has unknown type %q", b.Name, b.Type)
}

// onEveryNode runs the same tool on every node in plan order; the tool prints its figures on
// stdout.
func (r *Runner) onEveryNode(plan runplan.Plan, prefix string, tool results.Tool, argv func(runplan.Node) []string) []execution {
	var out []execution
	for _, n := range plan.Nodes {
		out = append(out, execution{label: n.Name, prefix: prefix, tool: tool,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				return r.tool(ctx, n, Command{Argv: argv(n)})
			}})
	}
	return out
}

// tool runs cmd and returns its stdout for parsing, everything it printed as the raw output, and
// a descriptive error when it failed.
func (r *Runner) tool(ctx context.Context, node runplan.Node, cmd Command) ([]byte, []byte, error) {
	stdout, stderr, err := r.Exec.Run(ctx, node, cmd)
	raw := append(append([]byte{}, stdout...), stderr...)
	if err != nil {
		return stdout, raw, commandError(cmd, err, stdout, stderr)
	}
	return stdout, raw, nil
}

// stressNG runs stress-ng on every node and parses the YAML file it writes; its text report goes
// to stderr, which the parser falls back to when the file cannot be read.
func (r *Runner) stressNG(plan runplan.Plan, argv func(yamlFile string) ([]string, error)) []execution {
	yamlFile := path.Join(scratchDir(plan), "vmbench-stress-ng.yaml")
	args, err := argv(yamlFile)
	var out []execution
	for _, n := range plan.Nodes {
		if err != nil {
			out = append(out, failed(n.Name, err))
			continue
		}
		out = append(out, execution{label: n.Name, tool: results.StressNG,
			run: func(ctx context.Context) ([]byte, []byte, error) {
				_, raw, err := r.tool(ctx, n, Command{Argv: args})
				if err != nil {
					return nil, raw, err
				}
				doc, _, err := r.tool(ctx, n, Command{Argv: []string{"cat", yamlFile}})
				if err != nil || len(bytes.TrimSpace(doc)) == 0 {
					return raw, raw, nil
				}
				return doc, raw, nil
			},
			cleanup: r.remove(n, yamlFile)})
	}
	return out
}

// scratchDir is the node-local directory for the runner's own files.
func scratchDir(plan runplan.Plan) string {
	if plan.LocalDir != "" {
		return plan.LocalDir
	}
	return os.TempDir()
}

// remove returns a cleanup that deletes file on node.
func (r *Runner) remove(n runplan.Node, file string) func(context.Context) {
	return func(ctx context.Context) {
		if _, stderr, err := r.Exec.Run(ctx, n, Command{Argv: []string{"rm", "-f", file}}); err != nil {
			r.progressf("removing %s on %s: %v %s", file, n.Name, err, bytes.TrimSpace(stderr))
		}
	}
}
