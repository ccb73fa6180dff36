package chart

import (
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
)

// The schedule status policy lets the manager's service account alone write
// benchmarkschedules/status, behind the suite status policy's switches.
func TestScheduleStatusPolicyAdmitsOnlyTheManager(t *testing.T) {
	objs := render(t)
	policy := &admissionv1.ValidatingAdmissionPolicy{}
	objs.get(t, "ValidatingAdmissionPolicy", "vmbench-schedule-status", policy)
	rules := policy.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !slices.Equal(rules[0].Resources, []string{"benchmarkschedules/status"}) ||
		!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.Update}) {
		t.Errorf("the policy matches %+v, want updates of benchmarkschedules/status", rules)
	}
	if len(policy.Spec.Validations) != 1 ||
		policy.Spec.Validations[0].Expression != "request.userInfo.username == 'system:serviceaccount:vmbench-system:vmbench-manager'" {
		t.Errorf("validations %+v, want the manager's service account alone", policy.Spec.Validations)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{}
	objs.get(t, "ValidatingAdmissionPolicyBinding", "vmbench-schedule-status", binding)
	if binding.Spec.PolicyName != policy.Name || !slices.Equal(binding.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) {
		t.Errorf("binding %+v", binding.Spec)
	}
	for _, set := range []string{"statusPolicy=false", "admissionPolicy.enabled=false"} {
		off := render(t, "--set", set)
		if _, ok := off["ValidatingAdmissionPolicy"]["vmbench-schedule-status"]; ok {
			t.Errorf("%s still renders the schedule status policy", set)
		}
	}
}
