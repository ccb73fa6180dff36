package platform

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// What a runner pod writes besides the files of its storage benchmarks. Both bounds are far above
// what was seen, since a pod that exceeds them is evicted and its run fails.
const (
	// scratchHeadroom is room on the scratch volume for the runner's own files there (HPCC's input
	// and output, stress-ng's YAML report) and the file system's overhead.
	scratchHeadroom = 256 << 20
	// containerHeadroom is what the container writes outside the scratch volume: its writable layer
	// (sshd's pid file, OpenMPI's session directory in /tmp) and its log, which carries the frames.
	containerHeadroom = 512 << 20
)

// podStorage is the ephemeral storage of a run's pods: the size limit of the scratch volume and
// the container's request and limit, which also count that volume.
type podStorage struct {
	Scratch   resource.Quantity
	Container resource.Quantity
}

// runnerStorage bounds what a node of the run writes to its ephemeral storage. The runner removes
// each benchmark's file when its execution ends, and runs one execution at a time on a node, so the
// largest file of a storage benchmark on the Local target is what the scratch volume holds at once,
// and the largest on Local or RootFS (the container's writable layer, which the container's limit
// counts as it counts the scratch volume) what the container holds at once.
func runnerStorage(benchmarks []vmbenchv1.Benchmark) (podStorage, error) {
	local, err := largestFile(benchmarks, vmbenchv1.StorageLocal)
	if err != nil {
		return podStorage{}, err
	}
	rootFS, err := largestFile(benchmarks, vmbenchv1.StorageRootFS)
	if err != nil {
		return podStorage{}, err
	}
	return podStorage{
		Scratch:   *resource.NewQuantity(local+scratchHeadroom, resource.BinarySI),
		Container: *resource.NewQuantity(max(local, rootFS)+scratchHeadroom+containerHeadroom, resource.BinarySI),
	}, nil
}

// largestFile is the largest file that one execution of a storage benchmark writes to a node's
// target: iozone's fileSize (maxFileSize in auto mode), fio's size times numJobs. fio's jobs share
// one file today, so the product is an upper bound that stays right should each job get its own.
func largestFile(benchmarks []vmbenchv1.Benchmark, target vmbenchv1.StorageTarget) (int64, error) {
	var largest int64
	for _, b := range benchmarks {
		b = b.WithDefaults()
		var n int64
		var err error
		switch b.Type {
		case vmbenchv1.BenchmarkIozone:
			if !slices.Contains(b.Iozone.Targets, target) {
				continue
			}
			// iozone reads a size without a unit as KiB; auto mode's largest file is maxFileSize.
			if n, err = parseSize(b.Iozone.LargestFile(), 1<<10); err != nil {
				return 0, fmt.Errorf("benchmark %s: iozone file size: %w", b.Name, err)
			}
		case vmbenchv1.BenchmarkFio:
			if b.Fio.Target != target {
				continue
			}
			// fio reads a size without a unit as bytes.
			if n, err = parseSize(b.Fio.Size, 1); err != nil {
				return 0, fmt.Errorf("benchmark %s: fio size: %w", b.Name, err)
			}
			n = mulCapped(n, int64(max(b.Fio.NumJobs, 1)))
		}
		largest = max(largest, n)
	}
	return largest, nil
}

// maxStorageBytes caps a size so that adding the headrooms cannot overflow.
const maxStorageBytes = math.MaxInt64 / 4

// parseSize reads a size as iozone and fio do: digits and an optional binary unit k, m, g or t in
// either case; a size without a unit is in units of bare.
func parseSize(s string, bare int64) (int64, error) {
	unit := bare
	digits := s
	if i := len(s) - 1; i >= 0 {
		switch strings.ToLower(s[i:]) {
		case "k":
			unit, digits = 1<<10, s[:i]
		case "m":
			unit, digits = 1<<20, s[:i]
		case "g":
			unit, digits = 1<<30, s[:i]
		case "t":
			unit, digits = 1<<40, s[:i]
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a size such as 512M", s)
	}
	return mulCapped(n, unit), nil
}

func mulCapped(a, b int64) int64 {
	if a > maxStorageBytes/b {
		return maxStorageBytes
	}
	return a * b
}
