// Package bands holds what a correct KVM virtual machine is expected to give against a container on
// the same hardware, per metric family, from published measurements, and places a VM's measured
// ratio against that band: within, above (suspect the container), or below, with the recorded
// settings most likely to explain a result below its band. It is pure: no Kubernetes client.
package bands

import (
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// Family is a group of metrics that virtualisation affects alike.
type Family string

// The families that have a band. A metric of another kind (scalar CPU loops, FFT, PTRANS, MPI
// bandwidth, iozone through the page cache) has none: no published KVM figure anchors it.
const (
	Compute           Family = "compute"
	MemoryBandwidth   Family = "memory-bandwidth"
	RandomMemory      Family = "random-memory"
	StorageSequential Family = "storage-sequential"
	StorageRandomIOPS Family = "storage-random-iops"
	StorageLatency    Family = "storage-latency"
	NetworkThroughput Family = "network-throughput"
	NetworkLatency    Family = "network-latency"
	noFamily          Family = ""
)

// Recorded settings the bands and causes look at, compared without regard to case.
const (
	bindingMasquerade         = "masquerade"
	bindingBridge             = "bridge"
	busSata                   = "sata"
	cacheWritethrough         = "writethrough"
	cacheWriteback            = "writeback"
	variantMasqueradeNoMQueue = "masquerade without multiqueue"
	cpuHostPassthrough        = "host-passthrough"
	cpuHostModel              = "host-model"
)

// Source is a publication a band rests on.
type Source struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Ref is the address, or repository and path where the source has no address of its own.
	Ref string `json:"ref"`
}

// Sources are the publications of Table, by ID.
var Sources = []Source{
	{"felter2014", "Felter, Ferreira, Rajamony, Rubio: An updated performance comparison of virtual machines and Linux containers (IBM RC25482, 2014; ISPASS 2015), with the authors' raw data (thewmf/kvm-docker-comparison)",
		"https://docslib.org/doc/9914868/an-updated-performance-comparison-of-virtual-machines-and-linux-containers"},
	{"scientific-wg", "OpenStack Scientific WG: OpenStack and virtualised HPC (Monash Linpack on OpenStack/KVM; pinning, NUMA, host CPU model, hugepages)",
		"openstack-archive/scientific-wg: doc/source/openstack-and-virtualised-hpc.rst"},
	{"kubevirt-community-182", "KubeVirt community PR 182: masquerade against bridge binding, with and without multiqueue",
		"https://github.com/kubevirt/community/pull/182"},
	{"kubevirt-4182", "KubeVirt issue 4182: fio in a KubeVirt VM against a plain libvirt VM",
		"https://github.com/kubevirt/kubevirt/issues/4182"},
	{"redhat-iothreads", "Red Hat developers blog, 2025-06-23: multiple IOThreads in OpenShift Virtualization (best thread count among 4-8, storage up to 2x+)",
		"developers.redhat.com: feature-introduction-multiple-iothreads-openshift-virtualization"},
	{"kubevirt-disks", "KubeVirt user guide, disks and volumes: cache none by default where the file system supports O_DIRECT, else writethrough",
		"kubevirt/user-guide: docs/storage/disks_and_volumes.md"},
	{"benchmark-operator-396", "cloud-bulldozer benchmark-operator PR 396: virtio against sata disk bus in KubeVirt",
		"https://github.com/cloud-bulldozer/benchmark-operator/pull/396"},
	{"cloud-hypervisor-4387", "cloud-hypervisor issue 4387: a nested KVM guest on an Azure L8s_v3 against its host, fio on NVMe",
		"https://github.com/cloud-hypervisor/cloud-hypervisor/issues/4387"},
	{"microvm-networking", "bookpanda/microvm-networking: iperf3 and sockperf of KVM with and without vhost on CloudLab",
		"bookpanda/microvm-networking: cloudlab/results/multinode/comparison.md"},
}

// Band is what KVM gives for one family with default or tuned settings, as the anchors note it:
// a ratio VM ÷ container in the higher-is-better sense, or, for a latency family (Multiplier), how
// many times the container's latency the VM's is.
type Band struct {
	Family Family `json:"family"`
	Tuned  bool   `json:"tuned"`
	// Variant narrows the settings the band is for ("masquerade without multiqueue"); empty for
	// every VM of its kind.
	Variant    string  `json:"variant,omitempty"`
	Low        float64 `json:"low"`
	High       float64 `json:"high"`
	Multiplier bool    `json:"multiplier,omitempty"`
	// Sources are IDs of Sources.
	Sources []string `json:"sources"`
}

// SpeedRange is the band as a higher-is-better ratio, the sense of the report's speed ratio: a
// latency multiplier m becomes 1/m.
func (b Band) SpeedRange() (low, high float64) {
	if b.Multiplier {
		return 1 / b.High, 1 / b.Low
	}
	return b.Low, b.High
}

