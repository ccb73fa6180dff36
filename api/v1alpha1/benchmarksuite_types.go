package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlatformType is the kind of environment a platform runs the benchmarks in.
// +kubebuilder:validation:Enum=Container;VM;Host
type PlatformType string

const (
	// PlatformContainer runs the benchmarks in pods: a Kubeflow MPIJob with a launcher and workers.
	PlatformContainer PlatformType = "Container"
	// PlatformVM runs the benchmarks in KubeVirt VirtualMachineInstances.
	PlatformVM PlatformType = "VM"
	// PlatformHost runs the benchmarks in pods on the host network: the bare baseline.
	PlatformHost PlatformType = "Host"
)

// Platform is one execution path whose results are compared with the others.
// +kubebuilder:validation:XValidation:rule="!has(self.runtimeClassName) || self.type == 'Container'",message="runtimeClassName is only allowed on platforms of type Container; remove it or set type: Container"
// +kubebuilder:validation:XValidation:rule="!has(self.vm) || self.type == 'VM'",message="vm settings are only allowed on platforms of type VM: remove vm or set type: VM"
type Platform struct {
	// Name identifies the platform in status, metrics and child names, for example "vm" or "kata".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=12
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z][a-z0-9]*$')",message="a platform name is lowercase letters and digits, starting with a letter, without '-': run names are <suite>-<platform>-<repetition>, and with a '-' two suites of a namespace could name a run alike (x-vm with container, x with vm-container)"
	Name string `json:"name"`

	// Type selects how the platform runs: Container, VM or Host.
	// +required
	Type PlatformType `json:"type"`

	// RuntimeClassName runs the platform's pods with this RuntimeClass, for example kata or gvisor.
	// Only for type Container.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="runtimeClassName must name a RuntimeClass: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`

	// VM says how the VMs of a platform of type VM are built: network binding, disk bus and cache,
	// dedicated CPUs, huge pages, IO threads. Left out, or any field of it left out, the VMs are built
	// as by default, so that two VM platforms of one suite, one with settings and one without, show
	// what the settings change against the same baseline. Only for type VM.
	// +optional
	VM *VMSettings `json:"vm,omitempty"`
}

