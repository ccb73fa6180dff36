package platform

import (
	"encoding/json"
	"fmt"
	"path"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Paths inside the runner image, which is set up as the MPI Operator expects (notes/mpi-operator.md).
const (
	mpiUserID       = 1000
	mpiHome         = "/home/mpiuser"
	sshdConfig      = mpiHome + "/.sshd_config"
	podLocalDir     = "/scratch"
	podSharedDir    = "/shared"
	podRootFSDir    = "/var/tmp/vmbench" // in the container's writable layer: no volume is mounted there
	planVolume      = "plan"
	sshHostVolume   = "ssh-host"
	scratchVolume   = "scratch"
	sharedVolume    = "shared"
	launcherName    = "launcher"
	workerName      = "worker"
	planConfigKey   = "plan.json"
	mpiLauncherRole = "launcher"
	// podSSHHostKey is where the runner image's sshd_config expects the run's host key.
	podSSHHostKey = runplan.SSHDir + "/ssh_host_ed25519_key"
)

// MPIJobAdapter runs container and host platforms as a Kubeflow MPIJob: the launcher is the master
// (runLauncherAsWorker puts it into the hostfile, as the seeds' master took part in MPI runs) and
// Nodes-1 workers are the nodes. A ConfigMap carries the runner's plan.
type MPIJobAdapter struct{}

var mpiJobGVK = mpiv2.SchemeGroupVersion.WithKind("MPIJob")

// Kinds implements Adapter.
func (MPIJobAdapter) Kinds() []schema.GroupVersionKind { return []schema.GroupVersionKind{mpiJobGVK} }

// nodes are the DNS names under which the MPI Operator's headless Service makes the pods reachable.
func (MPIJobAdapter) nodes(run Run) []runplan.Node {
	names := NodeNames(run.Suite.Spec.Cluster.NodeCount())
	nodes := make([]runplan.Node, len(names))
	for i, n := range names {
		host := fmt.Sprintf("%s-%s-%d", run.Name, workerName, i-1)
		if i == 0 {
			host = run.Name + "-" + launcherName
		}
		nodes[i] = runplan.Node{Name: n, Address: fmt.Sprintf("%s.%s.%s.svc", host, run.Name, run.Suite.Namespace)}
	}
	return nodes
}

// Build implements Adapter.
func (a MPIJobAdapter) Build(run Run) ([]client.Object, error) {
	shared := ""
	if UsesShared(run.Benchmarks) {
		shared = podSharedDir
	}
	plan := NewPlan(run, a.nodes(run), podLocalDir, shared, nil)
	plan.RootFSDir = podRootFSDir
	plan.KnownHostsFile = runplan.KnownHostsFile
	planJSON, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding the plan of run %s: %w", run.Name, err)
	}
	planMap := &corev1.ConfigMap{
		TypeMeta:   metav1TypeMeta("v1", "ConfigMap"),
		ObjectMeta: objectMeta(run, run.Name+"-plan"),
		Data:       map[string]string{planConfigKey: string(planJSON)},
	}
	objs := []client.Object{planMap}
	if shared != "" {
		objs = append(objs, sharedClaim(run))
	}
	// hostNetwork pods are outside any NetworkPolicy's reach.
	if run.NetworkPolicy && run.Platform.Type != vmbenchv1.PlatformHost {
		objs = append(objs, runNetworkPolicy(run))
	}
	if run.Suite.Spec.Cluster.HoldsDrains() {
		objs = append(objs, runDisruptionBudget(run))
	}
	storage, err := runnerStorage(run.Benchmarks)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", run.Name, err)
	}

	workers := run.Suite.Spec.Cluster.NodeCount() - 1
	job := &mpiv2.MPIJob{
		TypeMeta:   metav1TypeMeta(mpiv2.SchemeGroupVersion.String(), "MPIJob"),
		ObjectMeta: objectMeta(run, run.Name),
		Spec: mpiv2.MPIJobSpec{
			SlotsPerWorker:         ptr.To(run.Suite.Spec.Cluster.CPULimit()),
			RunLauncherAsWorker:    ptr.To(true),
			SSHAuthMountPath:       mpiHome + "/.ssh",
			LauncherCreationPolicy: mpiv2.LauncherCreationPolicyWaitForWorkersReady,
			MPIImplementation:      mpiv2.MPIImplementationOpenMPI,
			RunPolicy: mpiv2.RunPolicy{
				// Running cleans the workers once the launcher ends, but keeps the launcher pod, whose
				// log holds the results until the controller has read them.
				CleanPodPolicy: ptr.To(mpiv2.CleanPodPolicyRunning),
				BackoffLimit:   ptr.To[int32](0),
				// The controller stops the run at its deadline, after it read the launcher's log;
				// the Job controller's own deadline, which deletes the launcher pod and its log,
				// is only a backstop for a controller that is gone.
				ActiveDeadlineSeconds: ptr.To(int64((run.Deadline + DeadlineGrace).Seconds())),
			},
			MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
				mpiv2.MPIReplicaTypeLauncher: {
					Replicas:      ptr.To[int32](1),
					RestartPolicy: mpiv2.RestartPolicyNever,
					Template:      a.podTemplate(run, vmbenchv1.RoleMaster, shared != "", storage),
				},
			},
		},
	}
	if workers > 0 {
		job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker] = &mpiv2.ReplicaSpec{
			Replicas:      ptr.To(workers),
			RestartPolicy: mpiv2.RestartPolicyNever,
			Template:      a.podTemplate(run, vmbenchv1.RoleNode, shared != "", storage),
		}
	}
	return append(objs, job), nil
}

