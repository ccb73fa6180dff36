package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

// nfsBounds bound, in seconds, the steps of the Shared target's preparation in VMs. Each script
// bounds its own steps with timeout(1); the contexts of exportShared and mountShared are the
// backstop for a node that stops answering over ssh.
type nfsBounds struct {
	// Start bounds `systemctl start nfs-server`: loading nfsd and starting mountd, idmapd and
	// nfsdcld take seconds under emulation.
	Start int
	// A node tries the mount Attempts times, each for at most Attempt seconds, with Retry seconds
	// between: the master's address may not resolve at once, and the server refuses until nfsd
	// listens. Then a file is written, within Probe seconds: the first open of a new NFSv4 server
	// waits for its grace period (grace-time in the VM disk's nfs.conf.d).
	Attempt, Attempts, Retry, Probe int
}

var defaultNFSBounds = nfsBounds{Start: 120, Attempt: 30, Attempts: 4, Retry: 5, Probe: 60}

// Backstops of the scripts' own bounds above.
const (
	nfsExportTimeout = 3 * time.Minute
	nfsMountTimeout  = 5 * time.Minute
)

// nfsExportsFile holds the runner's export on the master.
const nfsExportsFile = "/etc/exports.d/vmbench.exports"

// nfsExportOptions are the export's options: writes reach the master's disk before they are
// acknowledged (sync), root on the other VMs, as which the runner's tools run, stays root
// (no_root_squash), and a client's source port may be above 1023 (insecure), which the NAT of
// KubeVirt's masquerade and passt bindings may make of it.
const nfsExportOptions = "rw,sync,no_subtree_check,no_root_squash,insecure"

// nfsMountOptions pin NFSv4.2 over TCP on the one port the VMs forward, without rpcbind, and make
// mount.nfs give up after one try (retry=0), so that the script's own bounded retries decide.
var nfsMountOptions = fmt.Sprintf("vers=4.2,proto=tcp,port=%d,retry=0", runplan.NFSPort)

// NFSExportArgv exports dir of the node it runs on, as root, over NFSv4 to every client, starts the
// NFS server (the VM disk leaves it off, and its nfs.conf.d turns NFSv3 off) and prints the server's
// package and version.
func NFSExportArgv(dir string) []string {
	return []string{"sh", "-c", nfsExportScript(dir, nfsExportsFile, defaultNFSBounds)}
}

func nfsExportScript(dir, exportsFile string, b nfsBounds) string {
	return fmt.Sprintf(`set -eu
dir=%[1]s exports=%[2]s
mkdir -p "$dir" "$(dirname "$exports")"
chmod 1777 "$dir"
echo "$dir *(%[3]s)" > "$exports"
if ! timeout -k 5 %[4]d systemctl start nfs-server.service; then
  echo "nfs-server.service did not start within %[4]d s:" >&2
  systemctl status --no-pager --lines=5 nfs-server.service >&2 || true
  exit 1
fi
exportfs -ra
exportfs -s | grep -q "^$dir[[:space:]]" || { echo "exportfs -s does not list $dir after exportfs -ra" >&2; exit 1; }
echo "nfs-kernel-server $(dpkg-query -W -f '${Version}' nfs-kernel-server)"`,
		shellQuote(dir), shellQuote(exportsFile), nfsExportOptions, b.Start)
}

// NFSMountArgv mounts server:export at dir over NFSv4.2 on the node it runs on, unless dir is a mount
// point already (a runner started again), and writes and removes a file there, each step bounded.
func NFSMountArgv(server, export, dir string) []string {
	return []string{"sh", "-c", nfsMountScript(server, export, dir, defaultNFSBounds)}
}

func nfsMountScript(server, export, dir string, b nfsBounds) string {
	return fmt.Sprintf(`set -u
src=%[1]s dir=%[2]s
mkdir -p "$dir"
if ! mountpoint -q "$dir"; then
  i=1
  until out=$(timeout -k 5 %[4]d mount -t nfs4 -o %[3]s "$src" "$dir" 2>&1); do
    rc=$?
    # timeout(1) exits 124, or 137 when the mount ignored its TERM.
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then out="no answer within %[4]d s"; fi
    if [ "$i" -ge %[5]d ]; then
      echo "mount -t nfs4 $src failed %[5]d times (each bounded to %[4]d s): $out" >&2
      exit 1
    fi
    i=$((i + 1))
    sleep %[6]d
  done
fi
probe="$dir/.vmbench-probe-$(hostname)"
if ! timeout -k 5 %[7]d sh -c 'echo ok > "$1" && rm -f "$1"' sh "$probe"; then
  echo "$src is mounted at $dir, but writing a file there failed or took more than %[7]d s" >&2
  exit 1
fi`,
		shellQuote(server+":"+export), shellQuote(dir), nfsMountOptions, b.Attempt, b.Attempts, b.Retry, b.Probe)
}

// mountInfoArgv prints the mount table of the node it runs on.
var mountInfoArgv = []string{"cat", "/proc/self/mountinfo"}

