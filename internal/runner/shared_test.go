package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// fakeNFSTools puts stand-ins for the NFS tools first on PATH: each logs its arguments and behaves as
// the FAKE_* variable of the test says. timeout, sh, mkdir and hostname stay the real ones.
func fakeNFSTools(t *testing.T) (bin, log string) {
	t.Helper()
	bin = t.TempDir()
	log = filepath.Join(bin, "calls.log")
	tools := map[string]string{
		"mountpoint": `exit "${FAKE_MOUNTPOINT:-1}"`,
		// FAKE_MOUNT: ok, refuse (always), refuse-twice (then ok), hang; a refusal says what a guest said
		// for an address nobody had.
		"mount": `n=$(($(cat "$0.count" 2>/dev/null || echo 0) + 1)); echo "$n" > "$0.count"
case "$FAKE_MOUNT" in
  ok) exit 0 ;;
  refuse-twice) [ "$n" -gt 2 ] && exit 0 ;;
  hang) exec sleep 30 ;;
esac
echo "mount.nfs4: No route to host" >&2; exit 32`,
		// FAKE_SYSTEMCTL: ok, fail, hang.
		"systemctl": `[ "$1" = status ] && { echo "x nfs-server.service - NFS server and services"; echo "     Active: failed (Result: exit-code)"; exit 3; }
case "$FAKE_SYSTEMCTL" in
  ok) exit 0 ;;
  hang) exec sleep 30 ;;
esac
echo "Job for nfs-server.service failed because the control process exited with error code." >&2; exit 1`,
		"exportfs":   `[ "$1" = -s ] && [ -n "${FAKE_EXPORTED:-}" ] && printf '%s  *(sync,wdelay,hide,no_subtree_check,sec=sys,rw,insecure,no_root_squash,no_all_squash)\n' "$FAKE_EXPORTED"; exit 0`,
		"dpkg-query": `printf '1:2.6.2-4+deb12u1'`,
	}
	for name, body := range tools {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + shellQuote(log) + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin, log
}

// runScript runs a script of the builders under sh with the fake tools and env.
func runScript(t *testing.T, bin, script string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), append([]string{"PATH=" + bin + ":" + os.Getenv("PATH")}, env...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

func calls(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

var fastNFSBounds = nfsBounds{Start: 1, Attempt: 1, Attempts: 3, Retry: 0, Probe: 2}

func TestNFSExportScript(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         []string
		wantErr     string
		wantVersion string
	}{
		{name: "server starts and exports", env: []string{"FAKE_SYSTEMCTL=ok", "FAKE_EXPORTED=$DIR"},
			wantVersion: "nfs-kernel-server 1:2.6.2-4+deb12u1"},
		{name: "server fails", env: []string{"FAKE_SYSTEMCTL=fail"},
			wantErr: "nfs-server.service did not start within 1 s:\nx nfs-server.service - NFS server and services\n     Active: failed (Result: exit-code)"},
		{name: "server hangs", env: []string{"FAKE_SYSTEMCTL=hang"},
			wantErr: "nfs-server.service did not start within 1 s:"},
		{name: "directory not exported", env: []string{"FAKE_SYSTEMCTL=ok", "FAKE_EXPORTED=/elsewhere"},
			wantErr: "exportfs -s does not list $DIR after exportfs -ra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, log := fakeNFSTools(t)
			dir := filepath.Join(t.TempDir(), "srv", "vmbench shared")
			exports := filepath.Join(t.TempDir(), "exports.d", "vmbench.exports")
			env := make([]string, len(tc.env))
			for i, e := range tc.env {
				env[i] = strings.ReplaceAll(e, "$DIR", dir)
			}
			start := time.Now()
			stdout, stderr, err := runScript(t, bin, nfsExportScript(dir, exports, fastNFSBounds), env...)
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("the script took %s, beyond its bounds", elapsed)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(stderr, strings.ReplaceAll(tc.wantErr, "$DIR", dir)) {
					t.Fatalf("err %v, stderr %q, want it to say %q", err, stderr, tc.wantErr)
				}
				return
			}
			if err != nil || strings.TrimSpace(stdout) != tc.wantVersion {
				t.Fatalf("err %v, stdout %q, stderr %q, want %q", err, stdout, stderr, tc.wantVersion)
			}
			b, err := os.ReadFile(exports)
			if want := dir + " *(rw,sync,no_subtree_check,no_root_squash,insecure)\n"; err != nil || string(b) != want {
				t.Errorf("exports file %q (%v), want %q", b, err, want)
			}
			if fi, err := os.Stat(dir); err != nil || fi.Mode()&(os.ModeSticky|os.ModePerm) != os.ModeSticky|0o777 {
				t.Errorf("export directory: %v %v, want mode 1777", fi.Mode(), err)
			}
			if got, want := calls(t, log), []string{"systemctl start nfs-server.service", "exportfs -ra", "exportfs -s",
				"dpkg-query -W -f ${Version} nfs-kernel-server"}; !slices.Equal(got, want) {
				t.Errorf("calls %q, want %q", got, want)
			}
		})
	}
}

