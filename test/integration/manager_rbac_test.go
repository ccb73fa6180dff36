package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/scheme"
	suitecontroller "github.com/vmbench/vmbench/controllers/suite"
	"github.com/vmbench/vmbench/internal/platform"
)

// The kinds of the chart's objects that decide what the manager's service account may do.
var managerAccessKinds = map[string]bool{
	"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// tempNamespace creates a namespace named from prefix, with labels, removed when the test ends.
func tempNamespace(t *testing.T, g Gomega, prefix string, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Labels: labels}}
	g.Expect(k8s.Create(context.Background(), ns)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), ns) })
	return ns.Name
}

// renderManagerAccess renders the chart with helm (the one of hack/helm.sh) as release `release` in
// namespace ns with the given extra arguments, and returns its RBAC objects and the manager's
// Secret policy, exactly as rendered, with the name of the manager's service account.
func renderManagerAccess(t *testing.T, release, ns string, args ...string) (rbac, policy []*unstructured.Unstructured, serviceAccount string) {
	t.Helper()
	out := helmTemplate(t, release, ns, args...)
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
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
			t.Fatal(err)
		}
		switch kind := u.GetKind(); {
		case kind == "Deployment":
			serviceAccount, _, _ = unstructured.NestedString(u.Object, "spec", "template", "spec", "serviceAccountName")
		case kind == "ValidatingAdmissionPolicy" || kind == "ValidatingAdmissionPolicyBinding":
			// The chart's other policy (privileged platforms) is about tenants' suites, not the manager.
			if strings.HasSuffix(u.GetName(), "-manager-secrets") || strings.HasSuffix(u.GetName(), "-manager-children") {
				policy = append(policy, u)
			}
		case managerAccessKinds[kind]:
			rbac = append(rbac, u)
		}
	}
	if serviceAccount == "" || len(policy) != 4 {
		t.Fatalf("the rendered chart has service account %q and %d objects of the policies on the manager's requests, want 4:\n%s",
			serviceAccount, len(policy), out)
	}
	return rbac, policy, serviceAccount
}

