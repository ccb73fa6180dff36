package platform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"
)

func TestClusterVMNetwork(t *testing.T) {
	kubevirt := func(spec map[string]any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "spec": spec}}
	}
	passt := map[string]any{"configuration": map[string]any{"network": map[string]any{
		"binding": map[string]any{"passt": map[string]any{"sidecarImage": "vmbench/virt-network-passt-binding:v1.7.0"}}}}}
	other := map[string]any{"configuration": map[string]any{"network": map[string]any{
		"binding": map[string]any{"slirp": map[string]any{"sidecarImage": "x"}}}}}
	for _, tc := range []struct {
		name string
		kvs  []unstructured.Unstructured
		want VMNetwork
	}{
		{"no KubeVirt installed", nil, VMNetworkBridge},
		{"no bindings registered", []unstructured.Unstructured{kubevirt(map[string]any{})}, VMNetworkBridge},
		{"another plugin only", []unstructured.Unstructured{kubevirt(other)}, VMNetworkBridge},
		{"passt registered", []unstructured.Unstructured{kubevirt(passt)}, VMNetworkPasst},
		{"passt on any of several", []unstructured.Unstructured{kubevirt(other), kubevirt(passt)}, VMNetworkPasst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterVMNetwork(tc.kvs); got != tc.want {
				t.Errorf("ClusterVMNetwork = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClusterVirtLauncher(t *testing.T) {
	kubevirt := func(config map[string]any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
			"spec": map[string]any{"configuration": config}}}
	}
	profile := func(p map[string]any) map[string]any {
		return map[string]any{"seccompConfiguration": map[string]any{"virtualMachineInstanceProfile": map[string]any{"customProfile": p}}}
	}
	gates := func(g ...any) map[string]any {
		return map[string]any{"developerConfiguration": map[string]any{"featureGates": g}}
	}
	for _, tc := range []struct {
		name string
		kvs  []unstructured.Unstructured
		want VirtLauncher
	}{
		{"no KubeVirt CR", nil, VirtLauncher{}},
		{"KubeVirt's defaults", []unstructured.Unstructured{kubevirt(map[string]any{})}, VirtLauncher{}},
		{"other feature gates", []unstructured.Unstructured{kubevirt(gates("Snapshot", "HostDisk"))}, VirtLauncher{}},
		{"Root feature gate", []unstructured.Unstructured{kubevirt(gates("Snapshot", "Root"))}, VirtLauncher{Root: true}},
		{"RuntimeDefault profile", []unstructured.Unstructured{kubevirt(profile(map[string]any{"runtimeDefaultProfile": true}))},
			VirtLauncher{Seccomp: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}},
		{"localhost profile", []unstructured.Unstructured{kubevirt(profile(map[string]any{"localhostProfile": "kubevirt/kubevirt.json"}))},
			VirtLauncher{Seccomp: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("kubevirt/kubevirt.json")}}},
		{"runtimeDefaultProfile false", []unstructured.Unstructured{kubevirt(profile(map[string]any{"runtimeDefaultProfile": false}))}, VirtLauncher{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ClusterVirtLauncher(tc.kvs)); diff != "" {
				t.Errorf("ClusterVirtLauncher (-want +got):\n%s", diff)
			}
		})
	}
}

// What the model of virt-launcher's pod passes, level by level, is what KubeVirt's own pods pass:
// baseline, not restricted unless KubeVirt sets a seccomp profile, and privileged only as root.
func TestVirtLauncherPodSecurityLevels(t *testing.T) {
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	passes := func(l VirtLauncher, level psaapi.Level) string {
		meta, spec := l.Pod()
		r := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}, &meta, &spec))
		if r.Allowed {
			return "admitted"
		}
		return r.ForbiddenDetail()
	}
	runtimeDefault := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	for _, tc := range []struct {
		name     string
		launcher VirtLauncher
		want     map[psaapi.Level]string
	}{
		{"KubeVirt's defaults", VirtLauncher{}, map[psaapi.Level]string{psaapi.LevelBaseline: "admitted", psaapi.LevelRestricted: "seccompProfile"}},
		{"with a seccomp profile", VirtLauncher{Seccomp: runtimeDefault}, map[psaapi.Level]string{psaapi.LevelRestricted: "admitted"}},
		{"as root", VirtLauncher{Root: true, Seccomp: runtimeDefault},
			map[psaapi.Level]string{psaapi.LevelPrivileged: "admitted", psaapi.LevelBaseline: `container "compute" must not include "SYS_NICE"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for level, want := range tc.want {
				if got := passes(tc.launcher, level); !strings.Contains(got, want) {
					t.Errorf("%s: %s, want %s", level, got, want)
				}
			}
		})
	}
}
