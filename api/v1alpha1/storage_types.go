package v1alpha1

import "slices"

// Parameters of the storage tools, iozone and fio, and the storage targets they write to.

// StorageTarget is where a storage benchmark writes its files: Local, RootFS or Shared.
// +kubebuilder:validation:Enum=Local;Shared;RootFS
type StorageTarget string

const (
	// StorageLocal is a scratch volume of the node's own: in a pod an emptyDir, mounted into the
	// container from its Kubernetes node's disk, past the container's writable layer; in a VM the
	// directory /var/lib/vmbench on its root disk, which is the disk RootFS measures too.
	StorageLocal StorageTarget = "Local"
	// StorageShared is one file system that every node of a run mounts: in pods a ReadWriteMany
	// PersistentVolumeClaim of spec.sharedStorage; in VMs an NFSv4.2 export of the master VM's root
	// disk, which every VM mounts (the master through its own loopback).
	StorageShared StorageTarget = "Shared"
	// StorageRootFS is the node's own root file system, with no volume mounted: in a pod the
	// container's writable layer (the overlay over its image), in a VM its root disk (the
	// containerDisk's copy-on-write overlay), in the directory /var/tmp/vmbench.
	StorageRootFS StorageTarget = "RootFS"
)

// UsesStorageTarget reports whether an iozone or fio benchmark names target. An empty list or target,
// which the defaults make Local, does not count.
func UsesStorageTarget(benchmarks []Benchmark, target StorageTarget) bool {
	for _, b := range benchmarks {
		if b.Iozone != nil && slices.Contains(b.Iozone.Targets, target) {
			return true
		}
		if b.Fio != nil && b.Fio.Target == target {
			return true
		}
	}
	return false
}

// IozoneTest is an iozone test group.
// +kubebuilder:validation:Enum=write;read;random
type IozoneTest string

// IozoneParams configure iozone on every node: one file and record size (fileSize, recordSize), or
// with auto every file size from minFileSize to maxFileSize, each with every record size iozone's
// automatic mode takes for it (iozone -a).
// +kubebuilder:validation:XValidation:fieldPath=".fileSize",rule="!has(self.auto) || !self.auto || !has(self.fileSize)",message="fileSize does not apply with auto: true, which runs every file size from minFileSize to maxFileSize (iozone -a -n -g): remove fileSize, or set auto to false"
// +kubebuilder:validation:XValidation:fieldPath=".recordSize",rule="!has(self.auto) || !self.auto || !has(self.recordSize)",message="recordSize does not apply with auto: true, which runs every record size from 4k to 16M that fits each file: remove recordSize, or set auto to false"
// +kubebuilder:validation:XValidation:fieldPath=".maxFileSize",rule="(has(self.auto) && self.auto) || !has(self.maxFileSize)",message="maxFileSize applies to auto: true only (iozone -a -g): set auto to true, or remove maxFileSize and set fileSize for a single file size"
// +kubebuilder:validation:XValidation:fieldPath=".minFileSize",rule="(has(self.auto) && self.auto) || !has(self.minFileSize)",message="minFileSize applies to auto: true only (iozone -a -n): set auto to true, or remove minFileSize and set fileSize for a single file size"
// +kubebuilder:validation:XValidation:fieldPath=".minFileSize",rule="!has(self.minFileSize) || !self.minFileSize.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (has(self.maxFileSize) && !self.maxFileSize.matches('^[1-9][0-9]{0,6}[kmgKMG]?$')) || (self.minFileSize.lowerAscii().endsWith('g') ? int(self.minFileSize.substring(0, size(self.minFileSize) - 1)) * 1048576 : self.minFileSize.lowerAscii().endsWith('m') ? int(self.minFileSize.substring(0, size(self.minFileSize) - 1)) * 1024 : self.minFileSize.lowerAscii().endsWith('k') ? int(self.minFileSize.substring(0, size(self.minFileSize) - 1)) : int(self.minFileSize)) <= (has(self.maxFileSize) ? (self.maxFileSize.lowerAscii().endsWith('g') ? int(self.maxFileSize.substring(0, size(self.maxFileSize) - 1)) * 1048576 : self.maxFileSize.lowerAscii().endsWith('m') ? int(self.maxFileSize.substring(0, size(self.maxFileSize) - 1)) * 1024 : self.maxFileSize.lowerAscii().endsWith('k') ? int(self.maxFileSize.substring(0, size(self.maxFileSize) - 1)) : int(self.maxFileSize)) : 524288)",message="minFileSize must not be above maxFileSize (512M when left out): lower minFileSize or raise maxFileSize"
type IozoneParams struct {
	// FileSize is the size of the test file, 512M when left out. Files that fit into memory measure
	// the page cache. Not with auto.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('m') || int(self.substring(0, size(self) - 1)) <= 16384)",message="fileSize must be at most 16G, written to the node's disk: lower it, for example to 1G"
	FileSize string `json:"fileSize,omitempty"`

	// RecordSize is the size of each read or write, 64k when left out. Not with auto.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('g') && int(self.lowerAscii().replace('k', '')) <= 16384)",message="recordSize must be at most 16M (a number without a unit counts KiB): lower it, for example to 64k"
	RecordSize string `json:"recordSize,omitempty"`

	// Auto runs iozone's automatic mode (iozone -a): every file size from minFileSize to
	// maxFileSize, doubling, each with every record size from 4k to 16M that fits it (files of 32M
	// and more skip the records below 64k, as iozone does), for the chosen tests. Each execution's
	// whole table is kept in the run's tables ConfigMap (label vmbench.io/tables-of); status keeps,
	// per test, the figure at the largest file size and its largest record size. fileSize and
	// recordSize do not apply. Auto mode writes many files one after the other: raise timeout for a
	// large maxFileSize.
	// +optional
	Auto bool `json:"auto,omitempty"`

	// MaxFileSize is the largest file size of auto mode (iozone -g), 512M when left out, as in
	// iozone itself; between 64k and 16G. A number without a unit counts KiB.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || ((self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) >= 64 && (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) <= 16777216)",message="maxFileSize must be between 64k and 16G (a number without a unit counts KiB), written to the node's disk: for example 1G"
	MaxFileSize string `json:"maxFileSize,omitempty"`

	// MinFileSize is the smallest file size of auto mode (iozone -n), 64k when left out, as in
	// iozone itself; between 64k and maxFileSize.
	// +optional
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || ((self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) >= 64 && (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) * 1048576 : self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) * 1024 : self.lowerAscii().endsWith('k') ? int(self.substring(0, size(self) - 1)) : int(self)) <= 16777216)",message="minFileSize must be between 64k and 16G (a number without a unit counts KiB): for example 64k"
	MinFileSize string `json:"minFileSize,omitempty"`

	// Tests are the iozone test groups: write (-i 0), read (-i 1), random (-i 2).
	// +optional
	// +kubebuilder:default={write,read,random}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Tests []IozoneTest `json:"tests,omitempty"`

	// Targets are the storage locations to test, each in its own execution: Local, RootFS, Shared.
	// With more than one, the metric names start with the target's name in lower case
	// ("rootfs_write").
	// +optional
	// +kubebuilder:default={Local}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=3
	// +listType=set
	Targets []StorageTarget `json:"targets,omitempty"`

	// DirectIO bypasses the page cache (iozone -I), so that a container and a VM are compared on
	// their disks rather than on their caches.
	// +optional
	DirectIO bool `json:"directIO,omitempty"`
}

