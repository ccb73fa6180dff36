package platform

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	mpiv2 "github.com/kubeflow/mpi-operator/pkg/apis/kubeflow/v2beta1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func policiesOf(objs []client.Object) []*networkingv1.NetworkPolicy {
	var out []*networkingv1.NetworkPolicy
	for _, o := range objs {
		if np, ok := o.(*networkingv1.NetworkPolicy); ok {
			out = append(out, np)
		}
	}
	return out
}

func selects(t *testing.T, sel *metav1.LabelSelector, podLabels map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatalf("selector %v: %v", sel, err)
	}
	return s.Matches(labels.Set(podLabels))
}

// The policy of a run selects its pods and admits ingress from them only, on every port and
// protocol; egress stays open.
func TestRunNetworkPolicy(t *testing.T) {
	run := testRun(containerPlatform)
	run.NetworkPolicy = true
	np := runNetworkPolicy(run)
	want := metav1.LabelSelector{MatchLabels: map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-container-1"}}
	if np.Name != "demo-container-1" || np.Namespace != "bench" {
		t.Errorf("policy %s/%s, want bench/demo-container-1", np.Namespace, np.Name)
	}
	if np.APIVersion != "networking.k8s.io/v1" || np.Kind != "NetworkPolicy" {
		t.Errorf("TypeMeta %s %s, want networking.k8s.io/v1 NetworkPolicy (for server-side apply)", np.APIVersion, np.Kind)
	}
	if diff := cmp.Diff(runLabels(run), np.Labels); diff != "" {
		t.Errorf("labels mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, np.Spec.PodSelector); diff != "" {
		t.Errorf("podSelector mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes); diff != "" {
		t.Errorf("policyTypes mismatch (-want +got):\n%s", diff)
	}
	if len(np.Spec.Egress) != 0 {
		t.Errorf("egress rules %v, want none", np.Spec.Egress)
	}
	wantIngress := []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &want}}}}
	if diff := cmp.Diff(wantIngress, np.Spec.Ingress); diff != "" {
		t.Errorf("ingress mismatch (-want +got):\n%s", diff)
	}

	// Another run's pods, or another suite's, are not peers.
	peer := np.Spec.Ingress[0].From[0].PodSelector
	for _, other := range []map[string]string{
		{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-container-2"},
		{vmbenchv1.LabelSuite: "other", vmbenchv1.LabelRun: "demo-container-1"},
		{"app": "anything"},
	} {
		if selects(t, peer, other) {
			t.Errorf("pods labelled %v are admitted", other)
		}
	}
}

// Container and VM runs get the policy when the run asks for it, and it selects every member: the
// MPI launcher and workers, and each VM's virt-launcher pod, which carries its VMI's labels. Host
// runs get none, since NetworkPolicies do not govern hostNetwork pods.
func TestBuildAddsTheNetworkPolicy(t *testing.T) {
	for _, tt := range []struct {
		name    string
		adapter Adapter
		run     Run
		want    int
	}{
		{"container", MPIJobAdapter{}, testRun(containerPlatform), 1},
		{"vm", VMIAdapter{}, vmRun(), 1},
		{"host", MPIJobAdapter{}, testRun(vmbenchv1.Platform{Name: "host", Type: vmbenchv1.PlatformHost}), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			off, err := tt.adapter.Build(tt.run)
			if err != nil {
				t.Fatal(err)
			}
			if got := policiesOf(off); len(got) != 0 {
				t.Errorf("NetworkPolicy false: got %d policies", len(got))
			}
			tt.run.NetworkPolicy = true
			objs, err := tt.adapter.Build(tt.run)
			if err != nil {
				t.Fatal(err)
			}
			policies := policiesOf(objs)
			if len(policies) != tt.want {
				t.Fatalf("got %d policies, want %d", len(policies), tt.want)
			}
			if tt.want == 0 {
				return
			}
			if len(objs) != len(off)+1 {
				t.Errorf("the policy changed the other children: %v, before %v", ids(objs), ids(off))
			}
			sel := &policies[0].Spec.PodSelector
			members := 0
			for _, o := range objs {
				switch o := o.(type) {
				case *mpiv2.MPIJob:
					for role, spec := range o.Spec.MPIReplicaSpecs {
						members++
						if !selects(t, sel, spec.Template.Labels) || !selects(t, policies[0].Spec.Ingress[0].From[0].PodSelector, spec.Template.Labels) {
							t.Errorf("the policy leaves out the %s pods", role)
						}
					}
				case *kubevirtv1.VirtualMachineInstance:
					members++
					if !selects(t, sel, o.Labels) {
						t.Errorf("the policy leaves out %s's virt-launcher pod", o.Name)
					}
				}
			}
			if members == 0 {
				t.Error("no members found")
			}
		})
	}
}
