// Command manager runs the vmbench controller.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	kubevirtv1 "kubevirt.io/api/core/v1"
	migrationsv1alpha1 "kubevirt.io/api/migrations/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/cachepolicy"
	"github.com/vmbench/vmbench/controllers/masterkey"
	schedulecontroller "github.com/vmbench/vmbench/controllers/schedule"
	"github.com/vmbench/vmbench/controllers/scheme"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/metrics"
	"github.com/vmbench/vmbench/internal/platform"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(1)
	}
}

type options struct {
	metricsAddr, probeAddr  string
	leaderElect             bool
	runnerImage, vmDisk     string
	pullPolicy, vmNetwork   string
	emulation               string
	containerStart, vmStart time.Duration
	networkPolicy           bool
	masterKeySecret         string
	watchNamespaces         string
	metricsSecure           bool
	metricsOpts             metrics.Options
	maxActiveRuns           int
	maxActiveRunsPerNS      int
	maxSuiteDuration        time.Duration
	minScheduleInterval     time.Duration
	archive                 archiveOptions
	// pprofAddr serves net/http/pprof for profiling; "0" (the default) serves nothing.
	pprofAddr string
	// logs replaces the pods/log API in tests, as envtest serves no logs; nil in the binary.
	logs suitecontroller.LogReader
}

func parseFlags() options {
	var o options
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "Address of the Prometheus metrics endpoint (0 disables it).")
	flag.BoolVar(&o.metricsSecure, "metrics-secure", true,
		"Serve metrics over HTTPS to clients whose bearer token may get the non-resource URL /metrics (checked with TokenReview and SubjectAccessReview); "+
			"false serves plain HTTP to anyone who reaches the port.")
	o.metricsOpts = metrics.DefaultOptions()
	flag.StringVar(&o.metricsOpts.CertDir, "metrics-cert-dir", "",
		"Directory with tls.crt and tls.key (a mounted kubernetes.io/tls Secret) that the secure metrics endpoint serves, reloaded when they change; "+
			"empty for a self-signed certificate, which scrapers cannot verify.")
	flag.BoolVar(&o.metricsOpts.Detail, "metrics-detail", false,
		"Export every suite's per-metric series (vmbench_result_*) for the suite's whole life; by default only while it runs and for "+
			"--metrics-detail-retention after it ends, while its summary series stay.")
	flag.DurationVar(&o.metricsOpts.DetailRetention, "metrics-detail-retention", metrics.DefaultDetailRetention,
		"How long a suite's per-metric series stay after it ended (without --metrics-detail).")
	flag.IntVar(&o.metricsOpts.MaxSeriesPerSuite, "metrics-max-series-per-suite", metrics.DefaultMaxSeriesPerSuite,
		"Most series one suite exports; the metrics past it are dropped and counted in vmbench_metric_series_dropped_total.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the health and readiness probes.")
	flag.StringVar(&o.pprofAddr, "pprof-bind-address", "0",
		"Address of Go's profiling endpoints (/debug/pprof/, no authentication: bind it to 127.0.0.1 and port-forward); 0 disables them.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader, so that only one of several replicas reconciles.")
	flag.StringVar(&o.runnerImage, "runner-image", "vmbench/runner:dev", "Image of MPIJob launchers and workers.")
	flag.StringVar(&o.vmDisk, "vm-disk-image", "vmbench/vm-disk:dev", "containerDisk image of the VMs.")
	flag.StringVar(&o.pullPolicy, "image-pull-policy", string(corev1.PullIfNotPresent), "Pull policy of runner and VM disk images: Always, IfNotPresent or Never.")
	flag.StringVar(&o.vmNetwork, "vm-network", string(platform.VMNetworkAuto),
		"VM interface binding: auto (passt where the cluster's KubeVirt registered it, else bridge), bridge, passt or masquerade.")
	flag.StringVar(&o.emulation, "emulation", string(suitecontroller.EmulationAllow),
		"VM runs under software emulation: allow (figures are marked emulated) or forbid (VM runs fail on such a cluster).")
	flag.DurationVar(&o.containerStart, "container-startup", 10*time.Minute, "Time a container run's pods may take to start.")
	flag.DurationVar(&o.vmStart, "vm-startup", 20*time.Minute, "Time a VM run's VMs may take to boot.")
	flag.BoolVar(&o.networkPolicy, "network-policy", true,
		"Give every container and VM run a NetworkPolicy that admits connections to its pods only from the run's own pods.")
	flag.StringVar(&o.masterKeySecret, "master-key-secret", "vmbench-system/vmbench-master-key",
		"namespace/name of the Secret holding the master key that every run's keys derive from; created with a random key on the first start, "+
			"whose key ID is recorded in ConfigMap <name>-id beside it: later, a missing or replaced key is reported, not replaced. "+
			"Keep it in the manager's own namespace.")
	flag.StringVar(&o.watchNamespaces, "watch-namespaces", "",
		"Comma-separated namespaces whose suites the manager runs; empty for every namespace.")
	flag.IntVar(&o.maxActiveRuns, "max-active-runs", 1,
		"How many suites may run at once; the others wait in line (namespaces take turns, each one's suites in creation order). Raise it only where suites are placed on disjoint nodes "+
			"(spec.placement), as suites that share nodes disturb each other's figures; 0 removes the limit.")
	flag.IntVar(&o.maxActiveRunsPerNS, "max-active-runs-per-namespace", 1,
		"How many of those suites one namespace may run at once; namespaces take turns in line, so that one team's suites do not starve "+
			"the others'. 0 removes the limit.")
	flag.DurationVar(&o.maxSuiteDuration, "max-suite-duration", 24*time.Hour,
		"The longest a suite may hold a run slot, from its admission: a suite whose spec.timeout is longer ends at this limit, "+
			"and its Queued condition says so. 0 removes the limit.")
	flag.DurationVar(&o.minScheduleInterval, "min-schedule-interval", schedulecontroller.DefaultMinScheduleInterval,
		fmt.Sprintf("The shortest time a BenchmarkSchedule may leave between two starts, from %s to %s: a schedule that starts more often "+
			"is refused with its condition Valid False.", schedulecontroller.LowestMinScheduleInterval, schedulecontroller.HighestMinScheduleInterval))
	o.archive.bindFlags(flag.CommandLine)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	return o
}

