package main

import (
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	saved := version
	version = "v0.1.0"
	t.Cleanup(func() { version = saved })
	r := runCLI("", "version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"vmbench v0.1.0\n", "vmbench.io/v1alpha1   BenchmarkSuite", "kubeflow.org/v2beta1  MPIJob", "kubevirt.io/v1        VirtualMachineInstance"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if r := runCLI("", "version", "extra"); r.code != 2 {
		t.Errorf("version extra: exit %d", r.code)
	}
}

func TestKubectlPluginUsage(t *testing.T) {
	saved := invokedAs
	t.Cleanup(func() { invokedAs = saved })
	for argv0, want := range map[string]string{
		"/usr/local/bin/kubectl-vmbench": "usage: kubectl vmbench <command>",
		"bin/vmbench":                    "usage: vmbench <command>",
	} {
		invokedAs = func() string { return argv0 }
		r := runCLI("", "help")
		if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, "preflight [-f suite.yaml] [-n namespace] [--kubeconfig path] [--context name]") {
			t.Errorf("%s: stdout\n%s", argv0, r.stdout)
		}
		if r := runCLI("", "preflight", "-h"); !strings.Contains(r.stdout, strings.Replace(want, "<command>", "preflight", 1)) {
			t.Errorf("%s: preflight -h\n%s", argv0, r.stdout)
		}
	}
}

func TestPreflightUsageError(t *testing.T) {
	r := runCLI("", "preflight", "-o", "yaml")
	if r.code != 2 || !strings.Contains(r.stderr, "-o yaml: use table or json") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