func TestNFSMountScript(t *testing.T) {
	mountCall := func(dir string) string {
		return "mount -t nfs4 -o vers=4.2,proto=tcp,port=2049,retry=0 master.run.ns.svc:/srv/vmbench-shared " + dir
	}
	for _, tc := range []struct {
		name       string
		env        []string
		wantErr    string
		wantMounts int
	}{
		{name: "mounts at once", env: []string{"FAKE_MOUNT=ok"}, wantMounts: 1},
		{name: "mounts on the third try", env: []string{"FAKE_MOUNT=refuse-twice"}, wantMounts: 3},
		{name: "refused every time", env: []string{"FAKE_MOUNT=refuse"}, wantMounts: 3,
			wantErr: "mount -t nfs4 master.run.ns.svc:/srv/vmbench-shared failed 3 times (each bounded to 1 s): mount.nfs4: No route to host"},
		{name: "no answer", env: []string{"FAKE_MOUNT=hang"}, wantMounts: 3,
			wantErr: "failed 3 times (each bounded to 1 s): no answer within 1 s"},
		{name: "mounted already", env: []string{"FAKE_MOUNT=refuse", "FAKE_MOUNTPOINT=0"}, wantMounts: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin, log := fakeNFSTools(t)
			dir := filepath.Join(t.TempDir(), "mnt", "vmbench-shared")
			start := time.Now()
			_, stderr, err := runScript(t, bin, nfsMountScript("master.run.ns.svc", "/srv/vmbench-shared", dir, fastNFSBounds), tc.env...)
			if elapsed := time.Since(start); elapsed > 15*time.Second {
				t.Errorf("the script took %s, beyond its bounds", elapsed)
			}
			var mounts []string
			for _, c := range calls(t, log) {
				if strings.HasPrefix(c, "mount ") {
					mounts = append(mounts, c)
				}
			}
			if len(mounts) != tc.wantMounts {
				t.Errorf("%d mount calls %q, want %d", len(mounts), mounts, tc.wantMounts)
			}
			for _, m := range mounts {
				if m != mountCall(dir) {
					t.Errorf("mount call %q, want %q", m, mountCall(dir))
				}
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(stderr, tc.wantErr) {
					t.Fatalf("err %v, stderr %q, want it to say %q", err, stderr, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("err %v, stderr %q", err, stderr)
			}
			// The probe file was written and removed.
			if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
				t.Errorf("the mount point holds %v (%v), want the probe gone", entries, err)
			}
		})
	}
}

// The scripts with their real bounds parse, and say them.
func TestNFSArgv(t *testing.T) {
	for _, argv := range [][]string{NFSExportArgv("/srv/vmbench-shared"), NFSMountArgv("127.0.0.1", "/srv/vmbench-shared", "/mnt/vmbench-shared")} {
		if len(argv) != 3 || argv[0] != "sh" || argv[1] != "-c" {
			t.Fatalf("argv %q, want sh -c SCRIPT", argv)
		}
		if out, err := exec.Command("sh", "-n", "-c", argv[2]).CombinedOutput(); err != nil {
			t.Errorf("sh -n: %v: %s\n%s", err, out, argv[2])
		}
	}
	for _, want := range []string{"dir='/srv/vmbench-shared' exports='/etc/exports.d/vmbench.exports'", "timeout -k 5 120 systemctl start nfs-server.service"} {
		if !strings.Contains(NFSExportArgv("/srv/vmbench-shared")[2], want) {
			t.Errorf("export script lacks %q", want)
		}
	}
	for _, want := range []string{"src='127.0.0.1:/srv/vmbench-shared' dir='/mnt/vmbench-shared'", "timeout -k 5 30 mount -t nfs4 -o vers=4.2,proto=tcp,port=2049,retry=0",
		`if [ "$i" -ge 4 ]`, "sleep 5", "timeout -k 5 60 sh -c"} {
		if !strings.Contains(NFSMountArgv("127.0.0.1", "/srv/vmbench-shared", "/mnt/vmbench-shared")[2], want) {
			t.Errorf("mount script lacks %q", want)
		}
	}
}

