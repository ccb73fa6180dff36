package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// Privileged platforms are an admin's choice (docs/security-manager.md): the admission policy
// refuses a suite that asks for a platform of type Host, a runtimeClassName or a toleration of the
// control plane's taint unless its namespace carries vmbench.io/privileged-platforms=true. The policy
// judges a suite only when it is created or its platforms change, and may be off; so before a run
// that needs the permission creates anything, the controller reads the namespace around the cache
// and starts the run only if the label is still there. Otherwise the run fails to start, with what
// an admin must do, and the suite's other runs go on.

// ReasonPrivilegedPlatformNotAllowed starts the message of a run refused for want of the label.
const ReasonPrivilegedPlatformNotAllowed = "PrivilegedPlatformNotAllowed"

// controlPlaneTaints are the taints whose tolerations put a suite beside the API server and etcd,
// as the admission policy lists them.
var controlPlaneTaints = []string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

// privilegedAsks names what of the run's platform and the suite's placement needs the namespace's
// permission, or nothing.
func privilegedAsks(suite *vmbenchv1.BenchmarkSuite, p vmbenchv1.Platform) []string {
	var asks []string
	if p.Type == vmbenchv1.PlatformHost {
		asks = append(asks, fmt.Sprintf("platform %s is of type Host (its pods run on the network of their nodes, hostNetwork)", p.Name))
	}
	if p.RuntimeClassName != nil {
		asks = append(asks, fmt.Sprintf("platform %s has runtimeClassName %s", p.Name, *p.RuntimeClassName))
	}
	for _, t := range suite.Spec.Placement.Tolerations {
		if slices.Contains(controlPlaneTaints, t.Key) {
			asks = append(asks, fmt.Sprintf("spec.placement.tolerations tolerates %s (control-plane nodes, beside the API server and etcd)", t.Key))
		}
	}
	return asks
}

// privilegedRefusal says why the run may not start in its namespace, or nil when it needs no
// permission or the namespace gives it.
func (r *SuiteReconciler) privilegedRefusal(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, p vmbenchv1.Platform) (*conditions.Cause, error) {
	asks := privilegedAsks(suite, p)
	if len(asks) == 0 {
		return nil, nil
	}
	label := vmbenchv1.LabelPrivilegedPlatforms + "=true"
	ns := &corev1.Namespace{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Name: suite.Namespace}, ns)
	switch {
	case apierrors.IsForbidden(err):
		// Without the namespace the permission cannot be shown: the run does not start.
		return &conditions.Cause{Reason: ReasonPrivilegedPlatformNotAllowed, Message: fmt.Sprintf(
			"%s, which needs namespace %s to carry the label %s, and vmbench may not read the namespace to check it (%s); "+
				"the run is not started: grant vmbench's service account get on namespaces (the chart's RBAC does)",
			strings.Join(asks, "; "), suite.Namespace, label, conditions.OneLineString(err.Error()))}, nil
	case err != nil:
		return nil, fmt.Errorf("reading namespace %s for its label %s: %w", suite.Namespace, vmbenchv1.LabelPrivilegedPlatforms, err)
	}
	if ns.Labels[vmbenchv1.LabelPrivilegedPlatforms] == "true" {
		return nil, nil
	}
	return &conditions.Cause{Reason: ReasonPrivilegedPlatformNotAllowed, Message: fmt.Sprintf(
		"%s, which is allowed only in namespaces a cluster admin labelled %s, and namespace %s does not carry that label now "+
			"(it was removed after the suite was admitted, or the admission policy is off); the run is not started and the suite's other runs go on: "+
			"ask a cluster admin to run: kubectl label namespace %s %s, or change the platform (type Container, no runtimeClassName, "+
			"no toleration of the control plane) in a new suite", strings.Join(asks, "; "), label, suite.Namespace, suite.Namespace, label)}, nil
}
