package v1alpha1

// Parameters of the CPU and memory tools that run on every node: sysbench and stress-ng.

// SysbenchCPUParams configure `sysbench cpu` on every node.
type SysbenchCPUParams struct {
	// MaxPrime is the upper limit of the prime search.
	// +optional
	// +kubebuilder:default=20000
	// +kubebuilder:validation:Minimum=1
	MaxPrime int32 `json:"maxPrime,omitempty"`

	// Threads is the number of worker threads; 0 means the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	Threads int32 `json:"threads,omitempty"`

	// Duration of the test.
	// +optional
	// +kubebuilder:default="10s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`
}

// SysbenchMemoryParams configure `sysbench memory` on every node, once per block size.
type SysbenchMemoryParams struct {
	// BlockSizes are the memory block sizes to test, one execution each: powers of two, each at
	// most cluster.memory, as sysbench allocates the whole block.
	// +optional
	// +kubebuilder:default={"1K","1M"}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:Pattern=`^[1-9][0-9]{0,6}[KMG]?$`
	// +kubebuilder:validation:items:MaxLength=8
	// +kubebuilder:validation:items:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[KMG]?$') || ((self.endsWith('K') || self.endsWith('M') || self.endsWith('G')) ? int(self.substring(0, size(self) - 1)) : int(self)) in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608] && (self.endsWith('K') || self.endsWith('M') || self.endsWith('G') || int(self) >= 8)",message="a sysbench memory block size must be a power of two of at least 8 bytes, such as 4K, 1M or 1G: sysbench refuses any other"
	// +listType=set
	BlockSizes []string `json:"blockSizes,omitempty"`

	// TotalSize is the amount of data each execution transfers.
	// +optional
	// +kubebuilder:default="10G"
	// +kubebuilder:validation:Pattern=`^[1-9][0-9]{0,6}[KMGT]?$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^[1-9][0-9]{0,6}[KMGT]?$') || (self.endsWith('T') ? int(self.substring(0, size(self) - 1)) <= 1 : self.endsWith('G') ? int(self.substring(0, size(self) - 1)) <= 1024 : !self.endsWith('M') || int(self.substring(0, size(self) - 1)) <= 1048576)",message="totalSize must be at most 1T of memory traffic per execution: lower it, for example to 10G"
	TotalSize string `json:"totalSize,omitempty"`

	// Operation is read or write.
	// +optional
	// +kubebuilder:default=write
	// +kubebuilder:validation:Enum=read;write
	Operation string `json:"operation,omitempty"`

	// Threads is the number of worker threads; 0 means the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	Threads int32 `json:"threads,omitempty"`
}

// StressNGCPUParams configure the stress-ng cpu stressor on every node.
type StressNGCPUParams struct {
	// Method is the cpu stressor method.
	// +optional
	// +kubebuilder:default=matrixprod
	// +kubebuilder:validation:Enum=matrixprod;fft;int64;double;sqrt;all
	Method string `json:"method,omitempty"`

	// Workers is the number of stressor instances; 0 means the node's CPU count.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=256
	Workers int32 `json:"workers,omitempty"`

	// Duration of the test.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`
}

// StressNGVMParams configure the stress-ng vm stressor on every node.
type StressNGVMParams struct {
	// Bytes is the memory the workers allocate and exercise, which stress-ng divides between them: a
	// size ("512M"), at most cluster.memory, or a share of the node's memory limit ("50%").
	// +optional
	// +kubebuilder:default="50%"
	// +kubebuilder:validation:Pattern=`^([1-9][0-9]{0,6}[KMG]?|[1-9][0-9]?%)$`
	// +kubebuilder:validation:MaxLength=8
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([1-9][0-9]{0,6}[KMG]?|[1-9][0-9]?%)$') || (self.endsWith('G') ? int(self.substring(0, size(self) - 1)) <= 64 : !self.endsWith('M') || int(self.substring(0, size(self) - 1)) <= 65536)",message="bytes must be at most 64G, which the workers share, or a share of the memory such as 50%: lower it"
	Bytes string `json:"bytes,omitempty"`

	// Workers is the number of stressor instances.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Workers int32 `json:"workers,omitempty"`

	// Duration of the test.
	// +optional
	// +kubebuilder:default="60s"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1s') && duration(self) <= duration('1h'))",message="set duration between 1s and 1h"
	Duration *Duration `json:"duration,omitempty"`
}
