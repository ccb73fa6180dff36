package suite

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// A run's cluster must be up within the startup limit of its platform (--container-startup,
// --vm-startup), counted from the run's start. Until then the reconcile looks at the run's pods,
// VMIs, claims and Warning events every pollWhileStarting and names what holds it up; past the limit
// the run fails with that cause.

// holdUp gathers what the run's pods, VMIs, claims and events say, and names what holds the run up.
func (r *SuiteReconciler) holdUp(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, run platform.Run,
	children []client.Object, since time.Time) (*conditions.Cause, error) {
	o := failure.StartObservation{Since: since}
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
	events, err := r.runWarnings(ctx, suite.Namespace, run.Name)
	if err != nil {
		return nil, err
	}
	o.Events = events
	return explainNoKVM(explainVMScheduling(failure.HoldUp(o), run), r.Emulation), nil
}

// kvmDevice is the extended resource that KubeVirt's device plugin (in virt-handler) offers on the
// nodes that have /dev/kvm, and that every virt-launcher pod asks for unless KubeVirt emulates.
const kvmDevice = "devices.kubevirt.io/kvm"

// explainNoKVM says what a VM that the scheduler cannot place for want of KVM means: without it the
// VMs can only run under KubeVirt's useEmulation, whose figures are no measure of VM overhead.
func explainNoKVM(c *conditions.Cause, emulation EmulationPolicy) *conditions.Cause {
	if c == nil || c.Reason != failure.ReasonUnschedulable || !strings.Contains(c.Message, kvmDevice) {
		return c
	}
	msg := c.Message + "; no node that could take the VMs offers " + kvmDevice + " (KubeVirt's device plugin offers it where /dev/kvm exists), " +
		"so these VMs can only run under KubeVirt's useEmulation: run them on nodes with /dev/kvm (hardware or nested virtualisation; " +
		"spec.placement), or knowingly set spec.configuration.developerConfiguration.useEmulation: true in the KubeVirt CR, and the VM " +
		"figures then measure emulation, not VM overhead (marked emulated: true, \"(emulated)\" in the headline)"
	if emulation == EmulationForbid {
		msg += "; this vmbench runs with --emulation=forbid (Helm value emulation), which then refuses the VM runs"
	}
	return &conditions.Cause{Reason: failure.ReasonNoKVM, Message: msg, Terminal: c.Terminal}
}

// Warning events are read around the cache, only while a run starts: a watch on every event of every
// namespace would cost more than these few lists. A busy namespace may hold thousands, so they are
// read in pages of eventPage, at most eventPages of them, and only the run's are kept.
var (
	eventPage  int64 = 250
	eventPages       = 8
)

// runWarnings lists the Warning events of a namespace whose object is one of the run's, in bounded
// pages. The field selector leaves the other types out on the API server's side. Event names begin
// with their object's name and a list comes in name order, so the run's events are one stretch of
// it: the pages after it are not read.
func (r *SuiteReconciler) runWarnings(ctx context.Context, namespace, run string) ([]corev1.Event, error) {
	var out []corev1.Event
	cont := ""
	for range eventPages {
		page := &corev1.EventList{}
		err := r.APIReader.List(ctx, page, client.InNamespace(namespace), client.MatchingFields{"type": corev1.EventTypeWarning},
			client.Limit(eventPage), client.Continue(cont))
		if err != nil {
			return nil, fmt.Errorf("listing the events of run %s: %w", run, err)
		}
		past := false
		for i := range page.Items {
			e := &page.Items[i]
			if failure.BelongsToRun(e, run) {
				out = append(out, *e)
			}
			past = past || (e.Name > run && !strings.HasPrefix(e.Name, run))
		}
		if cont = page.Continue; cont == "" || past {
			return out, nil
		}
	}
	log.FromContext(ctx).V(1).Info("the namespace holds more Warning events than are read while a run starts", "run", run, "read", int64(eventPages)*eventPage)
	return out, nil
}
