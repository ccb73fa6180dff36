package platform

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

var testTolerations = []vmbenchv1.Toleration{{Key: "bench", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}

// testPodTolerations are testTolerations as the pods and VMIs must carry them.
var testPodTolerations = []corev1.Toleration{{Key: "bench", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}

func quantity(s string) *resource.Quantity {
	q := resource.MustParse(s)
	return &q
}

// testRun is run 1 of suite "demo" in namespace "bench" on the given platform, with 3 nodes of 2 CPUs
// and 2Gi, as the API server stores a suite after applying the CRD's defaults.
func testRun(p vmbenchv1.Platform, benchmarks ...vmbenchv1.Benchmark) Run {
	if len(benchmarks) == 0 {
		benchmarks = []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}, {Name: "net", Type: vmbenchv1.BenchmarkIperf3}}
	}
	for i := range benchmarks {
		benchmarks[i] = benchmarks[i].WithDefaults()
	}
	suite := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "bench"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms:   []vmbenchv1.Platform{p},
			Baseline:    p.Name,
			Cluster:     vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi")},
			Benchmarks:  benchmarks,
			Repetitions: 3,
			Placement: vmbenchv1.Placement{
				NodeSelector: map[string]vmbenchv1.LabelValue{"vmbench.io/pool": "bench"},
				Tolerations:  testTolerations,
			},
			SharedStorage: &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: quantity("4Gi")},
		},
	}
	return Run{
		Suite: suite, Name: "demo-" + p.Name + "-1", Platform: p, Repetition: 1, Benchmarks: benchmarks,
		AuthSecret: "demo-auth",
		Auth: Auth{Token: []byte("0123abcd"), SSHPrivateKey: []byte("-----PRIVATE KEY-----\n"), SSHPublicKey: []byte("ssh-ed25519 AAAA vmbench\n"),
			SSHHostKey: []byte("-----HOST KEY-----\n"), SSHHostPublicKey: []byte("ssh-ed25519 HOST vmbench\n"), KnownHosts: []byte("* ssh-ed25519 HOST vmbench\n")},
		Images:    Images{Runner: "runner:v1", VMDisk: "disk:v1", PullPolicy: corev1.PullIfNotPresent},
		Deadline:  90 * time.Minute,
		VMNetwork: VMNetworkPasst,
	}
}

var containerPlatform = vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer}

type objectID struct{ Kind, Name, Namespace string }

func ids(objs []client.Object) []objectID {
	out := make([]objectID, len(objs))
	for i, o := range objs {
		out[i] = objectID{o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), o.GetNamespace()}
	}
	return out
}

func buildMPIJob(t *testing.T, run Run) (*corev1.ConfigMap, *corev1.PersistentVolumeClaim, *mpiv2.MPIJob) {
	t.Helper()
	objs, err := MPIJobAdapter{}.Build(run)
	if err != nil {
		t.Fatalf("Build() error: %v", err)
	}
	var cm *corev1.ConfigMap
	var pvc *corev1.PersistentVolumeClaim
	var job *mpiv2.MPIJob
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.ConfigMap:
			cm = o
		case *corev1.PersistentVolumeClaim:
			pvc = o
		case *mpiv2.MPIJob:
			job = o
		case *policyv1.PodDisruptionBudget:
			// TestRunDisruptionBudget's.
		default:
			t.Fatalf("Build() returned an unexpected %T", o)
		}
	}
	if cm == nil || job == nil {
		t.Fatalf("Build() returned %v, want a ConfigMap and an MPIJob", ids(objs))
	}
	return cm, pvc, job
}

