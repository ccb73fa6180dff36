package preflight

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
)

// Image is one image the suite's runs need.
type Image struct {
	// Role names it in the check: runner or vm-disk.
	Role, Ref  string
	PullPolicy corev1.PullPolicy
}

// ImagesOf lists the images the suite needs from the manager's configuration: the runner for
// MPIJob platforms, the VM disk for VM platforms.
func ImagesOf(needs Needs) []Image {
	var out []Image
	if needs.UsesMPIJob() {
		out = append(out, Image{Role: "runner", Ref: needs.Images.Runner, PullPolicy: needs.Images.PullPolicy})
	}
	if needs.UsesVMI() {
		out = append(out, Image{Role: "vm-disk", Ref: needs.Images.VMDisk, PullPolicy: needs.Images.PullPolicy})
	}
	return out
}

// Labels of the pods preflight creates, so that a person can find and delete any left behind.
const (
	LabelComponent = "app.kubernetes.io/component"
	ComponentValue = "preflight"
)

// pullPodSlack is how much longer than the pull timeout the pod itself may live, so that the kubelet
// ends it even when preflight is killed before it can delete it.
const pullPodSlack = 30 * time.Second

// ImagePod is the pod that pulls one image: as unprivileged as Pod Security's restricted level asks,
// tiny requests and limits so that quotas admit it, the suite's placement so that it lands where runs
// would, and a deadline so that the kubelet ends it whatever happens to preflight. Its command is
// `true`; an image without it (the VM disk is a bare containerDisk) still proves the pull, because
// the container fails only after the image is there.
func ImagePod(needs Needs, img Image, timeout time.Duration) *corev1.Pod {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "vmbench-preflight-" + img.Role + "-",
			Namespace:    needs.Namespace,
			Labels:       map[string]string{"app.kubernetes.io/name": "vmbench", LabelComponent: ComponentValue},
		},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			ActiveDeadlineSeconds:         ptr.To(int64((timeout + pullPodSlack).Seconds())),
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			AutomountServiceAccountToken:  ptr.To(false),
			EnableServiceLinks:            ptr.To(false),
			NodeSelector:                  needs.Placement.NodeSelectorLabels(),
			Tolerations:                   needs.Placement.PodTolerations(),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](65534),
				RunAsGroup:     ptr.To[int64](65534),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name:            "pull",
				Image:           img.Ref,
				ImagePullPolicy: img.PullPolicy,
				Command:         []string{"true"},
				Resources:       corev1.ResourceRequirements{Requests: small, Limits: small},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// Waiting reasons of a container whose image could not be pulled.
var pullFailures = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true,
	"RegistryUnavailable": true, "SignatureValidationFailed": true,
}

// PullState reads a pull pod: done once the image is on its node or its pull failed. A container
// that runs, ended, or fails to start for any other reason than its image has its image.
func PullState(img Image, pod *corev1.Pod) (done bool, check Check) {
	name := "image/" + img.Role
	where := ""
	if pod.Spec.NodeName != "" {
		where = " on node " + pod.Spec.NodeName
	}
	for _, cs := range pod.Status.ContainerStatuses {
		switch {
		case cs.State.Running != nil || cs.State.Terminated != nil:
			return true, pass(name, fmt.Sprintf("%s pulled%s (pull policy %s)", img.Ref, where, img.PullPolicy))
		case cs.State.Waiting == nil:
			continue
		case pullFailures[cs.State.Waiting.Reason]:
			return true, fail(name, fmt.Sprintf("%s cannot be pulled%s: %s: %s", img.Ref, where, cs.State.Waiting.Reason, cs.State.Waiting.Message),
				"push the image where the nodes can pull it, or give the namespace's default service account an imagePullSecret; see the manager's --runner-image and --vm-disk-image (chart values runnerImage, vmDiskImage)")
		case cs.State.Waiting.Reason != "" && cs.State.Waiting.Reason != "ContainerCreating":
			return true, pass(name, fmt.Sprintf("%s pulled%s (pull policy %s; the check's container then stopped with %s, which is expected for a bare disk image)",
				img.Ref, where, img.PullPolicy, cs.State.Waiting.Reason))
		}
	}
	if pod.Status.Phase == corev1.PodFailed {
		return true, warn(name, fmt.Sprintf("the check's pod for %s ended before its image was seen (%s: %s)", img.Ref, pod.Status.Reason, pod.Status.Message),
			"run preflight again, or look at the namespace's events")
	}
	return false, Check{}
}

