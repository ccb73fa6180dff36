package report

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestSharedStorageNotes(t *testing.T) {
	metric := []vmbenchv1.MetricSummary{{Name: "shared_write", Unit: "KiB/s", Direction: vmbenchv1.HigherIsBetter, N: 1, Mean: 1,
		Samples: []vmbenchv1.Sample{{Repetition: 1, Node: "master", Value: 1}}}}
	suite := &vmbenchv1.BenchmarkSuite{
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms: []vmbenchv1.Platform{{Name: "container", Type: vmbenchv1.PlatformContainer}, {Name: "vm", Type: vmbenchv1.PlatformVM},
				{Name: "kata", Type: vmbenchv1.PlatformContainer}},
			Baseline: "container",
			Benchmarks: []vmbenchv1.Benchmark{
				{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
				{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "Shared"}}},
				{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageShared}},
				{Name: "fio-root", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Target: vmbenchv1.StorageRootFS}},
			},
		},
		Status: vmbenchv1.BenchmarkSuiteStatus{
			SharedStorage: []vmbenchv1.PlatformSharedStorage{
				{Platform: "container", Run: "s-container-2",
					BackedBy: "PVC <run>-shared of storage class vmbench-shared (ReadWriteMany), mounted as ext4 /dev/vda"},
				{Platform: "vm", Run: "s-vm-2",
					BackedBy: "NFSv4.2 export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1), mounted as nfs4 master.<run>.ns.svc:/srv/vmbench-shared"},
			},
		},
	}
	for _, b := range []string{"cpu", "io", "fio", "fio-root"} {
		for _, p := range []string{"container", "vm", "kata"} {
			if b == "fio" && p == "kata" {
				continue // no result there: not named
			}
			suite.Status.Results = append(suite.Status.Results, vmbenchv1.BenchmarkResult{Benchmark: b, Platform: p, Metrics: metric})
		}
	}
	container := "container: PVC <run>-shared of storage class vmbench-shared (ReadWriteMany), mounted as ext4 /dev/vda"
	vm := "vm: NFSv4.2 export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1), mounted as nfs4 master.<run>.ns.svc:/srv/vmbench-shared"
	want := []string{
		"io on the Shared storage target (its shared_ metrics) was backed by " + container + "; " + vm +
			"; kata: not recorded (the target could not be made ready, or the status predates the record)",
		"fio on the Shared storage target (all its metrics) was backed by " + container + "; " + vm,
	}
	if diff := cmp.Diff(want, sharedStorageNotes(suite)); diff != "" {
		t.Errorf("notes mismatch (-want +got):\n%s", diff)
	}

	// The report carries them among its notes.
	r, err := Build(suite)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.Contains(r.Notes, w) {
			t.Errorf("report notes lack %q:\n%s", w, strings.Join(r.Notes, "\n"))
		}
	}
}
