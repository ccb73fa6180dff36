package history

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A signed line verifies under its key only, any change to it fails, a line without a signature is
// told apart, and readers without the key (vmbench history) still read it as a record.
func TestSignedLines(t *testing.T) {
	key, other := []byte("schedule history key of one UID"), []byte("schedule history key of another")
	rec := Record{Suite: "nightly-29000000", UID: "u1", Scheduled: time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC), Phase: "Complete",
		Metrics: []MetricRecord{{Benchmark: "cpu", Platform: "vm", Metric: "ops", N: 3, Samples: 6}}}
	line, err := SignLine(key, rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := VerifyLine(key, line)
	if err != nil || got.Suite != rec.Suite || got.UID != rec.UID || !got.Scheduled.Equal(rec.Scheduled) || len(got.Metrics) != 1 {
		t.Fatalf("VerifyLine(SignLine(rec)) = %+v, %v; want the record back", got, err)
	}
	parsed, err := ParseLines(line + "\n")
	if err != nil || len(parsed) != 1 || parsed[0].Suite != rec.Suite {
		t.Errorf("ParseLines of a signed line = %+v, %v; want the record, as vmbench history reads it", parsed, err)
	}
	unsigned := line[:1] + line[strings.Index(line, `",`)+2:]
	for _, tc := range []struct {
		name, line string
		key        []byte
		want       error
	}{
		{"another schedule's key", line, other, ErrBadSignature},
		{"no key", line, nil, ErrBadSignature},
		{"a changed value", strings.Replace(line, `"n":3`, `"n":30`, 1), key, ErrBadSignature},
		{"a changed time", strings.Replace(line, "2026-11-20", "2099-11-20", 1), key, ErrBadSignature},
		{"a changed signature", line[:10] + string(line[10]^1) + line[11:], key, ErrBadSignature},
		{"a signature that is not hex", line[:8] + strings.Repeat("z", 64) + line[72:], key, ErrBadSignature},
		{"no signature", unsigned, key, ErrUnsigned},
		{"a truncated line", line[:40], key, ErrUnsigned},
		{"empty", "", key, ErrUnsigned},
	} {
		if _, err := VerifyLine(tc.key, tc.line); !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := SignLine(nil, rec); err == nil {
		t.Error("SignLine without a key signed")
	}
}
