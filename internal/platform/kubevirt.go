package platform

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// KubeVirtListGVK is the list kind of KubeVirt's own configuration resource (one per cluster).
var KubeVirtListGVK = schema.GroupVersionKind{Group: "kubevirt.io", Version: "v1", Kind: "KubeVirtList"}

// ClusterVMNetwork is the binding that gives every guest an address its peers can reach on a cluster
// whose KubeVirt CRs are kubevirts: passt where the cluster registered KubeVirt's passt binding
// plugin (the install does that where the kernel cannot make the dummy link that bridge needs),
// otherwise bridge.
func ClusterVMNetwork(kubevirts []unstructured.Unstructured) VMNetwork {
	for _, kv := range kubevirts {
		if _, found, _ := unstructured.NestedMap(kv.Object, "spec", "configuration", "network", "binding", string(VMNetworkPasst)); found {
			return VMNetworkPasst
		}
	}
	return VMNetworkBridge
}
