package integration

import (
	"fmt"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/platform"
)

// variantPlatforms are a default VM and a tuned one of the same shape.
func variantPlatforms(tuned vmbenchv1.VMSettings) []vmbenchv1.Platform {
	return []vmbenchv1.Platform{{Name: "vmdefault", Type: vmbenchv1.PlatformVM}, {Name: "vmtuned", Type: vmbenchv1.PlatformVM, VM: &tuned}}
}

// Two variants of a VM run one after the other; each one's VMIs carry its settings, and status
// records what the VMIs that ran show, KubeVirt's QoS class included.
func TestVMVariantsRecordHowTheirVMsWereBuilt(t *testing.T) {
	h := newHarness(t)
	h.kubeVirtCR(true, true)
	h.configure = func(r *suitecontroller.SuiteReconciler) {
		r.VMNetwork, r.Emulation = platform.VMNetworkAuto, suitecontroller.EmulationAllow
	}
	h.startManager(allKinds())
	suite := h.suite("variants", 1, demoBenchmarks()...)
	suite.Spec.Platforms = variantPlatforms(vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingBridge, DiskCache: vmbenchv1.VMDiskCacheWriteback,
		DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: vmbenchv1.VMHugepages2Mi, IOThreads: vmbenchv1.VMIOThreadsAuto, DedicatedIOThread: true})
	suite.Spec.Baseline = "vmdefault"
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())

	h.finishVMRun("variants", "variants-vmdefault-1", 1, "qemu")
	tuned := &kubevirtv1.VirtualMachineInstance{}
	h.g.Eventually(func() error {
		return k8s.Get(h.ctx, client.ObjectKey{Namespace: h.ns, Name: "variants-vmtuned-1-master"}, tuned)
	}, timeout, interval).Should(Succeed())
	d := tuned.Spec.Domain
	h.g.Expect(d.Devices.Interfaces[0].Bridge).NotTo(BeNil(), "the platform's binding, not the cluster's passt")
	h.g.Expect(d.Devices.Disks[0].Cache).To(Equal(kubevirtv1.CacheWriteBack))
	h.g.Expect(d.CPU.DedicatedCPUPlacement && d.CPU.IsolateEmulatorThread).To(BeTrue())
	h.g.Expect(d.Memory.Hugepages).To(Equal(&kubevirtv1.Hugepages{PageSize: "2Mi"}))

	// KubeVirt reports the virt-launcher pod's QoS class in the VMI's status.
	h.g.Eventually(func() error {
		vmi := &kubevirtv1.VirtualMachineInstance{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(tuned), vmi); err != nil {
			return err
		}
		vmi.Status.QOSClass = ptr.To(corev1.PodQOSGuaranteed)
		return k8s.Update(h.ctx, vmi)
	}, timeout, interval).Should(Succeed())
	h.eventuallySuite("variants", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.VMSettings).To(ContainElement(HaveField("QOSClass", "Guaranteed")))
	})
	h.finishVMRun("variants", "variants-vmtuned-1", 0.9, "qemu")

	s := h.eventuallySuite("variants", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete))
	})
	h.g.Expect(s.Status.VMSettings).To(Equal([]vmbenchv1.VMSettingsStatus{
		{Platform: "vmdefault", Run: "variants-vmdefault-1", NetworkBinding: "Passt", DiskBus: "virtio"},
		{Platform: "vmtuned", Run: "variants-vmtuned-1", NetworkBinding: "Bridge", DiskBus: "virtio", DiskCache: "writeback",
			DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: "2Mi", IOThreads: "auto", DedicatedIOThread: true, QOSClass: "Guaranteed"},
	}))
	h.g.Expect(s.Status.Runs[0].Network).To(Equal("passt"))
	h.g.Expect(s.Status.Runs[1].Network).To(Equal("bridge"), "the run records the platform's binding")
}

