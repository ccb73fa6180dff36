package v1alpha1

import corev1 "k8s.io/api/core/v1"

// Toleration is a pod's toleration (corev1.Toleration, the same fields and JSON), with its key and
// value bounded as the pod API bounds them. A type of its own so that the CRD can state those bounds:
// the API server refuses a CEL rule over the unbounded strings of corev1.Toleration, and a toleration
// the pod API refuses would fail every run's MPIJob and VMIs instead of the suite at admission.
type Toleration struct {
	// Key is the taint key the toleration applies to: a label name such as vmbench.io/dedicated, an
	// optional DNS prefix and '/', then at most 63 letters, digits, '-', '_' or '.'.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:XValidation:rule="self.indexOf('/') <= 253 && self.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$')",message="a toleration key must be a label name such as vmbench.io/dedicated, as the pod API requires: an optional DNS prefix of lowercase letters, digits, '-' and '.' (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Key string `json:"key,omitempty"`

	// Operator is Exists (any value) or Equal (the value below); empty means Equal.
	// +optional
	Operator corev1.TolerationOperator `json:"operator,omitempty"`

	// Value is the taint value the toleration matches with operator Equal: a label value.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$')",message="a toleration value must be a label value, as the pod API requires: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	Value string `json:"value,omitempty"`

	// Effect is the taint effect to match: NoSchedule, PreferNoSchedule or NoExecute; empty matches
	// every effect.
	// +optional
	Effect corev1.TaintEffect `json:"effect,omitempty"`

	// TolerationSeconds is how long a pod stays bound after a NoExecute taint appears; only with
	// effect NoExecute.
	// +optional
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Pod is the toleration as a pod's or a VMI's.
func (t Toleration) Pod() corev1.Toleration {
	return corev1.Toleration{Key: t.Key, Operator: t.Operator, Value: t.Value, Effect: t.Effect, TolerationSeconds: t.TolerationSeconds}
}

// PodTolerations are Tolerations as a pod's or a VMI's tolerations.
func (p Placement) PodTolerations() []corev1.Toleration {
	if len(p.Tolerations) == 0 {
		return nil
	}
	out := make([]corev1.Toleration, 0, len(p.Tolerations))
	for _, t := range p.Tolerations {
		out = append(out, t.Pod())
	}
	return out
}
