package platform

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runner"
	"github.com/vmbench/vmbench/internal/runplan"
)

// Every sshd of a run presents the run's own host key, which the controller derives, and every ssh
// client of the run (the runner's, mpirun's) accepts that key and no other.

// The host key is a function of the master key, the suite's UID and the run's name: a restarted
// manager derives the same one, and no two runs or suites share one.
func TestRunHostKeyIsDerivedPerRun(t *testing.T) {
	a := mustRunAuth(t, testMaster, "uid-1", "demo-container-1", false)
	if !bytes.Equal(a.SSHHostKey, mustRunAuth(t, testMaster, "uid-1", "demo-container-1", true).SSHHostKey) {
		t.Error("the host key depends on whether the run gets a client key")
	}
	if diff := cmp.Diff(a, mustRunAuth(t, testMaster, "uid-1", "demo-container-1", false)); diff != "" {
		t.Errorf("the same inputs give other keys:\n%s", diff)
	}
	for name, b := range map[string]Auth{
		"another run":       mustRunAuth(t, testMaster, "uid-1", "demo-container-2", false),
		"another suite UID": mustRunAuth(t, testMaster, "uid-2", "demo-container-1", false),
	} {
		if bytes.Equal(a.SSHHostKey, b.SSHHostKey) || bytes.Equal(a.SSHHostPublicKey, b.SSHHostPublicKey) || bytes.Equal(a.KnownHosts, b.KnownHosts) {
			t.Errorf("%s shares the host key", name)
		}
	}
	vm := mustRunAuth(t, testMaster, "uid-1", "demo-vm-1", true)
	if bytes.Equal(vm.SSHHostKey, vm.SSHPrivateKey) {
		t.Error("the host key is the client key")
	}

	signer, err := ssh.ParsePrivateKey(a.SSHHostKey)
	if err != nil {
		t.Fatalf("the host key does not parse: %v", err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(a.SSHHostPublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Type() != ssh.KeyAlgoED25519 || !bytes.Equal(signer.PublicKey().Marshal(), pub.Marshal()) {
		t.Errorf("the host public key %q is not the host key's", a.SSHHostPublicKey)
	}
	marker, hosts, known, _, rest, err := ssh.ParseKnownHosts(a.KnownHosts)
	if err != nil || marker != "" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("known_hosts %q: marker %q, rest %q, %v", a.KnownHosts, marker, rest, err)
	}
	if diff := cmp.Diff([]string{"*"}, hosts); diff != "" || !bytes.Equal(known.Marshal(), pub.Marshal()) {
		t.Errorf("known_hosts %q does not pin the host key for every host: %s", a.KnownHosts, diff)
	}
}

// OpenSSH, where installed, reads the host key, and finds it in the known_hosts under every name the
// runner and mpirun dial on port 2222: the Service's names, short names and addresses, which ssh
// looks up as "[name]:2222".
func TestRunHostKeyInOpenSSH(t *testing.T) {
	keygen := lookTool(t, "ssh-keygen")
	a := mustRunAuth(t, testMaster, "uid-1", "demo-container-1", false)
	dir := t.TempDir()
	key, known := filepath.Join(dir, "ssh_host_ed25519_key"), filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(key, a.SSHHostKey, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(known, a.KnownHosts, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(keygen, "-y", "-f", key).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen -y: %v\n%s", err, out)
	}
	if got, want := strings.Fields(string(out)), strings.Fields(string(a.SSHHostPublicKey)); len(got) < 2 || got[1] != want[1] {
		t.Errorf("ssh-keygen -y gives %q, want %q", out, a.SSHHostPublicKey)
	}
	for _, host := range []string{"[demo-container-1-worker-0.demo-container-1.bench.svc]:2222", "[demo-container-1-worker-0]:2222",
		"[node01.demo-vm-1.bench.svc]:2222", "[10.244.1.7]:2222", "node01"} {
		out, err := exec.Command(keygen, "-F", host, "-f", known).CombinedOutput()
		if err != nil || !bytes.Contains(out, bytes.Fields(a.SSHHostPublicKey)[1]) {
			t.Errorf("ssh-keygen -F %s finds no host key (%v):\n%s", host, err, out)
		}
	}
}

// disabledHostKeyCheck matches the settings that accept any host key.
var disabledHostKeyCheck = regexp.MustCompile(`(?i)StrictHostKeyChecking[\s=]+("?)(no|off|accept-new)\b|UserKnownHostsFile[\s=]+/dev/null`)

// texts are every string that a run's objects carry, decoded: the objects as JSON, and each value of
// a Secret's or ConfigMap's data (a VM's user data is a Secret's).
func texts(t *testing.T, objs []client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		name := obj.GetObjectKind().GroupVersionKind().Kind + " " + obj.GetName()
		out[name] = string(raw)
		switch o := obj.(type) {
		case *corev1.Secret:
			for k, v := range o.Data {
				out[name+" "+k] = string(v)
			}
		case *corev1.ConfigMap:
			for k, v := range o.Data {
				out[name+" "+k] = v
			}
		}
	}
	return out
}

// No object of a run, and no ssh configuration of the runner image, turns host key checking off.
func TestNoRunPathAcceptsAnyHostKey(t *testing.T) {
	seen := map[string]string{}
	for _, p := range []vmbenchv1.Platform{containerPlatform, {Name: "host", Type: vmbenchv1.PlatformHost}, vmPlatform} {
		run := testRun(p)
		auth, err := testMaster.RunAuth("uid-1", run.Name, p.Type == vmbenchv1.PlatformVM)
		if err != nil {
			t.Fatal(err)
		}
		run.Auth = auth
		adapter, err := For(p.Type)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := adapter.Build(run)
		if err != nil {
			t.Fatal(err)
		}
		plan := planOf(t, objs)
		argv := runner.SSHArgv(plan.Nodes[1].Address, plan.SSHPort, plan.KnownHostsFile, "true")
		if !slices.Contains(argv, "StrictHostKeyChecking=yes") || !slices.Contains(argv, "UserKnownHostsFile="+runplan.KnownHostsFile) {
			t.Errorf("%s: the runner's ssh does not pin the run's host key: %v", p.Name, argv)
		}
		seen[p.Name+": the runner's ssh"] = strings.Join(argv, " ")
		objs = append(objs, &corev1.Secret{Data: auth.Data()})
		for name, text := range texts(t, objs) {
			seen[p.Name+": "+name] = text
		}
	}
	for _, file := range []string{"ssh_config", "sshd_config", "Dockerfile"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "images", "runner", file))
		if err != nil {
			t.Fatal(err)
		}
		seen["images/runner/"+file] = string(b)
	}
	for name, text := range seen {
		if m := disabledHostKeyCheck.FindString(text); m != "" {
			t.Errorf("%s accepts any host key: %q", name, m)
		}
	}
}