// A binding the cluster's KubeVirt does not register fails the platform's runs before any VM is
// made, and says what to change; the other platforms go on.
func TestUnsupportedVMSettingFailsTheRunBeforeItStarts(t *testing.T) {
	h := newHarness(t)
	h.kubeVirtCR(false, true)
	h.configure = func(r *suitecontroller.SuiteReconciler) {
		r.VMNetwork, r.Emulation = platform.VMNetworkAuto, suitecontroller.EmulationAllow
	}
	h.startManager(allKinds())
	s := h.expectTunedVariantRefused("nopasst", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst},
		"VMSettingUnsupported: platform vmtuned asks for vm.networkBinding Passt, "+
			"but the cluster's KubeVirt CR registers no passt binding plugin (spec.configuration.network.binding.passt): "+
			"register it with KubeVirt's network-passt-binding sidecar image, or set vm.networkBinding to Bridge or Masquerade")
	h.g.Expect(s.Status.Results).To(ContainElement(HaveField("Platform", "vmdefault")), "the default VM's results are kept")
}

// vmPlatformWith makes the suite's VM platform (the default suite's second) carry the settings.
func vmPlatformWith(s *vmbenchv1.BenchmarkSuite, vm vmbenchv1.VMSettings) {
	s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM, VM: &vm}}
}

// vmSettingsRejections are the cases of TestInvalidSuitesAreRejectedWithAReadableMessage for the vm
// block: one per enum and per CEL rule, each with the API server's whole message.
func vmSettingsRejections() []struct {
	name   string
	mutate func(s *vmbenchv1.BenchmarkSuite)
	want   string
} {
	return []struct {
		name   string
		mutate func(s *vmbenchv1.BenchmarkSuite)
		want   string
	}{
		{"vm settings on a container platform", func(s *vmbenchv1.BenchmarkSuite) {
			s.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer, VM: &vmbenchv1.VMSettings{DiskBus: "sata"}}}
		}, "spec.platforms[0]: Invalid value: vm settings are only allowed on platforms of type VM: remove vm or set type: VM"},
		{"network binding in KubeVirt's spelling", func(s *vmbenchv1.BenchmarkSuite) { vmPlatformWith(s, vmbenchv1.VMSettings{NetworkBinding: "passt"}) },
			`spec.platforms[1].vm.networkBinding: Unsupported value: "passt": supported values: "Bridge", "Passt", "Masquerade"`},
		{"unknown disk bus", func(s *vmbenchv1.BenchmarkSuite) { vmPlatformWith(s, vmbenchv1.VMSettings{DiskBus: "ide"}) },
			`spec.platforms[1].vm.diskBus: Unsupported value: "ide": supported values: "virtio", "sata", "scsi"`},
		{"unknown cache mode", func(s *vmbenchv1.BenchmarkSuite) { vmPlatformWith(s, vmbenchv1.VMSettings{DiskCache: "unsafe"}) },
			`spec.platforms[1].vm.diskCache: Unsupported value: "unsafe": supported values: "none", "writethrough", "writeback"`},
		{"unknown page size", func(s *vmbenchv1.BenchmarkSuite) { vmPlatformWith(s, vmbenchv1.VMSettings{Hugepages: "4Ki"}) },
			`spec.platforms[1].vm.hugepages: Unsupported value: "4Ki": supported values: "2Mi", "1Gi"`},
		{"unknown IO thread policy", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{IOThreads: "supplementalPool"})
		},
			`spec.platforms[1].vm.ioThreads: Unsupported value: "supplementalPool": supported values: "shared", "auto"`},
		{"dedicated IO thread on sata", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSATA, DedicatedIOThread: true})
		}, "spec.platforms[1].vm: Invalid value: vm.dedicatedIOThread needs the virtio disk bus, the only one KubeVirt gives IO threads to: set vm.diskBus to virtio or remove dedicatedIOThread"},
		{"IO threads on scsi", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI, IOThreads: vmbenchv1.VMIOThreadsShared})
		}, "spec.platforms[1].vm: Invalid value: vm.ioThreads serve virtio disks only, and this VM's root disk is on another bus: set vm.diskBus to virtio or remove ioThreads"},
		{"emulator thread without dedicated CPUs", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{IsolateEmulatorThread: true})
		}, "spec.platforms: Invalid value: vm.isolateEmulatorThread needs dedicated CPUs, as KubeVirt puts the emulator thread on a host CPU of its own next to the pinned vCPUs: set vm.dedicatedCPUs (or cluster.dedicatedCPUs) to true, or remove isolateEmulatorThread"},
		{"dedicated CPUs with a lowered request", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{DedicatedCPUs: true})
			s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("500m"))
		}, "spec.platforms: Invalid value: vm.dedicatedCPUs needs requests equal to limits (Guaranteed QoS, whole CPUs): remove cluster.cpuRequest and cluster.memoryRequest, or remove vm.dedicatedCPUs"},
		{"1Gi pages for 1536Mi", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi})
			s.Spec.Cluster.Memory = ptr.To(resource.MustParse("1536Mi"))
		}, "spec.platforms: Invalid value: vm.hugepages backs the whole guest memory with pages of that size, so cluster.memory must be a multiple of it: set cluster.memory to a multiple of the page size, for example 2Gi"},
		{"masquerade with hpcc", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade})
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, bench("hpcc", vmbenchv1.BenchmarkHPCC))
		}, "spec.platforms: Invalid value: vm.networkBinding Masquerade hides every VM behind 10.0.2.2, so HPCC's MPI ranks cannot reach each other across VMs: use Bridge or Passt, or remove the hpcc benchmarks"},
		{"migration timeout of 0 s per GiB", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{MigrationPolicy: &vmbenchv1.VMMigrationPolicy{CompletionTimeoutPerGiB: ptr.To[int64](0)}})
		}, "spec.platforms[1].vm.migrationPolicy.completionTimeoutPerGiB: Invalid value: 0: spec.platforms[1].vm.migrationPolicy.completionTimeoutPerGiB in body should be greater than or equal to 1"},
		{"migration timeout above an hour per GiB", func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{MigrationPolicy: &vmbenchv1.VMMigrationPolicy{CompletionTimeoutPerGiB: ptr.To[int64](3601)}})
		}, "spec.platforms[1].vm.migrationPolicy.completionTimeoutPerGiB: Invalid value: 3601: spec.platforms[1].vm.migrationPolicy.completionTimeoutPerGiB in body should be less than or equal to 3600"},
	}
}

