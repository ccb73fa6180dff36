package history

import (
	"fmt"
	"sort"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// maxEnvironmentChanges and maxEnvironmentChangeLength bound what EnvironmentChanges lists: a
// finding keeps at most so many lines of at most so many bytes.
const (
	maxEnvironmentChanges      = 8
	maxEnvironmentChangeLength = 500
)

// environmentField is one field of the environment that counts as a version change, read as the
// values it has over a record's runs (or their nodes).
type environmentField struct {
	name string
	get  func(vmbenchv1.RunEnvironment) []string
}

func runField(name string, get func(vmbenchv1.RunEnvironment) string) environmentField {
	return environmentField{name, func(e vmbenchv1.RunEnvironment) []string { return []string{get(e)} }}
}

func nodeField(name string, get func(vmbenchv1.NodeEnvironment) string) environmentField {
	return environmentField{name, func(e vmbenchv1.RunEnvironment) []string {
		out := make([]string, 0, len(e.Nodes))
		for _, n := range e.Nodes {
			out = append(out, get(n))
		}
		return out
	}}
}

// environmentFields are the versions a record's environment is compared on; node names and the
// order of the runs do not count.
var environmentFields = []environmentField{
	runField("kubeVirtVersion", func(e vmbenchv1.RunEnvironment) string { return e.KubeVirtVersion }),
	runField("launcherImage", func(e vmbenchv1.RunEnvironment) string { return e.LauncherImage }),
	runField("runnerImage", func(e vmbenchv1.RunEnvironment) string { return e.RunnerImage }),
	runField("runnerImageRef", func(e vmbenchv1.RunEnvironment) string { return e.RunnerImageRef }),
	runField("launcherImageRef", func(e vmbenchv1.RunEnvironment) string { return e.LauncherImageRef }),
	runField("machineType", func(e vmbenchv1.RunEnvironment) string { return e.MachineType }),
	nodeField("kernelVersion", func(n vmbenchv1.NodeEnvironment) string { return n.KernelVersion }),
	nodeField("osImage", func(n vmbenchv1.NodeEnvironment) string { return n.OSImage }),
	nodeField("containerRuntimeVersion", func(n vmbenchv1.NodeEnvironment) string { return n.ContainerRuntimeVersion }),
	nodeField("kubeletVersion", func(n vmbenchv1.NodeEnvironment) string { return n.KubeletVersion }),
	nodeField("architecture", func(n vmbenchv1.NodeEnvironment) string { return n.Architecture }),
	nodeField("cpuModel", func(n vmbenchv1.NodeEnvironment) string { return n.CPUModel }),
}

// environmentValues are a field's sorted distinct values over a record's environments, or
// "(unknown)" when none has it.
func environmentValues(envs []vmbenchv1.RunEnvironment, f environmentField) string {
	set := map[string]bool{}
	for _, e := range envs {
		for _, v := range f.get(e) {
			if v != "" {
				set[v] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "(unknown)"
	}
	return strings.Join(out, ", ")
}

// EnvironmentChanges lists the environment fields that differ between two records, as
// "field: old → new", each side the sorted distinct values over the record's runs and nodes.
func EnvironmentChanges(before, after []vmbenchv1.RunEnvironment) []string {
	var out []string
	for _, f := range environmentFields {
		old, cur := environmentValues(before, f), environmentValues(after, f)
		if old != cur && len(out) < maxEnvironmentChanges {
			line := fmt.Sprintf("%s: %s → %s", f.name, old, cur)
			if len(line) > maxEnvironmentChangeLength {
				line = line[:maxEnvironmentChangeLength-3] + "..."
			}
			out = append(out, line)
		}
	}
	return out
}

// EnvironmentChangeAt is what changed in the environment at records[Index], against the Complete
// record with an environment before it.
type EnvironmentChangeAt struct {
	Index   int
	Changes []string
}

// EnvironmentChangesOver lists, oldest first, each Complete record of records (oldest first) whose
// environment differs from that of the Complete record before it, with what changed; records that
// did not complete or have no environment are passed over. The manager's findings, metrics and the
// CLI all read the environment's history through this one function, so they never disagree.
func EnvironmentChangesOver(records []Record) []EnvironmentChangeAt {
	var out []EnvironmentChangeAt
	prev := -1
	for i := range records {
		r := &records[i]
		if r.Phase != vmbenchv1.SuiteComplete || len(r.Environments) == 0 {
			continue
		}
		if prev >= 0 {
			if c := EnvironmentChanges(records[prev].Environments, r.Environments); len(c) > 0 {
				out = append(out, EnvironmentChangeAt{Index: i, Changes: c})
			}
		}
		prev = i
	}
	return out
}

// LatestEnvironmentChange is the latest Complete record, of records oldest first, whose environment
// differs from that of the Complete record before it (records without an environment are passed
// over), with what changed. ok is false when no two such records differ.
func LatestEnvironmentChange(records []Record) (latest Record, changes []string, ok bool) {
	all := EnvironmentChangesOver(records)
	if len(all) == 0 {
		return Record{}, nil, false
	}
	last := all[len(all)-1]
	return records[last.Index], last.Changes, true
}
