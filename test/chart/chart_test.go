// Package chart tests the Helm chart in charts/vmbench without a cluster: helm lint, and helm template
// renderings checked against what the rest of the repository generates (the CRDs, the RBAC the
// controller's markers declare, the dashboards) and against the manager's own flags.
package chart

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/vmbench/vmbench/controllers/masterkey"
)

const (
	root      = "../.."
	chartDir  = root + "/charts/vmbench"
	release   = "vmbench"
	namespace = "vmbench-system"
)

var (
	helmOnce sync.Once
	helmBin  string
	helmErr  error
)

// helm runs the helm of hack/helm.sh (built from the Go module proxy on first use) with args, from
// the repository's root, and returns its stdout and stderr.
func helm(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	helmOnce.Do(func() {
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(root, "hack", "helm.sh"))
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		helmBin, helmErr = strings.TrimSpace(string(out)), err
		if err != nil {
			helmErr = fmt.Errorf("hack/helm.sh: %w\n%s", err, stderr.String())
		}
	})
	if helmErr != nil {
		t.Fatal(helmErr)
	}
	trackInputs(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helmBin, args...)
	cmd.Dir = root
	// No user configuration, repositories or plugins of this machine's helm.
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CONFIG_HOME="+home, "HELM_CACHE_HOME="+home, "HELM_DATA_HOME="+home)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

var trackOnce sync.Once

// trackInputs reads every file helm and the manager build read, because go test caches a result
// by the files the test process itself opened: without this, a changed template would replay an
// old pass.
func trackInputs(t *testing.T) {
	t.Helper()
	trackOnce.Do(func() {
		for _, dir := range []string{chartDir, root + "/config", root + "/cmd/manager", root + "/internal/platform"} {
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				_, err = os.ReadFile(path)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.ReadFile(filepath.Join(root, "hack", "helm.sh")); err != nil {
			t.Fatal(err)
		}
	})
}

// rendered is one `helm template` output, by kind and name; objects outside the release namespace
// are named <namespace>/<name>.
type rendered map[string]map[string][]byte

// render runs helm template with the given extra arguments and fails the test when helm does.
func render(t *testing.T, args ...string) rendered {
	t.Helper()
	out, stderr, err := helm(t, append([]string{"template", release, "charts/vmbench", "--namespace", namespace}, args...)...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr)
	}
	objs := rendered{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatalf("rendered YAML does not parse: %v\n%s", err, doc)
		}
		if len(u.Object) == 0 {
			continue
		}
		if objs[u.GetKind()] == nil {
			objs[u.GetKind()] = map[string][]byte{}
		}
		key := u.GetName()
		if ns := u.GetNamespace(); ns != "" && ns != namespace {
			key = ns + "/" + key
		}
		if _, dup := objs[u.GetKind()][key]; dup {
			t.Fatalf("%s %s is rendered twice", u.GetKind(), key)
		}
		objs[u.GetKind()][key] = doc
	}
	return objs
}

// get decodes the rendered object kind/name into obj strictly: a field the Kubernetes type does not
// have (a typo in a template) fails the test.
func (r rendered) get(t *testing.T, kind, name string, obj any) {
	t.Helper()
	doc, ok := r[kind][name]
	if !ok {
		t.Fatalf("no %s %s rendered; have %v", kind, name, r.names(kind))
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%s %s: %v", kind, name, err)
	}
}

func (r rendered) names(kind string) []string {
	var out []string
	for n := range r[kind] {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func readYAML(t *testing.T, path string, obj any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestLint(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--set", "metrics.serviceMonitor.enabled=true", "--set", "leaderElection=false", "--set", "dashboards.enabled=false"},
		{"--set", "prometheusRule.enabled=true"},
	} {
		out, stderr, err := helm(t, append([]string{"lint", "--strict", "charts/vmbench"}, args...)...)
		if err != nil {
			t.Errorf("helm lint --strict %v: %v\n%s%s", args, err, out, stderr)
		}
	}
}

// The ClusterRole grants exactly the rules controller-gen generates from the controller's RBAC
// markers into config/rbac/role.yaml: no more, no fewer. Under make test the byte comparison cannot
// fail, since test-unit runs make manifests, which copies the file, just before go test; it guards a
// bare go test, and make verify's git diff --exit-code is what catches a copy left uncommitted.
func TestManagerRoleIsTheGeneratedOne(t *testing.T) {
	generated, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join(chartDir, "files", "manager-role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(generated, copied) {
		t.Errorf("charts/vmbench/files/manager-role.yaml differs from config/rbac/role.yaml: run make manifests")
	}
	want := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(root, "config", "rbac", "role.yaml"), want)

	objs := render(t)
	got := &rbacv1.ClusterRole{}
	objs.get(t, "ClusterRole", "vmbench-manager", got)
	if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
		t.Errorf("ClusterRole rules differ from config/rbac/role.yaml (-generated +chart):\n%s", diff)
	}
	if len(clusterRoles(t, objs)) != 1 || len(objs["ClusterRoleBinding"]) != 1 {
		t.Errorf("cluster-wide RBAC beyond the manager's role: %v %v", objs.names("ClusterRole"), objs.names("ClusterRoleBinding"))
	}
	binding := &rbacv1.ClusterRoleBinding{}
	objs.get(t, "ClusterRoleBinding", "vmbench-manager", binding)
	if binding.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: got.Name}) {
		t.Errorf("ClusterRoleBinding refers to %+v", binding.RoleRef)
	}
	expectBoundToManager(t, objs, binding.Subjects)
}

// Leader election needs Leases in the release namespace only: a Role, as in config/rbac.
func TestLeaderElectionRoleIsNamespaced(t *testing.T) {
	var want rbacv1.Role
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", "leader_election_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := bytes.Cut(raw, []byte("\n---\n"))
	if err := yaml.UnmarshalStrict(doc, &want); err != nil || want.Kind != "Role" {
		t.Fatalf("config/rbac/leader_election_role.yaml does not start with the Role (%v)", err)
	}

	objs := render(t)
	role := &rbacv1.Role{}
	objs.get(t, "Role", "vmbench-leader-election", role)
	if role.Namespace != namespace {
		t.Errorf("Role namespace %q, want the release namespace %q", role.Namespace, namespace)
	}
	if diff := cmp.Diff(want.Rules, role.Rules); diff != "" {
		t.Errorf("leader election rules differ from config/rbac (-config +chart):\n%s", diff)
	}
	binding := &rbacv1.RoleBinding{}
	objs.get(t, "RoleBinding", "vmbench-leader-election", binding)
	if binding.Namespace != namespace || binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
		t.Errorf("RoleBinding %s/%s refers to %+v", binding.Namespace, binding.Name, binding.RoleRef)
	}
	expectBoundToManager(t, objs, binding.Subjects)

	without := render(t, "--set", "leaderElection=false")
	if _, ok := without["Role"]["vmbench-leader-election"]; ok {
		t.Errorf("leaderElection=false still renders the Role: %v", without.names("Role"))
	}
	if _, ok := without["RoleBinding"]["vmbench-leader-election"]; ok {
		t.Errorf("leaderElection=false still renders the RoleBinding: %v", without.names("RoleBinding"))
	}
	d := &appsv1.Deployment{}
	without.get(t, "Deployment", "vmbench-manager", d)
	if slices.Contains(d.Spec.Template.Spec.Containers[0].Args, "--leader-elect") {
		t.Errorf("leaderElection=false still passes --leader-elect")
	}
}

