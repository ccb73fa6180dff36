package chart

import (
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// The schedule history policy matches creates and updates of ConfigMaps carrying
// vmbench.io/history-of, lets the manager's service account alone write them, renders behind the
// status policies' switches, and config/admission holds the same policy.
func TestScheduleHistoryPolicy(t *testing.T) {
	const name = "vmbench-schedule-history"
	objs := render(t)
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	objs.get(t, "ValidatingAdmissionPolicy", name, policy)
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	objs.get(t, "ValidatingAdmissionPolicyBinding", name, binding)
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].Resources, []string{"configmaps"}) ||
		!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}) {
		t.Errorf("the policy matches %+v, want creates and updates of ConfigMaps", rules)
	}
	if conds := policy.Spec.MatchConditions; len(conds) != 1 || !strings.Contains(conds[0].Expression, "'vmbench.io/history-of' in object.metadata.labels") {
		t.Errorf("match conditions %+v, want ConfigMaps labelled vmbench.io/history-of", conds)
	}
	if text := validationsText(policy); !strings.HasPrefix(text, "request.userInfo.username == 'system:serviceaccount:"+namespace+":vmbench-manager' ||") {
		t.Errorf("validations %s, want the manager's service account first", text)
	}
	if policy.Spec.FailurePolicy == nil || *policy.Spec.FailurePolicy != admissionv1.Fail || binding.Spec.PolicyName != name ||
		!slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
		t.Errorf("failurePolicy %v, binding %+v; want Fail and a Deny binding", policy.Spec.FailurePolicy, binding.Spec)
	}
	for _, set := range []string{"statusPolicy=false", "admissionPolicy.enabled=false"} {
		if _, ok := render(t, "--set", set)["ValidatingAdmissionPolicy"][name]; ok {
			t.Errorf("%s still renders %s", set, name)
		}
	}
	sameAsConfigAdmission(t, "schedule_history.yaml", policy, binding)
}
