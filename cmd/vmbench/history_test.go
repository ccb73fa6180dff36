package main

import (
	"strings"
	"testing"
)

// The history verb is wired: records from stdin reach its body and its CSV comes out.
func TestHistoryVerb(t *testing.T) {
	line := `{"suite":"nightly-a","scheduled":"2026-11-01T02:00:00Z","baseline":"pods","metrics":[{"benchmark":"stream","platform":"pods","metric":"Triad_MBps","n":3,"samples":3,"meanLog":4.5}]}`
	r := runCLI(line+"\n", "history", "-f", "-", "-o", "csv")
	want := "suite,scheduled,finished,benchmark,platform,metric,n,meanLog,varLog,ratio,low,high\n" +
		"nightly-a,2026-11-01T02:00:00Z,,stream,pods,Triad_MBps,3,4.5,,,,\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", r.code, r.stderr, r.stdout, want)
	}
	if h := runCLI("", "help"); !strings.Contains(h.stdout, "history (<schedule>") {
		t.Errorf("help does not list history:\n%s", h.stdout)
	}
}
