package failure

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
)

// A run that does not come up is held up by something Kubernetes already names: a pod the scheduler
// cannot place, an image that cannot be pulled, an admission plugin that refused a pod, a claim that
// no provisioner binds. This file turns what the run's pods, VMIs, claims and events say into one
// cause, in their own words, for the run's message and the suite's Progressing condition.

// Reasons of the causes that hold a run up; they become the Progressing condition's reason.
const (
	ReasonStarting            = "Starting"
	ReasonUnschedulable       = "Unschedulable"
	ReasonImagePull           = "ImagePullBackOff"
	ReasonContainerConfig     = "CreateContainerConfigError"
	ReasonFailedCreate        = "FailedCreate"
	ReasonClaimPending        = "ClaimPending"
	ReasonChildRejected       = "ChildRejected"
	ReasonChildOfAnotherSuite = "ChildOfAnotherSuite"
	ReasonChildDeleted        = "ChildDeleted"
	ReasonStartupTimeout      = "StartupTimeout"
	ReasonLogUnreadable       = "LogUnreadable"
	ReasonNoKVM               = "NoKVM"
)

// startObservation is what the reconcile saw of a run that is not up yet.
type StartObservation struct {
	Pods   []corev1.Pod
	VMIs   []*kubevirtv1.VirtualMachineInstance
	Claims []corev1.PersistentVolumeClaim
	// Events are the Warning events of the namespace whose object belongs to the run.
	Events []corev1.Event
	// Since is when the run started: older events belong to an earlier object of the same name.
	Since time.Time
}

// holdUp names what keeps a run from coming up: a terminal cause first (a Pod Security refusal, in
// a VMI's condition or any Warning event since the run started), then the most specific: a pod's own
// waiting reason or scheduling condition, a VMI's failed condition, a claim left pending, the newest
// Warning event. It is nil when nothing says anything is wrong (the cluster is merely still starting).
func HoldUp(o StartObservation) *conditions.Cause {
	for _, vmi := range o.VMIs {
		if c := vmiCause(vmi); c != nil && c.Terminal {
			return c
		}
	}
	for i := range o.Events {
		if c := eventCause(o.Events[i:i+1], o.Since); c != nil && c.Terminal {
			return c
		}
	}
	pods := append([]corev1.Pod(nil), o.Pods...)
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for i := range pods {
		if c := podCause(&pods[i]); c != nil {
			return c
		}
	}
	for _, vmi := range o.VMIs {
		if c := vmiCause(vmi); c != nil {
			return c
		}
	}
	for i := range o.Claims {
		if c := claimCause(&o.Claims[i], o.Events, o.Since); c != nil {
			return c
		}
	}
	return eventCause(o.Events, o.Since)
}

// podCause is a pod's own reason for not running: unschedulable, an image it cannot pull, a
// container it cannot create.
func podCause(pod *corev1.Pod) *conditions.Cause {
	if pod.DeletionTimestamp != nil {
		return nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return &conditions.Cause{Reason: ReasonUnschedulable, Message: fmt.Sprintf("pod %s cannot be scheduled: %s", pod.Name, conditions.OneLineString(c.Message))}
		}
	}
	statuses := append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, s := range statuses {
		w := s.State.Waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
			return &conditions.Cause{Reason: ReasonImagePull, Message: fmt.Sprintf("pod %s cannot pull image %s (%s): %s", pod.Name, s.Image, w.Reason, conditions.OneLineString(w.Message))}
		case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
			return &conditions.Cause{Reason: ReasonContainerConfig, Message: fmt.Sprintf("pod %s container %s: %s: %s", pod.Name, s.Name, w.Reason, conditions.OneLineString(w.Message))}
		}
	}
	return nil
}

