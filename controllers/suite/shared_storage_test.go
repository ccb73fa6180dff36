package suite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/runplan"
)

// A run records what backed its platform's Shared target: the claim and class in pods, the master
// VM's NFS server in VMs, with what the runner saw mounted; nothing when no benchmark used the target
// or the export failed.
func TestFinishRunRecordsWhatBackedTheSharedTarget(t *testing.T) {
	const mountedPrefix = "NFSv4.2 export of VM master (nfs-kernel-server 1), mounted as nfs4 "
	shared := DefaultedBenchmarks(testSuite(vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Local", "Shared"}}}))
	class := &vmbenchv1.SharedStorage{StorageClassName: "vmbench-shared"}
	tests := []struct {
		name         string
		platformType vmbenchv1.PlatformType
		benchmarks   []vmbenchv1.Benchmark
		started      runplan.Message
		want         string
	}{
		{"container", vmbenchv1.PlatformContainer, shared, runplan.Message{SharedMount: "ext4 /dev/vda"},
			"PVC <run>-shared of storage class vmbench-shared (ReadWriteMany), mounted as ext4 /dev/vda"},
		{"host, mount not seen", vmbenchv1.PlatformHost, shared, runplan.Message{},
			"PVC <run>-shared of storage class vmbench-shared (ReadWriteMany)"},
		{"vm", vmbenchv1.PlatformVM, shared,
			runplan.Message{SharedServer: "nfs-kernel-server 1:2.6.2-4+deb12u1", SharedMount: "nfs4 master.demo-x-1.bench.svc:/srv/vmbench-shared"},
			"NFSv4.2 export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1), mounted as nfs4 master.<run>.bench.svc:/srv/vmbench-shared"},
		{"vm whose master could not export", vmbenchv1.PlatformVM, shared, runplan.Message{}, ""},
		{"no benchmark on the Shared target", vmbenchv1.PlatformContainer, finishBenchmarks(), runplan.Message{SharedMount: "ext4 /dev/vda"}, ""},
		{"a mount past the schema's limit", vmbenchv1.PlatformVM, shared,
			runplan.Message{SharedServer: "nfs-kernel-server 1", SharedMount: "nfs4 " + strings.Repeat("m", 300)},
			mountedPrefix + strings.Repeat("m", 256-3-len(mountedPrefix)) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &vmbenchv1.BenchmarkSuiteStatus{}
			run := &vmbenchv1.RunStatus{Name: "demo-x-1", Platform: "x", Repetition: 1}
			started := tt.started
			started.Kind = runplan.KindStarted
			summary.FinishRun(st, run, tt.platformType, tt.benchmarks, summary.RunCompletion{
				Report:  summary.RunReport{Started: &started, Done: &runplan.Message{Kind: runplan.KindDone}},
				Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow, SharedStorage: class,
			})
			var want []vmbenchv1.PlatformSharedStorage
			if tt.want != "" {
				want = []vmbenchv1.PlatformSharedStorage{{Platform: "x", BackedBy: tt.want, Run: "demo-x-1"}}
			}
			if diff := cmp.Diff(want, st.SharedStorage); diff != "" {
				t.Errorf("sharedStorage mismatch (-want +got):\n%s", diff)
			}
			for _, s := range st.SharedStorage {
				if len(s.BackedBy) > summary.MaxSharedStorage {
					t.Errorf("backedBy of %d bytes, beyond the schema's %d", len(s.BackedBy), summary.MaxSharedStorage)
				}
			}
		})
	}
}

// One entry per platform, the latest run's: a later run replaces what an earlier one recorded, and
// a run that recorded nothing (its export failed) keeps the earlier entry.
func TestFinishRunKeepsTheLatestSharedStoragePerPlatform(t *testing.T) {
	shared := DefaultedBenchmarks(testSuite(vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
		Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{"Shared"}}}))
	st := &vmbenchv1.BenchmarkSuiteStatus{}
	for i, server := range []string{"nfs-kernel-server 1:2.6.2-4", "nfs-kernel-server 1:2.6.2-4+deb12u1", ""} {
		run := &vmbenchv1.RunStatus{Name: fmt.Sprintf("demo-vm-%d", i+1), Platform: "vm", Repetition: int32(i + 1)}
		summary.FinishRun(st, run, vmbenchv1.PlatformVM, shared, summary.RunCompletion{
			Report:  summary.RunReport{Started: &runplan.Message{Kind: runplan.KindStarted, SharedServer: server}, Done: &runplan.Message{Kind: runplan.KindDone}},
			Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow,
		})
	}
	container := &vmbenchv1.RunStatus{Name: "demo-container-1", Platform: "container", Repetition: 1}
	summary.FinishRun(st, container, vmbenchv1.PlatformContainer, shared, summary.RunCompletion{
		Report:  summary.RunReport{Started: &runplan.Message{Kind: runplan.KindStarted}, Done: &runplan.Message{Kind: runplan.KindDone}},
		Outcome: platform.Outcome{Phase: platform.PhaseSucceeded}, Now: finishNow, SharedStorage: &vmbenchv1.SharedStorage{StorageClassName: "nfs"},
	})
	want := []vmbenchv1.PlatformSharedStorage{
		{Platform: "vm", BackedBy: "NFSv4.2 export of VM master (nfs-kernel-server 1:2.6.2-4+deb12u1)", Run: "demo-vm-2"},
		{Platform: "container", BackedBy: "PVC <run>-shared of storage class nfs (ReadWriteMany)", Run: "demo-container-1"},
	}
	if diff := cmp.Diff(want, st.SharedStorage); diff != "" {
		t.Errorf("sharedStorage mismatch (-want +got):\n%s", diff)
	}
}
