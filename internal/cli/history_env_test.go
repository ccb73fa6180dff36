package cli

import (
	"strings"
	"testing"
)

// vmbench history shows a new tag of the runner image as an environment change even when the tag
// names the digest the previous record ran, and a new digest under the same tag.
func TestHistoryTextShowsTheRunnerImageTagAndDigest(t *testing.T) {
	records := syntheticHistory(3, -1, 1, -1)
	refs := []string{"registry.example/vmbench-runner:a", "registry.example/vmbench-runner:b", "registry.example/vmbench-runner:b"}
	digests := []string{"sha256:1", "sha256:1", "sha256:2"}
	for i := range records {
		records[i].Environments[0].RunnerImageRef = refs[i]
		records[i].Environments[0].RunnerImage = "registry.example/vmbench-runner@" + digests[i]
	}
	code, out, stderr := runHistory("nightly", "-f", writeHistoryFile(t, records))
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	want := "environment changes:\n" +
		"  nightly-01: Container runner image ref registry.example/vmbench-runner:a → registry.example/vmbench-runner:b\n" +
		"  nightly-02: Container runner image registry.example/vmbench-runner@sha256:1 → registry.example/vmbench-runner@sha256:2\n"
	if !strings.Contains(out, want) {
		t.Errorf("output:\n%s\nwant it to hold:\n%s", out, want)
	}
}
