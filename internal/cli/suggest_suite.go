package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/bands"
	"github.com/vmbench/vmbench/internal/report"
)

// A suggested suite runs, beside the container baseline and each VM platform with results below
// their KVM band, one VM variant per likely cause of those results: the VM platform with only the
// cause's settings changed, on only the benchmarks that fell below their band.

// maxPlatforms is spec.platforms' MaxItems.
const maxPlatforms = 4

// maxSuiteName is the longest suite name the API server accepts.
const maxSuiteName = 30

// ErrNothingBelow says that no VM result lies below its KVM band, so there is nothing to suggest.
var ErrNothingBelow = errors.New("nothing to suggest")

// Variant is one suggested VM platform.
type Variant struct {
	// Platform is the variant's name, Of the VM platform it changes.
	Platform, Of string
	// Causes are the band causes it puts to the test (bands.Setting...).
	Causes []string
	// Fields are the fields of platforms[].vm it sets differently from Of, by their JSON names.
	Fields []string
	// Metrics are the results below their band that the causes may explain: "benchmark metric".
	Metrics []string
}

// Suggestion is the suite vmbench suggest writes, with what it changed and what it left out.
type Suggestion struct {
	Suite    *vmbenchv1.BenchmarkSuite
	Variants []Variant
	// Notices say what was not turned into a variant, and why.
	Notices []string
	// Purpose, where set, is what the suite's header says it measures, instead of the KVM band's
	// causes.
	Purpose string
}

// vmChange is how a cause becomes a VM variant: a name suffix, and the change to platforms[].vm.
type vmChange struct {
	suffix string
	// apply changes vm, or says why the suite does not allow the change.
	apply func(vm *vmbenchv1.VMSettings, spec vmbenchv1.BenchmarkSuiteSpec) error
}

var vmChanges = map[string]vmChange{
	bands.SettingCPUModel: {"cpu", func(vm *vmbenchv1.VMSettings, _ vmbenchv1.BenchmarkSuiteSpec) error {
		vm.CPUModel = "host-passthrough"
		return nil
	}},
	bands.SettingDiskBus: {"virtio", func(vm *vmbenchv1.VMSettings, _ vmbenchv1.BenchmarkSuiteSpec) error {
		vm.DiskBus = vmbenchv1.VMDiskBusVirtio
		return nil
	}},
	bands.SettingDiskCache: {"nocache", func(vm *vmbenchv1.VMSettings, _ vmbenchv1.BenchmarkSuiteSpec) error {
		vm.DiskCache = vmbenchv1.VMDiskCacheNone
		return nil
	}},
	bands.SettingNetworkMultiqueue: {"mq", func(vm *vmbenchv1.VMSettings, _ vmbenchv1.BenchmarkSuiteSpec) error {
		vm.NetworkMultiqueue = true
		return nil
	}},
	bands.SettingNetworkBinding: {"bridge", func(vm *vmbenchv1.VMSettings, _ vmbenchv1.BenchmarkSuiteSpec) error {
		vm.NetworkBinding = vmbenchv1.VMBindingBridge
		return nil
	}},
	bands.SettingIOThreads: {"iothreads", func(vm *vmbenchv1.VMSettings, _ vmbenchv1.BenchmarkSuiteSpec) error {
		vm.IOThreads = vmbenchv1.VMIOThreadsAuto
		// KubeVirt gives IO threads to virtio disks only, and the API server refuses them on another bus.
		if vm.DiskBus != "" && vm.DiskBus != vmbenchv1.VMDiskBusVirtio {
			vm.DiskBus = vmbenchv1.VMDiskBusVirtio
		}
		return nil
	}},
	bands.SettingDedicatedCPUs: {"pinned", func(vm *vmbenchv1.VMSettings, spec vmbenchv1.BenchmarkSuiteSpec) error {
		if spec.Cluster.CPURequest != nil || spec.Cluster.MemoryRequest != nil {
			return errors.New("dedicated CPUs need requests equal to limits, and this suite lowers cluster.cpuRequest or cluster.memoryRequest " +
				"for every platform: remove both from the suite and run it again, then suggest from its results")
		}
		vm.DedicatedCPUs = true
		return nil
	}},
	bands.SettingHugepages: {"hugepages", func(vm *vmbenchv1.VMSettings, spec vmbenchv1.BenchmarkSuiteSpec) error {
		memory := spec.Cluster.MemoryLimit()
		if memory.Value()%(2<<20) != 0 {
			return fmt.Errorf("2Mi huge pages must back the whole guest memory, and cluster.memory %s is no multiple of 2Mi: set cluster.memory to a multiple of 2Mi", memory.String())
		}
		vm.Hugepages = vmbenchv1.VMHugepages2Mi
		return nil
	}},
}

