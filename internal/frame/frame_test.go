package frame

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var testKey = []byte("suite-token-0123456789")

func write(t *testing.T, id string, msg []byte, repeat int) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, testKey, id, msg, repeat); err != nil {
		t.Fatalf("Write(%s): %v", id, err)
	}
	return b.String()
}

func scan(t *testing.T, log string) ([]Decoded, error) {
	t.Helper()
	got, err := Scan(strings.NewReader(log), testKey)
	return got, err
}

func wantMessages(t *testing.T, got []Decoded, want ...Decoded) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d messages %v, want %d", len(got), ids(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i].ID || !bytes.Equal(got[i].Payload, want[i].Payload) {
			t.Errorf("message %d = %s %q, want %s %q", i, got[i].ID, got[i].Payload, want[i].ID, want[i].Payload)
		}
	}
}

func ids(ds []Decoded) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestRoundTrip(t *testing.T) {
	payloads := map[string][]byte{
		"run-1": []byte(`{"kind":"started"}`),
		"run-2": {},
		"run-3": bytes.Repeat([]byte{0, 0xff, '\n', '\r', ' '}, 300),
	}
	var log strings.Builder
	for _, id := range []string{"run-1", "run-2", "run-3"} {
		log.WriteString(write(t, id, payloads[id], 1))
	}
	got, err := scan(t, log.String())
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got,
		Decoded{"run-1", payloads["run-1"]},
		Decoded{"run-2", payloads["run-2"]},
		Decoded{"run-3", payloads["run-3"]})
}

func TestLineFormat(t *testing.T) {
	out := write(t, "r-1", []byte("hello"), 1)
	ls := lines(out)
	if len(ls) != 2 {
		t.Fatalf("want header and one data line, got %q", out)
	}
	h := strings.Fields(ls[0])
	if len(h) != 6 || h[0] != Marker || h[2] != "H" || h[3] != "r-1" || h[4] != "1" || len(h[5]) != 64 {
		t.Errorf("header line %q", ls[0])
	}
	d := strings.Fields(ls[1])
	if len(d) != 6 || d[0] != Marker || d[2] != "D" || d[3] != "r-1" || d[4] != "1/1" || d[5] != "aGVsbG8=" {
		t.Errorf("data line %q", ls[1])
	}
}

func TestNoisePrefixesAndCRLF(t *testing.T) {
	var log strings.Builder
	for i, l := range lines(write(t, "run-7", []byte("payload with noise"), 1)) {
		prefixes := []string{"2026-11-22T04:00:00.123456789Z stdout F ", "[   12.345678] ", "\x1b[0m\x00garbage:"}
		fmt.Fprintf(&log, "%s%s\r\n", prefixes[i%len(prefixes)], l)
	}
	got, err := scan(t, log.String())
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"run-7", []byte("payload with noise")})
}

func TestInterleavedUnrelatedLines(t *testing.T) {
	a := lines(write(t, "run-1", bytes.Repeat([]byte("a"), 2000), 1))
	b := lines(write(t, "run-2", []byte("second"), 1))
	var log strings.Builder
	log.WriteString("Welcome to Debian\nlogin: \n")
	// Interleave the lines of two messages with each other and with unrelated text that
	// mentions the marker without being a frame line.
	for i := 0; i < len(a) || i < len(b); i++ {
		if i < len(a) {
			log.WriteString(a[i] + "\n")
		}
		log.WriteString("runner: sysbench-cpu on node01 VMBENCH1 is the marker\n")
		if i < len(b) {
			log.WriteString(b[i] + "\n")
		}
	}
	got, err := scan(t, log.String())
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"run-1", bytes.Repeat([]byte("a"), 2000)}, Decoded{"run-2", []byte("second")})
}