// Each setting the CEL rules guard is accepted in its valid combination: a tuned VM with every
// setting, 2Mi pages on memory that 1Gi pages do not divide, masquerade without MPI, and the
// emulator thread under cluster.dedicatedCPUs.
func TestVMSettingsAreAccepted(t *testing.T) {
	h := newHarness(t)
	for name, mutate := range map[string]func(s *vmbenchv1.BenchmarkSuite){
		"every setting": func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst, DiskBus: vmbenchv1.VMDiskBusVirtio, DiskCache: vmbenchv1.VMDiskCacheNone,
				DedicatedCPUs: true, IsolateEmulatorThread: true, Hugepages: vmbenchv1.VMHugepages1Gi, IOThreads: vmbenchv1.VMIOThreadsAuto, DedicatedIOThread: true})
			s.Spec.Benchmarks = append(s.Spec.Benchmarks, bench("hpcc", vmbenchv1.BenchmarkHPCC))
		},
		"2Mi pages for 1536Mi": func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi})
			s.Spec.Cluster.Memory = ptr.To(resource.MustParse("1536Mi"))
		},
		"masquerade without hpcc": func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade, DiskBus: vmbenchv1.VMDiskBusSCSI, DiskCache: vmbenchv1.VMDiskCacheWritethrough})
		},
		"emulator thread under cluster.dedicatedCPUs": func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vmbenchv1.VMSettings{IsolateEmulatorThread: true, DiskBus: vmbenchv1.VMDiskBusSATA})
			s.Spec.Cluster.DedicatedCPUs = true
		},
		"an empty block": func(s *vmbenchv1.BenchmarkSuite) { vmPlatformWith(s, vmbenchv1.VMSettings{}) },
	} {
		s := h.suite("accepted", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
		mutate(s)
		h.g.Expect(k8s.Create(h.ctx, s, client.DryRunAll)).To(Succeed(), name)
		h.g.Expect(vmbenchv1.FirstInvalidValue(s)).To(Succeed(), name)
	}
}

