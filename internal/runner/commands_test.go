package runner

import (
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestCommandBuilders(t *testing.T) {
	mustVM := func(p *vmbenchv1.StressNGVMParams, mem int64) []string {
		argv, err := StressNGVMArgv(p, mem, "/scratch/s.yaml")
		if err != nil {
			t.Fatalf("StressNGVMArgv: %v", err)
		}
		return argv
	}
	for _, tc := range []struct {
		name string
		got  []string
		want string
	}{
		{"sysbench cpu defaults from the CRD",
			SysbenchCPUArgv(&vmbenchv1.SysbenchCPUParams{MaxPrime: 20000, Duration: dur(10 * time.Second)}, 4),
			"sysbench cpu --cpu-max-prime=20000 --threads=4 --time=10 run"},
		{"sysbench cpu explicit threads, fractional seconds round up",
			SysbenchCPUArgv(&vmbenchv1.SysbenchCPUParams{MaxPrime: 5000, Threads: 1, Duration: dur(1500 * time.Millisecond)}, 4),
			"sysbench cpu --cpu-max-prime=5000 --threads=1 --time=2 run"},
		{"sysbench memory",
			SysbenchMemoryArgv(&vmbenchv1.SysbenchMemoryParams{TotalSize: "10G", Operation: "read"}, "1K", 2),
			"sysbench memory --memory-block-size=1K --memory-total-size=10G --memory-oper=read --threads=2 run"},
		{"sysbench memory zero values",
			SysbenchMemoryArgv(&vmbenchv1.SysbenchMemoryParams{Threads: 3}, "1M", 2),
			"sysbench memory --memory-block-size=1M --memory-total-size=10G --memory-oper=write --threads=3 run"},
		{"stress-ng cpu, workers from the plan",
			StressNGCPUArgv(&vmbenchv1.StressNGCPUParams{Method: "fft", Duration: dur(time.Minute)}, 2, "/scratch/s.yaml"),
			"stress-ng --cpu 2 --cpu-method fft --timeout 60s --metrics-brief --yaml /scratch/s.yaml"},
		{"stress-ng vm, size passes through",
			mustVM(&vmbenchv1.StressNGVMParams{Bytes: "512M", Workers: 2, Duration: dur(30 * time.Second)}, 0),
			"stress-ng --vm 2 --vm-bytes 512M --timeout 30s --metrics-brief --yaml /scratch/s.yaml"},
		{"stress-ng vm, share of the plan's memory",
			mustVM(&vmbenchv1.StressNGVMParams{Bytes: "50%", Workers: 1}, 4<<30),
			"stress-ng --vm 1 --vm-bytes 2048M --timeout 60s --metrics-brief --yaml /scratch/s.yaml"},
		{"iozone all tests, direct I/O",
			IozoneArgv(&vmbenchv1.IozoneParams{FileSize: "512M", RecordSize: "64k", Tests: []vmbenchv1.IozoneTest{"random", "write", "read"}, DirectIO: true}, "/data"),
			"iozone -s 512M -r 64k -i 0 -i 1 -i 2 -I -e -R -f /data/iozone.tmp"},
		{"iozone auto mode with its defaults",
			IozoneArgv(&vmbenchv1.IozoneParams{Auto: true}, "/data"),
			"iozone -a -n 64k -g 512M -i 0 -i 1 -i 2 -e -R -f /data/iozone.tmp"},
		{"iozone auto mode, read only, direct I/O",
			IozoneArgv(&vmbenchv1.IozoneParams{Auto: true, MinFileSize: "1m", MaxFileSize: "4g", Tests: []vmbenchv1.IozoneTest{"read"}, DirectIO: true}, "/data"),
			"iozone -a -n 1m -g 4g -i 0 -i 1 -I -e -R -f /data/iozone.tmp"},
		{"iozone read needs write",
			IozoneArgv(&vmbenchv1.IozoneParams{FileSize: "1g", RecordSize: "1m", Tests: []vmbenchv1.IozoneTest{"read"}}, "/shared/r/node01"),
			"iozone -s 1g -r 1m -i 0 -i 1 -e -R -f /shared/r/node01/iozone.tmp"},
		{"fio defaults: bounded by size, without a runtime",
			FioArgv(&vmbenchv1.FioParams{RW: "randread", BlockSize: "4k", Size: "256m", IODepth: 16, IOEngine: "libaio", Direct: ptr(true), NumJobs: 1}, "/data"),
			"fio --name=vmbench --filename=/data/fio.dat --rw=randread --bs=4k --size=256m --iodepth=16 --ioengine=libaio --direct=1 --numjobs=1 --group_reporting --output-format=json"},
		{"fio with a runtime: time-based",
			FioArgv(&vmbenchv1.FioParams{RW: "randread", BlockSize: "4k", Size: "256m", IODepth: 16, IOEngine: "libaio", Direct: ptr(true), NumJobs: 1, Runtime: dur(30 * time.Second)}, "/data"),
			"fio --name=vmbench --filename=/data/fio.dat --rw=randread --bs=4k --size=256m --iodepth=16 --ioengine=libaio --direct=1 --numjobs=1 --runtime=30s --time_based --group_reporting --output-format=json"},
		{"fio with a fractional runtime: whole seconds, rounded up",
			FioArgv(&vmbenchv1.FioParams{Runtime: dur(1500 * time.Millisecond)}, "/data"),
			"fio --name=vmbench --filename=/data/fio.dat --rw=randread --bs=4k --size=256m --iodepth=16 --ioengine=libaio --direct=1 --numjobs=1 --runtime=2s --time_based --group_reporting --output-format=json"},
		{"fio zero values: the API's defaults, bounded by size",
			FioArgv(&vmbenchv1.FioParams{}, "/var/tmp/vmbench"),
			"fio --name=vmbench --filename=/var/tmp/vmbench/fio.dat --rw=randread --bs=4k --size=256m --iodepth=16 --ioengine=libaio --direct=1 --numjobs=1 --group_reporting --output-format=json"},
		{"fio buffered, several jobs",
			FioArgv(&vmbenchv1.FioParams{RW: "write", BlockSize: "1m", Size: "1g", IODepth: 4, IOEngine: "psync", Direct: ptr(false), NumJobs: 4, Runtime: dur(10 * time.Second)}, "/d"),
			"fio --name=vmbench --filename=/d/fio.dat --rw=write --bs=1m --size=1g --iodepth=4 --ioengine=psync --direct=0 --numjobs=4 --runtime=10s --time_based --group_reporting --output-format=json"},
		{"ping",
			PingArgv(&vmbenchv1.PingParams{Count: 5}, "10.0.0.2"),
			"ping -c 5 10.0.0.2"},
		{"iperf3 tcp client",
			Iperf3ClientArgv(&vmbenchv1.Iperf3Params{Port: 5201, Duration: dur(10 * time.Second), Parallel: 2, Protocol: "TCP"}, "10.0.0.3"),
			"iperf3 -c 10.0.0.3 -p 5201 -t 10 -i 1 -P 2 -J"},
		{"iperf3 udp client",
			Iperf3ClientArgv(&vmbenchv1.Iperf3Params{Port: 5301, Duration: dur(5 * time.Second), Parallel: 1, Protocol: "UDP"}, "node"),
			"iperf3 -c node -p 5301 -t 5 -i 1 -P 1 -u -b 0 -J"},
		{"iperf3 for ten minutes keeps one-second intervals",
			Iperf3ClientArgv(&vmbenchv1.Iperf3Params{Duration: dur(10 * time.Minute)}, "node"),
			"iperf3 -c node -p 5201 -t 600 -i 1 -P 1 -J"},
		{"iperf3 for longer takes longer intervals, at most 600 of them",
			Iperf3ClientArgv(&vmbenchv1.Iperf3Params{Duration: dur(time.Hour)}, "node"),
			"iperf3 -c node -p 5201 -t 3600 -i 6 -P 1 -J"},
		{"iperf3 one second over ten minutes",
			Iperf3ClientArgv(&vmbenchv1.Iperf3Params{Duration: dur(10*time.Minute + time.Second)}, "node"),
			"iperf3 -c node -p 5201 -t 601 -i 2 -P 1 -J"},
	} {
		if got := strings.Join(tc.got, " "); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestStressNGVMRejectsUnusableShares(t *testing.T) {
	for _, tc := range []struct {
		bytes string
		mem   int64
	}{{"50%", 0}, {"0%", 1 << 30}, {"150%", 1 << 30}, {"x%", 1 << 30}} {
		if _, err := StressNGVMArgv(&vmbenchv1.StressNGVMParams{Bytes: tc.bytes}, tc.mem, "f"); err == nil {
			t.Errorf("bytes %q with memory %d: no error", tc.bytes, tc.mem)
		}
	}
}
