package platform

import (
	"os"
	"os/exec"
	"testing"
)

// lookTool finds a program a test checks vmbench against. Where it is missing the test is skipped on
// a developer's machine, and fails where VMBENCH_REQUIRE_TOOLS is set (make test-unit sets it after
// hack/test-tools.sh installed the programs), so that CI never reports a skip as a pass.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("VMBENCH_REQUIRE_TOOLS") != "" {
		t.Fatalf("%s is not on PATH and VMBENCH_REQUIRE_TOOLS is set: run hack/test-tools.sh to install it", name)
	}
	t.Skipf("no %s here (hack/test-tools.sh installs it)", name)
	return ""
}
