//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/vmbench/vmbench/internal/preflight"
)

// preflight runs `vmbench preflight` in-process against the kind cluster.
func (e *env) preflight(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	args = append(args, "--kubeconfig", kubeconfigPath)
	code = preflight.Command(e.ctx, "vmbench", args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestPreflightPassesTheQuickSampleAndFailsASuiteThatCannotFit runs the preflight on the quick sample
// in a fresh namespace (every check passes, or warns: emulated VMs are a warning here; the image
// check pulls the images the nodes already hold), then on a copy asking for 64 CPUs per node, which
// must fail naming every node's figure.
func TestPreflightPassesTheQuickSampleAndFailsASuiteThatCannotFit(t *testing.T) {
	e := newEnv(t)
	emulates := e.clusterEmulates()
	sample := filepath.Join("..", "..", "config", "samples", "suite-quick.yaml")

	start := time.Now()
	code, out, errOut := e.preflight("-f", sample, "-n", e.ns, "-o", "json", "--image-timeout", "45s")
	t.Logf("preflight of the quick sample: exit %d in %s\n%s%s", code, time.Since(start).Round(time.Second), out, errOut)
	e.g.Expect(code).To(Equal(preflight.ExitOK), "stderr: %s", errOut)
	var report struct {
		Failed bool
		Checks []preflight.Check
	}
	e.g.Expect(json.Unmarshal([]byte(out), &report)).To(Succeed())
	e.g.Expect(report.Failed).To(BeFalse())
	results := map[string]preflight.Result{}
	for _, c := range report.Checks {
		results[c.Name] = c.Result
		e.g.Expect(c.Result).To(BeElementOf(preflight.Pass, preflight.Warn, preflight.Skip), "%s: %s", c.Name, c.Detail)
	}
	for _, name := range []string{"suite", "api/benchmarksuites", "api/mpijobs", "api/virtualmachineinstances", "manager",
		"fit/container", "fit/vm", "namespace", "pod-security", "quota", "limitrange", "image/runner", "image/vm-disk"} {
		e.g.Expect(results).To(HaveKeyWithValue(name, preflight.Pass), "check %s", name)
	}
	if emulates {
		e.g.Expect(results).To(HaveKeyWithValue("kvm", preflight.Warn))
	} else {
		e.g.Expect(results).To(HaveKeyWithValue("kvm", preflight.Pass))
	}
	// The pull pods are gone.
	e.g.Eventually(func(g Gomega) {
		pods, err := clientset.CoreV1().Pods(e.ns).List(e.ctx, metav1.ListOptions{LabelSelector: preflight.LabelComponent + "=" + preflight.ComponentValue})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(pods.Items).To(BeEmpty())
	}, time.Minute, time.Second).Should(Succeed())

	// 64 CPUs per node: no node has them, and the message names every usable node's figure.
	raw, err := os.ReadFile(sample)
	e.g.Expect(err).NotTo(HaveOccurred())
	big := strings.Replace(strings.Replace(string(raw), "    cpu: 1\n", "    cpu: 64\n", 1), "cpuRequest: 100m", `cpuRequest: "64"`, 1)
	e.g.Expect(big).To(ContainSubstring("cpu: 64\n"))
	e.g.Expect(big).To(ContainSubstring(`cpuRequest: "64"`))
	path := filepath.Join(t.TempDir(), "suite-64-cpus.yaml")
	e.g.Expect(os.WriteFile(path, []byte(big), 0o600)).To(Succeed())

	start = time.Now()
	code, out, errOut = e.preflight("-f", path, "-n", e.ns, "--skip-image-check")
	t.Logf("preflight of 64 CPUs per node: exit %d in %s\n%s%s", code, time.Since(start).Round(time.Second), out, errOut)
	e.g.Expect(code).To(Equal(preflight.ExitFailed))
	e.g.Expect(out).To(ContainSubstring("no node has 64 CPUs allocatable: "))
	nodes, err := clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	e.g.Expect(err).NotTo(HaveOccurred())
	for _, n := range nodes.Items {
		if untainted(n) {
			cpu := n.Status.Allocatable[corev1.ResourceCPU]
			e.g.Expect(out).To(ContainSubstring("node %s %s", n.Name, cpu.String()))
		}
	}
}

func untainted(n corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	return !n.Spec.Unschedulable
}
