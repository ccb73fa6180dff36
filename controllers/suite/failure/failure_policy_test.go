package failure

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	kubevirtv1 "kubevirt.io/api/core/v1"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
)

func TestHoldUp(t *testing.T) {
	start := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	pod := func(name string, mutate func(*corev1.Pod)) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		mutate(&p)
		return p
	}
	unschedulable := pod("q-container-1-worker-0", func(p *corev1.Pod) {
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."}}
	})
	waiting := func(name, reason, msg string) corev1.Pod {
		return pod(name, func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "worker", Image: "registry.example/runner:v1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}}
		})
	}
	event := func(kind, name, reason, msg string, at time.Time) corev1.Event {
		return corev1.Event{Type: corev1.EventTypeWarning, Reason: reason, Message: msg, LastTimestamp: metav1.NewTime(at),
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}}
	}
	psaVMI := func(name string) *kubevirtv1.VirtualMachineInstance {
		return &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: kubevirtv1.VirtualMachineInstanceStatus{Conditions: []kubevirtv1.VirtualMachineInstanceCondition{{
				Type: kubevirtv1.VirtualMachineInstanceSynchronized, Status: corev1.ConditionFalse, Reason: "FailedCreate",
				Message: `failed to create pod for vmi ns/q-vm-1-master, it needs a privileged namespace to run: pods "virt-launcher-q-vm-1-master-" ` +
					`is forbidden: violates PodSecurity "restricted:latest": seccompProfile (pod or containers "compute" must set securityContext.seccompProfile.type)`}}}}
	}
	tests := []struct {
		name         string
		o            StartObservation
		wantReason   string
		wantIn       []string
		wantTerminal bool
	}{
		{name: "nothing wrong yet", o: StartObservation{Pods: []corev1.Pod{pod("q-container-1-worker-0", func(*corev1.Pod) {})}}},
		{name: "unschedulable with the scheduler's message", o: StartObservation{Pods: []corev1.Pod{unschedulable}},
			wantReason: ReasonUnschedulable, wantIn: []string{"pod q-container-1-worker-0 cannot be scheduled", "didn't match Pod's node affinity/selector"}},
		{name: "image pull back-off names the image",
			o:          StartObservation{Pods: []corev1.Pod{waiting("q-container-1-worker-1", "ImagePullBackOff", "Back-off pulling image")}},
			wantReason: ReasonImagePull, wantIn: []string{"registry.example/runner:v1", "ImagePullBackOff", "Back-off pulling image"}},
		{name: "ErrImagePull counts too",
			o:          StartObservation{Pods: []corev1.Pod{waiting("p", "ErrImagePull", "not found")}},
			wantReason: ReasonImagePull, wantIn: []string{"cannot pull image"}},
		{name: "container config error",
			o:          StartObservation{Pods: []corev1.Pod{waiting("p", "CreateContainerConfigError", `secret "q-auth" not found`)}},
			wantReason: ReasonContainerConfig, wantIn: []string{`secret "q-auth" not found`}},
		{name: "a pod being deleted says nothing",
			o: StartObservation{Pods: []corev1.Pod{pod("p", func(p *corev1.Pod) {
				p.DeletionTimestamp = ptr.To(metav1.NewTime(start))
				p.Status = unschedulable.Status
			})}}},
		{name: "pods before events: the first pod by name",
			o: StartObservation{Pods: []corev1.Pod{waiting("b", "ErrImagePull", "x"), unschedulable},
				Events: []corev1.Event{event("MPIJob", "q-container-1", "MPIJobFailed", "boom", start.Add(time.Second))}},
			wantReason: ReasonImagePull},
		{name: "pod security refusal from the launcher Job's events",
			o: StartObservation{Since: start, Events: []corev1.Event{
				event("Job", "q-container-1-launcher", "FailedCreate", "old refusal", start.Add(-time.Minute)),
				event("Job", "q-container-1-launcher", "FailedCreate", `pods "q-container-1-launcher-x" is forbidden: violates PodSecurity "baseline:latest": non-default capabilities`, start.Add(2*time.Second)),
				event("MPIJob", "q-container-1", "MPIJobFailed", "older", start.Add(time.Second)),
			}},
			wantReason: ReasonFailedCreate, wantIn: []string{"Job q-container-1-launcher: FailedCreate", "violates PodSecurity", "Host platforms need privileged"},
			wantTerminal: true},
		{name: "other refusals of the launcher Job's pod heal by waiting",
			o: StartObservation{Since: start, Events: []corev1.Event{event("Job", "q-container-1-launcher", "FailedCreate",
				`pods "q-container-1-launcher-x" is forbidden: exceeded quota: compute, requested: cpu=2`, start.Add(time.Second))}},
			wantReason: ReasonFailedCreate, wantIn: []string{"exceeded quota"}},
		{name: "a VMI whose virt-launcher pod Pod Security refuses",
			o:          StartObservation{Since: start, VMIs: []*kubevirtv1.VirtualMachineInstance{psaVMI("q-vm-1-master")}},
			wantReason: vmbenchv1.ReasonNamespaceRefusesVMs, wantTerminal: true,
			wantIn: []string{"VMI q-vm-1-master: FailedCreate", `violates PodSecurity "restricted:latest"`, "pod-security.kubernetes.io/enforce=baseline"}},
		{name: "virt-controller's refusal event, before a newer event and an unschedulable pod",
			o: StartObservation{Since: start, Pods: []corev1.Pod{unschedulable}, Events: []corev1.Event{
				event("VirtualMachineInstance", "q-vm-1-node01", "FailedCreate", `failed to render launch manifest: pods "virt-launcher-q-vm-1-node01-" `+
					`is forbidden: violates PodSecurity "baseline:latest": non-default capabilities (container "compute" must not include "SYS_NICE")`, start.Add(time.Second)),
				event("VirtualMachineInstance", "q-vm-1-master", "SyncFailed", "something else", start.Add(2*time.Second)),
			}},
			wantReason: vmbenchv1.ReasonNamespaceRefusesVMs, wantTerminal: true, wantIn: []string{"VirtualMachineInstance q-vm-1-node01: FailedCreate", "SYS_NICE"}},
		{name: "events before the run started belong to an earlier object",
			o: StartObservation{Since: start, Events: []corev1.Event{event("MPIJob", "q-container-1", "MPIJobFailed", "old", start.Add(-time.Second))}}},
		{name: "scheduler events are unschedulable",
			o:          StartObservation{Since: start, Events: []corev1.Event{event("Pod", "q-vm-1-master-abcde", "FailedScheduling", "0/3 nodes", start)}},
			wantReason: ReasonUnschedulable},
		{name: "a VMI that cannot be scheduled",
			o: StartObservation{VMIs: []*kubevirtv1.VirtualMachineInstance{{ObjectMeta: metav1.ObjectMeta{Name: "q-vm-1-master"},
				Status: kubevirtv1.VirtualMachineInstanceStatus{Conditions: []kubevirtv1.VirtualMachineInstanceCondition{{
					Type: kubevirtv1.VirtualMachineInstanceConditionType(corev1.PodScheduled), Status: corev1.ConditionFalse,
					Reason: "Unschedulable", Message: "Insufficient devices.kubevirt.io/kvm"}}}}}},
			wantReason: ReasonUnschedulable, wantIn: []string{"VMI q-vm-1-master", "devices.kubevirt.io/kvm"}},
		{name: "a claim no provisioner binds",
			o: StartObservation{Since: start, Claims: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "q-container-1-shared"},
				Spec:   corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("standard")},
				Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}},
				Events: []corev1.Event{event("PersistentVolumeClaim", "q-container-1-shared", "ProvisioningFailed", "NodeStageVolume: RWX not supported", start)}},
			wantReason: ReasonClaimPending, wantIn: []string{`storage class "standard" is Pending`, "RWX not supported", "spec.sharedStorage.storageClassName"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HoldUp(tt.o)
			if tt.wantReason == "" {
				if got != nil {
					t.Fatalf("holdUp() = %v, want nothing", got)
				}
				return
			}
			if got == nil || got.Reason != tt.wantReason {
				t.Fatalf("holdUp() = %v, want reason %s", got, tt.wantReason)
			}
			if got.Terminal != tt.wantTerminal {
				t.Errorf("holdUp() terminal = %t, want %t", got.Terminal, tt.wantTerminal)
			}
			for _, want := range tt.wantIn {
				if !strings.Contains(got.Message, want) {
					t.Errorf("message %q does not contain %q", got.Message, want)
				}
			}
		})
	}
}

func TestBelongsToRun(t *testing.T) {
	for name, want := range map[string]bool{"q-vm-1": true, "q-vm-1-master": true, "q-vm-1-master-abcde": true, "q-vm-10-master": false, "q-vm": false} {
		e := &corev1.Event{InvolvedObject: corev1.ObjectReference{Name: name}}
		if got := BelongsToRun(e, "q-vm-1"); got != want {
			t.Errorf("belongsToRun(%s) = %t, want %t", name, got, want)
		}
	}
}
