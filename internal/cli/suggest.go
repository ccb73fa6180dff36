package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// ExitNothingToSuggest tells a script that suggest wrote nothing because no VM result lies below
// its KVM band.
const ExitNothingToSuggest = 4

// SuggestSynopsis is the one-line usage of the suggest verb.
const SuggestSynopsis = "suggest (<suite> [-n namespace] [--kubeconfig path] [--context name] | -f suite.yaml) [--migration] [--name NAME] [-o FILE]"

func suggestUsage(w io.Writer, prog string) {
	fmt.Fprintf(w, `usage: %[1]s suggest <suite> [-n namespace] [--kubeconfig path] [--context name] [--name NAME] [-o FILE]
       %[1]s suggest -f suite.yaml [--name NAME] [-o FILE]

Writes a new BenchmarkSuite that measures the likely causes of a finished suite's VM results below
their KVM band (the report's "against KVM's expected band" section). It keeps the container baseline
and each VM platform with results below their band, and adds one VM variant per cause that
platforms[].vm can change (CPU model, disk bus and cache, network binding and multiqueue, dedicated
CPUs, huge pages, IO threads), most likely first, up to the 4 platforms a suite may have. Each
variant differs from its VM platform only in the cause's settings. Its benchmarks are those with a
result below its band; its name is <suite>-suggest. Create it with kubectl create -f.

VMs that ran emulated get no variant: enable KVM first.

With --migration it answers which KubeVirt migration settings suit the suite's own load instead: a
suite whose migration benchmark ran on two or more VM platforms (the cluster's settings and
MigrationPolicy variants, config/samples/suite-migration-policies.yaml) has them ranked on stdout,
by the share of migrations completed, then the mean pause, then the mean total time, each with its
95%% interval, and a platform its neighbour cannot be told apart from is said so; a suite whose
migration benchmark ran on one VM platform gets a new suite (<suite>-migpol) that runs it beside
variants with auto-converge, post-copy and a bandwidth cap.

input:
  <suite>                 read the suite from the cluster, as report does
  -n, --namespace NS      namespace of <suite> (default: the context's namespace)
  --kubeconfig PATH       kubeconfig file
  --context NAME          kubeconfig context
  -f, --file FILE         read a saved suite with its status instead (YAML or JSON, "-" for stdin)

what:
  --migration             rank the migration benchmark's VM platforms, or suggest MigrationPolicy variants

output:
  --name NAME             name of the suggested suite (default: <suite>-suggest, <suite>-migpol with --migration)
  -o, --output FILE       write the suite to FILE instead of stdout

exit status: 0 suite (or ranking) written, 1 error (emulated VMs among them; with --migration, no
migration results), 2 usage error, 4 nothing to suggest: no VM result lies below its band.
`, prog)
}

type suggestOptions struct {
	suite, file                 string
	namespace, kubeconfig, kctx string
	name, output                string
	migration                   bool
}

// SuggestCommand runs `vmbench suggest` with args (after the verb) and returns its exit code.
func SuggestCommand(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o suggestOptions
	fs := flag.NewFlagSet("suggest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	suiteSourceFlags(fs, &o.file, &o.namespace, &o.kubeconfig, &o.kctx)
	fs.StringVar(&o.name, "name", "", "")
	fs.BoolVar(&o.migration, "migration", false, "")
	fs.StringVar(&o.output, "o", "", "")
	fs.StringVar(&o.output, "output", "", "")
	positional, code, ok := parseVerbArgs(fs, args, prog, "suggest", stdout, stderr, suggestUsage)
	if !ok {
		return code
	}
	switch {
	case len(positional) > 1:
		return verbUsageError(stderr, prog, "suggest", "one suite at a time, got %s", strings.Join(positional, " "))
	case len(positional) == 1:
		o.suite = positional[0]
	}
	if o.suite == "" && o.file == "" {
		return verbUsageError(stderr, prog, "suggest", "name a suite, or read one from a file with -f")
	}
	fail := failTo(stderr)

	var suite *vmbenchv1.BenchmarkSuite
	var err error
	if o.file != "" {
		suite, err = suitefile.Read(o.file, o.suite, stdin)
	} else {
		ctx, cancel := context.WithTimeout(ctx, clusterTimeout)
		defer cancel()
		var cluster *ClusterReader
		if cluster, err = NewClusterReader(o.kubeconfig, o.kctx, o.namespace); err == nil {
			suite, err = cluster.Get(ctx, o.suite)
		}
	}
	if err != nil {
		return fail(err)
	}
	if o.migration {
		if groups := RankMigrationPolicies(suite); len(groups) > 0 {
			var buf bytes.Buffer
			if err := WriteMigrationRanking(&buf, suite.Name, groups); err != nil {
				return fail(err)
			}
			return writeSuggestOutput(o.output, buf.Bytes(), stdout, fail)
		}
	}
	var s *Suggestion
	if o.migration {
		s, err = SuggestMigrationPolicies(suite, o.name)
	} else {
		s, err = Suggest(suite, o.name)
	}
	if errors.Is(err, ErrNothingBelow) {
		fmt.Fprintf(stderr, "vmbench: %v; no suite written\n", err)
		return ExitNothingToSuggest
	}
	if err != nil {
		return fail(err)
	}
	var buf bytes.Buffer
	if err := WriteSuggestion(&buf, s, suite.Name); err != nil {
		return fail(err)
	}
	if code := writeSuggestOutput(o.output, buf.Bytes(), stdout, fail); code != ExitOK {
		return code
	}
	for _, n := range s.Notices {
		fmt.Fprintf(stderr, "vmbench: note: %s\n", n)
	}
	fmt.Fprintf(stderr, "vmbench: suite %s: %d VM variant(s) of %d benchmark(s); create it with kubectl create -f\n",
		s.Suite.Name, len(s.Variants), len(s.Suite.Spec.Benchmarks))
	return ExitOK
}

// writeSuggestOutput writes out to the file named output, or to stdout without one.
func writeSuggestOutput(output string, out []byte, stdout io.Writer, fail func(error) int) int {
	var err error
	if output == "" {
		_, err = stdout.Write(out)
	} else {
		err = os.WriteFile(output, out, 0o644)
	}
	if err != nil {
		return fail(err)
	}
	return ExitOK
}
