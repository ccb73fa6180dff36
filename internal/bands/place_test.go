package bands

import (
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func ptr(v float64) *float64 { return &v }

// TestPlacePositions puts a ratio with its interval in each position of the default compute band,
// 0.90–1.00: the interval decides, not the ratio alone.
func TestPlacePositions(t *testing.T) {
	tests := []struct {
		name            string
		ratio           float64
		low, high       *float64
		want            Position
		wantCausesEmpty bool
	}{
		{"inside", 0.95, ptr(0.93), ptr(0.97), Within, true},
		{"inside, with an interval wider than the band", 0.95, ptr(0.5), ptr(1.5), Within, true},
		{"ratio below, interval reaches into the band", 0.85, ptr(0.80), ptr(0.91), Inconclusive, true},
		{"ratio above, interval reaches into the band", 1.03, ptr(0.99), ptr(1.07), Inconclusive, true},
		{"wholly below", 0.60, ptr(0.55), ptr(0.65), Below, false},
		{"wholly above", 1.10, ptr(1.05), ptr(1.15), Above, false},
		{"no interval, ratio below", 0.89, nil, nil, Below, false},
		{"no interval, ratio inside", 0.91, nil, nil, Within, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, ok := Place(Compute, tt.ratio, tt.low, tt.high, Settings{})
			if !ok {
				t.Fatal("compute has a band")
			}
			if p.Position != tt.want {
				t.Errorf("position %s, want %s", p.Position, tt.want)
			}
			if (len(p.Causes) == 0) != tt.wantCausesEmpty {
				t.Errorf("causes %v", p.Causes)
			}
			if p.Band == nil || p.Band.Low != 0.90 || p.Band.Tuned {
				t.Errorf("band %+v, want the default compute band", p.Band)
			}
		})
	}
}

// TestPlaceLatencyUsesTheInvertedMultiplier holds a storage latency ratio against 1.2–2.0x, which
// is 0.5–0.83 as a speed ratio.
func TestPlaceLatencyUsesTheInvertedMultiplier(t *testing.T) {
	for ratio, want := range map[float64]Position{0.45: Below, 0.6: Within, 0.9: Above} {
		p, _ := Place(StorageLatency, ratio, nil, nil, Settings{DiskBus: "virtio"})
		if p.Position != want {
			t.Errorf("latency speed ratio %g: %s, want %s", ratio, p.Position, want)
		}
	}
}

func TestPlaceTunedAndMasqueradeBands(t *testing.T) {
	tests := []struct {
		f       Family
		s       Settings
		tuned   bool
		variant string
	}{
		{Compute, Settings{}, false, ""},
		{Compute, Settings{DedicatedCPUs: true}, true, ""},
		{RandomMemory, Settings{DedicatedCPUs: true}, false, ""},
		{RandomMemory, Settings{DedicatedCPUs: true, Hugepages: "2Mi"}, true, ""},
		{StorageRandomIOPS, Settings{IOThreads: "auto"}, true, ""},
		{StorageRandomIOPS, Settings{DedicatedCPUs: true}, false, ""},
		{NetworkThroughput, Settings{NetworkBinding: "Masquerade"}, false, "masquerade without multiqueue"},
		{NetworkThroughput, Settings{NetworkBinding: "Passt"}, false, ""},
		{NetworkThroughput, Settings{NetworkBinding: "Bridge"}, true, ""},
		{NetworkLatency, Settings{NetworkBinding: "Bridge"}, false, ""},
		{NetworkLatency, Settings{NetworkBinding: "Bridge", DedicatedCPUs: true}, true, ""},
	}
	for _, tt := range tests {
		p, ok := Place(tt.f, 0.9, nil, nil, tt.s)
		if !ok || p.Band == nil {
			t.Fatalf("%s: no band", tt.f)
		}
		if p.Band.Tuned != tt.tuned || p.Band.Variant != tt.variant {
			t.Errorf("%s with %+v: band tuned=%v variant=%q, want tuned=%v variant=%q", tt.f, tt.s, p.Band.Tuned, p.Band.Variant, tt.tuned, tt.variant)
		}
	}
}

// Metrics of every family, reads and writes, for the causes' tests.
var (
	compute         = Metric{Family: Compute}
	memBandwidth    = Metric{Family: MemoryBandwidth}
	randomMemory    = Metric{Family: RandomMemory}
	seqRead         = Metric{Family: StorageSequential}
	seqWrite        = Metric{Family: StorageSequential, Writes: true}
	randRead        = Metric{Family: StorageRandomIOPS}
	randWrite       = Metric{Family: StorageRandomIOPS, Writes: true}
	readLatency     = Metric{Family: StorageLatency}
	writeLatency    = Metric{Family: StorageLatency, Writes: true}
	netThroughput   = Metric{Family: NetworkThroughput}
	netLatency      = Metric{Family: NetworkLatency}
	everyFamilyKind = []Metric{compute, memBandwidth, randomMemory, seqRead, seqWrite, randRead, randWrite,
		readLatency, writeLatency, netThroughput, netLatency}
)

