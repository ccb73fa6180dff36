package runner

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/runplan"
)

func TestParseCPUSet(t *testing.T) {
	for file, want := range map[string]runplan.CPUSet{
		"cpuset/pinned-pod.txt":  {Allowed: "2-3", Online: 8},
		"cpuset/shared-pool.txt": {Allowed: "0-7", Online: 8},
		"cpuset/real.txt":        {Allowed: "0-1", Online: 2},
	} {
		got, err := ParseCPUSet([]byte(fixture(t, file)))
		if err != nil || got != want {
			t.Errorf("%s: got %+v, %v; want %+v", file, got, err, want)
		}
	}
	for name, in := range map[string]string{
		"empty":          "",
		"no allowed":     "0-7\n",
		"bad allowed":    "Cpus_allowed_list:\t3-1\n0-7\n",
		"no online":      "Cpus_allowed_list:\t0-1\n",
		"garbage online": "Cpus_allowed_list:\t0-1\ncat: /sys/devices/system/cpu/online: No such file\n",
	} {
		if _, err := ParseCPUSet([]byte(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestCPUSetCommandHere runs the command on this machine: whatever its CPUs, it must parse.
func TestCPUSetCommandHere(t *testing.T) {
	out, err := exec.Command(cpuSetCommand.Argv[0], cpuSetCommand.Argv[1:]...).Output()
	if err != nil {
		t.Skipf("cannot run %q here: %v", cpuSetCommand.Argv, err)
	}
	set, err := ParseCPUSet(out)
	if err != nil || set.Online < 1 {
		t.Errorf("%q: %+v, %v", out, set, err)
	}
}

func TestCountCPUs(t *testing.T) {
	for list, want := range map[string]int{"0": 1, "0-3": 4, "0-3,8,10-11": 7, " 2-3\n": 2} {
		if got, err := runplan.CountCPUs(list); err != nil || got != want {
			t.Errorf("%q: got %d, %v; want %d", list, got, err, want)
		}
	}
	for _, list := range []string{"", "a", "3-1", "1-", "-1", "0,,1", "1-2-3"} {
		if _, err := runplan.CountCPUs(list); err == nil {
			t.Errorf("%q: no error", list)
		}
	}
}

func TestRunReportsCPUSets(t *testing.T) {
	r, exec, msgs := testRunner(t)
	r.ReadCPUSets = true
	exec.respond = func(node string, argv []string) (reply, bool) {
		if argv[0] != "sh" || !strings.Contains(argv[2], "Cpus_allowed_list") {
			return reply{}, false
		}
		switch node {
		case "master":
			return reply{stdout: fixture(t, "cpuset/pinned-pod.txt")}, true
		case "node01":
			return reply{stdout: fixture(t, "cpuset/shared-pool.txt")}, true
		}
		return reply{stderr: "grep: /proc/self/status: Permission denied", err: errors.New("exit status 1")}, true
	}
	plan := testPlan(t, vmbenchv1.Benchmark{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU, SysbenchCPU: &vmbenchv1.SysbenchCPUParams{}, Timeout: dur(time.Minute)})
	if err := r.Run(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	started := (*msgs)[0]
	want := map[string]runplan.CPUSet{"master": {Allowed: "2-3", Online: 8}, "node01": {Allowed: "0-7", Online: 8}}
	if len(started.CPUSets) != len(want) || started.CPUSets["master"] != want["master"] || started.CPUSets["node01"] != want["node01"] {
		t.Errorf("started with %+v, want %+v (node02 could not tell, so it is left out)", started.CPUSets, want)
	}
}
