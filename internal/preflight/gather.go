package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// KubeVirtResource is KubeVirt's own configuration resource.
var KubeVirtResource = schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "kubevirts"}

// Clients read the cluster.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// KubeletConfig returns a node's kubelet configuration (the kubelet's /configz, through the API
	// server's node proxy); nil when it cannot be read.
	KubeletConfig func(ctx context.Context, node string) ([]byte, error)
}

// Cluster is everything the checks look at, read once. Each error belongs to the field before it:
// a check that cannot see what it needs says so rather than guessing.
type Cluster struct {
	APIs    ServedAPIs
	APIsErr error

	Nodes    []corev1.Node
	NodesErr error

	Namespace    *corev1.Namespace
	NamespaceErr error

	Quotas         []corev1.ResourceQuota
	QuotasErr      error
	LimitRanges    []corev1.LimitRange
	LimitRangesErr error

	StorageClasses    []storagev1.StorageClass
	StorageClassesErr error

	KubeVirt    KubeVirtConfig
	KubeVirtErr error

	// CPUManager holds the kubelets' CPU manager policy by node, where their configuration could be
	// read; CPUManagerErr is why it could not.
	CPUManager    map[string]string
	CPUManagerErr error

	// ManagerNamespace is where the manager was looked for.
	ManagerNamespace string
	Manager          *Manager
	ManagerErr       error
}

// maxKubeletReads bounds how many kubelets are asked for their configuration, and kubeletTimeout how
// long each may take.
const (
	maxKubeletReads = 16
	kubeletTimeout  = 5 * time.Second
)

// Gather reads what the checks need. It never fails as a whole: each source's error is kept.
func Gather(ctx context.Context, c Clients, namespace, managerNamespace string) Cluster {
	out := Cluster{ManagerNamespace: managerNamespace}
	out.APIs, out.APIsErr = servedAPIs(c.Kube)

	if nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		out.NodesErr = err
	} else {
		out.Nodes = nodes.Items
	}
	out.Namespace, out.NamespaceErr = c.Kube.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if out.NamespaceErr != nil {
		out.Namespace = nil
	}
	if out.NamespaceErr == nil || apierrors.IsForbidden(out.NamespaceErr) {
		if quotas, err := c.Kube.CoreV1().ResourceQuotas(namespace).List(ctx, metav1.ListOptions{}); err != nil {
			out.QuotasErr = err
		} else {
			out.Quotas = quotas.Items
		}
		if lrs, err := c.Kube.CoreV1().LimitRanges(namespace).List(ctx, metav1.ListOptions{}); err != nil {
			out.LimitRangesErr = err
		} else {
			out.LimitRanges = lrs.Items
		}
	}
	if classes, err := c.Kube.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{}); err != nil {
		out.StorageClassesErr = err
	} else {
		out.StorageClasses = classes.Items
	}
	if slices.Contains(out.APIs[apiKey(VMIAPI)], VMIAPI.Version) && c.Dynamic != nil {
		list, err := c.Dynamic.Resource(KubeVirtResource).List(ctx, metav1.ListOptions{})
		if err != nil {
			out.KubeVirtErr = err
		} else {
			out.KubeVirt = KubeVirtConfigOf(list.Items)
		}
	}
	if deployments, err := c.Kube.AppsV1().Deployments(managerNamespace).List(ctx, metav1.ListOptions{}); err != nil {
		out.ManagerErr = err
	} else {
		out.Manager = ManagerFrom(deployments.Items)
	}
	// Last, as a kubelet behind the API server's proxy may answer slowly or not at all.
	out.CPUManager, out.CPUManagerErr = cpuManagerPolicies(ctx, c.KubeletConfig, out.Nodes)
	return out
}

// servedAPIs asks discovery which versions serve each resource vmbench needs.
func servedAPIs(kube kubernetes.Interface) (ServedAPIs, error) {
	groups, err := kube.Discovery().ServerGroups()
	if err != nil {
		return nil, err
	}
	out := ServedAPIs{}
	for _, api := range APIs() {
		for _, g := range groups.Groups {
			if g.Name != api.Group {
				continue
			}
			for _, v := range g.Versions {
				resources, err := kube.Discovery().ServerResourcesForGroupVersion(v.GroupVersion)
				if err != nil {
					// An aggregated API that is down; the group's other versions may answer.
					continue
				}
				for _, r := range resources.APIResources {
					if r.Name == api.Resource {
						out[apiKey(api)] = append(out[apiKey(api)], v.Version)
					}
				}
			}
		}
	}
	return out, nil
}

