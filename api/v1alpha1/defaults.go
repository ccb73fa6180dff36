package v1alpha1

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"k8s.io/utils/ptr"
)

// The API server applies the +kubebuilder:default markers to parameter blocks that are present.
// WithDefaults applies the same values in Go, for the blocks a user left out entirely; an envtest case
// checks that both agree. iozone's sizes are the exception: which of them apply depends on auto, and
// a marker default cannot, so only WithDefaults fills them.

// Defaults of iozone's sizes: one run's file and record size, and auto mode's range, iozone's own.
const (
	DefaultIozoneFileSize    = "512M"
	DefaultIozoneRecordSize  = "64k"
	DefaultIozoneMaxFileSize = "512M"
	DefaultIozoneMinFileSize = "64k"
)

// WithDefaults returns a copy of b whose timeout and parameter block for its type are set, with
// every unset parameter at its default.
func (b Benchmark) WithDefaults() Benchmark {
	b = *b.DeepCopy()
	if b.Timeout == nil {
		b.Timeout = ptr.To[Duration]("30m")
	}
	if b.Concurrency == "" {
		b.Concurrency = ConcurrencyOneNodeAtATime
	}
	switch b.Type {
	case BenchmarkHPCC:
		b.HPCC = orNew(b.HPCC)
		if b.HPCC.MemoryPercent == 0 {
			b.HPCC.MemoryPercent = 80
		}
		if b.HPCC.Nodes == "" {
			b.HPCC.Nodes = HPCCAllNodes
		}
	case BenchmarkSysbenchCPU:
		b.SysbenchCPU = orNew(b.SysbenchCPU)
		if b.SysbenchCPU.MaxPrime == 0 {
			b.SysbenchCPU.MaxPrime = 20000
		}
		b.SysbenchCPU.Duration = orDuration(b.SysbenchCPU.Duration, "10s")
	case BenchmarkSysbenchMemory:
		b.SysbenchMemory = orNew(b.SysbenchMemory)
		if len(b.SysbenchMemory.BlockSizes) == 0 {
			b.SysbenchMemory.BlockSizes = []string{"1K", "1M"}
		}
		b.SysbenchMemory.TotalSize = orString(b.SysbenchMemory.TotalSize, "10G")
		b.SysbenchMemory.Operation = orString(b.SysbenchMemory.Operation, "write")
	case BenchmarkStressNGCPU:
		b.StressNGCPU = orNew(b.StressNGCPU)
		b.StressNGCPU.Method = orString(b.StressNGCPU.Method, "matrixprod")
		b.StressNGCPU.Duration = orDuration(b.StressNGCPU.Duration, "60s")
	case BenchmarkStressNGVM:
		b.StressNGVM = orNew(b.StressNGVM)
		b.StressNGVM.Bytes = orString(b.StressNGVM.Bytes, "50%")
		if b.StressNGVM.Workers == 0 {
			b.StressNGVM.Workers = 1
		}
		b.StressNGVM.Duration = orDuration(b.StressNGVM.Duration, "60s")
	case BenchmarkIozone:
		b.Iozone = orNew(b.Iozone)
		if b.Iozone.Auto {
			b.Iozone.MaxFileSize = orString(b.Iozone.MaxFileSize, DefaultIozoneMaxFileSize)
			b.Iozone.MinFileSize = orString(b.Iozone.MinFileSize, DefaultIozoneMinFileSize)
		} else {
			b.Iozone.FileSize = orString(b.Iozone.FileSize, DefaultIozoneFileSize)
			b.Iozone.RecordSize = orString(b.Iozone.RecordSize, DefaultIozoneRecordSize)
		}
		if len(b.Iozone.Tests) == 0 {
			b.Iozone.Tests = []IozoneTest{"write", "read", "random"}
		}
		if len(b.Iozone.Targets) == 0 {
			b.Iozone.Targets = []StorageTarget{StorageLocal}
		}
	case BenchmarkIperf3:
		b.Iperf3 = orNew(b.Iperf3)
		b.Iperf3.Pairs = orPairs(b.Iperf3.Pairs)
		b.Iperf3.Duration = orDuration(b.Iperf3.Duration, "10s")
		if b.Iperf3.Parallel == 0 {
			b.Iperf3.Parallel = 1
		}
		b.Iperf3.Protocol = orString(b.Iperf3.Protocol, "TCP")
		if b.Iperf3.Port == 0 {
			b.Iperf3.Port = 5201
		}
		if b.Iperf3.ServerPort == 0 {
			b.Iperf3.ServerPort = 5201
		}
	case BenchmarkNetperf:
		b.Netperf = orNew(b.Netperf)
		if len(b.Netperf.Tests) == 0 {
			b.Netperf.Tests = []NetperfTest{NetperfTCPRR, NetperfTCPStream}
		}
		b.Netperf.Duration = orDuration(b.Netperf.Duration, "10s")
		b.Netperf.Confidence = orNew(b.Netperf.Confidence)
		c := b.Netperf.Confidence
		if c.Level == 0 {
			c.Level = 95
		}
		if c.WidthPercent == 0 {
			c.WidthPercent = 5
		}
		if c.MinIterations == 0 {
			c.MinIterations = 3
		}
		if c.MaxIterations == 0 {
			c.MaxIterations = 10
		}
		b.Netperf.Pairs = orPairs(b.Netperf.Pairs)
	case BenchmarkMigration:
		b.Migration = orNew(b.Migration)
		if b.Migration.Count == 0 {
			b.Migration.Count = DefaultMigrationCount
		}
		b.Migration.Interval = orDuration(b.Migration.Interval, DefaultMigrationInterval)
		b.Migration.MigrationTimeout = orDuration(b.Migration.MigrationTimeout, DefaultMigrationTimeout)
	case BenchmarkNetcat:
		b.Netcat = orNew(b.Netcat)
		b.Netcat.Size = orString(b.Netcat.Size, "1Gi")
		b.Netcat.Pairs = orPairs(b.Netcat.Pairs)
	case BenchmarkPing:
		b.Ping = orNew(b.Ping)
		if b.Ping.Count == 0 {
			b.Ping.Count = 10
		}
		b.Ping.Pairs = orPairs(b.Ping.Pairs)
	case BenchmarkFio:
		b.Fio = orNew(b.Fio)
		b.Fio.RW = orString(b.Fio.RW, "randread")
		b.Fio.BlockSize = orString(b.Fio.BlockSize, "4k")
		b.Fio.Size = orString(b.Fio.Size, "256m")
		if b.Fio.IODepth == 0 {
			b.Fio.IODepth = 16
		}
		b.Fio.IOEngine = orString(b.Fio.IOEngine, "libaio")
		if b.Fio.Direct == nil {
			b.Fio.Direct = ptr.To(true)
		}
		if b.Fio.NumJobs == 0 {
			b.Fio.NumJobs = 1
		}
		if b.Fio.Target == "" {
			b.Fio.Target = StorageLocal
		}
	}
	return b
}