// The master key is the one Secret the manager may read: get on that name alone, in the release
// namespace, as config/rbac has it; and the manager is told where it is.
func TestMasterKeyRoleReadsOneSecret(t *testing.T) {
	var want rbacv1.Role
	raw, err := os.ReadFile(filepath.Join(root, "config", "rbac", "master_key_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := bytes.Cut(raw, []byte("\n---\n"))
	if err := yaml.UnmarshalStrict(doc, &want); err != nil || want.Kind != "Role" {
		t.Fatalf("config/rbac/master_key_role.yaml does not start with the Role (%v)", err)
	}
	for _, args := range [][]string{nil, {"--set", "watchNamespaces={team-a}"}, {"--set", "leaderElection=false"}} {
		objs := render(t, args...)
		role := &rbacv1.Role{}
		objs.get(t, "Role", "vmbench-master-key", role)
		if role.Namespace != namespace {
			t.Errorf("%v: master key Role in %q, want the release namespace", args, role.Namespace)
		}
		if diff := cmp.Diff(want.Rules, role.Rules); diff != "" {
			t.Errorf("%v: master key rules differ from config/rbac (-config +chart):\n%s", args, diff)
		}
		binding := &rbacv1.RoleBinding{}
		objs.get(t, "RoleBinding", "vmbench-master-key", binding)
		if binding.Namespace != namespace || binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != role.Name {
			t.Errorf("%v: RoleBinding %s/%s refers to %+v", args, binding.Namespace, binding.Name, binding.RoleRef)
		}
		expectBoundToManager(t, objs, binding.Subjects)
		_, c := manager(t, objs)
		flag := "--master-key-secret=" + namespace + "/" + role.Rules[0].ResourceNames[0]
		if !slices.Contains(c.Args, flag) {
			t.Errorf("%v: the manager is not told %s: %v", args, flag, c.Args)
		}
	}
}

// readsSecrets reports whether a rule lets its holder do anything with Secrets but create them:
// get, list and watch read them, and so do patch and update (the answer is the object, even for an
// empty patch) and delete and deletecollection (the answer is the object or the list, even for a dry
// run).
func readsSecrets(rule rbacv1.PolicyRule) bool {
	return (slices.Contains(rule.APIGroups, "") || slices.Contains(rule.APIGroups, "*")) &&
		(slices.Contains(rule.Resources, "secrets") || slices.Contains(rule.Resources, "*")) &&
		slices.ContainsFunc(rule.Verbs, func(v string) bool { return v != "create" })
}

func clusterRoles(t *testing.T, objs rendered) []*rbacv1.ClusterRole {
	t.Helper()
	var out []*rbacv1.ClusterRole
	for _, name := range objs.names("ClusterRole") {
		cr := &rbacv1.ClusterRole{}
		objs.get(t, "ClusterRole", name, cr)
		if aggregatedToUsers(cr) {
			// The suites' roles for users (aggregated-roles.yaml, queue_test.go), not the manager's.
			continue
		}
		out = append(out, cr)
	}
	return out
}

func roles(t *testing.T, objs rendered) []*rbacv1.Role {
	t.Helper()
	var out []*rbacv1.Role
	for _, name := range objs.names("Role") {
		r := &rbacv1.Role{}
		objs.get(t, "Role", name, r)
		out = append(out, r)
	}
	return out
}

// Whatever the install, no rule anywhere lets the manager do anything with Secrets but create them,
// except get the master key by name.
func TestNoSecretReadButTheMasterKey(t *testing.T) {
	for _, args := range [][]string{nil, {"--set", "watchNamespaces={team-a,team-b}"}} {
		objs := render(t, args...)
		for _, cr := range clusterRoles(t, objs) {
			for _, rule := range cr.Rules {
				if readsSecrets(rule) {
					t.Errorf("%v: ClusterRole %s grants more than create on Secrets cluster-wide (patch and deletecollection read them too): %+v", args, cr.Name, rule)
				}
			}
		}
		for _, r := range roles(t, objs) {
			for _, rule := range r.Rules {
				if !readsSecrets(rule) {
					continue
				}
				if r.Namespace != namespace || !slices.Equal(rule.Verbs, []string{"get"}) || !slices.Equal(rule.ResourceNames, []string{"vmbench-master-key"}) {
					t.Errorf("%v: Role %s/%s reads Secrets beyond the master key: %+v", args, r.Namespace, r.Name, rule)
				}
			}
		}
	}
}

// With watchNamespaces, the manager's rules are Roles in those namespaces only; the ClusterRole
// keeps the KubeVirt CR read, get on nodes and the metrics endpoint's reviews, and the manager's cache is told the
// namespaces.
func TestNamespacedInstall(t *testing.T) {
	generated := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(root, "config", "rbac", "role.yaml"), generated)
	// Cluster-wide by nature: the KubeVirt CR, read across namespaces, a node read by name, the
	// reviews the metrics endpoint asks for, and KubeVirt's MigrationPolicies (cluster-scoped: a
	// Role's rule for them would grant nothing). A rule that names both kinds of resource is split.
	clusterWide := []string{"kubevirts", "nodes", "tokenreviews", "subjectaccessreviews", "migrationpolicies"}
	var wantNamespaced, wantCluster []rbacv1.PolicyRule
	var clusterResources []string
	for _, rule := range generated.Rules {
		var ns, cl []string
		for _, r := range rule.Resources {
			if slices.Contains(clusterWide, r) {
				cl = append(cl, r)
			} else {
				ns = append(ns, r)
			}
		}
		if len(ns) > 0 {
			part := rule
			part.Resources = ns
			wantNamespaced = append(wantNamespaced, part)
		}
		if len(cl) > 0 {
			part := rule
			part.Resources = cl
			wantCluster = append(wantCluster, part)
			clusterResources = append(clusterResources, cl...)
		}
	}
	slices.Sort(clusterResources)
	if want := slices.Sorted(slices.Values(clusterWide)); !slices.Equal(clusterResources, want) {
		t.Fatalf("config/rbac/role.yaml grants %v of the cluster-wide resources, want %v: %+v", clusterResources, want, generated.Rules)
	}

	objs := render(t, "--set", "watchNamespaces={team-a,team-b}")
	crs := clusterRoles(t, objs)
	if len(crs) != 1 {
		t.Fatalf("ClusterRoles %v, want the manager's only", objs.names("ClusterRole"))
	}
	if diff := cmp.Diff(wantCluster, crs[0].Rules); diff != "" {
		t.Errorf("the namespaced install's ClusterRole (-want +chart):\n%s", diff)
	}
	for _, rule := range crs[0].Rules {
		if slices.Contains(rule.Resources, "pods/log") || slices.Contains(rule.Resources, "pods") || slices.Contains(rule.Resources, "*") {
			t.Errorf("the ClusterRole grants pods or their logs: %+v", rule)
		}
	}
	binding := &rbacv1.ClusterRoleBinding{}
	objs.get(t, "ClusterRoleBinding", "vmbench-manager", binding)
	if binding.RoleRef.Name != crs[0].Name {
		t.Errorf("ClusterRoleBinding refers to %+v", binding.RoleRef)
	}
	expectBoundToManager(t, objs, binding.Subjects)

	managerRoles := map[string]bool{}
	for _, r := range roles(t, objs) {
		if r.Name != "vmbench-manager" {
			if r.Namespace != namespace {
				t.Errorf("Role %s in %s: only the manager's Roles go outside the release namespace", r.Name, r.Namespace)
			}
			continue
		}
		managerRoles[r.Namespace] = true
		if diff := cmp.Diff(wantNamespaced, r.Rules); diff != "" {
			t.Errorf("Role in %s differs from the generated rules without kubevirts (-want +chart):\n%s", r.Namespace, diff)
		}
		rb := &rbacv1.RoleBinding{}
		objs.get(t, "RoleBinding", r.Namespace+"/vmbench-manager", rb)
		if rb.Namespace != r.Namespace || rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: r.Name}) {
			t.Errorf("RoleBinding %s/%s refers to %+v", rb.Namespace, rb.Name, rb.RoleRef)
		}
		expectBoundToManager(t, objs, rb.Subjects)
	}
	if diff := cmp.Diff(map[string]bool{"team-a": true, "team-b": true}, managerRoles); diff != "" {
		t.Errorf("the manager's Roles are in other namespaces than the watched ones (-want +got):\n%s", diff)
	}
	_, c := manager(t, objs)
	if !slices.Contains(c.Args, "--watch-namespaces=team-a,team-b") {
		t.Errorf("the manager is not told the namespaces: %v", c.Args)
	}

	// Cluster-wide by default: no Roles of the manager's, no namespaces for its cache.
	objs = render(t)
	for _, r := range roles(t, objs) {
		if r.Namespace != namespace {
			t.Errorf("the cluster-wide install renders Role %s in %s", r.Name, r.Namespace)
		}
	}
	_, c = manager(t, objs)
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--watch-namespaces") {
			t.Errorf("the cluster-wide install passes %s", a)
		}
	}
}

