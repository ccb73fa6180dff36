package suite

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

func TestVMNamespaceRefusal(t *testing.T) {
	ns := func(labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "perf", Labels: labels}}
	}
	enforce := func(level string) map[string]string {
		return map[string]string{"pod-security.kubernetes.io/enforce": level}
	}
	runtimeDefault := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	localhost := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("kubevirt/kubevirt.json")}
	tests := []struct {
		name     string
		ns       *corev1.Namespace
		launcher platform.VirtLauncher
		// wantIn is empty when the namespace admits virt-launcher.
		wantIn  []string
		wantOut []string
	}{
		{name: "no label: the cluster's default, taken as privileged", ns: ns(nil)},
		{name: "only a warn label", ns: ns(map[string]string{"pod-security.kubernetes.io/warn": "restricted"})},
		{name: "privileged", ns: ns(enforce("privileged"))},
		{name: "baseline admits the non-root virt-launcher", ns: ns(enforce("baseline"))},
		{name: "restricted refuses it for want of a seccomp profile", ns: ns(enforce("restricted")),
			wantIn: []string{"namespace perf enforces Pod Security restricted:latest (pod-security.kubernetes.io/enforce=restricted)",
				"refuses the virt-launcher pod that KubeVirt makes for every VM: seccompProfile", `"compute"`,
				"virt-launcher needs baseline: label the namespace pod-security.kubernetes.io/enforce=baseline",
				"customProfile.runtimeDefaultProfile: true", "or run the suite in a namespace that admits virt-launcher"},
			wantOut: []string{"Root feature gate", "capabilities"}},
		{name: "restricted at a pinned version", ns: ns(map[string]string{"pod-security.kubernetes.io/enforce": "restricted",
			"pod-security.kubernetes.io/enforce-version": "v1.30"}),
			wantIn: []string{"restricted:v1.30", "pod-security.kubernetes.io/enforce-version=v1.30"}},
		{name: "restricted admits it with KubeVirt's RuntimeDefault profile", ns: ns(enforce("restricted")),
			launcher: platform.VirtLauncher{Seccomp: runtimeDefault}},
		{name: "restricted admits it with KubeVirt's localhost profile", ns: ns(enforce("restricted")),
			launcher: platform.VirtLauncher{Seccomp: localhost}},
		{name: "baseline refuses a root virt-launcher (KubeVirt's Root gate)", ns: ns(enforce("baseline")),
			launcher: platform.VirtLauncher{Root: true},
			wantIn: []string{"non-default capabilities", "SYS_NICE", "virt-launcher needs privileged (KubeVirt's Root feature gate runs it as root, with SYS_NICE)",
				"pod-security.kubernetes.io/enforce=privileged", "turn KubeVirt's Root feature gate off"},
			wantOut: []string{"seccompConfiguration"}},
		{name: "an enforce label that does not parse is restricted", ns: ns(enforce("strict")),
			wantIn: []string{"restricted:latest", "labels that do not parse", "strict"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := vmNamespaceRefusal(tt.ns, tt.launcher)
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.wantIn) == 0 {
				if got != nil {
					t.Fatalf("refused: %v", got)
				}
				return
			}
			if got == nil || got.Reason != vmbenchv1.ReasonNamespaceRefusesVMs {
				t.Fatalf("vmNamespaceRefusal() = %v, want reason %s", got, vmbenchv1.ReasonNamespaceRefusesVMs)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q does not contain %q", got.Message, w)
				}
			}
			for _, w := range tt.wantOut {
				if strings.Contains(got.Message, w) {
					t.Errorf("message %q contains %q", got.Message, w)
				}
			}
		})
	}
}
