package platform

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

var vmPlatform = vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM}

// vmRun is run 1 of the VM platform with the given benchmarks (default: sysbench-cpu and iperf3).
func vmRun(benchmarks ...vmbenchv1.Benchmark) Run {
	return testRun(vmPlatform, benchmarks...)
}

// builtVMs is what VMIAdapter.Build returned, by node name.
type builtVMs struct {
	service *corev1.Service
	secrets map[string]*corev1.Secret
	vmis    map[string]*kubevirtv1.VirtualMachineInstance
}

func buildVMs(t *testing.T, run Run) builtVMs {
	t.Helper()
	objs, err := VMIAdapter{}.Build(run)
	if err != nil {
		t.Fatalf("Build() error: %v", err)
	}
	out := builtVMs{secrets: map[string]*corev1.Secret{}, vmis: map[string]*kubevirtv1.VirtualMachineInstance{}}
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Service:
			out.service = o
		case *corev1.Secret:
			out.secrets[strings.TrimSuffix(strings.TrimPrefix(o.Name, run.Name+"-"), "-cloudinit")] = o
		case *kubevirtv1.VirtualMachineInstance:
			out.vmis[o.Labels[vmbenchv1.LabelNode]] = o
		default:
			t.Fatalf("Build() returned an unexpected %T", o)
		}
	}
	return out
}

