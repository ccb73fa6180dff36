//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/failure"
)

// managerArgs replaces flags of the manager's container for the rest of a test, and puts the original
// Deployment back afterwards; either way it waits until the manager runs with its new arguments.
func (e *env) managerArgs(flags map[string]string) {
	deployments := &appsv1.DeploymentList{}
	e.g.Expect(k8s.List(e.ctx, deployments, client.InNamespace("vmbench-system"),
		client.MatchingLabels{"app.kubernetes.io/name": "vmbench"})).To(Succeed())
	e.g.Expect(deployments.Items).To(HaveLen(1), "the manager's Deployment")
	key := client.ObjectKeyFromObject(&deployments.Items[0])
	original := append([]string(nil), deployments.Items[0].Spec.Template.Spec.Containers[0].Args...)
	set := func(args []string) {
		e.g.Eventually(func() error {
			d := &appsv1.Deployment{}
			if err := k8s.Get(e.ctx, key, d); err != nil {
				return err
			}
			d.Spec.Template.Spec.Containers[0].Args = args
			return k8s.Update(e.ctx, d)
		}, time.Minute, time.Second).Should(Succeed())
		e.waitRolledOut(key)
	}
	changed := make([]string, 0, len(original))
	replaced := map[string]bool{}
	for _, arg := range original {
		name, _, _ := strings.Cut(arg, "=")
		if v, ok := flags[name]; ok {
			arg = name + "=" + v
			replaced[name] = true
		}
		changed = append(changed, arg)
	}
	for name := range flags {
		e.g.Expect(replaced).To(HaveKey(name), "the manager's Deployment does not pass %s: reinstall the chart of this checkout (hack/install.sh)", name)
	}
	e.t.Cleanup(func() { set(original) })
	set(changed)
}

// waitRolledOut waits until the Deployment's new pods are the only ones and are available.
func (e *env) waitRolledOut(key client.ObjectKey) {
	e.g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(k8s.Get(e.ctx, key, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.UpdatedReplicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.Replicas).To(Equal(*d.Spec.Replicas))
		g.Expect(d.Status.AvailableReplicas).To(Equal(*d.Spec.Replicas))
	}, 3*time.Minute, 2*time.Second).Should(Succeed())
}

// TestStartupFailuresNameTheirCause: a runner image that no registry has, and a nodeSelector that no
// node matches, each fail their run at the manager's --container-startup with the cause Kubernetes
// gave, and say it in the Progressing condition before that. Container platform, one tiny benchmark.
func TestStartupFailuresNameTheirCause(t *testing.T) {
	e := newEnv(t, podSecurityRestricted)
	const image = "vmbench/runner:does-not-exist"
	// Both suites are in the run queue's slots at once (two slots, both for the test's namespace), so that both
	// fail within one startup limit. Kubernetes gave both causes within 2-4 s of the runs' start in
	// the kind e2e (2026-11-30); the limit of 45 s leaves the image pull several back-offs to reach
	// ImagePullBackOff, which the failure names.
	e.managerArgs(map[string]string{"--runner-image": image, "--container-startup": "45s", "--max-active-runs": "2",
		"--max-active-runs-per-namespace": "2"})

	tiny := func(name string) *vmbenchv1.BenchmarkSuite {
		s := containerOnly(e.sample("suite-quick.yaml", name))
		s.Spec.Repetitions = 1
		s.Spec.Benchmarks = []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}
		return s
	}
	noImage := tiny("noimage")
	nowhere := tiny("nowhere")
	nowhere.Spec.Placement.NodeSelector = map[string]vmbenchv1.LabelValue{"vmbench.io/no-such-node": "true"}
	e.g.Expect(k8s.Create(e.ctx, noImage)).To(Succeed())
	e.g.Expect(k8s.Create(e.ctx, nowhere)).To(Succeed())

	// Before the limit: the Progressing condition names the cause. Both suites are polled together,
	// and each counts once it showed its reason, so that neither waits for the other's check: the
	// condition changes when the limit fails the run.
	reasons := map[string]string{"noimage": failure.ReasonImagePull, "nowhere": failure.ReasonUnschedulable}
	shown, last := map[string]time.Duration{}, map[string]string{}
	created := time.Now()
	e.g.Eventually(func(g Gomega) {
		for name, reason := range reasons {
			if _, ok := shown[name]; ok {
				continue
			}
			s := &vmbenchv1.BenchmarkSuite{}
			g.Expect(k8s.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, s)).To(Succeed())
			c := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionProgressing)
			if c == nil {
				continue
			}
			last[name] = c.Reason + ": " + c.Message
			if c.Reason == reason {
				shown[name] = time.Since(created).Round(time.Second)
			}
		}
		g.Expect(shown).To(HaveLen(len(reasons)), "want the reasons %v; Progressing was last %v", reasons, last)
	}, 90*time.Second, 2*time.Second).Should(Succeed())
	e.t.Logf("the Progressing condition named the cause after %v", shown)

	// At the limit: the run fails with that cause, and so does the suite (its only run).
	for name, want := range map[string][]string{
		"noimage": {"StartupTimeout: the run's pods did not start within 45s", "ImagePullBackOff", image},
		"nowhere": {"StartupTimeout", "Unschedulable", "cannot be scheduled", "node affinity/selector"},
	} {
		s := e.waitEnded(name, 4*time.Minute)
		failed := meta.FindStatusCondition(s.Status.Conditions, vmbenchv1.ConditionFailed)
		e.g.Expect(failed).NotTo(BeNil())
		e.g.Expect(failed.Reason).To(Equal(vmbenchv1.ReasonRunFailed), name)
		for _, w := range want {
			e.g.Expect(failed.Message).To(ContainSubstring(w), name)
		}
	}
}