// rankedCause is a cause with where it stood among the causes of the results it explains.
type rankedCause struct {
	setting string
	// best is its best position in a result's list of causes (0: first).
	best    int
	metrics []string
}

// Suggest builds the suggested suite from a suite with results, named name ("" for
// <suite>-suggest). It returns ErrNothingBelow (wrapped, with the placements) when no VM result
// lies below its band, and an error that says to enable KVM when only emulated VMs could have.
func Suggest(suite *vmbenchv1.BenchmarkSuite, name string) (*Suggestion, error) {
	if name == "" {
		name = suite.Name + "-suggest"
	}
	if len(name) > maxSuiteName {
		return nil, fmt.Errorf("the suggested suite's name %q is longer than the %d characters a suite's name may have: give a shorter one with --name", name, maxSuiteName)
	}
	rep, err := report.Build(suite)
	if err != nil {
		return nil, err
	}
	spec := suite.Spec
	platforms := map[string]vmbenchv1.Platform{}
	for _, p := range spec.Platforms {
		platforms[p.Name] = p
	}

	out := &Suggestion{}
	causes := map[string]map[string]*rankedCause{} // VM platform -> setting -> cause
	var vmOrder []string
	belowBenchmarks := map[string]bool{}
	counts := map[bands.Position]int{}
	emulated := map[string]bool{}
	baseline := spec.Baseline
	for _, b := range rep.KVMBands {
		counts[b.Position]++
		baseline = b.Row.BaselinePlatform
		if b.Position == bands.Emulated {
			if !emulated[b.Platform] {
				emulated[b.Platform] = true
				out.Notices = append(out.Notices, fmt.Sprintf("platform %s ran emulated, so no KVM band applies and no setting is worth a variant; %s", b.Platform, bands.EnableKVM))
			}
			continue
		}
		if b.Position != bands.Below {
			continue
		}
		belowBenchmarks[b.Benchmark] = true
		byCause, ok := causes[b.Platform]
		if !ok {
			byCause = map[string]*rankedCause{}
			causes[b.Platform] = byCause
			vmOrder = append(vmOrder, b.Platform)
		}
		metric := b.Benchmark + " " + b.Metric
		for i, c := range b.Causes {
			rc, ok := byCause[c.Setting]
			if !ok {
				rc = &rankedCause{setting: c.Setting, best: i}
				byCause[c.Setting] = rc
			}
			rc.best = min(rc.best, i)
			rc.metrics = append(rc.metrics, metric)
		}
	}
	if len(vmOrder) == 0 {
		if len(emulated) > 0 && counts[bands.Within]+counts[bands.Above]+counts[bands.Inconclusive] == 0 {
			return nil, fmt.Errorf("suite %s: its VMs ran emulated, so they have no KVM band to fall below and no setting to suggest: %s", suite.Name, bands.EnableKVM)
		}
		return nil, fmt.Errorf("%w: no VM result of suite %s lies below its KVM band (%s)", ErrNothingBelow, suite.Name, positionCounts(counts))
	}

	base, ok := platforms[baseline]
	if !ok {
		return nil, fmt.Errorf("suite %s names no baseline platform %q in spec.platforms", suite.Name, baseline)
	}
	kept := []vmbenchv1.Platform{base}
	for _, p := range vmOrder {
		kept = append(kept, platforms[p])
	}
	room := maxPlatforms - len(kept)
	names := map[string]bool{}
	for _, p := range kept {
		names[p.Name] = true
	}
	var variants []vmbenchv1.Platform
	for _, vmName := range vmOrder {
		vmPlatform := platforms[vmName]
		ranked := make([]*rankedCause, 0, len(causes[vmName]))
		for _, rc := range causes[vmName] {
			ranked = append(ranked, rc)
		}
		// First the causes that come first for some result, then the others; among equals the
		// largest published effect first.
		sort.Slice(ranked, func(i, j int) bool {
			a, b := ranked[i], ranked[j]
			if a.best != b.best {
				return a.best < b.best
			}
			return slices.Index(bands.BelowCauseOrder, a.setting) < slices.Index(bands.BelowCauseOrder, b.setting)
		})
		for _, rc := range ranked {
			change, ok := vmChanges[rc.setting]
			if !ok {
				out.Notices = append(out.Notices, fmt.Sprintf("%s (for %s of platform %s) changes every platform, not one VM: no variant; change it in the suite itself",
					rc.setting, benchmarksOf(rc.metrics), vmName))
				continue
			}
			vm := vmbenchv1.VMSettings{}
			if vmPlatform.VM != nil {
				vm = *vmPlatform.VM
			}
			before := vm
			if err := change.apply(&vm, spec); err != nil {
				out.Notices = append(out.Notices, fmt.Sprintf("no variant for %s (for %s of platform %s): %v", rc.setting, benchmarksOf(rc.metrics), vmName, err))
				continue
			}
			if room == 0 {
				out.Notices = append(out.Notices, fmt.Sprintf("left out %s (for %s of platform %s): spec.platforms holds at most %d platforms; "+
					"run vmbench suggest again on the suggested suite's results, or edit a variant to try it", rc.setting, benchmarksOf(rc.metrics), vmName, maxPlatforms))
				continue
			}
			fields, err := changedVMFields(before, vm)
			if err != nil {
				return nil, err
			}
			if len(fields) == 0 {
				out.Notices = append(out.Notices, fmt.Sprintf("no variant for %s (for %s of platform %s): its spec already asks for it, and its VMs ran otherwise "+
					"(status.vmSettings): check the cluster's KubeVirt configuration", rc.setting, benchmarksOf(rc.metrics), vmName))
				continue
			}
			variant := vmbenchv1.Platform{Name: variantName(vmName, change.suffix, names), Type: vmbenchv1.PlatformVM, VM: &vm}
			names[variant.Name] = true
			variants = append(variants, variant)
			out.Variants = append(out.Variants, Variant{Platform: variant.Name, Of: vmName, Causes: []string{rc.setting}, Fields: fields, Metrics: rc.metrics})
			room--
		}
	}
	if len(out.Variants) == 0 {
		return nil, fmt.Errorf("suite %s has VM results below their KVM band, and none of their likely causes can be tried as a VM variant: %s",
			suite.Name, strings.Join(out.Notices, "; "))
	}

	next := &vmbenchv1.BenchmarkSuite{
		TypeMeta:   metav1.TypeMeta{APIVersion: vmbenchv1.GroupVersion.String(), Kind: "BenchmarkSuite"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: suite.Namespace},
		Spec:       *spec.DeepCopy(),
	}
	next.Spec.Platforms = append(kept, variants...)
	next.Spec.Baseline = baseline
	next.Spec.Benchmarks = nil
	for _, b := range spec.Benchmarks {
		if belowBenchmarks[b.Name] {
			next.Spec.Benchmarks = append(next.Spec.Benchmarks, b)
		}
	}
	if p := next.Spec.Precision; p != nil {
		var metrics []string
		for _, m := range p.Metrics {
			if belowBenchmarks[strings.SplitN(m, "/", 2)[0]] {
				metrics = append(metrics, m)
			}
		}
		if len(metrics) == 0 {
			next.Spec.Precision = nil
			out.Notices = append(out.Notices, "spec.precision left out: none of its metrics belongs to a benchmark below its band; "+
				"the suggested suite runs spec.repetitions repetitions")
		} else {
			p.Metrics = metrics
		}
	}
	out.Suite = next
	return out, nil
}

