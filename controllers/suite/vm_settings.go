package suite

import (
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// A VM platform's vm settings are checked against the cluster's KubeVirt CR when each of its runs
// starts (startRun, platform.UnsupportedVMSettings), explained when its VMs cannot be scheduled
// (explainVMScheduling), and recorded in status as the VMs that ran show them (recordVMSettings).

// recordVMSettings keeps in status how a VM platform's VMs were built, read back from the run's
// master VMI, or another of its VMIs while the master is not listed: a run's VMIs are built alike. A
// later run of the platform replaces what an earlier one recorded; a later look at the same run
// keeps the QoS class once KubeVirt reported it.
func recordVMSettings(st *vmbenchv1.BenchmarkSuiteStatus, platformName string, children []client.Object) {
	var vmi *kubevirtv1.VirtualMachineInstance
	for _, obj := range children {
		v, ok := obj.(*kubevirtv1.VirtualMachineInstance)
		if !ok {
			continue
		}
		if vmi == nil || v.Labels[vmbenchv1.LabelRole] == vmbenchv1.RoleMaster {
			vmi = v
		}
	}
	if vmi == nil {
		return
	}
	seen := platform.VMSettingsOf(vmi)
	seen.Platform = platformName
	for i := range st.VMSettings {
		had := &st.VMSettings[i]
		if had.Platform != platformName {
			continue
		}
		if seen.QOSClass == "" && had.Run == seen.Run {
			seen.QOSClass = had.QOSClass
		}
		*had = seen
		return
	}
	st.VMSettings = append(st.VMSettings, seen)
}

// explainVMScheduling adds to a run's hold-up what the VM platform's settings need of the nodes, when
// the scheduler cannot place its VMs for a reason the settings explain.
func explainVMScheduling(c *conditions.Cause, run platform.Run) *conditions.Cause {
	if c == nil || c.Reason != failure.ReasonUnschedulable || run.Platform.Type != vmbenchv1.PlatformVM {
		return c
	}
	if hint := platform.VMSchedulingHint(run.Platform, run.Suite.Spec.Cluster, c.Message); hint != "" {
		explained := *c
		explained.Message += "; " + hint
		return &explained
	}
	return c
}
