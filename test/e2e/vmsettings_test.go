//go:build e2e

package e2e

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// TestVMBindingTheClusterCannotGiveFailsAtOnce: a VM platform whose vm.networkBinding the cluster's
// KubeVirt does not offer fails its run before any VMI exists, with VMSettingUnsupported and what to
// change. Which binding that is depends on the cluster: read from its KubeVirt CR as the manager
// reads it (bridge where the install found no dummy links or the CR forbids it, else passt where no
// passt plugin is registered). No VM boots, so the case costs seconds.
func TestVMBindingTheClusterCannotGiveFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	features := platform.ClusterKubeVirtFeatures(e.kubeVirts())
	var refused vmbenchv1.VMNetworkBinding
	switch {
	case features.BridgeUnusable || features.BridgeForbidden:
		refused = vmbenchv1.VMBindingBridge
	case !features.PasstBinding:
		refused = vmbenchv1.VMBindingPasst
	}
	e.g.Expect(refused).NotTo(BeEmpty(), "this cluster's KubeVirt offers every binding (%+v): the case needs one it lacks", features)

	s := e.sample("suite-quick.yaml", "badbinding")
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vm", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{NetworkBinding: refused}}}
	s.Spec.Baseline = "vm"
	s.Spec.Repetitions = 1
	s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}
	e.g.Expect(k8s.Create(e.ctx, s)).To(Succeed())

	ended := e.waitEnded("badbinding", 3*time.Minute)
	failed := meta.FindStatusCondition(ended.Status.Conditions, vmbenchv1.ConditionFailed)
	e.g.Expect(failed).NotTo(BeNil())
	e.t.Logf("%s: %s", failed.Reason, failed.Message)
	e.g.Expect(failed.Message).To(And(ContainSubstring(vmbenchv1.ReasonVMSettingUnsupported), ContainSubstring(string(refused)),
		ContainSubstring("set vm.networkBinding to")))
	vmis := &kubevirtv1.VirtualMachineInstanceList{}
	e.g.Expect(k8s.List(e.ctx, vmis, client.InNamespace(e.ns))).To(Succeed())
	e.g.Expect(vmis.Items).To(BeEmpty(), "a VMI was made for a binding the cluster cannot give")
}
