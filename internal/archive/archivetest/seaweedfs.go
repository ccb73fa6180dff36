// Package archivetest runs SeaweedFS, a real S3-compatible server, for the archive's tests: the
// binary hack/seaweedfs.sh builds from the Go module proxy, on loopback ports of its own, with
// identities whose signatures it checks.
package archivetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vmbench/vmbench/internal/archive"
)

// EnvBinary names the weed binary; make test-unit sets it from hack/seaweedfs.sh.
const EnvBinary = "VMBENCH_SEAWEEDFS"

// Binary is the path of weed. Where EnvBinary is unset the test is skipped on a developer's machine,
// and fails where VMBENCH_REQUIRE_TOOLS is set (make test-unit), so that a skip never passes for a
// pass.
func Binary(t testing.TB) string {
	t.Helper()
	path := os.Getenv(EnvBinary)
	if path == "" {
		if os.Getenv("VMBENCH_REQUIRE_TOOLS") != "" {
			t.Fatalf("%s is unset and VMBENCH_REQUIRE_TOOLS is set: run %s=$(hack/seaweedfs.sh), which builds SeaweedFS", EnvBinary, EnvBinary)
		}
		t.Skipf("no SeaweedFS: set %s=$(hack/seaweedfs.sh) to run the archive against a real S3-compatible server", EnvBinary)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s=%s: %v: run hack/seaweedfs.sh, which builds it", EnvBinary, path, err)
	}
	return path
}

// Identities of the server: the admin makes the bucket; the archive may read, list and write.
var (
	Admin   = archive.Credentials{AccessKeyID: "vmbench-admin", SecretAccessKey: "admin-secret-0123456789"}
	Archive = archive.Credentials{AccessKeyID: "vmbench-archive", SecretAccessKey: "archive-secret-0123456789"}
)

// Bucket is the bucket every server starts with.
const Bucket = "vmbench-results"

// Server is one running SeaweedFS.
type Server struct {
	// Endpoint is the S3 API's URL.
	Endpoint string
	t        testing.TB
	bin, dir string
	args     []string
	ports    []int
	cmd      *exec.Cmd
	log      *os.File
}

// Start runs a SeaweedFS server (master, volume, filer and S3 gateway in one process) on free
// loopback ports with its data in a temporary directory, waits until its S3 API answers, and makes
// Bucket. It is stopped when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, bin: Binary(t), dir: t.TempDir()}
	config, err := json.Marshal(map[string]any{"identities": []map[string]any{
		{"name": "admin", "credentials": []map[string]string{{"accessKey": Admin.AccessKeyID, "secretKey": Admin.SecretAccessKey}},
			"actions": []string{"Admin", "Read", "List", "Write"}},
		{"name": "archive", "credentials": []map[string]string{{"accessKey": Archive.AccessKeyID, "secretKey": Archive.SecretAccessKey}},
			"actions": []string{"Read", "List", "Write"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(s.dir, "s3.json")
	if err := os.WriteFile(configFile, config, 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 8)
	s.ports = ports
	port := func(i int) string { return strconv.Itoa(ports[i]) }
	s.Endpoint = "http://127.0.0.1:" + port(0)
	s.args = []string{"server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=" + filepath.Join(s.dir, "data"),
		"-master.port=" + port(1), "-master.port.grpc=" + port(2), "-volume.port=" + port(3), "-volume.port.grpc=" + port(4),
		"-filer", "-filer.port=" + port(5), "-filer.port.grpc=" + port(6),
		"-s3", "-s3.port=" + port(0), "-s3.port.grpc=" + port(7), "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.config=" + configFile, "-s3.autoCreateBucket=false",
		"-master.telemetry=false", "-master.volumeSizeLimitMB=64", "-volume.max=0",
	}
	if err := os.MkdirAll(filepath.Join(s.dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	s.start()
	t.Cleanup(s.Stop)
	admin := s.Client(t, Admin, Bucket)
	s.await(admin.CreateBucket)
	s.awaitWrites()
	return s
}

// awaitWrites waits until an object can be written: the first write waits for the filer's lock
// ring, which forms some seconds after the S3 API answers.
func (s *Server) awaitWrites() {
	s.t.Helper()
	admin := s.Client(s.t, Admin, Bucket)
	s.await(func(ctx context.Context) error { return admin.Put(ctx, ".ready", nil) })
	if err := admin.Put(context.Background(), ".ready", nil); err != nil {
		s.t.Fatalf("SeaweedFS at %s: %v", s.Endpoint, err)
	}
}

// start runs the process with the server's arguments, its log in the data directory.
func (s *Server) start() {
	s.t.Helper()
	var err error
	if s.log, err = os.OpenFile(filepath.Join(s.dir, "weed.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		s.t.Fatal(err)
	}
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	// Its own process group, so that the test's interrupt does not reach it before Stop.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("starting %s: %v", s.bin, err)
	}
}

// await retries ready until it succeeds or a minute passed, then fails with the server's log.
func (s *Server) await(ready func(context.Context) error) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := ready(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("SeaweedFS at %s did not become ready in a minute: %v\nits log ends:\n%s", s.Endpoint, err, s.LogTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop kills the server, if it runs (a graceful stop takes half a minute); its data stays for
// Restart.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	_ = s.cmd.Wait()
	_ = s.log.Close()
	s.cmd = nil
	// The Unix sockets it made beside its ports, /tmp/seaweedfs-<server>[-grpc]-<port>.sock.
	for _, p := range s.ports {
		sockets, _ := filepath.Glob(fmt.Sprintf("/tmp/seaweedfs-*-%d.sock", p))
		for _, socket := range sockets {
			_ = os.Remove(socket)
		}
	}
}

// Restart starts the stopped server again on the same ports and data, and waits until it takes
// writes.
func (s *Server) Restart() {
	s.t.Helper()
	s.start()
	s.awaitWrites()
}

// Client is an S3 client of the server for bucket, with cred.
func (s *Server) Client(t testing.TB, cred archive.Credentials, bucket string) *archive.S3 {
	t.Helper()
	c, err := archive.New(archive.Config{Endpoint: s.Endpoint, Bucket: bucket, Credentials: archive.Static(cred), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// LogTail is the end of the server's log, for failure messages.
func (s *Server) LogTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "weed.log"))
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(bytes.TrimSpace(b))
}

// freePorts are n loopback ports that were free a moment ago, all different.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// String names the server, for messages.
func (s *Server) String() string {
	return fmt.Sprintf("SeaweedFS at %s (%s %s)", s.Endpoint, s.bin, strings.Join(s.args, " "))
}