// planOf is the runner's plan among a run's objects: the MPIJob's plan ConfigMap, or the master VM's
// user data.
func planOf(t *testing.T, objs []client.Object) runplan.Plan {
	t.Helper()
	for _, obj := range objs {
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			return decodePlan(t, o.Data[planConfigKey])
		case *corev1.Secret:
			if !strings.HasSuffix(o.Name, "-master-cloudinit") {
				continue
			}
			cfg, _ := decodeCloudInit(t, o)
			for _, f := range cfg.WriteFiles {
				if f.Path == runplan.PlanFile {
					return decodePlan(t, f.Content)
				}
			}
		}
	}
	t.Fatal("no plan among the run's objects")
	return runplan.Plan{}
}

// sshClientSettings reads the settings of a "Host *" ssh_config block, lower-cased keys.
func sshClientSettings(t *testing.T, conf string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range strings.Split(conf, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		out[strings.ToLower(fields[0])] = fields[1]
	}
	if out["host"] != "*" {
		t.Fatalf("ssh config %q is not one Host * block", conf)
	}
	return out
}

// The pods' ssh (the image's ssh_config) and the VMs' (root's ~/.ssh/config) check host keys
// strictly against the run's known_hosts, which is where the pods mount it and the VMs write it.
func TestSSHClientsPinTheRunsHostKey(t *testing.T) {
	image, err := os.ReadFile(filepath.Join("..", "..", "images", "runner", "ssh_config"))
	if err != nil {
		t.Fatal(err)
	}
	for name, conf := range map[string]string{"images/runner/ssh_config": string(image), "VM root's ssh config": vmSSHConfig} {
		s := sshClientSettings(t, conf)
		if s["stricthostkeychecking"] != "yes" || s["userknownhostsfile"] != runplan.KnownHostsFile || s["globalknownhostsfile"] != "/dev/null" {
			t.Errorf("%s: StrictHostKeyChecking %q, UserKnownHostsFile %q, GlobalKnownHostsFile %q; want yes, %s, /dev/null",
				name, s["stricthostkeychecking"], s["userknownhostsfile"], s["globalknownhostsfile"], runplan.KnownHostsFile)
		}
		if s["port"] != "2222" {
			t.Errorf("%s: port %q, want 2222", name, s["port"])
		}
	}
}

