package platform

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// VMNetwork is the KubeVirt interface binding of the VMs on the pod network.
type VMNetwork string

const (
	// VMNetworkBridge gives each guest its pod's IP. It needs the dummy link type in the host kernel.
	VMNetworkBridge VMNetwork = "bridge"
	// VMNetworkPasst gives each guest its pod's IP through KubeVirt's passt binding plugin, where
	// bridge is impossible. Only the listed ports are forwarded.
	VMNetworkPasst VMNetwork = "passt"
	// VMNetworkMasquerade NATs every guest behind 10.0.2.2: ssh and iperf3 work, multi-VM MPI does not.
	VMNetworkMasquerade VMNetwork = "masquerade"
	// VMNetworkAuto picks, when a VM run starts, what the cluster's KubeVirt offers (ClusterVMNetwork).
	VMNetworkAuto VMNetwork = "auto"
)

// Ports that VM runs use, fixed so that passt can forward them. OpenMPI is pinned to the same ranges.
const (
	vmMPIPortMin     = 20000
	vmMPIPortCount   = 16
	vmOOBPortMin     = 20100
	vmOOBPortCount   = 16
	vmLocalDir       = "/var/lib/vmbench"
	vmInterfaceName  = "default"
	vmRootDisk       = "rootdisk"
	vmCloudInitDisk  = "cloudinit"
	guestConsoleLog  = "guest-console-log"
	virtLauncherKey  = "kubevirt.io"
	virtLauncherName = "virt-launcher"
)

// Where the storage targets of VMs are. Local is vmLocalDir, on the root disk too.
const (
	// vmRootFSDir is on the root disk, the containerDisk's copy-on-write overlay.
	vmRootFSDir = "/var/tmp/vmbench"
	// The master exports vmSharedExport of its root disk over NFSv4 and every VM mounts it at
	// vmSharedDir (runner.NFSExportArgv, runner.NFSMountArgv).
	vmSharedExport = "/srv/vmbench-shared"
	vmSharedDir    = "/mnt/vmbench-shared"
)

// VMIAdapter runs VM platforms as Nodes KubeVirt VirtualMachineInstances with a headless Service that
// makes master, node01, ... resolvable, and one cloud-init Secret per VM. The master's runner writes
// its frames to the serial console and powers the VM off when it is done.
type VMIAdapter struct{}

var vmiGVK = kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance")

// Kinds implements Adapter.
func (VMIAdapter) Kinds() []schema.GroupVersionKind { return []schema.GroupVersionKind{vmiGVK} }

func withNode(l map[string]string, node string) map[string]string {
	l[vmbenchv1.LabelNode] = node
	return l
}

// VMIName is the name of a run's VM with the given role name.
func VMIName(run, node string) string { return run + "-" + node }

func (VMIAdapter) nodes(run Run) []runplan.Node {
	names := NodeNames(run.Suite.Spec.Cluster.NodeCount())
	nodes := make([]runplan.Node, len(names))
	for i, n := range names {
		nodes[i] = runplan.Node{Name: n, Address: fmt.Sprintf("%s.%s.%s.svc", n, run.Name, run.Suite.Namespace)}
	}
	return nodes
}

// vmBootFinished is written by cloud-init once its last stage is done.
const vmBootFinished = "/var/lib/cloud/instance/boot-finished"

// vmMPIArgs pin OpenMPI's ports to the ranges that the VMs forward, and have every node's daemon
// report straight to mpirun rather than through another daemon, so that no daemon-to-daemon
// connection has to cross the VMs' port forwarding. OpenMPI shortens host names to their first
// label by default and then starts its daemons with `ssh node01`, which a guest cannot resolve:
// only the headless Service's full names (node01.<run>.<namespace>.svc) are in DNS.
func vmMPIArgs() []string {
	return []string{
		"--mca", "orte_keep_fqdn_hostnames", "1",
		"--mca", "routed", "direct",
		"--mca", "btl_tcp_port_min_v4", fmt.Sprint(vmMPIPortMin),
		"--mca", "btl_tcp_port_range_v4", fmt.Sprint(vmMPIPortCount),
		"--mca", "oob_tcp_dynamic_ipv4_ports", fmt.Sprintf("%d-%d", vmOOBPortMin, vmOOBPortMin+vmOOBPortCount-1),
	}
}