func (MPIJobAdapter) podTemplate(run Run, role string, shared bool, storage podStorage) corev1.PodTemplateSpec {
	spec := run.Suite.Spec
	hostNetwork := run.Platform.Type == vmbenchv1.PlatformHost
	res := resources(spec.Cluster)
	res.Requests[corev1.ResourceEphemeralStorage] = storage.Container
	res.Limits[corev1.ResourceEphemeralStorage] = storage.Container
	container := corev1.Container{
		Name:            workerName,
		Image:           run.Images.Runner,
		ImagePullPolicy: run.Images.PullPolicy,
		Command:         []string{"/usr/sbin/sshd", "-De", "-f", sshdConfig},
		Resources:       res,
		Env:             []corev1.EnvVar{{Name: "LC_ALL", Value: "C"}, {Name: "OPENBLAS_NUM_THREADS", Value: "1"}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: scratchVolume, MountPath: podLocalDir},
			{Name: sshHostVolume, MountPath: runplan.SSHDir, ReadOnly: true},
		},
		SecurityContext: containerSecurity(hostNetwork),
	}
	volumes := []corev1.Volume{
		{Name: scratchVolume, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(storage.Scratch)},
		}},
		sshHostKeyVolume(run),
	}
	if shared {
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: sharedVolume, MountPath: podSharedDir})
		volumes = append(volumes, corev1.Volume{Name: sharedVolume, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: SharedClaimName(run.Name)},
		}})
	}
	if role == vmbenchv1.RoleMaster {
		container.Name = launcherName
		container.Command = []string{"runner", "run", "--plan", runplan.PlanFile}
		container.Env = append(container.Env, corev1.EnvVar{Name: runplan.TokenEnv, ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: run.AuthSecret}, Key: AuthTokenKey},
		}})
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: planVolume, MountPath: "/etc/vmbench", ReadOnly: true})
		volumes = append(volumes, corev1.Volume{Name: planVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: run.Name + "-plan"}},
		}})
	}
	container.Ports = hostPorts(run)
	pod := corev1.PodSpec{
		Containers:                    []corev1.Container{container},
		Volumes:                       volumes,
		NodeSelector:                  spec.Placement.NodeSelectorLabels(),
		Tolerations:                   spec.Placement.PodTolerations(),
		RuntimeClassName:              run.Platform.RuntimeClassName,
		HostNetwork:                   hostNetwork,
		EnableServiceLinks:            ptr.To(false),
		AutomountServiceAccountToken:  ptr.To(false),
		TerminationGracePeriodSeconds: ptr.To[int64](5),
		SecurityContext:               podSecurity(hostNetwork),
	}
	if pod.HostNetwork {
		pod.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1ObjectMetaLabels(withRole(runLabels(run), role)),
		Spec:       pod,
	}
}

