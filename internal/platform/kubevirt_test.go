package platform

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestClusterVMNetwork(t *testing.T) {
	kubevirt := func(spec map[string]any) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "spec": spec}}
	}
	passt := map[string]any{"configuration": map[string]any{"network": map[string]any{
		"binding": map[string]any{"passt": map[string]any{"sidecarImage": "vmbench/virt-network-passt-binding:v1.7.0"}}}}}
	other := map[string]any{"configuration": map[string]any{"network": map[string]any{
		"binding": map[string]any{"slirp": map[string]any{"sidecarImage": "x"}}}}}
	for _, tc := range []struct {
		name string
		kvs  []unstructured.Unstructured
		want VMNetwork
	}{
		{"no KubeVirt installed", nil, VMNetworkBridge},
		{"no bindings registered", []unstructured.Unstructured{kubevirt(map[string]any{})}, VMNetworkBridge},
		{"another plugin only", []unstructured.Unstructured{kubevirt(other)}, VMNetworkBridge},
		{"passt registered", []unstructured.Unstructured{kubevirt(passt)}, VMNetworkPasst},
		{"passt on any of several", []unstructured.Unstructured{kubevirt(other), kubevirt(passt)}, VMNetworkPasst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClusterVMNetwork(tc.kvs); got != tc.want {
				t.Errorf("ClusterVMNetwork = %q, want %q", got, tc.want)
			}
		})
	}
}
