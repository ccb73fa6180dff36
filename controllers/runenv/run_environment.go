package runenv

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// What the run environment is made of, as the suite records it for each run and a schedule
// compares between records: the nodes' kernel, runtime and kubelet, and the KubeVirt version.

// hostModelCPULabel prefixes the label by which KubeVirt's node labeller names a node's host CPU model.
const hostModelCPULabel = "host-model-cpu.node.kubevirt.io/"

// nodeEnvironment is what the node's kubelet reports of it, and its CPU model where KubeVirt's node
// labeller named it.
func NodeEnvironment(node *corev1.Node) vmbenchv1.NodeEnvironment {
	info := node.Status.NodeInfo
	env := vmbenchv1.NodeEnvironment{Name: node.Name, KernelVersion: conditions.Truncate(info.KernelVersion, 64), OSImage: conditions.Truncate(info.OSImage, 128),
		ContainerRuntimeVersion: conditions.Truncate(info.ContainerRuntimeVersion, 64), KubeletVersion: conditions.Truncate(info.KubeletVersion, 32),
		Architecture: conditions.Truncate(info.Architecture, 16)}
	var models []string
	for k, v := range node.Labels {
		if model, ok := strings.CutPrefix(k, hostModelCPULabel); ok && v == "true" {
			models = append(models, model)
		}
	}
	slices.Sort(models)
	env.CPUModel = conditions.Truncate(strings.Join(models, ","), 64)
	return env
}

// kubeVirtVersion is the version the cluster's KubeVirt CR reports it deployed.
func KubeVirtVersion(kubevirts []unstructured.Unstructured) string {
	for _, kv := range kubevirts {
		if v, _, _ := unstructured.NestedString(kv.Object, "status", "observedKubeVirtVersion"); v != "" {
			return conditions.Truncate(v, 64)
		}
	}
	return ""
}

// shortHash is the first n hex digits of the SHA-256 of v's JSON.
func ShortHash(v any, n int) string {
	b, err := json.Marshal(v)
	if err != nil {
		// The API's own types always marshal; should one not, its printed form still names it.
		b = fmt.Appendf(nil, "%+v", v)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:n]
}