// BenchmarkSuiteSpec says which benchmarks to run, on which platforms, how often and where.
// +kubebuilder:validation:XValidation:rule="self.platforms.exists(p, p.name == self.baseline)",message="spec.baseline must name one of spec.platforms"
// +kubebuilder:validation:XValidation:rule="self.cluster.nodes >= 2 || self.benchmarks.all(b, b.type != 'iperf3' && b.type != 'ping' && b.type != 'netperf' && b.type != 'netcat')",message="iperf3, ping, netperf and netcat measure between nodes: set spec.cluster.nodes to 2 or more, or remove those benchmarks"
// +kubebuilder:validation:XValidation:rule="self.cluster.nodes >= 3 || self.benchmarks.all(b, (!has(b.iperf3) || !b.iperf3.pairs.exists(p, p == 'node-node')) && (!has(b.ping) || !b.ping.pairs.exists(p, p == 'node-node')) && (!has(b.netperf) || !b.netperf.pairs.exists(p, p == 'node-node')) && (!has(b.netcat) || !b.netcat.pairs.exists(p, p == 'node-node')))",message="the node-node pair needs two workers: set spec.cluster.nodes to 3 or more, or list only master-node and node-master in pairs"
// +kubebuilder:validation:XValidation:rule="has(self.sharedStorage) || self.platforms.all(p, p.type == 'VM') || self.benchmarks.all(b, (!has(b.iozone) || !b.iozone.targets.exists(t, t == 'Shared')) && (!has(b.fio) || b.fio.target != 'Shared'))",message="a benchmark uses the Shared storage target, which pods of Container and Host platforms mount as a ReadWriteMany volume: set spec.sharedStorage.storageClassName to a ReadWriteMany storage class, or use the Local or RootFS target (VM platforms need no storage class: their master VM exports its disk over NFS)"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || self.repetitions >= 2",message="spec.precision needs spec.repetitions of 2 or more, the minimum number of repetitions: one repetition has no confidence interval"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || self.precision.maxRepetitions >= self.repetitions",message="spec.precision.maxRepetitions must be at least spec.repetitions, the minimum: raise maxRepetitions or lower repetitions"
// +kubebuilder:validation:XValidation:rule="!has(self.precision) || self.precision.metrics.all(m, self.benchmarks.exists(b, m == b.name || m.startsWith(b.name + '/')))",message="every spec.precision.metrics entry must be a benchmark's name, or a benchmark's name, '/' and one of its metrics (for example hpl/HPL_Tflops): name a benchmark of spec.benchmarks"
// +kubebuilder:validation:XValidation:rule="self.benchmarks.all(b, !has(b.hpcc) || !has(b.hpcc.p) || !has(b.hpcc.q) || b.hpcc.p * b.hpcc.q == (has(b.hpcc.ranksPerNode) ? b.hpcc.ranksPerNode : self.cluster.cpu) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes))",message="hpcc p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers): change hpcc.p and hpcc.q, or leave both out for the squarest grid"
// +kubebuilder:validation:XValidation:rule="self.benchmarks.all(b, !has(b.hpcc) || !has(b.hpcc.grids) || b.hpcc.grids.all(g, g.p * g.q == (has(b.hpcc.ranksPerNode) ? b.hpcc.ranksPerNode : self.cluster.cpu) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes)))",message="every hpcc.grids entry's p*q must equal the number of MPI ranks, ranksPerNode (default: cluster.cpu) * cluster.nodes (cluster.nodes - 1 with hpcc.nodes Workers): HPCC runs its built-in defaults instead of the file when a grid needs more ranks, and leaves ranks idle when it needs fewer; change the grids"
// +kubebuilder:validation:XValidation:rule="self.cluster.nodes >= 2 || self.benchmarks.all(b, !has(b.hpcc) || !has(b.hpcc.nodes) || b.hpcc.nodes != 'Workers')",message="hpcc.nodes Workers runs HPCC on every node but the master, and a cluster of 1 node has no other: set spec.cluster.nodes to 2 or more, or set hpcc.nodes to All"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.platforms.all(p, !has(p.vm) || !has(p.vm.isolateEmulatorThread) || !p.vm.isolateEmulatorThread || (has(p.vm.dedicatedCPUs) && p.vm.dedicatedCPUs) || (has(self.cluster.dedicatedCPUs) && self.cluster.dedicatedCPUs))",message="vm.isolateEmulatorThread needs dedicated CPUs, as KubeVirt puts the emulator thread on a host CPU of its own next to the pinned vCPUs: set vm.dedicatedCPUs (or cluster.dedicatedCPUs) to true, or remove isolateEmulatorThread"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.platforms.all(p, !has(p.vm) || !has(p.vm.dedicatedCPUs) || !p.vm.dedicatedCPUs || (!has(self.cluster.cpuRequest) && !has(self.cluster.memoryRequest)))",message="vm.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or remove vm.dedicatedCPUs"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.platforms.all(p, !has(p.vm) || !has(p.vm.hugepages) || !has(self.cluster.memory) || !isQuantity(string(self.cluster.memory)) || (quantity(string(self.cluster.memory)).isInteger() && quantity(string(self.cluster.memory)).asInteger() % (p.vm.hugepages == '1Gi' ? 1073741824 : 2097152) == 0))",message="vm.hugepages backs the whole guest memory with pages of that size, so cluster.memory must be a multiple of it: set cluster.memory to a multiple of the page size, for example 2Gi"
// +kubebuilder:validation:XValidation:fieldPath=".platforms",rule="self.cluster.nodes < 2 || self.benchmarks.all(b, b.type != 'hpcc') || self.platforms.all(p, !has(p.vm) || !has(p.vm.networkBinding) || p.vm.networkBinding != 'Masquerade')",message="vm.networkBinding Masquerade hides every VM behind 10.0.2.2, so HPCC's MPI ranks cannot reach each other across VMs: use Bridge or Passt, or remove the hpcc benchmarks"
// +kubebuilder:validation:XValidation:fieldPath=".benchmarks",rule="!(!has(self.cluster.memory) || (isQuantity(string(self.cluster.memory)) && quantity(string(self.cluster.memory)).isInteger())) || [(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].all(m, !(m > 0 && m <= 274877906944) || !self.benchmarks.exists(b, has(b.hpcc) && (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes) >= 1 && (has(b.hpcc.problemSize) ? [b.hpcc.problemSize] : has(b.hpcc.problemSizes) ? b.hpcc.problemSizes : []).exists(n, 800 * n * n > m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes))))",messageExpression="[(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].map(m, self.benchmarks.filter(b, has(b.hpcc) && (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes) >= 1 && (has(b.hpcc.problemSize) ? [b.hpcc.problemSize] : has(b.hpcc.problemSizes) ? b.hpcc.problemSizes : []).exists(n, 800 * n * n > m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes))).map(b, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i < size((has(b.hpcc.problemSize) ? [b.hpcc.problemSize] : has(b.hpcc.problemSizes) ? b.hpcc.problemSizes : [])) && 800 * (has(b.hpcc.problemSize) ? [b.hpcc.problemSize] : has(b.hpcc.problemSizes) ? b.hpcc.problemSizes : [])[i] * (has(b.hpcc.problemSize) ? [b.hpcc.problemSize] : has(b.hpcc.problemSizes) ? b.hpcc.problemSizes : [])[i] > m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes)).map(i, (has(b.hpcc.problemSize) ? [b.hpcc.problemSize] : has(b.hpcc.problemSizes) ? b.hpcc.problemSizes : [])[i]).map(n, 'benchmark %s: hpcc.%s %d needs %.1f GiB of matrix (8·N² bytes), more than hpcc.memoryPercent %d%% of the memory of the %d node(s) taking part, each of cluster.memory %s: set problem sizes of at most %d, or raise cluster.memory or cluster.nodes'.format([dyn(b.name), dyn(has(b.hpcc.problemSize) ? 'problemSize' : 'problemSizes entry'), dyn(n), dyn(double(n) * double(n) * 8.0 / 1073741824.0), dyn((has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80)), dyn((has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes)), dyn((m % 1073741824 == 0 ? '%dGi'.format([m / 1073741824]) : m % 1048576 == 0 ? '%dMi'.format([m / 1048576]) : '%d'.format([m]))), dyn([m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes) / 800].map(e, [[[[[[0].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 10000000000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 100000000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 1000000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 10000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 100 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) <= e).size())[0])[0])]))[0])[0])[0]"
// +kubebuilder:validation:XValidation:fieldPath=".benchmarks",rule="!(!has(self.cluster.memory) || (isQuantity(string(self.cluster.memory)) && quantity(string(self.cluster.memory)).isInteger())) || [(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].all(m, !(m > 0 && m <= 274877906944) || !self.benchmarks.exists(b, has(b.hpcc) && !has(b.hpcc.problemSize) && !has(b.hpcc.problemSizes) && (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes) >= 1 && (has(b.hpcc.blockSizes) ? b.hpcc.blockSizes : [has(b.hpcc.nb) ? b.hpcc.nb : 192]).exists(x, 800 * x * x > m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes))))",messageExpression="[(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].map(m, self.benchmarks.filter(b, has(b.hpcc) && !has(b.hpcc.problemSize) && !has(b.hpcc.problemSizes) && (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes) >= 1 && (has(b.hpcc.blockSizes) ? b.hpcc.blockSizes : [has(b.hpcc.nb) ? b.hpcc.nb : 192]).exists(x, 800 * x * x > m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes))).map(b, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].filter(i, i < size((has(b.hpcc.blockSizes) ? b.hpcc.blockSizes : [has(b.hpcc.nb) ? b.hpcc.nb : 192])) && 800 * (has(b.hpcc.blockSizes) ? b.hpcc.blockSizes : [has(b.hpcc.nb) ? b.hpcc.nb : 192])[i] * (has(b.hpcc.blockSizes) ? b.hpcc.blockSizes : [has(b.hpcc.nb) ? b.hpcc.nb : 192])[i] > m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes)).map(i, (has(b.hpcc.blockSizes) ? b.hpcc.blockSizes : [has(b.hpcc.nb) ? b.hpcc.nb : 192])[i]).map(x, 'benchmark %s: without hpcc.problemSize, N is derived from hpcc.memoryPercent %d%% of the memory of the %d node(s) taking part, each of cluster.memory %s, and that matrix is narrower than one block of %d: set hpcc.problemSize, block sizes of at most %d, or raise cluster.memory or hpcc.memoryPercent'.format([dyn(b.name), dyn((has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80)), dyn((has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes)), dyn((m % 1073741824 == 0 ? '%dGi'.format([m / 1073741824]) : m % 1048576 == 0 ? '%dMi'.format([m / 1048576]) : '%d'.format([m]))), dyn(x), dyn([m * (has(b.hpcc.memoryPercent) ? b.hpcc.memoryPercent : 80) * (has(b.hpcc.nodes) && b.hpcc.nodes == 'Workers' ? self.cluster.nodes - 1 : self.cluster.nodes) / 800].map(e, [[[[[[0].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 10000000000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 100000000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 1000000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 10000 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) * 100 <= e).size())[0]].map(r, r * 10 + [1, 2, 3, 4, 5, 6, 7, 8, 9].filter(d, (r * 10 + d) * (r * 10 + d) <= e).size())[0])[0])]))[0])[0])[0]"
// +kubebuilder:validation:XValidation:fieldPath=".benchmarks",rule="!(!has(self.cluster.memory) || (isQuantity(string(self.cluster.memory)) && quantity(string(self.cluster.memory)).isInteger())) || [(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].all(m, !(m > 0 && m <= 274877906944) || !self.benchmarks.exists(b, has(b.sysbenchMemory) && has(b.sysbenchMemory.blockSizes) && b.sysbenchMemory.blockSizes.exists(s, s.matches('^[1-9][0-9]{0,6}[KMG]?$') && int(s.endsWith('G') || s.endsWith('M') || s.endsWith('K') ? s.substring(0, size(s) - 1) : s) * (s.endsWith('G') ? 1073741824 : s.endsWith('M') ? 1048576 : s.endsWith('K') ? 1024 : 1) > m)))",messageExpression="[(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].map(m, self.benchmarks.filter(b, has(b.sysbenchMemory) && has(b.sysbenchMemory.blockSizes) && b.sysbenchMemory.blockSizes.exists(s, s.matches('^[1-9][0-9]{0,6}[KMG]?$') && int(s.endsWith('G') || s.endsWith('M') || s.endsWith('K') ? s.substring(0, size(s) - 1) : s) * (s.endsWith('G') ? 1073741824 : s.endsWith('M') ? 1048576 : s.endsWith('K') ? 1024 : 1) > m)).map(b, 'benchmark %s: sysbenchMemory.blockSizes holds a block size above cluster.memory %s, the memory limit of each node, and sysbench allocates the whole block: use block sizes of at most %s'.format([b.name, (m % 1073741824 == 0 ? '%dGi'.format([m / 1073741824]) : m % 1048576 == 0 ? '%dMi'.format([m / 1048576]) : '%d'.format([m])), (m % 1073741824 == 0 ? '%dGi'.format([m / 1073741824]) : m % 1048576 == 0 ? '%dMi'.format([m / 1048576]) : '%d'.format([m]))]))[0])[0]"
// +kubebuilder:validation:XValidation:fieldPath=".benchmarks",rule="!(!has(self.cluster.memory) || (isQuantity(string(self.cluster.memory)) && quantity(string(self.cluster.memory)).isInteger())) || [(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].all(m, !(m > 0 && m <= 274877906944) || !self.benchmarks.exists(b, has(b.stressNGVM) && has(b.stressNGVM.bytes) && b.stressNGVM.bytes.matches('^[1-9][0-9]{0,6}[KMG]?$') && int(b.stressNGVM.bytes.endsWith('G') || b.stressNGVM.bytes.endsWith('M') || b.stressNGVM.bytes.endsWith('K') ? b.stressNGVM.bytes.substring(0, size(b.stressNGVM.bytes) - 1) : b.stressNGVM.bytes) * (b.stressNGVM.bytes.endsWith('G') ? 1073741824 : b.stressNGVM.bytes.endsWith('M') ? 1048576 : b.stressNGVM.bytes.endsWith('K') ? 1024 : 1) > m))",messageExpression="[(has(self.cluster.memory) ? quantity(string(self.cluster.memory)).asInteger() : 2147483648)].map(m, self.benchmarks.filter(b, has(b.stressNGVM) && has(b.stressNGVM.bytes) && b.stressNGVM.bytes.matches('^[1-9][0-9]{0,6}[KMG]?$') && int(b.stressNGVM.bytes.endsWith('G') || b.stressNGVM.bytes.endsWith('M') || b.stressNGVM.bytes.endsWith('K') ? b.stressNGVM.bytes.substring(0, size(b.stressNGVM.bytes) - 1) : b.stressNGVM.bytes) * (b.stressNGVM.bytes.endsWith('G') ? 1073741824 : b.stressNGVM.bytes.endsWith('M') ? 1048576 : b.stressNGVM.bytes.endsWith('K') ? 1024 : 1) > m).map(b, 'benchmark %s: stressNGVM.bytes %s is more than cluster.memory %s, the memory limit of each node, and the stress-ng workers allocate all of it between them: set bytes to at most %s, or a share such as 50%%'.format([b.name, b.stressNGVM.bytes, (m % 1073741824 == 0 ? '%dGi'.format([m / 1073741824]) : m % 1048576 == 0 ? '%dMi'.format([m / 1048576]) : '%d'.format([m])), (m % 1073741824 == 0 ? '%dGi'.format([m / 1073741824]) : m % 1048576 == 0 ? '%dMi'.format([m / 1048576]) : '%d'.format([m]))]))[0])[0]"
// +kubebuilder:validation:XValidation:fieldPath=".sharedStorage",rule="!has(self.sharedStorage) || !has(self.sharedStorage.size) || self.platforms.all(p, p.type == 'VM') || !(isQuantity(string(self.sharedStorage.size)) && quantity(string(self.sharedStorage.size)).isInteger()) || [quantity(string(self.sharedStorage.size)).asInteger()].all(c, c <= 0 || c > 1099511627776 || !self.benchmarks.exists(b, (has(b.iozone) && has(b.iozone.targets) && 'Shared' in b.iozone.targets ? ((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).matches('^[1-9][0-9]{0,6}[kmgKMG]?$') ? ((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).lowerAscii().endsWith('g') ? int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).substring(0, size((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) - 1)) * 1073741824 : (has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).lowerAscii().endsWith('m') ? int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).substring(0, size((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) - 1)) * 1048576 : (has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).lowerAscii().endsWith('k') ? int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).substring(0, size((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) - 1)) * 1024 : int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) * 1024) : 0) : has(b.fio) && has(b.fio.target) && b.fio.target == 'Shared' ? ((has(b.fio.size) ? b.fio.size : '256m').matches('^[1-9][0-9]{0,6}[kmgKMG]?$') ? ((has(b.fio.size) ? b.fio.size : '256m').lowerAscii().endsWith('g') ? int((has(b.fio.size) ? b.fio.size : '256m').substring(0, size((has(b.fio.size) ? b.fio.size : '256m')) - 1)) * 1073741824 : (has(b.fio.size) ? b.fio.size : '256m').lowerAscii().endsWith('m') ? int((has(b.fio.size) ? b.fio.size : '256m').substring(0, size((has(b.fio.size) ? b.fio.size : '256m')) - 1)) * 1048576 : (has(b.fio.size) ? b.fio.size : '256m').lowerAscii().endsWith('k') ? int((has(b.fio.size) ? b.fio.size : '256m').substring(0, size((has(b.fio.size) ? b.fio.size : '256m')) - 1)) * 1024 : int((has(b.fio.size) ? b.fio.size : '256m')) * 1) : 0) * (has(b.fio.numJobs) ? b.fio.numJobs : 1) : 0) * (has(b.concurrency) && b.concurrency == 'AllNodes' ? self.cluster.nodes : 1) > c))",messageExpression="[quantity(string(self.sharedStorage.size)).asInteger()].map(c, self.benchmarks.filter(b, (has(b.iozone) && has(b.iozone.targets) && 'Shared' in b.iozone.targets ? ((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).matches('^[1-9][0-9]{0,6}[kmgKMG]?$') ? ((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).lowerAscii().endsWith('g') ? int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).substring(0, size((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) - 1)) * 1073741824 : (has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).lowerAscii().endsWith('m') ? int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).substring(0, size((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) - 1)) * 1048576 : (has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).lowerAscii().endsWith('k') ? int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M')).substring(0, size((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) - 1)) * 1024 : int((has(b.iozone.auto) && b.iozone.auto ? (has(b.iozone.maxFileSize) ? b.iozone.maxFileSize : '512M') : (has(b.iozone.fileSize) ? b.iozone.fileSize : '512M'))) * 1024) : 0) : has(b.fio) && has(b.fio.target) && b.fio.target == 'Shared' ? ((has(b.fio.size) ? b.fio.size : '256m').matches('^[1-9][0-9]{0,6}[kmgKMG]?$') ? ((has(b.fio.size) ? b.fio.size : '256m').lowerAscii().endsWith('g') ? int((has(b.fio.size) ? b.fio.size : '256m').substring(0, size((has(b.fio.size) ? b.fio.size : '256m')) - 1)) * 1073741824 : (has(b.fio.size) ? b.fio.size : '256m').lowerAscii().endsWith('m') ? int((has(b.fio.size) ? b.fio.size : '256m').substring(0, size((has(b.fio.size) ? b.fio.size : '256m')) - 1)) * 1048576 : (has(b.fio.size) ? b.fio.size : '256m').lowerAscii().endsWith('k') ? int((has(b.fio.size) ? b.fio.size : '256m').substring(0, size((has(b.fio.size) ? b.fio.size : '256m')) - 1)) * 1024 : int((has(b.fio.size) ? b.fio.size : '256m')) * 1) : 0) * (has(b.fio.numJobs) ? b.fio.numJobs : 1) : 0) * (has(b.concurrency) && b.concurrency == 'AllNodes' ? self.cluster.nodes : 1) > c).map(b, 'benchmark %s writes more to the Shared target than sharedStorage.size %s holds, the ReadWriteMany claim of the pods of Container and Host platforms, from %d node(s) at a time (concurrency %s): raise sharedStorage.size, or write at most %s from each node (iozone fileSize, or maxFileSize with auto; fio size times numJobs)'.format([dyn(b.name), dyn([c].map(v, v % 1073741824 == 0 ? '%dGi'.format([v / 1073741824]) : v % 1048576 == 0 ? '%dMi'.format([v / 1048576]) : v % 1024 == 0 ? '%dKi'.format([v / 1024]) : '%d'.format([v]))[0]), dyn((has(b.concurrency) && b.concurrency == 'AllNodes' ? self.cluster.nodes : 1)), dyn(has(b.concurrency) ? b.concurrency : 'OneNodeAtATime'), dyn([c / (has(b.concurrency) && b.concurrency == 'AllNodes' ? self.cluster.nodes : 1)].map(f, f >= 1073741824 && f % 1073741824 == 0 ? '%dGi'.format([f / 1073741824]) : f >= 1048576 ? '%dMi'.format([f / 1048576]) : '%dKi'.format([f / 1024]))[0])]))[0])[0]"
type BenchmarkSuiteSpec struct {
	// Platforms lists the execution paths to compare. The default is a container platform and a VM
	// platform, the comparison the seeds made by hand.
	// +optional
	// +kubebuilder:default={{name: container, type: Container}, {name: vm, type: VM}}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=4
	// +listType=map
	// +listMapKey=name
	Platforms []Platform `json:"platforms,omitempty"`

	// Baseline names the platform that the other platforms' results are divided by.
	// +optional
	// +kubebuilder:default=container
	// +kubebuilder:validation:MaxLength=12
	Baseline string `json:"baseline,omitempty"`

	// Cluster is the shape of the cluster built for each run, the same on every platform.
	// +optional
	// +kubebuilder:default={}
	Cluster ClusterShape `json:"cluster,omitempty"`

	// Benchmarks run in this order in every run.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=12
	// +listType=map
	// +listMapKey=name
	Benchmarks []Benchmark `json:"benchmarks"`

	// Repetitions is how many times every benchmark runs on every platform. Runs alternate between
	// platforms, so that drift in the host affects all platforms alike. With spec.precision it is the
	// minimum, and at least 2.
	// +optional
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	Repetitions int32 `json:"repetitions,omitempty"`

	// Precision, when set, makes spec.repetitions the minimum: once every planned run succeeded, the
	// suite plans one more repetition of every platform (interleaved as before) while any named
	// metric's 95% confidence interval is wider than the target on any platform, up to
	// precision.maxRepetitions. The PrecisionReached condition says how it ended.
	// +optional
	Precision *PrecisionSpec `json:"precision,omitempty"`

	// Placement applies to every platform's pods and VMs.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// SharedStorage is required when a benchmark uses the Shared storage target and a platform of
	// type Container or Host runs it; VM platforms share their master VM's disk over NFS instead.
	// +optional
	SharedStorage *SharedStorage `json:"sharedStorage,omitempty"`

	// Timeout bounds the whole suite. When it passes, the running run is stopped and the suite fails.
	// +optional
	// +kubebuilder:default="6h"
	// +kubebuilder:validation:XValidation:rule="!self.matches('^([0-9]{1,6}([.][0-9]{1,6})?(h|m|s|ms|us|ns))+$') || (duration(self) >= duration('1m') && duration(self) <= duration('720h'))",message="set spec.timeout between 1m and 720h (30 days)"
	Timeout *Duration `json:"timeout,omitempty"`

	// Report sets how `vmbench report` judges this suite's results.
	// +optional
	Report *ReportSpec `json:"report,omitempty"`
}