func TestVMIBuildObjects(t *testing.T) {
	tests := []struct {
		nodes int32
		want  []objectID
	}{
		{nodes: 1, want: []objectID{{"Service", "demo-vm-1", "bench"},
			{"Secret", "demo-vm-1-master-cloudinit", "bench"}, {"VirtualMachineInstance", "demo-vm-1-master", "bench"}}},
		{nodes: 3, want: []objectID{{"Service", "demo-vm-1", "bench"},
			{"Secret", "demo-vm-1-master-cloudinit", "bench"}, {"VirtualMachineInstance", "demo-vm-1-master", "bench"},
			{"Secret", "demo-vm-1-node01-cloudinit", "bench"}, {"VirtualMachineInstance", "demo-vm-1-node01", "bench"},
			{"Secret", "demo-vm-1-node02-cloudinit", "bench"}, {"VirtualMachineInstance", "demo-vm-1-node02", "bench"}}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d nodes", tt.nodes), func(t *testing.T) {
			run := vmRun()
			run.Suite.Spec.Cluster.Nodes = tt.nodes
			objs, err := VMIAdapter{}.Build(run)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(objs)); diff != "" {
				t.Errorf("objects mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVMIBuildService(t *testing.T) {
	svc := buildVMs(t, vmRun()).service
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP = %q, want None (headless)", svc.Spec.ClusterIP)
	}
	if !svc.Spec.PublishNotReadyAddresses {
		t.Error("publishNotReadyAddresses is false: nodes could not resolve each other before they are ready")
	}
	if diff := cmp.Diff(map[string]string{vmbenchv1.LabelRun: "demo-vm-1"}, svc.Spec.Selector); diff != "" {
		t.Errorf("selector mismatch (-want +got):\n%s", diff)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 2222 {
		t.Errorf("ports = %+v, want one port 2222", svc.Spec.Ports)
	}
}

func TestVMIBuildVMs(t *testing.T) {
	tests := []struct {
		name         string
		shape        vmbenchv1.ClusterShape
		wantCores    uint32
		wantGuest    string
		wantRequests map[corev1.ResourceName]string
		wantCPULimit string
	}{
		{
			name:      "requests equal limits",
			shape:     vmbenchv1.ClusterShape{Nodes: 3, CPU: 4, Memory: quantity("8Gi")},
			wantCores: 4, wantGuest: "8Gi", wantCPULimit: "4",
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "4", corev1.ResourceMemory: "8Gi"},
		},
		{
			name:      "defaults: 2 cores of 2Gi",
			shape:     vmbenchv1.ClusterShape{},
			wantCores: 2, wantGuest: "2Gi", wantCPULimit: "2",
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "2", corev1.ResourceMemory: "2Gi"},
		},
		{
			name:      "defaulted cpu with a lowered cpu request",
			shape:     vmbenchv1.ClusterShape{Nodes: 3, CPURequest: quantity("1")},
			wantCores: 2, wantGuest: "2Gi", wantCPULimit: "2",
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "1", corev1.ResourceMemory: "2Gi"},
		},
		{
			name:      "lowered cpu request",
			shape:     vmbenchv1.ClusterShape{Nodes: 3, CPU: 2, Memory: quantity("2Gi"), CPURequest: quantity("500m")},
			wantCores: 2, wantGuest: "2Gi", wantCPULimit: "2",
			wantRequests: map[corev1.ResourceName]string{corev1.ResourceCPU: "500m", corev1.ResourceMemory: "2Gi"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := vmRun()
			run.Suite.Spec.Cluster = tt.shape
			vms := buildVMs(t, run)
			if len(vms.vmis) != 3 {
				t.Fatalf("got VMs %v, want master, node01 and node02", len(vms.vmis))
			}
			for node, vmi := range vms.vmis {
				role := vmbenchv1.RoleNode
				if node == "master" {
					role = vmbenchv1.RoleMaster
				}
				wantLabels := map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-vm-1",
					vmbenchv1.LabelPlatform: "vm", vmbenchv1.LabelRole: role, vmbenchv1.LabelNode: node}
				if diff := cmp.Diff(wantLabels, vmi.Labels); diff != "" {
					t.Errorf("%s labels mismatch (-want +got):\n%s", node, diff)
				}
				spec := vmi.Spec
				if spec.Hostname != node || spec.Subdomain != "demo-vm-1" {
					t.Errorf("%s hostname.subdomain = %s.%s, want %s.demo-vm-1", node, spec.Hostname, spec.Subdomain, node)
				}
				if cpu := spec.Domain.CPU; cpu == nil || cpu.Cores != tt.wantCores || cpu.Sockets != 1 || cpu.Threads != 1 {
					t.Errorf("%s cpu = %+v, want %d cores, 1 socket, 1 thread", node, cpu, tt.wantCores)
				}
				if m := spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.String() != tt.wantGuest {
					t.Errorf("%s guest memory = %+v, want %s", node, m, tt.wantGuest)
				}
				if diff := cmp.Diff(tt.wantRequests, quantityStrings(spec.Domain.Resources.Requests)); diff != "" {
					t.Errorf("%s requests mismatch (-want +got):\n%s", node, diff)
				}
				if got := spec.Domain.Resources.Limits[corev1.ResourceCPU]; got.String() != tt.wantCPULimit {
					t.Errorf("%s cpu limit = %s, want %s", node, got.String(), tt.wantCPULimit)
				}
				if diff := cmp.Diff(map[string]string{"vmbench.io/pool": "bench"}, spec.NodeSelector); diff != "" {
					t.Errorf("%s nodeSelector mismatch (-want +got):\n%s", node, diff)
				}
				if diff := cmp.Diff(testPodTolerations, spec.Tolerations); diff != "" {
					t.Errorf("%s tolerations mismatch (-want +got):\n%s", node, diff)
				}
				wantVolumes := []kubevirtv1.Volume{
					{Name: vmRootDisk, VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{
						Image: "disk:v1", ImagePullPolicy: corev1.PullIfNotPresent}}},
					{Name: vmCloudInitDisk, VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
						UserDataSecretRef: &corev1.LocalObjectReference{Name: "demo-vm-1-" + node + "-cloudinit"}}}},
				}
				if diff := cmp.Diff(wantVolumes, spec.Volumes); diff != "" {
					t.Errorf("%s volumes mismatch (-want +got):\n%s", node, diff)
				}
				if len(spec.Networks) != 1 || spec.Networks[0].Pod == nil {
					t.Errorf("%s networks = %+v, want the pod network", node, spec.Networks)
				}
			}
		})
	}
}

