package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/internal/platform"
)

// A run's cluster must be up within the startup limit of its platform (--container-startup,
// --vm-startup), counted from the run's start. Until then the reconcile looks at the run's pods,
// VMIs, claims and Warning events every pollWhileStarting and names what holds it up; past the limit
// the run fails with that cause.

// holdUp gathers what the run's pods, VMIs, claims and events say, and names what holds the run up.
func (r *SuiteReconciler) holdUp(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run platform.Run,
	children []client.Object, since time.Time) (*cause, error) {
	o := startObservation{Since: since}
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(suite.Namespace),
		client.MatchingLabels{vmbenchv1.LabelSuite: suite.Name, vmbenchv1.LabelRun: run.Name}); err != nil {
		return nil, fmt.Errorf("listing the pods of run %s: %w", run.Name, err)
	}
	o.Pods = pods.Items
	for _, obj := range children {
		switch c := obj.(type) {
		case *kubevirtv1.VirtualMachineInstance:
			o.VMIs = append(o.VMIs, c)
		case *corev1.PersistentVolumeClaim:
			o.Claims = append(o.Claims, *c)
		}
	}
	// Events are read around the cache, only while a run starts: a watch on every event of every
	// namespace would cost more than these few lists.
	events := &corev1.EventList{}
	if err := r.APIReader.List(ctx, events, client.InNamespace(suite.Namespace), client.MatchingFields{"type": corev1.EventTypeWarning}); err != nil {
		return nil, fmt.Errorf("listing the events of run %s: %w", run.Name, err)
	}
	for i := range events.Items {
		if belongsToRun(&events.Items[i], run.Name) {
			o.Events = append(o.Events, events.Items[i])
		}
	}
	return explainVMScheduling(holdUp(o), run), nil
}