// garble changes one character in the middle of every line, as a noisy serial console would.
func garble(s string) string {
	var out strings.Builder
	for n, l := range lines(s) {
		b := []byte(l)
		// Hit the ID (just after "VMBENCH1 <crc> H ") on even lines and the value on odd ones.
		i := len(Marker) + 13
		if n%2 == 1 {
			i = len(b) - 5
		}
		b[i] ^= 0x01
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.String()
}

func TestRepeatWithOneCopyGarbled(t *testing.T) {
	msg := bytes.Repeat([]byte("0123456789"), 250)
	one := write(t, "run-3", msg, 1)
	if two := write(t, "run-3", msg, 2); two != one+one {
		t.Fatalf("repeat 2 must write the message twice")
	}
	for name, log := range map[string]string{
		"first copy garbled":  garble(one) + one,
		"second copy garbled": one + garble(one),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := scan(t, log)
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			wantMessages(t, got, Decoded{"run-3", msg})
		})
	}
}

func TestChunksFromDifferentCopies(t *testing.T) {
	msg := bytes.Repeat([]byte("xyz"), 1000)
	copy1 := lines(write(t, "run-4", msg, 1))
	copy2 := lines(write(t, "run-4", msg, 1))
	// Each copy loses a different chunk; together they hold all.
	copy1[2] = copy1[2][:len(copy1[2])-3] + "!!!"
	copy2[3] = ""
	got, err := scan(t, strings.Join(copy1, "\n")+"\n"+strings.Join(copy2, "\n"))
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"run-4", msg})
}

func TestGluedLines(t *testing.T) {
	msg := bytes.Repeat([]byte("glue"), 500)
	ls := lines(write(t, "run-5", msg, 1))
	// A lost newline glues two lines together: both must still be read.
	log := ls[0] + "\n" + ls[1] + ls[2] + "\n" + strings.Join(ls[3:], "\n")
	got, err := scan(t, log)
	if len(got) == 1 && err == nil {
		t.Fatalf("a swallowed line cannot be recovered, want an error")
	}
	if err == nil || !strings.Contains(err.Error(), "frame run-5: chunk 1 of") || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("err = %v, want chunk 1 corrupt", err)
	}
	// The line glued after it parses: with a second intact copy of line 1 the message is whole.
	got, err = scan(t, log+"\n"+ls[1])
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"run-5", msg})
}

func TestWrongKey(t *testing.T) {
	log := write(t, "run-1", []byte("secret results"), 2)
	got, err := Scan(strings.NewReader(log), []byte("another suite's token"))
	if len(got) != 0 {
		t.Fatalf("got %v with the wrong key", ids(got))
	}
	if err == nil || err.Error() != "frame run-1: checksum mismatch" {
		t.Fatalf("err = %v, want checksum mismatch", err)
	}
}

// Each message is checked under the key its ID asks for: one writer's message verifies under its
// own key only, and a message with no key is reported, not dropped silently.
func TestScanKeysPerID(t *testing.T) {
	other := []byte("another run's token")
	var log bytes.Buffer
	log.WriteString(write(t, "mine-1", []byte("a"), 1))
	if err := Write(&log, other, "theirs-1", []byte("b"), 1); err != nil {
		t.Fatal(err)
	}
	log.WriteString(write(t, "nobody-1", []byte("c"), 1))
	keyFor := func(id string) []byte {
		switch {
		case strings.HasPrefix(id, "mine-"):
			return testKey
		case strings.HasPrefix(id, "theirs-"):
			return other
		}
		return nil
	}
	got, err := ScanKeys(bytes.NewReader(log.Bytes()), keyFor)
	wantMessages(t, got, Decoded{ID: "mine-1", Payload: []byte("a")}, Decoded{ID: "theirs-1", Payload: []byte("b")})
	if err == nil || err.Error() != "frame nobody-1: no key" {
		t.Errorf("err = %v, want frame nobody-1: no key", err)
	}
	// Under one key, the other writer's message fails.
	got, err = Scan(bytes.NewReader(log.Bytes()), testKey)
	wantMessages(t, got, Decoded{ID: "mine-1", Payload: []byte("a")}, Decoded{ID: "nobody-1", Payload: []byte("c")})
	if err == nil || err.Error() != "frame theirs-1: checksum mismatch" {
		t.Errorf("err = %v, want frame theirs-1: checksum mismatch", err)
	}
}