// PrecisionSpec is a precision target that repetitions go on until.
type PrecisionSpec struct {
	// HalfWidthPercent is the target half-width of the 95% confidence interval of a metric's mean,
	// in percent of the mean. The interval is over repetition means, as in the report: the nodes of
	// one run are not independent.
	// +required
	// +kubebuilder:validation:XValidation:rule="self >= 0.5 && self <= 50.0",message="set spec.precision.halfWidthPercent between 0.5 and 50"
	HalfWidthPercent float64 `json:"halfWidthPercent"`

	// MaxRepetitions caps the repetitions of every platform. The suite still completes there, with
	// PrecisionReached False naming the metrics above the target.
	// +required
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=30
	MaxRepetitions int32 `json:"maxRepetitions"`

	// Metrics names what must reach the target: a benchmark's name (every metric it measures) or
	// "<benchmark>/<metric>", with the metric's name as status.results shows it.
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=12
	// +kubebuilder:validation:items:MaxLength=89
	// +listType=set
	Metrics []string `json:"metrics"`
}

// ReportSpec sets how the report judges the results.
type ReportSpec struct {
	// TolerancePercent is the band around a ratio of 1, in percent, inside which a metric whose whole
	// 95% interval falls counts as equivalent. `vmbench report --tolerance` overrides it.
	// +optional
	// +kubebuilder:default=5
	// +kubebuilder:validation:XValidation:rule="self >= 0.0 && self <= 50.0",message="set spec.report.tolerancePercent between 0 and 50"
	TolerancePercent *float64 `json:"tolerancePercent,omitempty"`
}

