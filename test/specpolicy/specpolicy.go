// Package specpolicy installs the ValidatingAdmissionPolicy vmbench-suite-spec of config/admission
// (the cross-field rules of a suite's spec, out of the CRD) into an envtest API server, as the chart
// installs it, so that the envtests and the scale benchmarks see the refusals and pay the cost an
// installed cluster does.
package specpolicy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// WithoutLabel marks a namespace the policy leaves alone: there a suite that breaks a cross-field
// rule is created, and the manager must refuse it (InvalidSpec), as where the policy is not installed.
const WithoutLabel = "vmbench.io/test-without-spec-policy"

// Install creates the policy and its binding from root/config/admission/suite_spec.yaml (the binding
// skipping namespaces labelled WithoutLabel) and waits until the API server enforces it.
func Install(ctx context.Context, c client.Client, root string) error {
	raw, err := os.ReadFile(filepath.Join(root, "config", "admission", "suite_spec.yaml"))
	if err != nil {
		return err
	}
	policyDoc, bindingDoc, ok := strings.Cut(string(raw), "\n---\n")
	if !ok {
		return fmt.Errorf("suite_spec.yaml holds no binding after the policy")
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	if err := yaml.UnmarshalStrict([]byte(policyDoc), policy); err != nil {
		return fmt.Errorf("the policy of suite_spec.yaml: %w", err)
	}
	if err := yaml.UnmarshalStrict([]byte(bindingDoc), binding); err != nil {
		return fmt.Errorf("the binding of suite_spec.yaml: %w", err)
	}
	binding.Spec.MatchResources = &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: WithoutLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}}
	if err := c.Create(ctx, policy); err != nil {
		return fmt.Errorf("creating the policy: %w", err)
	}
	if err := c.Create(ctx, binding); err != nil {
		return fmt.Errorf("creating the binding: %w", err)
	}
	// A new policy takes a moment to be enforced: a suite whose baseline names no platform is refused
	// by the policy alone once it is.
	probe := &vmbenchv1.BenchmarkSuite{ObjectMeta: metav1.ObjectMeta{Name: "spec-policy-probe", Namespace: "default"},
		Spec: vmbenchv1.BenchmarkSuiteSpec{Baseline: "bare",
			Benchmarks: []vmbenchv1.Benchmark{{Name: "cpu", Type: vmbenchv1.BenchmarkSysbenchCPU}}}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if err != nil && strings.Contains(err.Error(), "spec.baseline must name one of spec.platforms") {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				return fmt.Errorf("the policy %s is not enforced after 30 s: a suite with baseline bare was admitted", policy.Name)
			}
			return fmt.Errorf("the policy %s is not enforced after 30 s: a suite with baseline bare got: %w", policy.Name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
