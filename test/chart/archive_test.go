package chart

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// archiveValues turn the archive on, with a CA of its own.
var archiveValues = []string{
	"--set", "archive.s3.endpoint=https://s3.storage.example:9000", "--set", "archive.s3.bucket=bench-results",
	"--set", "archive.s3.prefix=vmbench/prod", "--set", "archive.s3.credentialsSecret=vmbench-archive",
	"--set", "archive.s3.caSecret=storage-ca",
}

// archiveArgs are the manager's flags that start with --archive-.
func archiveArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--archive-") {
			out = append(out, a)
		}
	}
	return out
}

// The archive is off by default: no flag, no credentials, no CA. Set, its values become the
// manager's flags, its credentials are the Secret mounted where --archive-s3-credentials-dir points
// (the kubelet updates the files when the Secret changes, and the manager reads them again), and
// its CA is mounted where --archive-s3-ca-file points.
func TestArchiveValuesBecomeManagerFlagsAndMounts(t *testing.T) {
	d, c := manager(t, render(t))
	if got := archiveArgs(c.Args); len(got) > 0 {
		t.Errorf("no archive values, yet flags %v", got)
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "AWS_") {
			t.Errorf("no archive values, yet env %s", e.Name)
		}
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "archive-ca" || v.Name == "archive-credentials" {
			t.Errorf("no archive values, yet the %s volume", v.Name)
		}
	}

	d, c = manager(t, render(t, archiveValues...))
	want := []string{"--archive-s3-endpoint=https://s3.storage.example:9000", "--archive-s3-bucket=bench-results",
		"--archive-s3-region=us-east-1", "--archive-s3-prefix=vmbench/prod", "--archive-s3-ca-file=/etc/vmbench/archive-ca/ca.crt",
		"--archive-s3-credentials-dir=/etc/vmbench/archive-credentials"}
	if diff := cmp.Diff(want, archiveArgs(c.Args)); diff != "" {
		t.Errorf("archive flags (-want +got):\n%s", diff)
	}
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "AWS_") {
			t.Errorf("env %s: the keys are mounted, so that a rotated Secret needs no restart", e.Name)
		}
	}
	keysAt := ""
	for _, m := range c.VolumeMounts {
		if m.Name == "archive-credentials" {
			keysAt = m.MountPath
			if !m.ReadOnly || m.SubPath != "" {
				t.Errorf("the keys' mount %+v: want read-only and without subPath (a subPath mount is never updated)", m)
			}
		}
	}
	var keys *corev1.Volume
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "archive-credentials" {
			keys = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	if keys == nil || keys.Secret == nil || keys.Secret.SecretName != "vmbench-archive" || len(keys.Secret.Items) != 0 ||
		keysAt != "/etc/vmbench/archive-credentials" {
		t.Errorf("archive-credentials volume %+v mounted at %q, want all of Secret vmbench-archive at the flag's directory", keys, keysAt)
	}

	// IRSA or EKS Pod Identity: no Secret, no flag; the manager reads what EKS injects.
	_, workload := manager(t, render(t, append(slices.Clone(archiveValues[:6]), "--set", "archive.s3.workloadIdentity=true")...))
	if slices.ContainsFunc(workload.Args, func(a string) bool { return strings.HasPrefix(a, "--archive-s3-credentials-dir") }) {
		t.Errorf("workloadIdentity, yet %v", workload.Args)
	}
	if !slices.Contains(workload.Args, "--archive-s3-bucket=bench-results") {
		t.Errorf("workloadIdentity: the archive is off: %v", workload.Args)
	}

	mounted := ""
	for _, m := range c.VolumeMounts {
		if m.Name == "archive-ca" {
			mounted = m.MountPath
		}
	}
	var volume *corev1.Volume
	for i, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "archive-ca" {
			volume = &d.Spec.Template.Spec.Volumes[i]
		}
	}
	switch {
	case volume == nil || volume.Secret == nil || volume.Secret.SecretName != "storage-ca":
		t.Errorf("archive-ca volume %+v, want Secret storage-ca", volume)
	case len(volume.Secret.Items) != 1 || filepath.Join(mounted, volume.Secret.Items[0].Path) != "/etc/vmbench/archive-ca/ca.crt":
		t.Errorf("the CA is mounted at %s with items %+v, not where --archive-s3-ca-file points", mounted, volume.Secret.Items)
	}

	// Without a CA: no flag, no volume, and the metrics certificate's volume is unchanged beside it.
	d, c = manager(t, render(t, append(slices.Clone(archiveValues[:8]), "--set", "metrics.tls.secretName=metrics-cert")...))
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--archive-s3-ca-file") }) {
		t.Errorf("no caSecret, yet %v", c.Args)
	}
	var volumes []string
	for _, v := range d.Spec.Template.Spec.Volumes {
		volumes = append(volumes, v.Name)
	}
	if !slices.Equal(volumes, []string{"metrics-tls", "archive-credentials"}) {
		t.Errorf("volumes %v, want metrics-tls and archive-credentials", volumes)
	}
}