// TestBelowCausesFromSettings: a recorded setting that departs from what the band assumes comes
// first for every metric it affects, and is absent from every other metric, whatever its ratio.
func TestBelowCausesFromSettings(t *testing.T) {
	tests := []struct {
		name     string
		s        Settings
		first    string
		affected []Metric
	}{
		{"named CPU model", Settings{CPUModel: "Westmere"}, "platforms[].vm.cpuModel: host-passthrough",
			[]Metric{compute, memBandwidth, randomMemory}},
		{"sata", Settings{DiskBus: "sata"}, "platforms[].vm.diskBus: virtio",
			[]Metric{seqRead, seqWrite, randRead, randWrite, readLatency, writeLatency}},
		{"writethrough", Settings{DiskCache: "writethrough"}, "platforms[].vm.diskCache: none",
			[]Metric{seqWrite, randWrite, writeLatency}},
		{"masquerade without multiqueue", Settings{NetworkBinding: "Masquerade"}, "platforms[].vm.networkMultiqueue: true",
			[]Metric{netThroughput}},
		{"masquerade with multiqueue", Settings{NetworkBinding: "Masquerade", NetworkMultiqueue: true}, "platforms[].vm.networkBinding: Bridge",
			[]Metric{netThroughput, netLatency}},
		{"nodes that are VMs", Settings{NodeStealPercent: 0.1}, SettingNested,
			[]Metric{seqRead, seqWrite, randRead, randWrite, readLatency, writeLatency, netThroughput, netLatency}},
		{"requests below limits", Settings{RequestsBelowLimits: true}, "cluster.cpuRequest and cluster.memoryRequest: remove them",
			everyFamilyKind},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			affected := map[Metric]bool{}
			for _, m := range tt.affected {
				affected[m] = true
			}
			for _, m := range everyFamilyKind {
				p, _ := PlaceMetric(m, 0.01, nil, nil, tt.s)
				if p.Position != Below {
					t.Fatalf("%+v at 0.01: %s, want below", m, p.Position)
				}
				if affected[m] {
					if len(p.Causes) == 0 || p.Causes[0].Setting != tt.first {
						t.Errorf("%+v: %v, want %q first", m, p.Causes, tt.first)
					}
					continue
				}
				for _, c := range p.Causes {
					if c.Setting == tt.first {
						t.Errorf("%+v lists %q, which does not affect it", m, tt.first)
					}
				}
			}
		})
	}
}

// TestCPUModelsThatAreNoCause: the node's own CPU, as host-passthrough or host-model (KubeVirt's
// default) in any case, is no cause.
func TestCPUModelsThatAreNoCause(t *testing.T) {
	for _, model := range []string{"", "host-passthrough", "host-model", "Host-Passthrough"} {
		p, _ := PlaceMetric(compute, 0.1, nil, nil, Settings{CPUModel: model})
		for _, c := range p.Causes {
			if strings.Contains(c.Setting, "cpuModel") {
				t.Errorf("cpuModel %q gave %v", model, c)
			}
		}
	}
}