func TestVMIBuildNetwork(t *testing.T) {
	tests := []struct {
		name           string
		network        VMNetwork
		wantBinding    *kubevirtv1.PluginBinding
		wantBridge     bool
		wantMasquerade bool
		wantPorts      bool
	}{
		{name: "passt", network: VMNetworkPasst, wantBinding: &kubevirtv1.PluginBinding{Name: "passt"}, wantPorts: true},
		{name: "bridge", network: VMNetworkBridge, wantBridge: true},
		{name: "masquerade", network: VMNetworkMasquerade, wantMasquerade: true},
		{name: "bridge when unset", network: "", wantBridge: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := vmRun()
			run.VMNetwork = tt.network
			for node, vmi := range buildVMs(t, run).vmis {
				ifaces := vmi.Spec.Domain.Devices.Interfaces
				if len(ifaces) != 1 || ifaces[0].Name != vmi.Spec.Networks[0].Name {
					t.Fatalf("%s interfaces = %+v, want one on network %q", node, ifaces, vmi.Spec.Networks[0].Name)
				}
				iface := ifaces[0]
				if diff := cmp.Diff(tt.wantBinding, iface.Binding); diff != "" {
					t.Errorf("%s binding mismatch (-want +got):\n%s", node, diff)
				}
				if (iface.Bridge != nil) != tt.wantBridge || (iface.Masquerade != nil) != tt.wantMasquerade {
					t.Errorf("%s bridge, masquerade = %t, %t; want %t, %t", node, iface.Bridge != nil, iface.Masquerade != nil,
						tt.wantBridge, tt.wantMasquerade)
				}
				if (len(iface.Ports) > 0) != tt.wantPorts {
					t.Errorf("%s has %d forwarded ports, want ports: %t", node, len(iface.Ports), tt.wantPorts)
				}
			}
		})
	}
}

