package main

import (
	"context"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// --pprof-bind-address serves Go's heap profile, which the scale benchmark takes of the manager
// binary. A process registers the controller's name once, so this test runs newManager in a
// process of its own.
func TestPprofBindAddressServesTheHeapProfile(t *testing.T) {
	if !inOwnProcess(t) {
		return
	}
	cfg, _, _ := startAPIServer(t, []string{"config/crd/bases"}, "vmbench-system")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	ctx, cancel := context.WithCancel(context.Background())
	o := validOptions()
	o.metricsAddr, o.probeAddr, o.pprofAddr = "0", "0", addr
	mgr, err := newManager(ctx, cfg, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	var status int
	var body []byte
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
		if err != nil {
			continue
		}
		status = resp.StatusCode
		body, _ = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		break
	}
	// A heap profile is gzip-compressed protobuf.
	if status != http.StatusOK || len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
		t.Fatalf("GET /debug/pprof/heap on --pprof-bind-address=%s: status %d, %d bytes, want a gzipped profile", addr, status, len(body))
	}
}

// parseFlags also sets the process's logger, once for good, so this test runs in a process of its
// own.
func TestPprofIsOffByDefault(t *testing.T) {
	if !inOwnProcess(t) {
		return
	}
	if o := parseFlagsFrom(t); o.pprofAddr != "0" {
		t.Errorf("--pprof-bind-address defaults to %q, want 0 (off): the endpoints have no authentication", o.pprofAddr)
	}
}

// parseFlagsFrom is parseFlags of a command line without flags.
func parseFlagsFrom(t *testing.T) options {
	t.Helper()
	commandLine, args := flag.CommandLine, os.Args
	t.Cleanup(func() { flag.CommandLine, os.Args = commandLine, args })
	flag.CommandLine, os.Args = flag.NewFlagSet("manager", flag.ContinueOnError), []string{"manager"}
	return parseFlags()
}
