package v1alpha1

import (
	"fmt"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The sizes a node of the cluster cannot hold. The CRD refuses each at admission with the same bounds
// (the memory-fit rules of BenchmarkSuiteSpec and ClusterShape); fitProblem applies them again for
// `vmbench preflight -f` and for suites stored before the rules existed.

// MaxMemoryFitBytes is the largest cluster.memory the fit rules judge; a larger one is refused by
// cluster.memory's own bound first.
var MaxMemoryFitBytes = MaxClusterMemory.Value()

// memoryBlock is a sysbench memory block size as the CRD takes it.
var memoryBlock = regexp.MustCompile(`^[1-9][0-9]{0,6}[KMG]?$`)

// blockSizeProblem says why sysbench would refuse block size s: it takes powers of two of at least
// 8 bytes only.
func blockSizeProblem(path, s string) error {
	n, ok := sizeBytes(s, memoryBlock, 1)
	if !ok || n < 8 || n&(n-1) != 0 {
		return fmt.Errorf("%s: %q is not a power of two of at least 8 bytes, such as 4K, 1M or 1G, and sysbench refuses any other: change it", path, s)
	}
	return nil
}

// fitProblem says which request or size of the spec does not fit the memory or CPUs of a node.
func fitProblem(spec *BenchmarkSuiteSpec) error {
	shape := spec.Cluster
	cpuRequest, memoryRequest := shape.Requests()
	if cpuRequest.Cmp(*resource.NewQuantity(int64(shape.CPULimit()), resource.DecimalSI)) > 0 {
		return fmt.Errorf("cluster.cpuRequest %s exceeds cluster.cpu %d: lower cluster.cpuRequest or remove it", cpuRequest.String(), shape.CPULimit())
	}
	memory := shape.MemoryLimit()
	if memoryRequest.Cmp(memory) > 0 {
		return fmt.Errorf("cluster.memoryRequest %s exceeds cluster.memory %s: lower cluster.memoryRequest or remove it", memoryRequest.String(), memory.String())
	}
	if err := sharedFitProblem(spec); err != nil {
		return err
	}
	m := memory.Value()
	if m <= 0 || m > MaxMemoryFitBytes {
		return nil
	}
	for i, b := range spec.Benchmarks {
		path := fmt.Sprintf("spec.benchmarks[%d]", i)
		switch {
		case b.HPCC != nil:
			if err := hplFitProblem(path, b.Name, b.HPCC, shape.NodeCount(), memory); err != nil {
				return err
			}
		case b.SysbenchMemory != nil:
			for _, s := range b.SysbenchMemory.BlockSizes {
				if err := blockSizeProblem(path+".sysbenchMemory.blockSizes", s); err != nil {
					return err
				}
				if n, ok := sizeBytes(s, memoryBlock, 1); ok && n > m {
					return fmt.Errorf("%s.sysbenchMemory.blockSizes: %s is more than cluster.memory %s, the memory limit of each node, and sysbench allocates the whole block: use block sizes of at most %s",
						path, s, memory.String(), memory.String())
				}
			}
		case b.StressNGVM != nil:
			if n, ok := sizeBytes(b.StressNGVM.Bytes, vmBytes, 1); ok && n > m {
				return fmt.Errorf("%s.stressNGVM.bytes: %s is more than cluster.memory %s, the memory limit of each node, and the stress-ng workers allocate all of it between them: set bytes to at most %s, or a share such as 50%%",
					path, b.StressNGVM.Bytes, memory.String(), memory.String())
			}
		}
	}
	return nil
}

// hplFitProblem says whether the HPL matrix of every problem size, 8·N² bytes, fits in memoryPercent
// of the memory of the nodes taking part or, without a problem size, whether the N derived from it
// holds one block of the largest block size.
func hplFitProblem(path, name string, p *HPCCParams, clusterNodes int32, memory resource.Quantity) error {
	nodes := p.NodesTakingPart(clusterNodes)
	if nodes < 1 {
		return nil
	}
	percent := p.MemoryPercent
	if percent == 0 {
		percent = 80
	}
	largest := HPCCParams{MemoryPercent: percent}.DerivedN(nodes, memory.Value())
	sizes := p.ProblemSizeList()
	if sizes == nil {
		nb := slices.Max(p.BlockSizeList())
		if n := p.SizingN(nodes, memory.Value()); n < nb {
			return fmt.Errorf("benchmark %s: %d nodes of %s leave no room for an HPL matrix at %d%% memory and NB=%d: set hpcc.problemSize, or raise cluster.memory or hpcc.memoryPercent; block sizes of at most %d fit",
				name, nodes, memory.String(), percent, nb, largest)
		}
		return nil
	}
	field := "problemSizes"
	if p.N != nil {
		field = "problemSize"
	}
	for _, n := range sizes {
		if n > largest {
			gib := float64(8*int64(n)*int64(n)) / (1 << 30)
			return fmt.Errorf("%s.hpcc.%s: %d needs %.1f GiB of matrix (8·N² bytes), more than hpcc.memoryPercent %d%% of the memory of the %d node(s) taking part, each of cluster.memory %s: set problem sizes of at most %d, or raise cluster.memory or cluster.nodes",
				path, field, n, gib, percent, nodes, memory.String(), largest)
		}
	}
	return nil
}

// DefaultSharedStorageSize is spec.sharedStorage.size when left out.
var DefaultSharedStorageSize = resource.MustParse("4Gi")

// sharedFitProblem says whether the files that a benchmark writes at once to the Shared target
// exceed spec.sharedStorage.size, the claim that the pods of Container and Host platforms share:
// each node writes one file per execution and removes it after, one node at a time, or every node
// at once with concurrency AllNodes. VM platforms share their master VM's disk instead.
func sharedFitProblem(spec *BenchmarkSuiteSpec) error {
	st := spec.SharedStorage
	if st == nil {
		return nil
	}
	pods := len(spec.Platforms) == 0
	for _, p := range spec.Platforms {
		pods = pods || p.Type != PlatformVM
	}
	if !pods {
		return nil
	}
	claim := DefaultSharedStorageSize
	if st.Size != nil {
		claim = *st.Size
	}
	c := claim.Value()
	if c <= 0 || c > MaxSharedStorageSize.Value() {
		return nil
	}
	for i, b := range spec.Benchmarks {
		var file int64
		switch {
		case b.Iozone != nil && slices.Contains(b.Iozone.Targets, StorageShared):
			// iozone counts a number without a unit in KiB.
			file, _ = sizeBytes(b.Iozone.LargestFile(), ioSize, 1<<10)
		case b.Fio != nil && b.Fio.Target == StorageShared:
			size, _ := sizeBytes(orString(b.Fio.Size, "256m"), ioSize, 1)
			file = size * int64(max(b.Fio.NumJobs, 1))
		default:
			continue
		}
		nodes, concurrency := int64(1), ConcurrencyOneNodeAtATime
		if b.Concurrency == ConcurrencyAllNodes {
			nodes, concurrency = int64(spec.Cluster.NodeCount()), ConcurrencyAllNodes
		}
		if file*nodes > c {
			return fmt.Errorf("spec.benchmarks[%d]: %s writes %s to the Shared target from %d node(s) at a time (concurrency %s), more than spec.sharedStorage.size %s holds: "+
				"raise sharedStorage.size, or write at most %s from each node",
				i, b.Name, resource.NewQuantity(file, resource.BinarySI).String(), nodes, concurrency, claim.String(),
				resource.NewQuantity(c/nodes>>20<<20, resource.BinarySI).String())
		}
	}
	return nil
}