func orNew[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}

func orString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// orDuration is d, or def written as the CRD's default marker writes it.
func orDuration(d *Duration, def Duration) *Duration {
	if d == nil {
		return &def
	}
	return d
}

func orPairs(p []NodePair) []NodePair {
	if len(p) == 0 {
		return []NodePair{PairMasterToNode, PairNodeToMaster, PairNodeToNode}
	}
	return p
}

// MaxProblemSize is the largest HPL N the API accepts; a derived N is capped to it too.
const MaxProblemSize = 200000

// DefaultNB is the HPL block size when neither nb nor blockSizes is set. It has no CRD default, so
// that a rule can refuse nb beside blockSizes.
const DefaultNB = 192

// ProblemSizeList is the HPL problem sizes given, ProblemSizes or N; nil when N is to be derived.
func (p HPCCParams) ProblemSizeList() []int32 {
	switch {
	case len(p.ProblemSizes) > 0:
		return p.ProblemSizes
	case p.N != nil:
		return []int32{*p.N}
	}
	return nil
}

// BlockSizeList is the HPL block sizes to run: BlockSizes, NB, or DefaultNB.
func (p HPCCParams) BlockSizeList() []int32 {
	switch {
	case len(p.BlockSizes) > 0:
		return p.BlockSizes
	case p.NB > 0:
		return []int32{p.NB}
	}
	return []int32{DefaultNB}
}

// GridList is the HPL process grids given, Grids or P x Q; nil when the squarest grid is to be used.
func (p HPCCParams) GridList() []HPLGrid {
	switch {
	case len(p.Grids) > 0:
		return p.Grids
	case p.P != nil && p.Q != nil:
		return []HPLGrid{{P: *p.P, Q: *p.Q}}
	}
	return nil
}

// NodesTakingPart is how many of a run's clusterNodes nodes HPCC runs on.
func (p HPCCParams) NodesTakingPart(clusterNodes int32) int32 {
	if p.Nodes == HPCCWorkers {
		return clusterNodes - 1
	}
	return clusterNodes
}

// SizingN is the problem size derived for p on nodes nodes of memoryBytes each, as a multiple of the
// largest block size so that every block size divides it evenly where they are powers of two.
func (p HPCCParams) SizingN(nodes int32, memoryBytes int64) int32 {
	nb := slices.Max(p.BlockSizeList())
	return HPCCParams{MemoryPercent: cmp.Or(p.MemoryPercent, 80), NB: nb}.DerivedN(nodes, memoryBytes)
}

// DerivedN is the HPL problem size used when N is empty: the largest multiple of NB whose N×N matrix
// of doubles fills at most MemoryPercent of the memory limits of all nodes, capped at MaxProblemSize.
// It follows the memory limit, not /proc/meminfo, which shows the host's memory inside a pod. It is
// 0 when not even one NB-wide block fits.
func (p HPCCParams) DerivedN(nodes int32, memoryBytes int64) int32 {
	if nodes <= 0 || memoryBytes <= 0 || p.MemoryPercent <= 0 {
		return 0
	}
	// bytes * nodes * percent / 800, exactly: 128-bit product, saturated where the quotient overflows.
	elements := uint64(math.MaxUint64)
	if hi, lo := bits.Mul64(uint64(memoryBytes), uint64(nodes)*uint64(p.MemoryPercent)); hi < 800 {
		elements, _ = bits.Div64(hi, lo, 800)
	}
	n := min(uint64(math.Sqrt(float64(elements))), 1<<32-1)
	// The float square root can be one off for large values.
	for n*n > elements {
		n--
	}
	for (n+1)*(n+1) <= elements {
		n++
	}
	n = min(n, MaxProblemSize)
	if p.NB > 0 {
		n -= n % uint64(p.NB)
	}
	return int32(n)
}
