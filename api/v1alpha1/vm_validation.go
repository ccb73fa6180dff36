package v1alpha1

import "fmt"

// vmSettingsProblem applies the rules of a platform's vm block that need nothing else of the spec.
func vmSettingsProblem(path string, p Platform) error {
	vm := p.VM
	if vm == nil {
		return nil
	}
	if p.Type != PlatformVM {
		return fmt.Errorf("%s.vm: vm settings are only allowed on platforms of type VM: remove vm or set type: VM", path)
	}
	path += ".vm"
	enums := []struct {
		field, value string
		allowed      []string
	}{
		{"networkBinding", string(vm.NetworkBinding), []string{string(VMBindingBridge), string(VMBindingPasst), string(VMBindingMasquerade)}},
		{"diskBus", string(vm.DiskBus), []string{string(VMDiskBusVirtio), string(VMDiskBusSATA), string(VMDiskBusSCSI)}},
		{"diskCache", string(vm.DiskCache), []string{string(VMDiskCacheNone), string(VMDiskCacheWritethrough), string(VMDiskCacheWriteback)}},
		{"hugepages", string(vm.Hugepages), []string{string(VMHugepages2Mi), string(VMHugepages1Gi)}},
		{"ioThreads", string(vm.IOThreads), []string{string(VMIOThreadsShared), string(VMIOThreadsAuto)}},
	}
	for _, e := range enums {
		if e.value == "" {
			continue
		}
		known := false
		for _, a := range e.allowed {
			known = known || e.value == a
		}
		if !known {
			return fmt.Errorf("%s.%s: %q is not one of %q: set one of them or remove it", path, e.field, e.value, e.allowed)
		}
	}
	if err := migrationPolicyProblem(path+".migrationPolicy", vm.MigrationPolicy); err != nil {
		return err
	}
	virtio := vm.DiskBus == "" || vm.DiskBus == VMDiskBusVirtio
	if vm.DedicatedIOThread && !virtio {
		return fmt.Errorf("%s: dedicatedIOThread needs the virtio disk bus, the only one KubeVirt gives IO threads to: set diskBus to virtio or remove dedicatedIOThread", path)
	}
	if vm.IOThreads != "" && !virtio {
		return fmt.Errorf("%s: ioThreads serve virtio disks only, and diskBus is %s: set diskBus to virtio or remove ioThreads", path, vm.DiskBus)
	}
	return nil
}

// vmSpecProblem applies the rules of the platforms' vm blocks that depend on the rest of the spec.
func vmSpecProblem(spec *BenchmarkSuiteSpec) error {
	hpcc := false
	for _, b := range spec.Benchmarks {
		hpcc = hpcc || b.Type == BenchmarkHPCC
	}
	for i, p := range spec.Platforms {
		vm := p.VM
		if vm == nil {
			continue
		}
		path := fmt.Sprintf("spec.platforms[%d].vm", i)
		switch {
		case vm.IsolateEmulatorThread && !p.DedicatedCPUsOf(spec.Cluster):
			return fmt.Errorf("%s.isolateEmulatorThread needs dedicated CPUs, as KubeVirt puts the emulator thread on a host CPU of its own next to the pinned vCPUs: "+
				"set vm.dedicatedCPUs (or cluster.dedicatedCPUs) to true, or remove isolateEmulatorThread", path)
		case vm.DedicatedCPUs && (spec.Cluster.CPURequest != nil || spec.Cluster.MemoryRequest != nil):
			return fmt.Errorf("%s.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or remove vm.dedicatedCPUs", path)
		case vm.Hugepages != "" && !hugepagesMultiple(spec.Cluster.MemoryLimit(), vm.Hugepages):
			memory := spec.Cluster.MemoryLimit()
			alternative := ""
			if hugepagesMultiple(memory, VMHugepages2Mi) {
				alternative = ", or use 2Mi pages"
			}
			return fmt.Errorf("%s.hugepages: cluster.memory %s is not a multiple of the page size %s, and huge pages back the whole guest memory: "+
				"set cluster.memory to a multiple of it, for example 2Gi%s", path, memory.String(), vm.Hugepages, alternative)
		case vm.NetworkBinding == VMBindingMasquerade && hpcc && spec.Cluster.NodeCount() >= 2:
			return fmt.Errorf("%s.networkBinding: Masquerade hides every VM behind 10.0.2.2, so HPCC's MPI ranks cannot reach each other across VMs: "+
				"use Bridge or Passt, or remove the hpcc benchmarks", path)
		}
	}
	return nil
}

// migrationPolicyProblem checks a VM platform's migration policy: a policy that sets nothing would
// make a variant that is no variant, and the bounds are the CRD's (the bandwidth, a quantity, has
// none in the schema).
func migrationPolicyProblem(path string, mp *VMMigrationPolicy) error {
	if mp == nil {
		return nil
	}
	if mp.BandwidthPerMigration == nil && mp.CompletionTimeoutPerGiB == nil && mp.AllowAutoConverge == nil && mp.AllowPostCopy == nil {
		return fmt.Errorf("%s: the policy sets nothing, so its runs would migrate as the cluster's settings say: set bandwidthPerMigration, completionTimeoutPerGiB, allowAutoConverge or allowPostCopy, or remove migrationPolicy", path)
	}
	if b := mp.BandwidthPerMigration; b != nil && (b.Sign() < 0 || b.Cmp(MaxMigrationBandwidth) > 0) {
		return fmt.Errorf("%s.bandwidthPerMigration: %s is not between 0 (no cap) and %s bytes per second: set a value in that range, such as 64Mi", path, b.String(), MaxMigrationBandwidth.String())
	}
	if t := mp.CompletionTimeoutPerGiB; t != nil && (*t < 1 || *t > 3600) {
		return fmt.Errorf("%s.completionTimeoutPerGiB: %d is not between 1 and 3600 seconds per GiB of guest memory: set a value in that range (KubeVirt's default is 150)", path, *t)
	}
	return nil
}
