package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// PlatformVMSettings is how one VM platform's VMs were built, as the report shows it next to the
// platform: read back from a VMI of its latest run (status.vmSettings), or, for a platform none of
// whose VMs was seen, as its spec asked.
type PlatformVMSettings struct {
	Platform string
	// Source says where the settings come from: "VMI of run <name>", or "spec (no VM seen)".
	Source string
	// Network is the interface binding; "-" where the spec leaves it to the manager and no VM was seen.
	Network string
	// Disk is the root disk's bus and cache mode: "virtio (cache auto)".
	Disk string
	// CPUs is "shared", "dedicated" or "dedicated + emulator thread".
	CPUs string
	// Memory is "normal pages" or "2Mi huge pages".
	Memory string
	// IOThreads is "none", "shared" or "auto", and whether the root disk has a thread of its own.
	IOThreads string
	// QoS is the virt-launcher pod's QoS class as KubeVirt reported it; "-" when unknown.
	QoS string
	// Custom is set when the platform has a vm block, or its VMs were built otherwise than a VM
	// without one is: a variant the context line names.
	Custom bool
}

// VMSettingsLegend explains the VM settings table.
const VMSettingsLegend = "VM SETTINGS: how each VM platform's VMs were built, read back from a VMI of its latest run " +
	"(KubeVirt's defaults included), or from the spec where no VM was seen. cache auto: KubeVirt's choice, none where the disk's " +
	"file system supports O_DIRECT, writethrough otherwise. Under emulation (no KVM) dedicated CPUs, huge pages and IO threads change little"

// vmSettingsOf lists, in platform order, every VM platform's settings; nil for a suite without VM
// platforms, or whose status has none (statuses from before vmbench recorded them) and whose spec
// sets none.
func vmSettingsOf(suite *vmbenchv1.BenchmarkSuite) []PlatformVMSettings {
	observed := map[string]vmbenchv1.VMSettingsStatus{}
	for _, s := range suite.Status.VMSettings {
		observed[s.Platform] = s
	}
	specs := map[string]vmbenchv1.Platform{}
	anyBlock := false
	for _, p := range suite.Spec.Platforms {
		specs[p.Name] = p
		anyBlock = anyBlock || (p.Type == vmbenchv1.PlatformVM && p.VM != nil)
	}
	if len(observed) == 0 && !anyBlock {
		return nil
	}
	var out []PlatformVMSettings
	for _, name := range platformOrder(suite) {
		if s, ok := observed[name]; ok {
			out = append(out, fromStatus(s, specs[name].VM != nil))
			continue
		}
		if p, ok := specs[name]; ok && p.Type == vmbenchv1.PlatformVM {
			out = append(out, fromSpec(p, suite.Spec.Cluster))
		}
	}
	return out
}

// isDefault says whether a VMI reads back as one built without a vm block, its binding aside.
func isDefault(s vmbenchv1.VMSettingsStatus) bool {
	return (s.DiskBus == "" || s.DiskBus == string(vmbenchv1.VMDiskBusVirtio)) && s.DiskCache == "" && !s.IsolateEmulatorThread &&
		s.Hugepages == "" && s.IOThreads == "" && !s.DedicatedIOThread
}

func fromStatus(s vmbenchv1.VMSettingsStatus, block bool) PlatformVMSettings {
	return PlatformVMSettings{
		Platform: s.Platform, Source: "VMI of run " + s.Run, Network: orDash(s.NetworkBinding),
		Disk: diskText(s.DiskBus, s.DiskCache), CPUs: cpusText(s.DedicatedCPUs, s.IsolateEmulatorThread),
		Memory: memoryText(s.Hugepages), IOThreads: ioThreadsText(s.IOThreads, s.DedicatedIOThread), QoS: orDash(s.QOSClass),
		Custom: block || !isDefault(s),
	}
}

func fromSpec(p vmbenchv1.Platform, shape vmbenchv1.ClusterShape) PlatformVMSettings {
	vm := p.VM
	if vm == nil {
		vm = &vmbenchv1.VMSettings{}
	}
	return PlatformVMSettings{
		Platform: p.Name, Source: "spec (no VM seen)", Network: orDash(string(vm.NetworkBinding)),
		Disk: diskText(string(vm.DiskBus), string(vm.DiskCache)), CPUs: cpusText(p.DedicatedCPUsOf(shape), vm.IsolateEmulatorThread),
		Memory: memoryText(string(vm.Hugepages)), IOThreads: ioThreadsText(string(vm.IOThreads), vm.DedicatedIOThread), QoS: "-",
		Custom: p.VM != nil,
	}
}

func diskText(bus, cache string) string {
	if bus == "" {
		bus = string(vmbenchv1.VMDiskBusVirtio)
	}
	if cache == "" {
		cache = "auto"
	}
	return bus + " (cache " + cache + ")"
}

func cpusText(dedicated, emulatorThread bool) string {
	switch {
	case dedicated && emulatorThread:
		return "dedicated + emulator thread"
	case dedicated:
		return "dedicated"
	case emulatorThread:
		return "shared + emulator thread"
	}
	return "shared"
}

func memoryText(pages string) string {
	if pages == "" {
		return "normal pages"
	}
	return pages + " huge pages"
}

func ioThreadsText(policy string, dedicated bool) string {
	if policy == "" {
		policy = "none"
	}
	if dedicated {
		policy += " + dedicated (root disk)"
	}
	return policy
}

// Summary is the settings in one phrase, for the context line.
func (s PlatformVMSettings) Summary() string {
	parts := []string{}
	if s.Network != "-" {
		parts = append(parts, s.Network+" binding")
	}
	parts = append(parts, "root disk "+s.Disk, "CPUs "+s.CPUs, s.Memory, "IO threads "+s.IOThreads)
	return strings.Join(parts, ", ")
}

// vmSettingsPart is the context line's phrase for a VM platform whose VMs were built otherwise than
// by default; "" for the others.
func (r *Report) vmSettingsPart(platform string) string {
	for _, s := range r.VMSettings {
		if s.Platform == platform && s.Custom {
			return " [" + s.Summary() + "]"
		}
	}
	return ""
}

// writeVMSettings prints the VM settings table; nothing when the report has none.
func (r *Report) writeVMSettings(w io.Writer) error {
	if len(r.VMSettings) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nVM settings")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PLATFORM\tNETWORK\tROOT DISK\tCPUS\tMEMORY\tIO THREADS\tQOS\tFROM")
	for _, s := range r.VMSettings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Platform, s.Network, s.Disk, s.CPUs, s.Memory, s.IOThreads, s.QoS, s.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, VMSettingsLegend)
	return err
}
