package integration

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/platform"
)

// kubeVirtCR creates the cluster's KubeVirt configuration in the test's namespace (as the install
// does in kubevirt) and removes it when the test ends: every VM run of the package reads it.
func (h *harness) kubeVirtCR(passt, useEmulation bool) {
	h.t.Helper()
	config := map[string]any{"developerConfiguration": map[string]any{"useEmulation": useEmulation}}
	if passt {
		config["network"] = map[string]any{"binding": map[string]any{
			"passt": map[string]any{"sidecarImage": "vmbench/virt-network-passt-binding:test"}}}
	}
	kv := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
		"metadata": map[string]any{"name": "kubevirt", "namespace": h.ns},
		"spec":     map[string]any{"configuration": config},
	}}
	h.g.Expect(k8s.Create(h.ctx, kv)).To(Succeed())
	h.t.Cleanup(func() { _ = k8s.Delete(h.ctx, kv) })
}

func TestAutoVMNetworkFollowsTheClustersKubeVirt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		passt bool
		want  platform.VMNetwork
	}{
		{"passt registered", true, platform.VMNetworkPasst},
		{"no binding plugin", false, platform.VMNetworkBridge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.kubeVirtCR(tc.passt, true)
			h.configure = func(r *suitecontroller.SuiteReconciler) {
				r.VMNetwork, r.Emulation = platform.VMNetworkAuto, suitecontroller.EmulationAllow
			}
			h.startManager(allKinds())
			suite := h.suite("auto", 1, demoBenchmarks()...)
			suite.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM}}
			suite.Spec.Baseline = "vm"
			h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

			master := &kubevirtv1.VirtualMachineInstance{}
			h.g.Eventually(func() error {
				return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "auto-vm-1-master"}, master)
			}, timeout, interval).Should(Succeed())
			iface := master.Spec.Domain.Devices.Interfaces[0]
			switch tc.want {
			case platform.VMNetworkPasst:
				h.g.Expect(iface.Binding).To(Equal(&kubevirtv1.PluginBinding{Name: "passt"}))
			case platform.VMNetworkBridge:
				h.g.Expect(iface.Binding).To(BeNil())
				h.g.Expect(iface.Bridge).NotTo(BeNil())
			}
			h.eventuallySuite("auto", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
				g.Expect(s.Status.Runs).NotTo(BeEmpty())
				g.Expect(s.Status.Runs[0].Network).To(Equal(string(tc.want)))
			})

			h.finishVMRun("auto", "auto-vm-1", 1, "qemu")
			s := h.eventuallySuite("auto", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
				g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
			})
			h.g.Expect(s.Status.Runs[0].Network).To(Equal(string(tc.want)), "the binding is kept after the run")
			h.g.Expect(s.Status.Runs[0].Accelerator).To(Equal(vmbenchv1.AcceleratorEmulation))
		})
	}
}

func TestForbiddenEmulationFailsVMRunsBeforeTheyStart(t *testing.T) {
	h := newHarness(t)
	h.kubeVirtCR(true, true)
	h.configure = func(r *suitecontroller.SuiteReconciler) {
		r.VMNetwork, r.Emulation = platform.VMNetworkAuto, suitecontroller.EmulationForbid
	}
	h.startManager(allKinds())
	h.g.Expect(k8s.Create(h.ctx, h.suite("nokvm", 1, demoBenchmarks()...))).To(Succeed())
	h.finishContainerRun("nokvm", "nokvm-container-1", 1)
	s := h.eventuallySuite("nokvm", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(s.Status.Runs[1].Message).To(And(ContainSubstring(vmbenchv1.ReasonEmulationForbidden), ContainSubstring("useEmulation: true")))
	vmis := &kubevirtv1.VirtualMachineInstanceList{}
	h.g.Expect(k8s.List(h.ctx, vmis, client.InNamespace(h.ns))).To(Succeed())
	h.g.Expect(vmis.Items).To(BeEmpty(), "no VM is started under forbidden emulation")
	h.g.Expect(s.Status.Results).To(ContainElement(HaveField("Platform", "container")), "the container results are kept")
}
