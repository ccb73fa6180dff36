package platform

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

// runNetworkPolicy isolates a run's members: the MPI launcher and workers, or the VMs' virt-launcher
// pods, which carry their VMI's labels. Only pods of the same run may connect to them, on any port
// and protocol: sshd, OpenMPI's ports (chosen at random in pods), the iperf3 servers, ping's ICMP
// and the master VM's NFS server of the Shared target all stay between the run's own members. Egress is left open, for DNS among others. Nothing else
// needs to reach these pods: the MPI Operator and KubeVirt read their state from the API server,
// vmbench reads the log through it, and traffic from a pod's own node, such as the kubelet's
// probes, is always allowed whatever the policy says.
func runNetworkPolicy(run Run) *networkingv1.NetworkPolicy {
	members := metav1.LabelSelector{MatchLabels: map[string]string{
		vmbenchv1.LabelSuite: run.Suite.Name,
		vmbenchv1.LabelRun:   run.Name,
	}}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1TypeMeta(networkingv1.SchemeGroupVersion.String(), "NetworkPolicy"),
		ObjectMeta: objectMeta(run, run.Name),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: members,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{PodSelector: members.DeepCopy()}},
			}},
		},
	}
}