func TestTamperedPayload(t *testing.T) {
	ls := lines(write(t, "run-1", []byte(`{"value":1}`), 1))
	f := strings.Fields(ls[1])
	// A forger who recomputes the CRC still cannot produce the HMAC.
	var b bytes.Buffer
	writeLine(&b, kindData, "run-1", "1/1", "eyJ2YWx1ZSI6OX0=")
	if f[5] == strings.Fields(b.String())[5] {
		t.Fatal("test payloads must differ")
	}
	got, err := scan(t, ls[0]+"\n"+b.String())
	if len(got) != 0 || err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("got %v, %v; want checksum mismatch", ids(got), err)
	}
}

func TestMissingChunk(t *testing.T) {
	good := write(t, "run-1", []byte("fine"), 1)
	ls := lines(write(t, "run-2", bytes.Repeat([]byte("m"), 2400), 1))
	if len(ls) != 5 {
		t.Fatalf("want 4 chunks, got %d lines", len(ls))
	}
	broken := append(append([]string{}, ls[:2]...), ls[3:]...)
	got, err := scan(t, good+strings.Join(broken, "\n"))
	wantMessages(t, got, Decoded{"run-1", []byte("fine")})
	if err == nil || err.Error() != "frame run-2: chunk 2 of 4 missing" {
		t.Fatalf("err = %v", err)
	}
}

func TestMissingHeader(t *testing.T) {
	ls := lines(write(t, "run-9", []byte("x"), 1))
	got, err := scan(t, ls[1])
	if len(got) != 0 || err == nil || err.Error() != "frame run-9: header missing" {
		t.Fatalf("got %v, %v", ids(got), err)
	}
}

func TestTruncatedLog(t *testing.T) {
	first := write(t, "run-1", []byte("complete"), 1)
	second := write(t, "run-2", bytes.Repeat([]byte("t"), 3000), 1)
	// The log ends in the middle of the last data line (a VM powered off, a pod was killed).
	log := first + second[:len(second)-100]
	got, err := scan(t, log)
	wantMessages(t, got, Decoded{"run-1", []byte("complete")})
	if err == nil || err.Error() != "frame run-2: chunk 5 of 5 corrupt" {
		t.Fatalf("err = %v", err)
	}
	// Cut after the header only: every chunk is missing, which the error abbreviates.
	got, err = scan(t, first+lines(second)[0])
	wantMessages(t, got, Decoded{"run-1", []byte("complete")})
	want := "frame run-2: chunk 1 of 5 missing, chunk 2 of 5 missing, chunk 3 of 5 missing, ..."
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
}

func TestOneErrorPerBadID(t *testing.T) {
	a := lines(write(t, "run-1", []byte("a"), 1))
	b := write(t, "run-2", []byte("b"), 1)
	c := lines(write(t, "run-3", bytes.Repeat([]byte("c"), 1000), 1))
	log := a[0] + "\n" + b + c[0] + "\n" + c[2] + "\n"
	got, err := scan(t, log)
	wantMessages(t, got, Decoded{"run-2", []byte("b")})
	want := "frame run-1: chunk 1 of 1 missing\nframe run-3: chunk 1 of 2 missing"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %q, want %q", err, want)
	}
}

func TestHugeMessage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	msg := make([]byte, 3<<20)
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	log := write(t, "run-big", msg, 2)
	for _, l := range lines(log) {
		if len(l) > 1000 {
			t.Fatalf("line of %d bytes", len(l))
		}
	}
	if n := strings.Count(log, "\n"); n < 2*5000 {
		t.Fatalf("only %d lines for 3 MiB", n)
	}
	got, err := scan(t, log)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"run-big", msg})
}

