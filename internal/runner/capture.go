package runner

import (
	"fmt"
)

// MaxOutputBytes bounds what the runner keeps of one stream (stdout or stderr) of one command: the
// tools' outputs it parses are far smaller (an iperf3 JSON report of an hour at one interval per
// second is about 5 MiB), and a chatty tool must not take the runner's memory, and with it the run.
const MaxOutputBytes = 16 << 20

// overflowTail is how much of the end of a stream past MaxOutputBytes is kept, for the error and
// the raw output people read.
const overflowTail = 64 << 10

// capture is an io.Writer that keeps a command's stream up to a limit. Past it, only the last
// overflowTail bytes are kept and the stream is marked as too large, so that the command fails
// with a named cause rather than the runner running out of memory.
type capture struct {
	limit int
	buf   []byte
	// total counts every byte written; tail is a ring of the last overflowTail bytes once total
	// passed limit, and end where the next byte goes in it.
	total int64
	tail  []byte
	end   int
}

func newCapture(limit int) *capture { return &capture{limit: limit} }

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	if c.tail == nil && len(c.buf)+len(p) <= c.limit {
		c.buf = append(c.buf, p...)
		return n, nil
	}
	if c.tail == nil {
		// The stream passes the limit: from now on only its end is kept.
		c.tail = make([]byte, 0, overflowTail)
		c.ring(c.buf)
		c.buf = nil
	}
	c.ring(p)
	return n, nil
}

func (c *capture) ring(p []byte) {
	if len(p) >= overflowTail {
		c.tail = append(c.tail[:0], p[len(p)-overflowTail:]...)
		c.end = 0
		return
	}
	for len(p) > 0 {
		if len(c.tail) < overflowTail {
			k := min(len(p), overflowTail-len(c.tail))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(c.tail[c.end:], p)
		c.end = (c.end + k) % overflowTail
		p = p[k:]
	}
}

// Bytes is the whole stream, or its last overflowTail bytes when it passed the limit.
func (c *capture) Bytes() []byte {
	if c.tail == nil {
		return c.buf
	}
	if len(c.tail) < overflowTail {
		return c.tail
	}
	return append(append([]byte{}, c.tail[c.end:]...), c.tail[:c.end]...)
}

// err says that the stream passed the limit, or is nil.
func (c *capture) err(stream string) error {
	if c.tail == nil {
		return nil
	}
	return &OutputTooLargeError{Stream: stream, Bytes: c.total, Limit: c.limit}
}

// OutputTooLargeError is a command whose output passed MaxOutputBytes: only its end was kept, so it
// cannot be parsed.
type OutputTooLargeError struct {
	Stream string
	Bytes  int64
	Limit  int
}

func (e *OutputTooLargeError) Error() string {
	return fmt.Sprintf("its %s was %d MiB, more than the %d MiB the runner keeps of one command, so only its end was kept "+
		"and it is not parsed: shorten the tool's output (a shorter duration, longer report intervals, fewer repetitions)",
		e.Stream, e.Bytes>>20, e.Limit>>20)
}
