package integration

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

const privilegedLabel = vmbenchv1.LabelPrivilegedPlatforms

// renderPrivilegedPlatformsPolicy renders the chart's admission policy and binding with helm (the
// one of hack/helm.sh, as the chart tests use), with the given RuntimeClasses allowed.
func renderPrivilegedPlatformsPolicy(t *testing.T, runtimeClasses string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	out := helmTemplate(t, "vmbench", "vmbench-system", "--show-only", "templates/admission-policy.yaml",
		"--set", "allowedRuntimeClasses={"+runtimeClasses+"}")
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			err = yaml.UnmarshalStrict(doc, policy)
		case "ValidatingAdmissionPolicyBinding":
			err = yaml.UnmarshalStrict(doc, binding)
		case "":
			continue
		default:
			t.Fatalf("the policy template renders a %s", meta.Kind)
		}
		if err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
	}
	if policy.Name == "" || binding.Spec.PolicyName != policy.Name {
		t.Fatalf("rendered policy %q and binding for %q:\n%s", policy.Name, binding.Spec.PolicyName, out)
	}
	return policy, binding
}

// The chart's ValidatingAdmissionPolicy, as the API server enforces it: Host and RuntimeClass
// platforms are refused with what an admin must do, unless the namespace carries the admin's
// label, and a RuntimeClass must also be on the chart's allow-list.
func TestPrivilegedPlatformsAreAnAdminsChoice(t *testing.T) {
	h := newHarness(t)
	plain := h.ns
	allowedNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-privileged-", Labels: map[string]string{privilegedLabel: "true"}}}
	h.g.Expect(k8s.Create(h.ctx, allowedNS)).To(Succeed())
	allowed := allowedNS.Name

	policy, binding := renderPrivilegedPlatformsPolicy(t, "kata")
	h.g.Expect(k8s.Create(h.ctx, policy)).To(Succeed())
	h.g.Expect(k8s.Create(h.ctx, binding)).To(Succeed())
	t.Cleanup(func() {
		_ = k8s.Delete(context.Background(), binding)
		_ = k8s.Delete(context.Background(), policy)
	})

	suite := func(ns string, platforms ...vmbenchv1.Platform) *vmbenchv1.BenchmarkSuite {
		s := h.suite("priv", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU))
		s.Namespace = ns
		s.Spec.Platforms = platforms
		s.Spec.Baseline = platforms[0].Name
		return s
	}
	container := vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer}
	host := vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}
	withClass := func(class string) vmbenchv1.Platform {
		return vmbenchv1.Platform{Name: "sandbox", Type: vmbenchv1.PlatformContainer, RuntimeClassName: ptr.To(class)}
	}
	dryRun := func(s *vmbenchv1.BenchmarkSuite) error { return k8s.Create(h.ctx, s, client.DryRunAll) }

	// A new policy takes a moment to be enforced.
	h.g.Eventually(func() error { return dryRun(suite(plain, container, host)) }, timeout, interval).Should(HaveOccurred())

	err := dryRun(suite(plain, container, host))
	h.g.Expect(err).To(MatchError(ContainSubstring("platforms of type Host run pods on the network of their nodes (hostNetwork)")))
	h.g.Expect(err).To(MatchError(ContainSubstring("ask an admin to run: kubectl label namespace " + plain + " " + privilegedLabel + "=true")))
	h.g.Expect(dryRun(suite(allowed, container, host))).To(Succeed(), "Host in a namespace an admin labelled")

	err = dryRun(suite(plain, container, withClass("kata")))
	h.g.Expect(err).To(MatchError(ContainSubstring("a runtimeClassName is allowed only in namespaces a cluster admin labelled " + privilegedLabel + "=true")))
	h.g.Expect(err).To(MatchError(ContainSubstring("allowedRuntimeClasses (now: kata)")))
	h.g.Expect(dryRun(suite(allowed, container, withClass("kata")))).To(Succeed(), "an allowed RuntimeClass in a labelled namespace")
	h.g.Expect(dryRun(suite(allowed, container, withClass("runc-debug")))).To(MatchError(ContainSubstring(
		"runtimeClassName runc-debug is not among the RuntimeClasses a cluster admin allowed for vmbench (now: kata); an admin adds it to the chart value allowedRuntimeClasses")))

	// A toleration of the control plane's taint is the admin's choice too (audit N6): it would put
	// the suite beside the API server and etcd. Another toleration needs nothing.
	tolerating := func(ns, key string) *vmbenchv1.BenchmarkSuite {
		s := suite(ns, container)
		s.Spec.Placement.Tolerations = []vmbenchv1.Toleration{{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
		return s
	}
	for _, key := range []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"} {
		h.g.Expect(dryRun(tolerating(plain, key))).To(MatchError(ContainSubstring("a toleration of " + key + " lets the suite run on control-plane nodes")))
		h.g.Expect(dryRun(tolerating(plain, key))).To(MatchError(ContainSubstring("or remove the toleration from spec.placement.tolerations")))
		h.g.Expect(dryRun(tolerating(allowed, key))).To(Succeed(), "%s in a namespace an admin labelled", key)
	}
	h.g.Expect(dryRun(tolerating(plain, "dedicated"))).To(Succeed(), "a toleration of another taint")
	untolerated := tolerating(plain, "dedicated")
	untolerated.Name = "tolerates"
	h.g.Expect(k8s.Create(h.ctx, untolerated)).To(Succeed())
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(untolerated), untolerated)).To(Succeed())
	untolerated.Spec.Placement.Tolerations[0].Key = "node-role.kubernetes.io/control-plane"
	h.g.Expect(k8s.Update(h.ctx, untolerated, client.DryRunAll)).To(MatchError(ContainSubstring("lets the suite run on control-plane nodes")),
		"a toleration added to a suite later")

	// Unprivileged platforms need nothing.
	h.g.Expect(dryRun(suite(plain, container, vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM}))).To(Succeed())
	h.g.Expect(dryRun(h.suite("defaults", 1, bench("cpu", vmbenchv1.BenchmarkSysbenchCPU)))).To(Succeed())

	// A suite admitted while its namespace allowed Host keeps its other updates after the label is
	// gone; a change to its platforms is judged again.
	admitted := suite(allowed, container, host)
	h.g.Expect(k8s.Create(h.ctx, admitted)).To(Succeed())
	h.g.Expect(k8s.Get(h.ctx, client.ObjectKeyFromObject(allowedNS), allowedNS)).To(Succeed())
	delete(allowedNS.Labels, privilegedLabel)
	h.g.Expect(k8s.Update(h.ctx, allowedNS)).To(Succeed())
	h.g.Eventually(func() error {
		s := &vmbenchv1.BenchmarkSuite{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(admitted), s); err != nil {
			return err
		}
		s.Spec.Platforms = append(s.Spec.Platforms, vmbenchv1.Platform{Name: "host2", Type: vmbenchv1.PlatformHost})
		return k8s.Update(h.ctx, s, client.DryRunAll)
	}, timeout, interval).Should(MatchError(ContainSubstring("platforms of type Host")), "the namespace lost the label")
	h.g.Eventually(func() error {
		s := &vmbenchv1.BenchmarkSuite{}
		if err := k8s.Get(h.ctx, client.ObjectKeyFromObject(admitted), s); err != nil {
			return err
		}
		s.Labels = map[string]string{"team": "perf"}
		return k8s.Update(h.ctx, s)
	}, timeout, interval).Should(Succeed(), "other updates of an admitted suite")
}

// helmTemplate renders the chart with helm (the one of hack/helm.sh, as the chart tests use) as
// release `release` in namespace ns, with the given extra arguments.
func helmTemplate(t *testing.T, release, ns string, args ...string) []byte {
	t.Helper()
	root := filepath.Join("..", "..")
	var stderr bytes.Buffer
	find := exec.Command(filepath.Join(root, "hack", "helm.sh"))
	find.Stderr = &stderr
	helm, err := find.Output()
	if err != nil {
		t.Fatalf("hack/helm.sh: %v\n%s", err, stderr.String())
	}
	stderr.Reset()
	render := exec.Command(strings.TrimSpace(string(helm)), append([]string{"template", release, filepath.Join(root, "charts", "vmbench"),
		"--namespace", ns}, args...)...)
	render.Env = append(render.Environ(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	render.Stderr = &stderr
	out, err := render.Output()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr.String())
	}
	return out
}