// cpuManagerPolicies reads the kubelets' CPU manager policy from their configuration, from the
// schedulable nodes, stopping at the first error: a user who may not proxy to one kubelet may not
// proxy to any.
func cpuManagerPolicies(ctx context.Context, read func(context.Context, string) ([]byte, error), nodes []corev1.Node) (map[string]string, error) {
	if read == nil {
		return nil, fmt.Errorf("no kubelet reader")
	}
	out := map[string]string{}
	reads := 0
	for _, n := range nodes {
		if n.Spec.Unschedulable || reads == maxKubeletReads {
			continue
		}
		reads++
		readCtx, cancel := context.WithTimeout(ctx, kubeletTimeout)
		raw, err := read(readCtx, n.Name)
		cancel()
		if err != nil {
			return out, fmt.Errorf("reading node %s's kubelet configuration (nodes/proxy): %w", n.Name, err)
		}
		policy, err := CPUManagerPolicy(raw)
		if err != nil {
			return out, fmt.Errorf("node %s: %w", n.Name, err)
		}
		out[n.Name] = policy
	}
	return out, nil
}

// CPUManagerPolicy reads the policy from a kubelet's /configz answer; the kubelet's default is none.
func CPUManagerPolicy(configz []byte) (string, error) {
	var cfg struct {
		KubeletConfig *struct {
			CPUManagerPolicy string `json:"cpuManagerPolicy"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(configz, &cfg); err != nil || cfg.KubeletConfig == nil {
		return "", fmt.Errorf("the kubelet's configz is not a kubelet configuration")
	}
	if cfg.KubeletConfig.CPUManagerPolicy == "" {
		return "none", nil
	}
	return cfg.KubeletConfig.CPUManagerPolicy, nil
}

// Run is every check over what Gather read, in the table's order. Pulling images is separate
// (PullImages), as it creates pods.
func Run(needs Needs, cl Cluster) Report {
	var r Report
	if cl.APIsErr != nil {
		r = append(r, fail("api", "cannot ask the API server which APIs it serves: "+firstLine(cl.APIsErr), "check --kubeconfig and --context"))
	} else {
		r = append(r, CheckAPIs(needs, cl.APIs)...)
	}
	r = append(r, CheckManager(cl.Manager, cl.ManagerNamespace, cl.ManagerErr))
	if cl.NodesErr != nil {
		r = append(r, warn("nodes", "cannot list nodes: "+firstLine(cl.NodesErr), "the fit, KVM and CPU manager checks need get/list on nodes"))
	} else {
		kv := cl.KubeVirt
		if cl.KubeVirtErr != nil {
			// Unreadable, not absent: the VMs' fit is checked as if KubeVirt ran without emulation.
			kv.Found = true
		}
		r = append(r, CheckNodes(needs, cl.Nodes, kv)...)
		forbid := cl.Manager != nil && cl.Manager.Emulation == "forbid"
		vmiServed := slices.Contains(cl.APIs[apiKey(VMIAPI)], VMIAPI.Version)
		r = append(r, CheckVirtualization(needs, cl.Nodes, cl.KubeVirt, cl.KubeVirtErr, vmiServed, forbid))
		r = append(r, CheckCPUManager(needs, cl.Nodes, cl.CPUManager, cl.CPUManagerErr))
		r = append(r, CheckVMSettings(needs, cl.Nodes, cl.KubeVirt, cl.KubeVirtErr)...)
	}
	r = append(r, CheckNamespace(needs, cl.Namespace, cl.NamespaceErr))
	if !apierrors.IsNotFound(cl.NamespaceErr) {
		r = append(r, CheckPodSecurity(needs, cl.Namespace, cl.KubeVirt.Launcher))
		r = append(r, CheckQuotas(needs, cl.Quotas, cl.QuotasErr, cl.LimitRanges)...)
		r = append(r, CheckLimitRanges(needs, cl.LimitRanges, cl.LimitRangesErr)...)
	}
	r = append(r, CheckSharedStorage(needs, cl.StorageClasses, cl.StorageClassesErr))
	return r
}