func TestMPIJobBuildObjects(t *testing.T) {
	shared := vmbenchv1.StorageShared
	tests := []struct {
		name       string
		benchmarks []vmbenchv1.Benchmark
		want       []objectID
	}{
		{
			name:       "no shared storage",
			benchmarks: []vmbenchv1.Benchmark{{Name: "io", Type: vmbenchv1.BenchmarkIozone}, {Name: "fio", Type: vmbenchv1.BenchmarkFio}},
			want:       []objectID{{"ConfigMap", "demo-container-1-plan", "bench"}, {"PodDisruptionBudget", "demo-container-1", "bench"}, {"MPIJob", "demo-container-1", "bench"}},
		},
		{
			name: "iozone on the shared target",
			benchmarks: []vmbenchv1.Benchmark{{Name: "io", Type: vmbenchv1.BenchmarkIozone,
				Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, shared}}}},
			want: []objectID{{"ConfigMap", "demo-container-1-plan", "bench"}, {"PersistentVolumeClaim", "demo-container-1-shared", "bench"},
				{"PodDisruptionBudget", "demo-container-1", "bench"}, {"MPIJob", "demo-container-1", "bench"}},
		},
		{
			name:       "fio on the shared target",
			benchmarks: []vmbenchv1.Benchmark{{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: shared}}},
			want: []objectID{{"ConfigMap", "demo-container-1-plan", "bench"}, {"PersistentVolumeClaim", "demo-container-1-shared", "bench"},
				{"PodDisruptionBudget", "demo-container-1", "bench"}, {"MPIJob", "demo-container-1", "bench"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := MPIJobAdapter{}.Build(testRun(containerPlatform, tt.benchmarks...))
			if err != nil {
				t.Fatalf("Build() error: %v", err)
			}
			if diff := cmp.Diff(tt.want, ids(objs)); diff != "" {
				t.Errorf("objects mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMPIJobSharedStorage(t *testing.T) {
	run := testRun(containerPlatform, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio,
		Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}})
	cm, pvc, job := buildMPIJob(t, run)
	if pvc == nil {
		t.Fatal("no PersistentVolumeClaim for the shared target")
	}
	if got := pvc.Spec.AccessModes; len(got) != 1 || got[0] != corev1.ReadWriteMany {
		t.Errorf("access modes = %v, want [ReadWriteMany]", got)
	}
	if got := ptr.Deref(pvc.Spec.StorageClassName, ""); got != "nfs" {
		t.Errorf("storage class = %q, want nfs", got)
	}
	if got := pvc.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(resource.MustParse("4Gi")) != 0 {
		t.Errorf("storage request = %s, want 4Gi", got.String())
	}
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if !hasMount(spec.Template.Spec, sharedVolume, podSharedDir) {
			t.Errorf("%s does not mount the shared volume at %s", role, podSharedDir)
		}
		if !hasVolume(spec.Template.Spec, func(v corev1.Volume) bool {
			return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "demo-container-1-shared"
		}) {
			t.Errorf("%s has no volume of claim demo-container-1-shared", role)
		}
	}
	if plan := decodePlan(t, cm.Data[planConfigKey]); plan.SharedDir != podSharedDir || plan.SharedExport != "" {
		t.Errorf("plan sharedDir = %q and sharedExport %q, want %q and none: the claim is the shared file system", plan.SharedDir, plan.SharedExport, podSharedDir)
	}

	_, _, job = buildMPIJob(t, testRun(containerPlatform))
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if hasMount(spec.Template.Spec, sharedVolume, podSharedDir) {
			t.Errorf("%s mounts a shared volume without a benchmark on the shared target", role)
		}
	}
}

func hasMount(pod corev1.PodSpec, volume, path string) bool {
	for _, m := range pod.Containers[0].VolumeMounts {
		if m.Name == volume && m.MountPath == path {
			return true
		}
	}
	return false
}

func hasVolume(pod corev1.PodSpec, match func(corev1.Volume) bool) bool {
	for _, v := range pod.Volumes {
		if match(v) {
			return true
		}
	}
	return false
}

func TestMPIJobReplicas(t *testing.T) {
	tests := []struct {
		nodes       int32
		wantWorkers *int32
	}{
		{nodes: 1},
		{nodes: 2, wantWorkers: ptr.To[int32](1)},
		{nodes: 3, wantWorkers: ptr.To[int32](2)},
		{nodes: 8, wantWorkers: ptr.To[int32](7)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d nodes", tt.nodes), func(t *testing.T) {
			run := testRun(containerPlatform)
			run.Suite.Spec.Cluster.Nodes = tt.nodes
			run.Suite.Spec.Cluster.CPU = 4
			_, _, job := buildMPIJob(t, run)
			launcher := job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher]
			if launcher == nil || ptr.Deref(launcher.Replicas, 0) != 1 {
				t.Fatalf("launcher = %+v, want 1 replica", launcher)
			}
			var gotWorkers *int32
			if w := job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker]; w != nil {
				gotWorkers = w.Replicas
			}
			if diff := cmp.Diff(tt.wantWorkers, gotWorkers); diff != "" {
				t.Errorf("worker replicas mismatch (-want +got):\n%s", diff)
			}
			if got := ptr.Deref(job.Spec.SlotsPerWorker, 0); got != 4 {
				t.Errorf("slotsPerWorker = %d, want the CPU count 4", got)
			}
			if !ptr.Deref(job.Spec.RunLauncherAsWorker, false) {
				t.Error("runLauncherAsWorker is not set: the master would not take part in MPI runs")
			}
			// The Job controller deletes the launcher, and the results in its log, at this deadline:
			// it must come after vmbench's own (5400 s), with room for vmbench to be late.
			if got := ptr.Deref(job.Spec.RunPolicy.ActiveDeadlineSeconds, 0); got != 5400+3600 {
				t.Errorf("activeDeadlineSeconds = %d, want the run's deadline 5400 plus an hour of grace", got)
			}
			if got := ptr.Deref(job.Spec.RunPolicy.BackoffLimit, -1); got != 0 {
				t.Errorf("backoffLimit = %d, want 0: a benchmark must never run twice", got)
			}
		})
	}
}