// The admission policy for privileged platforms is on by default, bound with Deny, and renders
// the allow-list of RuntimeClasses into its expressions; config/admission holds the same policy with
// the defaults.
func TestPrivilegedPlatformsPolicy(t *testing.T) {
	policyOf := func(objs rendered) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
		t.Helper()
		policy := &admissionv1.ValidatingAdmissionPolicy{}
		objs.get(t, "ValidatingAdmissionPolicy", "vmbench-privileged-platforms", policy)
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
		objs.get(t, "ValidatingAdmissionPolicyBinding", "vmbench-privileged-platforms", binding)
		return policy, binding
	}
	policy, binding := policyOf(render(t))
	if binding.Spec.PolicyName != policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) ||
		binding.Spec.ParamRef != nil || binding.Spec.MatchResources != nil {
		t.Errorf("binding %+v, want a Deny binding of %s for every namespace, without params", binding.Spec, policy.Name)
	}
	if policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy != admissionv1.Fail {
		t.Errorf("failurePolicy %v, want Fail: a policy that cannot be evaluated must not let Host through", policy.Spec.FailurePolicy)
	}
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].APIGroups, []string{"vmbench.io"}) || !slices.Equal(rules[0].Resources, []string{"benchmarksuites"}) ||
		!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}) {
		t.Errorf("the policy matches %+v, want creates and updates of benchmarksuites", rules)
	}
	variable := func(p *admissionv1.ValidatingAdmissionPolicy, name string) string {
		for _, v := range p.Spec.Variables {
			if v.Name == name {
				return v.Expression
			}
		}
		t.Fatalf("no variable %s", name)
		return ""
	}
	allText := func(p *admissionv1.ValidatingAdmissionPolicy) string {
		var b strings.Builder
		for _, v := range p.Spec.Validations {
			b.WriteString(v.Expression + "\n" + v.MessageExpression + "\n")
		}
		return b.String()
	}
	if got := variable(policy, "allowedRuntimeClasses"); got != "[]" {
		t.Errorf("default allowedRuntimeClasses expression %q, want []", got)
	}
	if got := variable(policy, "controlPlaneTolerations"); !strings.Contains(got, "['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master']") {
		t.Errorf("controlPlaneTolerations %q, want the control plane's taints (audit N6)", got)
	}
	if conds := policy.Spec.MatchConditions; len(conds) != 1 || !strings.Contains(conds[0].Expression, "oldObject.spec.placement.tolerations") {
		t.Errorf("match conditions %+v, want a change of the tolerations judged too", conds)
	}
	for _, want := range []string{"p.type == 'Host'", "has(p.runtimeClassName)", "size(variables.controlPlaneTolerations) == 0", "kubectl label namespace ' + request.namespace + ' vmbench.io/privileged-platforms=true", "(now: none)"} {
		if !strings.Contains(allText(policy), want) {
			t.Errorf("the policy's validations do not contain %q", want)
		}
	}
	if !strings.Contains(variable(policy, "namespaceAllows"), "namespaceObject.metadata.labels['vmbench.io/privileged-platforms'] == 'true'") {
		t.Errorf("namespaceAllows does not read the admin's label: %s", variable(policy, "namespaceAllows"))
	}

	listed, _ := policyOf(render(t, "--set", "allowedRuntimeClasses={kata,gvisor}"))
	if got := variable(listed, "allowedRuntimeClasses"); got != `["kata","gvisor"]` {
		t.Errorf("allowedRuntimeClasses expression %q, want the list", got)
	}
	if !strings.Contains(allText(listed), "(now: kata, gvisor)") {
		t.Error("the messages do not name the allowed RuntimeClasses")
	}

	off := render(t, "--set", "admissionPolicy.enabled=false")
	if off["ValidatingAdmissionPolicy"]["vmbench-privileged-platforms"] != nil || off["ValidatingAdmissionPolicyBinding"]["vmbench-privileged-platforms"] != nil {
		t.Errorf("admissionPolicy.enabled=false still renders %v %v", off.names("ValidatingAdmissionPolicy"), off.names("ValidatingAdmissionPolicyBinding"))
	}

	sameAsConfigAdmission(t, "privileged_platforms.yaml", policy, binding)
}