// Table is every band. Default settings: host-model CPU, shared CPUs, virtio disk with cache none,
// masquerade or passt; tuned: dedicated CPUs, huge pages, IO threads, bridge.
var Table = []Band{
	{Family: Compute, Low: 0.90, High: 1.00, Sources: []string{"felter2014", "scientific-wg"}},
	{Family: Compute, Tuned: true, Low: 0.97, High: 1.00, Sources: []string{"felter2014", "scientific-wg"}},
	{Family: MemoryBandwidth, Low: 0.95, High: 1.00, Sources: []string{"felter2014"}},
	{Family: MemoryBandwidth, Tuned: true, Low: 0.97, High: 1.00, Sources: []string{"felter2014"}},
	{Family: RandomMemory, Low: 0.85, High: 1.00, Sources: []string{"felter2014"}},
	{Family: RandomMemory, Tuned: true, Low: 0.95, High: 1.00, Sources: []string{"felter2014", "scientific-wg"}},
	{Family: StorageSequential, Low: 0.90, High: 1.00, Sources: []string{"felter2014"}},
	{Family: StorageSequential, Tuned: true, Low: 0.95, High: 1.00, Sources: []string{"felter2014"}},
	{Family: StorageRandomIOPS, Low: 0.45, High: 0.75, Sources: []string{"felter2014", "kubevirt-4182"}},
	{Family: StorageRandomIOPS, Tuned: true, Low: 0.7, High: 0.95, Sources: []string{"felter2014", "redhat-iothreads"}},
	{Family: StorageLatency, Low: 1.2, High: 2.0, Multiplier: true, Sources: []string{"felter2014"}},
	{Family: StorageLatency, Tuned: true, Low: 1.1, High: 1.5, Multiplier: true, Sources: []string{"felter2014"}},
	{Family: NetworkThroughput, Low: 0.85, High: 1.00, Sources: []string{"felter2014"}},
	{Family: NetworkThroughput, Variant: variantMasqueradeNoMQueue, Low: 0.6, High: 0.9, Sources: []string{"kubevirt-community-182"}},
	{Family: NetworkThroughput, Tuned: true, Low: 0.95, High: 1.00, Sources: []string{"felter2014"}},
	{Family: NetworkLatency, Low: 1.3, High: 2.0, Multiplier: true, Sources: []string{"felter2014", "microvm-networking"}},
	{Family: NetworkLatency, Tuned: true, Low: 1.1, High: 1.5, Multiplier: true, Sources: []string{"microvm-networking"}},
}

// FamilyOf is the family of metric of benchmark b; empty when the metric has no band.
func FamilyOf(b vmbenchv1.Benchmark, metric string) Family {
	m := strings.ToLower(metric)
	switch b.Type {
	case vmbenchv1.BenchmarkHPCC:
		return hpccFamily(m)
	case vmbenchv1.BenchmarkSysbenchMemory:
		// With several block sizes the names start with the size: bs1M_mib_per_second.
		if strings.HasSuffix(m, "mib_per_second") || strings.HasSuffix(m, "operations_per_second") {
			return MemoryBandwidth
		}
	case vmbenchv1.BenchmarkFio:
		return fioFamily(b.Fio, m)
	case vmbenchv1.BenchmarkIozone:
		// Only iozone with O_DIRECT measures the disk; without it a page cache answers.
		if b.Iozone != nil && b.Iozone.DirectIO && !strings.Contains(m, "random") && !strings.Contains(m, "stride") {
			return StorageSequential
		}
	case vmbenchv1.BenchmarkIperf3, vmbenchv1.BenchmarkNetcat:
		if strings.HasSuffix(m, "bits_per_second") || strings.HasSuffix(m, "bytes_per_second") {
			return NetworkThroughput
		}
	case vmbenchv1.BenchmarkNetperf:
		switch {
		case strings.HasSuffix(m, "bits_per_second"):
			return NetworkThroughput
		case strings.HasSuffix(m, "transactions_per_second"), strings.Contains(m, "latency"):
			return NetworkLatency
		}
	case vmbenchv1.BenchmarkPing:
		if m == "rtt_avg_ms" || m == "rtt_min_ms" {
			return NetworkLatency
		}
	}
	return noFamily
}

func hpccFamily(m string) Family {
	switch {
	case strings.HasPrefix(m, "hpl_"), strings.Contains(m, "dgemm"):
		return Compute
	case strings.Contains(m, "stream"):
		return MemoryBandwidth
	case strings.Contains(m, "randomaccess"):
		return RandomMemory
	case strings.Contains(m, "pingpong") && strings.Contains(m, "latency"),
		strings.Contains(m, "ring") && strings.Contains(m, "latency"):
		// MPI's small-message latency rides on the network's round trip.
		return NetworkLatency
	}
	return noFamily
}

// fioFamily splits fio's metrics by the job's pattern: random jobs' IOPS and bandwidth, sequential
// jobs' bandwidth and IOPS, and every job's completion latency.
func fioFamily(p *vmbenchv1.FioParams, m string) Family {
	if strings.Contains(m, "clat_") {
		return StorageLatency
	}
	if !strings.HasSuffix(m, "_iops") && !strings.HasSuffix(m, "_bw_kib_per_second") {
		return noFamily
	}
	rw := "randread"
	if p != nil && p.RW != "" {
		rw = p.RW
	}
	random := strings.HasPrefix(rw, "rand")
	switch {
	case strings.Contains(m, "rand"):
		random = true
	case strings.Contains(m, "seq"):
		random = false
	}
	if random {
		return StorageRandomIOPS
	}
	return StorageSequential
}