// The runs of TestMPIJobResources have no storage benchmark: their pods get the ephemeral storage
// of the runner's own files (TestMPIJobScratchStorage covers the rest).
func TestMPIJobResources(t *testing.T) {
	tests := []struct {
		name         string
		shape        vmbenchv1.ClusterShape
		wantLimits   map[corev1.ResourceName]string
		wantRequests map[corev1.ResourceName]string
	}{
		{
			name:         "requests equal limits by default",
			shape:        vmbenchv1.ClusterShape{Nodes: 3, CPU: 4, Memory: quantity("8Gi")},
			wantLimits:   map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi", corev1.ResourceEphemeralStorage: "768Mi"},
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi", corev1.ResourceEphemeralStorage: "768Mi"},
		},
		{
			name:         "a shape built in Go takes the defaults",
			shape:        vmbenchv1.ClusterShape{},
			wantLimits:   map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "2Gi", corev1.ResourceEphemeralStorage: "768Mi"},
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "2Gi", corev1.ResourceEphemeralStorage: "768Mi"},
		},
		{
			name:         "lowered requests",
			shape:        vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi"), CPURequest: quantity("500m"), MemoryRequest: quantity("1Gi")},
			wantLimits:   map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "2Gi", corev1.ResourceEphemeralStorage: "768Mi"},
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "500m", corev1.ResourceMemory: "1Gi", corev1.ResourceEphemeralStorage: "768Mi"},
		},
		{
			name:         "only the cpu request lowered",
			shape:        vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi"), CPURequest: quantity("1")},
			wantLimits:   map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "2Gi", corev1.ResourceEphemeralStorage: "768Mi"},
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "1", corev1.ResourceMemory: "2Gi", corev1.ResourceEphemeralStorage: "768Mi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := testRun(containerPlatform)
			run.Suite.Spec.Cluster = tt.shape
			_, _, job := buildMPIJob(t, run)
			for role, spec := range job.Spec.MPIReplicaSpecs {
				res := spec.Template.Spec.Containers[0].Resources
				if diff := cmp.Diff(tt.wantLimits, quantityStrings(res.Limits)); diff != "" {
					t.Errorf("%s limits mismatch (-want +got):\n%s", role, diff)
				}
				if diff := cmp.Diff(tt.wantRequests, quantityStrings(res.Requests)); diff != "" {
					t.Errorf("%s requests mismatch (-want +got):\n%s", role, diff)
				}
			}
		})
	}
}

func quantityStrings(l corev1.ResourceList) map[corev1.ResourceName]string {
	out := map[corev1.ResourceName]string{}
	for k, v := range l {
		out[k] = v.String()
	}
	return out
}

func TestMPIJobPodTemplates(t *testing.T) {
	tests := []struct {
		name             string
		platform         vmbenchv1.Platform
		wantRuntimeClass *string
		wantHostNetwork  bool
		wantDNSPolicy    corev1.DNSPolicy
	}{
		{name: "container", platform: containerPlatform},
		{name: "container with a runtime class", wantRuntimeClass: ptr.To("kata"),
			platform: vmbenchv1.Platform{Name: "kata", Type: vmbenchv1.PlatformContainer, RuntimeClassName: ptr.To("kata")}},
		{name: "host", platform: vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost},
			wantHostNetwork: true, wantDNSPolicy: corev1.DNSClusterFirstWithHostNet},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := testRun(tt.platform)
			_, _, job := buildMPIJob(t, run)
			if len(job.Spec.MPIReplicaSpecs) != 2 {
				t.Fatalf("got %d replica specs, want a launcher and workers", len(job.Spec.MPIReplicaSpecs))
			}
			for role, spec := range job.Spec.MPIReplicaSpecs {
				pod := spec.Template.Spec
				if diff := cmp.Diff(tt.wantRuntimeClass, pod.RuntimeClassName); diff != "" {
					t.Errorf("%s runtimeClassName mismatch (-want +got):\n%s", role, diff)
				}
				if pod.HostNetwork != tt.wantHostNetwork || pod.DNSPolicy != tt.wantDNSPolicy {
					t.Errorf("%s hostNetwork, dnsPolicy = %t, %q; want %t, %q", role, pod.HostNetwork, pod.DNSPolicy, tt.wantHostNetwork, tt.wantDNSPolicy)
				}
				if diff := cmp.Diff(map[string]string{"vmbench.io/pool": "bench"}, pod.NodeSelector); diff != "" {
					t.Errorf("%s nodeSelector mismatch (-want +got):\n%s", role, diff)
				}
				if diff := cmp.Diff(testPodTolerations, pod.Tolerations); diff != "" {
					t.Errorf("%s tolerations mismatch (-want +got):\n%s", role, diff)
				}
				c := pod.Containers[0]
				if c.Image != "runner:v1" || c.ImagePullPolicy != corev1.PullIfNotPresent {
					t.Errorf("%s image = %s (%s), want runner:v1 (IfNotPresent)", role, c.Image, c.ImagePullPolicy)
				}
				if !hasMount(pod, scratchVolume, podLocalDir) {
					t.Errorf("%s has no scratch space at %s", role, podLocalDir)
				}
			}
		})
	}
}