// changedVMFields are the JSON names of the fields of platforms[].vm that differ between a and b.
func changedVMFields(a, b vmbenchv1.VMSettings) ([]string, error) {
	am, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&a)
	if err != nil {
		return nil, err
	}
	bm, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&b)
	if err != nil {
		return nil, err
	}
	var fields []string
	for k, v := range bm {
		if fmt.Sprint(am[k]) != fmt.Sprint(v) {
			fields = append(fields, k)
		}
	}
	for k := range am {
		if _, ok := bm[k]; !ok {
			fields = append(fields, k)
		}
	}
	sort.Strings(fields)
	return fields, nil
}

// variantName is the VM platform's name followed by suffix, cut to a platform name's 12 characters
// and made unique among taken with a digit.
func variantName(vm, suffix string, taken map[string]bool) string {
	const maxName = 12
	name := vm + suffix
	if len(name) > maxName {
		keep := max(maxName-len(suffix), 1)
		name = vm[:min(len(vm), keep)] + suffix
		name = name[:min(len(name), maxName)]
	}
	for i := 2; taken[name]; i++ {
		digit := fmt.Sprint(i)
		name = name[:min(len(name), maxName-len(digit))] + digit
	}
	return name
}

// benchmarksOf names the benchmarks of metrics ("benchmark metric"), with how many metrics each:
// "hpcc (9 metrics), fio (1 metric)".
func benchmarksOf(metrics []string) string {
	var order []string
	n := map[string]int{}
	for _, m := range metrics {
		b, _, _ := strings.Cut(m, " ")
		if n[b] == 0 {
			order = append(order, b)
		}
		n[b]++
	}
	parts := make([]string, len(order))
	for i, b := range order {
		if n[b] == 1 {
			parts[i] = b + " (1 metric)"
		} else {
			parts[i] = fmt.Sprintf("%s (%d metrics)", b, n[b])
		}
	}
	return strings.Join(parts, ", ")
}

