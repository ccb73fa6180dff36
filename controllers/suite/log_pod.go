package suite

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/vmbench/vmbench/internal/platform"
)

// A run's results are read from one pod's log, and labels do not say which pod that is: anyone who
// may create pods in the namespace can copy a launcher's labels. The log is read only from a pod
// whose controller is the run's own launcher, checked by UID down from a child that the suite
// controls: the MPIJob's launcher Job (MPI Operator) or the master VMI (KubeVirt).

// controllerRef is the object that must be the controller of the pod whose log is read.
type controllerRef struct {
	GVK  schema.GroupVersionKind
	Name string
	UID  types.UID
	// Of says whose the object is, for messages: "of MPIJob q-container-1 (uid ...)".
	Of string
}

func (c controllerRef) String() string {
	s := fmt.Sprintf("%s %s (uid %s)", c.GVK.Kind, c.Name, c.UID)
	if c.Of != "" {
		s += " of " + c.Of
	}
	return s
}

// controls reports whether c is obj's controller: the same group, kind, name and UID.
func (c controllerRef) controls(obj metav1.Object) bool {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == c.GVK.Group && ref.Kind == c.GVK.Kind && ref.Name == c.Name && ref.UID == c.UID
}

// logPodController resolves the controller that the run's log pod must have: the child src.Owner
// among the suite's children, or the object src.Via that this child controls. gone is set when the
// chain is broken for good (a child deleted, a launcher Job that is not the MPIJob's); err is an API
// error, after which the chain is looked at again.
func (r *SuiteReconciler) logPodController(ctx context.Context, namespace string, src platform.LogSource,
	children []client.Object) (want controllerRef, gone, err error) {
	var owner client.Object
	for _, obj := range children {
		if obj.GetObjectKind().GroupVersionKind() == src.Owner.GVK && obj.GetName() == src.Owner.Name {
			owner = obj
		}
	}
	if owner == nil {
		return controllerRef{}, fmt.Errorf("%s is gone, so no pod's log can be tied to the run", src.Owner), nil
	}
	ownerRef := controllerRef{GVK: src.Owner.GVK, Name: owner.GetName(), UID: owner.GetUID()}
	if src.Via == nil {
		return ownerRef, nil, nil
	}
	via := &metav1.PartialObjectMetadata{}
	via.SetGroupVersionKind(src.Via.GVK)
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.Via.Name}, via); err != nil {
		if apierrors.IsNotFound(err) {
			return controllerRef{}, fmt.Errorf("%s of %s is gone, so no pod's log can be tied to the run", src.Via, ownerRef), nil
		}
		return controllerRef{}, nil, fmt.Errorf("reading %s, the controller of the runner's pod: %w", src.Via, err)
	}
	if !ownerRef.controls(via) {
		return controllerRef{}, fmt.Errorf("%s is not controlled by %s (its controller: %s), so no pod it controls is the run's; "+
			"no log is read", src.Via, ownerRef, describeController(via)), nil
	}
	return controllerRef{GVK: src.Via.GVK, Name: via.Name, UID: via.UID, Of: ownerRef.String()}, nil, nil
}

// pickLogPods chooses, among the pods that carry the run's labels, those whose controller is want,
// oldest first. A controller reference is only metadata: anyone who may create pods in the
// namespace can give a pod one that names the launcher, but only after the launcher exists, so the
// launcher's own pod is the oldest (its Job has a backoff limit of 0 and never makes another). The
// other pods are look-alikes, named in lookalikes; their logs are never read. refused says why no
// pod's log can be read when none is controlled by want.
func pickLogPods(pods []corev1.Pod, want controllerRef) (own []*corev1.Pod, lookalikes []string, refused error) {
	var others []string
	for i := range pods {
		p := &pods[i]
		if want.controls(p) {
			own = append(own, p)
			continue
		}
		lookalikes = append(lookalikes, p.Name)
		others = append(others, fmt.Sprintf("%s (its controller: %s)", p.Name, describeController(p)))
	}
	if len(own) == 0 {
		sort.Strings(others)
		if len(others) == 1 {
			return nil, lookalikes, fmt.Errorf("pod %s has the run's labels but is not controlled by %s; its log is not read, "+
				"as anyone who may create pods in the namespace could have made it", others[0], want)
		}
		return nil, lookalikes, fmt.Errorf("pods %s have the run's labels but are not controlled by %s; their logs are not read, "+
			"as anyone who may create pods in the namespace could have made them", strings.Join(others, ", "), want)
	}
	sort.SliceStable(own, func(i, j int) bool {
		a, b := own[i].CreationTimestamp, own[j].CreationTimestamp
		if a.Equal(&b) {
			return own[i].Name < own[j].Name
		}
		return a.Before(&b)
	})
	return own, lookalikes, nil
}

// describeController names an object's controller, for messages.
func describeController(obj metav1.Object) string {
	ref := metav1.GetControllerOf(obj)
	if ref == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
}