func (o options) validate() error {
	switch corev1.PullPolicy(o.pullPolicy) {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return fmt.Errorf("--image-pull-policy=%q: use Always, IfNotPresent or Never", o.pullPolicy)
	}
	switch platform.VMNetwork(o.vmNetwork) {
	case platform.VMNetworkAuto, platform.VMNetworkBridge, platform.VMNetworkPasst, platform.VMNetworkMasquerade:
	default:
		return fmt.Errorf("--vm-network=%q: use auto, bridge, passt or masquerade", o.vmNetwork)
	}
	switch suitecontroller.EmulationPolicy(o.emulation) {
	case suitecontroller.EmulationAllow, suitecontroller.EmulationForbid:
	default:
		return fmt.Errorf("--emulation=%q: use allow or forbid", o.emulation)
	}
	if o.maxActiveRuns < 0 {
		return fmt.Errorf("--max-active-runs=%d: use 1 (one suite at a time), a larger number, or 0 for no limit", o.maxActiveRuns)
	}
	if o.maxActiveRunsPerNS < 0 {
		return fmt.Errorf("--max-active-runs-per-namespace=%d: use 1 (one suite per namespace at a time), a larger number, or 0 for no limit", o.maxActiveRunsPerNS)
	}
	if o.maxSuiteDuration < 0 {
		return fmt.Errorf("--max-suite-duration=%s: use a duration such as 24h, or 0 for no limit", o.maxSuiteDuration)
	}
	if o.minScheduleInterval < schedulecontroller.LowestMinScheduleInterval || o.minScheduleInterval > schedulecontroller.HighestMinScheduleInterval {
		return fmt.Errorf("--min-schedule-interval=%s: use a duration from %s to %s, such as %s", o.minScheduleInterval,
			schedulecontroller.LowestMinScheduleInterval, schedulecontroller.HighestMinScheduleInterval, schedulecontroller.DefaultMinScheduleInterval)
	}
	if _, err := o.masterKey(); err != nil {
		return err
	}
	if _, err := o.namespaces(); err != nil {
		return err
	}
	if err := o.metricsOpts.Validate(); err != nil {
		return err
	}
	if err := o.archive.validate(); err != nil {
		return err
	}
	return nil
}

