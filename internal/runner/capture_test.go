package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vmbench/vmbench/internal/runplan"
)

func TestCaptureKeepsAStreamWithinTheLimit(t *testing.T) {
	c := newCapture(1 << 20)
	want := bytes.Repeat([]byte("0123456789"), 100_000)
	for p := want; len(p) > 0; p = p[min(len(p), 4096):] {
		_, _ = c.Write(p[:min(len(p), 4096)])
	}
	if !bytes.Equal(c.Bytes(), want) || c.err("stdout") != nil {
		t.Fatalf("kept %d bytes, err %v; want the whole %d", len(c.Bytes()), c.err("stdout"), len(want))
	}
}

func TestCaptureKeepsTheEndOfALargerStream(t *testing.T) {
	var all bytes.Buffer
	c := newCapture(1 << 20)
	for i := 0; all.Len() < 5<<20; i++ {
		line := fmt.Appendf(nil, "line %d of a chatty tool\n", i)
		all.Write(line)
		_, _ = c.Write(line)
	}
	got := c.Bytes()
	want := all.Bytes()[all.Len()-overflowTail:]
	if !bytes.Equal(got, want) {
		t.Fatalf("kept %d bytes ending %q, want the last %d ending %q", len(got), tail(got, 40), len(want), tail(want, 40))
	}
	if cap(c.buf) > 1<<20 || cap(c.tail) > overflowTail {
		t.Fatalf("holds %d + %d bytes", cap(c.buf), cap(c.tail))
	}
	var tooLarge *OutputTooLargeError
	if err := c.err("stdout"); !errors.As(err, &tooLarge) || tooLarge.Bytes != int64(all.Len()) ||
		!strings.Contains(err.Error(), "shorten the tool's output") {
		t.Fatalf("err = %v", err)
	}
}

func TestSystemExecutorBoundsAChattyTool(t *testing.T) {
	// 40 MiB on stdout: the executor keeps the end and fails the command, naming why.
	e := &SystemExecutor{Master: "m"}
	stdout, _, err := e.Run(context.Background(), runplan.Node{Name: "m"},
		Command{Argv: []string{"sh", "-c", "head -c 41943040 /dev/zero | tr '\\0' x; echo; echo the end"}})
	var tooLarge *OutputTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Stream != "stdout" || tooLarge.Bytes != 40<<20+9 {
		t.Fatalf("err = %v, want an OutputTooLargeError of stdout, 40 MiB and 9 bytes", err)
	}
	if len(stdout) != overflowTail || !strings.HasSuffix(string(stdout), "x\nthe end\n") {
		t.Fatalf("kept %d bytes ending %q, want the last %d", len(stdout), tail(stdout, 20), overflowTail)
	}
}