// vmiCause is a VMI's condition that says why it is not running: its pod unschedulable, or
// KubeVirt unable to create or sync it.
func vmiCause(vmi *kubevirtv1.VirtualMachineInstance) *conditions.Cause {
	for _, c := range vmi.Status.Conditions {
		if c.Status != corev1.ConditionFalse || c.Message == "" {
			continue
		}
		switch {
		case c.Type == kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled):
			return &conditions.Cause{Reason: ReasonUnschedulable, Message: fmt.Sprintf("VMI %s cannot be scheduled: %s", vmi.Name, conditions.OneLineString(c.Message))}
		case c.Type == kubevirtv1.VirtualMachineInstanceSynchronized:
			msg := fmt.Sprintf("VMI %s: %s: %s", vmi.Name, c.Reason, conditions.OneLineString(c.Message))
			if refusedByPodSecurity(c.Message) {
				return virtLauncherRefused(msg)
			}
			return &conditions.Cause{Reason: ReasonFailedCreate, Message: msg}
		}
	}
	return nil
}

// claimCause is a run's shared claim left unbound, with what its provisioner said.
func claimCause(pvc *corev1.PersistentVolumeClaim, events []corev1.Event, since time.Time) *conditions.Cause {
	if pvc.Status.Phase == corev1.ClaimBound {
		return nil
	}
	class := ""
	if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	msg := fmt.Sprintf("claim %s of storage class %q is %s: no provisioner has bound it ReadWriteMany", pvc.Name, class, pvc.Status.Phase)
	if c := eventCause(eventsOf(events, "PersistentVolumeClaim", pvc.Name), since); c != nil {
		msg += " (" + c.Message + ")"
	}
	return &conditions.Cause{Reason: ReasonClaimPending, Message: msg + "; set spec.sharedStorage.storageClassName to a class that provides ReadWriteMany volumes"}
}

// eventCause is the newest Warning event since the run started, for the refusals that leave no
// object behind: Pod Security, quota, a missing RuntimeClass (FailedCreate of the MPIJob's pods or
// of the launcher Job's pod).
func eventCause(events []corev1.Event, since time.Time) *conditions.Cause {
	var newest *corev1.Event
	for i := range events {
		e := &events[i]
		if e.Type != corev1.EventTypeWarning || eventTime(e).Before(since) {
			continue
		}
		if newest == nil || eventTime(e).After(eventTime(newest)) {
			newest = e
		}
	}
	if newest == nil {
		return nil
	}
	reason := ReasonFailedCreate
	if newest.Reason == "FailedScheduling" {
		reason = ReasonUnschedulable
	}
	msg := fmt.Sprintf("%s %s: %s: %s", newest.InvolvedObject.Kind, newest.InvolvedObject.Name, newest.Reason, conditions.OneLineString(newest.Message))
	if refusedByPodSecurity(newest.Message) {
		if newest.InvolvedObject.Kind == "VirtualMachineInstance" {
			return virtLauncherRefused(msg)
		}
		return &conditions.Cause{Reason: reason, Terminal: true, Message: msg + "; the runner's pods pass Pod Security restricted, " +
			"Host platforms need privileged: run the suite in a namespace whose level admits its pods"}
	}
	return &conditions.Cause{Reason: reason, Message: msg}
}

// refusedByPodSecurity reports whether a message is Pod Security admission's refusal of a pod, which
// the Job controller and virt-controller repeat in their events and conditions.
func refusedByPodSecurity(msg string) bool { return strings.Contains(msg, "violates PodSecurity") }

// virtLauncherRefused is a VM's virt-launcher pod refused by Pod Security, which the controller's own
// check before the run (namespace_policy.go) did not foresee: a namespace without the label under a
// stricter cluster default, or one relabelled since.
func virtLauncherRefused(msg string) *conditions.Cause {
	return &conditions.Cause{Reason: vmbenchv1.ReasonNamespaceRefusesVMs, Terminal: true, Message: msg + "; KubeVirt's virt-launcher pods " +
		"need Pod Security baseline (privileged with KubeVirt's Root feature gate): label the namespace " +
		"pod-security.kubernetes.io/enforce=baseline, or run the suite in a namespace that admits virt-launcher"}
}

func eventsOf(events []corev1.Event, kind, name string) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
			out = append(out, e)
		}
	}
	return out
}

// eventTime is when an event last happened, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.Time
	}
	return e.CreationTimestamp.Time
}

// belongsToRun reports whether an event's object is one of a run's children or their pods, which
// are all named after the run.
func BelongsToRun(e *corev1.Event, run string) bool {
	name := e.InvolvedObject.Name
	return name == run || strings.HasPrefix(name, run+"-")
}
