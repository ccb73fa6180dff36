package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary doubles as the runner command, so that exit codes are checked as a container
// or cloud-init would see them.
func TestMain(m *testing.M) {
	if os.Getenv("VMBENCH_RUNNER_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func runMain(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{"VMBENCH_RUNNER_TEST_MAIN=1", "VMBENCH_TOKEN="}, env...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatal(err)
	return 0, "", ""
}

func TestVersion(t *testing.T) {
	code, stdout, _ := runMain(t, nil, "version")
	if code != 0 || !strings.HasPrefix(stdout, "vmbench runner ") {
		t.Errorf("exit %d, stdout %q", code, stdout)
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	noToken := filepath.Join(dir, "token")
	code, _, stderr := runMain(t, nil, "run", "--plan", filepath.Join(dir, "plan.json"), "--token-file", noToken)
	if code != 2 || !strings.Contains(stderr, "no key") {
		t.Errorf("without a key: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := runMain(t, []string{"VMBENCH_TOKEN=k"}, "run", "--plan", filepath.Join(dir, "plan.json"))
	if code != 1 || !strings.Contains(stdout, "VMBENCH1 ") {
		t.Errorf("without a plan: exit %d, stdout %q", code, stdout)
	}
}