func TestMPIJobLauncherAndWorker(t *testing.T) {
	run := testRun(containerPlatform)
	_, _, job := buildMPIJob(t, run)
	launcher := job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher].Template
	worker := job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker].Template

	tokenEnv := corev1.EnvVar{Name: runplan.TokenEnv, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "demo-auth"}, Key: AuthTokenKey}}}
	findEnv := func(c corev1.Container, name string) *corev1.EnvVar {
		for i := range c.Env {
			if c.Env[i].Name == name {
				return &c.Env[i]
			}
		}
		return nil
	}
	planVolumeOf := func(pod corev1.PodSpec) bool {
		return hasVolume(pod, func(v corev1.Volume) bool {
			return v.ConfigMap != nil && v.ConfigMap.Name == "demo-container-1-plan"
		})
	}

	lc := launcher.Spec.Containers[0]
	if diff := cmp.Diff(&tokenEnv, findEnv(lc, runplan.TokenEnv)); diff != "" {
		t.Errorf("launcher token env mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"runner", "run", "--plan", runplan.PlanFile}, lc.Command); diff != "" {
		t.Errorf("launcher command mismatch (-want +got):\n%s", diff)
	}
	if lc.Name != launcherName {
		t.Errorf("launcher container is named %q, want %q (LogSource reads it)", lc.Name, launcherName)
	}
	var planMount *corev1.VolumeMount
	for i := range lc.VolumeMounts {
		if lc.VolumeMounts[i].Name == planVolume {
			planMount = &lc.VolumeMounts[i]
		}
	}
	if planMount == nil || !strings.HasPrefix(runplan.PlanFile, planMount.MountPath+"/") || !planMount.ReadOnly {
		t.Errorf("launcher plan mount = %+v, want a read-only mount holding %s", planMount, runplan.PlanFile)
	}
	if !planVolumeOf(launcher.Spec) {
		t.Error("launcher has no volume of the plan ConfigMap")
	}

	wc := worker.Spec.Containers[0]
	if findEnv(wc, runplan.TokenEnv) != nil {
		t.Error("workers get the frame token; only the launcher may")
	}
	if planVolumeOf(worker.Spec) {
		t.Error("workers mount the plan; only the launcher needs it")
	}
	if len(wc.Command) == 0 || wc.Command[0] != "/usr/sbin/sshd" {
		t.Errorf("worker command = %v, want sshd", wc.Command)
	}
}

// everyBenchmark is one benchmark of each type, storage on both targets, so that the pods get every
// volume, mount and setting they can have.
func everyBenchmark() []vmbenchv1.Benchmark {
	both := []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}
	return []vmbenchv1.Benchmark{
		{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC},
		{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
		{Name: "mem", Type: vmbenchv1.BenchmarkSysbenchMemory},
		{Name: "stress-cpu", Type: vmbenchv1.BenchmarkStressNGCPU},
		{Name: "stress-vm", Type: vmbenchv1.BenchmarkStressNGVM},
		{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Targets: both}},
		{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}},
		{Name: "net", Type: vmbenchv1.BenchmarkIperf3},
		{Name: "ping", Type: vmbenchv1.BenchmarkPing},
	}
}

// Container pods pass Pod Security's restricted profile, launcher and workers alike, with or
// without a RuntimeClass, and mount no service account token.
func TestMPIJobPodsMeetPodSecurityRestricted(t *testing.T) {
	for _, p := range []vmbenchv1.Platform{
		containerPlatform,
		{Name: "kata", Type: vmbenchv1.PlatformContainer, RuntimeClassName: ptr.To("kata")},
	} {
		_, _, job := buildMPIJob(t, testRun(p, everyBenchmark()...))
		for _, role := range []mpiv2.MPIReplicaType{mpiv2.MPIReplicaTypeLauncher, mpiv2.MPIReplicaTypeWorker} {
			spec := job.Spec.MPIReplicaSpecs[role]
			if spec == nil {
				t.Fatalf("%s: no %s", p.Name, role)
			}
			if v := restrictedViolations(spec.Template.Spec); len(v) != 0 {
				t.Errorf("%s %s fails Pod Security restricted:\n%s", p.Name, role, strings.Join(v, "\n"))
			}
			if got := spec.Template.Spec.AutomountServiceAccountToken; !ptr.Equal(got, ptr.To(false)) {
				t.Errorf("%s %s automountServiceAccountToken = %v, want false", p.Name, role, ptr.Deref(got, true))
			}
		}
	}
}

