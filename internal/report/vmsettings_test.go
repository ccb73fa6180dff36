package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// variantsSuite is the fixture suite with its VM platform named vmdefault and a second one, vmtuned,
// whose spec sets VM settings; vmfast's VMs were never seen. Status records what the VMIs of
// vmdefault and vmtuned showed.
func variantsSuite() *vmbenchv1.BenchmarkSuite {
	s := fixtureSuite([]fixtureMetric{{"cpu", "events", vmbenchv1.HigherIsBetter, spread3(100, 0.1), spread3(90, 0.1)}})
	tuned := &vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst, DiskBus: vmbenchv1.VMDiskBusSCSI, DiskCache: vmbenchv1.VMDiskCacheWriteback,
		DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: vmbenchv1.VMHugepages2Mi}
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vmdefault", Type: vmbenchv1.PlatformVM},
		{Name: "vmtuned", Type: vmbenchv1.PlatformVM, VM: tuned},
		{Name: "vmfast", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{IOThreads: vmbenchv1.VMIOThreadsAuto, DedicatedIOThread: true}}}
	var results []vmbenchv1.BenchmarkResult
	for _, r := range s.Status.Results {
		if r.Platform == "vm" {
			r.Platform = "vmdefault"
			tunedResult := *r.DeepCopy()
			tunedResult.Platform = "vmtuned"
			results = append(results, tunedResult)
		}
		results = append(results, r)
	}
	s.Status.Results = results
	s.Status.VMSettings = []vmbenchv1.VMSettingsStatus{
		{Platform: "vmtuned", Run: "fixture-vmtuned-3", NetworkBinding: "Passt", DiskBus: "scsi", DiskCache: "writeback",
			DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: "2Mi", QOSClass: "Guaranteed"},
		{Platform: "vmdefault", Run: "fixture-vmdefault-3", NetworkBinding: "Passt", DiskBus: "virtio", QOSClass: "Guaranteed"},
	}
	return s
}

func TestVMSettingsNextToThePlatform(t *testing.T) {
	rep, err := Build(variantsSuite())
	if err != nil {
		t.Fatal(err)
	}
	want := []PlatformVMSettings{
		{Platform: "vmdefault", Source: "VMI of run fixture-vmdefault-3", Network: "Passt", Disk: "virtio (cache auto)", CPUs: "shared",
			Memory: "normal pages", IOThreads: "none", QoS: "Guaranteed"},
		{Platform: "vmtuned", Source: "VMI of run fixture-vmtuned-3", Network: "Passt", Disk: "scsi (cache writeback)",
			CPUs: "dedicated + emulator thread", Memory: "2Mi huge pages", IOThreads: "none", QoS: "Guaranteed", Custom: true},
		{Platform: "vmfast", Source: "spec (no VM seen)", Network: "-", Disk: "virtio (cache auto)", CPUs: "shared", Memory: "normal pages",
			IOThreads: "auto + dedicated (root disk)", QoS: "-", Custom: true},
	}
	if diff := cmp.Diff(want, rep.VMSettings); diff != "" {
		t.Fatalf("VM settings mismatch (-want +got):\n%s", diff)
	}

	// The context line says what each variant was; the default VM needs no words.
	for _, part := range []string{
		"vmdefault accelerator unknown;",
		"vmtuned accelerator unknown [Passt binding, root disk scsi (cache writeback), CPUs dedicated + emulator thread, 2Mi huge pages, IO threads none];",
		"vmfast accelerator unknown [root disk virtio (cache auto), CPUs shared, normal pages, IO threads auto + dedicated (root disk)];",
	} {
		if !strings.Contains(rep.Context, part) {
			t.Errorf("context %q lacks %q", rep.Context, part)
		}
	}

	var text bytes.Buffer
	if err := rep.WriteTable(&text); err != nil {
		t.Fatal(err)
	}
	section := text.String()[strings.Index(text.String(), "\nVM settings\n"):]
	lines := strings.Split(section, "\n")
	if len(lines) < 7 {
		t.Fatalf("VM settings section too short:\n%s", section)
	}
	for i, w := range [][]string{
		{"PLATFORM", "NETWORK", "ROOT DISK", "CPUS", "MEMORY", "IO THREADS", "QOS", "FROM"},
		{"vmdefault", "Passt", "virtio (cache auto)", "shared", "normal pages", "none", "Guaranteed", "VMI of run fixture-vmdefault-3"},
		{"vmtuned", "Passt", "scsi (cache writeback)", "dedicated + emulator thread", "2Mi huge pages", "none", "Guaranteed", "VMI of run fixture-vmtuned-3"},
		{"vmfast", "-", "virtio (cache auto)", "shared", "normal pages", "auto + dedicated (root disk)", "-", "spec (no VM seen)"},
	} {
		if got := splitColumns(lines[2+i]); !cmp.Equal(got, w) {
			t.Errorf("line %d: %q, want %q", i, got, w)
		}
	}
	if lines[6] != VMSettingsLegend {
		t.Errorf("legend line %q", lines[6])
	}

	var html bytes.Buffer
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"<h2>VM settings</h2>",
		"<tr><td>vmtuned</td><td>Passt</td><td>scsi (cache writeback)</td><td>dedicated &#43; emulator thread</td><td>2Mi huge pages</td><td>none</td><td>Guaranteed</td><td>VMI of run fixture-vmtuned-3</td></tr>",
		"vmtuned accelerator unknown [Passt binding, root disk scsi (cache writeback)"} {
		if !strings.Contains(html.String(), part) {
			t.Errorf("HTML lacks %q", part)
		}
	}
}

// splitColumns splits a tabwriter line on its runs of two or more spaces.
func splitColumns(line string) []string {
	var out []string
	for _, f := range strings.Split(line, "  ") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// A status from before vmbench recorded VM settings, of a suite without vm blocks, reports as before:
// no section, and nothing added to the context line.
func TestNoVMSettingsInOldReports(t *testing.T) {
	s := startupSuite()
	rep, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.VMSettings != nil || strings.Contains(rep.Context, "[") {
		t.Errorf("VM settings %+v, context %q", rep.VMSettings, rep.Context)
	}
	var text, html bytes.Buffer
	if err := rep.WriteTable(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "VM settings") || strings.Contains(html.String(), "VM settings") {
		t.Error("a report without VM settings shows the section")
	}
	// A default VM read back from its VMI is listed, but needs no words in the context line.
	s.Status.VMSettings = []vmbenchv1.VMSettingsStatus{{Platform: "vm", Run: "v-2", NetworkBinding: "Bridge", DiskBus: "virtio"}}
	if rep, err = Build(s); err != nil {
		t.Fatal(err)
	}
	if len(rep.VMSettings) != 1 || rep.VMSettings[0].Custom || strings.Contains(rep.Context, "[") {
		t.Errorf("VM settings %+v, context %q", rep.VMSettings, rep.Context)
	}
}