func TestMountAt(t *testing.T) {
	bind := []byte(fixture(t, "mountinfo-bind-shared.txt"))
	for _, tc := range []struct {
		name, dir, want string
		table           []byte
	}{
		{"bind mount of a host directory, as a hostPath volume", "/shared", "ext4 /dev/vda", bind},
		{"the root", "/", "ext4 /dev/vda", bind},
		{"a directory below a mount point is none", "/shared/run", "", bind},
		{"no such mount point", "/mnt/vmbench-shared", "", bind},
		{"the last of two mounts hides the first", "/dev/pts", "devpts devpts", bind},
		{"NFSv4.2 mount of the master's own export, in a guest", "/mnt/vmbench-shared", "nfs4 127.0.0.1:/srv/vmbench-shared",
			[]byte(fixture(t, "mountinfo-nfs4-guest.txt"))},
		{"spaces in the mount point and the source, escaped by the kernel", "/tmp/mi/my share", "tmpfs vmbench tmp",
			[]byte(fixture(t, "mountinfo-escaped-space.txt"))},
		{"garbage", "/shared", "", []byte("not a mount table\n - \n")},
	} {
		if got := MountAt(tc.table, tc.dir); got != tc.want {
			t.Errorf("%s: MountAt(%q) = %q, want %q", tc.name, tc.dir, got, tc.want)
		}
	}
}

// vmSharedPlan is a VM run's plan whose iozone writes to the Shared target, exported by the master.
func vmSharedPlan(t *testing.T) runplan.Plan {
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{
		FileSize: "64M", RecordSize: "64k", Tests: []vmbenchv1.IozoneTest{"write"},
		Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageShared, vmbenchv1.StorageRootFS}}})
	plan.Nodes[0].Address = "master.s-vm-1.ns.svc"
	plan.SharedDir, plan.SharedExport, plan.RootFSDir = "/mnt/vmbench-shared", "/srv/vmbench-shared", "/var/tmp/vmbench"
	return plan
}

func TestPrepareSharedInVMs(t *testing.T) {
	r, exec, msgs := testRunner(t)
	plan := vmSharedPlan(t)
	exec.respond = func(node string, argv []string) (reply, bool) {
		switch {
		case argv[0] == "sh" && strings.Contains(argv[2], "systemctl start nfs-server"):
			return reply{stdout: "nfs-kernel-server 1:2.6.2-4+deb12u1\n"}, true
		case argv[0] == "cat" && argv[1] == "/proc/self/mountinfo":
			return reply{stdout: fixture(t, "mountinfo-nfs4-guest.txt")}, true
		}
		return reply{}, false
	}
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	got := exec.commands()
	export := "master: " + strings.Join(NFSExportArgv("/srv/vmbench-shared"), " ")
	mounts := []string{
		"master: " + strings.Join(NFSMountArgv("127.0.0.1", "/srv/vmbench-shared", "/mnt/vmbench-shared"), " "),
		"node01: " + strings.Join(NFSMountArgv("master.s-vm-1.ns.svc", "/srv/vmbench-shared", "/mnt/vmbench-shared"), " "),
		"node02: " + strings.Join(NFSMountArgv("master.s-vm-1.ns.svc", "/srv/vmbench-shared", "/mnt/vmbench-shared"), " "),
	}
	// true on every node, systemd-detect-virt, then the export, the mounts in any order, the mount
	// table of the last node and the benchmarks.
	if len(got) < 9 || got[4] != export || got[8] != "node02: cat /proc/self/mountinfo" {
		t.Fatalf("commands:\n%s", strings.Join(got, "\n"))
	}
	if m := slices.Sorted(slices.Values(got[5:8])); !slices.Equal(m, mounts) {
		t.Errorf("mounts:\n%s\nwant\n%s", strings.Join(m, "\n"), strings.Join(mounts, "\n"))
	}
	if !slices.Contains(got, "node01: iozone -s 64M -r 64k -i 0 -e -R -f /mnt/vmbench-shared/s1-pod-0/node01/iozone.tmp") ||
		!slices.Contains(got, "node01: iozone -s 64M -r 64k -i 0 -e -R -f /var/tmp/vmbench/iozone.tmp") {
		t.Errorf("iozone did not run on both targets:\n%s", strings.Join(got, "\n"))
	}
	started := (*msgs)[0]
	// The fixture is the mount table of a Debian bookworm guest (linux 6.1.0-56, nfs-kernel-server
	// 1:2.6.2-4+deb12u1) after the runner mounted its own export through loopback.
	if started.SharedServer != "nfs-kernel-server 1:2.6.2-4+deb12u1" ||
		started.SharedMount != "nfs4 127.0.0.1:/srv/vmbench-shared" {
		t.Errorf("started with shared server %q and mount %q", started.SharedServer, started.SharedMount)
	}
	for _, m := range (*msgs)[1:] {
		if m.Kind == runplan.KindResult && m.Error != "" {
			t.Errorf("%s on %s %s: %s", m.Benchmark, m.Node, m.Variant, m.Error)
		}
	}
}

