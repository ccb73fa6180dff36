package main

import (
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// `vmbench suggest <suite>` reads the suite from the cluster, as report does, and writes the
// suggested suite to stdout; an unknown suite is an error that names it.
func TestSuggestFromTheCluster(t *testing.T) {
	suite, err := suitefile.Read("../../docs/report/quick-suite.yaml", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range suite.Status.Runs {
		suite.Status.Runs[i].Accelerator = vmbenchv1.AcceleratorKVM
	}
	for i := range suite.Status.Results {
		suite.Status.Results[i].Emulated = false
	}
	suite.Status.VMSettings = []vmbenchv1.VMSettingsStatus{{Platform: "vm", Run: "quick-vm-2", DiskBus: "sata"}}
	suite.ResourceVersion = ""
	fakeCluster(t, suite)

	r := runCLI("", "suggest", "quick", "-n", "default")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	back, err := suitefile.Decode([]byte(r.stdout), "")
	if err != nil {
		t.Fatalf("stdout is no suite: %v\n%s", err, r.stdout)
	}
	var names []string
	for _, p := range back.Spec.Platforms {
		names = append(names, p.Name)
	}
	if back.Name != "quick-suggest" || strings.Join(names, " ") != "container vm vmvirtio vmhugepages" {
		t.Errorf("suite %s with platforms %v", back.Name, names)
	}
	if !strings.Contains(r.stderr, "suite quick-suggest: 2 VM variant(s)") {
		t.Errorf("stderr %q", r.stderr)
	}

	r = runCLI("", "suggest", "nosuch", "-n", "default")
	if r.code != 1 || !strings.Contains(r.stderr, `benchmarksuite "nosuch" not found in namespace "default"`) || r.stdout != "" {
		t.Errorf("unknown suite: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
