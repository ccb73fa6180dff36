// Package cli holds the bodies of the vmbench verbs that read a suite from the cluster or from a
// saved file, report and footprint, as functions of their arguments and streams, so that the
// command and the tests, the kind e2e among them, run the very same code.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/kubeconfig"
)

// Exit codes of the verbs.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
	// ExitRegression tells a CI job that report --baseline found a metric that got worse beyond
	// --tolerance.
	ExitRegression = 3
)

// clusterTimeout bounds the reads from the API server and from Prometheus.
const clusterTimeout = 30 * time.Second

// parseInterspersed parses fs's flags wherever they stand among the positional arguments, which it
// returns in order: `vmbench report demo -n bench` and `vmbench report -n bench demo` are the same.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// suiteSourceFlags defines the flags that say where a suite is read from, the same for every verb
// that reads one: a saved file (-f), or the cluster (-n, --kubeconfig, --context).
func suiteSourceFlags(fs *flag.FlagSet, file, namespace, kubeconfig, kctx *string) {
	fs.StringVar(file, "f", "", "")
	fs.StringVar(file, "file", "", "")
	fs.StringVar(namespace, "n", "", "")
	fs.StringVar(namespace, "namespace", "", "")
	fs.StringVar(kubeconfig, "kubeconfig", "", "")
	fs.StringVar(kctx, "context", "", "")
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ClusterReader reads suites and their tables from the API server.
type ClusterReader struct {
	Client    client.Reader
	Namespace string
}

// NewClusterReader connects to the cluster as kubectl finds it, in namespace or the context's;
// tests replace it with one of a fake client.
var NewClusterReader = func(kubeconfigPath, kubeContext, namespace string) (*ClusterReader, error) {
	cfg, namespace, err := kubeconfig.Load(kubeconfigPath, kubeContext, namespace)
	if err != nil {
		return nil, fmt.Errorf("no cluster to read the suite from (use --kubeconfig, KUBECONFIG, or -f to read a file): %v", firstLine(err))
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, err
	}
	return &ClusterReader{Client: c, Namespace: namespace}, nil
}

// Tables reads the ConfigMaps that keep the whole result tables of the suite's runs. An error says
// that they could not be read and the report goes on without them.
func (r *ClusterReader) Tables(ctx context.Context, suite string) ([]corev1.ConfigMap, error) {
	selector, err := labels.Parse(fmt.Sprintf("%s=%s,%s", vmbenchv1.LabelSuite, suite, vmbenchv1.LabelTablesOf))
	if err != nil {
		return nil, fmt.Errorf("the result tables of suite %q: %w", suite, err)
	}
	list := &corev1.ConfigMapList{}
	if err := r.Client.List(ctx, list, client.InNamespace(r.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
		return nil, fmt.Errorf("the result tables of suite %q were not read, so their plots are missing (list configmaps in namespace %q): %v",
			suite, r.Namespace, firstLine(err))
	}
	return list.Items, nil
}

// Get reads the suite name of the reader's namespace.
func (r *ClusterReader) Get(ctx context.Context, name string) (*vmbenchv1.BenchmarkSuite, error) {
	var suite vmbenchv1.BenchmarkSuite
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: r.Namespace, Name: name}, &suite)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("benchmarksuite %q not found in namespace %q", name, r.Namespace)
	case meta.IsNoMatchError(err):
		return nil, errors.New("this cluster does not know BenchmarkSuites: the vmbench CRDs are not installed")
	case err != nil:
		return nil, fmt.Errorf("reading benchmarksuite %q in namespace %q: %v", name, r.Namespace, firstLine(err))
	}
	return &suite, nil
}

// failTo is how a verb ends on an error: the error on stderr after the program's name, and
// ExitError.
func failTo(stderr io.Writer) func(error) int {
	return func(err error) int {
		fmt.Fprintf(stderr, "vmbench: %v\n", err)
		return ExitError
	}
}

// parseVerbArgs parses a verb's flags wherever they stand among its arguments and returns the
// positional ones. On -h it prints the verb's usage, and on a bad flag a usage error; ok is then
// false and code is the exit code.
func parseVerbArgs(fs *flag.FlagSet, args []string, prog, verb string, stdout, stderr io.Writer,
	usage func(io.Writer, string)) (positional []string, code int, ok bool) {
	positional, err := parseInterspersed(fs, args)
	if err == nil {
		return positional, ExitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout, prog)
		return nil, ExitOK, false
	}
	return nil, verbUsageError(stderr, prog, verb, "%v", err), false
}

// verbUsageError prints a verb's usage error and where its usage is, and returns ExitUsage.
func verbUsageError(stderr io.Writer, prog, verb, format string, a ...any) int {
	fmt.Fprintf(stderr, "vmbench: %s: %s\n", verb, fmt.Sprintf(format, a...))
	fmt.Fprintf(stderr, "run '%s %s -h' for usage\n", prog, verb)
	return ExitUsage
}