func TestSharedTargetThatCannotBeMountedFailsItsExecutions(t *testing.T) {
	for _, tc := range []struct {
		name string
		// fail makes a script fail on a node.
		fail       func(node, script string) bool
		wantFailed map[string]string
	}{
		{name: "the master cannot export",
			fail: func(_, script string) bool { return strings.Contains(script, "systemctl start") },
			wantFailed: map[string]string{
				"master": "the master VM could not export /srv/vmbench-shared over NFS: nfs-server.service did not start within 120 s:",
				"node01": "the master VM could not export /srv/vmbench-shared over NFS: nfs-server.service did not start within 120 s:",
				"node02": "the master VM could not export /srv/vmbench-shared over NFS: nfs-server.service did not start within 120 s:",
			}},
		{name: "one node cannot mount",
			fail: func(node, script string) bool { return node == "node02" && strings.Contains(script, "mount -t nfs4") },
			wantFailed: map[string]string{
				"node02": "node02 could not mount the master's NFS export master.s-vm-1.ns.svc:/srv/vmbench-shared at /mnt/vmbench-shared: " +
					"mount -t nfs4 failed; the VMs must reach the master on TCP port 2049",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, exec, msgs := testRunner(t)
			plan := vmSharedPlan(t)
			exec.respond = func(node string, argv []string) (reply, bool) {
				if argv[0] != "sh" || !tc.fail(node, argv[2]) {
					return reply{}, false
				}
				if strings.Contains(argv[2], "systemctl start") {
					return reply{stderr: "nfs-server.service did not start within 120 s:\n", err: exitError(1)}, true
				}
				return reply{stderr: "mount -t nfs4 failed\n", err: exitError(1)}, true
			}
			if err := r.Run(context.Background(), plan); err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, m := range *msgs {
				if m.Kind != runplan.KindResult {
					continue
				}
				want, failed := tc.wantFailed[m.Node]
				if m.Variant == "rootfs" || !failed {
					if m.Error != "" {
						t.Errorf("%s on %s: %s, want a result", m.Variant, m.Node, m.Error)
					}
					continue
				}
				seen++
				if !strings.HasPrefix(m.Error, want) {
					t.Errorf("%s on %s: error %q, want %q", m.Variant, m.Node, m.Error, want)
				}
			}
			if seen != len(tc.wantFailed) {
				t.Errorf("%d failed Shared executions, want %d", seen, len(tc.wantFailed))
			}
			// No execution wrote to the mount point of a node where nothing was mounted.
			for _, c := range exec.commands() {
				node, _, _ := strings.Cut(c, ":")
				if _, failed := tc.wantFailed[node]; failed && strings.Contains(c, "iozone") && strings.Contains(c, "/mnt/vmbench-shared") {
					t.Errorf("ran %q on a node without the mount", c)
				}
			}
		})
	}
}

// A Shared target that no benchmark uses is left alone: no NFS server, no mount.
func TestPrepareSharedOnlyWhenUsed(t *testing.T) {
	r, exec, _ := testRunner(t)
	plan := vmSharedPlan(t)
	plan.Benchmarks[0].Iozone.Targets = []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal}
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	for _, c := range exec.commands() {
		if strings.Contains(c, "nfs") || strings.Contains(c, "mountinfo") {
			t.Errorf("ran %q", c)
		}
	}
}