// BenchmarkSuite runs the same benchmarks in containers and in virtual machines on one cluster and
// compares the results.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=suite;suites,categories=vmbench
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Progress",type=string,JSONPath=`.status.progress`
// +kubebuilder:printcolumn:name="Queue",type=integer,JSONPath=`.status.queuePosition`,description="Place in the line of suites waiting for a run slot, from 1"
// +kubebuilder:printcolumn:name="Benchmark",type=string,JSONPath=`.status.headline.benchmark`,priority=1
// +kubebuilder:printcolumn:name="Metric",type=string,JSONPath=`.status.headline.metric`
// +kubebuilder:printcolumn:name="Ratio",type=string,JSONPath=`.status.headline.summary`
// +kubebuilder:printcolumn:name="Band",type=string,JSONPath=`.status.headline.band`,description="The headline ratio against KVM's expected band: within, below, above or emulated"
// +kubebuilder:printcolumn:name="Precision",type=string,JSONPath=`.status.conditions[?(@.type=="PrecisionReached")].reason`,priority=1,description="With spec.precision: Measuring, TargetReached, MaxRepetitionsReached or NotMeasured"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.status) || !has(oldSelf.status.startTime) || (self.spec.platforms == oldSelf.spec.platforms && self.spec.benchmarks == oldSelf.spec.benchmarks && self.spec.cluster == oldSelf.spec.cluster && self.spec.repetitions == oldSelf.spec.repetitions && has(self.spec.precision) == has(oldSelf.spec.precision) && (!has(self.spec.precision) || self.spec.precision == oldSelf.spec.precision))",message="spec.platforms, benchmarks, cluster, repetitions and precision cannot change once the first run has started: the results would mix two experiments; create a new BenchmarkSuite instead"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must be a DNS-1035 label, because it names the suite's Services and MPIJobs: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 30",message="metadata.name must be at most 30 characters, so that the names of the suite's pods and VMs stay valid DNS labels"
type BenchmarkSuite struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to run.
	// +required
	Spec BenchmarkSuiteSpec `json:"spec"`

	// Status is what ran and what it measured.
	// +optional
	Status BenchmarkSuiteStatus `json:"status,omitempty"`
}

// BenchmarkSuiteList is a list of BenchmarkSuites.
// +kubebuilder:object:root=true
type BenchmarkSuiteList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BenchmarkSuite `json:"items"`
}

// SuiteTimeout bounds the whole suite, defaulted like ClusterShape.MemoryLimit.
func (s BenchmarkSuiteSpec) SuiteTimeout() time.Duration {
	if s.Timeout == nil {
		return 6 * time.Hour
	}
	return s.Timeout.Duration()
}

// ActiveRun is the run the suite is on: the first that is Pending or Running; nil when every run
// ended.
func (st *BenchmarkSuiteStatus) ActiveRun() *RunStatus {
	for i := range st.Runs {
		if p := st.Runs[i].Phase; p == RunPending || p == RunRunning {
			return &st.Runs[i]
		}
	}
	return nil
}