// sshHostKeyVolume gives a pod the run's host key, for its sshd, and the known_hosts that pins it,
// for ssh and mpirun (the image's ssh_config names it), from the run's auth Secret, and nothing else
// of it: the token stays in the launcher's environment. The files are root's and readable by the
// pod's fsGroup, mpiuser's group, alone. sshd, running as mpiuser, reads a host key that it does not
// own without asking for mode 0600: OpenSSH checks the mode only of keys the user owns.
func sshHostKeyVolume(run Run) corev1.Volume {
	return corev1.Volume{Name: sshHostVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: run.AuthSecret,
		Items: []corev1.KeyToPath{
			{Key: AuthSSHHostKey, Path: path.Base(podSSHHostKey)},
			{Key: AuthKnownHosts, Path: path.Base(runplan.KnownHostsFile)},
		},
		DefaultMode: ptr.To[int32](0o440),
	}}}
}

// pingGroupRange lets the runner's group, and only it, open ICMP datagram sockets: iputils' ping
// tries one before a raw socket, so it needs no capability. The sysctl is namespaced and on Pod
// Security's list of safe sysctls, which every kubelet allows.
var pingGroupRange = corev1.Sysctl{Name: "net.ipv4.ping_group_range", Value: fmt.Sprintf("%d %d", mpiUserID, mpiUserID)}

// podSecurity is the pod's part of what Pod Security's restricted profile asks for: a non-root
// user (the image's mpiuser, whose sshd listens on 2222) and the runtime's default seccomp profile.
// A hostNetwork pod shares its node's network namespace, in which no pod may set a net.* sysctl:
// Host pods ping as the node's ping_group_range allows, or else through a raw socket (see
// containerSecurity).
func podSecurity(hostNetwork bool) *corev1.PodSecurityContext {
	sc := &corev1.PodSecurityContext{
		RunAsUser:      ptr.To[int64](mpiUserID),
		RunAsGroup:     ptr.To[int64](mpiUserID),
		FSGroup:        ptr.To[int64](mpiUserID),
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if !hostNetwork {
		sc.Sysctls = []corev1.Sysctl{pingGroupRange}
	}
	return sc
}

// containerSecurity drops every capability and, except on Host, privilege escalation. sshd runs as
// mpiuser on an unprivileged port and serves only that user, so it needs neither. Host pods keep
// NET_RAW and privilege escalation for the image's setuid ping, since their node's network may not
// admit ICMP datagram sockets: Host is a privileged platform that only an admin allows.
func containerSecurity(hostNetwork bool) *corev1.SecurityContext {
	if hostNetwork {
		return &corev1.SecurityContext{Capabilities: &corev1.Capabilities{
			Drop: []corev1.Capability{"ALL"},
			Add:  []corev1.Capability{"NET_RAW"},
		}}
	}
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func sharedClaim(run Run) *corev1.PersistentVolumeClaim {
	storage := run.Suite.Spec.SharedStorage
	claim := &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1TypeMeta("v1", "PersistentVolumeClaim"),
		ObjectMeta: objectMeta(run, SharedClaimName(run.Name)),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: ptr.To(storage.StorageClassName),
		},
	}
	if storage.Size != nil {
		claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: *storage.Size}
	}
	return claim
}

// DeadlineGrace is how much later than the controller's deadline a child's own deadline fires.
const DeadlineGrace = time.Hour

