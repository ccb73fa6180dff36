package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The run queue's limits are chart values that become the manager's flags.
func TestQueueValuesBecomeManagerFlags(t *testing.T) {
	_, c := manager(t, render(t))
	for _, want := range []string{"--max-active-runs-per-namespace=1", "--max-suite-duration=24h"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("defaults: no %s in %v", want, c.Args)
		}
	}
	_, c = manager(t, render(t, "--set", "maxActiveRunsPerNamespace=2", "--set", "maxSuiteDuration=72h"))
	for _, want := range []string{"--max-active-runs-per-namespace=2", "--max-suite-duration=72h"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("set: no %s in %v", want, c.Args)
		}
	}
	for _, bad := range [][]string{{"--set", "maxActiveRunsPerNamespace=-1"}, {"--set", "maxSuiteDuration=a day"}} {
		if _, stderr, err := helm(t, append([]string{"template", release, "charts/vmbench", "--namespace", namespace}, bad...)...); err == nil {
			t.Errorf("%v renders, want the schema to refuse it", bad)
		} else if !strings.Contains(stderr, strings.Split(strings.TrimPrefix(bad[1], "--set "), "=")[0]) {
			t.Errorf("%v: the refusal does not name the value:\n%s", bad, stderr)
		}
	}
}

// The queue's Leases: a Role in the release namespace, the same as config/rbac's, in the
// cluster-wide and the namespaced install alike; leases only, no watch (they are read around the
// cache) and no update (patch marks one requeued).
func TestQueueRoleIsNamespacedLeases(t *testing.T) {
	var want rbacv1.Role
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", "queue_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := bytes.Cut(raw, []byte("\n---\n"))
	if err := yaml.UnmarshalStrict(doc, &want); err != nil || want.Kind != "Role" {
		t.Fatalf("config/rbac/queue_role.yaml does not start with the Role (%v)", err)
	}
	if diff := cmp.Diff([]rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
		Verbs: []string{"get", "list", "create", "patch", "delete"}}}, want.Rules); diff != "" {
		t.Errorf("config/rbac queue rules (-want +got):\n%s", diff)
	}
	for _, args := range [][]string{nil, {"--set", "watchNamespaces={team-a,team-b}"}, {"--set", "leaderElection=false"}} {
		objs := render(t, args...)
		role := &rbacv1.Role{}
		objs.get(t, "Role", "vmbench-queue", role)
		if role.Namespace != namespace {
			t.Errorf("%v: Role namespace %q, want the release namespace %q", args, role.Namespace, namespace)
		}
		if diff := cmp.Diff(want.Rules, role.Rules); diff != "" {
			t.Errorf("%v: queue rules differ from config/rbac (-config +chart):\n%s", args, diff)
		}
		binding := &rbacv1.RoleBinding{}
		objs.get(t, "RoleBinding", "vmbench-queue", binding)
		if binding.Namespace != namespace || binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
			t.Errorf("%v: RoleBinding %s/%s refers to %+v", args, binding.Namespace, binding.Name, binding.RoleRef)
		}
		expectBoundToManager(t, objs, binding.Subjects)
	}
}

// The edit and admin roles get suites but not their status; view reads them.
func TestAggregatedRolesGrantNoStatus(t *testing.T) {
	objs := render(t)
	granted := map[string][]string{}
	for _, name := range []string{"vmbench-suites-edit", "vmbench-suites-view"} {
		role := &rbacv1.ClusterRole{}
		objs.get(t, "ClusterRole", name, role)
		for _, r := range role.Rules {
			for _, res := range r.Resources {
				if strings.Contains(res, "/") {
					t.Errorf("%s grants %s", name, res)
				}
			}
		}
		for label := range role.Labels {
			if agg, ok := strings.CutPrefix(label, "rbac.authorization.k8s.io/aggregate-to-"); ok && role.Labels[label] == "true" {
				for _, r := range role.Rules {
					granted[agg] = append(granted[agg], r.Verbs...)
				}
			}
		}
	}
	for agg, want := range map[string][]string{
		"view":  {"get", "list", "watch"},
		"edit":  {"create", "delete", "get", "list", "patch", "update", "watch"},
		"admin": {"create", "delete", "get", "list", "patch", "update", "watch"},
	} {
		got := granted[agg]
		slices.Sort(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("aggregated to %s (-want +got):\n%s", agg, diff)
		}
	}
	off := render(t, "--set", "aggregatedRoles=false")
	for _, name := range off.names("ClusterRole") {
		if strings.Contains(name, "suites-") {
			t.Errorf("aggregatedRoles=false still renders %s", name)
		}
	}
}

// The status policy lets the manager's service account alone write benchmarksuites/status.
func TestStatusPolicyAdmitsOnlyTheManager(t *testing.T) {
	objs := render(t)
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	objs.get(t, "ValidatingAdmissionPolicy", "vmbench-suite-status", policy)
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].Resources, []string{"benchmarksuites/status"}) ||
		!slices.Contains(rules[0].Operations, admissionv1.Update) {
		t.Errorf("the policy matches %+v, want updates of benchmarksuites/status", rules)
	}
	if len(policy.Spec.Validations) != 1 ||
		policy.Spec.Validations[0].Expression != "request.userInfo.username == 'system:serviceaccount:vmbench-system:vmbench-manager'" {
		t.Errorf("validations %+v, want the manager's service account alone", policy.Spec.Validations)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	objs.get(t, "ValidatingAdmissionPolicyBinding", "vmbench-suite-status", binding)
	if binding.Spec.PolicyName != policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
		t.Errorf("binding %+v", binding.Spec)
	}
	off := render(t, "--set", "statusPolicy=false")
	if _, ok := off["ValidatingAdmissionPolicy"]["vmbench-suite-status"]; ok {
		t.Error("statusPolicy=false still renders the policy")
	}
}

// aggregatedToUsers says whether a ClusterRole is aggregated into the cluster's user-facing roles.
func aggregatedToUsers(cr *rbacv1.ClusterRole) bool {
	for label, v := range cr.Labels {
		if strings.HasPrefix(label, "rbac.authorization.k8s.io/aggregate-to-") && v == "true" {
			return true
		}
	}
	return false
}