// vmSettingsPositions are the generated cases' positions of the vm block: its enums, the rules
// within the block, and the rules between the block and the rest of the spec.
func vmSettingsPositions() []position {
	with := func(label string, vm vmbenchv1.VMSettings, also func(s *vmbenchv1.BenchmarkSuite)) variant {
		return variant{label: label, apply: func(s *vmbenchv1.BenchmarkSuite) {
			vmPlatformWith(s, vm)
			if also != nil {
				also(s)
			}
		}}
	}
	memory := func(q string) func(s *vmbenchv1.BenchmarkSuite) {
		return func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.Memory = ptr.To(resource.MustParse(q)) }
	}
	withHPCC := func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Benchmarks[0] = fullBenchmark(vmbenchv1.BenchmarkHPCC) }
	enum := func(field string, set func(vm *vmbenchv1.VMSettings, v string), bad, good []string) position {
		p := position{path: "spec.platforms[1].vm." + field}
		for _, v := range bad {
			vm := vmbenchv1.VMSettings{}
			set(&vm, v)
			p.bad = append(p.bad, with(fmt.Sprintf("%q", v), vm, nil))
		}
		for _, v := range good {
			vm := vmbenchv1.VMSettings{}
			set(&vm, v)
			p.good = append(p.good, with(fmt.Sprintf("%q", v), vm, nil))
		}
		return p
	}
	onContainer := func(s *vmbenchv1.BenchmarkSuite) {
		vmPlatformWith(s, vmbenchv1.VMSettings{})
		s.Spec.Platforms[0].VM = &vmbenchv1.VMSettings{}
	}
	vmFirst := func(s *vmbenchv1.BenchmarkSuite) {
		s.Spec.Platforms = []vmbenchv1.Platform{{Name: "vmtuned", Type: vmbenchv1.PlatformVM, VM: &vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI}}}
		s.Spec.Baseline = "vmtuned"
	}
	return []position{
		enum("networkBinding", func(vm *vmbenchv1.VMSettings, v string) { vm.NetworkBinding = vmbenchv1.VMNetworkBinding(v) },
			[]string{"passt", "bridge", "masquerade", "macvtap", "SR-IOV"}, []string{"Passt", "Bridge", "Masquerade"}),
		enum("diskBus", func(vm *vmbenchv1.VMSettings, v string) { vm.DiskBus = vmbenchv1.VMDiskBus(v) },
			[]string{"ide", "usb", "Virtio", "SATA", "virtio-scsi"}, []string{"virtio", "sata", "scsi"}),
		enum("diskCache", func(vm *vmbenchv1.VMSettings, v string) { vm.DiskCache = vmbenchv1.VMDiskCache(v) },
			[]string{"unsafe", "directsync", "None", "write-back"}, []string{"none", "writethrough", "writeback"}),
		enum("hugepages", func(vm *vmbenchv1.VMSettings, v string) { vm.Hugepages = vmbenchv1.VMHugepages(v) },
			[]string{"4Ki", "2M", "1G", "2mi", "1024Mi"}, []string{"2Mi", "1Gi"}),
		enum("ioThreads", func(vm *vmbenchv1.VMSettings, v string) { vm.IOThreads = vmbenchv1.VMIOThreads(v) },
			[]string{"supplementalPool", "dedicated", "Auto", "none"}, []string{"shared", "auto"}),
		{path: "spec.platforms[0]",
			bad:  []variant{{label: "vm on a container platform", apply: onContainer}},
			good: []variant{{label: "vm on the only platform, a VM", apply: vmFirst}}},
		{path: "spec.platforms[1].vm",
			bad: []variant{
				with("dedicated IO thread on sata", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSATA, DedicatedIOThread: true}, nil),
				with("dedicated IO thread on scsi", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI, DedicatedIOThread: true}, nil),
				with("shared IO threads on sata", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSATA, IOThreads: vmbenchv1.VMIOThreadsShared}, nil),
				with("auto IO threads on scsi", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI, IOThreads: vmbenchv1.VMIOThreadsAuto}, nil),
			},
			good: []variant{
				with("dedicated IO thread on virtio", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusVirtio, DedicatedIOThread: true}, nil),
				with("dedicated IO thread on the default bus", vmbenchv1.VMSettings{DedicatedIOThread: true}, nil),
				with("shared IO threads on virtio", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusVirtio, IOThreads: vmbenchv1.VMIOThreadsShared}, nil),
				with("auto IO threads on the default bus", vmbenchv1.VMSettings{IOThreads: vmbenchv1.VMIOThreadsAuto}, nil),
				with("scsi without IO threads", vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI}, nil),
			}},
		{path: "spec.platforms",
			bad: []variant{
				with("emulator thread without dedicated CPUs", vmbenchv1.VMSettings{IsolateEmulatorThread: true}, nil),
				with("dedicated CPUs with a CPU request", vmbenchv1.VMSettings{DedicatedCPUs: true},
					func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse("1")) }),
				with("dedicated CPUs with a memory request", vmbenchv1.VMSettings{DedicatedCPUs: true},
					func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.MemoryRequest = ptr.To(resource.MustParse("2Gi")) }),
				with("1Gi pages for 1536Mi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi}, memory("1536Mi")),
				with("1Gi pages for 3000Mi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi}, memory("3000Mi")),
				with("2Mi pages for 1000M", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, memory("1000M")),
				with("2Mi pages for 257Mi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, memory("257Mi")),
				with("masquerade with hpcc", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade}, withHPCC),
			},
			good: []variant{
				with("emulator thread with dedicated CPUs", vmbenchv1.VMSettings{IsolateEmulatorThread: true, DedicatedCPUs: true}, nil),
				with("dedicated CPUs without requests", vmbenchv1.VMSettings{DedicatedCPUs: true}, nil),
				with("emulator thread under cluster.dedicatedCPUs", vmbenchv1.VMSettings{IsolateEmulatorThread: true},
					func(s *vmbenchv1.BenchmarkSuite) { s.Spec.Cluster.DedicatedCPUs = true }),
				with("1Gi pages for 3Gi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi}, memory("3Gi")),
				with("1Gi pages by default", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages1Gi}, nil),
				with("2Mi pages for 1536Mi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, memory("1536Mi")),
				with("2Mi pages for 258Mi", vmbenchv1.VMSettings{Hugepages: vmbenchv1.VMHugepages2Mi}, memory("258Mi")),
				with("masquerade without hpcc", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingMasquerade}, nil),
				with("passt with hpcc", vmbenchv1.VMSettings{NetworkBinding: vmbenchv1.VMBindingPasst}, withHPCC),
			}},
	}
}

