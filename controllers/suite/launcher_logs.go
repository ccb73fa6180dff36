package suite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubevirtv1 "kubevirt.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vmbenchv1 "github.com/vmbench/vmbench/api/v1alpha1"
	"github.com/vmbench/vmbench/controllers/suite/summary"
	"github.com/vmbench/vmbench/internal/frame"
	"github.com/vmbench/vmbench/internal/platform"
)

// A VM run's frames leave through the serial console of the master VMI, which its virt-launcher
// pod's guest-console-log container logs. A live migration moves the VMI to a new launcher pod (the
// target), and the console's output after the switch-over is in the target's log: the run's frames
// are split across the launcher pods, in the order the VMI moved through them. They are read in
// that order and merged by frame ID, so that a frame in two logs counts once, and a frame that the
// switch-over cut in one log and that another holds whole is no error.

// maxLauncherPods bounds the launcher pods of one VMI whose logs one collection reads: the VMI's
// first pod and the targets of up to MaxMigrationCount migrations. All of them are read within one
// logReadTimeout (readLauncherPods), which holds them within a reconcile's timeout.
const maxLauncherPods = vmbenchv1.MaxMigrationCount + 1

// masterVMI is the master VMI among the run's children, when the run's log source is one.
func masterVMI(src platform.LogSource, children []client.Object) *kubevirtv1.VirtualMachineInstance {
	for _, obj := range children {
		if vmi, ok := obj.(*kubevirtv1.VirtualMachineInstance); ok && obj.GetObjectKind().GroupVersionKind() == src.Owner.GVK && vmi.Name == src.Owner.Name {
			return vmi
		}
	}
	return nil
}

// podMove is one migration of a VMI: the launcher pod it left and the one it moved to.
type podMove struct{ Source, Target string }

// migrationPods are the moves of the VMI between launcher pods, in order: those the run recorded
// (earlier migrations, whose state the VMI no longer holds) and then the VMI's current migration
// state, when the guest ran in its target: the migration completed, or it is post-copy, where the
// guest runs in the target before the end. The target of a migration that failed, was aborted or
// is still copying never ran the guest, and may have no log at all (a target pod that could not
// pull its image). Only KubeVirt writes a VMI's status, so a pod named there is the VMI's, whatever
// else claims the VMI as its controller.
func migrationPods(vmi *kubevirtv1.VirtualMachineInstance, recorded []podMove) []podMove {
	moves := slices.Clone(recorded)
	ms := vmi.Status.MigrationState
	if ms == nil || ms.TargetPod == "" || slices.Contains(moves, podMove{ms.SourcePod, ms.TargetPod}) {
		return moves
	}
	if (ms.Completed && !ms.Failed) || (!ms.Completed && ms.Mode != "" && ms.Mode != kubevirtv1.MigrationPreCopy) {
		moves = append(moves, podMove{ms.SourcePod, ms.TargetPod})
	}
	return moves
}

// launcherChain orders the VMI's launcher pods as the VMI moved through them: its first pod (the
// oldest controlled pod that no migration targeted), then the pods KubeVirt named, in the order of
// the moves. Other pods that claim the VMI as their controller were not made by KubeVirt for it
// (a forged reference): their logs are never read, and they are returned in skipped.
func launcherChain(own []*corev1.Pod, moves []podMove) (chain []*corev1.Pod, skipped []string) {
	byName := map[string]*corev1.Pod{}
	for _, p := range own {
		byName[p.Name] = p
	}
	targets := map[string]bool{}
	for _, m := range moves {
		targets[m.Target] = true
	}
	for _, p := range own { // oldest first
		if !targets[p.Name] {
			chain = append(chain, p)
			break
		}
	}
	for _, m := range moves {
		for _, n := range []string{m.Source, m.Target} {
			if p, ok := byName[n]; ok && !slices.Contains(chain, p) {
				chain = append(chain, p)
			}
		}
	}
	for _, p := range own {
		if !slices.Contains(chain, p) {
			skipped = append(skipped, p.Name)
		}
	}
	return chain, skipped
}

// podFrames are the frames found in one launcher pod's log.
type podFrames struct {
	pod  string
	scan frame.Scanned
}

