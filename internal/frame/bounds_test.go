package frame

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// lineSource is a log of size bytes made by next, one line at a time, never held whole: the
// tests below measure what Scan holds, not what the test does.
type lineSource struct {
	next func(i int) string
	size int
	i    int
	buf  []byte
	read int
	// sample is called after every sampleEvery bytes.
	sample      func()
	sampleEvery int
	sinceSample int
}

func (l *lineSource) Read(p []byte) (int, error) {
	if len(l.buf) == 0 {
		if l.read >= l.size {
			return 0, io.EOF
		}
		l.buf = append(l.buf[:0], l.next(l.i)...)
		l.i++
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	l.read += n
	l.sinceSample += n
	if l.sample != nil && l.sinceSample >= l.sampleEvery {
		l.sinceSample = 0
		l.sample()
	}
	return n, nil
}

// scanHeap scans the log of next up to size bytes and returns what Scan returned and the most
// the live heap grew above where it started, sampled after a collection every 4 MiB of log.
func scanHeap(t *testing.T, size int, next func(i int) string) ([]Decoded, uint64, error) {
	t.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := uint64(0)
	src := &lineSource{next: next, size: size, sampleEvery: 4 << 20}
	src.sample = func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapAlloc > base && ms.HeapAlloc-base > peak {
			peak = ms.HeapAlloc - base
		}
	}
	got, err := Scan(src, testKey)
	src.sample()
	return got, peak, err
}

func wantLimit(t *testing.T, err error, what, limit string) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want a *LimitError", err)
	}
	if le.What != what || le.Limit != limit {
		t.Fatalf("LimitError = %q / %q, want %q / %q", le.What, le.Limit, what, limit)
	}
	if !strings.Contains(err.Error(), "shorten the tool's output") {
		t.Fatalf("the error says not what to do: %v", err)
	}
}

func TestLongLineIsReadInWindows(t *testing.T) {
	// 64 MiB on one line: noise, and frames glued to it every few hundred KiB. Every frame is
	// found, wherever a window boundary falls, and the line is never held whole.
	msgs := map[int]string{}
	frameAt := func(i int) string {
		if i%300 != 7 {
			return strings.Repeat("x", 999) + " "
		}
		id := fmt.Sprintf("run-%d", i)
		msgs[i] = id
		return strings.ReplaceAll(write(t, id, []byte(id), 1), "\n", " ")
	}
	got, peak, err := scanHeap(t, 64<<20, frameAt)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	if len(got) != len(msgs) || len(got) < 200 {
		t.Fatalf("got %d messages, want %d", len(got), len(msgs))
	}
	for _, d := range got {
		if string(d.Payload) != d.ID {
			t.Fatalf("message %s = %q", d.ID, d.Payload)
		}
	}
	if peak > 8<<20 {
		t.Fatalf("the live heap grew by %d MiB reading one long line, want under 8", peak>>20)
	}
}

func TestTooManyMessages(t *testing.T) {
	// 64 MiB of intact header lines, each of its own ID: anyone can compute a CRC.
	mac := strings.Repeat("0", 64)
	header := func(i int) string {
		var b bytes.Buffer
		writeLine(&b, kindHeader, fmt.Sprintf("run-x-%d", i), "1", mac)
		return b.String()
	}
	got, peak, err := scanHeap(t, 64<<20, header)
	wantLimit(t, err, "the log", fmt.Sprintf("%d distinct messages", MaxMessages))
	if len(got) != 0 {
		t.Fatalf("got %d messages", len(got))
	}
	if peak > 16<<20 {
		t.Fatalf("the live heap grew by %d MiB, want under 16", peak>>20)
	}
	if n := strings.Count(err.Error(), "\n"); n > maxErrors+2 {
		t.Fatalf("%d lines of errors, want at most %d", n+1, maxErrors+3)
	}
	if !strings.Contains(err.Error(), "more messages failed in the same log") {
		t.Fatalf("the error does not count the errors left out: %v", err)
	}
}

func TestMessageTooLarge(t *testing.T) {
	// One ID with MaxChunks distinct intact pieces of ChunkChars each: 50 MiB of one message.
	piece := strings.Repeat("A", ChunkChars)
	data := func(i int) string {
		var b bytes.Buffer
		writeLine(&b, kindData, "run-1-a-1", fmt.Sprintf("%d/%d", i%MaxChunks+1, MaxChunks), piece)
		return b.String()
	}
	ok := write(t, "run-1-a-2", []byte("small"), 1)
	got, peak, err := scanHeap(t, 64<<20, func(i int) string {
		if i == 0 {
			return ok
		}
		return data(i)
	})
	wantLimit(t, err, "message run-1-a-1", "8 MiB of frames")
	wantMessages(t, got, Decoded{"run-1-a-2", []byte("small")})
	if peak > 24<<20 {
		t.Fatalf("the live heap grew by %d MiB, want under 24", peak>>20)
	}
}

func TestLogTooLarge(t *testing.T) {
	// Messages of 6 MiB each, each within MaxMessageBytes: the third passes MaxLogBytes.
	piece := strings.Repeat("B", ChunkChars)
	per := 6 << 20 / ChunkChars
	data := func(i int) string {
		var b bytes.Buffer
		writeLine(&b, kindData, fmt.Sprintf("run-1-a-%d", i/per), fmt.Sprintf("%d/%d", i%per+1, per), piece)
		return b.String()
	}
	_, peak, err := scanHeap(t, 64<<20, data)
	wantLimit(t, err, "the log", "16 MiB of frames")
	if peak > 32<<20 {
		t.Fatalf("the live heap grew by %d MiB, want under 32", peak>>20)
	}
}

func TestRepeatedIDKeepsFewCandidates(t *testing.T) {
	// One ID reused for ever different headers and pieces: a few of each are kept.
	var log bytes.Buffer
	for i := range 100 {
		writeLine(&log, kindHeader, "run-1", "1", fmt.Sprintf("%064x", i))
		writeLine(&log, kindData, "run-1", "1/1", fmt.Sprintf("%04d", i))
	}
	s := scanner{messages: map[string]*message{}}
	if err := s.read(strings.NewReader(log.String())); err != nil {
		t.Fatal(err)
	}
	m := s.messages["run-1"]
	if len(m.headers) != maxCandidates || len(m.pieces[1][1]) != maxCandidates {
		t.Fatalf("kept %d headers and %d pieces, want %d each", len(m.headers), len(m.pieces[1][1]), maxCandidates)
	}
}

func TestCorruptLinesAreCapped(t *testing.T) {
	var log strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&log, "%s 00000000 D run-%d 1/1 AAAA\n", Marker, i)
	}
	s := scanner{messages: map[string]*message{}}
	if err := s.read(strings.NewReader(log.String())); err != nil {
		t.Fatal(err)
	}
	if len(s.corrupt) != maxCorrupt {
		t.Fatalf("kept %d garbled lines, want %d", len(s.corrupt), maxCorrupt)
	}
}

func TestErrorsAreCapped(t *testing.T) {
	var log strings.Builder
	for i := range 50 {
		log.WriteString(lines(write(t, fmt.Sprintf("run-%d", i), []byte("x"), 1))[0] + "\n")
	}
	_, err := scan(t, log.String())
	if err == nil {
		t.Fatal("no error")
	}
	parts := strings.Split(err.Error(), "\n")
	if len(parts) != maxErrors+1 || parts[maxErrors] != "frame: 40 more messages failed in the same log" {
		t.Fatalf("errors = %q", parts)
	}
}
