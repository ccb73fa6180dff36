package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// metrics.networkPolicy keeps strangers away from /metrics (S10): off by default; on, it selects
// the manager's pods and admits only the metrics port, from the monitoring namespace or the
// namespaces and pods the values select.
func TestMetricsNetworkPolicy(t *testing.T) {
	if objs := render(t); len(objs["NetworkPolicy"]) != 0 {
		t.Fatalf("a NetworkPolicy by default: %v (a cluster whose Prometheus is elsewhere would stop scraping)", objs.names("NetworkPolicy"))
	}
	objs := render(t, "--set", "metrics.networkPolicy.enabled=true", "--set", "metrics.port=9443")
	d := &appsv1.Deployment{}
	objs.get(t, "Deployment", "vmbench-manager", d)
	np := &networkingv1.NetworkPolicy{}
	objs.get(t, "NetworkPolicy", "vmbench-metrics", np)
	want := networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{MatchLabels: d.Spec.Selector.MatchLabels},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To(intstr.FromInt32(9443))}},
			From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}},
		}},
	}
	if diff := cmp.Diff(want, np.Spec); diff != "" {
		t.Errorf("the metrics NetworkPolicy (-want +got):\n%s", diff)
	}
	if np.Namespace != namespace {
		t.Errorf("the NetworkPolicy is in %q, want the release namespace", np.Namespace)
	}

	objs = render(t, "--set", "metrics.networkPolicy.enabled=true",
		"--set", "metrics.networkPolicy.namespaceSelector.matchLabels.team=observability",
		"--set", "metrics.networkPolicy.podSelector.matchLabels.app\\.kubernetes\\.io/name=prometheus")
	objs.get(t, "NetworkPolicy", "vmbench-metrics", np)
	peer := np.Spec.Ingress[0].From
	if len(peer) != 1 || peer[0].NamespaceSelector.MatchLabels["team"] != "observability" ||
		peer[0].PodSelector == nil || peer[0].PodSelector.MatchLabels["app.kubernetes.io/name"] != "prometheus" {
		t.Errorf("the selectors of the values are not the peer: %+v", peer)
	}
}