// TestBelowCausesRanking: with sata and writethrough and no IO threads, a write metric gets the bus
// before the cache, and both before the unused IO threads, and a read metric no cache; a tuned VM
// gets no tuning advice it already has; masquerade without multiqueue is named before the binding.
func TestBelowCausesRanking(t *testing.T) {
	settings := func(p Placement) string {
		var got []string
		for _, c := range p.Causes {
			got = append(got, c.Setting)
		}
		return strings.Join(got, "|")
	}
	s := Settings{DiskBus: "sata", DiskCache: "writethrough"}
	p, _ := PlaceMetric(randWrite, 0.1, nil, nil, s)
	if got, want := settings(p), "platforms[].vm.diskBus: virtio|platforms[].vm.diskCache: none|platforms[].vm.ioThreads: auto"; got != want {
		t.Errorf("random writes: causes %s, want %s", got, want)
	}
	p, _ = PlaceMetric(randRead, 0.1, nil, nil, s)
	if got, want := settings(p), "platforms[].vm.diskBus: virtio|platforms[].vm.ioThreads: auto"; got != want {
		t.Errorf("random reads: causes %s, want %s", got, want)
	}
	p, _ = Place(RandomMemory, 0.5, nil, nil, Settings{DedicatedCPUs: true, Hugepages: "2Mi"})
	if p.Position != Below || len(p.Causes) != 0 {
		t.Errorf("a pinned, huge-paged VM got %s %v; want below with no tuning advice left", p.Position, p.Causes)
	}
	p, _ = Place(RandomMemory, 0.5, nil, nil, Settings{CPUModel: "Westmere"})
	if got, want := settings(p), "platforms[].vm.cpuModel: host-passthrough|cluster.dedicatedCPUs: true (or platforms[].vm.dedicatedCPUs: true)|platforms[].vm.hugepages: 2Mi"; got != want {
		t.Errorf("random memory causes %s, want %s", got, want)
	}
	p, _ = Place(NetworkThroughput, 0.1, nil, nil, Settings{NetworkBinding: "masquerade", RequestsBelowLimits: true})
	if got, want := settings(p), "platforms[].vm.networkMultiqueue: true|platforms[].vm.networkBinding: Bridge|cluster.cpuRequest and cluster.memoryRequest: remove them"; got != want {
		t.Errorf("network throughput causes %s, want %s", got, want)
	}
}

// TestMetricOfTellsWrites: fio's and iozone's write metrics write, their reads do not, and nothing
// outside storage does.
func TestMetricOfTellsWrites(t *testing.T) {
	fio := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{RW: "randrw"}}
	iozone := vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{DirectIO: true}}
	tests := []struct {
		b      vmbenchv1.Benchmark
		metric string
		want   Metric
	}{
		{fio, "write_iops", randWrite},
		{fio, "read_iops", randRead},
		{fio, "write_clat_mean_ns", writeLatency},
		{iozone, "rewrite_65536k_64k", seqWrite},
		{iozone, "read", seqRead},
		{vmbenchv1.Benchmark{Type: vmbenchv1.BenchmarkIperf3}, "bits_per_second", netThroughput},
	}
	for _, tt := range tests {
		if got := MetricOf(tt.b, tt.metric); got != tt.want {
			t.Errorf("%s %s: %+v, want %+v", tt.b.Type, tt.metric, got, tt.want)
		}
	}
}

func TestAboveSuspectsCacheThenContainer(t *testing.T) {
	p, _ := Place(StorageSequential, 1.4, ptr(1.3), ptr(1.5), Settings{DiskCache: "writeback"})
	if p.Position != Above || len(p.Causes) != 2 || p.Causes[0].Setting != "platforms[].vm.diskCache: none" ||
		!strings.Contains(p.Causes[1].Why, "container arm") {
		t.Errorf("got %s %v", p.Position, p.Causes)
	}
	p, _ = Place(Compute, 1.4, ptr(1.3), ptr(1.5), Settings{DiskCache: "writeback"})
	if len(p.Causes) != 1 || !strings.Contains(p.Causes[0].Why, "container arm") {
		t.Errorf("compute above: %v", p.Causes)
	}
}

// TestEmulatedGetsOnlyEnableKVM: whatever the settings, an emulated VM is placed emulated, holds no
// band, and is told only to enable KVM.
func TestEmulatedGetsOnlyEnableKVM(t *testing.T) {
	s := Settings{Emulated: true, DiskBus: "sata", NetworkBinding: "Masquerade", RequestsBelowLimits: true}
	for _, f := range []Family{Compute, StorageRandomIOPS, NetworkThroughput} {
		p, ok := Place(f, 0.05, ptr(0.04), ptr(0.06), s)
		if !ok || p.Position != Emulated || p.Band != nil || len(p.Causes) != 1 || p.Causes[0].Why != EnableKVM {
			t.Errorf("%s: %+v", f, p)
		}
	}
	if _, ok := Place(noFamily, 0.05, nil, nil, s); ok {
		t.Error("a metric without a family was placed")
	}
}

// TestBelowCauseOrder: whichever causes a metric gets, they come in the order of BelowCauseOrder,
// which names every cause that a result below its band can get.
func TestBelowCauseOrder(t *testing.T) {
	rank := map[string]int{}
	for i, c := range BelowCauseOrder {
		rank[c] = i
	}
	worst := Settings{CPUModel: "Westmere", DiskBus: "sata", DiskCache: "writethrough", NetworkBinding: "Masquerade", RequestsBelowLimits: true,
		NodeStealPercent: 0.5}
	seen := map[string]bool{}
	for _, m := range everyFamilyKind {
		p, _ := PlaceMetric(m, 0.01, nil, nil, worst)
		for i, c := range p.Causes {
			r, ok := rank[c.Setting]
			if !ok {
				t.Fatalf("%+v: cause %q is not in BelowCauseOrder", m, c.Setting)
			}
			if i > 0 && rank[p.Causes[i-1].Setting] > r {
				t.Errorf("%+v: %q before %q, against BelowCauseOrder", m, p.Causes[i-1].Setting, c.Setting)
			}
			seen[c.Setting] = true
		}
	}
	if len(seen) != len(BelowCauseOrder) {
		t.Errorf("causes seen %v, BelowCauseOrder %v", seen, BelowCauseOrder)
	}
}

