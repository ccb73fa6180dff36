package frame

import (
	"bytes"
	"strings"
	"testing"
)

// Protects JoinCut: a frame whose lines two logs hold between them (a serial console before and
// after a live migration) is assembled when they make it whole and authentic, and only then.
func TestJoinCut(t *testing.T) {
	key := []byte("key")
	var buf bytes.Buffer
	payload := bytes.Repeat([]byte("sample "), 250) // 2336 base64 characters: 3 chunks
	if err := Write(&buf, key, "run-s-7", payload, 1); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	if len(lines) != 5 { // header, 3 data lines, and the empty rest
		t.Fatalf("frame has %d lines, want a header and 3 data lines", len(lines)-1)
	}
	scan := func(log string) Failure {
		s := ScanAll(strings.NewReader("noise\n"+log), func(string) []byte { return key })
		if len(s.Failures) != 1 || !s.Failures[0].Incomplete {
			t.Fatalf("log %q: failures %+v, want one incomplete message", log, s.Failures)
		}
		return s.Failures[0]
	}
	source := scan(lines[0] + lines[1])                   // the end of the source's log
	target := scan(lines[2][len(lines[2])/2:] + lines[3]) // the target's: chunk 2 cut, chunk 3 whole
	if _, err := JoinCut(key, source, target); err == nil || !strings.Contains(err.Error(), "chunk 2 of 3") {
		t.Errorf("chunk 2 cut in both logs: err %v, want chunk 2 of 3 named", err)
	}
	target = scan(lines[2] + lines[3])
	d, err := JoinCut(key, source, target)
	if err != nil || d.ID != "run-s-7" || !bytes.Equal(d.Payload, payload) {
		t.Errorf("joined = %s, %v; want the whole message", d.ID, err)
	}
	if _, err := JoinCut([]byte("another key"), source, target); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Errorf("under another key: err %v, want a checksum mismatch", err)
	}
	if _, err := JoinCut(key, source); err == nil {
		t.Error("one log alone joined a message")
	}
}
