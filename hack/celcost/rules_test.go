// Package celcost measures, in process, what the BenchmarkSuite CRD's CEL rules cost kube-apiserver's
// validator for one suite: the same apiextensions-apiserver code that validates every create and
// every status write (docs/performance.md, "the API server's CEL rules"). It is a module of its own,
// so that the manager's module does not link the API server's packages.
//
//	cd hack/celcost && go test -run '^$' -bench . -benchtime 200x
package celcost

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// walk visits every schema node with its path (".spec.benchmarks[]" for a list's items).
func walk(s *schema.Structural, path string, visit func(s *schema.Structural, path string)) {
	visit(s, path)
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		walk(&p, path+"."+k, visit)
		s.Properties[k] = p
	}
	if s.Items != nil {
		walk(s.Items, path+"[]", visit)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		walk(s.AdditionalProperties.Structural, path+"{}", visit)
	}
}

// suiteSchema is the CRD's schema as kube-apiserver builds it, keeping the rules keep says yes to.
func suiteSchema(b *testing.B, keep func(path, rule string) bool) *schema.Structural {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "vmbench.io_benchmarksuites.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		b.Fatal(err)
	}
	in := &apiext.JSONSchemaProps{}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, in, nil); err != nil {
		b.Fatal(err)
	}
	s, err := schema.NewStructural(in)
	if err != nil {
		b.Fatal(err)
	}
	walk(s, "", func(x *schema.Structural, path string) {
		var kept apiextv1.ValidationRules
		for _, r := range x.XValidations {
			if keep(path, r.Rule) {
				kept = append(kept, r)
			}
		}
		x.XValidations = kept
	})
	return s
}

// suite is the scale benchmark's suite (test/scale), defaulted as the API server defaults it.
func suite(b *testing.B, s *schema.Structural) map[string]any {
	obj := &vmbenchv1.BenchmarkSuite{}
	obj.APIVersion, obj.Kind = vmbenchv1.GroupVersion.String(), "BenchmarkSuite"
	obj.Name, obj.Namespace = "s000", "scale"
	obj.Spec = vmbenchv1.BenchmarkSuiteSpec{Repetitions: 1, Benchmarks: []vmbenchv1.Benchmark{
		{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU},
		{Name: "net", Type: vmbenchv1.BenchmarkIperf3},
		{Name: "hpcc", Type: vmbenchv1.BenchmarkHPCC, HPCC: &vmbenchv1.HPCCParams{N: ptr.To[int32](3000), NB: 96}},
	}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		b.Fatal(err)
	}
	structuraldefaulting.Default(u, s)
	return u
}

// validate runs the CEL validator as a status write does: the new object against an unchanged old one.
func validate(b *testing.B, s *schema.Structural) {
	v := cel.NewValidator(s, true, celconfig.PerCallLimit)
	obj := suite(b, s)
	old := runtime.DeepCopyJSON(obj)
	b.ResetTimer()
	for range b.N {
		if v == nil {
			continue
		}
		if errs, _ := v.Validate(context.Background(), nil, s, obj, old, celconfig.RuntimeCELCostBudget); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}

// BenchmarkSuiteRules: every rule, and the CRD without the rules at the root of spec (the
// cross-field ones), without those on each benchmark, and without any. The 19 cross-field rules
// are the admission policy vmbench-suite-spec now (config/admission/suite_spec.yaml), so the CRD
// has none at the root of spec and "without-spec-root" validates what "all" does.
func BenchmarkSuiteRules(b *testing.B) {
	for _, c := range []struct {
		name string
		keep func(path, rule string) bool
	}{
		{"all", func(string, string) bool { return true }},
		{"without-spec-root", func(path, _ string) bool { return path != ".spec" }},
		{"without-per-benchmark", func(path, _ string) bool { return path != ".spec.benchmarks[]" }},
		{"none", func(string, string) bool { return false }},
	} {
		b.Run(c.name, func(b *testing.B) { validate(b, suiteSchema(b, c.keep)) })
	}
}

// BenchmarkEachRule validates with one rule at a time, a sub-benchmark per rule named by its
// place in the schema and its order there; each figure also holds the validator's fixed cost (what
// "none" costs above). The costliest first:
//
//	go test -run '^$' -bench EachRule -benchtime 200x | sort -t$'\t' -k3 -rn | head
func BenchmarkEachRule(b *testing.B) {
	type rule struct{ path, text string }
	var rules []rule
	walk(suiteSchema(b, func(string, string) bool { return true }), "", func(x *schema.Structural, path string) {
		for _, r := range x.XValidations {
			rules = append(rules, rule{path, r.Rule})
		}
	})
	for i, r := range rules {
		b.Run(fmt.Sprintf("%03d%s", i, r.path), func(b *testing.B) {
			validate(b, suiteSchema(b, func(path, text string) bool { return path == r.path && text == r.text }))
		})
	}
}