// createAll creates objects as an admin and deletes them when the test ends.
func createAll(t *testing.T, g *WithT, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, obj := range objs {
		g.Expect(k8s.Create(context.Background(), obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
		t.Cleanup(func() { _ = k8s.Delete(context.Background(), obj) })
	}
}

// serviceAccountConfig is a rest config that speaks as the given service account, as the manager's
// pod would.
func serviceAccountConfig(ns, name string) *rest.Config {
	impersonated := rest.CopyConfig(cfg)
	impersonated.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", ns, name),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
	return impersonated
}

// asServiceAccount is a client set that speaks as the given service account.
func asServiceAccount(g *WithT, ns, name string) *kubernetes.Clientset {
	cs, err := kubernetes.NewForConfig(serviceAccountConfig(ns, name))
	g.Expect(err).NotTo(HaveOccurred())
	return cs
}

// secretRead is the answer to one way of reading a Secret: the error, or what content came back.
type secretRead struct {
	err    error
	leaked string
}

// secretReads are every way a client can get a Secret's content: the reads, and the writes whose
// answer is the object (a patch, even an empty one) or the objects (a delete or deletecollection,
// even a dry run, which deletes nothing).
func secretReads(ctx context.Context, cs *kubernetes.Clientset, ns, name string) map[string]secretRead {
	secrets := cs.CoreV1().Secrets(ns)
	one := func(s *corev1.Secret, err error) secretRead {
		if err != nil {
			return secretRead{err: err}
		}
		return secretRead{leaked: fmt.Sprintf("Secret %s with data keys %v", s.Name, slices.Sorted(maps.Keys(s.Data)))}
	}
	many := func(l *corev1.SecretList, err error) secretRead {
		if err != nil {
			return secretRead{err: err}
		}
		var names []string
		for _, s := range l.Items {
			names = append(names, fmt.Sprintf("%s (data keys %v)", s.Name, slices.Sorted(maps.Keys(s.Data))))
		}
		return secretRead{leaked: fmt.Sprintf("%d Secrets: %s", len(l.Items), strings.Join(names, ", "))}
	}
	out := map[string]secretRead{}
	out["get"] = one(secrets.Get(ctx, name, metav1.GetOptions{}))
	out["list"] = many(secrets.List(ctx, metav1.ListOptions{}))
	w, err := secrets.Watch(ctx, metav1.ListOptions{})
	out["watch"] = secretRead{err: err, leaked: "a watch stream"}
	if err == nil {
		w.Stop()
	}
	out["empty merge patch"] = one(secrets.Patch(ctx, name, types.MergePatchType, []byte("{}"), metav1.PatchOptions{}))
	out["empty JSON patch"] = one(secrets.Patch(ctx, name, types.JSONPatchType, []byte("[]"), metav1.PatchOptions{}))
	err = secrets.Delete(ctx, name, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
	out["dry-run delete"] = secretRead{err: err, leaked: "the delete was authorized (its answer carries the Secret)"}
	// The typed client drops the answer of a deletecollection; ask for it raw, as an attacker would.
	raw, err := cs.CoreV1().RESTClient().Delete().Namespace(ns).Resource("secrets").Param("dryRun", metav1.DryRunAll).DoRaw(ctx)
	list := &corev1.SecretList{}
	if err == nil {
		err = json.Unmarshal(raw, list)
	}
	out["dry-run deletecollection"] = many(list, err)
	return out
}

// expectNoSecretRead checks that the manager's service account gets no content of Secret ns/name by
// any verb: each way is refused with Forbidden.
func expectNoSecretRead(ctx context.Context, g Gomega, cs *kubernetes.Clientset, ns, name, install string) {
	var read []string
	reads := secretReads(ctx, cs, ns, name)
	for _, way := range slices.Sorted(maps.Keys(reads)) {
		r := reads[way]
		switch {
		case r.err == nil:
			read = append(read, fmt.Sprintf("%s answered %s", way, r.leaked))
		case !apierrors.IsForbidden(r.err):
			read = append(read, fmt.Sprintf("%s: want Forbidden, got %v", way, r.err))
		}
	}
	g.Expect(read).To(BeEmpty(), "%s: the manager reads Secret %s/%s", install, ns, name)
}

func labelledSecret(ns, name string, secretType corev1.SecretType, labels, annotations map[string]string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels, Annotations: annotations},
		Type:       secretType,
		Data:       map[string][]byte{"token": []byte("t")},
	}
}

// The chart's exact RBAC and its policy on the manager's Secret requests, enforced by a real
// kube-apiserver, for the cluster-wide and the namespaced install: the manager's service account
// reads no Secret but its master key by any verb (get, list, watch, an empty patch, a dry-run delete
// or deletecollection), in its own namespace, in a namespace it serves and in one it does not; it
// may create a run's Opaque, labelled Secret where it serves suites, and never a Secret that would
// be filled with a service-account token.
func TestManagerReadsNoSecretItDidNotCreate(t *testing.T) {
	for _, install := range []struct {
		name       string
		namespaced bool
	}{{"cluster-wide", false}, {"namespaced", true}} {
		t.Run(install.name, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			newNamespace := func(prefix string) string { return tempNamespace(t, g, prefix, nil) }
			release := newNamespace("vmbench-system-")
			served := newNamespace("team-a-")
			other := newNamespace("team-b-")
			var args []string
			if install.namespaced {
				args = []string{"--set", "watchNamespaces={" + served + "}"}
			}
			rbac, policy, sa := renderManagerAccess(t, "rbac-"+install.name, release, args...)
			prefix := "rbac-" + install.name + "-vmbench"
			masterKey := prefix + "-master-key"

			// Secrets that others made, in every namespace; the master key in the release namespace.
			for _, ns := range []string{release, served, other} {
				g.Expect(k8s.Create(ctx, labelledSecret(ns, "others", corev1.SecretTypeOpaque, map[string]string{"team": "x"}, nil))).To(Succeed())
			}
			g.Expect(k8s.Create(ctx, labelledSecret(release, masterKey, corev1.SecretTypeOpaque,
				map[string]string{"app.kubernetes.io/name": "vmbench", "app.kubernetes.io/component": "master-key"}, nil))).To(Succeed())

			createAll(t, g, rbac)
			manager := asServiceAccount(g, release, sa)
			// RBAC is enforced once the authorizer's cache has the new bindings.
			g.Eventually(func() error {
				_, err := manager.CoreV1().Secrets(release).Get(ctx, masterKey, metav1.GetOptions{})
				return err
			}, timeout, interval).Should(Succeed(), "the manager gets its master key by name")

			// RBAC alone (no policy yet) refuses every read path, the master key's included but for
			// its get.
			for _, ns := range []string{release, served, other} {
				expectNoSecretRead(ctx, g, manager, ns, "others", install.name+", RBAC alone")
			}
			for way, r := range secretReads(ctx, manager, release, masterKey) {
				if way != "get" {
					g.Expect(apierrors.IsForbidden(r.err)).To(BeTrue(), "%s of the master key: want Forbidden, got %v", way, r.err)
				}
			}

			createAll(t, g, policy)
			secrets := manager.CoreV1().Secrets(served)
			run := func(name string) map[string]string {
				return map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: name}
			}
			// A new policy takes a moment to be enforced: a token Secret is refused once it is.
			token := labelledSecret(served, "demo-container-1-auth-token", corev1.SecretTypeServiceAccountToken, run("demo-container-1"),
				map[string]string{corev1.ServiceAccountNameKey: "default"})
			g.Eventually(func() error {
				_, err := secrets.Create(ctx, token, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			}, timeout, interval).Should(MatchError(ContainSubstring("the vmbench manager may create only Opaque Secrets")))
			_, err := secrets.Create(ctx, token, metav1.CreateOptions{})
			g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a service-account-token Secret: %v", err)
			_, err = secrets.Create(ctx, labelledSecret(served, "demo-container-1-auth-annotated", corev1.SecretTypeOpaque, run("demo-container-1"),
				map[string]string{corev1.ServiceAccountNameKey: "default"}), metav1.CreateOptions{})
			g.Expect(err).To(MatchError(ContainSubstring("carries the annotation kubernetes.io/service-account.name")))
			_, err = secrets.Create(ctx, labelledSecret(served, "unlabelled", corev1.SecretTypeOpaque, nil, nil), metav1.CreateOptions{})
			g.Expect(err).To(MatchError(ContainSubstring("has neither the label vmbench.io/suite")))

			// A labelled Secret of a name a workload may expect, or of a run Secret's name but not owned by
			// the run's <run>-secrets, is refused; so is a master key of another name.
			owned := func(s *corev1.Secret, run string) *corev1.Secret {
				s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: run + "-secrets",
					UID: "0b1c2d3e-0000-4000-8000-000000000001", Controller: ptr.To(true)}}
				return s
			}
			_, err = secrets.Create(ctx, owned(labelledSecret(served, "registry-pull", corev1.SecretTypeOpaque, run("demo-container-1"), nil), "demo-container-1"),
				metav1.CreateOptions{})
			g.Expect(err).To(MatchError(ContainSubstring("the vmbench manager creates only the Secrets of a run")), "a planted Secret name")
			_, err = secrets.Create(ctx, labelledSecret(served, "demo-container-1-auth-0123456789", corev1.SecretTypeOpaque, run("demo-container-1"), nil),
				metav1.CreateOptions{})
			g.Expect(err).To(MatchError(ContainSubstring("controlled by the ConfigMap <run>-secrets")), "a run Secret without its owner")
			_, err = manager.CoreV1().Secrets(release).Create(ctx, labelledSecret(release, "fresh-key", corev1.SecretTypeOpaque,
				map[string]string{"app.kubernetes.io/component": "master-key"}, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			g.Expect(err).To(MatchError(ContainSubstring("nor is it the master key "+release+"/"+masterKey)), "a master key of another name")

			// What vmbench makes: a run's Opaque, labelled Secret where it serves suites, owned by the
			// run's ConfigMap; a VM's cloud-init Secret.
			_, err = secrets.Create(ctx, owned(labelledSecret(served, "demo-container-1-auth-0123456789", corev1.SecretTypeOpaque, run("demo-container-1"), nil),
				"demo-container-1"), metav1.CreateOptions{})
			g.Expect(err).NotTo(HaveOccurred(), "a run's Secret")
			_, err = secrets.Create(ctx, owned(labelledSecret(served, "demo-vm-1-node01-cloudinit-abcdef0123", corev1.SecretTypeOpaque, run("demo-vm-1"), nil),
				"demo-vm-1"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			g.Expect(err).NotTo(HaveOccurred(), "a VM's cloud-init Secret")
			// The master key exists (the test made it above): admitted, the create fails only on that.
			_, err = manager.CoreV1().Secrets(release).Create(ctx, labelledSecret(release, masterKey, corev1.SecretTypeOpaque,
				map[string]string{"app.kubernetes.io/component": "master-key"}, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			g.Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "the master key, admitted: %v", err)
			if install.namespaced {
				_, err = manager.CoreV1().Secrets(other).Create(ctx, owned(labelledSecret(other, "demo-container-1-auth-0123456789", corev1.SecretTypeOpaque,
					run("demo-container-1"), nil), "demo-container-1"), metav1.CreateOptions{})
				g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a Secret in a namespace the namespaced install does not serve: %v", err)
			}

			// With the policy too, nothing is read, not even the Secret the manager just made.
			for _, ns := range []string{release, served, other} {
				expectNoSecretRead(ctx, g, manager, ns, "others", install.name)
			}
			expectNoSecretRead(ctx, g, manager, served, "demo-container-1-auth-0123456789", install.name+", its own run Secret")

			// Should the RBAC ever be widened, the policy still refuses every Secret operation of the
			// manager but create.
			widened := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "widened", Namespace: served},
				Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"patch", "update", "delete", "deletecollection"}}}}
			binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "widened", Namespace: served},
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "widened"},
				Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: release}}}
			g.Expect(k8s.Create(ctx, widened)).To(Succeed())
			g.Expect(k8s.Create(ctx, binding)).To(Succeed())
			g.Eventually(func() error {
				_, err := secrets.Patch(ctx, "others", types.MergePatchType, []byte("{}"), metav1.PatchOptions{})
				return err
			}, timeout, interval).Should(MatchError(ContainSubstring("the vmbench manager may only create Secrets: UPDATE of Secret " + served + "/others is refused")))
			err = secrets.Delete(ctx, "others", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			g.Expect(err).To(MatchError(ContainSubstring("the vmbench manager may only create Secrets: DELETE of Secret " + served + "/others is refused")))
			expectNoSecretRead(ctx, g, manager, served, "others", install.name+", RBAC widened, with the policy")
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: served, Name: "others"}, &corev1.Secret{})).To(Succeed(), "nothing was deleted")
		})
	}
}

