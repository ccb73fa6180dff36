package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/bands"
	"github.com/vmbench/vmbench/internal/suitefile"
)

func readQuickSuite(t *testing.T) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	suite, err := suitefile.Read(quickSuite, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return suite
}

// TestKVMBandsEmulatedQuickSuite: the saved quick suite ran emulated, so its VM metrics that have a
// band are placed "emulated" and the table's section says only to enable KVM.
func TestKVMBandsEmulatedQuickSuite(t *testing.T) {
	rep, err := Build(readQuickSuite(t))
	if err != nil {
		t.Fatal(err)
	}
	// The saved suite's VM metrics with a band, counted by hand from docs/report/quick-suite.yaml
	// and the table of docs/reports.md: HPL and two DGEMMs (compute); six RandomAccess (random
	// memory); eight STREAM and sysbench-memory's four (memory bandwidth); three PingPong and two
	// Ring latencies of HPCC and ping's rtt_min_ms and rtt_avg_ms (network latency); fio randread's
	// read_iops and read_bw_kib_per_second (random IOPS) and its two clat figures (storage
	// latency); iperf3's two bits_per_second (network throughput). 34 in all.
	wantFamilies := map[bands.Family]int{bands.Compute: 3, bands.RandomMemory: 6, bands.MemoryBandwidth: 12, bands.NetworkLatency: 7,
		bands.StorageRandomIOPS: 2, bands.StorageLatency: 2, bands.NetworkThroughput: 2}
	const wantBanded = 34
	gotFamilies := map[bands.Family]int{}
	for _, b := range rep.KVMBands {
		gotFamilies[b.Family]++
		if b.Position != bands.Emulated {
			t.Errorf("%s %s: %s, want emulated", b.Benchmark, b.Metric, b.Position)
		}
	}
	if len(rep.KVMBands) != wantBanded || !maps.Equal(gotFamilies, wantFamilies) {
		t.Errorf("%d VM metrics held against a band, by family %v; want %d, %v", len(rep.KVMBands), gotFamilies, wantBanded, wantFamilies)
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	want := "vm (emulated): " + strconv.Itoa(wantBanded) + " metric(s) have a KVM band, and none applies under emulation; " + bands.EnableKVM
	if !strings.Contains(text, KVMBandsLegend) || !strings.Contains(text, want) {
		t.Errorf("the table lacks the band section %q:\n%s", want, text)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<h2>Against KVM") || !strings.Contains(page.String(), "vm (emulated): "+strconv.Itoa(wantBanded)+" metric(s) have a KVM band") {
		t.Error("the HTML page lacks the band section")
	}
	for _, advice := range []string{"diskBus", "dedicatedCPUs", "cpuRequest"} {
		if strings.Contains(text[strings.Index(text, KVMBandsLegend):], advice) {
			t.Errorf("an emulated VM got tuning advice (%s)", advice)
		}
	}
}

// TestKVMBandsOnKVMWithSata takes the quick suite as if its VMs had run on KVM with a sata disk,
// masquerade without multiqueue and a named CPU model: its ratios lie far below every band, and each family gets its own cause first.
func TestKVMBandsOnKVMWithSata(t *testing.T) {
	suite := readQuickSuite(t)
	for i := range suite.Status.Runs {
		if suite.Status.Runs[i].Accelerator == vmbenchv1.AcceleratorEmulation {
			suite.Status.Runs[i].Accelerator = vmbenchv1.AcceleratorKVM
		}
	}
	for i := range suite.Status.Results {
		suite.Status.Results[i].Emulated = false
	}
	suite.Status.VMSettings = []vmbenchv1.VMSettingsStatus{{Platform: "vm", Run: "r", NetworkBinding: "Masquerade", DiskBus: "sata", CPUModel: "Westmere"}}
	rep, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	first := map[bands.Family]string{
		bands.StorageRandomIOPS: "platforms[].vm.diskBus: virtio",
		bands.StorageLatency:    "platforms[].vm.diskBus: virtio",
		bands.NetworkThroughput: "platforms[].vm.networkMultiqueue: true",
		bands.NetworkLatency:    "platforms[].vm.networkBinding: Bridge",
		// The named CPU model comes before the requests the quick suite lowers below its limits.
		bands.Compute: "platforms[].vm.cpuModel: host-passthrough",
	}
	seen := map[bands.Family]bool{}
	for _, b := range rep.KVMBands {
		if b.Position == bands.Inconclusive {
			// Two repetitions leave some intervals wide enough to reach into the band.
			continue
		}
		if b.Position != bands.Below {
			t.Errorf("%s %s at %v: %s, want below", b.Benchmark, b.Metric, *b.Row.SpeedRatio, b.Position)
			continue
		}
		seen[b.Family] = true
		if want, ok := first[b.Family]; ok && b.Causes[0].Setting != want {
			t.Errorf("%s %s: first cause %q, want %q", b.Benchmark, b.Metric, b.Causes[0].Setting, want)
		}
	}
	for f := range first {
		if !seen[f] {
			t.Errorf("no %s metric in the quick suite's bands", f)
		}
	}
	// The quick suite's container runs saw steal time on every node (its kind nodes ran in a VM):
	// storage and network results name the nested virtualisation, compute does not.
	for _, b := range rep.KVMBands {
		if b.Position != bands.Below {
			continue
		}
		nested := false
		for _, c := range b.Causes {
			nested = nested || c.Setting == bands.SettingNested
		}
		if want := b.Family != bands.Compute && b.Family != bands.MemoryBandwidth && b.Family != bands.RandomMemory; nested != want {
			t.Errorf("%s %s (%s): nested virtualisation among the causes %v, want %v", b.Benchmark, b.Metric, b.Family, nested, want)
		}
	}
	var out bytes.Buffer
	if err := rep.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"PLATFORM  BENCHMARK",
		"0.45–0.75× default, felter2014, kubevirt-4182",
		"0.6–0.9× masquerade without multiqueue, kubevirt-community-182",
		"vm storage-random-iops below its band (fio read_iops, fio read_bw_kib_per_second); likely causes, most likely first:\n" +
			"  1. platforms[].vm.diskBus: virtio\n     the root disk is on an emulated sata bus",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text[strings.Index(text, KVMBandsLegend):])
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(js.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r["benchmark"] == "fio" && r["metric"] == "read_iops" && r["platform"] == "vm" {
			found = true
			causes, _ := r["kvmBandCauses"].([]any)
			if r["kvmBandPosition"] != "below" || r["kvmBandLow"] != 0.45 || len(causes) == 0 ||
				causes[0].(map[string]any)["setting"] != "platforms[].vm.diskBus: virtio" {
				t.Errorf("JSON row %v", r)
			}
		}
	}
	if !found {
		t.Error("no JSON row for fio read_iops on vm")
	}

	var c bytes.Buffer
	if err := rep.WriteCSV(&c); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&c).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range records[0] {
		col[h] = i
	}
	for _, rec := range records[1:] {
		if rec[col["benchmark"]] == "fio" && rec[col["metric"]] == "read_iops" && rec[col["platform"]] == "vm" {
			if rec[col["kvmBandPosition"]] != "below" || !strings.HasPrefix(rec[col["kvmBandCauses"]], "platforms[].vm.diskBus: virtio; ") {
				t.Errorf("CSV row %v", rec)
			}
		}
	}
}