func positionCounts(counts map[bands.Position]int) string {
	var parts []string
	for _, p := range []bands.Position{bands.Within, bands.Above, bands.Inconclusive, bands.Emulated} {
		if counts[p] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[p], p))
		}
	}
	if len(parts) == 0 {
		return "no VM metric has a KVM band against a container baseline"
	}
	return "placements: " + strings.Join(parts, ", ")
}

// WriteSuggestion writes the suggested suite as YAML, after comments that say what each variant
// tries and what was left out; the suite has no status and no metadata a server sets.
func WriteSuggestion(w io.Writer, s *Suggestion, from string) error {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s.Suite)
	if err != nil {
		return err
	}
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	body, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Suggested by vmbench suggest from suite %s: each VM variant below changes only the settings\n", from)
	if s.Purpose != "" {
		fmt.Fprintf(&b, "# named for it, %s.\n", s.Purpose)
	} else {
		b.WriteString("# named for it, to measure whether the likely cause of its results below their KVM band is the cause.\n")
	}
	for _, v := range s.Variants {
		fmt.Fprintf(&b, "#   %s = %s with %s (vm.%s), for %s\n", v.Platform, v.Of, strings.Join(v.Causes, "; "),
			strings.Join(v.Fields, ", vm."), benchmarksOf(v.Metrics))
	}
	for _, n := range s.Notices {
		fmt.Fprintf(&b, "# Note: %s\n", n)
	}
	b.Write(body)
	_, err = io.WriteString(w, b.String())
	return err
}
