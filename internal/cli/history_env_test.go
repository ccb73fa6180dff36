package cli

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/history"
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
		"  nightly-01: runnerImageRef: registry.example/vmbench-runner:a → registry.example/vmbench-runner:b\n" +
		"  nightly-02: runnerImage: registry.example/vmbench-runner@sha256:1 → registry.example/vmbench-runner@sha256:2\n"
	if !strings.Contains(out, want) {
		t.Errorf("output:\n%s\nwant it to hold:\n%s", out, want)
	}
}

// vmbench history lists exactly the environment changes the manager's findings and its
// environment-change metric are built on: for every string field of a run's and a node's
// environment, changed at one record, the CLI's lines are history.EnvironmentChanges between
// consecutive Complete records, and its latest is history.LatestEnvironmentChange's. A Failed record
// with yet another value in between is passed over, as the manager passes it over. This fails if the
// CLI compares its own list of fields, names them its own way, or counts records the manager skips.
func TestHistoryEnvironmentChangesAreTheManagers(t *testing.T) {
	type edit struct {
		name string
		set  func(e *vmbenchv1.RunEnvironment, v string)
	}
	var edits []edit
	runType := reflect.TypeOf(vmbenchv1.RunEnvironment{})
	for i := range runType.NumField() {
		if f := runType.Field(i); f.Type.Kind() == reflect.String {
			edits = append(edits, edit{f.Name, func(e *vmbenchv1.RunEnvironment, v string) {
				reflect.ValueOf(e).Elem().Field(i).SetString(v)
			}})
		}
	}
	nodeType := reflect.TypeOf(vmbenchv1.NodeEnvironment{})
	for i := range nodeType.NumField() {
		if f := nodeType.Field(i); f.Type.Kind() == reflect.String {
			edits = append(edits, edit{"Nodes." + f.Name, func(e *vmbenchv1.RunEnvironment, v string) {
				reflect.ValueOf(&e.Nodes[0]).Elem().Field(i).SetString(v)
			}})
		}
	}
	if len(edits) < 15 {
		t.Fatalf("%d string fields found in the environment types, want at least 15: the reflection walk is broken", len(edits))
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			records := syntheticHistory(6, -1, 1, -1)
			for i := range records {
				for j := range records[i].Environments {
					env := &records[i].Environments[j]
					e.set(env, "old-"+string(env.Platform))
					if i >= 4 {
						e.set(env, "new-"+string(env.Platform))
					}
				}
			}
			// A Failed record between old and new, with a third value, which the manager passes over.
			records[3].Phase = vmbenchv1.SuiteFailed
			e.set(&records[3].Environments[1], "failed")

			var want []string
			prev := -1
			for i, r := range records {
				if r.Phase != vmbenchv1.SuiteComplete || len(r.Environments) == 0 {
					continue
				}
				if prev >= 0 {
					for _, c := range history.EnvironmentChanges(records[prev].Environments, r.Environments) {
						want = append(want, r.Suite+": "+c)
					}
				}
				prev = i
			}
			code, out, stderr := runHistory("nightly", "-f", writeHistoryFile(t, records))
			if code != ExitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			got := environmentLines(t, out)
			if !slices.Equal(got, want) {
				t.Fatalf("CLI environment changes %q, the manager's %q", got, want)
			}
			latest, _, ok := history.LatestEnvironmentChange(records)
			switch {
			case ok != (len(got) > 0):
				t.Errorf("CLI lists %d changes, LatestEnvironmentChange ok=%t", len(got), ok)
			case ok && !strings.HasPrefix(got[len(got)-1], latest.Suite+": "):
				t.Errorf("CLI's latest change %q, the manager's at %s", got[len(got)-1], latest.Suite)
			}
		})
	}
}

// environmentLines are the lines under "environment changes:" in the text output, none for "none".
func environmentLines(t *testing.T, out string) []string {
	t.Helper()
	if strings.Contains(out, "\nenvironment changes: none\n") {
		return nil
	}
	_, rest, ok := strings.Cut(out, "\nenvironment changes:\n")
	if !ok {
		t.Fatalf("no environment changes in:\n%s", out)
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "  ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	return lines
}
