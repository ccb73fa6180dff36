package suite

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	kubevirtv1 "kubevirt.io/api/core/v1"

	"github.com/vmbench/vmbench/controllers/scheme"
	"github.com/vmbench/vmbench/internal/platform"
)

// logsOf serves one log per pod name.
type logsOf map[string][]byte

func (l logsOf) Open(_ context.Context, _, pod, _ string) (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(l[pod])), nil
}

// L6: a log is not judged while the runner's container still runs after its run ended on its own;
// without the check the log, read before the pod settled, became the run's final report (no Done
// frame: the run failed with what it held so far).
func TestLogOfARunnerStillRunningIsReadAgainLater(t *testing.T) {
	suite := keyedSuite()
	run := "demo-container-1"
	keys := mustFrameKeys(t, suite, run)
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: run + "-launcher", Namespace: suite.Namespace, UID: "job-uid"}}
	src := platform.LogSource{Selector: labels.Set{"run": run}, Container: "launcher",
		Owner: platform.ChildRef{GVK: batchv1.SchemeGroupVersion.WithKind("Job"), Name: job.Name}}
	msgs := runOf(run)
	partial := runnerOutput(t, keys.tokens[run], msgs[:len(msgs)-1]...)
	whole := runnerOutput(t, keys.tokens[run], msgs...)
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}

	tests := []struct {
		name    string
		phase   corev1.PodPhase
		state   corev1.ContainerState
		log     []byte
		ownEnd  bool
		wantErr string // "" : the log is judged
	}{
		{name: "running, no Done, the run ended on its own: read again later", phase: corev1.PodRunning, state: running, log: partial, ownEnd: true,
			wantErr: "container launcher is still running though the run ended, and its log holds no runner's Done frame yet"},
		{name: "running, with Done: judged", phase: corev1.PodRunning, state: running, log: whole, ownEnd: true},
		{name: "terminated, no Done: judged", phase: corev1.PodRunning, state: terminated, log: partial, ownEnd: true},
		{name: "pod failed, no Done: judged", phase: corev1.PodFailed, state: running, log: partial, ownEnd: true},
		{name: "running, no Done, ended by vmbench (deadline, member failure): judged as it is", phase: corev1.PodRunning, state: running,
			log: partial, ownEnd: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: run + "-launcher-abcde", Namespace: suite.Namespace, Labels: src.Selector,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))}},
				Status: corev1.PodStatus{Phase: tt.phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "launcher", State: tt.state}}}}
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(pod).Build()
			r := &SuiteReconciler{Client: c, APIReader: c, Scheme: scheme.New(), Logs: logsOf{pod.Name: tt.log}}
			report, err := r.readReport(t.Context(), suite, src, []client.Object{job}, nil, keys, tt.ownEnd)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readReport() = %+v, %v; want an error (read again later) containing %q", report, err, tt.wantErr)
				}
				return
			}
			if err != nil || report.Started == nil {
				t.Fatalf("readReport() = %+v, %v; want the log judged", report, err)
			}
		})
	}
}

// L6 on the VM path: the VMI ended on its own, but the current launcher pod's console logger still
// runs and the log holds no Done frame yet: read again later, not judged; judged once the logger
// terminated or the pod ended, and as it is when vmbench ended the run.
func TestLauncherLogStillRunningIsReadAgainLater(t *testing.T) {
	suite := keyedSuite()
	run := "demo-vm-1"
	keys := mustFrameKeys(t, suite, run)
	msgs := runOf(run)
	partial := runnerOutput(t, keys.tokens[run], msgs[:len(msgs)-1]...)
	vmi := &kubevirtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: run + "-master", Namespace: suite.Namespace}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}
	for _, tt := range []struct {
		name    string
		phase   corev1.PodPhase
		state   corev1.ContainerState
		ownEnd  bool
		wantErr bool
	}{
		{"logger running, the VMI ended on its own", corev1.PodRunning, running, true, true},
		{"logger terminated", corev1.PodRunning, terminated, true, false},
		{"pod succeeded", corev1.PodSucceeded, running, true, false},
		{"ended by vmbench (deadline, member failure)", corev1.PodRunning, running, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + run + "-master-abcde", Namespace: suite.Namespace},
				Status: corev1.PodStatus{Phase: tt.phase, ContainerStatuses: []corev1.ContainerStatus{{Name: "guest-console-log", State: tt.state}}}}
			r := &SuiteReconciler{Scheme: scheme.New(), Logs: logsOf{pod.Name: partial}}
			report, _, err := r.readLauncherPods(t.Context(), vmi, []*corev1.Pod{pod}, nil, "guest-console-log", keys, tt.ownEnd)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "container guest-console-log is still running though the run ended") {
					t.Fatalf("readLauncherPods() = %+v, %v; want it read again later", report, err)
				}
				return
			}
			if err != nil || report.Started == nil || report.Done != nil {
				t.Fatalf("readLauncherPods() = %+v, %v; want the partial log judged", report, err)
			}
		})
	}
}
