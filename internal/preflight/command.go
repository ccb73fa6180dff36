package preflight

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/kubeconfig"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// Synopsis is the one-line usage of the preflight verb.
const Synopsis = "preflight [-f suite.yaml] [-n namespace] [--kubeconfig path] [--context name] [--manager-namespace ns] [--skip-image-check] [--image-timeout 2m] [-o table|json]"

// Exit codes of Command.
const (
	ExitOK = 0
	// ExitFailed means a check failed, or the cluster could not be read: the suite could not run.
	ExitFailed = 1
	ExitUsage  = 2
)

// Options are the command line of one preflight.
type Options struct {
	File, Namespace, Kubeconfig, Context string
	ManagerNamespace                     string
	SkipImageCheck                       bool
	ImageTimeout                         time.Duration
	Output                               string
}

// readTimeout bounds the reads from the API server.
const readTimeout = 30 * time.Second

// Connect makes the clients of a preflight and resolves its namespace; tests replace it.
var Connect = func(kubeconfigPath, kubeContext, namespace string) (Clients, string, error) {
	cfg, namespace, err := kubeconfig.Load(kubeconfigPath, kubeContext, namespace)
	if err != nil {
		return Clients{}, "", err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return Clients{}, "", err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return Clients{}, "", err
	}
	return Clients{
		Kube: kube, Dynamic: dyn,
		KubeletConfig: func(ctx context.Context, node string) ([]byte, error) {
			return kube.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", "configz").DoRaw(ctx)
		},
	}, namespace, nil
}

// pollInterval is how often a pull pod is read.
var pollInterval = time.Second

func usage(w io.Writer, prog string) {
	fmt.Fprintf(w, `usage: %[1]s %[2]s

Reads the cluster and tells whether a BenchmarkSuite can run there, check by check (pass, warn, fail,
skip), with what to do:
  api/*            BenchmarkSuite, MPIJob (kubeflow.org/v2beta1) and VMI (kubevirt.io/v1) APIs served
  manager          the vmbench manager installed and available, and its images
  fit/*, node/*    one run's pods and VMs fit on the schedulable nodes' allocatable CPU and memory
  kvm              VMs get KVM, or would run under software emulation (warn), or cannot start
  cpu-manager      the kubelets' CPU manager policy, where it can be seen
  vm/*             a VM platform's vm settings: its network binding in the KubeVirt CR, nodes
                   labelled cpumanager=true for dedicated CPUs, pre-allocated huge pages
  namespace, pod-security, quota/*, limitrange/*
                   the namespace exists, its Pod Security level admits the pods, its quotas and
                   limit ranges admit one run
  shared-storage   the storage class of spec.sharedStorage exists and offers ReadWriteMany
  image/*          the manager's runner and VM disk images can be pulled (a tiny pod per image in
                   the namespace, deleted afterwards)

  -f, --file FILE          the suite to check (YAML or JSON, "-" for stdin); default: a suite with
                           the API's defaults (3 nodes of 2 CPUs and 2Gi, a container and a VM platform)
  -n, --namespace NS       where the suite would run (default: the context's namespace)
  --kubeconfig PATH        kubeconfig file (default: KUBECONFIG, then ~/.kube/config)
  --context NAME           kubeconfig context
  --manager-namespace NS   namespace of the vmbench manager (default vmbench-system)
  --skip-image-check       do not create pods to pull the images
  --image-timeout D        how long each image may take to pull (default 2m)
  -o, --output FORMAT      table (default) or json

exit status: 0 when no check failed (warnings included), 1 when a check failed or the cluster could
not be read, 2 on a usage error.
`, prog, Synopsis)
}

// Command runs `vmbench preflight` with args (after the verb) and returns its exit code.
func Command(ctx context.Context, prog string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := Options{ManagerNamespace: "vmbench-system", ImageTimeout: 2 * time.Minute, Output: "table"}
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, n := range []string{"f", "file"} {
		fs.StringVar(&o.File, n, "", "")
	}
	for _, n := range []string{"n", "namespace"} {
		fs.StringVar(&o.Namespace, n, "", "")
	}
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "")
	fs.StringVar(&o.Context, "context", "", "")
	fs.StringVar(&o.ManagerNamespace, "manager-namespace", o.ManagerNamespace, "")
	fs.BoolVar(&o.SkipImageCheck, "skip-image-check", false, "")
	fs.DurationVar(&o.ImageTimeout, "image-timeout", o.ImageTimeout, "")
	for _, n := range []string{"o", "output"} {
		fs.StringVar(&o.Output, n, o.Output, "")
	}
	usageError := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "vmbench: preflight: "+format+"\n", a...)
		fmt.Fprintf(stderr, "run '%s preflight -h' for usage\n", prog)
		return ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, prog)
			return ExitOK
		}
		return usageError("%v", err)
	}
	switch {
	case fs.NArg() > 0:
		return usageError("unexpected argument %q; the suite comes with -f", fs.Arg(0))
	case o.Output != "table" && o.Output != "json":
		return usageError("-o %s: use table or json", o.Output)
	case o.ImageTimeout <= 0:
		return usageError("--image-timeout must be positive")
	case o.ManagerNamespace == "":
		return usageError("--manager-namespace must not be empty")
	}
	return run(ctx, o, stdin, stdout, stderr)
}

