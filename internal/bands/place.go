package bands

import (
	"fmt"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Position is where a VM's ratio lies against its band.
type Position string

// The positions.
const (
	// Within: the ratio lies in the band; the VM costs what KVM costs.
	Within Position = "within"
	// Inconclusive: the ratio lies off the band but its interval reaches into it; more repetitions
	// would tell.
	Inconclusive Position = "inconclusive"
	// Above: the whole interval lies above the band; suspect the container arm (throttling, noisy
	// neighbours) or a cache serving the VM.
	Above Position = "above"
	// Below: the whole interval lies below the band; a setting is the likely cause.
	Below Position = "below"
	// Emulated: the VM ran under software emulation; no KVM band applies.
	Emulated Position = "emulated"
)

// EnableKVM is the one piece of advice an emulated VM gets.
const EnableKVM = "enable KVM: run the VMs on nodes with /dev/kvm and turn off KubeVirt's developerConfiguration.useEmulation; " +
	"emulation costs about 20x, far below every band"

// Settings are how a VM platform's VMs were built and run, as the suite recorded them
// (status.vmSettings, the runs' accelerator, the cluster's requests). Strings are compared without
// regard to case.
type Settings struct {
	Emulated              bool
	NetworkBinding        string
	DiskBus               string
	DiskCache             string
	DedicatedCPUs         bool
	IsolateEmulatorThread bool
	Hugepages             string
	IOThreads             string
	DedicatedIOThread     bool
	// CPUModel is the VMI's CPU model; empty for KubeVirt's default, host-model.
	CPUModel          string
	NetworkMultiqueue bool
	// NodeStealPercent is the most steal time a node of the suite's container runs reported. Only a
	// kernel that runs under a hypervisor counts steal time, so above 0 the nodes are VMs themselves
	// and KubeVirt's VMs on them run nested. 0 proves nothing: a hypervisor that does not
	// overcommit its CPUs shows none.
	NodeStealPercent float64
	// RequestsBelowLimits is set when cluster.cpuRequest or cluster.memoryRequest lowers a request
	// below its limit.
	RequestsBelowLimits bool
}

// The settings a cause names, in the suite's terms; vmbench suggest turns those of platforms[].vm
// (and vm.dedicatedCPUs for dedicated CPUs) into VM variants.
const (
	SettingCPUModel          = "platforms[].vm.cpuModel: host-passthrough"
	SettingDiskBus           = "platforms[].vm.diskBus: virtio"
	SettingNetworkMultiqueue = "platforms[].vm.networkMultiqueue: true"
	SettingNetworkBinding    = "platforms[].vm.networkBinding: Bridge"
	SettingDiskCache         = "platforms[].vm.diskCache: none"
	SettingRequests          = "cluster.cpuRequest and cluster.memoryRequest: remove them"
	SettingNested            = "spec.placement.nodeSelector: bare-metal nodes"
	SettingIOThreads         = "platforms[].vm.ioThreads: auto"
	SettingDedicatedCPUs     = "cluster.dedicatedCPUs: true (or platforms[].vm.dedicatedCPUs: true)"
	SettingHugepages         = "platforms[].vm.hugepages: 2Mi"
)

// BelowCauseOrder is every cause of a result below its band in the order belowCauses ranks them,
// largest published effect first.
var BelowCauseOrder = []string{SettingCPUModel, SettingDiskBus, SettingNetworkMultiqueue, SettingNetworkBinding, SettingDiskCache,
	SettingNested, SettingRequests, SettingIOThreads, SettingDedicatedCPUs, SettingHugepages}

// Cause is one likely reason for a result off its band, with the setting to change.
type Cause struct {
	// Setting is the change in the suite's terms: "platforms[].vm.diskBus: virtio".
	Setting string `json:"setting"`
	// Why says what the recorded setting does, with the published figure where there is one.
	Why string `json:"why"`
}

// Placement is a VM's ratio against its band.
type Placement struct {
	Family   Family   `json:"family"`
	Position Position `json:"position"`
	// Band is the band the ratio was held against; nil for an emulated VM.
	Band *Band `json:"band,omitempty"`
	// Causes are, most likely first, what to change: for below, the recorded settings that depart
	// from the band's, then tuning left unused; for above, what to suspect; for emulated, EnableKVM.
	Causes []Cause `json:"causes,omitempty"`
}

// BandFor is the band of family f for a VM built with s: the tuned band when s has the family's
// tuning, the masquerade band for throughput through masquerade, else the default band.
func BandFor(f Family, s Settings) (Band, bool) {
	tuned := isTuned(f, s)
	variant := ""
	if f == NetworkThroughput && !tuned && masqueradeWithoutMultiqueue(s) {
		variant = variantMasqueradeNoMQueue
	}
	for _, b := range Table {
		if b.Family == f && b.Tuned == tuned && b.Variant == variant {
			return b, true
		}
	}
	return Band{}, false
}

// isTuned says whether s has what the tuned band of f assumes.
func isTuned(f Family, s Settings) bool {
	switch f {
	case Compute, MemoryBandwidth:
		return s.DedicatedCPUs
	case RandomMemory:
		return s.DedicatedCPUs && s.Hugepages != ""
	case StorageSequential, StorageRandomIOPS, StorageLatency:
		return s.IOThreads != "" || s.DedicatedIOThread
	case NetworkThroughput:
		return is(s.NetworkBinding, bindingBridge)
	case NetworkLatency:
		return is(s.NetworkBinding, bindingBridge) && s.DedicatedCPUs
	}
	return false
}

// Place holds a VM's speed ratio (VM ÷ container, higher is better) and its 95% interval (nil
// bounds: no interval, the ratio alone is placed) against the band of family f for settings s. ok is
// false when the family has no band. It treats the metric as one that reads; PlaceMetric tells
// writes apart.
func Place(f Family, ratio float64, low, high *float64, s Settings) (Placement, bool) {
	return PlaceMetric(Metric{Family: f}, ratio, low, high, s)
}

// Metric is what the bands need to know of a metric: its family, and whether it measures writes
// (a disk's cache mode slows writes, not reads).
type Metric struct {
	Family Family
	Writes bool
}

// MetricOf is the family of metric of benchmark b and whether it measures writes.
func MetricOf(b vmbenchv1.Benchmark, metric string) Metric {
	f := FamilyOf(b, metric)
	return Metric{Family: f, Writes: storage(f) && strings.Contains(strings.ToLower(metric), "write")}
}

// PlaceMetric is Place for a metric that may measure writes.
func PlaceMetric(m Metric, ratio float64, low, high *float64, s Settings) (Placement, bool) {
	f := m.Family
	if f == noFamily {
		return Placement{}, false
	}
	if s.Emulated {
		return Placement{Family: f, Position: Emulated, Causes: []Cause{{Setting: "KVM on the nodes", Why: EnableKVM}}}, true
	}
	band, ok := BandFor(f, s)
	if !ok {
		return Placement{}, false
	}
	lo, hi := ratio, ratio
	if low != nil && high != nil {
		lo, hi = *low, *high
	}
	bandLow, bandHigh := band.SpeedRange()
	p := Placement{Family: f, Position: Within, Band: &band}
	switch {
	case hi < bandLow:
		p.Position = Below
		p.Causes = belowCauses(m, s)
	case lo > bandHigh:
		p.Position = Above
		p.Causes = aboveCauses(f, s)
	case ratio < bandLow || ratio > bandHigh:
		p.Position = Inconclusive
	}
	return p, true
}

func is(value, want string) bool { return strings.EqualFold(value, want) }

func storage(f Family) bool {
	return f == StorageSequential || f == StorageRandomIOPS || f == StorageLatency
}

func network(f Family) bool { return f == NetworkThroughput || f == NetworkLatency }

func memory(f Family) bool { return f == MemoryBandwidth || f == RandomMemory }

// namedCPUModel says whether the VM's CPU model is a named libvirt model rather than the node's own
// CPU (host-passthrough) or its closest model with all its features (host-model, KubeVirt's default).
func namedCPUModel(s Settings) bool {
	return s.CPUModel != "" && !is(s.CPUModel, cpuHostPassthrough) && !is(s.CPUModel, cpuHostModel)
}

func masqueradeWithoutMultiqueue(s Settings) bool {
	return is(s.NetworkBinding, bindingMasquerade) && !s.NetworkMultiqueue
}

// belowCauses ranks, for a result below its band, first the recorded settings that depart from
// what every band assumes (the node's CPU features, a paravirtual disk, cache none, a bridged
// network with multiqueue, requests equal to limits), largest published effect first, then the
// tuning the VM does not use.
func belowCauses(m Metric, s Settings) []Cause {
	f := m.Family
	var out []Cause
	if (f == Compute || memory(f)) && namedCPUModel(s) {
		out = append(out, Cause{SettingCPUModel,
			"the guest sees the named CPU model " + s.CPUModel + " and none of the node's features beyond it (AVX-512, for example); " +
				"Linpack gave 0.45 of native with a generic model and 0.98 with host-passthrough (felter2014)"})
	}
	if storage(f) && is(s.DiskBus, busSata) {
		out = append(out, Cause{SettingDiskBus,
			"the root disk is on an emulated sata bus; virtio gave 5.9x its 4 KiB random-read IOPS and 2x its 64 KiB throughput (benchmark-operator-396)"})
	}
	if f == NetworkThroughput && masqueradeWithoutMultiqueue(s) {
		out = append(out, Cause{SettingNetworkMultiqueue,
			"behind masquerade one queue serves every stream; against bridge, masquerade lost 37% of TCP stream throughput without multiqueue and 13% with it (kubevirt-community-182)"})
	}
	if network(f) && is(s.NetworkBinding, bindingMasquerade) {
		out = append(out, Cause{SettingNetworkBinding,
			"masquerade NATs every packet; against bridge it lost 37% of TCP stream throughput and 24% on the TCP latency test without multiqueue (kubevirt-community-182)"})
	}
	if storage(f) && m.Writes && is(s.DiskCache, cacheWritethrough) {
		out = append(out, Cause{SettingDiskCache,
			"writethrough waits for the host to store every write; KubeVirt picks none (O_DIRECT) wherever the disk's file system allows it (kubevirt-disks)"})
	}
	if (storage(f) || network(f)) && s.NodeStealPercent > 0 {
		out = append(out, Cause{SettingNested,
			fmt.Sprintf("the container runs' nodes reported %.1f%% steal time, which only a kernel under a hypervisor counts: the nodes are VMs, "+
				"and KubeVirt's VMs on them run nested, every I/O exit handled by two hypervisors; a nested KVM guest gave 0.27-0.39 of the host's "+
				"random IOPS (cloud-hypervisor-4387), and the bands are from bare metal", s.NodeStealPercent)})
	}
	if s.RequestsBelowLimits {
		out = append(out, Cause{SettingRequests,
			"requests below limits leave the VMs Burstable: the VMI's CPU also carries QEMU's emulator and IO threads and can be throttled or crowded out; no published figure"})
	}
	if (f == StorageRandomIOPS || f == StorageLatency) && s.IOThreads == "" && !s.DedicatedIOThread {
		out = append(out, Cause{SettingIOThreads,
			"without IO threads every I/O goes through QEMU's main loop; IO threads gave up to 2x in microbenchmarks (redhat-iothreads)"})
	}
	if (f == Compute || f == MemoryBandwidth || f == RandomMemory || f == NetworkLatency) && !s.DedicatedCPUs {
		out = append(out, Cause{SettingDedicatedCPUs,
			"shared vCPUs float over the host's cores; pinning with the cache topology took Linpack from 0.83 to 0.98 of native (felter2014)"})
	}
	if f == RandomMemory && s.Hugepages == "" {
		out = append(out, Cause{SettingHugepages,
			"random access pays for TLB misses twice under nested paging (0.86 of native on one socket); huge pages are the standard remedy, with no KubeVirt figure yet (felter2014, scientific-wg)"})
	}
	return out
}

// aboveCauses says what to suspect for a VM faster than KVM allows: a cache serving the VM, or a
// container arm held back.
func aboveCauses(f Family, s Settings) []Cause {
	var out []Cause
	if storage(f) && is(s.DiskCache, cacheWriteback) {
		out = append(out, Cause{SettingDiskCache,
			"writeback lets the host's page cache answer the VM: caching, not the disk, is measured"})
	}
	out = append(out, Cause{"the container platform's runs",
		"a VM above its band points at the container arm: CPU throttling at its limit, or noisy neighbours on its nodes; compare their runs' nodes and spread"})
	return out
}