func TestDeduplicatedInOrderOfFirstAppearance(t *testing.T) {
	a := write(t, "b-2", []byte("two"), 1)
	b := write(t, "a-1", []byte("one"), 1)
	got, err := scan(t, a+b+a+b)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"b-2", []byte("two")}, Decoded{"a-1", []byte("one")})
}

func TestEmptyLog(t *testing.T) {
	for _, log := range []string{"", "\n\n", "no frames here\r\n"} {
		got, err := scan(t, log)
		if len(got) != 0 || err != nil {
			t.Errorf("Scan(%q) = %v, %v", log, got, err)
		}
	}
}

type failingReader struct{ data *strings.Reader }

func (r failingReader) Read(p []byte) (int, error) {
	n, err := r.data.Read(p)
	if err != nil {
		return n, errors.New("connection reset")
	}
	return n, nil
}

func TestReadErrorKeepsMessages(t *testing.T) {
	log := write(t, "run-1", []byte("kept"), 1)
	got, err := Scan(failingReader{strings.NewReader(log)}, testKey)
	wantMessages(t, got, Decoded{"run-1", []byte("kept")})
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v", err)
	}
}

func TestWriteRejectsBadArguments(t *testing.T) {
	for name, call := range map[string]func() error{
		"empty key":   func() error { return Write(&bytes.Buffer{}, nil, "id", nil, 1) },
		"empty id":    func() error { return Write(&bytes.Buffer{}, testKey, "", nil, 1) },
		"id w/ space": func() error { return Write(&bytes.Buffer{}, testKey, "a b", nil, 1) },
		"long id":     func() error { return Write(&bytes.Buffer{}, testKey, strings.Repeat("x", MaxIDLen+1), nil, 1) },
		"repeat 0":    func() error { return Write(&bytes.Buffer{}, testKey, "id", nil, 0) },
	} {
		if call() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Scan(strings.NewReader(""), nil); err == nil {
		t.Error("Scan with an empty key: no error")
	}
}

func FuzzScan(f *testing.F) {
	var seed bytes.Buffer
	_ = Write(&seed, testKey, "run-1", []byte(`{"kind":"done"}`), 2)
	_ = Write(&seed, testKey, "run-2", bytes.Repeat([]byte("z"), 1700), 1)
	f.Add(seed.Bytes())
	f.Add([]byte(garble(seed.String())))
	f.Add([]byte("VMBENCH1 00000000 H x 0 " + strings.Repeat("0", 64)))
	f.Add([]byte("VMBENCH1 VMBENCH1 D x 1/999999999 AAAA\nVMBENCH1"))
	f.Fuzz(func(t *testing.T, log []byte) {
		got, _ := Scan(bytes.NewReader(log), testKey)
		seen := map[string]bool{}
		for _, d := range got {
			if seen[d.ID] {
				t.Fatalf("duplicate ID %s", d.ID)
			}
			seen[d.ID] = true
			// Whatever Scan accepts must survive another round trip unchanged.
			var b bytes.Buffer
			if err := Write(&b, testKey, d.ID, d.Payload, 1); err != nil {
				t.Fatalf("accepted ID %q that Write rejects: %v", d.ID, err)
			}
			again, err := Scan(&b, testKey)
			if err != nil || len(again) != 1 || !bytes.Equal(again[0].Payload, d.Payload) {
				t.Fatalf("round trip of %q: %v %v", d.ID, again, err)
			}
		}
	})
}

func TestLineFullOfMarkersIsCheap(t *testing.T) {
	// Linear work is a fraction of a second; quadratic work would take minutes, so the bound is
	// loose enough for a loaded machine.
	log := strings.Repeat(Marker+" ", 100000) + "\n" + write(t, "run-1", []byte("ok"), 1)
	start := time.Now()
	got, err := scan(t, log)
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	wantMessages(t, got, Decoded{"run-1", []byte("ok")})
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("Scan took %v on a line of 100000 markers", d)
	}
}
