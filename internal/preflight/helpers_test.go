package preflight

import (
	"errors"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
	"github.com/vmbench/vmbench/internal/suitefile"
)

const quickSample = "../../config/samples/suite-quick.yaml"

var testImages = platform.Images{Runner: "registry.example/runner:v1", VMDisk: "registry.example/vm-disk:v1", PullPolicy: corev1.PullIfNotPresent}

// kindNodes are testdata/kind-nodes.yaml: a tainted control plane and two 2-CPU KubeVirt workers.
func kindNodes(t *testing.T) []corev1.Node {
	t.Helper()
	raw, err := os.ReadFile("testdata/kind-nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string        `json:"apiVersion"`
		Kind       string        `json:"kind"`
		Items      []corev1.Node `json:"items"`
	}
	if err := yaml.UnmarshalStrict(raw, &list); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// node is a Ready node with the given allocatable CPU and memory, changed by opts.
func node(name, cpu, memory string, opts ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{}
	n.Name = name
	n.Labels = map[string]string{"kubernetes.io/hostname": name}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	for _, o := range opts {
		o(&n)
	}
	return n
}

func kubeVirtNode(kvm string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Labels[LabelKubeVirtNode] = "true"
		if kvm != "" {
			n.Status.Allocatable[KVMDevice] = resource.MustParse(kvm)
		}
	}
}

func tainted(key string) func(*corev1.Node) {
	return func(n *corev1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	}
}

func labelled(k, v string) func(*corev1.Node) {
	return func(n *corev1.Node) { n.Labels[k] = v }
}

func cordoned(n *corev1.Node) { n.Spec.Unschedulable = true }

func notReady(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }

func quick(t *testing.T) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	s, err := suitefile.Read(quickSample, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// shaped is the quick sample with another cluster shape and platforms.
func shaped(t *testing.T, cpu int32, cpuRequest, memory string, types ...vmbenchv1.PlatformType) *vmbenchv1.BenchmarkSuite {
	t.Helper()
	s := quick(t)
	s.Spec.Cluster.CPU = cpu
	s.Spec.Cluster.CPURequest = nil
	if cpuRequest != "" {
		s.Spec.Cluster.CPURequest = ptr.To(resource.MustParse(cpuRequest))
	}
	s.Spec.Cluster.Memory = ptr.To(resource.MustParse(memory))
	s.Spec.Cluster.MemoryRequest = nil
	if len(types) > 0 {
		s.Spec.Platforms = nil
		for _, typ := range types {
			s.Spec.Platforms = append(s.Spec.Platforms, vmbenchv1.Platform{Name: strings.ToLower(string(typ)), Type: typ})
		}
		s.Spec.Baseline = s.Spec.Platforms[0].Name
	}
	return s
}

func needsOf(t *testing.T, s *vmbenchv1.BenchmarkSuite, explicit bool) Needs {
	t.Helper()
	n, err := NewNeeds(s, explicit, "bench", testImages)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func byName(checks []Check, name string) Check {
	for _, c := range checks {
		if c.Name == name {
			return c
		}
	}
	return Check{Name: name, Result: "missing"}
}

// expect compares a check's result and the pieces its detail must hold.
func expect(t *testing.T, c Check, result Result, detail ...string) {
	t.Helper()
	if c.Result != result {
		t.Errorf("%s: result %s, want %s: %s", c.Name, c.Result, result, c.Detail)
	}
	for _, d := range detail {
		if !strings.Contains(c.Detail, d) {
			t.Errorf("%s: detail lacks %q:\n%s", c.Name, d, c.Detail)
		}
	}
}

var errForbidden = apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "a", errors.New("no"))