// Host pods stay privileged where Host needs it and nowhere else: the node's network with its ports
// declared (sshd, and iperf3's server over TCP and UDP), and NET_RAW with privilege escalation for the
// setuid ping. Only an admin allows the Host platform.
func TestMPIJobHostPodsDeviateFromRestrictedOnlyForTheNodesNetwork(t *testing.T) {
	_, _, job := buildMPIJob(t, testRun(vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}, everyBenchmark()...))
	for role, name := range map[mpiv2.MPIReplicaType]string{mpiv2.MPIReplicaTypeLauncher: launcherName, mpiv2.MPIReplicaTypeWorker: workerName} {
		want := []string{
			"host namespaces: hostNetwork=true hostPID=false hostIPC=false",
			name + ": hostPort 2222",
			name + ": hostPort 5201",
			name + ": hostPort 5201",
			name + ": allowPrivilegeEscalation is not false",
			name + ": adds capability NET_RAW",
		}
		pod := job.Spec.MPIReplicaSpecs[role].Template.Spec
		if diff := cmp.Diff(want, restrictedViolations(pod)); diff != "" {
			t.Errorf("%s violations mismatch (-want +got):\n%s", role, diff)
		}
		if !ptr.Equal(pod.AutomountServiceAccountToken, ptr.To(false)) {
			t.Errorf("%s mounts a service account token", role)
		}
	}
}

// Ping needs no capability in container pods: their group may open ICMP datagram sockets. A
// hostNetwork pod may not set a net.* sysctl (the kubelet refuses it), so Host pods have none.
func TestMPIJobPingGroupRange(t *testing.T) {
	_, _, job := buildMPIJob(t, testRun(containerPlatform, vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing}))
	for role, spec := range job.Spec.MPIReplicaSpecs {
		psc := spec.Template.Spec.SecurityContext
		var lo, hi int64
		if len(psc.Sysctls) != 1 || psc.Sysctls[0].Name != "net.ipv4.ping_group_range" {
			t.Fatalf("%s sysctls = %v, want net.ipv4.ping_group_range only", role, psc.Sysctls)
		}
		if _, err := fmt.Sscanf(psc.Sysctls[0].Value, "%d %d", &lo, &hi); err != nil {
			t.Fatalf("%s ping_group_range %q: %v", role, psc.Sysctls[0].Value, err)
		}
		if gid := ptr.Deref(psc.RunAsGroup, -1); gid < lo || gid > hi {
			t.Errorf("%s ping_group_range %q leaves out the runner's group %d", role, psc.Sysctls[0].Value, gid)
		}
	}
	_, _, job = buildMPIJob(t, testRun(vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}))
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if got := spec.Template.Spec.SecurityContext.Sysctls; len(got) != 0 {
			t.Errorf("host %s sets sysctls %v, which a hostNetwork pod may not", role, got)
		}
	}
}

// The scratch volume is as large as the largest file a storage benchmark writes there, plus room
// for the runner's own files; the container's ephemeral storage adds room for its log and
// writable layer.
func TestMPIJobScratchStorage(t *testing.T) {
	local, shared := vmbenchv1.StorageLocal, vmbenchv1.StorageShared
	iozone := func(size string, targets ...vmbenchv1.StorageTarget) vmbenchv1.Benchmark {
		return vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: size, Targets: targets}}
	}
	fio := func(size string, jobs int32, target vmbenchv1.StorageTarget) vmbenchv1.Benchmark {
		return vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Size: size, NumJobs: jobs, Target: target}}
	}
	tests := []struct {
		name                       string
		benchmarks                 []vmbenchv1.Benchmark
		wantScratch, wantContainer string
	}{
		{"no storage benchmark", []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}, "256Mi", "768Mi"},
		{"iozone's default file", []vmbenchv1.Benchmark{{Name: "io", Type: vmbenchv1.BenchmarkIozone}}, "768Mi", "1280Mi"},
		{"fio's default file", []vmbenchv1.Benchmark{{Name: "fio", Type: vmbenchv1.BenchmarkFio}}, "512Mi", "1Gi"},
		{"an iozone size without a unit is in KiB", []vmbenchv1.Benchmark{iozone("1048576")}, "1280Mi", "1792Mi"},
		{"fio's size times its jobs", []vmbenchv1.Benchmark{fio("1g", 4, local)}, "4352Mi", "4864Mi"},
		{"the largest file, as each is removed after its execution", []vmbenchv1.Benchmark{iozone("2G"), fio("256m", 1, local)}, "2304Mi", "2816Mi"},
		{"the shared target is not scratch", []vmbenchv1.Benchmark{iozone("8g", shared), fio("8g", 8, shared)}, "256Mi", "768Mi"},
		{"iozone on both targets", []vmbenchv1.Benchmark{iozone("1g", local, shared)}, "1280Mi", "1792Mi"},
		{"iozone auto writes up to its largest file", []vmbenchv1.Benchmark{{Name: "io", Type: vmbenchv1.BenchmarkIozone,
			Iozone: &vmbenchv1.IozoneParams{Auto: true, MaxFileSize: "2g"}}}, "2304Mi", "2816Mi"},
		{"iozone auto's default largest file", []vmbenchv1.Benchmark{{Name: "io", Type: vmbenchv1.BenchmarkIozone,
			Iozone: &vmbenchv1.IozoneParams{Auto: true}}}, "768Mi", "1280Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, job := buildMPIJob(t, testRun(containerPlatform, tt.benchmarks...))
			for role, spec := range job.Spec.MPIReplicaSpecs {
				pod := spec.Template.Spec
				var scratch *resource.Quantity
				for _, v := range pod.Volumes {
					if v.Name == scratchVolume && v.EmptyDir != nil {
						scratch = v.EmptyDir.SizeLimit
					}
				}
				if scratch == nil || scratch.String() != tt.wantScratch {
					t.Errorf("%s scratch sizeLimit = %v, want %s", role, scratch, tt.wantScratch)
				}
				res := pod.Containers[0].Resources
				for what, l := range map[string]corev1.ResourceList{"request": res.Requests, "limit": res.Limits} {
					if got := l[corev1.ResourceEphemeralStorage]; got.String() != tt.wantContainer {
						t.Errorf("%s ephemeral-storage %s = %s, want %s", role, what, got.String(), tt.wantContainer)
					}
				}
			}
		})
	}
}