// The policy on the manager's writes, enforced by a real kube-apiserver with the chart's RBAC: in a
// tenant's namespace the manager creates, patches and deletes its own labelled ConfigMaps and
// NetworkPolicies, and cannot create an unlabelled one, patch (even to add the label) or delete one
// that is not vmbench's; in the release namespace the policy does not apply.
func TestManagerWritesOnlyVmbenchObjects(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	newNamespace := func(prefix string) string { return tempNamespace(t, g, prefix, nil) }
	release := newNamespace("vmbench-system-")
	tenant := newNamespace("team-a-")
	rbac, policy, sa := renderManagerAccess(t, "writes", release)
	createAll(t, g, rbac)
	createAll(t, g, policy)
	manager := asServiceAccount(g, release, sa)
	configMaps := manager.CoreV1().ConfigMaps(tenant)

	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "aws-auth", Namespace: tenant}, Data: map[string]string{"k": "v"}}
	g.Expect(k8s.Create(ctx, theirs)).To(Succeed())
	isolate := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "isolate", Namespace: tenant},
		Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}
	g.Expect(k8s.Create(ctx, isolate)).To(Succeed())

	// A new policy takes a moment to be enforced: probe with a dry run.
	g.Eventually(func() error {
		_, err := configMaps.Patch(ctx, "aws-auth", types.MergePatchType, []byte(`{"data":{"k":"mine"}}`), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}, timeout, interval).Should(HaveOccurred())
	_, err := configMaps.Patch(ctx, "aws-auth", types.MergePatchType, []byte(`{"data":{"k":"mine"}}`), metav1.PatchOptions{})
	g.Expect(err).To(MatchError(ContainSubstring(
		"the vmbench manager changes and deletes only objects labelled vmbench.io/suite: UPDATE of ConfigMap " + tenant + "/aws-auth, which is not a vmbench object, is refused")))
	_, err = configMaps.Patch(ctx, "aws-auth", types.MergePatchType, []byte(`{"metadata":{"labels":{"vmbench.io/suite":"x"}}}`), metav1.PatchOptions{})
	g.Expect(err).To(MatchError(ContainSubstring("which is not a vmbench object, is refused")), "adding the label")
	g.Expect(configMaps.Delete(ctx, "aws-auth", metav1.DeleteOptions{})).To(MatchError(ContainSubstring("DELETE of ConfigMap " + tenant + "/aws-auth")))
	g.Expect(manager.NetworkingV1().NetworkPolicies(tenant).Delete(ctx, "isolate", metav1.DeleteOptions{})).To(
		MatchError(ContainSubstring("DELETE of NetworkPolicy " + tenant + "/isolate")))
	_, err = configMaps.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled", Namespace: tenant}}, metav1.CreateOptions{})
	g.Expect(err).To(MatchError(ContainSubstring("the vmbench manager writes only objects labelled vmbench.io/suite: CREATE of ConfigMap " + tenant + "/unlabelled")))
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(theirs), theirs)).To(Succeed())
	g.Expect(theirs.Data).To(Equal(map[string]string{"k": "v"}), "the tenant's ConfigMap is unchanged")

	// vmbench's own objects.
	mine := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1-plan", Namespace: tenant,
		Labels: map[string]string{vmbenchv1.LabelSuite: "demo"}}}
	_, err = configMaps.Create(ctx, mine, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = configMaps.Patch(ctx, mine.Name, types.MergePatchType, []byte(`{"data":{"plan.json":"{}"}}`), metav1.PatchOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = configMaps.Patch(ctx, mine.Name, types.MergePatchType, []byte(`{"metadata":{"labels":{"vmbench.io/suite":null}}}`), metav1.PatchOptions{})
	g.Expect(err).To(MatchError(ContainSubstring("without the label is refused")), "removing the label")
	g.Expect(configMaps.Delete(ctx, mine.Name, metav1.DeleteOptions{})).To(Succeed())

	// Workloads that would reach a Secret or a service account that is not the run's are refused.
	writer, err := client.New(serviceAccountConfig(release, sa), client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())
	labels := map[string]string{vmbenchv1.LabelSuite: "demo"}
	mpiJob := func(mutate func(*corev1.PodSpec)) *mpiv2.MPIJob {
		spec := corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "runner", Image: "vmbench/runner:test", Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{
				SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "demo-container-1-auth-0123456789"}, Key: "token"}}}}}},
			Volumes: []corev1.Volume{{Name: "ssh-host", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "demo-container-1-auth-0123456789"}}}},
		}
		mutate(&spec)
		return &mpiv2.MPIJob{ObjectMeta: metav1.ObjectMeta{Name: "demo-container-1", Namespace: tenant, Labels: labels},
			Spec: mpiv2.MPIJobSpec{MPIReplicaSpecs: map[mpiv2.MPIReplicaType]*mpiv2.ReplicaSpec{
				mpiv2.MPIReplicaTypeLauncher: {Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: spec}}}}}
	}
	dryRun := func(obj client.Object) error { return writer.Create(ctx, obj, client.DryRunAll) }
	g.Expect(dryRun(mpiJob(func(*corev1.PodSpec) {}))).To(Succeed(), "an MPIJob with the run's own Secret")
	g.Expect(dryRun(mpiJob(func(p *corev1.PodSpec) { p.Volumes[0].Secret.SecretName = "others" }))).To(MatchError(ContainSubstring(
		"the vmbench manager mounts only volumes of the run itself (scratch, <run>-plan, <run>-shared, <run>-auth-<hash>): MPIJob " + tenant + "/demo-container-1 mounts another volume")))
	g.Expect(dryRun(mpiJob(func(p *corev1.PodSpec) { p.Containers[0].Env[0].ValueFrom.SecretKeyRef.Name = "others" }))).To(MatchError(ContainSubstring(
		"refers to another Secret")))
	g.Expect(dryRun(mpiJob(func(p *corev1.PodSpec) {
		p.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "others"}}}}
	}))).To(MatchError(ContainSubstring("refers to another Secret")))
	g.Expect(dryRun(mpiJob(func(p *corev1.PodSpec) { p.ServiceAccountName = "deployer" }))).To(MatchError(ContainSubstring(
		"the vmbench manager runs pods without a service account token")))
	g.Expect(dryRun(mpiJob(func(p *corev1.PodSpec) { p.AutomountServiceAccountToken = nil }))).To(MatchError(ContainSubstring(
		"without a service account token")))
	vmi := func(mutate func(*kubevirtv1.VirtualMachineInstanceSpec)) *kubevirtv1.VirtualMachineInstance {
		spec := kubevirtv1.VirtualMachineInstanceSpec{
			Domain: kubevirtv1.DomainSpec{Devices: kubevirtv1.Devices{}},
			Volumes: []kubevirtv1.Volume{
				{Name: "root", VolumeSource: kubevirtv1.VolumeSource{ContainerDisk: &kubevirtv1.ContainerDiskSource{Image: "vmbench/vm-disk:test"}}},
				{Name: "cloudinit", VolumeSource: kubevirtv1.VolumeSource{CloudInitNoCloud: &kubevirtv1.CloudInitNoCloudSource{
					UserDataSecretRef: &corev1.LocalObjectReference{Name: "demo-vm-1-master-cloudinit-0123456789"}}}},
			},
		}
		mutate(&spec)
		return &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "demo-vm-1-master", Namespace: tenant, Labels: labels}, Spec: spec}
	}
	g.Expect(dryRun(vmi(func(*kubevirtv1.VirtualMachineInstanceSpec) {}))).To(Succeed(), "a VMI with its own cloud-init Secret")
	g.Expect(dryRun(vmi(func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		s.Volumes[1].CloudInitNoCloud.UserDataSecretRef.Name = "others"
	}))).To(MatchError(ContainSubstring("VirtualMachineInstance " + tenant + "/demo-vm-1-master has another volume or access credentials")))
	g.Expect(dryRun(vmi(func(s *kubevirtv1.VirtualMachineInstanceSpec) {
		s.Volumes = append(s.Volumes, kubevirtv1.Volume{Name: "loot", VolumeSource: kubevirtv1.VolumeSource{Secret: &kubevirtv1.SecretVolumeSource{SecretName: "others"}}})
	}))).To(MatchError(ContainSubstring("has another volume or access credentials")))

	// In the release namespace the manager creates the record of its master key's ID, and nothing
	// else that is not vmbench's: no workload that mounts the archive's credentials or Helm's
	// release Secrets there.
	_, err = manager.CoreV1().ConfigMaps(release).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "writes-vmbench-master-key-id", Namespace: release}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	g.Expect(err).NotTo(HaveOccurred(), "the master key's ID record")
	_, err = manager.CoreV1().ConfigMaps(release).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "state", Namespace: release}},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	g.Expect(err).To(MatchError(ContainSubstring("the vmbench manager writes only objects labelled vmbench.io/suite: CREATE of ConfigMap " + release + "/state")))
	loot := mpiJob(func(p *corev1.PodSpec) { p.Volumes[0].Secret.SecretName = "writes-vmbench-archive-credentials" })
	loot.Namespace = release
	g.Expect(dryRun(loot)).To(MatchError(ContainSubstring("MPIJob " + release + "/demo-container-1 mounts another volume")))
}