func run(ctx context.Context, o Options, stdin io.Reader, stdout, stderr io.Writer) int {
	failed := func(err error) int {
		fmt.Fprintf(stderr, "vmbench: preflight: %v\n", err)
		return ExitFailed
	}
	suite, explicit := DefaultSuite(), false
	if o.File != "" {
		s, err := suitefile.Read(o.File, "", stdin)
		if err != nil {
			return failed(err)
		}
		suite, explicit = s, true
	}
	clients, namespace, err := Connect(o.Kubeconfig, o.Context, o.Namespace)
	if err != nil {
		return failed(fmt.Errorf("no cluster to check (use --kubeconfig, KUBECONFIG or --context): %v", firstLine(err)))
	}

	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	cluster := Gather(readCtx, clients, namespace, o.ManagerNamespace)
	cancel()

	images := platform.Images{Runner: defaultRunnerImage, VMDisk: defaultVMDiskImage, PullPolicy: defaultPullPolicy}
	if m := cluster.Manager; m != nil {
		images = platform.Images{Runner: m.RunnerImage, VMDisk: m.VMDisk, PullPolicy: m.PullPolicy}
	}
	needs, err := NewNeeds(suite, explicit, namespace, images)
	if err != nil {
		return failed(err)
	}
	report := append(Report{CheckSuite(suite, explicit)}, Run(needs, cluster)...)
	report = append(report, imageChecks(ctx, o, clients, needs, cluster)...)

	if o.Output == "json" {
		err = report.WriteJSON(stdout, needs.Suite, namespace)
	} else {
		fmt.Fprintf(stdout, "Preflight in namespace %q of %s\n", namespace, suiteSummary(suite, explicit))
		err = report.WriteTable(stdout)
	}
	if err != nil {
		return failed(err)
	}
	if report.Failed() {
		return ExitFailed
	}
	return ExitOK
}

func imageChecks(ctx context.Context, o Options, clients Clients, needs Needs, cluster Cluster) []Check {
	images := ImagesOf(needs)
	var out []Check
	switch {
	case o.SkipImageCheck:
		for _, img := range images {
			out = append(out, skip("image/"+img.Role, img.Ref+": --skip-image-check"))
		}
	case apierrors.IsNotFound(cluster.NamespaceErr):
		for _, img := range images {
			out = append(out, skip("image/"+img.Role, img.Ref+": the namespace does not exist"))
		}
	case cluster.Manager == nil:
		for _, img := range images {
			out = append(out, skip("image/"+img.Role, "the manager's images are not known (see manager)"))
		}
	default:
		out = PullImages(ctx, clients.Kube, needs, images, o.ImageTimeout, pollInterval)
	}
	return out
}

// CheckSuite says whether the suite from -f holds values the controller cannot use.
func CheckSuite(suite *vmbenchv1.BenchmarkSuite, explicit bool) Check {
	const name = "suite"
	if !explicit {
		return pass(name, "no -f: the API's defaults are checked ("+shapeText(suite.Spec.Cluster)+", platforms container and vm)")
	}
	if err := vmbenchv1.FirstInvalidValue(suite); err != nil {
		return fail(name, fmt.Sprintf("suite %s: %v", suite.Name, err), "fix the suite; the API server would refuse it")
	}
	shape := suite.Spec.Cluster
	cpuRequest, memoryRequest := shape.Requests()
	if cpuRequest.Cmp(*resource.NewQuantity(int64(shape.CPULimit()), resource.DecimalSI)) > 0 || memoryRequest.Cmp(shape.MemoryLimit()) > 0 {
		return fail(name, fmt.Sprintf("suite %s asks for requests above its limits (%s)", suite.Name, shapeText(shape)),
			"lower cluster.cpuRequest and cluster.memoryRequest to at most cluster.cpu and cluster.memory")
	}
	platforms := suite.Spec.Platforms
	if len(platforms) == 0 {
		platforms = defaultPlatforms()
	}
	var names []string
	for _, p := range platforms {
		names = append(names, fmt.Sprintf("%s (%s)", p.Name, p.Type))
	}
	return pass(name, fmt.Sprintf("suite %s: %s; platforms %s", suite.Name, shapeText(shape), strings.Join(names, ", ")))
}

func shapeText(c vmbenchv1.ClusterShape) string {
	cpu, memory := c.Requests()
	s := fmt.Sprintf("%d nodes of %s, %s", c.NodeCount(), cpusText(*resource.NewQuantity(int64(c.CPULimit()), resource.DecimalSI)), memText(c.MemoryLimit()))
	if !c.Guaranteed() {
		s += fmt.Sprintf(" (requests %s, %s)", cpusText(cpu), memText(memory))
	}
	return s
}

func suiteSummary(suite *vmbenchv1.BenchmarkSuite, explicit bool) string {
	if !explicit {
		return "the default suite: " + shapeText(suite.Spec.Cluster)
	}
	return "suite " + suite.Name + ": " + shapeText(suite.Spec.Cluster)
}