func TestMPIJobBuildRefusesAnUnreadableSize(t *testing.T) {
	run := testRun(containerPlatform, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Size: "lots"}})
	_, err := MPIJobAdapter{}.Build(run)
	if err == nil || !strings.Contains(err.Error(), "benchmark fio: fio size") {
		t.Errorf("Build() error = %v, want one naming benchmark fio's size", err)
	}
}

func TestMPIJobLabels(t *testing.T) {
	run := testRun(containerPlatform, vmbenchv1.Benchmark{Name: "fio", Type: vmbenchv1.BenchmarkFio,
		Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}})
	objs, err := MPIJobAdapter{}.Build(run)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-container-1", vmbenchv1.LabelPlatform: "container"}
	for _, o := range objs {
		if diff := cmp.Diff(want, o.GetLabels()); diff != "" {
			t.Errorf("%s labels mismatch (-want +got):\n%s", o.GetName(), diff)
		}
	}
	job := objs[len(objs)-1].(*mpiv2.MPIJob)
	for role, wantRole := range map[mpiv2.MPIReplicaType]string{mpiv2.MPIReplicaTypeLauncher: vmbenchv1.RoleMaster, mpiv2.MPIReplicaTypeWorker: vmbenchv1.RoleNode} {
		want := map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-container-1", vmbenchv1.LabelPlatform: "container",
			vmbenchv1.LabelRole: wantRole}
		if diff := cmp.Diff(want, job.Spec.MPIReplicaSpecs[role].Template.Labels); diff != "" {
			t.Errorf("%s pod labels mismatch (-want +got):\n%s", role, diff)
		}
	}
}

func TestMPIJobBuildIsDeterministic(t *testing.T) {
	for _, p := range []vmbenchv1.Platform{containerPlatform, {Name: "host", Type: vmbenchv1.PlatformHost}} {
		run := testRun(p, vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
			Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageShared}}},
			vmbenchv1.Benchmark{Name: "ping", Type: vmbenchv1.BenchmarkPing})
		first, err := MPIJobAdapter{}.Build(run)
		if err != nil {
			t.Fatal(err)
		}
		second, err := MPIJobAdapter{}.Build(run)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("%s: two builds differ (-first +second):\n%s", p.Name, diff)
		}
	}
}

func decodePlan(t *testing.T, s string) runplan.Plan {
	t.Helper()
	var plan runplan.Plan
	if err := json.Unmarshal([]byte(s), &plan); err != nil {
		t.Fatalf("decoding the plan: %v", err)
	}
	return plan
}

func TestMPIJobPlan(t *testing.T) {
	run := testRun(containerPlatform)
	run.Repetition = 2
	run.Name = "demo-container-2"
	cm, _, _ := buildMPIJob(t, run)
	want := runplan.Plan{
		Suite: "demo", Namespace: "bench", Run: "demo-container-2", Platform: "container",
		PlatformType: vmbenchv1.PlatformContainer, Repetition: 2,
		Nodes: []runplan.Node{
			{Name: "master", Address: "demo-container-2-launcher.demo-container-2.bench.svc"},
			{Name: "node01", Address: "demo-container-2-worker-0.demo-container-2.bench.svc"},
			{Name: "node02", Address: "demo-container-2-worker-1.demo-container-2.bench.svc"},
		},
		CPU: 2, MemoryBytes: 2 << 30, LocalDir: podLocalDir, RootFSDir: "/var/tmp/vmbench", SSHPort: 2222, KnownHostsFile: "/etc/ssh/vmbench/known_hosts",
		Benchmarks: run.Benchmarks,
	}
	if diff := cmp.Diff(want, decodePlan(t, cm.Data[planConfigKey])); diff != "" {
		t.Errorf("plan mismatch (-want +got):\n%s", diff)
	}
}