// expectTunedVariantRefused runs suite name with the platforms vmdefault and vmtuned (with tuned),
// finishes the default VM run, and checks that the suite failed on the tuned run alone, with
// exactly message, before any VM of it was made. It returns the suite as it ended.
func (h *harness) expectTunedVariantRefused(name string, tuned vmbenchv1.VMSettings, message string) *vmbenchv1.BenchmarkSuite {
	h.t.Helper()
	suite := h.suite(name, 1, demoBenchmarks()...)
	suite.Spec.Platforms = variantPlatforms(tuned)
	suite.Spec.Baseline = "vmdefault"
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	h.finishVMRun(name, name+"-vmdefault-1", 1, "qemu")

	s := h.eventuallySuite(name, func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteFailed))
	})
	h.g.Expect(s.Status.Runs[1].Phase).To(Equal(vmbenchv1.RunFailed))
	h.g.Expect(s.Status.Runs[1].Message).To(Equal(message))
	vmis := &kubevirtv1.VirtualMachineInstanceList{}
	h.g.Expect(k8s.List(h.ctx, vmis, client.InNamespace(h.ns), client.MatchingLabels{vmbenchv1.LabelRun: name + "-vmtuned-1"})).To(Succeed())
	h.g.Expect(vmis.Items).To(BeEmpty(), "no VM of the refused run")
	return s
}
