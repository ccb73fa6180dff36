package platform

import (
	"bytes"
	"testing"
)

// Each schedule's history key is its own, unrelated to the runs' keys, and no key is derived from a
// master key too short or for an unknown schedule.
func TestHistoryKey(t *testing.T) {
	m := MasterKey(bytes.Repeat([]byte("m"), MasterKeySize))
	a, err := m.HistoryKey("uid-a")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.HistoryKey("uid-b")
	again, _ := m.HistoryKey("uid-a")
	run, _ := m.runKey("uid-a", "run")
	if bytes.Equal(a, b) || !bytes.Equal(a, again) || bytes.Equal(a, run) || len(a) != 32 {
		t.Errorf("history keys: a %x, b %x, a again %x, a run's key %x; want a stable 32-byte key per schedule", a, b, again, run)
	}
	if _, err := MasterKey("short").HistoryKey("uid-a"); err == nil {
		t.Error("a short master key derived a history key")
	}
	if _, err := m.HistoryKey(""); err == nil {
		t.Error("a history key was derived for no schedule UID")
	}
}
