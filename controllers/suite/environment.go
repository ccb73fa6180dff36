package suite

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/runenv"
	"github.com/vmbench/vmbench/internal/platform"
)

// What a run ran on: the versions that an upgrade changes (nodes' kernels, OS images, runtimes and
// kubelets, KubeVirt, the images), read once per run when its members run, and kept in
// status.environments once however many runs share them.

// maxEnvironments bounds status.environments, as the CRD does.
const maxEnvironments = 4

// launcherComputeContainer is the virt-launcher pod's container that runs libvirt and QEMU.
const launcherComputeContainer = "compute"

// recordEnvironment reads, once per run, what the run's members run on and names it in
// active.Environment; the suite's parameters hash is set with the first. A run whose members are not
// all placed and started yet is looked at again on a later reconcile.
func (r *SuiteReconciler) recordEnvironment(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	platformType vmbenchv1.PlatformType, children []client.Object, pods []corev1.Pod) error {
	if active.Environment != "" {
		return nil
	}
	env, ready := environmentOf(platformType, children, pods)
	if !ready {
		return nil
	}
	var unreadable []string
	for i := range env.Nodes {
		node := &corev1.Node{}
		err := r.APIReader.Get(ctx, client.ObjectKey{Name: env.Nodes[i].Name}, node)
		switch {
		case apierrors.IsForbidden(err):
			unreadable = append(unreadable, env.Nodes[i].Name)
			continue
		case apierrors.IsNotFound(err):
			unreadable = append(unreadable, env.Nodes[i].Name)
			continue
		case err != nil:
			return fmt.Errorf("reading node %s for the environment of run %s: %w", env.Nodes[i].Name, active.Name, err)
		}
		env.Nodes[i] = runenv.NodeEnvironment(node)
	}
	var notes []string
	if len(unreadable) > 0 {
		notes = append(notes, fmt.Sprintf("nodes %s could not be read (the manager may not get nodes, as in a namespaced install, "+
			"or they are gone): grant the manager get on nodes to record their versions", strings.Join(unreadable, ", ")))
	}
	if platformType == vmbenchv1.PlatformVM {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(platform.KubeVirtListGVK)
		if err := r.APIReader.List(ctx, list); err != nil {
			notes = append(notes, fmt.Sprintf("KubeVirt's version could not be read: %v", err))
		} else {
			env.KubeVirtVersion = runenv.KubeVirtVersion(list.Items)
		}
	}
	env.Message = conditions.Truncate(strings.Join(notes, "; "), 256)
	st := &suite.Status
	if st.ParametersHash == "" {
		st.ParametersHash = parametersHash(suite)
	}
	active.Environment = keepEnvironment(st, env)
	return nil
}

