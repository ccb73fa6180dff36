package report

import (
	"fmt"
	"slices"
	"strings"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// sharedStorageNotes say, for every benchmark that wrote to the Shared storage target, what backed
// that target on each platform, as the suite's status recorded it (status.sharedStorage): a claim and
// its storage class in pods, the master VM's NFS server in VMs.
func sharedStorageNotes(suite *vmbenchv1.BenchmarkSuite) []string {
	backing := map[string]string{}
	for _, s := range suite.Status.SharedStorage {
		backing[s.Platform] = s.BackedBy
	}
	var notes []string
	for _, b := range suite.Spec.Benchmarks {
		metrics, ok := sharedMetrics(b)
		if !ok {
			continue
		}
		var parts []string
		for _, p := range platformOrder(suite) {
			if findResult(suite, b.Name, p) == nil {
				continue
			}
			what := backing[p]
			if what == "" {
				what = "not recorded (the target could not be made ready, or the status predates the record)"
			}
			parts = append(parts, p+": "+what)
		}
		if len(parts) > 0 {
			notes = append(notes, fmt.Sprintf("%s on the Shared storage target (%s) was backed by %s", b.Name, metrics, strings.Join(parts, "; ")))
		}
	}
	return notes
}

// sharedMetrics says which of b's metrics were measured on the Shared target: all of them, or with
// several iozone targets those named shared_...; ok is false when b did not use it.
func sharedMetrics(b vmbenchv1.Benchmark) (string, bool) {
	switch {
	case b.Iozone != nil && slices.Contains(b.Iozone.Targets, vmbenchv1.StorageShared):
		if len(b.Iozone.Targets) > 1 {
			return "its shared_ metrics", true
		}
		return "all its metrics", true
	case b.Fio != nil && b.Fio.Target == vmbenchv1.StorageShared:
		return "all its metrics", true
	}
	return "", false
}