// PullTimedOut is the check of a pull pod that did not decide within the timeout.
func PullTimedOut(img Image, pod *corev1.Pod, timeout time.Duration) Check {
	name := "image/" + img.Role
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return warn(name, fmt.Sprintf("the check's pod for %s was not scheduled within %s: %s: %s", img.Ref, timeout, c.Reason, c.Message),
				"the runs' pods would not be scheduled either: see the fit and node checks")
		}
	}
	return warn(name, fmt.Sprintf("%s was still being pulled after %s%s", img.Ref, timeout, nodeSuffix(pod)),
		"a large image on a slow registry: raise --image-timeout, or pre-pull it on the nodes")
}

func nodeSuffix(pod *corev1.Pod) string {
	if pod.Spec.NodeName == "" {
		return ""
	}
	return " on node " + pod.Spec.NodeName
}

// PullImages creates one pod per image in the suite's namespace, waits until each image is pulled
// or refused (at most timeout each, all at once), and deletes the pods whatever happens, also when
// ctx is cancelled.
func PullImages(ctx context.Context, kube kubernetes.Interface, needs Needs, images []Image, timeout, poll time.Duration) []Check {
	out := make([]Check, len(images))
	var wg sync.WaitGroup
	for i, img := range images {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = pullImage(ctx, kube, needs, img, timeout, poll)
		}()
	}
	wg.Wait()
	return out
}

// saWait is how long a pod's creation is retried while the namespace's default service account does
// not exist yet: a namespace created a moment ago gets it from the controller manager shortly after.
const saWait = 10 * time.Second

func createPod(ctx context.Context, pods typedcorev1.PodInterface, pod *corev1.Pod, poll time.Duration) (*corev1.Pod, error) {
	deadline := time.Now().Add(saWait)
	for {
		created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "serviceaccount") || time.Now().After(deadline) {
			return created, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(max(poll, 100*time.Millisecond)):
		}
	}
}

func pullImage(ctx context.Context, kube kubernetes.Interface, needs Needs, img Image, timeout, poll time.Duration) Check {
	name := "image/" + img.Role
	if img.Ref == "" {
		return fail(name, "the manager is configured with no image for "+img.Role, "set the manager's --runner-image and --vm-disk-image")
	}
	pods := kube.CoreV1().Pods(needs.Namespace)
	created, err := createPod(ctx, pods, ImagePod(needs, img, timeout), poll)
	if err != nil {
		if apierrors.IsForbidden(err) {
			return warn(name, fmt.Sprintf("cannot create a pod to pull %s: %s", img.Ref, firstLine(err)),
				"a quota, LimitRange or admission policy refused a tiny restricted pod (see above), or you may not create pods here; --skip-image-check skips this")
		}
		return warn(name, fmt.Sprintf("cannot create a pod to pull %s: %s", img.Ref, firstLine(err)), "--skip-image-check skips this check")
	}
	defer func() {
		// A fresh context: the pod goes also when preflight was interrupted.
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = pods.Delete(cleanup, created.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	last := created
	for {
		pod, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return warn(name, fmt.Sprintf("the check's pod for %s was deleted before its image was seen", img.Ref), "run preflight again")
		case err == nil:
			last = pod
			if done, check := PullState(img, pod); done {
				return check
			}
		}
		select {
		case <-ctx.Done():
			return warn(name, fmt.Sprintf("interrupted while pulling %s", img.Ref), "")
		case <-deadline.C:
			return PullTimedOut(img, last, timeout)
		case <-ticker.C:
		}
	}
}
