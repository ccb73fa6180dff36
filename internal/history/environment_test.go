package history

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestEnvironmentChanges(t *testing.T) {
	base := vmbenchv1.RunEnvironment{Platform: vmbenchv1.PlatformVM, KubeVirtVersion: "v1.7.0", RunnerImage: "r@sha256:1",
		RunnerImageRef: "r:a", MachineType: "pc-q35-rhel9.6.0",
		Nodes: []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.1", CPUModel: "Skylake"}}}
	for _, tt := range []struct {
		name   string
		change func(*vmbenchv1.RunEnvironment)
		want   []string
	}{
		{"nothing", func(*vmbenchv1.RunEnvironment) {}, nil},
		{"another node on the same versions", func(e *vmbenchv1.RunEnvironment) {
			e.Nodes = []vmbenchv1.NodeEnvironment{{Name: "n2", KernelVersion: "6.1", CPUModel: "Skylake"}}
		}, nil},
		{"a new tag of the same image", func(e *vmbenchv1.RunEnvironment) { e.RunnerImageRef = "r:b" },
			[]string{"runnerImageRef: r:a → r:b"}},
		{"a new digest under the same tag", func(e *vmbenchv1.RunEnvironment) { e.RunnerImage = "r@sha256:2" },
			[]string{"runnerImage: r@sha256:1 → r@sha256:2"}},
		{"QEMU's machine type", func(e *vmbenchv1.RunEnvironment) { e.MachineType = "pc-q35-rhel9.8.0" },
			[]string{"machineType: pc-q35-rhel9.6.0 → pc-q35-rhel9.8.0"}},
		{"the node's CPU model", func(e *vmbenchv1.RunEnvironment) {
			e.Nodes = []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.1", CPUModel: "Icelake"}}
		}, []string{"cpuModel: Skylake → Icelake"}},
		{"KubeVirt and the kernel", func(e *vmbenchv1.RunEnvironment) {
			e.KubeVirtVersion = "v1.8.0"
			e.Nodes = []vmbenchv1.NodeEnvironment{{Name: "n1", KernelVersion: "6.8", CPUModel: "Skylake"}}
		}, []string{"kubeVirtVersion: v1.7.0 → v1.8.0", "kernelVersion: 6.1 → 6.8"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			after := base
			after.Nodes = slices.Clone(base.Nodes)
			tt.change(&after)
			if got := EnvironmentChanges([]vmbenchv1.RunEnvironment{base}, []vmbenchv1.RunEnvironment{after}); !slices.Equal(got, tt.want) {
				t.Errorf("EnvironmentChanges() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLatestEnvironmentChange(t *testing.T) {
	env := func(ref string) []vmbenchv1.RunEnvironment {
		return []vmbenchv1.RunEnvironment{{Platform: vmbenchv1.PlatformContainer, RunnerImage: "r@sha256:1", RunnerImageRef: ref}}
	}
	rec := func(suite string, phase vmbenchv1.SuitePhase, envs []vmbenchv1.RunEnvironment) Record {
		return Record{Suite: suite, Phase: phase, Environments: envs}
	}
	for _, tt := range []struct {
		name    string
		records []Record
		want    string
	}{
		{"no record", nil, ""},
		{"one version", []Record{rec("s1", vmbenchv1.SuiteComplete, env("r:a")), rec("s2", vmbenchv1.SuiteComplete, env("r:a"))}, ""},
		{"a tag change", []Record{rec("s1", vmbenchv1.SuiteComplete, env("r:a")), rec("s2", vmbenchv1.SuiteComplete, env("r:b")),
			rec("s3", vmbenchv1.SuiteComplete, env("r:b"))}, "s2"},
		{"the latest of two", []Record{rec("s1", vmbenchv1.SuiteComplete, env("r:a")), rec("s2", vmbenchv1.SuiteComplete, env("r:b")),
			rec("s3", vmbenchv1.SuiteComplete, env("r:c"))}, "s3"},
		{"failed and empty records passed over", []Record{rec("s1", vmbenchv1.SuiteComplete, env("r:a")),
			rec("s2", vmbenchv1.SuiteFailed, env("r:x")), rec("s3", vmbenchv1.SuiteComplete, nil),
			rec("s4", vmbenchv1.SuiteComplete, env("r:a"))}, ""},
		{"compared across a failed record", []Record{rec("s1", vmbenchv1.SuiteComplete, env("r:a")),
			rec("s2", vmbenchv1.SuiteFailed, env("r:b")), rec("s3", vmbenchv1.SuiteComplete, env("r:b"))}, "s3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			latest, changes, ok := LatestEnvironmentChange(tt.records)
			if got := map[bool]string{true: latest.Suite}[ok]; got != tt.want || ok != (len(changes) > 0) {
				t.Errorf("LatestEnvironmentChange() = %q (ok %t, changes %q), want %q", latest.Suite, ok, changes, tt.want)
			}
		})
	}
}

// environmentIgnored are the string fields of RunEnvironment and NodeEnvironment that are not
// versions, with the reason: changing one of them changes no finding. Every other string field must
// be compared, so a field added to the API fails TestEveryEnvironmentFieldIsCompared until it is
// compared or listed here.
var environmentIgnored = map[string]string{
	"RunEnvironment.ID":       "a hash of the other fields",
	"RunEnvironment.Platform": "a record's environments hold both platforms' runs; the platform is not a version",
	"RunEnvironment.Message":  "says what could not be read, not what ran",
	"NodeEnvironment.Name":    "another node on the same versions is the same environment",
}

// apiEnvironmentField is one string field of the API's environment, found by reflection: its Go
// name, its JSON name and how to set it on an environment with one node.
type apiEnvironmentField struct {
	goName, json string
	set          func(*vmbenchv1.RunEnvironment, string)
}

// apiEnvironmentFields lists the string fields of RunEnvironment and of its one node. A field of
// another kind fails the test: it needs a decision of its own.
func apiEnvironmentFields(t *testing.T) []apiEnvironmentField {
	t.Helper()
	var out []apiEnvironmentField
	jsonName := func(f reflect.StructField) string { return strings.Split(f.Tag.Get("json"), ",")[0] }
	runType := reflect.TypeFor[vmbenchv1.RunEnvironment]()
	for i := range runType.NumField() {
		f := runType.Field(i)
		switch {
		case f.Type.Kind() == reflect.String:
			out = append(out, apiEnvironmentField{"RunEnvironment." + f.Name, jsonName(f), func(e *vmbenchv1.RunEnvironment, v string) {
				reflect.ValueOf(e).Elem().Field(i).SetString(v)
			}})
		case f.Name == "Nodes":
			nodeType := f.Type.Elem()
			for j := range nodeType.NumField() {
				nf := nodeType.Field(j)
				if nf.Type.Kind() != reflect.String {
					t.Fatalf("NodeEnvironment.%s is a %s: decide whether EnvironmentChanges compares it", nf.Name, nf.Type)
				}
				out = append(out, apiEnvironmentField{"NodeEnvironment." + nf.Name, jsonName(nf), func(e *vmbenchv1.RunEnvironment, v string) {
					reflect.ValueOf(&e.Nodes[0]).Elem().Field(j).SetString(v)
				}})
			}
		default:
			t.Fatalf("RunEnvironment.%s is a %s: decide whether EnvironmentChanges compares it", f.Name, f.Type)
		}
	}
	return out
}

// oneNodeEnvironment is an environment with one node whose every string field, ignored or not, is
// set, so that a change of one field is the only difference.
func oneNodeEnvironment(t *testing.T, fields []apiEnvironmentField, prefix string) vmbenchv1.RunEnvironment {
	t.Helper()
	e := vmbenchv1.RunEnvironment{Nodes: make([]vmbenchv1.NodeEnvironment, 1)}
	for _, f := range fields {
		f.set(&e, prefix+f.json)
	}
	return e
}

// Every version field of the API counts as a change of the environment, under its JSON name, so
// that a KubeVirt, virt-launcher, containerd, kubelet, OS or kernel upgrade shows in each finding's
// environmentChanges, its ChangeFound event, the boards and `vmbench history` (mutant H1 of
// test-quality-97ef9ca.md drops launcherImageRef). The fields that do not count are listed, with
// their reasons, in environmentIgnored.
func TestEveryEnvironmentFieldIsCompared(t *testing.T) {
	fields := apiEnvironmentFields(t)
	if len(fields) != 16 {
		t.Errorf("%d string fields in RunEnvironment and NodeEnvironment, want 16 (update this count and environmentIgnored together)", len(fields))
	}
	seen := map[string]bool{}
	compared := 0
	for _, f := range fields {
		seen[f.goName] = true
		t.Run(f.goName, func(t *testing.T) {
			before := oneNodeEnvironment(t, fields, "1-")
			after := oneNodeEnvironment(t, fields, "1-")
			f.set(&after, "2-"+f.json)
			got := EnvironmentChanges([]vmbenchv1.RunEnvironment{before}, []vmbenchv1.RunEnvironment{after})
			if reason, ok := environmentIgnored[f.goName]; ok {
				if got != nil {
					t.Errorf("%s is ignored (%s), yet EnvironmentChanges() = %q", f.goName, reason, got)
				}
				return
			}
			compared++
			want := []string{f.json + ": 1-" + f.json + " → 2-" + f.json}
			if !slices.Equal(got, want) {
				t.Errorf("EnvironmentChanges() = %q, want %q", got, want)
			}
		})
	}
	for name := range environmentIgnored {
		if !seen[name] {
			t.Errorf("environmentIgnored names %s, which the API no longer has", name)
		}
	}
	if compared != 12 {
		t.Errorf("%d fields compared, want 12", compared)
	}
}

// A finding keeps at most 8 environment lines of at most 500 bytes each (the CRD allows 8 of 512),
// whatever the records hold: an upgrade that moves 9 fields keeps 8 of them (mutant H2 of
// test-quality-97ef9ca.md removes the cap), and a value of 600 bytes, which a history record written
// by hand can hold, is cut to 497 bytes and "...".
func TestEnvironmentChangesAreBounded(t *testing.T) {
	var fields []apiEnvironmentField
	for _, f := range apiEnvironmentFields(t) {
		if _, ok := environmentIgnored[f.goName]; !ok {
			fields = append(fields, f)
		}
	}
	before := oneNodeEnvironment(t, fields, "1-")

	t.Run("nine fields changed", func(t *testing.T) {
		after := oneNodeEnvironment(t, fields, "1-")
		want := map[string]bool{}
		for _, f := range fields[:9] {
			f.set(&after, "2-"+f.json)
			want[f.json+": 1-"+f.json+" → 2-"+f.json] = true
		}
		got := EnvironmentChanges([]vmbenchv1.RunEnvironment{before}, []vmbenchv1.RunEnvironment{after})
		if len(got) != 8 {
			t.Fatalf("%d lines %q, want 8 of the 9 changes", len(got), got)
		}
		for _, line := range got {
			if !want[line] {
				t.Errorf("line %q is not one of the 9 changes, or is listed twice", line)
			}
			delete(want, line)
		}
	})

	for _, tt := range []struct {
		name      string
		lineBytes int // the line's length before any cut
		wantBytes int
	}{
		{"a line of 500 bytes is kept whole", 500, 500},
		{"a line of 501 bytes is cut", 501, 500},
		{"a value of 600 bytes is cut", len("runnerImage: 1-runnerImage → ") + 600, 500},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prefix := "runnerImage: 1-runnerImage → "
			value := "registry.example/r@sha256:" + strings.Repeat("f", tt.lineBytes-len(prefix)-len("registry.example/r@sha256:"))
			after := oneNodeEnvironment(t, fields, "1-")
			after.RunnerImage = value
			got := EnvironmentChanges([]vmbenchv1.RunEnvironment{before}, []vmbenchv1.RunEnvironment{after})
			if len(got) != 1 {
				t.Fatalf("EnvironmentChanges() = %q, want one line", got)
			}
			full := prefix + value
			want := full
			if len(full) > 500 {
				want = full[:497] + "..."
			}
			if got[0] != want || len(got[0]) != tt.wantBytes {
				t.Errorf("line of %d bytes %q, want %d bytes %q", len(got[0]), got[0], tt.wantBytes, want)
			}
		})
	}
}
