//go:build e2e

package e2e

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// localRegistry is where hack/install.sh pushes vmbench's images (hack/kind/registry.sh).
const localRegistry = "localhost:5001"

// vmbench is installed as on a cluster that is not kind: its three images come from a registry
// under one content-derived tag, with pull policy IfNotPresent, and the manager that runs was
// pulled from that registry by the node's containerd (its image ID is the registry's digest), not
// loaded into the node. The runner and VM disk images are pulled the same way by the preflight's
// image check and by every suite's pods.
func TestImagesComeFromTheRegistry(t *testing.T) {
	e := newEnv(t)
	deployments := &appsv1.DeploymentList{}
	e.g.Expect(k8s.List(e.ctx, deployments, client.InNamespace("vmbench-system"),
		client.MatchingLabels{"app.kubernetes.io/name": "vmbench"})).To(Succeed())
	e.g.Expect(deployments.Items).To(HaveLen(1), "the manager's Deployment")
	c := deployments.Items[0].Spec.Template.Spec.Containers[0]
	e.g.Expect(c.ImagePullPolicy).To(Equal(corev1.PullIfNotPresent))

	flags := map[string]string{}
	for _, a := range c.Args {
		if name, value, ok := strings.Cut(a, "="); ok {
			flags[name] = value
		}
	}
	images := map[string]string{"manager": c.Image, "runner": flags["--runner-image"], "vm-disk": flags["--vm-disk-image"]}
	tag := ""
	for name, image := range images {
		repository, imageTag, _ := strings.Cut(strings.TrimPrefix(image, localRegistry+"/"), ":")
		e.g.Expect(image).To(HavePrefix(localRegistry+"/"), "the %s image", name)
		e.g.Expect(repository).To(Equal("vmbench-"+name), "the %s image", name)
		e.g.Expect(imageTag).To(MatchRegexp(`^[0-9a-f]{12}$`), "the %s image's tag is derived from the images' content", name)
		if tag == "" {
			tag = imageTag
		}
		e.g.Expect(imageTag).To(Equal(tag), "one tag for all three images: %v", images)
	}
	e.g.Expect(flags).To(HaveKeyWithValue("--image-pull-policy", string(corev1.PullIfNotPresent)))

	pods := &corev1.PodList{}
	e.g.Expect(k8s.List(e.ctx, pods, client.InNamespace("vmbench-system"),
		client.MatchingLabels{"app.kubernetes.io/name": "vmbench", "app.kubernetes.io/component": "manager"})).To(Succeed())
	e.g.Expect(pods.Items).NotTo(BeEmpty())
	for _, p := range pods.Items {
		for _, s := range p.Status.ContainerStatuses {
			e.g.Expect(s.ImageID).To(HavePrefix(localRegistry+"/vmbench-manager@sha256:"),
				"pod %s runs an image its node pulled from the registry", p.Name)
		}
	}
}
