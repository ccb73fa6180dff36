package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/bands"
	"github.com/vmbench/vmbench/internal/suitefile"
)

const quickSuiteFile = "../../docs/report/quick-suite.yaml"

// quickOnKVM is the saved quick suite as if its VMs had run on KVM and been built with recorded.
func quickOnKVM(t *testing.T, recorded vmbenchv1.VMSettingsStatus) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	suite, err := suitefile.Read(quickSuiteFile, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range suite.Status.Runs {
		if suite.Status.Runs[i].Accelerator == vmbenchv1.AcceleratorEmulation {
			suite.Status.Runs[i].Accelerator = vmbenchv1.AcceleratorKVM
		}
	}
	for i := range suite.Status.Results {
		suite.Status.Results[i].Emulated = false
	}
	recorded.Platform, recorded.Run = "vm", "quick-vm-1"
	suite.Status.VMSettings = []vmbenchv1.VMSettingsStatus{recorded}
	return suite
}

// vmFieldsDiffering are the JSON fields of two vm blocks that differ, computed apart from the
// code under test.
func vmFieldsDiffering(t *testing.T, a, b *vmbenchv1.VMSettings) []string {
	t.Helper()
	decode := func(v *vmbenchv1.VMSettings) map[string]any {
		m := map[string]any{}
		if v == nil {
			return m
		}
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	am, bm := decode(a), decode(b)
	var out []string
	for k := range bm {
		if !reflect.DeepEqual(am[k], bm[k]) {
			out = append(out, k)
		}
	}
	for k := range am {
		if _, ok := bm[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func platformNamed(s *vmbenchv1.BenchmarkSuite, name string) *vmbenchv1.Platform {
	for i := range s.Spec.Platforms {
		if s.Spec.Platforms[i].Name == name {
			return &s.Spec.Platforms[i]
		}
	}
	return nil
}

func benchmarkNames(s *vmbenchv1.BenchmarkSuite) []string {
	var names []string
	for _, b := range s.Spec.Benchmarks {
		names = append(names, b.Name)
	}
	return names
}

// A suite whose VM ran with a named CPU model and a sata disk, below its band in compute, memory
// and storage: the suggested suite keeps the container baseline and the VM, adds the two most
// likely causes (largest published effect first) as variants that differ from the VM in exactly
// those settings, keeps only the benchmarks below their band, and carries no status nor server
// metadata.
func TestSuggestVariantsDifferInExactlyTheSuggestedSettings(t *testing.T) {
	suite := quickOnKVM(t, vmbenchv1.VMSettingsStatus{DiskBus: "sata", CPUModel: "Westmere", NetworkBinding: "Passt"})
	s, err := Suggest(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	got := s.Suite
	if got.Name != "quick-suggest" || got.Namespace != "default" || got.UID != "" || got.ResourceVersion != "" ||
		got.Generation != 0 || len(got.Annotations) != 0 || !got.CreationTimestamp.IsZero() {
		t.Errorf("metadata %+v, want only name quick-suggest and namespace default", got.ObjectMeta)
	}
	if !reflect.DeepEqual(got.Status, vmbenchv1.BenchmarkSuiteStatus{}) {
		t.Errorf("the suggested suite has a status: %+v", got.Status)
	}
	var names []string
	for _, p := range got.Spec.Platforms {
		names = append(names, p.Name)
	}
	if want := []string{"container", "vm", "vmcpu", "vmvirtio"}; !slices.Equal(names, want) {
		t.Errorf("platforms %v, want %v", names, want)
	}
	if got.Spec.Baseline != "container" {
		t.Errorf("baseline %q", got.Spec.Baseline)
	}
	// fio's reads on sata; HPL, DGEMM, STREAM and sysbench memory under Westmere; iperf3 and ping
	// through passt are below the default network bands (requests below limits are their cause).
	if want := []string{"hpcc", "sysbench-memory", "fio", "iperf3", "ping"}; !slices.Equal(benchmarkNames(got), want) {
		t.Errorf("benchmarks %v, want %v", benchmarkNames(got), want)
	}
	wantFields := map[string][]string{"vmcpu": {"cpuModel"}, "vmvirtio": {"diskBus"}}
	wantCause := map[string]string{"vmcpu": bands.SettingCPUModel, "vmvirtio": bands.SettingDiskBus}
	baseVM := platformNamed(got, "vm").VM
	for _, v := range s.Variants {
		p := platformNamed(got, v.Platform)
		if p == nil || p.Type != vmbenchv1.PlatformVM {
			t.Fatalf("variant %s is not a VM platform of the suite", v.Platform)
		}
		diff := vmFieldsDiffering(t, baseVM, p.VM)
		if !slices.Equal(diff, wantFields[v.Platform]) || !slices.Equal(v.Fields, diff) {
			t.Errorf("%s differs from vm in %v and says %v, want %v", v.Platform, diff, v.Fields, wantFields[v.Platform])
		}
		if v.Of != "vm" || len(v.Causes) != 1 || v.Causes[0] != wantCause[v.Platform] {
			t.Errorf("%s: %+v", v.Platform, v)
		}
	}
	if p := platformNamed(got, "vmcpu"); p.VM.CPUModel != "host-passthrough" {
		t.Errorf("vmcpu: %+v", p.VM)
	}
	if p := platformNamed(got, "vmvirtio"); p.VM.DiskBus != vmbenchv1.VMDiskBusVirtio {
		t.Errorf("vmvirtio: %+v", p.VM)
	}
	// The causes that found no room, and those no VM variant can try, are said.
	notices := strings.Join(s.Notices, "\n")
	for _, want := range []string{"left out " + bands.SettingIOThreads, bands.SettingRequests + " (for", "no variant for " + bands.SettingDedicatedCPUs} {
		if !strings.Contains(notices, want) {
			t.Errorf("notices lack %q:\n%s", want, notices)
		}
	}
	if suite.Status.Phase == "" || suite.UID == "" {
		t.Error("Suggest changed the suite it read")
	}
}

// Masquerade without multiqueue on its own: network throughput's first cause is multiqueue, and
// the binding comes next; writethrough gives no variant, as the suite's fio only reads.
func TestSuggestMasqueradeWithoutMultiqueue(t *testing.T) {
	suite := quickOnKVM(t, vmbenchv1.VMSettingsStatus{NetworkBinding: "Masquerade", DiskCache: "writethrough"})
	s, err := Suggest(suite, "tryme")
	if err != nil {
		t.Fatal(err)
	}
	if s.Suite.Name != "tryme" {
		t.Errorf("name %q", s.Suite.Name)
	}
	var got []string
	for _, v := range s.Variants {
		got = append(got, v.Platform+":"+strings.Join(v.Fields, ","))
	}
	// Both network causes come first for their metrics (multiqueue for throughput, the binding
	// for latency), so both precede the storage and tuning causes.
	if want := []string{"vmmq:networkMultiqueue", "vmbridge:networkBinding"}; !slices.Equal(got, want) {
		t.Errorf("variants %v, want %v", got, want)
	}
	for _, n := range s.Notices {
		if strings.Contains(n, bands.SettingDiskCache) {
			t.Errorf("writethrough was suggested for reads: %s", n)
		}
	}
}

// IO threads need the virtio bus: on a sata VM their variant also moves the disk to virtio, and
// says that it sets both.
func TestSuggestIOThreadsMoveTheDiskToVirtio(t *testing.T) {
	suite := quickOnKVM(t, vmbenchv1.VMSettingsStatus{DiskBus: "virtio"})
	suite.Spec.Cluster.CPURequest, suite.Spec.Cluster.MemoryRequest = nil, nil
	suite.Spec.Platforms[1].VM = &vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI}
	s, err := Suggest(suite, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range s.Variants {
		if slices.Contains(v.Causes, bands.SettingIOThreads) {
			if !slices.Equal(v.Fields, []string{"diskBus", "ioThreads"}) {
				t.Errorf("IO threads variant sets %v", v.Fields)
			}
			return
		}
	}
	t.Errorf("no IO threads variant among %+v; notices %v", s.Variants, s.Notices)
}

// An emulated VM gets no variant and is told to enable KVM; a suite with nothing below its band
// gets ErrNothingBelow.
func TestSuggestEmulatedAndNothingBelow(t *testing.T) {
	emulated, err := suitefile.Read(quickSuiteFile, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Suggest(emulated, ""); err == nil || !strings.Contains(err.Error(), bands.EnableKVM) || errors.Is(err, ErrNothingBelow) {
		t.Errorf("emulated suite: %v, want the advice to enable KVM", err)
	}

	// The VM measured exactly what the container did: every ratio is 1.
	fine := quickOnKVM(t, vmbenchv1.VMSettingsStatus{DiskBus: "sata", CPUModel: "Westmere"})
	byBenchmark := map[string][]vmbenchv1.MetricSummary{}
	for _, r := range fine.Status.Results {
		if r.Platform == "container" {
			byBenchmark[r.Benchmark] = r.Metrics
		}
	}
	for i, r := range fine.Status.Results {
		if r.Platform == "vm" {
			fine.Status.Results[i].Metrics = byBenchmark[r.Benchmark]
		}
	}
	if _, err := Suggest(fine, ""); !errors.Is(err, ErrNothingBelow) {
		t.Errorf("suite at the container's figures: %v, want ErrNothingBelow", err)
	}
}

func TestSuggestRefusesATooLongName(t *testing.T) {
	suite := quickOnKVM(t, vmbenchv1.VMSettingsStatus{DiskBus: "sata"})
	suite.Name = "a-suite-with-a-long-name-here"
	if _, err := Suggest(suite, ""); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Errorf("got %v, want to be told to use --name", err)
	}
}

func TestVariantName(t *testing.T) {
	taken := map[string]bool{"vmdefault1234": true, "vm": true, "vmcpu": true}
	for _, tt := range []struct{ vm, suffix, want string }{
		{"vm", "mq", "vmmq"},
		{"vm", "cpu", "vmcpu2"},
		{"vmdefault123", "iothreads", "vmdiothreads"},
		{"kubevirtvm", "hugepages", "kubhugepages"},
	} {
		got := variantName(tt.vm, tt.suffix, taken)
		if got != tt.want || len(got) > 12 {
			t.Errorf("variantName(%q, %q) = %q, want %q", tt.vm, tt.suffix, got, tt.want)
		}
	}
}

// The verb writes the suite to -o, which decodes back to the same suite without status; with
// nothing below band it writes nothing and exits 4; an emulated suite exits 1 and says to enable
// KVM.
func TestSuggestCommand(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "quick.yaml")
	suite := quickOnKVM(t, vmbenchv1.VMSettingsStatus{DiskBus: "sata", CPUModel: "Westmere"})
	raw, err := json.Marshal(suite)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "suggested.yaml")
	var stdout, stderr bytes.Buffer
	if code := SuggestCommand(context.Background(), "vmbench", []string{"-f", in, "-o", out, "--name", "quick2"}, nil, &stdout, &stderr); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if stdout.Len() != 0 || !strings.HasPrefix(string(written), "# Suggested by vmbench suggest from suite quick") ||
		strings.Contains(string(written), "status:") || strings.Contains(string(written), "creationTimestamp") {
		t.Errorf("stdout %q; file:\n%s", stdout.String(), written)
	}
	back, err := suitefile.Decode(written, "")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Suggest(suite, "quick2")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Spec, want.Suite.Spec) || back.Name != "quick2" {
		t.Errorf("the written suite decodes to %+v, want %+v", back.Spec, want.Suite.Spec)
	}

	emulated := filepath.Join(dir, "emulated.yaml")
	data, err := os.ReadFile(quickSuiteFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(emulated, data, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := SuggestCommand(context.Background(), "vmbench", []string{"-f", emulated}, nil, &stdout, &stderr); code != ExitError ||
		stdout.Len() != 0 || !strings.Contains(stderr.String(), "enable KVM") {
		t.Errorf("emulated: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}

	for i, r := range suite.Status.Results {
		if r.Platform == "vm" {
			for _, c := range suite.Status.Results {
				if c.Platform == "container" && c.Benchmark == r.Benchmark {
					suite.Status.Results[i].Metrics = c.Metrics
				}
			}
		}
	}
	raw, _ = json.Marshal(suite)
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := SuggestCommand(context.Background(), "vmbench", []string{"-f", in}, nil, &stdout, &stderr); code != ExitNothingToSuggest ||
		stdout.Len() != 0 || !strings.Contains(stderr.String(), "no VM result of suite quick lies below its KVM band") {
		t.Errorf("nothing below: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if code := SuggestCommand(context.Background(), "vmbench", nil, nil, &stdout, &stderr); code != ExitUsage {
		t.Errorf("no suite: exit %d", code)
	}
}
