package history

import (
	"slices"
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