func TestVMPorts(t *testing.T) {
	iperf := func(name string, port int32) vmbenchv1.Benchmark {
		return vmbenchv1.Benchmark{Name: name, Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{ServerPort: port}}
	}
	tests := []struct {
		name       string
		benchmarks []vmbenchv1.Benchmark
		wantIperf  []int32
		wantTCP    []int32
		wantNFS    bool
	}{
		{name: "no iperf3", benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}},
		{name: "default server port", benchmarks: []vmbenchv1.Benchmark{{Name: "net", Type: vmbenchv1.BenchmarkIperf3}}, wantIperf: []int32{5201}},
		{name: "each server port once", benchmarks: []vmbenchv1.Benchmark{iperf("a", 6000), iperf("b", 5201), iperf("c", 6000)},
			wantIperf: []int32{5201, 6000}},
		{name: "netperf and netcat", wantTCP: []int32{12865, 12866, 12867}, benchmarks: []vmbenchv1.Benchmark{
			{Name: "rr", Type: vmbenchv1.BenchmarkNetperf}, {Name: "stream", Type: vmbenchv1.BenchmarkNetperf}, {Name: "nc", Type: vmbenchv1.BenchmarkNetcat}}},
		{name: "netcat on an iperf3 server port", wantIperf: []int32{12867}, benchmarks: []vmbenchv1.Benchmark{
			iperf("net", 12867), {Name: "nc", Type: vmbenchv1.BenchmarkNetcat}}},
		{name: "Shared target: NFSv4 from the master", wantNFS: true, benchmarks: []vmbenchv1.Benchmark{
			{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "Shared"}}}}},
		{name: "Local and RootFS only: no NFS", benchmarks: []vmbenchv1.Benchmark{
			{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageRootFS}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := vmRun(tt.benchmarks...)
			want := map[kubevirtv1.Port]int{{Name: "ssh", Protocol: "TCP", Port: 2222}: 1}
			for p := int32(20000); p < 20016; p++ {
				want[kubevirtv1.Port{Protocol: "TCP", Port: p}] = 1
			}
			for p := int32(20100); p < 20116; p++ {
				want[kubevirtv1.Port{Protocol: "TCP", Port: p}] = 1
			}
			for _, p := range tt.wantTCP {
				want[kubevirtv1.Port{Protocol: "TCP", Port: p}] = 1
			}
			for _, p := range tt.wantIperf {
				want[kubevirtv1.Port{Protocol: "TCP", Port: p}] = 1
				want[kubevirtv1.Port{Protocol: "UDP", Port: p}] = 1
			}
			if tt.wantNFS {
				want[kubevirtv1.Port{Name: "nfs", Protocol: "TCP", Port: 2049}] = 1
			}
			for node, vmi := range buildVMs(t, run).vmis {
				ports := vmi.Spec.Domain.Devices.Interfaces[0].Ports
				got := map[kubevirtv1.Port]int{}
				for i, p := range ports {
					got[p]++
					if i > 0 && ports[i-1].Port > p.Port {
						t.Errorf("%s ports are not sorted: %d before %d", node, ports[i-1].Port, p.Port)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s forwarded ports mismatch (-want +got):\n%s", node, diff)
				}
			}
			// The forwarded ranges are the ones OpenMPI is pinned to.
			wantArgs := []string{"--mca", "orte_keep_fqdn_hostnames", "1", "--mca", "routed", "direct", "--mca", "btl_tcp_port_min_v4", "20000", "--mca", "btl_tcp_port_range_v4", "16",
				"--mca", "oob_tcp_dynamic_ipv4_ports", "20100-20115"}
			if diff := cmp.Diff(wantArgs, vmMPIArgs()); diff != "" {
				t.Errorf("MPI args mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func decodeCloudInit(t *testing.T, s *corev1.Secret) (cloudConfig, []byte) {
	t.Helper()
	raw := s.Data["userdata"]
	body, ok := bytes.CutPrefix(raw, []byte("#cloud-config\n"))
	if !ok {
		t.Fatalf("%s user data does not start with #cloud-config: %.40q", s.Name, raw)
	}
	var cfg cloudConfig
	if err := yaml.UnmarshalStrict(body, &cfg); err != nil {
		t.Fatalf("%s user data is not a cloud-config: %v", s.Name, err)
	}
	return cfg, raw
}

func TestVMICloudInit(t *testing.T) {
	run := vmRun()
	vms := buildVMs(t, run)
	if len(vms.secrets) != 3 {
		t.Fatalf("got %d cloud-init Secrets, want 3", len(vms.secrets))
	}
	for node, secret := range vms.secrets {
		cfg, raw := decodeCloudInit(t, secret)
		if cfg.Hostname != node {
			t.Errorf("%s hostname = %q", node, cfg.Hostname)
		}
		if diff := cmp.Diff([]string{"ssh-ed25519 AAAA vmbench"}, cfg.SSHAuthorizedKeys); diff != "" {
			t.Errorf("%s authorized keys mismatch (-want +got):\n%s", node, diff)
		}
		files := map[string]string{}
		for _, f := range cfg.WriteFiles {
			files[f.Path] = f.Content
		}
		if !strings.Contains(files["/etc/ssh/sshd_config.d/vmbench.conf"], "Port 2222") {
			t.Errorf("%s sshd does not listen on 2222: %q", node, files["/etc/ssh/sshd_config.d/vmbench.conf"])
		}
		runner := false
		for _, cmd := range cfg.RunCmd {
			runner = runner || strings.Contains(strings.Join(cmd, " "), "runner run")
		}

		if node != "master" {
			for _, path := range []string{"/root/.ssh/id_ed25519", runplan.PlanFile, runplan.TokenFile} {
				if _, ok := files[path]; ok {
					t.Errorf("%s gets %s; only the master may", node, path)
				}
			}
			if bytes.Contains(raw, run.Auth.SSHPrivateKey) || bytes.Contains(raw, run.Auth.Token) {
				t.Errorf("%s user data holds the private key or the token", node)
			}
			if runner {
				t.Errorf("%s runs the runner; only the master may", node)
			}
			continue
		}
		if files["/root/.ssh/id_ed25519"] != string(run.Auth.SSHPrivateKey) {
			t.Errorf("master private key = %q", files["/root/.ssh/id_ed25519"])
		}
		if files[runplan.TokenFile] != string(run.Auth.Token) {
			t.Errorf("master token = %q", files[runplan.TokenFile])
		}
		if !runner {
			t.Errorf("master does not run the runner: %v", cfg.RunCmd)
		}
		wantPlan := runplan.Plan{
			Suite: "demo", Namespace: "bench", Run: "demo-vm-1", Platform: "vm", PlatformType: vmbenchv1.PlatformVM, Repetition: 1,
			Nodes: []runplan.Node{
				{Name: "master", Address: "master.demo-vm-1.bench.svc"},
				{Name: "node01", Address: "node01.demo-vm-1.bench.svc"},
				{Name: "node02", Address: "node02.demo-vm-1.bench.svc"},
			},
			CPU: 2, MemoryBytes: 2 << 30, LocalDir: vmLocalDir, RootFSDir: "/var/tmp/vmbench", SSHPort: 2222, KnownHostsFile: "/etc/ssh/vmbench/known_hosts",
			MPIArgs: vmMPIArgs(), Benchmarks: run.Benchmarks,
			NodeReadyCheck: []string{"test", "-e", "/var/lib/cloud/instance/boot-finished"},
		}
		if diff := cmp.Diff(wantPlan, decodePlan(t, files[runplan.PlanFile])); diff != "" {
			t.Errorf("master plan mismatch (-want +got):\n%s", diff)
		}
	}
}

// The Shared target of VMs is the master's NFS export: the master's plan says where to export and
// mount it, and no claim is made for it (buildVMs refuses any object but Services, Secrets and VMIs).
func TestVMISharedStorage(t *testing.T) {
	planOf := func(run Run) runplan.Plan {
		t.Helper()
		cfg, _ := decodeCloudInit(t, buildVMs(t, run).secrets["master"])
		for _, f := range cfg.WriteFiles {
			if f.Path == runplan.PlanFile {
				return decodePlan(t, f.Content)
			}
		}
		t.Fatal("the master's cloud-init writes no plan")
		return runplan.Plan{}
	}
	shared := vmRun(vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "RootFS", "Shared"}}})
	shared.Suite.Spec.SharedStorage = nil
	plan := planOf(shared)
	if plan.SharedDir != "/mnt/vmbench-shared" || plan.SharedExport != "/srv/vmbench-shared" || plan.RootFSDir != "/var/tmp/vmbench" || plan.LocalDir != "/var/lib/vmbench" {
		t.Errorf("plan with the Shared target: sharedDir %q, sharedExport %q, rootFSDir %q, localDir %q", plan.SharedDir, plan.SharedExport, plan.RootFSDir, plan.LocalDir)
	}
	plan = planOf(vmRun(vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "RootFS"}}}))
	if plan.SharedDir != "" || plan.SharedExport != "" {
		t.Errorf("plan without the Shared target: sharedDir %q, sharedExport %q, want neither", plan.SharedDir, plan.SharedExport)
	}
}