// TestBandSettingsFromSpecWithoutVMI: a platform none of whose VMIs was read back is judged by its
// spec, cluster.dedicatedCPUs included; a platform with a VMI read back by the VMI.
func TestBandSettingsFromSpecWithoutVMI(t *testing.T) {
	suite := &vmbenchv1.BenchmarkSuite{Spec: vmbenchv1.BenchmarkSuiteSpec{
		Cluster: vmbenchv1.ClusterShape{CPU: 2, DedicatedCPUs: true},
		Platforms: []vmbenchv1.Platform{
			{Name: "vm", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{DiskBus: "sata", NetworkBinding: "Masquerade", Hugepages: "2Mi", CPUModel: "Westmere", NetworkMultiqueue: true}},
			{Name: "seen", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{DiskBus: "sata"}},
		}},
		Status: vmbenchv1.BenchmarkSuiteStatus{VMSettings: []vmbenchv1.VMSettingsStatus{{Platform: "seen", DiskBus: "virtio", CPUModel: "host-model", NetworkMultiqueue: true}}},
	}
	got := bandSettings(suite, "vm", false)
	want := bands.Settings{DiskBus: "sata", NetworkBinding: "Masquerade", Hugepages: "2Mi", DedicatedCPUs: true, CPUModel: "Westmere", NetworkMultiqueue: true}
	if got != want {
		t.Errorf("from spec: %+v, want %+v", got, want)
	}
	if got := bandSettings(suite, "seen", true); got != (bands.Settings{Emulated: true, DiskBus: "virtio", CPUModel: "host-model", NetworkMultiqueue: true}) {
		t.Errorf("from the VMI: %+v", got)
	}
}