// managerPolicy checks what both policies on the manager's own requests share: on by default (the
// value <switch>.enabled), bound with Deny everywhere, failurePolicy Fail, matched on the manager's
// service account (following serviceAccount.name), and equal to config/admission/<file>; it returns
// the policy as rendered with the defaults.
func managerPolicy(t *testing.T, name, valueSwitch, file string) *admissionv1.ValidatingAdmissionPolicy {
	t.Helper()
	policyOf := func(objs rendered) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
		t.Helper()
		policy := &admissionv1.ValidatingAdmissionPolicy{}
		objs.get(t, "ValidatingAdmissionPolicy", name, policy)
		binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
		objs.get(t, "ValidatingAdmissionPolicyBinding", name, binding)
		return policy, binding
	}
	objs := render(t)
	policy, binding := policyOf(objs)
	if binding.Spec.PolicyName != policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) ||
		binding.Spec.ParamRef != nil || binding.Spec.MatchResources != nil {
		t.Errorf("%s: binding %+v, want a Deny binding of %s everywhere, without params", name, binding.Spec, policy.Name)
	}
	if policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy != admissionv1.Fail {
		t.Errorf("%s: failurePolicy %v, want Fail", name, policy.Spec.FailurePolicy)
	}
	d, _ := manager(t, objs)
	user := "system:serviceaccount:" + namespace + ":" + d.Spec.Template.Spec.ServiceAccountName
	if conds := policy.Spec.MatchConditions; len(conds) == 0 || conds[0].Expression != "request.userInfo.username == '"+user+"'" {
		t.Errorf("%s: match conditions %+v, want the manager's user %s first", name, conds, user)
	}
	custom, _ := policyOf(render(t, "--set", "serviceAccount.name=bench-bot"))
	if got := custom.Spec.MatchConditions[0].Expression; !strings.Contains(got, "system:serviceaccount:"+namespace+":bench-bot'") {
		t.Errorf("%s: with serviceAccount.name=bench-bot the policy matches %s", name, got)
	}
	off := render(t, "--set", valueSwitch+".enabled=false")
	if off["ValidatingAdmissionPolicy"][name] != nil || off["ValidatingAdmissionPolicyBinding"][name] != nil {
		t.Errorf("%s.enabled=false still renders %s", valueSwitch, name)
	}

	sa := &corev1.ServiceAccount{}
	readYAML(t, filepath.Join(root, "config", "rbac", "service_account.yaml"), sa)
	if sa.Namespace != namespace || sa.Name != d.Spec.Template.Spec.ServiceAccountName {
		t.Fatalf("config/rbac's service account %s/%s is not the chart's default %s/%s: the policies cannot agree",
			sa.Namespace, sa.Name, namespace, d.Spec.Template.Spec.ServiceAccountName)
	}
	sameAsConfigAdmission(t, file, policy, binding)
	kustomization, err := os.ReadFile(filepath.Join(root, "config", "admission", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kustomization), "- "+file) {
		t.Errorf("config/admission/kustomization.yaml does not list %s", file)
	}
	return policy
}

// sameAsConfigAdmission fails unless config/admission/<file> holds exactly two documents, a policy
// and a binding whose specs equal the chart's: a kustomize install must enforce what the chart does.
func sameAsConfigAdmission(t *testing.T, file string, policy *admissionv1.ValidatingAdmissionPolicy, binding *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "config", "admission", file))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(raw), "\n---\n")
	if len(docs) != 2 {
		t.Fatalf("config/admission/%s has %d documents, want the policy and its binding", file, len(docs))
	}
	kPolicy, kBinding := &admissionv1.ValidatingAdmissionPolicy{}, &admissionv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict([]byte(docs[0]), kPolicy); err != nil {
		t.Fatalf("config/admission/%s, the policy: %v", file, err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), kBinding); err != nil {
		t.Fatalf("config/admission/%s, the binding: %v", file, err)
	}
	if diff := cmp.Diff(policy.Spec, kPolicy.Spec); diff != "" {
		t.Errorf("config/admission/%s: the policy differs from the chart's (-chart +config):\n%s", file, diff)
	}
	if diff := cmp.Diff(binding.Spec, kBinding.Spec); diff != "" {
		t.Errorf("config/admission/%s: the binding differs from the chart's (-chart +config):\n%s", file, diff)
	}
}

// masterKeySecret is the name of the master key Secret the rendered manager is started with
// (--master-key-secret=<release namespace>/<name>).
func masterKeySecret(t *testing.T, objs rendered) string {
	t.Helper()
	_, c := manager(t, objs)
	for _, a := range c.Args {
		if ref, ok := strings.CutPrefix(a, "--master-key-secret="); ok {
			ns, name, _ := strings.Cut(ref, "/")
			if ns != namespace || name == "" {
				t.Fatalf("--master-key-secret=%s, want a Secret of the release namespace %s", ref, namespace)
			}
			return name
		}
	}
	t.Fatalf("the manager's args %q have no --master-key-secret", c.Args)
	return ""
}

func validationsText(p *admissionv1.ValidatingAdmissionPolicy) string {
	var text strings.Builder
	for _, v := range p.Spec.Validations {
		text.WriteString(v.Expression + "\n")
	}
	return text.String()
}

// The policy on the manager's own Secret requests matches every Secret operation, and refuses all
// but create, and any Secret that is not Opaque, names a service account or lacks vmbench's labels.
func TestManagerSecretsPolicy(t *testing.T) {
	policy := managerPolicy(t, "vmbench-manager-secrets", "managerSecretsPolicy", "manager_secrets.yaml")
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].APIGroups, []string{""}) || !slices.Equal(rules[0].Resources, []string{"secrets"}) ||
		!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.OperationAll}) {
		t.Errorf("the policy matches %+v, want every operation on Secrets", rules)
	}
	if len(policy.Spec.MatchConditions) != 1 {
		t.Errorf("match conditions %+v, want the manager's user alone, in every namespace", policy.Spec.MatchConditions)
	}
	// A run's Secret has a run Secret's name and is controlled by <run>-secrets; the master key is the
	// one the manager is started with (--master-key-secret).
	for _, want := range []string{"request.operation == 'CREATE'", "object.type == 'Opaque'", "'kubernetes.io/service-account.name' in object.metadata.annotations",
		"'vmbench.io/suite' in object.metadata.labels", "request.namespace == '" + namespace + "'", "object.metadata.labels['app.kubernetes.io/component'] == 'master-key'",
		"object.metadata.name == '" + masterKeySecret(t, render(t)) + "'",
		"object.metadata.name.startsWith(object.metadata.labels['vmbench.io/run'] + '-')", "object.metadata.name.matches('-(auth|cloudinit)-[0-9a-f]{10}$')",
		"o.kind == 'ConfigMap' && o.name == object.metadata.labels['vmbench.io/run'] + '-secrets' && has(o.controller) && o.controller"} {
		if !strings.Contains(validationsText(policy), want) {
			t.Errorf("the policy's validations do not contain %q", want)
		}
	}
}