// Build implements Adapter.
func (a VMIAdapter) Build(run Run) ([]client.Object, error) {
	if len(run.Auth.Token) == 0 || len(run.Auth.SSHPublicKey) == 0 || len(run.Auth.SSHPrivateKey) == 0 || len(run.Auth.SSHHostKey) == 0 {
		return nil, fmt.Errorf("run %s: the suite's auth Secret is not loaded", run.Name)
	}
	nodes := a.nodes(run)
	plan := NewPlan(run, nodes, vmLocalDir, "", vmMPIArgs())
	plan.RootFSDir = vmRootFSDir
	if UsesShared(run.Benchmarks) {
		plan.SharedDir, plan.SharedExport = vmSharedDir, vmSharedExport
	}
	plan.NodeReadyCheck = []string{"test", "-e", vmBootFinished}
	plan.KnownHostsFile = runplan.KnownHostsFile
	planJSON, err := json.Marshal(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding the plan of run %s: %w", run.Name, err)
	}
	svc := &corev1.Service{
		TypeMeta:   metav1TypeMeta("v1", "Service"),
		ObjectMeta: objectMeta(run, run.Name),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 map[string]string{vmbenchv1.LabelRun: run.Name},
			PublishNotReadyAddresses: true,
			// A headless Service needs a port to be valid; DNS is all it is for.
			Ports: []corev1.ServicePort{{Name: "ssh", Port: runplan.DefaultSSHPort}},
		},
	}
	objs := []client.Object{svc}
	if run.NetworkPolicy {
		objs = append(objs, runNetworkPolicy(run))
	}
	for i, node := range nodes {
		master := i == 0
		userData, err := cloudInit(run, node.Name, master, planJSON)
		if err != nil {
			return nil, err
		}
		secret := &corev1.Secret{
			TypeMeta:   metav1TypeMeta("v1", "Secret"),
			ObjectMeta: objectMeta(run, SecretName(run, VMIName(run.Name, node.Name)+"-cloudinit")),
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{"userdata": userData},
		}
		role := vmbenchv1.RoleNode
		if master {
			role = vmbenchv1.RoleMaster
		}
		objs = append(objs, secret, a.vmi(run, node.Name, role, secret.Name))
	}
	return objs, nil
}

func (VMIAdapter) vmi(run Run, node, role, cloudInitSecret string) *kubevirtv1.VirtualMachineInstance {
	spec := run.Suite.Spec
	cpuRequest, memoryRequest := spec.Cluster.Requests()
	memory := spec.Cluster.MemoryLimit()
	iface := kubevirtv1.Interface{Name: vmInterfaceName}
	switch RunVMNetwork(run.Platform, run.VMNetwork) {
	case VMNetworkPasst:
		iface.Binding = &kubevirtv1.PluginBinding{Name: string(VMNetworkPasst)}
		iface.Ports = vmPorts(run.Benchmarks)
	case VMNetworkMasquerade:
		iface.Masquerade = &kubevirtv1.InterfaceMasquerade{}
	default:
		iface.Bridge = &kubevirtv1.InterfaceBridge{}
	}
	vmi := &kubevirtv1.VirtualMachineInstance{
		TypeMeta:   metav1TypeMeta(kubevirtv1.SchemeGroupVersion.String(), "VirtualMachineInstance"),
		ObjectMeta: metav1ObjectMetaNamed(run, VMIName(run.Name, node), withNode(withRole(runLabels(run), role), node)),
		Spec: kubevirtv1.VirtualMachineInstanceSpec{
			Hostname:                      node,
			Subdomain:                     run.Name,
			NodeSelector:                  spec.Placement.NodeSelectorLabels(),
			Tolerations:                   spec.Placement.PodTolerations(),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Domain: kubevirtv1.DomainSpec{
				CPU:    &kubevirtv1.CPU{Cores: uint32(spec.Cluster.CPULimit()), Sockets: 1, Threads: 1},
				Memory: &kubevirtv1.Memory{Guest: &memory},
				Resources: kubevirtv1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: cpuRequest, corev1.ResourceMemory: memoryRequest},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: *resourceCPU(spec.Cluster.CPULimit())},
				},
				Devices: kubevirtv1.Devices{
					Disks: []kubevirtv1.Disk{
						{Name: vmRootDisk, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}},
						{Name: vmCloudInitDisk, DiskDevice: kubevirtv1.DiskDevice{Disk: &kubevirtv1.DiskTarget{Bus: kubevirtv1.DiskBusVirtio}}},
					},
					Interfaces: []kubevirtv1.Interface{iface},
					// The results leave through the serial console's log: asked for here, so that a
					// cluster that turns console logging off by default keeps them.
					LogSerialConsole: ptr.To(true),
				},
			},
			Networks: []kubevirtv1.Network{{Name: vmInterfaceName, NetworkSource: kubevirtv1.NetworkSource{Pod: &kubevirtv1.PodNetwork{}}}},
			Volumes: []kubevirtv1.Volume{
				{Name: vmRootDisk, VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
					Image: run.Images.VMDisk, ImagePullPolicy: run.Images.PullPolicy,
				}}},
				{Name: vmCloudInitDisk, VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
					UserDataSecretRef: &corev1.LocalObjectReference{Name: cloudInitSecret},
				}}},
			},
		},
	}
	dedicateCPUs(vmi, run.Platform.DedicatedCPUsOf(spec.Cluster))
	applyVMSettings(vmi, run.Platform)
	return vmi
}