func mpiJob(name string, conds ...mpiv2.JobCondition) *mpiv2.MPIJob {
	return &mpiv2.MPIJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: mpiv2.JobStatus{Conditions: conds}}
}

func jobCond(t mpiv2.JobConditionType, s corev1.ConditionStatus, reason, msg string) mpiv2.JobCondition {
	return mpiv2.JobCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

func TestMPIJobObserve(t *testing.T) {
	const name = "demo-container-1"
	created := jobCond(mpiv2.JobCreated, corev1.ConditionTrue, "Created", "")
	running := jobCond(mpiv2.JobRunning, corev1.ConditionTrue, "Running", "")
	tests := []struct {
		name string
		objs []client.Object
		want Outcome
	}{
		{name: "no children", want: Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: mpiJobGVK, Name: name}}},
		{name: "created", objs: []client.Object{mpiJob(name, created)}, want: Outcome{Phase: PhasePending}},
		{name: "running", objs: []client.Object{mpiJob(name, created, running)}, want: Outcome{Phase: PhaseRunning}},
		{name: "succeeded", want: Outcome{Phase: PhaseSucceeded},
			objs: []client.Object{mpiJob(name, created, jobCond(mpiv2.JobRunning, corev1.ConditionFalse, "", ""),
				jobCond(mpiv2.JobSucceeded, corev1.ConditionTrue, "Succeeded", "done"))}},
		{name: "failed with its message",
			objs: []client.Object{mpiJob(name, created, running, jobCond(mpiv2.JobFailed, corev1.ConditionTrue, "BackoffLimitExceeded", "launcher exited 1"))},
			want: Outcome{Phase: PhaseFailed, Message: "MPIJob demo-container-1 failed: BackoffLimitExceeded: launcher exited 1"}},
		{name: "conditions that are not True do not count",
			objs: []client.Object{mpiJob(name, created, running, jobCond(mpiv2.JobFailed, corev1.ConditionFalse, "x", "y"),
				jobCond(mpiv2.JobSucceeded, corev1.ConditionUnknown, "", ""))},
			want: Outcome{Phase: PhaseRunning}},
		{name: "other objects are ignored",
			objs: []client.Object{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}},
				mpiJob("demo-container-2", jobCond(mpiv2.JobFailed, corev1.ConditionTrue, "x", "y")),
				mpiJob(name, created, running)},
			want: Outcome{Phase: PhaseRunning}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MPIJobAdapter{}.Observe(testRun(containerPlatform), Children{Objects: tt.objs})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Observe() mismatch (-want +got):\n%s", diff)
			}
			if got.Finished() != (tt.want.Phase == PhaseSucceeded || tt.want.Phase == PhaseFailed) {
				t.Errorf("Finished() = %t for phase %s", got.Finished(), got.Phase)
			}
		})
	}
}