// The policy on the manager's writes of its children's kinds, in every namespace (in the release
// namespace all but the master key's ID record): every kind the ClusterRole lets it create, patch or
// delete, and the label on the object and the old one.
func TestManagerChildrenPolicy(t *testing.T) {
	policy := managerPolicy(t, "vmbench-manager-children", "managerChildrenPolicy", "manager_children.yaml")
	objs := render(t)
	matched := map[string]bool{}
	for _, rule := range policy.Spec.MatchConstraints.ResourceRules {
		if !slices.Equal(rule.Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update, admissionv1.Delete}) {
			t.Errorf("rule %+v: want CREATE, UPDATE and DELETE", rule)
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				matched[g+"/"+r] = true
			}
		}
	}
	generated := &rbacv1.ClusterRole{}
	readYAML(t, filepath.Join(root, "config", "rbac", "role.yaml"), generated)
	for _, rule := range generated.Rules {
		if !slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "patch" || v == "delete" || v == "update" }) {
			continue
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				// The manager's own kind and its events are not tenants' objects.
				if g == "vmbench.io" || r == "events" {
					continue
				}
				if !matched[g+"/"+r] {
					t.Errorf("the ClusterRole lets the manager write %s/%s, which the policy does not match", g, r)
				}
			}
		}
	}
	// In the release namespace too, but for the manager's create of its master key's ID record.
	record := masterKeySecret(t, objs) + masterkey.MasterKeyRecordSuffix
	if conds := policy.Spec.MatchConditions; len(conds) != 2 || conds[1].Expression != "!(request.namespace == '"+namespace+"' && "+
		"request.resource.resource == 'configmaps' && request.operation == 'CREATE' && request.name == '"+record+"')" {
		t.Errorf("match conditions %+v, want the manager's user in every namespace but for its create of ConfigMap %s/%s", conds, namespace, record)
	}
	for _, want := range []string{"'vmbench.io/suite' in object.metadata.labels", "'vmbench.io/suite' in oldObject.metadata.labels"} {
		if !strings.Contains(validationsText(policy), want) {
			t.Errorf("the policy's validations do not contain %q", want)
		}
	}
}

// expectBoundToManager checks that subjects is exactly the ServiceAccount the manager runs as.
func expectBoundToManager(t *testing.T, objs rendered, subjects []rbacv1.Subject) {
	t.Helper()
	d := &appsv1.Deployment{}
	objs.get(t, "Deployment", "vmbench-manager", d)
	sa := &corev1.ServiceAccount{}
	objs.get(t, "ServiceAccount", d.Spec.Template.Spec.ServiceAccountName, sa)
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: namespace}}
	if diff := cmp.Diff(want, subjects); diff != "" {
		t.Errorf("subjects (-manager's ServiceAccount +binding):\n%s", diff)
	}
}

// The chart's crds/ are byte for byte the CRDs controller-gen writes into config/crd/bases. As with the
// role, make test copies them just before go test, so under make test this guards nothing that make
// verify's git diff --exit-code does not; it catches a stale copy under a bare go test.
func TestCRDsAreTheGeneratedOnes(t *testing.T) {
	files := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	bases := filepath.Join(root, "config", "crd", "bases")
	chartCRDs := filepath.Join(chartDir, "crds")
	if diff := cmp.Diff(files(bases), files(chartCRDs)); diff != "" {
		t.Fatalf("charts/vmbench/crds holds other files than config/crd/bases (run make manifests):\n%s", diff)
	}
	for _, name := range files(bases) {
		want, err := os.ReadFile(filepath.Join(bases, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(chartCRDs, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("charts/vmbench/crds/%s differs from config/crd/bases: run make manifests", name)
		}
	}
	// helm installs them: --include-crds renders the BenchmarkSuite CRD.
	objs := render(t, "--include-crds")
	if _, ok := objs["CustomResourceDefinition"]["benchmarksuites.vmbench.io"]; !ok {
		t.Errorf("helm template --include-crds renders no benchmarksuites.vmbench.io: %v", objs.names("CustomResourceDefinition"))
	}
}

func manager(t *testing.T, objs rendered) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	d := &appsv1.Deployment{}
	objs.get(t, "Deployment", "vmbench-manager", d)
	if n := len(d.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers, want the manager only", n)
	}
	return d, d.Spec.Template.Spec.Containers[0]
}

func TestManagerDeploymentIsLockedDown(t *testing.T) {
	d, c := manager(t, render(t))
	pod := d.Spec.Template.Spec.SecurityContext
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot {
		t.Errorf("pod securityContext.runAsNonRoot is not true: %+v", pod)
	}
	if pod == nil || pod.SeccompProfile == nil || pod.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccompProfile is not RuntimeDefault: %+v", pod)
	}
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Fatal("the manager container has no securityContext")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem is not true")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("capabilities are not drop ALL, add none: %+v", sc.Capabilities)
	case sc.Privileged != nil && *sc.Privileged:
		t.Error("privileged")
	}

	ports := map[string]int32{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for name, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil {
			t.Errorf("no HTTP %s probe", name)
			continue
		}
		if _, ok := ports[probe.HTTPGet.Port.String()]; !ok {
			t.Errorf("%s probe on port %q, which the container does not name (%v)", name, probe.HTTPGet.Port.String(), ports)
		}
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe path %q, want the manager's /healthz", c.LivenessProbe.HTTPGet.Path)
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe path %q, want the manager's /readyz", c.ReadinessProbe.HTTPGet.Path)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if c.Resources.Requests.Name(r, "").IsZero() || c.Resources.Limits.Name(r, "").IsZero() {
			t.Errorf("no %s request and limit: %+v", r, c.Resources)
		}
	}
	if !slices.Contains(c.Args, fmt.Sprintf("--metrics-bind-address=:%d", ports["metrics"])) ||
		!slices.Contains(c.Args, fmt.Sprintf("--health-probe-bind-address=:%d", ports["probes"])) {
		t.Errorf("the manager listens elsewhere than its container ports %v: %v", ports, c.Args)
	}
}

// Every value that configures the manager reaches its flags.
func TestValuesBecomeManagerFlags(t *testing.T) {
	_, c := manager(t, render(t))
	for _, want := range []string{
		"--runner-image=vmbench/runner:dev", "--vm-disk-image=vmbench/vm-disk:dev", "--image-pull-policy=IfNotPresent",
		"--vm-network=auto", "--emulation=allow", "--container-startup=10m", "--vm-startup=20m", "--leader-elect",
		"--network-policy=true", "--master-key-secret=vmbench-system/vmbench-master-key", "--metrics-secure=true",
		"--max-active-runs=1", "--metrics-detail=false", "--metrics-detail-retention=1h", "--metrics-max-series-per-suite=2000",
	} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("defaults: no %s in %v", want, c.Args)
		}
	}
	if c.Image != "vmbench/manager:dev" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("manager image %s (%s), want vmbench/manager:dev (IfNotPresent)", c.Image, c.ImagePullPolicy)
	}

	_, c = manager(t, render(t,
		"--set", "runnerImage=registry.example/runner:1", "--set", "vmDiskImage=registry.example/disk:1",
		"--set", "imagePullPolicy=Always", "--set", "vmNetwork=passt", "--set", "emulation=forbid",
		"--set", "containerStartup=5m", "--set", "vmStartup=1h30m", "--set", "image.tag=v1", "--set", "image.pullPolicy=Always",
		"--set", "networkPolicy=false", "--set", "extraArgs[0]=--zap-devel", "--set", "metrics.secure=false", "--set", "maxActiveRuns=3",
		"--set", "metrics.detail=true", "--set", "metrics.detailRetention=30m", "--set", "metrics.maxSeriesPerSuite=5000"))
	for _, want := range []string{
		"--metrics-secure=false", "--runner-image=registry.example/runner:1", "--vm-disk-image=registry.example/disk:1", "--image-pull-policy=Always",
		"--vm-network=passt", "--emulation=forbid", "--container-startup=5m", "--vm-startup=1h30m", "--zap-devel",
		"--network-policy=false", "--max-active-runs=3", "--metrics-detail=true", "--metrics-detail-retention=30m", "--metrics-max-series-per-suite=5000",
	} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("set: no %s in %v", want, c.Args)
		}
	}
	if c.Image != "vmbench/manager:v1" || c.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("manager image %s (%s), want vmbench/manager:v1 (Always)", c.Image, c.ImagePullPolicy)
	}

	// null leaves the manager's own default.
	_, c = manager(t, render(t, "--set", "vmNetwork=null", "--set", "emulation=null", "--set", "networkPolicy=null"))
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--vm-network") || strings.HasPrefix(a, "--emulation") || strings.HasPrefix(a, "--network-policy") {
			t.Errorf("null still passes %s", a)
		}
	}
}

