package v1alpha1

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The bounds below are the ones the CRD's rules state; FirstInvalidValue applies them again in Go,
// for suites stored before the rules existed.

// Bounds of the durations.
const (
	MinSuiteTimeout     = time.Minute
	MaxSuiteTimeout     = 720 * time.Hour
	MinBenchmarkTimeout = 10 * time.Second
	MaxBenchmarkTimeout = 24 * time.Hour
	MinToolDuration     = time.Second
	MaxToolDuration     = time.Hour
)

// Bounds of the sizes a benchmark writes to a node's disk or moves through its memory, in bytes.
const (
	MaxFileSize   = 16 << 30
	MaxRecordSize = 16 << 20
	MaxVMBytes    = 64 << 30
	MaxTotalSize  = 1 << 40
)

// MaxNodeSelectorEntries bounds spec.placement.nodeSelector.
const MaxNodeSelectorEntries = 16

// Bounds of the quantities.
var (
	MinClusterMemory     = resource.MustParse("256Mi")
	MaxClusterMemory     = resource.MustParse("256Gi")
	MaxSharedStorageSize = resource.MustParse("1Ti")
	MinNetcatSize        = resource.MustParse("1Mi")
	MaxNetcatSize        = resource.MustParse("16Gi")
)

var (
	dns1035Label  = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	platformName  = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	ioSize        = regexp.MustCompile(`^[1-9][0-9]{0,6}[kmgKMG]?$`)
	vmBytes       = regexp.MustCompile(`^([1-9][0-9]{0,6}[KMG]?|[1-9][0-9]?%)$`)
	memoryTraffic = regexp.MustCompile(`^[1-9][0-9]{0,6}[KMGT]?$`)
	netcatSize    = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?([KMGT]i|[kMGT])?$`)
)

// FirstInvalidValue returns the first value of the suite that the controller cannot use, or nil.
// The CRD, or for its cross-field rules the ValidatingAdmissionPolicy vmbench-suite-spec, refuses
// every such value at admission; this catches the ones stored before its rules existed or where that
// policy is not installed, so that such a suite fails on its own instead of with an error in the controller. The
// message names the field and says what to change.
func FirstInvalidValue(s *BenchmarkSuite) error {
	if err := nameProblem(s.Name); err != nil {
		return err
	}
	spec := &s.Spec
	if spec.Timeout != nil {
		if err := durationProblem("spec.timeout", *spec.Timeout, MinSuiteTimeout, MaxSuiteTimeout); err != nil {
			return err
		}
	}
	for i, p := range spec.Platforms {
		if err := platformProblem(fmt.Sprintf("spec.platforms[%d]", i), p); err != nil {
			return err
		}
	}
	if err := clusterProblem(spec.Cluster); err != nil {
		return err
	}
	if err := vmSpecProblem(spec); err != nil {
		return err
	}
	for i, b := range spec.Benchmarks {
		if err := benchmarkProblem(fmt.Sprintf("spec.benchmarks[%d]", i), b); err != nil {
			return err
		}
		if err := migrationProblem(fmt.Sprintf("spec.benchmarks[%d]", i), b, spec.Platforms, spec.Cluster); err != nil {
			return err
		}
	}
	if err := fitProblem(spec); err != nil {
		return err
	}
	if err := placementProblem(spec.Placement); err != nil {
		return err
	}
	if spec.SharedStorage == nil && UsesStorageTarget(spec.Benchmarks, StorageShared) {
		platforms := spec.Platforms
		if len(platforms) == 0 {
			platforms = []Platform{{Name: "container", Type: PlatformContainer}}
		}
		for i, p := range platforms {
			if p.Type != PlatformVM {
				return fmt.Errorf("spec.sharedStorage: a benchmark uses the Shared storage target, which the pods of platform %s (spec.platforms[%d], type %s) mount as a ReadWriteMany volume: set spec.sharedStorage.storageClassName to a ReadWriteMany storage class, or use the Local or RootFS target",
					p.Name, i, p.Type)
			}
		}
	}
	if st := spec.SharedStorage; st != nil {
		if msgs := validation.IsDNS1123Subdomain(st.StorageClassName); len(msgs) > 0 {
			return fmt.Errorf("spec.sharedStorage.storageClassName: %q is not the name of a StorageClass (%s): name an existing StorageClass",
				st.StorageClassName, strings.Join(msgs, "; "))
		}
		if st.Size != nil && (st.Size.Sign() <= 0 || st.Size.Cmp(MaxSharedStorageSize) > 0) {
			return fmt.Errorf("spec.sharedStorage.size: %s is not above 0 and at most %s: set a size in that range", st.Size.String(), MaxSharedStorageSize.String())
		}
	}
	if err := crossFieldProblem(spec); err != nil {
		return err
	}
	return nil
}

func nameProblem(name string) error {
	if !dns1035Label.MatchString(name) {
		return fmt.Errorf("metadata.name: %q is not a DNS-1035 label, which the suite's Services and MPIJobs need: use lowercase letters, digits and '-', starting with a letter and ending with a letter or digit", name)
	}
	if len(name) > MaxSuiteNameLength {
		return fmt.Errorf("metadata.name: %q is longer than %d characters, which the names of the suite's pods and VMs need: shorten it", name, MaxSuiteNameLength)
	}
	return nil
}

func platformProblem(path string, p Platform) error {
	if !platformName.MatchString(p.Name) || len(p.Name) > MaxPlatformNameLength {
		return fmt.Errorf("%s.name: %q is not lowercase letters and digits, starting with a letter, at most %d characters: rename it without '-', as run names are <suite>-<platform>-<repetition>",
			path, p.Name, MaxPlatformNameLength)
	}
	if p.RuntimeClassName != nil {
		name := *p.RuntimeClassName
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 || len(name) > 63 {
			return fmt.Errorf("%s.runtimeClassName: %q is not the name of a RuntimeClass: name an existing RuntimeClass, at most 63 characters", path, name)
		}
	}
	return vmSettingsProblem(path, p)
}

func clusterProblem(c ClusterShape) error {
	if m := c.Memory; m != nil && (m.Cmp(MinClusterMemory) < 0 || m.Cmp(MaxClusterMemory) > 0) {
		return fmt.Errorf("spec.cluster.memory: %s is not between %s and %s: set a value in that range", m.String(), MinClusterMemory.String(), MaxClusterMemory.String())
	}
	if q := c.CPURequest; q != nil && q.Sign() <= 0 {
		return fmt.Errorf("spec.cluster.cpuRequest: %s is not above 0: set it above 0, for example 500m, or remove it", q.String())
	}
	if q := c.MemoryRequest; q != nil && q.Sign() <= 0 {
		return fmt.Errorf("spec.cluster.memoryRequest: %s is not above 0: set it above 0, for example 1Gi, or remove it", q.String())
	}
	return nil
}

func benchmarkProblem(path string, b Benchmark) error {
	timeout := 30 * time.Minute
	if b.Timeout != nil {
		if err := durationProblem(path+".timeout", *b.Timeout, MinBenchmarkTimeout, MaxBenchmarkTimeout); err != nil {
			return err
		}
		timeout = b.Timeout.Duration()
	}
	switch b.Concurrency {
	case "", ConcurrencyOneNodeAtATime:
	case ConcurrencyAllNodes:
		if !b.Type.RunsPerNode() {
			return fmt.Errorf("%s.concurrency: AllNodes needs a tool that runs on each node by itself, and %s does not (hpcc already spans all nodes; iperf3, ping, netperf and netcat measure pairs of nodes): remove concurrency or set it to OneNodeAtATime", path, b.Type)
		}
	default:
		return fmt.Errorf("%s.concurrency: %q is neither OneNodeAtATime nor AllNodes: set one of them", path, b.Concurrency)
	}
	tool := func(field string, d *Duration) error {
		if d == nil {
			return nil
		}
		if err := durationProblem(path+"."+field, *d, MinToolDuration, MaxToolDuration); err != nil {
			return err
		}
		if d.Duration() >= timeout {
			return fmt.Errorf("%s.%s: %q is not shorter than the benchmark's timeout %s, which bounds each execution: lower it or raise %s.timeout",
				path, field, string(*d), shortDuration(timeout), path)
		}
		return nil
	}
	size := func(field, value string, syntax *regexp.Regexp, unit, limit int64, limitText string) error {
		if value == "" {
			return nil
		}
		n, ok := sizeBytes(value, syntax, unit)
		if !ok {
			return fmt.Errorf("%s.%s: %q is not a size: write a number and a unit letter, such as 512M", path, field, value)
		}
		if n > limit {
			return fmt.Errorf("%s.%s: %q is more than %s: lower it", path, field, value, limitText)
		}
		return nil
	}
	var errs []error
	if p := b.SysbenchCPU; p != nil {
		errs = append(errs, tool("sysbenchCPU.duration", p.Duration))
	}
	if p := b.SysbenchMemory; p != nil {
		errs = append(errs, size("sysbenchMemory.totalSize", p.TotalSize, memoryTraffic, 1, MaxTotalSize, "1T"))
	}
	if p := b.StressNGCPU; p != nil {
		errs = append(errs, tool("stressNGCPU.duration", p.Duration))
	}
	if p := b.StressNGVM; p != nil {
		errs = append(errs, tool("stressNGVM.duration", p.Duration),
			size("stressNGVM.bytes", p.Bytes, vmBytes, 1, MaxVMBytes, "64G"))
	}
	if p := b.Iozone; p != nil {
		// iozone counts a number without a unit in KiB.
		errs = append(errs, size("iozone.fileSize", p.FileSize, ioSize, 1<<10, MaxFileSize, "16G"),
			size("iozone.recordSize", p.RecordSize, ioSize, 1<<10, MaxRecordSize, "16M"),
			iozoneAutoProblem(path+".iozone", *p))
	}
	if p := b.Iperf3; p != nil {
		errs = append(errs, tool("iperf3.duration", p.Duration))
	}
	if p := b.Netperf; p != nil {
		errs = append(errs, tool("netperf.duration", p.Duration))
		// An unset count is its default: 3 iterations at least, 10 at most.
		if c := p.Confidence; c != nil && max(c.MinIterations, 3) > cmp.Or(c.MaxIterations, 10) {
			errs = append(errs, fmt.Errorf("%s.netperf.confidence: minIterations %d is above maxIterations %d: lower minIterations or raise maxIterations",
				path, max(c.MinIterations, 3), cmp.Or(c.MaxIterations, 10)))
		}
	}
	if p := b.Netcat; p != nil && p.Size != "" {
		errs = append(errs, netcatSizeProblem(path+".netcat.size", p.Size))
	}
	if p := b.Fio; p != nil {
		errs = append(errs, tool("fio.runtime", p.Runtime),
			size("fio.size", p.Size, ioSize, 1, MaxFileSize, "16G"),
			size("fio.blockSize", p.BlockSize, ioSize, 1, MaxRecordSize, "16M"))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// MinIozoneFileSize is the smallest file of iozone's automatic mode the API takes, iozone's own
// default minimum.
const MinIozoneFileSize = 64 << 10

// iozoneAutoProblem says what is wrong with the sizes of automatic mode, or with a size of the other
// mode given with it.
func iozoneAutoProblem(path string, p IozoneParams) error {
	if !p.Auto {
		for _, f := range []struct{ name, value, flag string }{{"maxFileSize", p.MaxFileSize, "-g"}, {"minFileSize", p.MinFileSize, "-n"}} {
			if f.value != "" {
				return fmt.Errorf("%s.%s: applies to auto: true only (iozone -a %s): set auto to true, or remove %s and set fileSize for a single file size",
					path, f.name, f.flag, f.name)
			}
		}
		return nil
	}
	if p.FileSize != "" {
		return fmt.Errorf("%s.fileSize: does not apply with auto: true, which runs every file size from minFileSize to maxFileSize: remove fileSize, or set auto to false", path)
	}
	if p.RecordSize != "" {
		return fmt.Errorf("%s.recordSize: does not apply with auto: true, which runs every record size from 4k to 16M that fits each file: remove recordSize, or set auto to false", path)
	}
	bytes := map[string]int64{}
	for _, f := range []struct{ name, value, def string }{
		{"maxFileSize", p.MaxFileSize, DefaultIozoneMaxFileSize}, {"minFileSize", p.MinFileSize, DefaultIozoneMinFileSize}} {
		value := orString(f.value, f.def)
		// iozone counts a number without a unit in KiB.
		n, ok := sizeBytes(value, ioSize, 1<<10)
		if !ok {
			return fmt.Errorf("%s.%s: %q is not a size: write a number and a unit letter, such as 1G", path, f.name, value)
		}
		if n < MinIozoneFileSize || n > MaxFileSize {
			return fmt.Errorf("%s.%s: %q is not between 64k and 16G: set it in that range, for example 1G", path, f.name, value)
		}
		bytes[f.name] = n
	}
	if bytes["minFileSize"] > bytes["maxFileSize"] {
		return fmt.Errorf("%s.minFileSize: %q is above maxFileSize %q: lower minFileSize or raise maxFileSize",
			path, orString(p.MinFileSize, DefaultIozoneMinFileSize), orString(p.MaxFileSize, DefaultIozoneMaxFileSize))
	}
	return nil
}

func placementProblem(p Placement) error {
	if len(p.NodeSelector) > MaxNodeSelectorEntries {
		return fmt.Errorf("spec.placement.nodeSelector: %d entries: keep at most %d", len(p.NodeSelector), MaxNodeSelectorEntries)
	}
	for k, v := range p.NodeSelector {
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 {
			return fmt.Errorf("spec.placement.nodeSelector: key %q is not a label name (%s): write it like vmbench.io/pool", k, strings.Join(msgs, "; "))
		}
		if msgs := validation.IsValidLabelValue(string(v)); len(msgs) > 0 {
			return fmt.Errorf("spec.placement.nodeSelector[%s]: %q is not a label value (%s): change it", k, string(v), strings.Join(msgs, "; "))
		}
	}
	for i, t := range p.Tolerations {
		path := fmt.Sprintf("spec.placement.tolerations[%d]", i)
		switch {
		case t.Key == "":
			return fmt.Errorf("%s.key: a toleration without a key tolerates every taint, the control plane's included: set key to the key of the taint to tolerate", path)
		case t.Operator != "" && t.Operator != corev1.TolerationOpExists && t.Operator != corev1.TolerationOpEqual:
			return fmt.Errorf("%s.operator: %q: set operator to Exists or Equal", path, t.Operator)
		case t.Effect != "" && t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectPreferNoSchedule && t.Effect != corev1.TaintEffectNoExecute:
			return fmt.Errorf("%s.effect: %q: set effect to NoSchedule, PreferNoSchedule or NoExecute, or leave it out to tolerate every effect", path, t.Effect)
		case t.Operator == corev1.TolerationOpExists && t.Value != "":
			return fmt.Errorf("%s.value: operator Exists matches any value: remove value %q, or set operator to Equal", path, t.Value)
		case len(validation.IsQualifiedName(t.Key)) > 0:
			return fmt.Errorf("%s.key: %q is not a label name (%s), which the pod API requires of a toleration key: write it like vmbench.io/dedicated",
				path, t.Key, strings.Join(validation.IsQualifiedName(t.Key), "; "))
		case len(validation.IsValidLabelValue(t.Value)) > 0:
			return fmt.Errorf("%s.value: %q is not a label value (%s), which the pod API requires of a toleration value: change it",
				path, t.Value, strings.Join(validation.IsValidLabelValue(t.Value), "; "))
		case t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute:
			return fmt.Errorf("%s.tolerationSeconds: applies only to effect NoExecute: set effect to NoExecute or remove tolerationSeconds", path)
		}
	}
	return nil
}

// durationProblem says what is wrong with d at path: not a duration, or outside [lo, hi].
func durationProblem(path string, d Duration, lo, hi time.Duration) error {
	v, err := d.Parse()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if v < lo || v > hi {
		return fmt.Errorf("%s: %q is not between %s and %s: set it in that range", path, string(d), shortDuration(lo), shortDuration(hi))
	}
	return nil
}

// shortDuration writes 1h rather than time.Duration's 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sizeBytes is a size such as 512M in bytes, when it matches syntax. The unit letters K, M, G and T
// (either case) are powers of 1024; a number without one counts unit bytes. A share such as 50% is
// 0 bytes: it is a share of the node's memory, which the CRD bounds to 99%. A size beyond int64
// is math.MaxInt64.
func sizeBytes(s string, syntax *regexp.Regexp, unit int64) (int64, bool) {
	if !syntax.MatchString(s) {
		return 0, false
	}
	if strings.HasSuffix(s, "%") {
		return 0, true
	}
	digits := strings.TrimRight(s, "kmgtKMGT")
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	switch strings.ToUpper(s[len(digits):]) {
	case "K":
		unit = 1 << 10
	case "M":
		unit = 1 << 20
	case "G":
		unit = 1 << 30
	case "T":
		unit = 1 << 40
	}
	if n > math.MaxInt64/unit {
		return math.MaxInt64, true
	}
	return n * unit, true
}

// NetcatSizeBytes is a netcat size in bytes, or an error that says what to change.
func NetcatSizeBytes(size string) (int64, error) {
	q, err := resource.ParseQuantity(size)
	if err != nil || !netcatSize.MatchString(size) || len(size) > 16 {
		return 0, fmt.Errorf("%q is not a size: write a number and a unit such as 1Gi or 500Mi", size)
	}
	if q.Cmp(MinNetcatSize) < 0 || q.Cmp(MaxNetcatSize) > 0 {
		return 0, fmt.Errorf("%s is not between %s and %s: set a size in that range, 1Gi or more for a precise rate", size, MinNetcatSize.String(), MaxNetcatSize.String())
	}
	return q.Value(), nil
}

func netcatSizeProblem(path, size string) error {
	if _, err := NetcatSizeBytes(size); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