// masterKey is where the master key Secret is.
func (o options) masterKey() (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(o.masterKeySecret, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return types.NamespacedName{}, fmt.Errorf("--master-key-secret=%q: use <namespace>/<name>, the manager's own namespace", o.masterKeySecret)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// namespaces are the namespaces the cache is restricted to; nil means every namespace.
func (o options) namespaces() (map[string]cache.Config, error) {
	if strings.TrimSpace(o.watchNamespaces) == "" {
		return nil, nil
	}
	out := map[string]cache.Config{}
	for _, ns := range strings.Split(o.watchNamespaces, ",") {
		ns = strings.TrimSpace(ns)
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("--watch-namespaces=%q: %q is no namespace name: %s", o.watchNamespaces, ns, strings.Join(errs, "; "))
		}
		out[ns] = cache.Config{}
	}
	return out, nil
}

func run() error {
	setMemoryLimit(ctrl.Log.WithName("setup"))
	o := parseFlags()
	if err := o.validate(); err != nil {
		return err
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ctx := ctrl.SetupSignalHandler()
	mgr, err := newManager(ctx, cfg, o)
	if err != nil {
		return err
	}
	metrics.Register(ctrlmetrics.Registry)
	metrics.Configure(o.metricsOpts)
	return mgr.Start(ctx)
}

// newManager makes the manager and the suite controller for the cluster of cfg. The MPIJob and
// VirtualMachineInstance APIs come with the MPI Operator and KubeVirt, either of which the cluster
// may lack: a kind it does not serve is neither cached nor watched, and the platform types that
// need it are logged as unavailable (their runs fail, saying what to install).
func newManager(ctx context.Context, cfg *rest.Config, o options) (ctrl.Manager, error) {
	masterKeyRef, _ := o.masterKey()
	namespaces, _ := o.namespaces()
	scheme := scheme.New()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("discovering the cluster's APIs: %w", err)
	}
	available, err := suitecontroller.AvailableKinds(mapper)
	if err != nil {
		return nil, err
	}
	log := ctrl.Log.WithName("setup")
	for _, reason := range suitecontroller.UnavailablePlatforms(available) {
		log.Info("platform types unavailable", "reason", reason)
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme, HTTPClient: httpClient, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	loadCtx, cancel := context.WithTimeout(ctx, time.Minute)
	masterKey, err := masterkey.LoadMasterKey(loadCtx, direct, masterKeyRef)
	cancel()
	// A missing, replaced or unusable key is no reason to crash: the manager starts, and every suite
	// that needs the key says why it cannot go on.
	var keyFault *masterkey.MasterKeyFault
	if errors.As(err, &keyFault) {
		log.Error(err, "no usable master key: suites not admitted stay in line, runs that need the key fail with the cause")
		err = nil
	}
	if err != nil {
		return nil, err
	}
	// Only vmbench's own objects are cached, not the cluster's: its ConfigMaps, Services, claims,
	// NetworkPolicies, MPIJobs and VMIs, and the pods the MPI Operator and KubeVirt make for them.
	// Secrets are never read, so never cached. With --watch-namespaces, only those namespaces are.
	owned := cache.ByObject{Label: mustSelector(vmbenchv1.LabelSuite)}
	// ConfigMaps, Services and NetworkPolicies are cached as metadata only, and the suites' result
	// ConfigMaps not at all (controllers/cachepolicy/cache_policy.go).
	metadataOnly := cache.ByObject{Label: owned.Label, Transform: cachepolicy.StripToOwnership()}
	byObject := map[client.Object]cache.ByObject{
		&corev1.ConfigMap{}: {Label: cachepolicy.ChildConfigMapSelector(), Transform: cachepolicy.StripToOwnership()},
		&corev1.Service{}:   metadataOnly, &corev1.PersistentVolumeClaim{}: owned,
		&networkingv1.NetworkPolicy{}: metadataOnly, &corev1.Pod{}: owned, &policyv1.PodDisruptionBudget{}: metadataOnly,
	}
	// The cache needs a kind's REST mapping for its settings: a kind the cluster does not serve
	// would keep the manager from starting.
	for gvk, obj := range map[schema.GroupVersionKind]client.Object{
		mpiv2.SchemeGroupVersion.WithKind("MPIJob"):                      &mpiv2.MPIJob{},
		kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"): &kubevirtv1.VirtualMachineInstance{},
		// Cluster-scoped: the runs' MigrationPolicies, across namespaces, but only vmbench's.
		platform.MigrationPolicyGVK: &migrationsv1alpha1.MigrationPolicy{},
	} {
		if available[gvk] {
			byObject[obj] = owned
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		MapperProvider:         func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
		Metrics:                metrics.ServerOptions(o.metricsAddr, o.metricsSecure, o.metricsOpts.CertDir),
		HealthProbeBindAddress: o.probeAddr,
		PprofBindAddress:       o.pprofAddr,
		LeaderElection:         o.leaderElect,
		LeaderElectionID:       "vmbench.io",
		// The process exits as soon as the manager stops, so the lease can be handed over at once:
		// a replaced pod's successor does not wait for the lease to expire.
		LeaderElectionReleaseOnCancel: true,
		Cache: cache.Options{DefaultNamespaces: namespaces, ByObject: byObject,
			DefaultTransform: cachepolicy.StripManagedFields()},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	clientset, err := kubernetes.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	log.Info("child kinds", "available", fmt.Sprint(available), "watchNamespaces", o.watchNamespaces)
	r := &suitecontroller.SuiteReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    scheme,
		Recorder:  mgr.GetEventRecorder("vmbench"),
		Clock:     clock.RealClock{},
		Logs:      o.logReader(clientset),
		Images: platform.Images{
			Runner: o.runnerImage, VMDisk: o.vmDisk, PullPolicy: corev1.PullPolicy(o.pullPolicy),
		},
		VMNetwork:        platform.VMNetwork(o.vmNetwork),
		Emulation:        suitecontroller.EmulationPolicy(o.emulation),
		ContainerStartup: o.containerStart,
		VMStartup:        o.vmStart,
		Available:        available,
		NetworkPolicy:    o.networkPolicy,
		MasterKey:        masterKey,
		MasterKeyFault:   keyFault,
		MaxActiveRuns:    o.maxActiveRuns,
		Namespaces:       slices.Sorted(maps.Keys(namespaces)),

		MaxActiveRunsPerNamespace: o.maxActiveRunsPerNS,
		MaxSuiteDuration:          o.maxSuiteDuration,
		// The run queue's Leases are in the manager's own namespace, the master key's.
		QueueNamespace: masterKeyRef.Namespace,
	}
	if err := r.SetupWithManager(ctx, mgr); err != nil {
		return nil, fmt.Errorf("setting up the controller: %w", err)
	}
	// BenchmarkSchedules start suites on a cron schedule and keep their records (schedule_controller.go).
	schedules := &schedulecontroller.ScheduleReconciler{
		Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorder("vmbench"), Clock: clock.RealClock{},
		History: &schedulecontroller.ConfigMapHistory{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Scheme: scheme,
			Key: masterKey, Recorder: mgr.GetEventRecorder("vmbench")},
		MinInterval: o.minScheduleInterval,
	}
	// Version triggers get nodes by name, which the manager may not list or watch.
	schedules.APIReader = mgr.GetAPIReader()
	// The runner image trigger compares the images runs are created with against the records.
	schedules.Images = r.Images
	if err := schedules.SetupWithManager(ctx, mgr); err != nil {
		return nil, fmt.Errorf("setting up the schedule controller: %w", err)
	}
	if err := o.archive.setup(mgr, schedules); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// logReader reads the runners' logs through the pods/log API, unless a test replaced it.
func (o options) logReader(clientset kubernetes.Interface) suitecontroller.LogReader {
	if o.logs != nil {
		return o.logs
	}
	return suitecontroller.PodLogReader{Clientset: clientset}
}