// imageFlag is the value of the manager's flag --name= in args, "" when absent.
func imageFlag(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

// global.registry and global.tag name all three images the way `make push` pushes them (the
// manager's own, and the runner and VM disk images it passes to its children by flag); an
// individual value wins over them, for its image alone.
func TestGlobalRegistryAndTagNameEveryImage(t *testing.T) {
	type images struct{ manager, runner, vmDisk string }
	for _, tc := range []struct {
		name string
		set  []string
		want images
	}{{
		name: "registry and tag",
		set:  []string{"global.registry=registry.example.com/perf", "global.tag=v0.1.0"},
		want: images{"registry.example.com/perf/vmbench-manager:v0.1.0", "registry.example.com/perf/vmbench-runner:v0.1.0",
			"registry.example.com/perf/vmbench-vm-disk:v0.1.0"},
	}, {
		name: "a registry with a port, a trailing slash, no tag: appVersion",
		set:  []string{"global.registry=localhost:5001/"},
		want: images{"localhost:5001/vmbench-manager:dev", "localhost:5001/vmbench-runner:dev", "localhost:5001/vmbench-vm-disk:dev"},
	}, {
		name: "a tag without a registry: the local images",
		set:  []string{"global.tag=3f2a9c"},
		want: images{"vmbench/manager:3f2a9c", "vmbench/runner:3f2a9c", "vmbench/vm-disk:3f2a9c"},
	}, {
		name: "the runner's own value wins",
		set:  []string{"global.registry=registry.example.com/perf", "global.tag=v0.1.0", "runnerImage=mirror.example/runner@sha256:" + strings.Repeat("a", 64)},
		want: images{"registry.example.com/perf/vmbench-manager:v0.1.0", "mirror.example/runner@sha256:" + strings.Repeat("a", 64),
			"registry.example.com/perf/vmbench-vm-disk:v0.1.0"},
	}, {
		name: "the VM disk's and the manager's own values win",
		set: []string{"global.registry=registry.example.com/perf", "global.tag=v0.1.0", "vmDiskImage=disks.example/vm:7",
			"image.repository=mirror.example/manager", "image.tag=v0.1.1"},
		want: images{"mirror.example/manager:v0.1.1", "registry.example.com/perf/vmbench-runner:v0.1.0", "disks.example/vm:7"},
	}, {
		name: "the manager's tag alone wins",
		set:  []string{"global.registry=registry.example.com/perf", "global.tag=v0.1.0", "image.tag=debug"},
		want: images{"registry.example.com/perf/vmbench-manager:debug", "registry.example.com/perf/vmbench-runner:v0.1.0",
			"registry.example.com/perf/vmbench-vm-disk:v0.1.0"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			_, c := manager(t, render(t, args...))
			got := images{c.Image, imageFlag(c.Args, "runner-image"), imageFlag(c.Args, "vm-disk-image")}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(images{})); diff != "" {
				t.Errorf("images (-want +got):\n%s", diff)
			}
		})
	}
}

// managerRefusals are what the manager prints when it rejects its flags: flag's parse errors and
// the manager's own validation ("manager: --flag=...: use ...").
var managerRefusals = []string{"flag provided but not defined", "invalid value", "manager: --"}

// The manager, built from cmd/manager, accepts the flags the chart passes by default: it gets past
// parsing and validating them and stops only at loading a kubeconfig, which the test withholds.
func TestManagerAcceptsTheChartFlags(t *testing.T) {
	_, c := manager(t, render(t))
	bin := filepath.Join(t.TempDir(), "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd/manager")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, out)
	}
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "no-kubeconfig")
	cmd := exec.Command(bin, append(slices.Clone(c.Args), "--kubeconfig="+kubeconfig)...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the manager ran without a cluster:\n%s", out)
	}
	for _, r := range managerRefusals {
		if bytes.Contains(out, []byte(r)) {
			t.Fatalf("the manager refuses the chart's flags %v:\n%s", c.Args, out)
		}
	}
	if !bytes.Contains(out, []byte(kubeconfig)) {
		t.Errorf("the manager did not get as far as loading its kubeconfig:\n%s", out)
	}
}

func TestMetricsServiceSelectsTheManager(t *testing.T) {
	objs := render(t)
	d, c := manager(t, objs)
	svc := &corev1.Service{}
	objs.get(t, "Service", "vmbench-metrics", svc)
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("Service selects %s=%s, which the manager's pods lack: %v", k, v, d.Spec.Template.Labels)
		}
	}
	if len(svc.Spec.Selector) == 0 {
		t.Error("the Service selects nothing")
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("clusterIP %q: the metrics Service is headless, one target per pod", svc.Spec.ClusterIP)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Fatalf("ports %+v, want one named metrics targeting the container's metrics port", svc.Spec.Ports)
	}
	if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool {
		return p.Name == "metrics" && p.ContainerPort == svc.Spec.Ports[0].Port
	}) {
		t.Errorf("the container has no metrics port %d: %+v", svc.Spec.Ports[0].Port, c.Ports)
	}
}

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor the chart renders.
type serviceMonitor struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       struct {
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port            string `json:"port"`
			Path            string `json:"path"`
			Interval        string `json:"interval"`
			ScrapeTimeout   string `json:"scrapeTimeout"`
			HonorLabels     bool   `json:"honorLabels"`
			Scheme          string `json:"scheme"`
			BearerTokenFile string `json:"bearerTokenFile"`
			TLSConfig       *struct {
				InsecureSkipVerify bool   `json:"insecureSkipVerify"`
				ServerName         string `json:"serverName"`
				CA                 *struct {
					Secret *struct {
						Name string `json:"name"`
						Key  string `json:"key"`
					} `json:"secret"`
				} `json:"ca"`
			} `json:"tlsConfig"`
		} `json:"endpoints"`
	} `json:"spec"`
}