// vmPorts are the guest ports that passt forwards from the pod's address, and the only ones reachable
// from the pod network under passt: sshd's 2222 (not 22), OpenMPI's pinned ranges, every iperf3
// server port of the suite, netserver's and the nc receiver's ports when the suite runs netperf
// or netcat, the probe's report port 12868 for a migration benchmark (the in-guest probe's peer),
// and NFSv4's 2049 when a benchmark uses the Shared target, which the master VM exports.
// With the bridge binding every guest port is on the pod network, and the run's NetworkPolicy is
// what keeps other pods out.
func vmPorts(benchmarks []vmbenchv1.Benchmark) []kubevirtv1.Port {
	ports := []kubevirtv1.Port{{Name: "ssh", Protocol: "TCP", Port: runplan.DefaultSSHPort}}
	for i := int32(0); i < vmMPIPortCount; i++ {
		ports = append(ports, kubevirtv1.Port{Protocol: "TCP", Port: vmMPIPortMin + i})
	}
	for i := int32(0); i < vmOOBPortCount; i++ {
		ports = append(ports, kubevirtv1.Port{Protocol: "TCP", Port: vmOOBPortMin + i})
	}
	seen := map[int32]bool{}
	for _, b := range benchmarks {
		if b.Iperf3 == nil || seen[b.Iperf3.ServerPort] {
			continue
		}
		seen[b.Iperf3.ServerPort] = true
		ports = append(ports, kubevirtv1.Port{Protocol: "TCP", Port: b.Iperf3.ServerPort}, kubevirtv1.Port{Protocol: "UDP", Port: b.Iperf3.ServerPort})
	}
	for _, port := range netToolPorts(benchmarks) {
		if !seen[port] {
			seen[port] = true
			ports = append(ports, kubevirtv1.Port{Protocol: "TCP", Port: port})
		}
	}
	for _, b := range benchmarks {
		if b.Type == vmbenchv1.BenchmarkMigration && !seen[runplan.ProbeReportPort] {
			// The in-guest probe's peer, the run's probe worker pod, reports to it from outside.
			seen[runplan.ProbeReportPort] = true
			ports = append(ports, kubevirtv1.Port{Name: "probe", Protocol: "TCP", Port: runplan.ProbeReportPort})
		}
	}
	if UsesShared(benchmarks) && !seen[runplan.NFSPort] {
		ports = append(ports, kubevirtv1.Port{Name: "nfs", Protocol: "TCP", Port: runplan.NFSPort})
	}
	sort.SliceStable(ports, func(i, j int) bool { return ports[i].Port < ports[j].Port })
	return ports
}

type cloudConfigFile struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	Permissions string `json:"permissions"`
}

type cloudConfig struct {
	Hostname          string            `json:"hostname"`
	DisableRoot       bool              `json:"disable_root"`
	SSHAuthorizedKeys []string          `json:"ssh_authorized_keys"`
	SSHKeys           map[string]string `json:"ssh_keys,omitempty"`
	WriteFiles        []cloudConfigFile `json:"write_files"`
	RunCmd            [][]string        `json:"runcmd"`
}

// vmSSHHostKey is where cloud-init's ssh module writes the ed25519 host key of ssh_keys.
const vmSSHHostKey = "/etc/ssh/ssh_host_ed25519_key"

// vmSSHDConfig serves the run's host key only, and lets root in with a key on the runner's port
// only, where the other nodes' runner and mpirun connect; port 22 stays open for people, and refuses
// root. The file is included before the rest of Debian's sshd_config, and its Match block ends with
// the file.
var vmSSHDConfig = fmt.Sprintf("Port 22\nPort %d\nHostKey %s\nPermitRootLogin no\nMatch LocalPort %d\n  PermitRootLogin prohibit-password\n",
	runplan.DefaultSSHPort, vmSSHHostKey, runplan.DefaultSSHPort)

// vmSSHConfig is root's ssh client configuration, which the runner's ssh and mpirun's use: the
// runner's port, and the run's host key, pinned by the known_hosts, as the only key any node may
// present.
var vmSSHConfig = fmt.Sprintf("Host *\n  Port %d\n  StrictHostKeyChecking yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  LogLevel ERROR\n",
	runplan.DefaultSSHPort, runplan.KnownHostsFile)