// sshdSettings reads an sshd_config fragment as sshd does for a connection to port: the ports it
// listens on, its host keys, and PermitRootLogin, where outside Match blocks the first value wins
// and a matching "Match LocalPort" block overrides it (sshd_config(5)). Only what vmbench writes is
// understood.
func sshdSettings(t *testing.T, conf string, port int) (ports []int, hostKeys []string, permitRoot string) {
	t.Helper()
	global, matched := "", ""
	inMatch, matches := false, false
	for _, line := range strings.Split(conf, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToLower(fields[0]) {
		case "port":
			if inMatch {
				t.Fatalf("Port inside a Match block: %q", conf)
			}
			var p int
			if _, err := fmt.Sscan(fields[1], &p); err != nil {
				t.Fatalf("port of %q: %v", line, err)
			}
			ports = append(ports, p)
		case "hostkey":
			if inMatch {
				t.Fatalf("HostKey inside a Match block: %q", conf)
			}
			hostKeys = append(hostKeys, fields[1])
		case "match":
			if len(fields) != 3 || !strings.EqualFold(fields[1], "LocalPort") {
				t.Fatalf("unexpected Match line %q", line)
			}
			inMatch, matches = true, fields[2] == fmt.Sprint(port)
		case "permitrootlogin":
			switch {
			case !inMatch && global == "":
				global = fields[1]
			case inMatch && matches && matched == "":
				matched = fields[1]
			}
		default:
			t.Fatalf("unexpected sshd line %q", line)
		}
	}
	if matched != "" {
		return ports, hostKeys, matched
	}
	if global == "" {
		return ports, hostKeys, "prohibit-password" // sshd's default
	}
	return ports, hostKeys, global
}

