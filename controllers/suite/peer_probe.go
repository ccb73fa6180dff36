package suite

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/conditions"
	"github.com/vmbench/vmbench/internal/platform"
)

// The VM arm's peer (issue 32 item 2, "the longest loss of a 10 ms probe from a peer"): what a
// client of the VM sees across a live migration. Once the in-guest probe started, the manager makes
// one probe worker pod (<run>-probe-1, never evicted) that reports every 10 ms to the runner in the
// master VM by its name in the run's headless Service (platform.ProbeMasterAddress); after a
// migration the VM answers from a new virt-launcher pod and address, and the worker's reports stop
// until it reconnects there. The runner adds the longest gap per window to the probe's table. The
// peer is extra evidence: a worker that cannot be made or placed is named in the run's message
// and an event, and the benchmark goes on without the figure. closeProbeWorkers deletes it with
// the run.

// peerWhileProbing makes the VM run's peer probe worker once its probe started, and names in the
// run's message why there is none where it cannot be made or placed.
func (r *SuiteReconciler) peerWhileProbing(ctx context.Context, suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus,
	run platform.Run, params vmbenchv1.MigrationParams, now time.Time) {
	probeEnd := active.ProbeStartTime.Add(params.ProbeDuration())
	if !now.Before(probeEnd) {
		return
	}
	pods, err := r.probeWorkerPods(ctx, suite, run.Name)
	if err != nil {
		log.FromContext(ctx).Error(err, "listing the probe worker of run", "run", run.Name)
		return
	}
	workers := probeWorkersOf(suite, run.Name, pods)
	if len(workers) > 0 {
		if w := workers[0]; w.unschedulable != "" {
			r.noPeer(suite, active, fmt.Sprintf("the probe worker %s %s cannot be placed: %s", w.name, peerWords, w.unschedulable))
		} else if strings.Contains(active.Message, peerWords) {
			active.Message = "" // placed since
		}
		return
	}
	pod := platform.ProbeWorkerPod(run, 1, probeEnd.Sub(now)+probeWorkerSlack, "")
	if err := ctrl.SetControllerReference(suite, pod, r.Scheme); err != nil {
		r.noPeer(suite, active, fmt.Sprintf("the probe worker %s %s was not made: %v", pod.Name, peerWords, err))
		return
	}
	if err := r.Create(ctx, pod); err != nil && !apierrors.IsAlreadyExists(err) {
		r.noPeer(suite, active, fmt.Sprintf("the probe worker %s %s was not made: %v", pod.Name, peerWords, err))
		return
	}
	log.FromContext(ctx).Info("made the in-guest probe's peer", "run", run.Name, "pod", pod.Name, "master", platform.ProbeMasterAddress(run))
}

// peerWords name the peer in the run's message, by which a later pass finds its own message.
const peerWords = "(the in-guest probe's peer)"

// noPeer names why the run has no peer in its message, and in a Warning event the first time.
func (r *SuiteReconciler) noPeer(suite *vmbenchv1.BenchmarkSuite, active *vmbenchv1.RunStatus, why string) {
	msg := conditions.Truncate(fmt.Sprintf("run %s: %s; the migration benchmark goes on without the peer's figure (peer_gap_ms)", active.Name, why), 1024)
	if active.Message == msg {
		return
	}
	active.Message = msg
	if r.Recorder != nil {
		r.Recorder.Eventf(suite, nil, corev1.EventTypeWarning, "ProbePeerMissing", "Probe", "%s", msg)
	}
}