// The controller itself, speaking as the chart's service account with the chart's exact RBAC and
// both policies on its requests, runs a suite of a container and a VM run to the end: every verb
// it uses is granted and nothing it writes is refused.
func TestManagerRunsASuiteWithTheChartsRBAC(t *testing.T) {
	h := newHarness(t)
	release := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "vmbench-system-"}}
	h.g.Expect(k8s.Create(h.ctx, release)).To(Succeed())
	rbac, policy, sa := renderManagerAccess(t, "runs", release.Name)
	createAll(t, h.g, rbac)
	createAll(t, h.g, policy)
	manager := asServiceAccount(h.g, release.Name, sa)
	h.g.Eventually(func() error {
		_, err := manager.CoreV1().ConfigMaps(h.ns).List(h.ctx, metav1.ListOptions{})
		return err
	}, timeout, interval).Should(Succeed(), "the chart's RBAC is in force")
	// And both policies, once a write they refuse is refused.
	h.g.Eventually(func() error {
		_, err := manager.CoreV1().ConfigMaps(h.ns).Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}, timeout, interval).Should(MatchError(ContainSubstring("the vmbench manager writes only objects labelled vmbench.io/suite")))
	h.g.Eventually(func() error {
		_, err := manager.CoreV1().Secrets(h.ns).Create(h.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "probe"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}, timeout, interval).Should(MatchError(ContainSubstring("the vmbench manager may create only its own Secrets")))
	h.identity = serviceAccountConfig(release.Name, sa)
	// The run queue's Leases live in the release namespace, where the chart's queue Role is.
	h.configure = func(r *suitecontroller.SuiteReconciler) { r.QueueNamespace = release.Name }
	h.startManager(allKinds())

	h.g.Expect(k8s.Create(h.ctx, h.suite("chart", 1, demoBenchmarks()...))).To(Succeed())
	h.finishContainerRun("chart", "chart-container-1", 1)
	h.eventuallySuite("chart", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(runPhase(s, "chart-vm-1")).To(Equal(vmbenchv1.RunRunning), fmt.Sprint(s.Status.Runs))
	})
	h.finishVMRun("chart", "chart-vm-1", 0.8, "kvm")
	h.eventuallySuite("chart", func(g Gomega, s *vmbenchv1.BenchmarkSuite) {
		g.Expect(s.Status.Phase).To(Equal(vmbenchv1.SuiteComplete), fmt.Sprint(s.Status.Conditions))
	})
}

