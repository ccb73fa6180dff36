//go:build e2e

package e2e

import (
	"strings"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// storageBenchmarks write small files to every storage target: iozone to all three (its metrics
// named local_, rootfs_ and shared_), fio to Shared, writing, bounded by its size (no runtime).
func storageBenchmarks() []vmbenchv1.Benchmark {
	return []vmbenchv1.Benchmark{
		{Name: "iozone", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "16M", RecordSize: "64k",
			Tests:   []vmbenchv1.IozoneTest{"write", "read"},
			Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageRootFS, vmbenchv1.StorageShared}}},
		{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{RW: "write", Size: "16m", Target: vmbenchv1.StorageShared}},
	}
}

// expectStorageResults checks that every target measured on platform, that the status recorded what
// backed the platform's Shared target, starting with backedBy, and that the report, as `vmbench
// report` printed it (out), says it.
func (e *env) expectStorageResults(s *vmbenchv1.BenchmarkSuite, out, platform, backedBy string) {
	e.g.Expect(meta.IsStatusConditionTrue(s.Status.Conditions, vmbenchv1.ConditionComplete)).To(BeTrue(),
		"Failed: %v", meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed))
	for _, want := range []struct{ benchmark, metric string }{
		{"iozone", "local_write"}, {"iozone", "rootfs_write"}, {"iozone", "shared_write"}, {"iozone", "shared_read"}, {"fio", "write_iops"},
	} {
		e.g.Expect(s.Status.Results).To(ContainElement(And(HaveField("Benchmark", want.benchmark), HaveField("Platform", platform),
			HaveField("Failures", int32(0)), HaveField("Metrics", ContainElement(HaveField("Name", want.metric)))),
		), "%s %s on %s", want.benchmark, want.metric, platform)
	}
	e.g.Expect(s.Status.SharedStorage).To(ContainElement(And(HaveField("Platform", platform), HaveField("BackedBy", HavePrefix(backedBy)))))
	// One note per benchmark names every platform's backing: "... was backed by container: ...; vm: ...".
	var note string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "note: iozone on the Shared storage target (its shared_ metrics) was backed by ") {
			note = line
		}
	}
	e.g.Expect(note).To(ContainSubstring(platform+": "+backedBy), "the report's notes:\n%s", out)
}
