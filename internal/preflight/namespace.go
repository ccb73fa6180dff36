package preflight

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/vmbench/vmbench/internal/platform"
)

// CheckNamespace says whether the namespace exists. nsErr is the error of reading it.
func CheckNamespace(needs Needs, ns *corev1.Namespace, nsErr error) Check {
	const name = "namespace"
	switch {
	case apierrors.IsNotFound(nsErr):
		return fail(name, fmt.Sprintf("namespace %q not found", needs.Namespace), "kubectl create namespace "+needs.Namespace+", or name another with -n")
	case nsErr != nil:
		return warn(name, fmt.Sprintf("cannot read namespace %q: %s", needs.Namespace, firstLine(nsErr)),
			"the checks of its Pod Security level are skipped; grant get on namespaces to see them")
	case ns.Status.Phase == corev1.NamespaceTerminating:
		return fail(name, fmt.Sprintf("namespace %q is being deleted", needs.Namespace), "use another namespace")
	}
	return pass(name, fmt.Sprintf("namespace %q exists", needs.Namespace))
}

// CheckPodSecurity evaluates the pods vmbench builds (MPIJob launchers and workers), and for VM
// platforms KubeVirt's virt-launcher pods as the cluster's KubeVirt configures them (launcher), against
// the namespace's Pod Security enforce level with the Pod Security admission's own checks: the
// controller fails a VM run at once where virt-launcher would be refused.
func CheckPodSecurity(needs Needs, ns *corev1.Namespace, launcher platform.VirtLauncher) Check {
	const name = "pod-security"
	if ns == nil {
		return skip(name, "the namespace could not be read")
	}
	policy, errs := psaapi.PolicyToEvaluate(ns.Labels, psaapi.Policy{
		Enforce: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
	})
	enforce := policy.Enforce
	label, labelled := ns.Labels[psaapi.EnforceLevelLabel]
	if !labelled {
		return pass(name, fmt.Sprintf("namespace %q has no %s label: the cluster's default level applies (privileged, unless the API server's admission configuration sets another)",
			needs.Namespace, psaapi.EnforceLevelLabel))
	}
	if len(errs) > 0 {
		return fail(name, fmt.Sprintf("the namespace's Pod Security labels do not parse (%s), so the API server enforces restricted", errs.ToAggregate().Error()),
			"fix the labels pod-security.kubernetes.io/enforce and enforce-version")
	}
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		return skip(name, "cannot evaluate Pod Security: "+err.Error())
	}
	var refused []string
	vms := false
	for _, p := range needs.Platforms {
		for _, tmpl := range p.Pods {
			result := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(enforce, &tmpl.ObjectMeta, &tmpl.Spec))
			if !result.Allowed {
				refused = append(refused, fmt.Sprintf("platform %s (%s pods): %s", p.Platform.Name, p.Platform.Type, result.ForbiddenDetail()))
			}
		}
		if p.VM() {
			meta, spec := launcher.Pod()
			result := psapolicy.AggregateCheckResults(evaluator.EvaluatePod(enforce, &meta, &spec))
			if !result.Allowed {
				vms = true
				refused = append(refused, fmt.Sprintf("platform %s (KubeVirt's virt-launcher pods): %s", p.Platform.Name, result.ForbiddenDetail()))
			}
		}
	}
	level := fmt.Sprintf("%s=%s", psaapi.EnforceLevelLabel, label)
	if v, ok := ns.Labels[psaapi.EnforceVersionLabel]; ok {
		level += fmt.Sprintf(", %s=%s", psaapi.EnforceVersionLabel, v)
	}
	if len(refused) > 0 {
		action := "run the suite in a namespace whose enforce level is looser (privileged for Host platforms), or drop those platforms"
		if vms {
			action = "run the suite in a namespace whose enforce level is looser (baseline for VMs, privileged for Host platforms and " +
				"with KubeVirt's Root feature gate), or drop those platforms; VM runs here fail at once (NamespaceRefusesVMs)"
		}
		return Check{Name: name, Result: needs.severity(),
			Detail: fmt.Sprintf("%s refuses the runner's pods: %s", level, strings.Join(dedupe(refused), "; ")), Action: action}
	}
	if needs.UsesVMI() {
		return pass(name, level+" admits the pods vmbench builds and KubeVirt's virt-launcher pods")
	}
	return pass(name, level+" admits the pods vmbench builds")
}

func dedupe(items []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