func TestServiceMonitorIsOptional(t *testing.T) {
	if objs := render(t); len(objs["ServiceMonitor"]) != 0 {
		t.Fatalf("a ServiceMonitor by default: %v (clusters without the Prometheus Operator lack its CRD)", objs.names("ServiceMonitor"))
	}
	objs := render(t, "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.serviceMonitor.labels.release=kps",
		"--set", "metrics.serviceMonitor.insecureSkipVerify=true")
	doc, ok := objs["ServiceMonitor"]["vmbench"]
	if !ok {
		t.Fatalf("no ServiceMonitor vmbench: %v", objs.names("ServiceMonitor"))
	}
	var sm serviceMonitor
	if err := yaml.UnmarshalStrict(doc, &sm); err != nil {
		t.Fatal(err)
	}
	if sm.APIVersion != "monitoring.coreos.com/v1" {
		t.Errorf("apiVersion %s", sm.APIVersion)
	}
	if labels, _ := sm.Metadata["labels"].(map[string]any); labels["release"] != "kps" {
		t.Errorf("serviceMonitor.labels are not on the ServiceMonitor: %v", sm.Metadata["labels"])
	}
	svc := &corev1.Service{}
	objs.get(t, "Service", "vmbench-metrics", svc)
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, which the metrics Service lacks: %v", k, v, svc.Labels)
		}
	}
	if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
		t.Errorf("namespaceSelector %v", sm.Spec.NamespaceSelector.MatchNames)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != svc.Spec.Ports[0].Name || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Fatalf("endpoints %+v, want the Service's port %s at /metrics", sm.Spec.Endpoints, svc.Spec.Ports[0].Name)
	}
	// Without honorLabels, the target's namespace label renames the suites' own to
	// exported_namespace, and every dashboard query selects nothing.
	if !sm.Spec.Endpoints[0].HonorLabels {
		t.Error("honorLabels is not true")
	}
	// Secure metrics by default: HTTPS with the scraper's own token, which the manager reviews; the
	// self-signed certificate unverified only because insecureSkipVerify says so.
	if e := sm.Spec.Endpoints[0]; e.Scheme != "https" || e.BearerTokenFile != "/var/run/secrets/kubernetes.io/serviceaccount/token" ||
		e.TLSConfig == nil || !e.TLSConfig.InsecureSkipVerify {
		t.Errorf("endpoint %+v, want https with the service account token (the manager's certificate is self-signed)", e)
	}
	plain := render(t, "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.secure=false")
	sm.Spec.Endpoints = nil
	if err := yaml.UnmarshalStrict(plain["ServiceMonitor"]["vmbench"], &sm); err != nil {
		t.Fatal(err)
	}
	if e := sm.Spec.Endpoints[0]; e.Scheme == "https" || e.BearerTokenFile != "" {
		t.Errorf("metrics.secure=false: endpoint %+v still asks for https or a token", e)
	}
}

// The ServiceMonitor verifies the manager's certificate whenever the chart knows one, and is not
// rendered with an unverified scrape unless the admin asks for it.
func TestServiceMonitorVerifiesTheCertificate(t *testing.T) {
	_, stderr, err := helm(t, "template", release, "charts/vmbench", "--namespace", namespace, "--set", "metrics.serviceMonitor.enabled=true")
	if err == nil || !strings.Contains(stderr, "metrics.tls.secretName") || !strings.Contains(stderr, "metrics.serviceMonitor.insecureSkipVerify=true") {
		t.Errorf("a ServiceMonitor over the self-signed certificate renders without insecureSkipVerify, or the refusal says no way out: %v\n%s", err, stderr)
	}
	_, stderr, err = helm(t, "template", release, "charts/vmbench", "--namespace", namespace,
		"--set", "metrics.tls.secretName=metrics-tls", "--set", "metrics.secure=false")
	if err == nil || !strings.Contains(stderr, "metrics.secure") {
		t.Errorf("metrics.tls with plain HTTP renders, or the refusal does not name metrics.secure: %v\n%s", err, stderr)
	}

	const serverName = "vmbench-metrics." + namespace + ".svc"
	for _, tc := range []struct {
		name                    string
		set                     []string
		secret, caSecret, caKey string
		certificates, issuers   []string
	}{
		{name: "a Secret of the admin's", set: []string{"metrics.tls.secretName=metrics-tls"},
			secret: "metrics-tls", caSecret: "metrics-tls", caKey: "ca.crt"},
		{name: "its CA elsewhere", set: []string{"metrics.tls.secretName=metrics-tls", "metrics.tls.caSecretName=corp-ca", "metrics.tls.caKey=root.pem"},
			secret: "metrics-tls", caSecret: "corp-ca", caKey: "root.pem"},
		{name: "cert-manager with a CA of the release", set: []string{"metrics.tls.certManager.enabled=true"},
			secret: "vmbench-metrics-tls", caSecret: "vmbench-metrics-tls", caKey: "ca.crt",
			certificates: []string{"vmbench-metrics", "vmbench-metrics-ca"}, issuers: []string{"vmbench-metrics-ca", "vmbench-metrics-selfsigned"}},
		{name: "cert-manager with the cluster's issuer",
			set:    []string{"metrics.tls.certManager.enabled=true", "metrics.tls.certManager.issuerRef.kind=ClusterIssuer", "metrics.tls.certManager.issuerRef.name=corp"},
			secret: "vmbench-metrics-tls", caSecret: "vmbench-metrics-tls", caKey: "ca.crt", certificates: []string{"vmbench-metrics"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--set", "metrics.serviceMonitor.enabled=true"}
			for _, s := range tc.set {
				args = append(args, "--set", s)
			}
			objs := render(t, args...)
			var sm serviceMonitor
			if err := yaml.UnmarshalStrict(objs["ServiceMonitor"]["vmbench"], &sm); err != nil {
				t.Fatal(err)
			}
			e := sm.Spec.Endpoints[0]
			if e.Scheme != "https" || e.TLSConfig == nil || e.TLSConfig.InsecureSkipVerify || e.TLSConfig.ServerName != serverName ||
				e.TLSConfig.CA == nil || e.TLSConfig.CA.Secret == nil || e.TLSConfig.CA.Secret.Name != tc.caSecret || e.TLSConfig.CA.Secret.Key != tc.caKey {
				t.Errorf("endpoint %+v, tlsConfig %+v: want https verifying %s with key %s of Secret %s, no insecureSkipVerify",
					e, e.TLSConfig, serverName, tc.caKey, tc.caSecret)
			}
			d, c := manager(t, objs)
			if !slices.Contains(c.Args, "--metrics-cert-dir=/etc/vmbench/metrics-tls") {
				t.Errorf("no --metrics-cert-dir in %v", c.Args)
			}
			if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/vmbench/metrics-tls" || !c.VolumeMounts[0].ReadOnly {
				t.Errorf("volume mounts %+v, want the certificate read-only at /etc/vmbench/metrics-tls", c.VolumeMounts)
			}
			if v := d.Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Name != c.VolumeMounts[0].Name || v[0].Secret == nil || v[0].Secret.SecretName != tc.secret {
				t.Errorf("volumes %+v, want Secret %s", v, tc.secret)
			}
			if got := objs.names("Certificate"); !slices.Equal(got, tc.certificates) {
				t.Errorf("Certificates %v, want %v", got, tc.certificates)
			}
			if got := objs.names("Issuer"); !slices.Equal(got, tc.issuers) {
				t.Errorf("Issuers %v, want %v", got, tc.issuers)
			}
			if doc, ok := objs["Certificate"]["vmbench-metrics"]; ok {
				var cert struct {
					Spec struct {
						SecretName string            `json:"secretName"`
						DNSNames   []string          `json:"dnsNames"`
						IssuerRef  map[string]string `json:"issuerRef"`
					} `json:"spec"`
				}
				if err := yaml.Unmarshal(doc, &cert); err != nil {
					t.Fatal(err)
				}
				if cert.Spec.SecretName != tc.secret || !slices.Contains(cert.Spec.DNSNames, serverName) || cert.Spec.IssuerRef["name"] == "" {
					t.Errorf("Certificate %+v: want Secret %s for %s from an issuer", cert.Spec, tc.secret, serverName)
				}
			}
		})
	}

	// Without a certificate, the manager serves a self-signed one and mounts nothing.
	d, c := manager(t, render(t))
	if len(c.VolumeMounts) != 0 || len(d.Spec.Template.Spec.Volumes) != 0 || slices.ContainsFunc(c.Args, func(a string) bool {
		return strings.HasPrefix(a, "--metrics-cert-dir")
	}) {
		t.Errorf("defaults mount a certificate: %v %+v", c.Args, c.VolumeMounts)
	}
}