// environmentOf is what the run's children and pods show of its environment: the nodes by name only
// (their versions are read from the API), the images by digest and as created, and the VMs' machine
// type. ready is false while a member
// is not on a node or a container has not started.
func environmentOf(platformType vmbenchv1.PlatformType, children []client.Object, pods []corev1.Pod) (env vmbenchv1.RunEnvironment, ready bool) {
	env.Platform = platformType
	nodes := map[string]bool{}
	var vmis []*kubevirtv1.VirtualMachineInstance
	for _, obj := range children {
		if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok {
			vmis = append(vmis, vmi)
		}
	}
	if platformType == vmbenchv1.PlatformVM && len(vmis) == 0 {
		return env, false
	}
	var machineTypes []string
	for _, vmi := range vmis {
		if vmi.Status.NodeName == "" || vmi.Status.Phase != kubevirtv1.Running {
			return env, false
		}
		nodes[vmi.Status.NodeName] = true
		if m := vmi.Status.Machine; m != nil && m.Type != "" && !slices.Contains(machineTypes, m.Type) {
			machineTypes = append(machineTypes, m.Type)
		}
		pod := launcherPodOf(vmi, pods)
		if pod == nil {
			return env, false
		}
		for _, c := range pod.Status.ContainerStatuses {
			switch {
			case c.Name == launcherComputeContainer && c.ImageID != "":
				env.LauncherImage = imageOf(c)
				env.LauncherImageRef = conditions.Truncate(specImageOf(pod, c.Name), 512)
			case strings.HasPrefix(c.Name, "volume") && c.ImageID != "" && vmi.Labels[vmbenchv1.LabelRole] == vmbenchv1.RoleMaster:
				// KubeVirt runs a containerDisk as a container named after its volume.
				env.RunnerImage = imageOf(c)
				env.RunnerImageRef = conditions.Truncate(containerDiskImageOf(vmi, strings.TrimPrefix(c.Name, "volume")), 512)
			}
		}
	}
	slices.Sort(machineTypes)
	env.MachineType = conditions.Truncate(strings.Join(machineTypes, ","), 64)
	// Host runs are pods too, on the nodes' network.
	if platformType == vmbenchv1.PlatformContainer || platformType == vmbenchv1.PlatformHost {
		if len(pods) == 0 {
			return env, false
		}
		for i := range pods {
			pod := &pods[i]
			if pod.Spec.NodeName == "" || len(pod.Status.ContainerStatuses) == 0 {
				return env, false
			}
			nodes[pod.Spec.NodeName] = true
			for _, c := range pod.Status.ContainerStatuses {
				if c.ImageID == "" {
					return env, false
				}
				if env.RunnerImage == "" || pod.Labels[vmbenchv1.LabelRole] == vmbenchv1.RoleMaster {
					env.RunnerImage = imageOf(c)
					env.RunnerImageRef = conditions.Truncate(specImageOf(pod, c.Name), 512)
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(nodes)) {
		if len(env.Nodes) == maxEnvironmentNodes {
			break
		}
		env.Nodes = append(env.Nodes, vmbenchv1.NodeEnvironment{Name: name})
	}
	return env, len(env.Nodes) > 0
}

// maxEnvironmentNodes bounds an environment's nodes, as the CRD does.
const maxEnvironmentNodes = 8

// imageOf is a container's image by digest where the kubelet reports one (imageID), else by name.
func imageOf(c corev1.ContainerStatus) string {
	id := c.ImageID
	if id == "" || strings.HasPrefix(id, "sha256:") {
		// A bare digest names no repository: the image's name says more beside it.
		id = strings.TrimSuffix(c.Image+"@"+id, "@")
	}
	return conditions.Truncate(id, 512)
}

// specImageOf is the image that the pod's spec names for its container: the reference the pod
// was created with, which the kubelet's status may spell otherwise (another tag of the same image,
// or the registry made explicit).
func specImageOf(pod *corev1.Pod, container string) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == container {
			return c.Image
		}
	}
	return ""
}

// containerDiskImageOf is the image of the VMI's containerDisk volume of that name, as the VMI was
// created with it; the first containerDisk's when no volume has the name.
func containerDiskImageOf(vmi *kubevirtv1.VirtualMachineInstance, volume string) string {
	first := ""
	for _, v := range vmi.Spec.Volumes {
		if v.ContainerDisk == nil {
			continue
		}
		if v.Name == volume {
			return v.ContainerDisk.Image
		}
		if first == "" {
			first = v.ContainerDisk.Image
		}
	}
	return first
}

// keepEnvironment adds env to the suite's environments unless an equal one is there, and returns
// its ID. The oldest entry goes when the list is full: runs keep the ID of an entry that went.
func keepEnvironment(st *vmbenchv1.BenchmarkSuiteStatus, env vmbenchv1.RunEnvironment) string {
	env.ID = environmentID(env)
	for _, had := range st.Environments {
		if had.ID == env.ID {
			return env.ID
		}
	}
	st.Environments = append(st.Environments, env)
	if len(st.Environments) > maxEnvironments {
		st.Environments = slices.Delete(st.Environments, 0, len(st.Environments)-maxEnvironments)
	}
	return env.ID
}

// environmentID hashes what an environment says, its ID and message aside.
func environmentID(env vmbenchv1.RunEnvironment) string {
	env.ID, env.Message = "", ""
	return runenv.ShortHash(env, 12)
}

// parametersHash hashes what a suite measures: its benchmarks with their defaults, its platforms and
// its cluster shape. Placement, repetitions and precision change how often or where, not what.
func parametersHash(suite *vmbenchv1.BenchmarkSuite) string {
	// What a drain may do to a run changes nothing it measures, and suites made before the setting
	// existed keep their hash.
	cluster := suite.Spec.Cluster
	cluster.Disruption = ""
	return runenv.ShortHash(struct {
		Benchmarks []vmbenchv1.Benchmark  `json:"benchmarks"`
		Platforms  []vmbenchv1.Platform   `json:"platforms"`
		Cluster    vmbenchv1.ClusterShape `json:"cluster"`
	}{DefaultedBenchmarks(suite), suite.Spec.Platforms, cluster}, 16)
}