// TestTunedBandForEachTuningInput holds every family against each tuning input alone and the pairs
// that some families need together, so that each input moves exactly the families whose tuned band
// assumes it (docs/reports.md, "tuned band"): dedicated CPUs tune compute, memory bandwidth and, with
// hugepages, random memory and, with a bridged network, network latency; IO threads or a dedicated
// IO thread tune the three storage families; a bridge tunes network throughput. A VM held against
// the wrong band is told to change settings it already has (mutants B1 and B2 of
// test-quality-97ef9ca.md drop the dedicated IO thread and the memory bandwidth's dedicated CPUs).
func TestTunedBandForEachTuningInput(t *testing.T) {
	inputs := []struct {
		name string
		s    Settings
	}{
		{"nothing", Settings{}},
		{"dedicated CPUs", Settings{DedicatedCPUs: true}},
		{"hugepages", Settings{Hugepages: "2Mi"}},
		{"IO threads", Settings{IOThreads: "auto"}},
		{"a dedicated IO thread", Settings{DedicatedIOThread: true}},
		{"bridge binding", Settings{NetworkBinding: "Bridge"}},
		{"dedicated CPUs and hugepages", Settings{DedicatedCPUs: true, Hugepages: "1Gi"}},
		{"bridge and dedicated CPUs", Settings{NetworkBinding: "bridge", DedicatedCPUs: true}},
	}
	const T, F = true, false
	tuned := map[Family][]bool{
		//               nothing dCPUs huge ioThr dIOTh bridge dCPUs+huge bridge+dCPUs
		Compute:           {F, T, F, F, F, F, T, T},
		MemoryBandwidth:   {F, T, F, F, F, F, T, T},
		RandomMemory:      {F, F, F, F, F, F, T, F},
		StorageSequential: {F, F, F, T, T, F, F, F},
		StorageRandomIOPS: {F, F, F, T, T, F, F, F},
		StorageLatency:    {F, F, F, T, T, F, F, F},
		NetworkThroughput: {F, F, F, F, F, T, F, T},
		NetworkLatency:    {F, F, F, F, F, F, F, T},
	}
	if len(tuned) != 8 {
		t.Fatalf("%d families in the table, want all 8", len(tuned))
	}
	for f, row := range tuned {
		for i, in := range inputs {
			b, ok := BandFor(f, in.s)
			if !ok {
				t.Errorf("%s with %s: no band", f, in.name)
				continue
			}
			if b.Family != f || b.Tuned != row[i] || b.Variant != "" {
				t.Errorf("%s with %s: band of %s tuned=%t variant %q, want %s tuned=%t and no variant", f, in.name, b.Family, b.Tuned, b.Variant, f, row[i])
			}
			p, ok := Place(f, 0.9, nil, nil, in.s)
			if !ok || p.Band == nil || p.Band.Family != b.Family || p.Band.Tuned != b.Tuned || p.Band.Variant != b.Variant {
				t.Errorf("%s with %s: Place held the ratio against %+v, BandFor gives %+v", f, in.name, p.Band, b)
			}
		}
	}

	// Masquerade without multiqueue has a band of its own for network throughput only; with
	// multiqueue it is the default band.
	for _, tt := range []struct {
		f       Family
		s       Settings
		variant string
	}{
		{NetworkThroughput, Settings{NetworkBinding: "Masquerade"}, variantMasqueradeNoMQueue},
		{NetworkThroughput, Settings{NetworkBinding: "masquerade", NetworkMultiqueue: true}, ""},
		{NetworkLatency, Settings{NetworkBinding: "Masquerade"}, ""},
		{Compute, Settings{NetworkBinding: "Masquerade"}, ""},
	} {
		if b, ok := BandFor(tt.f, tt.s); !ok || b.Tuned || b.Variant != tt.variant {
			t.Errorf("%s with %+v: band tuned=%t variant %q (found %t), want the untuned band with variant %q", tt.f, tt.s, b.Tuned, b.Variant, ok, tt.variant)
		}
	}
}