// prepareShared makes the Shared target ready before the first benchmark, when a benchmark uses it,
// and says what backs it. With plan.SharedExport (VMs) the master exports that directory over NFS and
// every node mounts it at plan.SharedDir, the master through its own loopback, so that every node
// writes through the same NFS client. server names the NFS server; mount is what SharedDir is on the
// last node, read from its mount table. errs holds, per node, why the target is not ready there: the
// executions of that node on the Shared target report it rather than write to whatever is at
// SharedDir.
func (r *Runner) prepareShared(ctx context.Context, plan runplan.Plan) (server, mount string, errs map[string]error) {
	if plan.SharedDir == "" || !vmbenchv1.UsesStorageTarget(plan.Benchmarks, vmbenchv1.StorageShared) {
		return "", "", nil
	}
	if plan.SharedExport != "" {
		var err error
		if server, err = r.exportShared(ctx, plan); err != nil {
			r.progressf("Shared target: %v", err)
			errs = map[string]error{}
			for _, n := range plan.Nodes {
				errs[n.Name] = err
			}
			return "", "", errs
		}
		r.progressf("Shared target: %s exports %s", plan.Nodes[0].Name, plan.SharedExport)
		if errs = r.mountShared(ctx, plan); len(errs) > 0 {
			for _, n := range plan.Nodes {
				if err := errs[n.Name]; err != nil {
					r.progressf("Shared target: %v", err)
				}
			}
		}
	}
	return server, r.sharedMount(ctx, plan), errs
}

// exportShared runs NFSExportArgv on the master.
func (r *Runner) exportShared(ctx context.Context, plan runplan.Plan) (string, error) {
	master := plan.Nodes[0]
	ectx, cancel := context.WithTimeout(ctx, nfsExportTimeout)
	defer cancel()
	stdout, stderr, err := r.Exec.Run(ectx, master, Command{Argv: NFSExportArgv(plan.SharedExport)})
	if err != nil {
		return "", fmt.Errorf("the master VM could not export %s over NFS: %s; the VM disk must have nfs-kernel-server and "+
			"its nfs.conf.d (rebuild it with hack/images/vm-disk.sh)", plan.SharedExport, scriptError(ectx, err, stderr, nfsExportTimeout))
	}
	return strings.TrimSpace(string(stdout)), nil
}

// mountShared runs NFSMountArgv on every node at once: each waits on the same server alone.
func (r *Runner) mountShared(ctx context.Context, plan runplan.Plan) map[string]error {
	master := plan.Nodes[0]
	var mu sync.Mutex
	errs := map[string]error{}
	var wg sync.WaitGroup
	for i, n := range plan.Nodes {
		server := master.Address
		if i == 0 {
			server = "127.0.0.1"
		}
		wg.Go(func() {
			mctx, cancel := context.WithTimeout(ctx, nfsMountTimeout)
			defer cancel()
			_, stderr, err := r.Exec.Run(mctx, n, Command{Argv: NFSMountArgv(server, plan.SharedExport, plan.SharedDir)})
			if err == nil {
				return
			}
			err = fmt.Errorf("%s could not mount the master's NFS export %s:%s at %s: %s; the VMs must reach the master on TCP port %d",
				n.Name, server, plan.SharedExport, plan.SharedDir, scriptError(mctx, err, stderr, nfsMountTimeout), runplan.NFSPort)
			mu.Lock()
			errs[n.Name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return errs
}

// scriptError is what a failed script said on stderr, or that it did not end within its bound.
func scriptError(ctx context.Context, err error, stderr []byte, bound time.Duration) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Sprintf("it did not end within %s", bound)
	}
	if said := strings.TrimSpace(tail(bytes.TrimSpace(stderr), 300)); said != "" {
		return said
	}
	return err.Error()
}

// sharedMount is what plan.SharedDir is on the plan's last node (not the master, where there is
// another: in VMs the master mounts its own export through loopback), or "" when it cannot be read
// or SharedDir is no mount point there.
func (r *Runner) sharedMount(ctx context.Context, plan runplan.Plan) string {
	node := plan.Nodes[len(plan.Nodes)-1]
	mctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	stdout, _, err := r.Exec.Run(mctx, node, Command{Argv: mountInfoArgv})
	if err != nil {
		return ""
	}
	return MountAt(stdout, plan.SharedDir)
}

// MountAt reads a mount table in the format of /proc/self/mountinfo and says what is mounted at dir:
// the file system's type and source, e.g. "nfs4 master:/srv/vmbench-shared", from the entry mounted
// last there (it hides the others). It is "" when dir is no mount point.
func MountAt(mountinfo []byte, dir string) string {
	found := ""
	for _, line := range strings.Split(string(mountinfo), "\n") {
		// ID parent major:minor root mount-point options [optional fields...] - type source super-options
		before, after, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		fields, rest := strings.Fields(before), strings.Fields(after)
		if len(fields) < 5 || len(rest) < 2 || unescapeMountField(fields[4]) != dir {
			continue
		}
		found = unescapeMountField(rest[0]) + " " + unescapeMountField(rest[1])
	}
	return found
}

// unescapeMountField undoes the kernel's octal escapes of space, tab, newline and backslash.
func unescapeMountField(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