// builtRun is a run of the given platform as the suite controller plans it, in namespace ns, with
// the shared storage, the NetworkPolicy and the Secret names of a real one.
func builtRun(ns string, p vmbenchv1.Platform) platform.Run {
	benchmarks := []vmbenchv1.Benchmark{
		bench("cpu", vmbenchv1.BenchmarkSysbenchCPU).WithDefaults(),
		bench("net", vmbenchv1.BenchmarkIperf3).WithDefaults(),
		vmbenchv1.Benchmark{Name: "io", Type: vmbenchv1.BenchmarkIozone,
			Iozone: &vmbenchv1.IozoneParams{Targets: []vmbenchv1.StorageTarget{vmbenchv1.StorageLocal, vmbenchv1.StorageShared}}}.WithDefaults(),
	}
	suite := &vmbenchv1.BenchmarkSuite{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: ns, UID: "4f1c7a52-5d1e-4d6e-9a0b-3c2d1e0f9a8b"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{
			Platforms: []vmbenchv1.Platform{p}, Baseline: p.Name,
			Cluster:       vmbenchv1.ClusterShape{Nodes: 2, CPU: 1, Memory: ptr.To(resource.MustParse("1Gi"))},
			Benchmarks:    benchmarks,
			Repetitions:   1,
			SharedStorage: &vmbenchv1.SharedStorage{StorageClassName: "nfs", Size: ptr.To(resource.MustParse("4Gi"))},
		},
	}
	run := platform.Run{
		Suite: suite, Name: "demo-" + p.Name + "-1", Platform: p, Repetition: 1, Benchmarks: benchmarks,
		SecretsOwner: "9d8c7b6a-5f4e-4d3c-8b2a-1a0f9e8d7c6b",
		Auth: platform.Auth{Token: []byte("0123abcd"), SSHPrivateKey: []byte("-----PRIVATE KEY-----\n"), SSHPublicKey: []byte("ssh-ed25519 AAAA vmbench\n"),
			SSHHostKey: []byte("-----HOST KEY-----\n"), SSHHostPublicKey: []byte("ssh-ed25519 HOST vmbench\n"), KnownHosts: []byte("* ssh-ed25519 HOST vmbench\n")},
		Images:        platform.Images{Runner: "vmbench/runner:test", VMDisk: "vmbench/vm-disk:test", PullPolicy: corev1.PullIfNotPresent},
		Deadline:      time.Hour,
		VMNetwork:     platform.VMNetworkPasst,
		NetworkPolicy: true,
	}
	run.AuthSecret = platform.SecretName(run, run.Name+"-auth")
	return run
}

