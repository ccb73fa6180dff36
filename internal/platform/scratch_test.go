package platform

import (
	"testing"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		bare int64
		want int64
	}{
		{"512M", 1, 512 << 20},
		{"512m", 1, 512 << 20},
		{"64k", 1, 64 << 10},
		{"64K", 1024, 64 << 10},
		{"1g", 1, 1 << 30},
		{"16G", 1, 16 << 30},
		{"1t", 1, 1 << 40},
		{"100", 1024, 100 << 10},
		{"7", 1, 7},
		{"9999999", 1, 9999999},
		// Beyond what the CRD admits, yet no overflow.
		{"9999999t", 1, maxStorageBytes},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in, tt.bare)
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q, %d) = %d, %v; want %d", tt.in, tt.bare, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "M", "0", "-1", "1.5G", "12MB", "lots", "1 G", "+1"} {
		if got, err := parseSize(bad, 1); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestRunnerStorageNeverOverflows(t *testing.T) {
	st, err := runnerStorage([]vmbenchv1.Benchmark{{Name: "fio", Type: vmbenchv1.BenchmarkFio,
		Fio: &vmbenchv1.FioParams{Size: "9999999t", NumJobs: 64}}})
	if err != nil {
		t.Fatal(err)
	}
	if st.Scratch.Sign() <= 0 || st.Container.Cmp(st.Scratch) <= 0 {
		t.Errorf("scratch %s, container %s: want both positive, the container's larger", st.Scratch.String(), st.Container.String())
	}
}

// The scratch volume holds the largest Local file; the container's limit, which counts its writable
// layer and that volume, the largest Local or RootFS file; Shared files count nowhere.
func TestRunnerStorageCountsEachTargetWhereItIs(t *testing.T) {
	tests := []struct {
		name               string
		benchmarks         []vmbenchv1.Benchmark
		scratch, container int64
	}{
		{"Local only", []vmbenchv1.Benchmark{
			{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "512M"}}},
			512<<20 + scratchHeadroom, 512<<20 + scratchHeadroom + containerHeadroom},
		{"RootFS larger than Local", []vmbenchv1.Benchmark{
			{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "512M",
				Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}},
			{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Size: "2g", NumJobs: 2, Target: vmbenchv1.StorageRootFS}}},
			512<<20 + scratchHeadroom, 4<<30 + scratchHeadroom + containerHeadroom},
		{"RootFS and Shared only: an empty scratch volume", []vmbenchv1.Benchmark{
			{Name: "io", Type: vmbenchv1.BenchmarkIozone, Iozone: &vmbenchv1.IozoneParams{FileSize: "1g",
				Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageRootFS}}},
			{Name: "fio", Type: vmbenchv1.BenchmarkFio, Fio: &vmbenchv1.FioParams{Size: "8g", Target: vmbenchv1.StorageShared}}},
			scratchHeadroom, 1<<30 + scratchHeadroom + containerHeadroom},
	}
	for _, tt := range tests {
		st, err := runnerStorage(tt.benchmarks)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if st.Scratch.Value() != tt.scratch || st.Container.Value() != tt.container {
			t.Errorf("%s: scratch %d, container %d; want %d and %d", tt.name, st.Scratch.Value(), st.Container.Value(), tt.scratch, tt.container)
		}
	}
}