// cloudInit is the user data of one VM. Every VM accepts the run's key for root on port 2222 (the
// port the pods use too, and one passt forwards) and presents the run's host key, which cloud-init's
// ssh module installs in place of generated ones; every VM's ssh pins that key. Only the master holds
// the private key, the plan and the frame token, and runs the runner, which writes to the serial
// console and then powers off.
func cloudInit(run Run, node string, master bool, planJSON []byte) ([]byte, error) {
	cfg := cloudConfig{
		Hostname:          node,
		SSHAuthorizedKeys: []string{strings.TrimSpace(string(run.Auth.SSHPublicKey))},
		SSHKeys: map[string]string{
			"ed25519_private": string(run.Auth.SSHHostKey),
			"ed25519_public":  string(run.Auth.SSHHostPublicKey),
		},
		WriteFiles: []cloudConfigFile{
			{Path: "/etc/ssh/sshd_config.d/vmbench.conf", Permissions: "0644", Content: vmSSHDConfig},
			{Path: runplan.KnownHostsFile, Permissions: "0644", Content: string(run.Auth.KnownHosts)},
			{Path: "/root/.ssh/config", Permissions: "0600", Content: vmSSHConfig},
		},
		RunCmd: [][]string{{"systemctl", "restart", "ssh"}},
	}
	if master {
		cfg.WriteFiles = append(cfg.WriteFiles,
			cloudConfigFile{Path: "/root/.ssh/id_ed25519", Permissions: "0600", Content: string(run.Auth.SSHPrivateKey)},
			cloudConfigFile{Path: runplan.PlanFile, Permissions: "0644", Content: string(planJSON)},
			cloudConfigFile{Path: runplan.TokenFile, Permissions: "0600", Content: string(run.Auth.Token)},
		)
		cfg.RunCmd = append(cfg.RunCmd,
			[]string{"sh", "-c", "runner run --plan " + runplan.PlanFile + " --output /dev/ttyS0 --repeat 2 2>/var/log/vmbench-runner.log; poweroff"})
	}
	body, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("encoding the cloud-init of %s: %w", node, err)
	}
	return append([]byte("#cloud-config\n"), body...), nil
}

// Observe implements Adapter. The master powers off when its runner is done, so its VMI Succeeds; a
// failed VMI anywhere fails the run, as a node that is gone fails every MPI job. The run is up once
// every VM runs.
func (VMIAdapter) Observe(run Run, children Children) Outcome {
	masterName := VMIName(run.Name, vmbenchv1.RoleMaster)
	var master *kubevirtv1.VirtualMachineInstance
	seen := map[string]bool{}
	running := 0
	for _, obj := range children.Objects {
		vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance)
		if !ok {
			continue
		}
		seen[vmi.Name] = true
		if vmi.Status.Phase == kubevirtv1.Failed {
			return Outcome{Phase: PhaseFailed, Message: fmt.Sprintf("VMI %s failed%s", vmi.Name, vmiReason(vmi))}
		}
		if vmi.Name == masterName {
			master = vmi
		}
		if vmi.Status.Phase == kubevirtv1.Running {
			running++
		}
	}
	if master != nil && master.Status.Phase == kubevirtv1.Succeeded {
		return Outcome{Phase: PhaseSucceeded}
	}
	nodes := NodeNames(run.Suite.Spec.Cluster.NodeCount())
	for _, n := range nodes {
		if !seen[VMIName(run.Name, n)] {
			return Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: vmiGVK, Name: VMIName(run.Name, n)}}
		}
	}
	if running == len(nodes) {
		return Outcome{Phase: PhaseRunning}
	}
	return Outcome{Phase: PhasePending}
}

func vmiReason(vmi *kubevirtv1.VirtualMachineInstance) string {
	for _, c := range vmi.Status.Conditions {
		if c.Status == corev1.ConditionFalse && c.Message != "" {
			return ": " + c.Message
		}
	}
	return ""
}

// LogSource implements Adapter: the master's serial console, which KubeVirt's guest-console-log
// container copies into the virt-launcher pod's log. KubeVirt copies the VMI's labels to that pod,
// and makes the VMI its controller.
func (VMIAdapter) LogSource(run Run) LogSource {
	return LogSource{
		Owner: ChildRef{GVK: vmiGVK, Name: VMIName(run.Name, vmbenchv1.RoleMaster)},
		Selector: map[string]string{
			vmbenchv1.LabelSuite: run.Suite.Name,
			vmbenchv1.LabelRun:   run.Name,
			vmbenchv1.LabelRole:  vmbenchv1.RoleMaster,
			virtLauncherKey:      virtLauncherName,
		},
		Container: guestConsoleLog,
	}
}
