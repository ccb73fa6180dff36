package bands

import (
	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// SettingsOf are the settings of a VM platform as the suite recorded them: read back from a VMI
// (status.vmSettings), else as the spec asked; emulated says whether its VMs ran emulated.
func SettingsOf(suite *vmbenchv1.BenchmarkSuite, platform string, emulated bool) Settings {
	c := suite.Spec.Cluster
	s := Settings{Emulated: emulated,
		RequestsBelowLimits: below(c.CPURequest, resource.NewQuantity(int64(c.CPU), resource.DecimalSI)) || below(c.MemoryRequest, c.Memory)}
	for _, run := range suite.Status.Runs {
		if platformType(suite, run.Platform) != vmbenchv1.PlatformContainer {
			continue
		}
		for _, n := range run.Noise {
			s.NodeStealPercent = max(s.NodeStealPercent, n.StealPercent)
		}
	}
	for _, v := range suite.Status.VMSettings {
		if v.Platform == platform {
			s.NetworkBinding, s.DiskBus, s.DiskCache = v.NetworkBinding, v.DiskBus, v.DiskCache
			s.DedicatedCPUs, s.IsolateEmulatorThread, s.Hugepages = v.DedicatedCPUs, v.IsolateEmulatorThread, v.Hugepages
			s.IOThreads, s.DedicatedIOThread = v.IOThreads, v.DedicatedIOThread
			s.CPUModel, s.NetworkMultiqueue = v.CPUModel, v.NetworkMultiqueue
			return s
		}
	}
	for _, p := range suite.Spec.Platforms {
		if p.Name != platform {
			continue
		}
		s.DedicatedCPUs = p.DedicatedCPUsOf(c)
		if vm := p.VM; vm != nil {
			s.NetworkBinding, s.DiskBus, s.DiskCache = string(vm.NetworkBinding), string(vm.DiskBus), string(vm.DiskCache)
			s.IsolateEmulatorThread, s.Hugepages = vm.IsolateEmulatorThread, string(vm.Hugepages)
			s.IOThreads, s.DedicatedIOThread = string(vm.IOThreads), vm.DedicatedIOThread
			s.CPUModel, s.NetworkMultiqueue = vm.CPUModel, vm.NetworkMultiqueue
		}
	}
	return s
}

func below(request, limit *resource.Quantity) bool {
	return request != nil && limit != nil && request.Cmp(*limit) < 0
}

func platformType(suite *vmbenchv1.BenchmarkSuite, name string) vmbenchv1.PlatformType {
	for _, p := range suite.Spec.Platforms {
		if p.Name == name {
			return p.Type
		}
	}
	return ""
}