// In VMs root logs in with the key on the runner's port only, which the nodes use between them;
// port 22 refuses root.
func TestVMSSHDLetsRootInOnTheRunnersPortOnly(t *testing.T) {
	vms := buildVMs(t, vmRun())
	for node, secret := range vms.secrets {
		cfg, _ := decodeCloudInit(t, secret)
		files := map[string]string{}
		for _, f := range cfg.WriteFiles {
			files[f.Path] = f.Content
		}
		conf := files["/etc/ssh/sshd_config.d/vmbench.conf"]
		ports, hostKeys, root22 := sshdSettings(t, conf, 22)
		_, _, rootRunner := sshdSettings(t, conf, runplan.DefaultSSHPort)
		if diff := cmp.Diff([]string{vmSSHHostKey}, hostKeys); diff != "" {
			t.Errorf("%s sshd host keys mismatch (-want +got):\n%s", node, diff)
		}
		if diff := cmp.Diff([]int{22, runplan.DefaultSSHPort}, ports); diff != "" {
			t.Errorf("%s sshd ports mismatch (-want +got):\n%s", node, diff)
		}
		if root22 != "no" {
			t.Errorf("%s: PermitRootLogin on port 22 = %s, want no", node, root22)
		}
		if rootRunner != "prohibit-password" {
			t.Errorf("%s: PermitRootLogin on port %d = %s, want prohibit-password (keys only)", node, runplan.DefaultSSHPort, rootRunner)
		}
		if !strings.Contains(files["/root/.ssh/config"], fmt.Sprintf("Port %d\n", runplan.DefaultSSHPort)) {
			t.Errorf("%s: root's ssh does not connect to port %d: %q", node, runplan.DefaultSSHPort, files["/root/.ssh/config"])
		}
	}
}

func TestVMIBuildNeedsAuth(t *testing.T) {
	tests := []struct {
		name string
		auth Auth
	}{
		{name: "empty", auth: Auth{}},
		{name: "no token", auth: Auth{SSHPrivateKey: []byte("k"), SSHPublicKey: []byte("p")}},
		{name: "no public key", auth: Auth{Token: []byte("t"), SSHPrivateKey: []byte("k")}},
		{name: "no private key", auth: Auth{Token: []byte("t"), SSHPublicKey: []byte("p")}},
		{name: "empty private key", auth: Auth{Token: []byte("t"), SSHPrivateKey: []byte{}, SSHPublicKey: []byte("p")}},
		{name: "no host key", auth: Auth{Token: []byte("t"), SSHPrivateKey: []byte("k"), SSHPublicKey: []byte("p")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := vmRun()
			run.Auth = tt.auth
			objs, err := VMIAdapter{}.Build(run)
			if err == nil {
				t.Fatalf("Build() = %v, want an error", ids(objs))
			}
			if !strings.Contains(err.Error(), "demo-vm-1") || !strings.Contains(err.Error(), "auth Secret") {
				t.Errorf("Build() error = %q, want it to name the run and the auth Secret", err)
			}
		})
	}
}

func TestVMIBuildIsDeterministic(t *testing.T) {
	for _, network := range []VMNetwork{VMNetworkPasst, VMNetworkBridge, VMNetworkMasquerade} {
		run := vmRun(vmbenchv1.Benchmark{Name: "a", Type: vmbenchv1.BenchmarkIperf3, Iperf3: &vmbenchv1.Iperf3Params{ServerPort: 6000}},
			vmbenchv1.Benchmark{Name: "b", Type: vmbenchv1.BenchmarkIperf3},
			vmbenchv1.Benchmark{Name: "c", Type: vmbenchv1.BenchmarkHPCC})
		run.VMNetwork = network
		first, err := VMIAdapter{}.Build(run)
		if err != nil {
			t.Fatal(err)
		}
		second, err := VMIAdapter{}.Build(run)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("%s: two builds differ (-first +second):\n%s", network, diff)
		}
	}
}

func vmi(name string, phase kubevirtv1.VirtualMachineInstancePhase, conds ...kubevirtv1.VirtualMachineInstanceCondition) *kubevirtv1.VirtualMachineInstance {
	return &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status:     kubevirtv1.VirtualMachineInstanceStatus{Phase: phase, Conditions: conds},
	}
}

