package integration

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/cli"
	"github.com/vmbench/vmbench/internal/suitefile"
)

// quickSuiteOnKVM is the saved quick suite of docs/report as if its VMs had run on KVM, built as
// recorded says; spec changes its spec.
func quickSuiteOnKVM(t *testing.T, recorded vmbenchv1.VMSettingsStatus, spec func(*vmbenchv1.BenchmarkSuiteSpec)) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	suite, err := suitefile.Read(filepath.Join("..", "..", "docs", "report", "quick-suite.yaml"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range suite.Status.Runs {
		suite.Status.Runs[i].Accelerator = vmbenchv1.AcceleratorKVM
	}
	for i := range suite.Status.Results {
		suite.Status.Results[i].Emulated = false
	}
	recorded.Platform, recorded.Run = "vm", "quick-vm-1"
	suite.Status.VMSettings = []vmbenchv1.VMSettingsStatus{recorded}
	if spec != nil {
		spec(&suite.Spec)
	}
	return suite
}

// vmJSONFields are the fields of a vm block that differ between a and b, by their JSON names.
func vmJSONFields(g Gomega, a, b *vmbenchv1.VMSettings) []string {
	decode := func(v *vmbenchv1.VMSettings) map[string]any {
		m := map[string]any{}
		if v != nil {
			raw, err := json.Marshal(v)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(json.Unmarshal(raw, &m)).To(Succeed())
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

// The suite vmbench suggest writes, as text, is accepted by the API server with the CRD's schema
// and CEL rules, and each of its VM variants, as stored, differs from the VM platform it varies in
// exactly the settings suggested for it.
func TestSuggestedSuitesAreAcceptedAndDifferInTheSuggestedSettings(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		name     string
		recorded vmbenchv1.VMSettingsStatus
		spec     func(*vmbenchv1.BenchmarkSuiteSpec)
		// variants are the suggested settings of each variant, by the field names of platforms[].vm.
		variants map[string][]string
	}{
		{"named CPU model and sata", vmbenchv1.VMSettingsStatus{CPUModel: "Westmere", DiskBus: "sata"}, nil,
			map[string][]string{"vmcpu": {"cpuModel"}, "vmvirtio": {"diskBus"}}},
		{"masquerade without multiqueue", vmbenchv1.VMSettingsStatus{NetworkBinding: "Masquerade"}, nil,
			map[string][]string{"vmmq": {"networkMultiqueue"}, "vmbridge": {"networkBinding"}}},
		// Requests equal to limits leave dedicated CPUs and huge pages to try; an scsi disk makes
		// the IO threads variant move it to virtio as well.
		{"scsi disk, requests equal to limits", vmbenchv1.VMSettingsStatus{DiskBus: "scsi"}, func(s *vmbenchv1.BenchmarkSuiteSpec) {
			s.Cluster.CPURequest, s.Cluster.MemoryRequest = nil, nil
			s.Platforms[1].VM = &vmbenchv1.VMSettings{DiskBus: vmbenchv1.VMDiskBusSCSI, DiskCache: vmbenchv1.VMDiskCacheWritethrough}
		}, map[string][]string{"vmiothreads": {"diskBus", "ioThreads"}, "vmpinned": {"dedicatedCPUs"}}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			suite := quickSuiteOnKVM(t, tc.recorded, tc.spec)
			suite.Namespace = h.ns
			s, err := cli.Suggest(suite, "suggested"+string(rune('a'+i)))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(s.Variants).To(HaveLen(len(tc.variants)))
			var text bytes.Buffer
			g.Expect(cli.WriteSuggestion(&text, s, suite.Name)).To(Succeed())
			written, err := suitefile.Decode(text.Bytes(), "")
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(k8s.Create(h.ctx, written)).To(Succeed(), "the API server refused:\n%s", text.String())

			stored := &vmbenchv1.BenchmarkSuite{}
			g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(written), stored)).To(Succeed())
			platforms := map[string]vmbenchv1.Platform{}
			for _, p := range stored.Spec.Platforms {
				platforms[p.Name] = p
			}
			for _, v := range s.Variants {
				variant, ok := platforms[v.Platform]
				g.Expect(ok).To(BeTrue(), "variant %s is not stored", v.Platform)
				base := platforms[v.Of]
				g.Expect(variant.Type).To(Equal(vmbenchv1.PlatformVM))
				g.Expect(tc.variants).To(HaveKey(v.Platform))
				g.Expect(vmJSONFields(g, base.VM, variant.VM)).To(Equal(tc.variants[v.Platform]), "variant %s of %s", v.Platform, v.Of)
				g.Expect(v.Fields).To(Equal(tc.variants[v.Platform]), "what suggest says it changed in %s", v.Platform)
			}
		})
	}
}

// A CPU model that is no model name is refused by the API server, with what to set.
func TestInvalidCPUModelIsRejected(t *testing.T) {
	h := newHarness(t)
	suite := h.suite("badcpu", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	suite.Spec.Platforms = []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vmx", Type: vmbenchv1.PlatformVM,
		VM: &vmbenchv1.VMSettings{CPUModel: "host passthrough", NetworkMultiqueue: true}}}
	suite.Spec.Baseline = "container"
	err := k8s.Create(h.ctx, suite)
	h.g.Expect(err).To(MatchError(ContainSubstring("vm.cpuModel is host-passthrough, host-model or a libvirt CPU model name")))
	suite.Spec.Platforms[len(suite.Spec.Platforms)-1].VM.CPUModel = "Skylake-Server-v4"
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
}

// kubectl get suites shows the headline's band placement: the CRD has a Band column on
// .status.headline.band, and the API server keeps the field the manager writes there.
func TestBandColumnShowsTheHeadlinePlacement(t *testing.T) {
	h := newHarness(t)
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKey{Name: "benchmarksuites.vmbench.io"}, crd)).To(Succeed())
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	h.g.Expect(versions).NotTo(BeEmpty())
	columns, _, _ := unstructured.NestedSlice(versions[0].(map[string]any), "additionalPrinterColumns")
	h.g.Expect(columns).To(ContainElement(And(HaveKeyWithValue("name", "Band"), HaveKeyWithValue("jsonPath", ".status.headline.band"))))

	suite := h.suite("band", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
	h.g.Expect(k8s.Create(h.ctx, suite)).To(Succeed())
	suite.Status.Headline = &vmbenchv1.Headline{Benchmark: "hpcc", Metric: "HPL_Tflops", Summary: "vm/container 0.45", Band: "below"}
	h.g.Expect(k8s.Status().Update(h.ctx, suite)).To(Succeed())
	h.g.Expect(h.get("band").Status.Headline.Band).To(Equal("below"))
}
