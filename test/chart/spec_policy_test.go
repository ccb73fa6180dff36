package chart

import (
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// The spec policy holds the cross-field rules of a suite's spec that left the CRD: it is rendered by
// default, matches creates and updates of suites and schedules only (never benchmarksuites/status,
// where the CRD's rules cost every status write), skips updates that leave the spec alone, denies,
// and goes with specPolicy=false or admissionPolicy.enabled=false.
func TestSpecPolicyMatchesSpecWritesOnly(t *testing.T) {
	objs := render(t)
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	objs.get(t, "ValidatingAdmissionPolicy", "vmbench-suite-spec", policy)
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].Resources, []string{"benchmarksuites", "benchmarkschedules"}) ||
		!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}) {
		t.Errorf("the policy matches %+v, want creates and updates of benchmarksuites and benchmarkschedules, no subresource", rules)
	}
	if c := policy.Spec.MatchConditions; len(c) != 1 || c[0].Expression != "request.operation == 'CREATE' || object.spec != oldObject.spec" {
		t.Errorf("match conditions %+v, want creates and changes of the spec only", c)
	}
	if n := len(policy.Spec.Validations); n != 20 {
		t.Fatalf("%d validations, want the 19 cross-field rules of the spec and the freeze of placement and sharedStorage", n)
	}
	for _, v := range policy.Spec.Validations[:19] {
		if !strings.HasPrefix(v.Expression, "[variables.spec].all(self, ") || v.MessageExpression == "" {
			t.Errorf("validation %q: want a rule bound to the spec, with its message", v.Expression)
		}
	}
	if freeze := policy.Spec.Validations[19]; !strings.Contains(freeze.Expression, "oldObject.status.startTime") ||
		!strings.Contains(freeze.Message, "placement and sharedStorage cannot change once the first run has started") {
		t.Errorf("the last validation %+v: want the freeze of placement and sharedStorage after the first run's start", freeze)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	objs.get(t, "ValidatingAdmissionPolicyBinding", "vmbench-suite-spec", binding)
	if binding.Spec.PolicyName != policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
		t.Errorf("binding %+v", binding.Spec)
	}
	for _, set := range []string{"specPolicy=false", "admissionPolicy.enabled=false"} {
		off := render(t, "--set", set)
		if _, ok := off["ValidatingAdmissionPolicy"]["vmbench-suite-spec"]; ok {
			t.Errorf("%s still renders the spec policy", set)
		}
	}
}