// Every board in dashboards/ is in a ConfigMap the Grafana sidecar picks up, unchanged and valid JSON.
func TestDashboardsAreConfigMapsForTheGrafanaSidecar(t *testing.T) {
	boards, err := filepath.Glob(filepath.Join(chartDir, "dashboards", "*.json"))
	if err != nil || len(boards) == 0 {
		t.Fatalf("no dashboards in charts/vmbench/dashboards (%v): run make dashboards", err)
	}
	check := func(objs rendered, label, value, ns string) {
		t.Helper()
		found := map[string]bool{}
		for _, name := range objs.names("ConfigMap") {
			cm := &corev1.ConfigMap{}
			objs.get(t, "ConfigMap", name, cm)
			if cm.Labels[label] != value {
				continue
			}
			if cm.Namespace != ns {
				t.Errorf("ConfigMap %s in %q, want %q", name, cm.Namespace, ns)
			}
			for key, data := range cm.Data {
				found[key] = true
				if !json.Valid([]byte(data)) {
					t.Errorf("ConfigMap %s key %s is not valid JSON", name, key)
				}
				want, err := os.ReadFile(filepath.Join(chartDir, "dashboards", key))
				if err != nil {
					t.Errorf("ConfigMap %s key %s is no file in dashboards/: %v", name, key, err)
				} else if data != string(want) {
					t.Errorf("ConfigMap %s key %s differs from dashboards/%s", name, key, key)
				}
				var board struct{ UID, Title string }
				if err := json.Unmarshal([]byte(data), &board); err != nil || board.UID == "" || board.Title == "" {
					t.Errorf("ConfigMap %s key %s: no dashboard uid and title (%v)", name, key, err)
				}
			}
		}
		for _, b := range boards {
			if !found[filepath.Base(b)] {
				t.Errorf("no ConfigMap labelled %s=%q holds %s", label, value, filepath.Base(b))
			}
		}
	}
	check(render(t), "grafana_dashboard", "1", namespace)
	check(render(t, "--set", "dashboards.label=dashboards.example/grafana", "--set", "dashboards.labelValue=vmbench",
		"--set", "dashboards.namespace=monitoring"), "dashboards.example/grafana", "vmbench", "monitoring")
	if objs := render(t, "--set", "dashboards.enabled=false"); len(objs["ConfigMap"]) != 0 {
		t.Errorf("dashboards.enabled=false still renders %v", objs.names("ConfigMap"))
	}
}

// Bad values fail at install, with a message that names the value.
func TestSchemaRejectsBadValues(t *testing.T) {
	for _, tc := range []struct{ set, field string }{
		{"imagePullPolicy=Sometimes", "imagePullPolicy"},
		{"image.pullPolicy=Sometimes", "pullPolicy"},
		{"vmNetwork=wifi", "vmNetwork"},
		{"emulation=maybe", "emulation"},
		{"containerStartup=soon", "containerStartup"},
		{"runnerImage=two words", "runnerImage"},
		{"image.repository=vmbench/manager@sha256", "repository"},
		{"global.registry=https://registry.example.com", "registry"},
		{"global.tag=v1 beta", "tag"},
		{"global.tag=:v1", "tag"},
		{"vmDiskImage=has space", "vmDiskImage"},
		{"metrics.port=0", "port"},
		{"runnerImg=vmbench/runner:dev", "runnerImg"},
		{"dashboards.label=not a label", "label"},
		{"logLevel=chatty", "logLevel"},
		{"networkPolicy=maybe", "networkPolicy"},
		{"maxActiveRuns=-1", "maxActiveRuns"},
		{"watchNamespaces={Team_A}", "watchNamespaces"},
		{"allowedRuntimeClasses={Kata_1}", "allowedRuntimeClasses"},
		{"admissionPolicy.enabled=maybe", "enabled"},
		{"metrics.secure=maybe", "secure"},
		{"metrics.maxSeriesPerSuite=100", "maxSeriesPerSuite"},
		{"metrics.detailRetention=soon", "detailRetention"},
		{"metrics.tls.certManager.issuerRef.kind=Vault", "kind"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			out, stderr, err := helm(t, "template", release, "charts/vmbench", "--namespace", namespace, "--set", tc.set)
			if err == nil {
				t.Fatalf("--set %s renders:\n%.300s", tc.set, out)
			}
			if !strings.Contains(stderr, "schema") || !strings.Contains(stderr, tc.field) {
				t.Errorf("--set %s: the error names no schema violation of %s:\n%s", tc.set, tc.field, stderr)
			}
		})
	}
	// And the values the schema lists do render.
	for _, set := range []string{"vmNetwork=bridge", "vmNetwork=masquerade", "vmNetwork=passt", "emulation=forbid", "imagePullPolicy=Never", "logLevel=5"} {
		if _, stderr, err := helm(t, "template", release, "charts/vmbench", "--set", set); err != nil {
			t.Errorf("--set %s is refused: %s", set, stderr)
		}
	}
}

// The manager's Go memory limit follows the container's: the chart hands it the limit in bytes.
func TestManagerKnowsItsMemoryLimit(t *testing.T) {
	_, c := manager(t, render(t))
	for _, e := range c.Env {
		if e.Name != "VMBENCH_MEMORY_LIMIT" {
			continue
		}
		ref := e.ValueFrom
		if ref == nil || ref.ResourceFieldRef == nil || ref.ResourceFieldRef.Resource != "limits.memory" ||
			ref.ResourceFieldRef.ContainerName != c.Name {
			t.Fatalf("VMBENCH_MEMORY_LIMIT is not the manager container's limits.memory: %+v", e)
		}
		return
	}
	t.Fatalf("the manager has no VMBENCH_MEMORY_LIMIT, so no Go memory limit: %+v", c.Env)
}