// Half an archive is refused at rendering, naming what is missing.
func TestArchiveValuesAreCheckedAtRendering(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"archive.s3.endpoint=https://s3.example.com", "archive.s3.credentialsSecret=c"}, "archive.s3 needs both endpoint and bucket"},
		{[]string{"archive.s3.bucket=results", "archive.s3.credentialsSecret=c"}, "archive.s3 needs both endpoint and bucket"},
		{[]string{"archive.s3.endpoint=https://s3.example.com", "archive.s3.bucket=results"}, "archive.s3.credentialsSecret is empty"},
		{[]string{"archive.s3.endpoint=https://s3.example.com", "archive.s3.bucket=results", "archive.s3.credentialsSecret=c", "archive.s3.workloadIdentity=true"},
			"are both set: keep one"},
		{[]string{"archive.s3.endpoint=https://s3.example.com/s3", "archive.s3.bucket=results", "archive.s3.credentialsSecret=c"}, "/archive/s3/endpoint"},
		{[]string{"archive.s3.endpoint=s3.example.com", "archive.s3.bucket=results", "archive.s3.credentialsSecret=c"}, "/archive/s3/endpoint"},
		{[]string{"archive.s3.endpoint=https://s3.example.com", "archive.s3.bucket=Results_2026", "archive.s3.credentialsSecret=c"}, "/archive/s3/bucket"},
		{[]string{"archive.s3.endpoint=https://s3.example.com", "archive.s3.bucket=results", "archive.s3.prefix=/vmbench", "archive.s3.credentialsSecret=c"}, "/archive/s3/prefix"},
	} {
		args := []string{"template", release, "charts/vmbench", "--namespace", namespace}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		_, stderr, err := helm(t, args...)
		if err == nil {
			t.Errorf("%v renders, want a refusal", tc.set)
		} else if !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: the refusal does not say %q:\n%s", tc.set, tc.want, stderr)
		}
	}
}

// The manager accepts the archive flags the chart passes: it gets past parsing and validating them
// and stops only at loading a kubeconfig, which the test withholds.
func TestManagerAcceptsTheArchiveFlags(t *testing.T) {
	_, c := manager(t, render(t, archiveValues[:8]...))
	bin := filepath.Join(t.TempDir(), "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "no-kubeconfig")
	cmd := exec.Command(bin, append(slices.Clone(c.Args), "--kubeconfig="+kubeconfig)...)
	// The chart's key files, where --archive-s3-credentials-dir points, are replaced by a directory
	// of the test's.
	keys := t.TempDir()
	for name, value := range map[string]string{"AWS_ACCESS_KEY_ID": "k", "AWS_SECRET_ACCESS_KEY": "s"} {
		if err := os.WriteFile(filepath.Join(keys, name), []byte(value), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := slices.Clone(c.Args)
	for i, a := range args {
		if strings.HasPrefix(a, "--archive-s3-credentials-dir=") {
			args[i] = "--archive-s3-credentials-dir=" + keys
		}
	}
	cmd.Args = append([]string{bin}, append(args, "--kubeconfig="+kubeconfig)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the manager ran without a cluster:\n%s", out)
	}
	for _, r := range managerRefusals {
		if bytes.Contains(out, []byte(r)) {
			t.Fatalf("the manager refuses the chart's archive flags %v:\n%s", archiveArgs(c.Args), out)
		}
	}
	if !bytes.Contains(out, []byte(kubeconfig)) {
		t.Errorf("the manager did not get as far as loading its kubeconfig:\n%s", out)
	}
}