func TestMPIJobLogSource(t *testing.T) {
	run := testRun(containerPlatform)
	src := MPIJobAdapter{}.LogSource(run)
	want := LogSource{Selector: labels.Set{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-container-1", vmbenchv1.LabelRole: vmbenchv1.RoleMaster,
		mpiv2.JobRoleLabel: "launcher"}, Container: launcherName,
		// The MPI Operator (v2beta1) names the launcher Job <MPIJob>-launcher and makes the MPIJob its
		// controller; the Job controller makes the Job the launcher pod's.
		Owner: ChildRef{GVK: mpiv2.SchemeGroupVersion.WithKind("MPIJob"), Name: "demo-container-1"},
		Via:   &ChildRef{GVK: schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"}, Name: "demo-container-1-launcher"}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("LogSource() mismatch (-want +got):\n%s", diff)
	}
	// The launcher pod carries the template's labels plus the MPI Operator's role label; the selector
	// must match it and not the workers.
	_, _, job := buildMPIJob(t, run)
	for role, wantMatch := range map[mpiv2.MPIReplicaType]bool{mpiv2.MPIReplicaTypeLauncher: true, mpiv2.MPIReplicaTypeWorker: false} {
		spec := job.Spec.MPIReplicaSpecs[role].Template
		pod := labels.Set{mpiv2.JobRoleLabel: strings.ToLower(string(role))}
		for k, v := range spec.Labels {
			pod[k] = v
		}
		if got := src.Selector.AsSelector().Matches(pod); got != wantMatch {
			t.Errorf("selector matches the %s pod: %t, want %t", role, got, wantMatch)
		}
		if wantMatch && spec.Spec.Containers[0].Name != src.Container {
			t.Errorf("launcher container %q is not the log container %q", spec.Spec.Containers[0].Name, src.Container)
		}
	}
}

func TestFor(t *testing.T) {
	tests := []struct {
		typ     vmbenchv1.PlatformType
		want    Adapter
		wantErr string
	}{
		{typ: vmbenchv1.PlatformContainer, want: MPIJobAdapter{}},
		{typ: vmbenchv1.PlatformHost, want: MPIJobAdapter{}},
		{typ: vmbenchv1.PlatformVM, want: VMIAdapter{}},
		{typ: "Wasm", wantErr: `platform type "Wasm" is not supported: use Container, VM or Host`},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			got, err := For(tt.typ)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("For(%q) error = %v, want %q", tt.typ, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("For(%q) = %T, %v; want %T", tt.typ, got, err, tt.want)
			}
		})
	}
	if got := (MPIJobAdapter{}).Kinds(); len(got) != 1 || got[0].Kind != "MPIJob" || got[0].Group != "kubeflow.org" {
		t.Errorf("MPIJobAdapter kinds = %v", got)
	}
	if got := (VMIAdapter{}).Kinds(); len(got) != 1 || got[0].Kind != "VirtualMachineInstance" || got[0].Group != "kubevirt.io" {
		t.Errorf("VMIAdapter kinds = %v", got)
	}
}

func TestNodeNames(t *testing.T) {
	tests := []struct {
		nodes int32
		want  []string
	}{
		{1, []string{"master"}},
		{2, []string{"master", "node01"}},
		{3, []string{"master", "node01", "node02"}},
		{8, []string{"master", "node01", "node02", "node03", "node04", "node05", "node06", "node07"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, NodeNames(tt.nodes)); diff != "" {
			t.Errorf("NodeNames(%d) mismatch (-want +got):\n%s", tt.nodes, diff)
		}
	}
}

// Host pods declare the node ports they listen on (sshd and each iperf3 server, once per port), so
// the scheduler never puts two of them on one node; other pods declare none.
func TestMPIJobHostPortsKeepHostPodsApart(t *testing.T) {
	iperf := func(name string, port int32) vmbenchv1.Benchmark {
		return vmbenchv1.Benchmark{Name: name, Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{ServerPort: port}}
	}
	host := vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}
	_, _, job := buildMPIJob(t, testRun(host, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}, iperf("a", 5301), iperf("b", 5301), iperf("c", 5400)))
	want := []corev1.ContainerPort{
		{Name: "ssh", ContainerPort: 2222, HostPort: 2222, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 5301, HostPort: 5301, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 5301, HostPort: 5301, Protocol: corev1.ProtocolUDP},
		{ContainerPort: 5400, HostPort: 5400, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 5400, HostPort: 5400, Protocol: corev1.ProtocolUDP},
	}
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if diff := cmp.Diff(want, spec.Template.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("host %s ports mismatch (-want +got):\n%s", role, diff)
		}
	}
	_, _, job = buildMPIJob(t, testRun(containerPlatform, iperf("a", 5301)))
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if ports := spec.Template.Spec.Containers[0].Ports; len(ports) != 0 {
			t.Errorf("container %s declares ports %v", role, ports)
		}
	}
}

// netperf's and netcat's fixed ports are declared once however many benchmarks use them, and an
// iperf3 server already on one of them does not declare it twice.
func TestMPIJobHostPortsOfNetperfAndNetcat(t *testing.T) {
	host := vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}
	_, _, job := buildMPIJob(t, testRun(host,
		vmbenchv1.Benchmark{Name: "rr", Type: vmbenchv1.BenchmarkNetperf},
		vmbenchv1.Benchmark{Name: "stream", Type: vmbenchv1.BenchmarkNetperf},
		vmbenchv1.Benchmark{Name: "nc", Type: vmbenchv1.BenchmarkNetcat},
		vmbenchv1.Benchmark{Name: "net", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{ServerPort: 12867}}))
	want := []corev1.ContainerPort{
		{Name: "ssh", ContainerPort: 2222, HostPort: 2222, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 12867, HostPort: 12867, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 12867, HostPort: 12867, Protocol: corev1.ProtocolUDP},
		{ContainerPort: 12865, HostPort: 12865, Protocol: corev1.ProtocolTCP},
		{ContainerPort: 12866, HostPort: 12866, Protocol: corev1.ProtocolTCP},
	}
	for role, spec := range job.Spec.MPIReplicaSpecs {
		if diff := cmp.Diff(want, spec.Template.Spec.Containers[0].Ports); diff != "" {
			t.Errorf("host %s ports mismatch (-want +got):\n%s", role, diff)
		}
	}
}