// LargestFile is the largest file one execution writes: maxFileSize in auto mode, else fileSize,
// with their defaults.
func (p IozoneParams) LargestFile() string {
	if p.Auto {
		return orString(p.MaxFileSize, DefaultIozoneMaxFileSize)
	}
	return orString(p.FileSize, DefaultIozoneFileSize)
}

// FioParams are one fio job, run on every node.
type FioParams struct {
	// RW is the I/O pattern.
	// +optional
	// +kubebuilder:default=randread
	// +kubebuilder:validation:Enum=read;write;randread;randwrite;readwrite;randrw
	RW string `json:"rw,omitempty"`

	// BlockSize of each I/O.
	// +optional
	// +kubebuilder:default="4k"
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('m') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('g') && (!self.lowerAscii().endsWith('k') || int(self.substring(0, size(self) - 1)) <= 16384))",message="blockSize must be at most 16M: lower it, for example to 4k"
	BlockSize string `json:"blockSize,omitempty"`

	// Size of the file each job works on and, without Runtime, how much each job reads or writes
	// before it ends.
	// +optional
	// +kubebuilder:default="256m"
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[kmgKMG]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[kmgKMG]?$') || (self.lowerAscii().endsWith('g') ? int(self.substring(0, size(self) - 1)) <= 16 : !self.lowerAscii().endsWith('m') || int(self.substring(0, size(self) - 1)) <= 16384)",message="size must be at most 16G, written to the node's disk: lower it, for example to 1G"
	Size string `json:"size,omitempty"`

	// IODepth is the number of I/Os in flight.
	// +optional
	// +kubebuilder:default=16
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1024
	IODepth int32 `json:"ioDepth,omitempty"`

	// IOEngine is fio's ioengine.
	// +optional
	// +kubebuilder:default=libaio
	// +kubebuilder:validation:Enum=libaio;psync;sync;posixaio;io_uring
	IOEngine string `json:"ioEngine,omitempty"`

	// Direct bypasses the page cache (O_DIRECT).
	// +optional
	// +kubebuilder:default=true
	Direct *bool `json:"direct,omitempty"`

	// NumJobs is the number of parallel jobs; their results are summed.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	NumJobs int32 `json:"numJobs,omitempty"`

	// Runtime makes the job time-based: it runs for this long, going over its file again as often as
	// it takes (fio --time_based). When empty, the job is bounded by Size instead: it ends once each
	// of its jobs has read or written Size, however long that takes, up to the benchmark's timeout.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set runtime between 1s and 1h"
	Runtime *Duration `json:"runtime,omitempty"`

	// Target is where the job's file lives: Local, RootFS or Shared.
	// +optional
	// +kubebuilder:default=Local
	Target StorageTarget `json:"target,omitempty"`
}
