package suite

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/platform"
)

// A VM's pod is KubeVirt's virt-launcher, and Pod Security admission judges it against the suite's
// namespace. Where the namespace refuses it, virt-controller retries for ever and the run's VMs never
// start; so before a VM run creates anything, the controller judges virt-launcher's pod, as KubeVirt
// renders it under the cluster's KubeVirt CR (platform.VirtLauncher), with Pod Security's own checks
// against the namespace's enforce level, and fails the run at once if it would be refused. A
// namespace without the enforce label gets the API server's default level, which the controller
// cannot read: it assumes Kubernetes' default, privileged. Should the API server refuse
// virt-launcher anyway, virt-controller's FailedCreate event fails the run (failure_policy.go).

// psaLevels are Pod Security's levels, strictest first.
var psaLevels = []psaapi.Level{psaapi.LevelRestricted, psaapi.LevelBaseline, psaapi.LevelPrivileged}

// vmNamespaceRefusal says why the namespace's Pod Security enforce level refuses virt-launcher pods
// and what to do, or nil when it admits them.
func vmNamespaceRefusal(ns *corev1.Namespace, launcher platform.VirtLauncher) (*conditions.Cause, error) {
	policy, labelErrs := psaapi.PolicyToEvaluate(ns.Labels, psaapi.Policy{
		Enforce: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()},
	})
	evaluator, err := psapolicy.NewEvaluator(psapolicy.DefaultChecks(), nil)
	if err != nil {
		return nil, fmt.Errorf("loading Pod Security's checks: %w", err)
	}
	admits := func(lv psaapi.LevelVersion, l platform.VirtLauncher) psapolicy.AggregateCheckResult {
		meta, spec := l.Pod()
		return psapolicy.AggregateCheckResults(evaluator.EvaluatePod(lv, &meta, &spec))
	}
	result := admits(policy.Enforce, launcher)
	if result.Allowed {
		return nil, nil
	}

	enforced := fmt.Sprintf("%s=%s", psaapi.EnforceLevelLabel, ns.Labels[psaapi.EnforceLevelLabel])
	if v, ok := ns.Labels[psaapi.EnforceVersionLabel]; ok {
		enforced += fmt.Sprintf(", %s=%s", psaapi.EnforceVersionLabel, v)
	}
	if len(labelErrs) > 0 {
		enforced = fmt.Sprintf("labels that do not parse (%s), for which the API server enforces restricted", labelErrs.ToAggregate())
	}
	needs := psaapi.LevelPrivileged
	for _, level := range psaLevels {
		if admits(psaapi.LevelVersion{Level: level, Version: psaapi.LatestVersion()}, launcher).Allowed {
			needs = level
			break
		}
	}
	why := ""
	if launcher.Root {
		why = " (KubeVirt's Root feature gate runs it as root, with SYS_NICE)"
	}
	todo := []string{fmt.Sprintf("label the namespace %s=%s", psaapi.EnforceLevelLabel, needs)}
	if needs == psaapi.LevelPrivileged && !launcher.Root {
		todo[0] += " (its pod needs what no stricter level allows)"
	}
	withSeccomp := launcher
	withSeccomp.Seccomp = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	if launcher.Seccomp == nil && admits(policy.Enforce, withSeccomp).Allowed {
		todo = append(todo, "have KubeVirt give VMs a seccomp profile, with which virt-launcher passes this level "+
			"(KubeVirt CR: spec.configuration.seccompConfiguration.virtualMachineInstanceProfile.customProfile.runtimeDefaultProfile: true)")
	}
	nonRoot := launcher
	nonRoot.Root = false
	if launcher.Root && admits(policy.Enforce, nonRoot).Allowed {
		todo = append(todo, "turn KubeVirt's Root feature gate off")
	}
	todo = append(todo, "run the suite in a namespace that admits virt-launcher")
	return &conditions.Cause{Reason: vmbenchv1.ReasonNamespaceRefusesVMs, Message: fmt.Sprintf(
		"namespace %s enforces Pod Security %s (%s), which refuses the virt-launcher pod that KubeVirt makes for every VM: %s. "+
			"virt-launcher needs %s%s: %s", ns.Name, policy.Enforce, enforced, result.ForbiddenDetail(), needs, why, orList(todo))}, nil
}

// orList joins alternatives: "a, b, or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + ", or " + items[len(items)-1]
}

// vmNamespaceCheck judges the suite's namespace, read around the cache (readNamespace, ns or the
// read's error), for virt-launcher. A manager that may not read namespaces (an older chart's RBAC)
// does not check, and says so in its log: virt-controller's refusal still fails the run.
func vmNamespaceCheck(ctx context.Context, namespace string, ns *corev1.Namespace, readErr error, launcher platform.VirtLauncher) (*conditions.Cause, error) {
	switch {
	case apierrors.IsForbidden(readErr):
		log.FromContext(ctx).Info("cannot read the namespace to check that it admits virt-launcher pods; grant get on namespaces",
			"namespace", namespace, "error", readErr.Error())
		return nil, nil
	case readErr != nil:
		return nil, fmt.Errorf("reading namespace %s for its Pod Security level: %w", namespace, readErr)
	}
	return vmNamespaceRefusal(ns, launcher)
}

// readNamespace reads a namespace around the cache.
func (r *SuiteReconciler) readNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	ns := &corev1.Namespace{}
	if err := r.APIReader.Get(ctx, client.ObjectKey{Name: name}, ns); err != nil {
		return nil, err
	}
	return ns, nil
}