// mergeFrames merges the frames of logs read in the order they were written, each message counted
// once, under its first authentic copy. A message that fails in one log and is whole in another is
// no error. A message never whole anywhere is a frame error (a corrupt run), unless it is the last
// message of one log and the next log follows (or the first of a log that follows another) and its
// frame is only incomplete: the switch-over cut it. Such a message is joined from the pieces the
// logs on both sides hold (its header in one, the rest in the next), and when they do not make it
// whole, it is lost, named in lost.
func mergeFrames(parts []podFrames, tokenFor func(id string) []byte) (decoded []frame.Decoded, frameErr, lost error) {
	whole := map[string]bool{}
	for _, p := range parts {
		for _, d := range p.scan.Messages {
			whole[d.ID] = true
		}
	}
	var errs []error
	var failed []frame.Failure
	cut := map[string][]string{}
	cutParts := map[string][]frame.Failure{}
	// cutAfter lists, per log, the cut messages it was the first to hold: a joined one takes its
	// place after that log's messages, in the order the runner wrote them.
	cutAfter := make([][]string, len(parts))
	seen := map[string]bool{}
	for i, p := range parts {
		errs = append(errs, p.scan.ReadErr, p.scan.Limit)
		for _, f := range p.scan.Failures {
			if whole[f.ID] {
				continue
			}
			atEnd := i+1 < len(parts) && f.Index == p.scan.IDs-1
			atStart := i > 0 && f.Index == 0
			if f.Incomplete && (atEnd || atStart) {
				if cut[f.ID] == nil {
					cutAfter[i] = append(cutAfter[i], f.ID)
				}
				cut[f.ID] = append(cut[f.ID], p.pod)
				cutParts[f.ID] = append(cutParts[f.ID], f)
				continue
			}
			if !seen[f.ID] {
				seen[f.ID] = true
				failed = append(failed, f)
			}
		}
	}
	// A cut frame that another log holds incomplete but not at its edge is not a cut: it is corrupt.
	// One whose pieces the logs on both sides of a switch-over hold together is whole.
	var lostMsgs []string
	taken := map[string]bool{}
	for i, p := range parts {
		for _, d := range p.scan.Messages {
			if !taken[d.ID] {
				taken[d.ID] = true
				decoded = append(decoded, d)
			}
		}
		for _, id := range cutAfter[i] {
			if seen[id] {
				continue
			}
			if d, err := frame.JoinCut(tokenFor(id), cutParts[id]...); err == nil {
				decoded = append(decoded, d)
				continue
			}
			lostMsgs = append(lostMsgs, fmt.Sprintf("message %s (cut in the log of pod %s)", id, strings.Join(cut[id], " and ")))
		}
	}
	if len(lostMsgs) > 0 {
		lost = fmt.Errorf("the VMI's live migration cut %d of the runner's messages where one launcher pod's log ends and the next "+
			"begins, and no launcher pod's log holds them whole, so they are lost: %s", len(lostMsgs), strings.Join(lostMsgs, ", "))
	}
	return decoded, errors.Join(append(errs, frame.JoinFailures(nil, nil, failed))...), lost
}

// readLauncherPods reads the logs of the VMI's launcher pods in the order the VMI moved through
// them and merges their frames. The reads share one logReadTimeout, so that several pods cost no
// more of the reconcile than one. An error means the logs may be read later.
func (r *SuiteReconciler) readLauncherPods(ctx context.Context, vmi *kubevirtv1.VirtualMachineInstance, own []*corev1.Pod,
	recorded []podMove, container string, keys frameKeys, ownEnd bool) (summary.RunReport, []string, error) {
	chain, skipped := launcherChain(own, migrationPods(vmi, recorded))
	if len(chain) > maxLauncherPods {
		names := make([]string, 0, len(chain))
		for _, p := range chain {
			names = append(names, p.Name)
		}
		return summary.RunReport{LogErr: fmt.Errorf("VMI %s moved through %d launcher pods (%s); vmbench reads the logs of at most %d, "+
			"so the run's frames cannot all be read: migrate a VM run's VMIs at most %d times",
			vmi.Name, len(chain), strings.Join(names, ", "), maxLauncherPods, maxLauncherPods-1)}, skipped, nil
	}
	ctx, cancel := context.WithTimeout(ctx, logReadTimeout)
	defer cancel()
	parts := make([]podFrames, 0, len(chain))
	for _, pod := range chain {
		scan, err := r.scanPodLog(ctx, pod, container, keys)
		if err != nil {
			return summary.RunReport{}, skipped, err
		}
		parts = append(parts, podFrames{pod: pod.Name, scan: scan})
	}
	decoded, frameErr, lost := mergeFrames(parts, keys.tokenFor)
	report := reportOf(decoded, frameErr, keys)
	report.LostErr = lost
	if ownEnd && report.Done == nil && len(chain) > 0 {
		// Audit L6 on the VM path: the VMI ended, but the current launcher's console logger may not
		// have written the guest's last lines yet; its log is read again until it terminated.
		if err := unsettledLog(chain[len(chain)-1], container); err != nil {
			return summary.RunReport{}, skipped, err
		}
	}
	return report, skipped, nil
}
