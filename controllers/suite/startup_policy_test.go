package suite

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/controllers/suite/failure"
	"github.com/vmbench/vmbench/internal/platform"
)

// pagedEvents serves a namespace's events as the API server does, in name order and in pages of
// the asked limit, and records every list.
type pagedEvents struct {
	events []corev1.Event
	lists  []client.ListOptions
}

func (p *pagedEvents) list(_ context.Context, _ client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	p.lists = append(p.lists, o)
	start := 0
	if o.Continue != "" {
		start, _ = strconv.Atoi(o.Continue)
	}
	end := len(p.events)
	if o.Limit > 0 && start+int(o.Limit) < end {
		end = start + int(o.Limit)
	}
	out := list.(*corev1.EventList)
	out.Items = append([]corev1.Event(nil), p.events[start:end]...)
	if end < len(p.events) {
		out.Continue = strconv.Itoa(end)
	}
	return nil
}

func warningOf(kind, name string) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + ".1", Namespace: "bench"}, Type: corev1.EventTypeWarning,
		InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Reason: "FailedCreate"}
}

func TestRunWarningsAreReadInBoundedPages(t *testing.T) {
	var events []corev1.Event
	for i := range 2 * eventPage {
		events = append(events, warningOf("Pod", fmt.Sprintf("a-busy-%04d", i)))
	}
	events = append(events, warningOf("Job", "demo-container-1-launcher"), warningOf("MPIJob", "demo-container-1"))
	for i := range 3 * eventPage {
		events = append(events, warningOf("Pod", fmt.Sprintf("z-busy-%04d", i)))
	}
	p := &pagedEvents{events: events}
	c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{List: p.list}).Build()
	r := &SuiteReconciler{APIReader: c}
	got, err := r.runWarnings(t.Context(), "bench", "demo-container-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].InvolvedObject.Name != "demo-container-1-launcher" || got[1].InvolvedObject.Name != "demo-container-1" {
		t.Errorf("run's events %+v", got)
	}
	// Pages 1 and 2 hold other objects' events, page 3 the run's and the first that come after them.
	if len(p.lists) != 3 {
		t.Errorf("%d lists, want 3: the list stops past the run's events", len(p.lists))
	}
	for _, o := range p.lists {
		if o.Limit != eventPage || o.FieldSelector == nil || o.FieldSelector.String() != "type=Warning" || o.Namespace != "bench" {
			t.Errorf("list options: limit %d, fields %v, namespace %q", o.Limit, o.FieldSelector, o.Namespace)
		}
	}

	// A namespace of endless warnings before the run's: at most eventPages pages are read.
	p = &pagedEvents{}
	for i := range int64(eventPages+2) * eventPage {
		p.events = append(p.events, warningOf("Pod", fmt.Sprintf("a-busy-%05d", i)))
	}
	c = fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{List: p.list}).Build()
	r = &SuiteReconciler{APIReader: c}
	if _, err := r.runWarnings(t.Context(), "bench", "demo-container-1"); err != nil {
		t.Fatal(err)
	}
	if len(p.lists) != eventPages {
		t.Errorf("%d lists, want %d", len(p.lists), eventPages)
	}
}

// A VM that no node can take for want of KVM is named for what it means, whether the VMI's condition
// (virt-controller copies the scheduler's) or its virt-launcher pod's own condition says so.
func TestNoKVMIsNamedWithWhatToDo(t *testing.T) {
	const scheduler = "0/3 nodes are available: 3 Insufficient devices.kubevirt.io/kvm. preemption: 0/3 nodes are available: " +
		"3 No preemption victims found for incoming pod."
	suite := testSuite()
	run := platform.Run{Suite: suite, Name: "demo-vm-1", Platform: vmPlatform}
	since := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	vmi := &kubevirtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: "demo-vm-1-master", Namespace: "bench"},
		Status: kubevirtv1.VirtualMachineInstanceStatus{Phase: kubevirtv1.Scheduling, Conditions: []kubevirtv1.VirtualMachineInstanceCondition{{
			Type: kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
			Reason: corev1.PodReasonUnschedulable, Message: scheduler}}},
	}
	launcher := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-demo-vm-1-master-abcde", Namespace: "bench",
			Labels: map[string]string{vmbenchv1.LabelSuite: "demo", vmbenchv1.LabelRun: "demo-vm-1"}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
			Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: scheduler}}},
	}
	withWarnings := func(objs ...client.Object) client.Client {
		return fake.NewClientBuilder().WithObjects(objs...).WithIndex(&corev1.Event{}, "type", func(o client.Object) []string {
			return []string{o.(*corev1.Event).Type}
		}).Build()
	}
	bare := vmi.DeepCopy()
	bare.Status.Conditions = nil
	for name, tc := range map[string]struct {
		c         client.Client
		children  []client.Object
		emulation EmulationPolicy
	}{
		"the VMI's condition":                 {withWarnings(), []client.Object{vmi}, EmulationAllow},
		"the virt-launcher pod's condition":   {withWarnings(launcher), []client.Object{bare}, EmulationAllow},
		"under --emulation=forbid":            {withWarnings(), []client.Object{vmi}, EmulationForbid},
		"no policy set is the flag's default": {withWarnings(), []client.Object{vmi}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := &SuiteReconciler{Client: tc.c, APIReader: tc.c, Emulation: tc.emulation}
			got, err := r.holdUp(t.Context(), suite, run, tc.children, since)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Reason != failure.ReasonNoKVM || got.Terminal {
				t.Fatalf("holdUp() = %+v, want a waiting %s", got, failure.ReasonNoKVM)
			}
			for _, want := range []string{
				"cannot be scheduled", "Insufficient devices.kubevirt.io/kvm",
				"no node that could take the VMs offers devices.kubevirt.io/kvm", "/dev/kvm",
				"KubeVirt CR", "spec.configuration.developerConfiguration.useEmulation: true",
				"measure emulation, not VM overhead", `marked emulated: true, "(emulated)" in the headline`,
			} {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q\ndoes not say %q", got.Message, want)
				}
			}
			if forbid := strings.Contains(got.Message, "--emulation=forbid"); forbid != (tc.emulation == EmulationForbid) {
				t.Errorf("message names --emulation=forbid: %t, the manager forbids emulation: %t", forbid, tc.emulation == EmulationForbid)
			}
		})
	}
}

func TestExplainNoKVMLeavesOtherCausesAlone(t *testing.T) {
	for name, c := range map[string]*conditions.Cause{
		"no cause":                    nil,
		"another resource":            {Reason: failure.ReasonUnschedulable, Message: "VMI q-vm-1-master cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory."},
		"not the scheduler's refusal": {Reason: failure.ReasonFailedCreate, Message: "VMI q-vm-1-master: FailedCreate: devices.kubevirt.io/kvm: quota exceeded"},
	} {
		if got := explainNoKVM(c, EmulationAllow); got != c {
			t.Errorf("%s: %+v, want the cause unchanged", name, got)
		}
	}
	c := &conditions.Cause{Reason: failure.ReasonUnschedulable, Message: "pod p cannot be scheduled: 0/1 nodes are available: 1 Insufficient devices.kubevirt.io/kvm."}
	if explainNoKVM(c, EmulationAllow); c.Reason != failure.ReasonUnschedulable || strings.Contains(c.Message, "useEmulation") {
		t.Errorf("the cause it was given was changed: %+v", c)
	}
}