// The children policy also keeps a stolen manager token from the node and from data that is not the
// run's (S3): each probe is a dry run of what the manager could be made to write, refused with a
// message that says why; and every object the platform builders make for Container, Host (in a
// namespace that allows it) and VM runs is admitted, created as the manager applies it, so that the
// policy never refuses the manager's own work. A claim the binder bound stays the manager's to
// re-apply.
func TestManagerChildrenPolicyKeepsToTheRun(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	newNamespace := func(prefix string, labels map[string]string) string { return tempNamespace(t, g, prefix, labels) }
	release := newNamespace("vmbench-system-", nil)
	tenant := newNamespace("team-a-", nil)
	hostTenant := newNamespace("team-host-", map[string]string{vmbenchv1.LabelPrivilegedPlatforms: "true"})
	// The runner image the builders use (builtRun) is the one the manager is given.
	rbac, policy, sa := renderManagerAccess(t, "keeps", release, "--set", "runnerImage=vmbench/runner:test")
	createAll(t, g, rbac)
	createAll(t, g, policy)
	writer, err := client.New(serviceAccountConfig(release, sa), client.Options{Scheme: scheme.New()})
	g.Expect(err).NotTo(HaveOccurred())
	// apply writes obj as the manager does (server-side apply with its field manager), or creates
	// a Secret, which the manager may only create.
	apply := func(obj client.Object, opts ...client.ApplyOption) error {
		if _, ok := obj.(*corev1.Secret); ok {
			var create []client.CreateOption
			if len(opts) > 0 {
				create = append(create, client.DryRunAll)
			}
			return writer.Create(ctx, obj.DeepCopyObject().(client.Object), create...)
		}
		content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: content}
		delete(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		return writer.Apply(ctx, client.ApplyConfigurationFromUnstructured(u),
			append([]client.ApplyOption{client.FieldOwner(vmbenchv1.FieldManager), client.ForceOwnership}, opts...)...)
	}
	dryRun := func(obj client.Object) error { return apply(obj, client.DryRunAll) }

	build := func(ns string, p vmbenchv1.Platform) []client.Object {
		run := builtRun(ns, p)
		adapter, err := platform.For(p.Type)
		g.Expect(err).NotTo(HaveOccurred())
		objs, err := adapter.Build(run)
		g.Expect(err).NotTo(HaveOccurred(), "building the %s run", p.Type)
		// The manager makes the run's ConfigMap <run>-secrets the controller of its Secrets before it
		// creates them (ownSecrets, controllers/suite/run_keys.go); TestManagerRunsASuiteWithTheChartsRBAC
		// runs that path itself.
		for _, o := range objs {
			if _, ok := o.(*corev1.Secret); ok {
				o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: run.Name + "-secrets",
					UID: run.SecretsOwner, Controller: ptr.To(true)}})
			}
		}
		return objs
	}
	container := build(tenant, vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer})
	host := build(hostTenant, vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost})
	vm := build(tenant, vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM})
	find := func(objs []client.Object, kind string) client.Object {
		for _, o := range objs {
			if o.GetObjectKind().GroupVersionKind().Kind == kind {
				return o.DeepCopyObject().(client.Object)
			}
		}
		t.Fatalf("the builders made no %s: %v", kind, objs)
		return nil
	}
	kinds := map[string]bool{}
	for _, o := range slices.Concat(container, host, vm) {
		kinds[o.GetObjectKind().GroupVersionKind().Kind] = true
	}
	for _, kind := range []string{"MPIJob", "PersistentVolumeClaim", "NetworkPolicy", "PodDisruptionBudget", "Service", "ConfigMap", "VirtualMachineInstance", "Secret"} {
		g.Expect(kinds).To(HaveKey(kind), "the builders' objects cover every kind the policy checks")
	}
	containerJob := func(mutate func(*corev1.PodSpec)) client.Object {
		job := find(container, "MPIJob").(*mpiv2.MPIJob)
		mutate(&job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeLauncher].Template.Spec)
		return job
	}

	// A new policy takes a moment to be enforced: wait for one of its new refusals.
	g.Eventually(func() error {
		return dryRun(containerJob(func(p *corev1.PodSpec) { p.HostPID = true }))
	}, timeout, interval).Should(MatchError(ContainSubstring("share no host namespace")))

	for _, obj := range slices.Concat(container, host, vm) {
		g.Expect(dryRun(obj)).To(Succeed(), "the manager's own %s %s/%s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName())
	}

	nodeRoot := "MPIJob " + tenant + "/demo-container-1 asks for more, and is refused"
	for name, mutate := range map[string]func(*corev1.PodSpec){
		"privileged": func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Privileged = ptr.To(true)
		},
		"privileged init container": func(p *corev1.PodSpec) {
			p.InitContainers = []corev1.Container{{Name: "init", Image: "x", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
		},
		"hostPID": func(p *corev1.PodSpec) { p.HostPID = true },
		"hostIPC": func(p *corev1.PodSpec) { p.HostIPC = true },
		"hostNetwork where no admin allowed Host": func(p *corev1.PodSpec) {
			p.HostNetwork = true
		},
		"SYS_ADMIN": func(p *corev1.PodSpec) {
			p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW", "SYS_ADMIN"}
		},
		"nodeName": func(p *corev1.PodSpec) { p.NodeName = "control-plane" },
	} {
		g.Expect(dryRun(containerJob(mutate))).To(MatchError(ContainSubstring(nodeRoot)), name)
	}
	// The worker's template is checked as the launcher's.
	job := find(container, "MPIJob").(*mpiv2.MPIJob)
	job.Spec.MPIReplicaSpecs[mpiv2.MPIReplicaTypeWorker].Template.Spec.HostPID = true
	g.Expect(dryRun(job)).To(MatchError(ContainSubstring(nodeRoot)), "a worker with hostPID")
	// NET_RAW alone is the Host pods' (and allowed everywhere: it stays in the pod's network).
	g.Expect(dryRun(containerJob(func(p *corev1.PodSpec) {
		p.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
	}))).To(Succeed(), "NET_RAW")

	claim := func(mutate func(*corev1.PersistentVolumeClaim)) client.Object {
		c := find(container, "PersistentVolumeClaim").(*corev1.PersistentVolumeClaim)
		mutate(c)
		return c
	}
	claimRefused := "is not that, and is refused"
	g.Expect(dryRun(claim(func(c *corev1.PersistentVolumeClaim) {
		c.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "tenant-data"}
	}))).To(MatchError(ContainSubstring("PersistentVolumeClaim "+tenant+"/demo-container-1-shared "+claimRefused)), "a clone of a tenant's claim")
	g.Expect(dryRun(claim(func(c *corev1.PersistentVolumeClaim) {
		c.Spec.DataSourceRef = &corev1.TypedObjectReference{APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: "nightly"}
	}))).To(MatchError(ContainSubstring(claimRefused)), "a snapshot restored")
	g.Expect(dryRun(claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "nfs-finance" }))).To(
		MatchError(ContainSubstring(claimRefused)), "an Available volume picked by name")
	g.Expect(dryRun(claim(func(c *corev1.PersistentVolumeClaim) { c.Name = "demo-container-1-data" }))).To(
		MatchError(ContainSubstring(claimRefused)), "another name")

	service := func(mutate func(*corev1.Service)) client.Object {
		s := find(vm, "Service").(*corev1.Service)
		mutate(s)
		return s
	}
	serviceRefused := "Service " + tenant + "/demo-vm-1 is not one, and is refused"
	g.Expect(dryRun(service(func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"10.0.0.1"} }))).To(
		MatchError(ContainSubstring(serviceRefused)), "externalIPs")
	g.Expect(dryRun(service(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.Type = "", corev1.ServiceTypeLoadBalancer
	}))).To(MatchError(ContainSubstring(serviceRefused)), "a LoadBalancer")
	g.Expect(dryRun(service(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.Type, s.Spec.Selector, s.Spec.ExternalName = "", corev1.ServiceTypeExternalName, nil, "example.com"
	}))).To(MatchError(ContainSubstring(serviceRefused)), "an ExternalName")
	g.Expect(dryRun(service(func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "tenant-db"} }))).To(
		MatchError(ContainSubstring(serviceRefused)), "a selector of a tenant's pods")

	networkPolicy := func(mutate func(*networkingv1.NetworkPolicySpec)) client.Object {
		np := find(container, "NetworkPolicy").(*networkingv1.NetworkPolicy)
		mutate(&np.Spec)
		return np
	}
	npRefused := "NetworkPolicy " + tenant + "/demo-container-1 is not one, and is refused"
	for name, mutate := range map[string]func(*networkingv1.NetworkPolicySpec){
		"allow-all ingress":  func(s *networkingv1.NetworkPolicySpec) { s.Ingress = []networkingv1.NetworkPolicyIngressRule{{}} },
		"every pod selected": func(s *networkingv1.NetworkPolicySpec) { s.PodSelector = metav1.LabelSelector{} },
		"another run's pods": func(s *networkingv1.NetworkPolicySpec) { s.PodSelector.MatchLabels[vmbenchv1.LabelRun] = "other-run" },
		"any namespace": func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress[0].From[0].NamespaceSelector = &metav1.LabelSelector{}
		},
		"another run as peer": func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress[0].From[0].PodSelector.MatchLabels[vmbenchv1.LabelRun] = "x"
		},
		"an address block": func(s *networkingv1.NetworkPolicySpec) {
			s.Ingress[0].From = append(s.Ingress[0].From, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0"}})
		},
		"an egress rule": func(s *networkingv1.NetworkPolicySpec) {
			s.PolicyTypes = append(s.PolicyTypes, networkingv1.PolicyTypeEgress)
			s.Egress = []networkingv1.NetworkPolicyEgressRule{{}}
		},
	} {
		g.Expect(dryRun(networkPolicy(mutate))).To(MatchError(ContainSubstring(npRefused)), name)
	}

	// A PodDisruptionBudget holds drains: only the run's own, over the run's pods, is the manager's.
	budget := func(mutate func(*policyv1.PodDisruptionBudget)) client.Object {
		pdb := find(container, "PodDisruptionBudget").(*policyv1.PodDisruptionBudget)
		mutate(pdb)
		return pdb
	}
	pdbRefused := "the vmbench manager creates only the PodDisruptionBudget <run> of a run, selecting its pods"
	for name, mutate := range map[string]func(*policyv1.PodDisruptionBudget){
		"every pod selected":   func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector = &metav1.LabelSelector{} },
		"another run's pods":   func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector.MatchLabels[vmbenchv1.LabelRun] = "other-run" },
		"another suite's pods": func(p *policyv1.PodDisruptionBudget) { p.Spec.Selector.MatchLabels[vmbenchv1.LabelSuite] = "other" },
		"a tenant's pods too": func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}
		},
		"maxUnavailable": func(p *policyv1.PodDisruptionBudget) {
			p.Spec.MinAvailable, p.Spec.MaxUnavailable = nil, ptr.To(intstr.FromInt32(0))
		},
		"a percentage": func(p *policyv1.PodDisruptionBudget) { p.Spec.MinAvailable = ptr.To(intstr.FromString("100%")) },
		"another name": func(p *policyv1.PodDisruptionBudget) { p.Name = "hold-everything" },
	} {
		g.Expect(dryRun(budget(mutate))).To(MatchError(ContainSubstring(pdbRefused)), name)
	}

	// The claim for real: the manager cannot point its pending claim at a volume of its choosing
	// (the API server would let an update set volumeName while it is empty); once the binder has
	// set it, the manager's next apply is still admitted.
	shared := find(container, "PersistentVolumeClaim").(*corev1.PersistentVolumeClaim)
	g.Expect(apply(shared)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), shared) })
	g.Expect(apply(claim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = "nfs-finance" }), client.DryRunAll)).To(
		MatchError(ContainSubstring(claimRefused)), "the manager binds its pending claim to a volume by name")
	bound := &corev1.PersistentVolumeClaim{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(shared), bound)).To(Succeed())
	bound.Spec.VolumeName = "pv-by-the-binder"
	g.Expect(k8s.Update(ctx, bound)).To(Succeed(), "the binder's update")
	g.Expect(apply(find(container, "PersistentVolumeClaim"))).To(Succeed(), "the manager re-applies its bound claim")

	// Pods: the migration benchmark's probe worker of a Container run (the container arm) or of a VM
	// run (the in-guest probe's peer), and nothing else; evictions of such workers alone.
	probeRun := builtRun(tenant, vmbenchv1.Platform{Name: "container", Type: vmbenchv1.PlatformContainer})
	probe := func(mutate func(*corev1.Pod)) client.Object {
		pod := platform.ProbeWorkerPod(probeRun, 2, time.Minute, "node-a")
		mutate(pod)
		return pod
	}
	// The manager creates its probe workers (it may not patch pods).
	createDry := func(obj client.Object) error { return writer.Create(ctx, obj, client.DryRunAll) }
	g.Expect(createDry(probe(func(*corev1.Pod) {}))).To(Succeed(), "the manager's own probe worker")
	// A VM run's peer of the in-guest probe (no load, reporting to the master VM) is admitted as is.
	vmPeer := platform.ProbeWorkerPod(builtRun(tenant, vmbenchv1.Platform{Name: "vm", Type: vmbenchv1.PlatformVM}), 1, time.Minute, "")
	g.Expect(createDry(vmPeer)).To(Succeed(), "the manager's peer probe worker of a VM run")
	podRefused := "the vmbench manager creates only the probe worker pod <run>-probe-<k> of a run, of the runner image vmbench/runner:test"
	for name, mutate := range map[string]func(*corev1.Pod){
		"privileged": func(p *corev1.Pod) {
			// The API server refuses privileged with allowPrivilegeEscalation false itself.
			p.Spec.Containers[0].SecurityContext.Privileged, p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true), nil
		},
		"escalation": func(p *corev1.Pod) { p.Spec.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil },
		"a capability": func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_RAW"}
		},
		"hostPID":         func(p *corev1.Pod) { p.Spec.HostPID = true },
		"hostNetwork":     func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		"nodeName":        func(p *corev1.Pod) { p.Spec.NodeName = "control-plane" },
		"another image":   func(p *corev1.Pod) { p.Spec.Containers[0].Image = "registry.example/miner:1" },
		"a token mounted": func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = nil },
		"a Secret": func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "tenant-db"}}}}
		},
		"a hostPath": func(p *corev1.Pod) {
			p.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		},
		"another name": func(p *corev1.Pod) { p.Name = "tenant-shell" },
		"not its role": func(p *corev1.Pod) { p.Labels[vmbenchv1.LabelRole] = vmbenchv1.RoleMaster },
		"a second one": func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
			p.Spec.Containers[1].Name = "more"
		},
	} {
		g.Expect(createDry(probe(mutate))).To(MatchError(ContainSubstring(podRefused)), name)
	}
	// A tenant's pod is not the manager's to evict (a drain's own evictions are the cluster admin's).
	tenantPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "tenant-db", Namespace: tenant, Labels: map[string]string{vmbenchv1.LabelSuite: "demo"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "postgres"}}}}
	g.Expect(k8s.Create(ctx, tenantPod)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), tenantPod) })
	evict := func(name string) error {
		return writer.SubResource("eviction").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant}},
			&policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant}, DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
	}
	g.Expect(evict("tenant-db")).To(MatchError(ContainSubstring("the vmbench manager evicts only the probe worker pods of its runs")),
		"a labelled tenant pod")
	worker := probe(func(*corev1.Pod) {})
	g.Expect(k8s.Create(ctx, worker)).To(Succeed())
	t.Cleanup(func() { _ = k8s.Delete(context.Background(), worker) })
	g.Expect(evict(worker.GetName())).To(Succeed(), "the manager evicts its own probe worker")
}