func TestVMIObserve(t *testing.T) {
	notReady := kubevirtv1.VirtualMachineInstanceCondition{Type: kubevirtv1.VirtualMachineInstanceReady,
		Status: corev1.ConditionFalse, Message: "guest crashed"}
	tests := []struct {
		name string
		objs []client.Object
		want Outcome
	}{
		{name: "nothing", want: Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: vmiGVK, Name: "demo-vm-1-master"}}},
		{name: "scheduling", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Scheduling), vmi("demo-vm-1-node01", kubevirtv1.Pending),
			vmi("demo-vm-1-node02", kubevirtv1.Pending)}, want: Outcome{Phase: PhasePending}},
		{name: "running", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Running), vmi("demo-vm-1-node01", kubevirtv1.Running),
			vmi("demo-vm-1-node02", kubevirtv1.Running)}, want: Outcome{Phase: PhaseRunning}},
		{name: "up only when every VM runs", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Running), vmi("demo-vm-1-node01", kubevirtv1.Scheduled),
			vmi("demo-vm-1-node02", kubevirtv1.Running)}, want: Outcome{Phase: PhasePending}},
		{name: "a node running while the master still schedules",
			objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Scheduling), vmi("demo-vm-1-node01", kubevirtv1.Running), vmi("demo-vm-1-node02", kubevirtv1.Running)},
			want: Outcome{Phase: PhasePending}},
		{name: "no master", objs: []client.Object{vmi("demo-vm-1-node01", kubevirtv1.Running), vmi("demo-vm-1-node02", kubevirtv1.Running)},
			want: Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: vmiGVK, Name: "demo-vm-1-master"}}},
		{name: "a node VM missing", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Running), vmi("demo-vm-1-node01", kubevirtv1.Running)},
			want: Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: vmiGVK, Name: "demo-vm-1-node02"}}},
		{name: "master succeeded", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Succeeded), vmi("demo-vm-1-node01", kubevirtv1.Running)},
			want: Outcome{Phase: PhaseSucceeded}},
		{name: "a node that succeeds is not the master", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Running),
			vmi("demo-vm-1-node01", kubevirtv1.Succeeded), vmi("demo-vm-1-node02", kubevirtv1.Running)}, want: Outcome{Phase: PhasePending}},
		{name: "any failed VM fails the run with its name and reason",
			objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Succeeded), vmi("demo-vm-1-node02", kubevirtv1.Failed, notReady)},
			want: Outcome{Phase: PhaseFailed, Message: "VMI demo-vm-1-node02 failed: guest crashed"}},
		{name: "failed without a reason", objs: []client.Object{vmi("demo-vm-1-master", kubevirtv1.Failed)},
			want: Outcome{Phase: PhaseFailed, Message: "VMI demo-vm-1-master failed"}},
		{name: "other objects are ignored",
			objs: []client.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "demo-vm-1-master"}},
				&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "demo-vm-1-master-cloudinit"}}},
			want: Outcome{Phase: PhasePending, Gone: &ChildRef{GVK: vmiGVK, Name: "demo-vm-1-master"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, VMIAdapter{}.Observe(vmRun(), Children{Objects: tt.objs})); diff != "" {
				t.Errorf("Observe() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVMILogSource(t *testing.T) {
	run := vmRun()
	src := VMIAdapter{}.LogSource(run)
	want := LogSource{Selector: labels.Set{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-vm-1", vmbenchv1.LabelRole: vmbenchv1.RoleMaster,
		"kubevirt.io": "virt-launcher"}, Container: "guest-console-log",
		Owner: ChildRef{GVK: kubevirtv1.SchemeGroupVersion.WithKind("VirtualMachineInstance"), Name: "demo-vm-1-master"}}
	if diff := cmp.Diff(want, src); diff != "" {
		t.Errorf("LogSource() mismatch (-want +got):\n%s", diff)
	}
	// KubeVirt copies a VMI's labels to its virt-launcher pod and adds kubevirt.io=virt-launcher: the
	// selector must find the master's pod and no other.
	for node, v := range buildVMs(t, run).vmis {
		pod := labels.Set{"kubevirt.io": "virt-launcher"}
		for k, val := range v.Labels {
			pod[k] = val
		}
		if got := src.Selector.AsSelector().Matches(pod); got != (node == "master") {
			t.Errorf("selector matches the pod of %s: %t", node, got)
		}
	}
}

func TestVMIName(t *testing.T) {
	if got := VMIName("demo-vm-1", "node01"); got != "demo-vm-1-node01" {
		t.Errorf("VMIName() = %q, want demo-vm-1-node01", got)
	}
}
