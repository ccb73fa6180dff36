package chart

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// kustomized reads the objects `kubectl apply -k dir` installs, by kind and name, following each
// kustomization.yaml's resources (files and directories); it fails on anything else a
// kustomization could do to them, which this reading would miss.
func kustomized(t *testing.T, dir string) rendered {
	t.Helper()
	objs := rendered{}
	var walk func(dir string)
	walk = func(dir string) {
		var k map[string]any
		readYAML(t, filepath.Join(dir, "kustomization.yaml"), &k)
		for key := range k {
			if key != "resources" {
				t.Fatalf("%s/kustomization.yaml uses %s, which the test does not apply", dir, key)
			}
		}
		resources, _ := k["resources"].([]any)
		for _, r := range resources {
			path := filepath.Join(dir, r.(string))
			if info, err := os.Stat(path); err != nil {
				t.Fatal(err)
			} else if info.IsDir() {
				walk(path)
				continue
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
			for {
				doc, err := reader.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal(doc, &u.Object); err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if len(u.Object) == 0 {
					continue
				}
				if objs[u.GetKind()] == nil {
					objs[u.GetKind()] = map[string][]byte{}
				}
				objs[u.GetKind()][u.GetName()] = doc
			}
		}
	}
	walk(dir)
	return objs
}

// The kustomize install (config/default) has the same admission policies and the same roles
// aggregated into edit and view as the chart with its default values (S13): a policy the chart adds
// and config/ lacks, such as the suite and schedule status policies, would leave a kustomize
// install open to whoever is granted /status.
func TestKustomizeHasTheChartsPoliciesAndRoles(t *testing.T) {
	chart := render(t)
	config := kustomized(t, filepath.Join(root, "config", "default"))

	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if diff := cmp.Diff(chart.names(kind), config.names(kind)); diff != "" {
			t.Errorf("%ss (-chart +config/default):\n%s", kind, diff)
			continue
		}
		for _, name := range chart.names(kind) {
			if kind == "ValidatingAdmissionPolicy" {
				var c, k admissionv1.ValidatingAdmissionPolicy
				chart.get(t, kind, name, &c)
				config.get(t, kind, name, &k)
				if diff := cmp.Diff(c.Spec, k.Spec); diff != "" {
					t.Errorf("%s %s (-chart +config/default):\n%s", kind, name, diff)
				}
				continue
			}
			var c, k admissionv1.ValidatingAdmissionPolicyBinding
			chart.get(t, kind, name, &c)
			config.get(t, kind, name, &k)
			if diff := cmp.Diff(c.Spec, k.Spec); diff != "" {
				t.Errorf("%s %s (-chart +config/default):\n%s", kind, name, diff)
			}
		}
	}
	if !slices.Contains(config.names("ValidatingAdmissionPolicy"), "vmbench-suite-status") ||
		!slices.Contains(config.names("ValidatingAdmissionPolicy"), "vmbench-schedule-status") {
		t.Errorf("config/default has no suite or schedule status policy: %v", config.names("ValidatingAdmissionPolicy"))
	}

	aggregated := func(objs rendered) map[string]*rbacv1.ClusterRole {
		out := map[string]*rbacv1.ClusterRole{}
		for _, name := range objs.names("ClusterRole") {
			cr := &rbacv1.ClusterRole{}
			objs.get(t, "ClusterRole", name, cr)
			if aggregatedToUsers(cr) {
				out[name] = cr
			}
		}
		return out
	}
	chartRoles, configRoles := aggregated(chart), aggregated(config)
	if len(chartRoles) == 0 {
		t.Fatal("the chart renders no role aggregated into edit or view")
	}
	for name, c := range chartRoles {
		k, ok := configRoles[name]
		if !ok {
			t.Errorf("config/default has no ClusterRole %s aggregated as the chart's", name)
			continue
		}
		if diff := cmp.Diff(c.Rules, k.Rules); diff != "" {
			t.Errorf("ClusterRole %s rules (-chart +config/default):\n%s", name, diff)
		}
		for label, v := range c.Labels {
			if strings.HasPrefix(label, "rbac.authorization.k8s.io/") && k.Labels[label] != v {
				t.Errorf("ClusterRole %s: config/default lacks the label %s=%s", name, label, v)
			}
		}
	}
	for name := range configRoles {
		if _, ok := chartRoles[name]; !ok {
			t.Errorf("config/default has the aggregated ClusterRole %s, which the chart does not render", name)
		}
	}
}