// Every runner pod mounts the run's host key where the image's sshd_config looks for it, and the
// known_hosts where ssh_config names it, from the run's auth Secret: those two keys only, readable by
// the pod's group (mpiuser's, the fsGroup), never by others.
func TestMPIJobPodsGetTheRunsHostKey(t *testing.T) {
	sshd, err := os.ReadFile(filepath.Join("..", "..", "images", "runner", "sshd_config"))
	if err != nil {
		t.Fatal(err)
	}
	var hostKeys []string
	for _, line := range strings.Split(string(sshd), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.EqualFold(f[0], "HostKey") {
			hostKeys = append(hostKeys, f[1])
		}
	}
	if diff := cmp.Diff([]string{podSSHHostKey}, hostKeys); diff != "" {
		t.Errorf("images/runner/sshd_config host keys (-want +got):\n%s", diff)
	}
	for _, p := range []vmbenchv1.Platform{containerPlatform, {Name: "host", Type: vmbenchv1.PlatformHost}} {
		run := testRun(p)
		_, _, job := buildMPIJob(t, run)
		for role, spec := range job.Spec.MPIReplicaSpecs {
			pod := spec.Template.Spec
			var volume *corev1.Volume
			for i := range pod.Volumes {
				if s := pod.Volumes[i].Secret; s != nil && s.SecretName == run.AuthSecret {
					volume = &pod.Volumes[i]
				}
			}
			if volume == nil {
				t.Fatalf("%s %s pods do not mount the run's auth Secret %s", p.Name, role, run.AuthSecret)
			}
			want := []corev1.KeyToPath{{Key: AuthSSHHostKey, Path: path.Base(podSSHHostKey)}, {Key: AuthKnownHosts, Path: path.Base(runplan.KnownHostsFile)}}
			if diff := cmp.Diff(want, volume.Secret.Items); diff != "" {
				t.Errorf("%s %s: auth Secret items (-want +got):\n%s", p.Name, role, diff)
			}
			if mode := ptr.Deref(volume.Secret.DefaultMode, 0o644); mode&0o007 != 0 || mode&0o040 == 0 {
				t.Errorf("%s %s: mode %o, want readable by the group and not by others", p.Name, role, mode)
			}
			if pod.SecurityContext == nil || ptr.Deref(pod.SecurityContext.FSGroup, 0) != mpiUserID || ptr.Deref(pod.SecurityContext.RunAsUser, 0) != mpiUserID {
				t.Errorf("%s %s: the pod's user and fsGroup are not mpiuser's: %+v", p.Name, role, pod.SecurityContext)
			}
			var mount *corev1.VolumeMount
			for i, m := range pod.Containers[0].VolumeMounts {
				if m.Name == volume.Name {
					mount = &pod.Containers[0].VolumeMounts[i]
				}
			}
			if mount == nil || mount.MountPath != path.Dir(podSSHHostKey) || mount.MountPath != path.Dir(runplan.KnownHostsFile) || !mount.ReadOnly {
				t.Errorf("%s %s: mount %+v, want %s read-only", p.Name, role, mount, runplan.SSHDir)
			}
		}
		if job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker] == nil {
			t.Fatalf("%s: no workers to check", p.Name)
		}
	}
}

// Every VM gets the run's host key through cloud-init's ssh module, which the disk's cloud-init
// runs, serves it alone, and pins it in the known_hosts its ssh uses.
func TestVMsGetTheRunsHostKey(t *testing.T) {
	run := vmRun()
	for node, secret := range buildVMs(t, run).secrets {
		cfg, _ := decodeCloudInit(t, secret)
		want := map[string]string{"ed25519_private": string(run.Auth.SSHHostKey), "ed25519_public": string(run.Auth.SSHHostPublicKey)}
		if diff := cmp.Diff(want, cfg.SSHKeys); diff != "" {
			t.Errorf("%s ssh_keys (-want +got):\n%s", node, diff)
		}
		files := map[string]string{}
		for _, f := range cfg.WriteFiles {
			files[f.Path] = f.Content
		}
		if files[runplan.KnownHostsFile] != string(run.Auth.KnownHosts) {
			t.Errorf("%s known_hosts = %q, want %q", node, files[runplan.KnownHostsFile], run.Auth.KnownHosts)
		}
		if files["/root/.ssh/config"] != vmSSHConfig {
			t.Errorf("%s root's ssh config = %q", node, files["/root/.ssh/config"])
		}
	}
	disk, err := os.ReadFile(filepath.Join("..", "..", "images", "vm-disk", "rootfs", "etc", "cloud", "cloud.cfg.d", "90-vmbench.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	modules := regexp.MustCompile(`(?s)cloud_init_modules:\s*\[([^\]]*)\]`).FindSubmatch(disk)
	if modules == nil || !regexp.MustCompile(`(^|[\s,])ssh($|[\s,])`).Match(modules[1]) {
		t.Errorf("the VM disk's cloud-init does not run its ssh module, which installs ssh_keys: %s", modules)
	}
}