// Observe implements Adapter: the MPIJob's own conditions decide. Its Running condition is set once
// the launcher runs, which the MPI Operator starts only when every worker is ready.
func (MPIJobAdapter) Observe(run Run, children Children) Outcome {
	for _, obj := range children.Objects {
		job, ok := obj.(*mpiv2.MPIJob)
		if !ok || job.Name != run.Name {
			continue
		}
		conds := job.Status.Conditions
		if c := findJobCondition(conds, mpiv2.JobSucceeded); c != nil {
			return Outcome{Phase: PhaseSucceeded}
		}
		if c := findJobCondition(conds, mpiv2.JobFailed); c != nil {
			return Outcome{Phase: PhaseFailed, Message: fmt.Sprintf("MPIJob %s failed: %s: %s", job.Name, c.Reason, c.Message)}
		}
		if findJobCondition(conds, mpiv2.JobRunning) != nil {
			return Outcome{Phase: PhaseRunning}
		}
		return Outcome{Phase: PhasePending}
	}
	return Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: mpiJobGVK, Name: run.Name}}
}

func findJobCondition(conds []mpiv2.JobCondition, t mpiv2.JobConditionType) *mpiv2.JobCondition {
	for i := range conds {
		if conds[i].Type == t && conds[i].Status == corev1.ConditionTrue {
			return &conds[i]
		}
	}
	return nil
}

// launcherJobGVK is the kind of the MPI Operator's launcher: a batch Job <MPIJob>-launcher that the
// MPIJob controls and that controls the launcher pod.
var launcherJobGVK = batchv1.SchemeGroupVersion.WithKind("Job")

// LogSource implements Adapter: the launcher pod's runner writes the frames to its stdout.
func (MPIJobAdapter) LogSource(run Run) LogSource {
	return LogSource{
		Owner: ChildRef{GVK: mpiJobGVK, Name: run.Name},
		Via:   &ChildRef{GVK: launcherJobGVK, Name: run.Name + "-" + launcherName},
		Selector: map[string]string{
			vmbenchv1.LabelSuite: run.Suite.Name,
			vmbenchv1.LabelRun:   run.Name,
			vmbenchv1.LabelRole:  vmbenchv1.RoleMaster,
			mpiv2.JobRoleLabel:   mpiLauncherRole,
		},
		Container: launcherName,
	}
}

// hostPorts are the node ports a Host pod listens on, sshd's, every iperf3 server's and those of
// netperf and netcat (netToolPorts), declared so that the scheduler never puts two pods that listen
// on one of them on the same node (two Host runs, or two pods of one run). Other pods have ports of their own and declare none.
func hostPorts(run Run) []corev1.ContainerPort {
	if run.Platform.Type != vmbenchv1.PlatformHost {
		return nil
	}
	ports := []corev1.ContainerPort{{Name: "ssh", ContainerPort: runplan.DefaultSSHPort, HostPort: runplan.DefaultSSHPort, Protocol: corev1.ProtocolTCP}}
	seen := map[int32]bool{runplan.DefaultSSHPort: true}
	for _, b := range run.Benchmarks {
		if b.Iperf3 == nil || seen[b.Iperf3.ServerPort] {
			continue
		}
		seen[b.Iperf3.ServerPort] = true
		for _, proto := range []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP} {
			ports = append(ports, corev1.ContainerPort{ContainerPort: b.Iperf3.ServerPort, HostPort: b.Iperf3.ServerPort, Protocol: proto})
		}
	}
	for _, port := range netToolPorts(run.Benchmarks) {
		if !seen[port] {
			seen[port] = true
			ports = append(ports, corev1.ContainerPort{ContainerPort: port, HostPort: port, Protocol: corev1.ProtocolTCP})
		}
	}
	return ports
}

// netToolPorts are the fixed TCP ports of the netperf and netcat servers that the suite's benchmarks
// start: netserver's control and data ports, and the nc receiver's.
func netToolPorts(benchmarks []vmbenchv1.Benchmark) []int32 {
	var netperf, netcat bool
	for _, b := range benchmarks {
		netperf = netperf || b.Type == vmbenchv1.BenchmarkNetperf
		netcat = netcat || b.Type == vmbenchv1.BenchmarkNetcat
	}
	var ports []int32
	if netperf {
		ports = append(ports, runplan.NetperfControlPort, runplan.NetperfDataPort)
	}
	if netcat {
		ports = append(ports, runplan.NetcatPort)
	}
	return ports
}
